/* io.c - input by magic (plain | zstd | stdin) and output that replaces nothing until the
 * whole run has succeeded: temporary files renamed into place together (output_commit_all),
 * removed on every error path, on exit() and on fatal signals, and recognisable by name and
 * lock when a process died without removing them (README "Bad input"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/io_zstd.h"
#include "core/xalloc.h"

struct input {
	char *name;
	int fd;
	int own_fd;
	const unsigned char *mem;    /* input_open_mem: the bytes and how many are left */
	size_t mem_left;
	struct zstd_in *z;
	unsigned char prefix[4];
	size_t prefix_len, prefix_pos;
};

static ssize_t read_fd(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

struct input *input_open(const char *path, struct diag *d)
{
	int fd = 0;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			diag_at(d, path, 0, "cannot open: %s", strerror(errno));
			return NULL;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			diag_at(d, path, 0, "is a directory, expected a file");
			return NULL;
		}
	}
	return input_open_fd(fd, path, d);
}


struct input *input_open_mem(const void *data, size_t n, const char *name)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(name, strlen(name));
	in->fd = -1;
	in->mem = data;
	in->mem_left = n;
	if (n >= 4 && zstd_is_magic(data)) {
		/* zstd reads from a descriptor: hand it the bytes through a pipe-free path by
		 * giving the whole buffer as the prefix. */
		in->z = zstd_in_new(-1, data, n, in->name);
		in->mem_left = 0;
	}
	return in;
}

ssize_t input_read(struct input *in, void *buf, size_t n, struct diag *d)
{
	if (in->mem && !in->z) {
		size_t k = n < in->mem_left ? n : in->mem_left;
		memcpy(buf, in->mem, k);
		in->mem += k;
		in->mem_left -= k;
		return (ssize_t)k;
	}
	if (in->z)
		return zstd_in_read(in->z, buf, n, d);
	if (in->prefix_pos < in->prefix_len) {
		size_t k = in->prefix_len - in->prefix_pos;
		if (k > n)
			k = n;
		memcpy(buf, in->prefix + in->prefix_pos, k);
		in->prefix_pos += k;
		return (ssize_t)k;
	}
	ssize_t r = read_fd(in->fd, buf, n);
	if (r < 0)
		return diag_at(d, in->name, 0, "read error: %s", strerror(errno));
	return r;
}

const char *input_name(const struct input *in)
{
	return in->name;
}

int input_position(const struct input *in, uint64_t *done, uint64_t *size)
{
	struct stat st;
	if (in->mem || in->fd < 0 || fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	off_t at = lseek(in->fd, 0, SEEK_CUR);
	if (at < 0)
		return -1;
	*done = (uint64_t)at;
	*size = (uint64_t)st.st_size;
	return 0;
}

int input_is_zstd(const struct input *in)
{
	return in->z != NULL;
}

void input_close(struct input *in)
{
	if (!in)
		return;
	zstd_in_free(in->z);
	if (in->own_fd)
		close(in->fd);
	free(in->name);
	free(in);
}

/* ---- output ----
 * Four kinds of destination (output_open): stdout ("-"); a path that resolves into a
 * /proc/PID/fd or /dev/fd directory (/dev/stdout, /dev/fd/3), written through a duplicate
 * of that descriptor; any other existing non-regular file (a device, a FIFO), opened and
 * written in place; and a regular file, new or existing, which is written to a temporary
 * file beside it and renamed into place by output_commit_all(). Symbolic links are
 * followed with lstat()/readlink() one step at a time, so a link is never replaced by a
 * file: the file it points to is. */

enum out_kind { OUT_STDOUT, OUT_FD, OUT_DEVICE, OUT_FILE };

/* Where a renamed file stands during output_commit_all(). */
enum commit_state {
	C_NONE,       /* the temporary is still under its own name */
	C_CREATED,    /* renamed to a destination that did not exist */
	C_EXCHANGED,  /* swapped with the destination: the temporary's name holds the old file */
	C_LINKED,     /* the old file kept as BAK (a hard link), then replaced */
	C_REPLACED,   /* replaced without a way back (no RENAME_EXCHANGE, no hard link) */
};

struct output {
	enum out_kind kind;
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
	enum commit_state state;
};

const char *output_path(const struct output *o)
{
	return o->kind == OUT_STDOUT ? "<stdout>" : o->name;
}

/* ---- signals, exit and the table of temporaries ----
 * Every name in tmp_list is a temporary this process created and has not renamed yet. The
 * table is changed only while the handled signals are held, so the handler always sees it
 * whole; it grows without bound. exit() (also the allocator's exit(1) on out-of-memory)
 * removes the same files through atexit(). */

static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ,
	SIGVTALRM, SIGPROF,
#ifdef SIGPOLL
	SIGPOLL,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};
