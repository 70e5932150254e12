/* output.c - outputs that replace nothing until the whole run has succeeded: each regular
 * file is written to a temporary beside it (tempfiles.c) and renamed into place with the
 * others by output_commit_all(), which puts every old file back if one rename fails;
 * stdout, descriptors and devices are written in place. The last layer of docs/design.md's
 * data flow; owns each output's descriptor, zstd context and names. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/io_zstd.h"
#include "core/output_target.h"
#include "core/tempfiles.h"
#include "core/xalloc.h"

/* ---- output ----
 * Four kinds of destination (output_open): stdout ("-"); a path that resolves into a
 * /proc/PID/fd or /dev/fd directory (/dev/stdout, /dev/fd/3), written through a duplicate
 * of that descriptor; any other existing non-regular file (a device, a FIFO), opened and
 * written in place; and a regular file, new or existing, which is written to a temporary
 * file beside it and renamed into place by output_commit_all(). Symbolic links are
 * followed with lstat()/readlink() one step at a time, so a link is never replaced by a
 * file: the file it points to is. */


/* Where a renamed file stands during output_commit_all(). */
enum commit_state {
	C_NONE,       /* the temporary is still under its own name */
	C_CREATED,    /* renamed to a destination that did not exist */
	C_EXCHANGED,  /* swapped with the destination: the temporary's name holds the old file */
	C_LINKED,     /* the old file kept as BAK (a hard link), then replaced */
	C_REPLACED,   /* replaced without a way back (no RENAME_EXCHANGE, no hard link) */
};

struct output {
	enum output_kind kind;
	char *name;            /* as given, for messages */
	char *final;           /* OUT_FILE: the path renamed to (a symbolic link's target) */
	char *tmp;             /* OUT_FILE: DIR/.cgjit-tmp.PID.XXXXXX */
	char *bak;             /* OUT_FILE: tmp + ".old" (C_LINKED) */
	int fd;                /* -1 once closed */
	int own_fd;            /* closed here (everything but stdout) */
	struct zstd_out *z;
	int has_target;        /* a regular file is replaced or written: its identity */
	dev_t t_dev;
	ino_t t_ino;
	dev_t dir_dev, tmp_dev;/* OUT_FILE: the directory and the temporary file */
	ino_t dir_ino, tmp_ino;
	int tmp_exists, bak_exists;   /* names this run created that still hold a file */
	int truncate_pending;  /* OUT_FD on a regular file: emptied at the first write, after
	                          the check that it is no input (output_check_clashes) */
	int synced;            /* OUT_FILE: the temporary was fsync()ed */
	off_t sent;            /* OUT_FILE replacing a file: its bytes before this offset
	                          are on their way to the disk (start_writeback) */
	enum commit_state state;
};

int output_is_zstd(const struct output *o)
{
	return o->z != NULL;
}

const char *output_path(const struct output *o)
{
	return o->kind == OUT_STDOUT ? "<stdout>" : o->name;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A file being replaced lends the temporary its mode, and its owner and group where this
 * process may set them; a new file keeps the mode that the umask (or the directory's
 * default ACL) gave it. */
static void take_mode(int fd, const struct stat *old)
{
	if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
	    fchown(fd, old->st_uid, old->st_gid) < 0 && fchown(fd, (uid_t)-1, old->st_gid) < 0) {
		/* not permitted: the new file is this user's, with the old mode */
	}
	fchmod(fd, old->st_mode & 0777);
}

/* The temporary file beside O->final, and the identities that same_destination() and
 * restore() compare. Returns 0 or -1 with D set. */
static int open_tmp(struct output *o, const struct output_target *t, struct diag *d)
{
	size_t size = tempfiles_name_size(o->final);
	o->tmp = xmalloc(size);
	o->bak = xmalloc(size);
	o->fd = tempfiles_create(o->final, o->tmp, size);
	if (o->fd < 0)
		return diag_at(d, o->name, 0, "cannot create a temporary file in its directory: %s",
			       strerror(errno));
	o->tmp_exists = 1;
	snprintf(o->bak, size, "%s.old", o->tmp);
	if (t->exists)
		take_mode(o->fd, &t->st);
	struct stat st;
	if (fstat(o->fd, &st) == 0) {
		o->tmp_dev = st.st_dev;
		o->tmp_ino = st.st_ino;
	}
	const char *slash = strrchr(o->final, '/');
	char *dir = slash ? xstrndup(o->final, (size_t)(slash - o->final) + 1) : xstrndup(".", 1);
	if (stat(dir, &st) == 0) {
		o->dir_dev = st.st_dev;
		o->dir_ino = st.st_ino;
	}
	free(dir);
	return 0;
}