static sigset_t handled;          /* the signals whose handler is ours */
static int handlers_set;
static pid_t tmp_owner;           /* a forked child must not remove its parent's files */
static char **tmp_list;
static size_t tmp_n, tmp_cap;

static void remove_pending(void)
{
	if (getpid() != tmp_owner)
		return;
	for (size_t i = 0; i < tmp_n; i++)
		unlink(tmp_list[i]);
}

/* Async-signal-safe: getpid, unlink, signal, raise. The signal is blocked while this runs,
 * so the raise() takes effect, with the default action, when the handler returns. */
static void on_signal(int sig)
{
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_remove(void)
{
	remove_pending();
}

/* Installs the handler for every fatal signal whose action is still the default: a signal
 * inherited as ignored (nohup) stays ignored, another handler stays in place. */
static void install_handlers(void)
{
	if (handlers_set)
		return;
	handlers_set = 1;
	tmp_owner = getpid();
	sigemptyset(&handled);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaddset(&handled, fatal_signals[i]);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_mask = handled;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (sigismember(&handled, fatal_signals[i]) == 1)
			sigaction(fatal_signals[i], &sa, NULL);
	atexit(on_exit_remove);
}

static void hold_signals(sigset_t *old)
{
	sigprocmask(SIG_BLOCK, &handled, old);
}

static void release_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* 1 if one of the handled signals is waiting (held) to be delivered. */
static int signal_waiting(void)
{
	sigset_t p;
	if (sigpending(&p) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (sigismember(&handled, fatal_signals[i]) == 1 && sigismember(&p, fatal_signals[i]) == 1)
			return 1;
	return 0;
}

/* Call with the signals held. */
static void untrack(const char *path)
{
	for (size_t i = 0; i < tmp_n; i++)
		if (tmp_list[i] == path) {
			tmp_list[i] = tmp_list[--tmp_n];
			return;
		}
}

/* ---- stale temporaries ----
 * A temporary is named .cgjit-tmp.PID.XXXXXX (a replaced file kept aside adds ".old"), and
 * its process holds an flock() on it until the file is complete. One left by a process that
 * died without cleaning up (SIGKILL, a crash, power loss) is removed by the next run that
 * writes into the same directory when all of these hold: the name has that form, PID is not
 * this process and no process has that PID (kill(PID, 0) fails with ESRCH), it is a regular
 * file (not a symbolic link) owned by this user, and no process holds a lock on it (which
 * also covers a live writer in another PID namespace or on another NFS client). */

static int stale_name(const char *name, long *pid)
{
	static const char prefix[] = ".cgjit-tmp.";
	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return 0;
	const char *p = name + sizeof(prefix) - 1;
	long v = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits == 9)
			return 0;
		v = v * 10 + (*p - '0');
	}
	if (!digits || v <= 0 || *p != '.' || !p[1])
		return 0;
	*pid = v;
	return 1;
}