struct output *output_open(const char *path, struct diag *d)
{
	struct output_target t;
	if (output_target_resolve(path, &t, d) < 0)
		return NULL;
	struct output *o = xcalloc(1, sizeof(*o));
	o->kind = t.kind;
	o->name = xstrndup(path, strlen(path));
	o->fd = -1;
	int rc = 0;
	switch (t.kind) {
	case OUT_STDOUT:
		o->fd = 1;
		break;
	case OUT_FD:
		/* Our own descriptor (/dev/stdout, /dev/fd/N): a duplicate shares its offset and
		 * O_APPEND, as the shell's redirection meant. Another process's: opened afresh. */
		if (t.fd_pid == (long)getpid())
			o->fd = fcntl(t.fd_num, F_DUPFD_CLOEXEC, 3);
		else
			o->fd = open(t.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		o->own_fd = 1;
		struct stat fst;
		o->truncate_pending = o->fd >= 0 && t.fd_pid != (long)getpid() &&
				      fstat(o->fd, &fst) == 0 && S_ISREG(fst.st_mode);
		if (o->fd < 0)
			rc = diag_at(d, path, 0, "cannot open for writing: %s", strerror(errno));
		break;
	case OUT_DEVICE:
		/* A device or FIFO (/dev/null, /dev/full): written in place, never replaced.
		 * output_target_resolve() found no link under this name: one put there since
		 * is not followed. */
		o->fd = open(t.path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		o->own_fd = 1;
		if (o->fd < 0)
			rc = diag_at(d, path, 0, "cannot open for writing: %s", strerror(errno));
		break;
	case OUT_FILE:
		o->final = t.path;
		t.path = NULL;
		o->own_fd = 1;
		rc = open_tmp(o, &t, d);
		if (rc == 0 && t.exists) {
			o->has_target = 1;
			o->t_dev = t.st.st_dev;
			o->t_ino = t.st.st_ino;
		}
		break;
	}
	free(t.path);
	struct stat st;
	if (rc == 0 && t.kind != OUT_FILE && fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		o->has_target = 1;
		o->t_dev = st.st_dev;
		o->t_ino = st.st_ino;
	}
	if (rc == 0 && ends_with(path, ".zst")) {
		o->z = zstd_out_new(o->fd, output_path(o));
		if (!o->z)
			rc = diag_at(d, path, 0, "cannot create a zstd compression context");
	}
	if (rc < 0) {
		output_abort(o);
		return NULL;
	}
	return o;
}

/* Empties a file written in place through another process's descriptor, once, when
 * writing starts: never at open, where the run may still refuse it (it is an input). */
static int start_writing(struct output *o, struct diag *d)
{
	if (!o->truncate_pending)
		return 0;
	o->truncate_pending = 0;
	if (ftruncate(o->fd, 0) < 0)
		return diag_at(d, o->name, 0, "cannot empty it for writing: %s", strerror(errno));
	return 0;
}

/* Writeback is started every WRITEBACK_STEP bytes: few system calls (40 for the bench
 * profile's output), and at most that much not yet on its way when the fsync() comes. */
enum { WRITEBACK_STEP = 8 << 20 };

/* A temporary that replaces a file is fsync()ed before the rename (finish()). Its bytes
 * are sent to the disk as they are written, without waiting for them to get there, so
 * that the fsync() waits only for the last of them and not for the whole file after the
 * run (README, "Bad input"). A new file is not fsync()ed, and left to the kernel. */
static void start_writeback(struct output *o)
{
	off_t end = lseek(o->fd, 0, SEEK_CUR);
	if (end < 0 || end - o->sent < WRITEBACK_STEP)
		return;
	/* a hint: the fsync() reports what fails, and errno is not looked at after a write */
	(void)sync_file_range(o->fd, o->sent, end - o->sent, SYNC_FILE_RANGE_WRITE);
	o->sent = end;
}

int output_write(struct output *o, const void *p, size_t n, struct diag *d)
{
	if (start_writing(o, d) < 0)
		return -1;
	int rc = o->z ? zstd_out_write(o->z, p, n, d) : write_all(o->fd, p, n, output_path(o), d);
	if (rc == 0 && o->kind == OUT_FILE && o->has_target)
		start_writeback(o);
	return rc;
}

int output_same_file(const struct output *o, const char *path)
{
	struct stat st;
	if (!o || !o->has_target || (strcmp(path, "-") == 0 ? fstat(0, &st) : stat(path, &st)) < 0)
		return 0;
	return S_ISREG(st.st_mode) && st.st_dev == o->t_dev && st.st_ino == o->t_ino;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* 1 if A and B end up as the same file: the same existing file, or the same new name in
 * the same directory. */
static int same_destination(const struct output *a, const struct output *b)
{
	if (a->has_target && b->has_target)
		return a->t_dev == b->t_dev && a->t_ino == b->t_ino && a->kind == OUT_FILE &&
		       b->kind == OUT_FILE;
	return a->kind == OUT_FILE && b->kind == OUT_FILE && a->dir_dev == b->dir_dev &&
	       a->dir_ino == b->dir_ino && !strcmp(base_name(a->final), base_name(b->final));
}

int output_check_clashes(struct output *const *outs, size_t n, const char *const *inputs,
			 size_t ni, struct diag *d)
{
	for (size_t i = 0; i < n; i++) {
		if (!outs[i])
			continue;
		for (size_t k = 0; k < ni; k++)
			if (output_same_file(outs[i], inputs[k]))
				return diag_at(d, output_path(outs[i]), 0,
					       "is the same file as the input '%s'; refusing to replace an "
					       "input of this run (choose another output name)", inputs[k]);
		for (size_t k = 0; k < i; k++)
			if (outs[k] && same_destination(outs[k], outs[i]))
				return diag_at(d, output_path(outs[i]), 0,
					       "is the same file as the output '%s' of this run; choose "
					       "another name", output_path(outs[k]));
	}
	return 0;
}

/* A temporary that will take the place of an existing file is fsync()ed, so that a crash
 * after the rename cannot leave an empty file where the old one was. A new file is not:
 * a crash loses nothing that existed, and fsync() of a large output costs as much time
 * as writing it (scripts/bench). */
static int replaces_a_file(const struct output *o)
{
	struct stat st;
	return o->has_target || lstat(o->final, &st) == 0;
}

/* Ends the stream and closes the descriptor (and with it a temporary's lock). Returns 0
 * or -1 with D set. */
static int finish(struct output *o, struct diag *d)
{
	int rc = start_writing(o, d);
	if (rc == 0 && o->z && zstd_out_finish(o->z, d) < 0)
		rc = -1;
	if (rc == 0 && o->kind == OUT_FILE && replaces_a_file(o)) {
		if (fsync(o->fd) < 0 && errno != EINVAL)
			rc = diag_at(d, o->name, 0, "write error: %s", strerror(errno));
		o->synced = 1;
	}
	if (o->own_fd && o->fd >= 0 && close(o->fd) < 0 && rc == 0)
		rc = diag_at(d, o->name, 0, "write error: %s", strerror(errno));
	o->fd = -1;
	return rc;
}

/* Puts O's temporary in its destination's place, keeping a way back (C_EXCHANGED or
 * C_LINKED) where the file system allows one. Async-signal-safe. Returns 0 or -1 with D set. */
static int replace(struct output *o, struct diag *d)
{
	struct stat st;
	if (lstat(o->final, &st) == 0 && S_ISDIR(st.st_mode))
		return diag_at(d, o->name, 0, "is a directory, expected a file");
	if (!o->synced) {
		/* No file stood there at finish(): take the name only while it is still free.
		 * If one has appeared since, the temporary is synced before it replaces it. */
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->final, RENAME_NOREPLACE) == 0) {
			o->state = C_CREATED;
			o->tmp_exists = 0;
			return 0;
		}
		int fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
		int bad = fd < 0 || (fsync(fd) < 0 && errno != EINVAL);
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (bad)
			return diag_at(d, o->name, 0, "write error: %s", strerror(e));
		o->synced = 1;
	}
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->final, RENAME_EXCHANGE) == 0) {
		o->state = C_EXCHANGED;    /* the old file is under o->tmp now */
		return 0;
	}
	int e = errno;
	if (e == ENOENT && lstat(o->final, &st) < 0 && errno == ENOENT) {
		int r = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->final, RENAME_NOREPLACE);
		if (r < 0 && (errno == EINVAL || errno == ENOSYS))
			r = rename(o->tmp, o->final);
		if (r == 0) {
			o->state = C_CREATED;
			o->tmp_exists = 0;
			return 0;
		}
		e = errno;
	} else if (e == EINVAL || e == ENOSYS || e == EOPNOTSUPP) {
		/* No RENAME_EXCHANGE here: keep the old file under a second name instead. */
		int linked = link(o->final, o->bak) == 0;
		if (rename(o->tmp, o->final) == 0) {
			o->state = linked ? C_LINKED : C_REPLACED;
			o->bak_exists = linked;
			o->tmp_exists = 0;
			return 0;
		}
		e = errno;
		if (linked)
			unlink(o->bak);
	}
	return diag_at(d, o->name, 0, "cannot rename the temporary file into place: %s", strerror(e));
}