static void remove_stale(const char *dir)
{
	/* Once per directory and run (by identity and name: an inode number may be reused). */
	static struct { dev_t dev; ino_t ino; uint64_t hash; } seen[16];
	static size_t nseen;
	struct stat ds;
	if (stat(dir, &ds) < 0)
		return;
	uint64_t h = 14695981039346656037ULL;
	for (const char *c = dir; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].dev == ds.st_dev && seen[i].ino == ds.st_ino && seen[i].hash == h)
			return;
	if (nseen < sizeof(seen) / sizeof(seen[0])) {
		seen[nseen].dev = ds.st_dev;
		seen[nseen].ino = ds.st_ino;
		seen[nseen++].hash = h;
	}
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	int dfd = dirfd(dp);
	uid_t me = geteuid();
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		long pid;
		if (!stale_name(e->d_name, &pid) || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;   /* alive, or not ours to ask about */
		struct stat st, fs;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != me)
			continue;
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dfd, e->d_name, 0);
		close(fd);
	}
	closedir(dp);
}

/* ---- shared directories ----
 * In a sticky world-writable directory (/tmp, /var/tmp, /dev/shm, `record -d` with mode
 * 1777) anyone may create a name, but only its owner may remove or rename it. A link
 * planted there by another user would make cgjit write wherever the link leads (a root
 * run replacing a root-only file), and a file or FIFO planted there would get the
 * profile. cgjit resolves output paths itself (lstat, readlink, realpath), so the kernel's
 * own checks for open() (fs.protected_symlinks, protected_regular, protected_fifos, off
 * on some systems) never see these steps: the same rule is applied here, always, to
 * every output and every link on its way. A name in such a directory is another user's
 * when its owner is neither this process's effective user nor the directory's owner (who
 * could replace it anyway), as the kernel decides. README "Bad input", shared directories. */