/* Undoes replace(): the old file back under its name, or a new one removed (only if the
 * name still holds the file this run wrote). Async-signal-safe. Returns 0, or -1 if it
 * cannot be undone. */
static int restore(struct output *o)
{
	struct stat st;
	switch (o->state) {
	case C_NONE:
		return 0;
	case C_CREATED:
		if (lstat(o->final, &st) == 0 && st.st_dev == o->tmp_dev && st.st_ino == o->tmp_ino)
			unlink(o->final);
		break;
	case C_EXCHANGED:
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->final, RENAME_EXCHANGE) < 0) {
			o->tmp_exists = 0;   /* keep the old file where it is rather than remove it */
			return -1;
		}
		break;   /* o->tmp holds the new file again */
	case C_LINKED:
		if (rename(o->bak, o->final) < 0) {
			o->bak_exists = 0;
			return -1;
		}
		o->bak_exists = 0;
		break;
	case C_REPLACED:
		return -1;
	}
	o->state = C_NONE;
	return 0;
}

/* Removes the names that hold nothing wanted any more and forgets the temporary. Call with
 * the signals held. */
static void tidy(struct output *o)
{
	if (o->tmp_exists)
		unlink(o->tmp);
	if (o->bak_exists)
		unlink(o->bak);
	o->tmp_exists = o->bak_exists = 0;
	if (o->tmp)
		tempfiles_forget(o->tmp);
}

static void output_free(struct output *o)
{
	zstd_out_free(o->z);
	free(o->final);
	free(o->tmp);
	free(o->bak);
	free(o->name);
	free(o);
}

int output_commit_all(struct output **outs, size_t n, struct diag *d)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (outs[i] && finish(outs[i], d) < 0)
			rc = -1;
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			output_abort(outs[i]);
		return -1;
	}
	sigset_t old;
	tempfiles_hold(&old);
	size_t done = 0;
	for (; done < n; done++)
		if (outs[done] && outs[done]->kind == OUT_FILE && replace(outs[done], d) < 0)
			break;
	int failed = done < n;
	if (!failed && tempfiles_signal_waiting()) {
		failed = 1;
		diag_at(d, n && outs[n - 1] ? output_path(outs[n - 1]) : "output", 0,
			"interrupted by a signal while renaming the outputs into place");
	}
	int lost = 0;
	if (failed)
		for (size_t i = done; i-- > 0;)
			if (outs[i] && restore(outs[i]) < 0)
				lost++;
	for (size_t i = 0; i < n; i++)
		if (outs[i])
			tidy(outs[i]);
	if (lost && d) {
		size_t len = strlen(d->msg);
		snprintf(d->msg + len, sizeof(d->msg) - len,
			 " (%d output%s already replaced could not be put back)", lost, lost > 1 ? "s" : "");
	}
	tempfiles_release(&old);   /* a held signal is delivered here, with nothing left to remove */
	for (size_t i = 0; i < n; i++)
		if (outs[i])
			output_free(outs[i]);
	return failed ? -1 : 0;
}

int output_commit(struct output *o, struct diag *d)
{
	return output_commit_all(&o, 1, d);
}

void output_abort(struct output *o)
{
	if (!o)
		return;
	if (o->own_fd && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		sigset_t old;
		tempfiles_hold(&old);
		tidy(o);
		tempfiles_release(&old);
	}
	output_free(o);
}