static int shared_dir(const struct stat *dir)
{
	return S_ISDIR(dir->st_mode) && (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
}

/* 1 if ST, a name in the directory DIR, is another user's in a shared directory. */
static int foreign_in(const struct stat *dir, const struct stat *st)
{
	return shared_dir(dir) && st->st_uid != geteuid() && st->st_uid != dir->st_uid;
}

/* The message for the link LINK (in the directory DIR) on the way to PATH. */
static int refuse_link(struct diag *d, const char *path, const char *link, const struct stat *st,
		       const char *dir)
{
	int self = !strcmp(path, link);
	return diag_at(d, path, 0, "%s%s%sis a symbolic link of another user (uid %lu) in the shared "
		       "directory '%s' (sticky, world-writable): not followed; remove it or choose "
		       "another name", self ? "" : "'", self ? "" : link, self ? "" : "' ",
		       (unsigned long)st->st_uid, dir);
}

/* Returns -1 with D set when ST, the name LINK_OR_FILE reached on the way to PATH in the
 * directory DIR (stat DS), is another user's link, file or FIFO in a shared directory;
 * 0 otherwise (a directory there fails elsewhere, as any directory would). */
static int refuse_foreign(struct diag *d, const char *path, const char *name, const struct stat *ds,
			  const struct stat *st, const char *dir)
{
	if (!foreign_in(ds, st) || S_ISDIR(st->st_mode))
		return 0;
	if (S_ISLNK(st->st_mode))
		return refuse_link(d, path, name, st, dir);
	int self = !strcmp(path, name);
	return diag_at(d, path, 0, "%s%s%sbelongs to another user (uid %lu) in the shared directory "
		       "'%s' (sticky, world-writable): not %s; remove it or choose another name",
		       self ? "" : "'", self ? "" : name, self ? "" : "' ", (unsigned long)st->st_uid,
		       dir, S_ISREG(st->st_mode) ? "replaced" : "written to");
}

static char *join(const char *dir, const char *name);

/* Checks each symbolic link that resolving PATH follows, component by component, and in
 * turn the links in their targets: none may be another user's in a shared directory.
 * *LINKS counts the links seen (past 40 the check stops: resolving the path fails with
 * ELOOP anyway). NAME is the output's name for messages. Returns 0, or -1 with D set. */
static int check_links(const char *name, const char *path, int *links, struct diag *d)
{
	size_t len = strlen(path);
	char *p = xstrndup(path, len);
	int rc = 0;
	for (size_t i = 1; i <= len && rc == 0; i++) {
		if ((i < len && p[i] != '/') || p[i - 1] == '/')
			continue;
		char save = p[i];
		p[i] = '\0';
		struct stat st, ds;
		if (lstat(p, &st) < 0) {
			p[i] = save;
			break;   /* what follows fails where the path is used, with its own message */
		}
		if (S_ISLNK(st.st_mode) && ++*links <= 40) {
			char *slash = strrchr(p, '/');
			char *parent = slash ? xstrndup(p, slash == p ? 1 : (size_t)(slash - p)) : xstrndup(".", 1);
			char target[4096];
			ssize_t n;
			if (stat(parent, &ds) == 0 && foreign_in(&ds, &st)) {
				rc = refuse_link(d, name, p, &st, parent);
			} else if ((n = readlink(p, target, sizeof(target) - 1)) > 0) {
				target[n] = '\0';
				char *next = target[0] == '/' ? xstrndup(target, (size_t)n) : join(parent, target);
				rc = check_links(name, next, links, d);
				free(next);
			}
			free(parent);
		}
		p[i] = save;
	}
	free(p);
	return rc;
}

int output_check_links(const char *path, struct diag *d)
{
	int links = 0;
	return check_links(path, path, &links, d);
}

/* ---- where a path leads ---- */

struct target {
	enum out_kind kind;
	char *path;          /* OUT_FILE: the destination; OUT_FD, OUT_DEVICE: what to open */
	long fd_pid;         /* OUT_FD: the process, and its descriptor */
	int fd_num;
	int exists;          /* OUT_FILE: a regular file is there */
	struct stat st;
};

/* 1 if DIR (a realpath()) is a process's descriptor directory: /proc/PID/fd or
 * /proc/PID/task/TID/fd (what /dev/fd, /proc/self/fd and /proc/thread-self/fd resolve to). */
static int fd_dir(const char *dir, long *pid)
{
	if (strncmp(dir, "/proc/", 6) != 0)
		return 0;
	const char *p = dir + 6;
	long v = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
		v = v * 10 + (*p - '0');
	if (!digits)
		return 0;
	*pid = v;
	if (!strcmp(p, "/fd"))
		return 1;
	if (strncmp(p, "/task/", 6) != 0)
		return 0;
	for (p += 6, digits = 0; *p >= '0' && *p <= '9'; p++)
		digits++;
	return digits && !strcmp(p, "/fd");
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s = xmalloc(a + b + 2);
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
}

/* Follows PATH one symbolic link at a time: lstat() says what is there, readlink() where a
 * link goes, realpath() of each directory whether it is a descriptor directory. Returns 0
 * with T filled (T->path malloc'd), or -1 with D set. */
static int resolve(const char *path, struct target *t, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	if (!*path)
		return diag_at(d, "''", 0, "an empty file name, expected a file to write");
	if (!strcmp(path, "-")) {
		t->kind = OUT_STDOUT;
		return 0;
	}
	char *cur = xstrndup(path, strlen(path));
	int links = 0;
	for (int hop = 0;; hop++) {
		int e = 0;
		const char *why = NULL;
		const char *slash = strrchr(cur, '/');
		const char *base = slash ? slash + 1 : cur;
		if (hop > 40) {
			e = ELOOP;
		} else if (!*base) {
			why = "names a directory, expected a file";
		}
		char *dir = NULL, *rdir = NULL;
		struct stat ds;
		if (!e && !why) {
			dir = slash ? xstrndup(cur, slash == cur ? 1 : (size_t)(slash - cur)) : xstrndup(".", 1);
			/* the links on the way to the directory, before realpath() follows them */
			if (check_links(path, dir, &links, d) < 0)
				why = "";   /* D says why */
			else if (!(rdir = realpath(dir, NULL))) {
				e = errno;
				why = "cannot create a temporary file in its directory";
			} else if (stat(rdir, &ds) < 0) {
				memset(&ds, 0, sizeof(ds));
			}
		}
		long pid;
		struct stat st;
		if (!e && !why && fd_dir(rdir, &pid)) {
			int n = 0, digits = 0;
			for (const char *p = base; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
				n = n * 10 + (*p - '0');
			if (!digits || base[digits]) {
				e = ENOENT;
			} else {
				t->kind = OUT_FD;
				t->fd_pid = pid;
				t->fd_num = n;
				t->path = cur;
				free(dir);
				free(rdir);
				return 0;
			}
		}
		if (!e && !why && lstat(cur, &st) < 0) {
			if (errno != ENOENT) {
				e = errno;
			} else {
				t->kind = OUT_FILE;
				t->path = hop ? join(rdir, base) : cur;
				if (hop)
					free(cur);
				free(dir);
				free(rdir);
				return 0;
			}
		} else if (!e && !why && refuse_foreign(d, path, cur, &ds, &st, rdir) < 0) {
			why = "";   /* D says why */
		} else if (!e && !why && S_ISLNK(st.st_mode)) {
			char link[4096];
			ssize_t n = readlink(cur, link, sizeof(link) - 1);
			if (n < 0) {
				e = errno;
			} else {
				link[n] = '\0';
				char *next = link[0] == '/' ? xstrndup(link, (size_t)n) : join(rdir, link);
				free(cur);
				cur = next;
				free(dir);
				free(rdir);
				continue;
			}
		} else if (!e && !why && S_ISDIR(st.st_mode)) {
			why = "is a directory, expected a file";
		} else if (!e && !why) {
			t->kind = S_ISREG(st.st_mode) ? OUT_FILE : OUT_DEVICE;
			t->exists = S_ISREG(st.st_mode);
			t->st = st;
			t->path = hop && t->exists ? join(rdir, base) : cur;
			if (t->path != cur)
				free(cur);
			free(dir);
			free(rdir);
			return 0;
		}
		free(cur);
		free(dir);
		free(rdir);
		if (why && !*why)
			return -1;
		if (why && e)
			return diag_at(d, path, 0, "%s: %s", why, strerror(e));
		if (why)
			return diag_at(d, path, 0, "%s", why);
		return diag_at(d, path, 0, "cannot open for writing: %s", strerror(e));
	}
}

int output_path_in_place(const char *path)
{
	struct target t;
	struct diag d = { 0 };
	if (resolve(path, &t, &d) < 0)
		return 0;
	free(t.path);
	return t.kind != OUT_FILE;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Six characters for a temporary's name, from getrandom() (or the clock and a counter). */
static void random_suffix(char out[7])
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long counter;
	unsigned char r[6];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long x = (unsigned long)ts.tv_nsec ^ (++counter * 0x9E3779B97F4A7C15UL);
		for (int i = 0; i < 6; i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	for (int i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

/* The temporary file beside T->path: created with O_EXCL and mode 0666, so that the umask
 * (or the directory's default ACL) applies as to any new file; a file being replaced lends
 * it its mode, and its owner and group where this process may set them. */
static int open_tmp(struct output *o, const struct target *t, struct diag *d)
{
	const char *slash = strrchr(o->final, '/');
	size_t dirlen = slash ? (size_t)(slash - o->final) + 1 : 0;
	char *dir = dirlen ? xstrndup(o->final, dirlen) : xstrndup(".", 1);
	remove_stale(dir);
	/* DIR + ".cgjit-tmp." + pid + "." + 6 + ".old" + NUL */
	size_t cap = dirlen + 11 + 20 + 1 + 6 + 4 + 1;
	o->tmp = xmalloc(cap);
	o->bak = xmalloc(cap);
	install_handlers();
	sigset_t old;
	hold_signals(&old);
	/* Grown with the signals held: the handler must never see the table being moved (out of
	 * memory here exits, and the old table is still intact for the atexit handler). */
	XGROW(tmp_list, tmp_cap, tmp_n + 1);
	int e = EEXIST;
	for (int tries = 0; tries < 100 && e == EEXIST; tries++) {
		char sfx[7];
		random_suffix(sfx);
		snprintf(o->tmp, cap, "%.*s.cgjit-tmp.%ld.%s", (int)dirlen, o->final, (long)getpid(), sfx);
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
		e = o->fd < 0 ? errno : 0;
	}
	if (o->fd >= 0) {
		if (tmp_owner != getpid()) {   /* a forked child: the table's files are its parent's */
			tmp_owner = getpid();
			tmp_n = 0;
		}
		tmp_list[tmp_n++] = o->tmp;
		o->tmp_exists = 1;
	}
	release_signals(&old);
	if (o->fd < 0) {
		free(dir);
		return diag_at(d, o->name, 0, "cannot create a temporary file in its directory: %s",
			       strerror(e));
	}
	snprintf(o->bak, cap, "%s.old", o->tmp);
	flock(o->fd, LOCK_EX | LOCK_NB);   /* "in use" for remove_stale() of other runs */
	if (t->exists) {
		if ((t->st.st_uid != geteuid() || t->st.st_gid != getegid()) &&
		    fchown(o->fd, t->st.st_uid, t->st.st_gid) < 0 && fchown(o->fd, (uid_t)-1, t->st.st_gid) < 0) {
			/* not permitted: the new file is this user's, with the old mode */
		}
		fchmod(o->fd, t->st.st_mode & 0777);
	}
	struct stat st;
	if (fstat(o->fd, &st) == 0) {
		o->tmp_dev = st.st_dev;
		o->tmp_ino = st.st_ino;
	}
	if (stat(dir, &st) == 0) {
		o->dir_dev = st.st_dev;
		o->dir_ino = st.st_ino;
	}
	free(dir);
	return 0;
}

struct output *output_open(const char *path, struct diag *d)
{
	struct target t;
	if (resolve(path, &t, d) < 0)
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
		 * resolve() found no link under this name: one put there since is not followed. */
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

int output_write(struct output *o, const void *p, size_t n, struct diag *d)
{
	if (start_writing(o, d) < 0)
		return -1;
	if (o->z)
		return zstd_out_write(o->z, p, n, d);
	return write_all(o->fd, p, n, output_path(o), d);
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
		untrack(o->tmp);
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
	hold_signals(&old);
	size_t done = 0;
	for (; done < n; done++)
		if (outs[done] && outs[done]->kind == OUT_FILE && replace(outs[done], d) < 0)
			break;
	int failed = done < n;
	if (!failed && signal_waiting()) {
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
	release_signals(&old);   /* a held signal is delivered here, with nothing left to remove */
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
		hold_signals(&old);
		tidy(o);
		release_signals(&old);
	}
	output_free(o);
}

/* ---- one open per input: sniffed and read from the same stream ----
 * (a pipe, FIFO or stdin can be read only once; input_open() is open() + this) */

struct input *input_open_fd(int fd, const char *name, struct diag *d)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(name, strlen(name));
	in->fd = fd;
	in->own_fd = fd != 0;   /* stdin stays open */
	while (in->prefix_len < 4) {
		ssize_t r = read_fd(fd, in->prefix + in->prefix_len, 4 - in->prefix_len);
		if (r < 0) {
			diag_at(d, name, 0, "read error: %s", strerror(errno));
			input_close(in);
			return NULL;
		}
		if (r == 0)
			break;
		in->prefix_len += (size_t)r;
	}
	if (in->prefix_len == 4 && zstd_is_magic(in->prefix)) {
		in->z = zstd_in_new(fd, in->prefix, 4, in->name);
		if (!in->z) {
			diag_at(d, name, 0, "cannot create a zstd decompression context");
			input_close(in);
			return NULL;
		}
		in->prefix_len = 0;
	}
	return in;
}

ssize_t input_peek(struct input *in, void *buf, size_t n, struct diag *d)
{
	if (n > INPUT_PEEK_MAX)
		n = INPUT_PEEK_MAX;
	if (in->z)
		return zstd_in_peek(in->z, buf, n, d);
	/* Plain: the first bytes are the magic-sniffing prefix (or the memory itself). */
	const unsigned char *p = in->mem ? in->mem : in->prefix + in->prefix_pos;
	size_t have = in->mem ? in->mem_left : in->prefix_len - in->prefix_pos;
	size_t k = n < have ? n : have;
	memcpy(buf, p, k);
	return (ssize_t)k;
}
