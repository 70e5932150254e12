/* output_target.c - what an output path names, found without opening it: the links on its
 * way (each checked against the shared-directory rule), the directory it ends in (a
 * process's descriptor directory or not) and what stands at its end. Decisions for
 * output.c, which opens what this finds; owns nothing past a call. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/output_target.h"
#include "core/xalloc.h"

/* DIR/NAME, malloc'd. */
static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s = xmalloc(a + b + 2);
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
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

/* ---- where a path leads ----
 * One name at a time: a symbolic link puts its target in CUR's place and the walk goes on
 * (at most 40 hops, as the kernel allows); every other name ends it. */

struct walk {
	const char *path;    /* as given, for messages */
	char *cur;           /* the name reached, malloc'd; NULL once T->path took it */
	const char *base;    /* its last component, in CUR */
	int hop, links;
	char *dir, *rdir;    /* CUR's directory, as written and as realpath() gives it */
	struct stat ds;      /* of RDIR (zeros if stat() failed) */
	struct diag *d;
};

/* The message for a name that cannot be written: WHY (a phrase), E (an errno value), or
 * both. Returns -1. */
static int walk_fail(const struct walk *w, const char *why, int e)
{
	if (why && e)
		return diag_at(w->d, w->path, 0, "%s: %s", why, strerror(e));
	if (why)
		return diag_at(w->d, w->path, 0, "%s", why);
	return diag_at(w->d, w->path, 0, "cannot open for writing: %s", strerror(e));
}

/* T->path: CUR itself on the first hop, else the last name reached in its real directory
 * (the name output.c creates or replaces, with no link left on its way). */
static void walk_take(struct walk *w, struct output_target *t, int in_real_dir)
{
	if (in_real_dir) {
		t->path = join(w->rdir, w->base);
	} else {
		t->path = w->cur;
		w->cur = NULL;
	}
}

/* CUR's directory: its links checked, then realpath()'d. Returns 0 or -1 with D set. */
static int walk_dir(struct walk *w)
{
	const char *slash = w->base > w->cur ? w->base - 1 : NULL;
	w->dir = slash ? xstrndup(w->cur, slash == w->cur ? 1 : (size_t)(slash - w->cur))
		       : xstrndup(".", 1);
	/* the links on the way to the directory, before realpath() follows them */
	if (check_links(w->path, w->dir, &w->links, w->d) < 0)
		return -1;
	if (!(w->rdir = realpath(w->dir, NULL)))
		return walk_fail(w, "cannot create a temporary file in its directory", errno);
	if (stat(w->rdir, &w->ds) < 0)
		memset(&w->ds, 0, sizeof(w->ds));
	return 0;
}

/* CUR names descriptor BASE of process PID: 1 with T filled, or -1 with D set. */
static int walk_fd(struct walk *w, struct output_target *t, long pid)
{
	int n = 0, digits = 0;
	for (const char *p = w->base; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
		n = n * 10 + (*p - '0');
	if (!digits || w->base[digits])
		return walk_fail(w, NULL, ENOENT);
	t->kind = OUT_FD;
	t->fd_pid = pid;
	t->fd_num = n;
	walk_take(w, t, 0);
	return 1;
}

/* CUR is a symbolic link: its target takes CUR's place. Returns 0, or -1 with D set. */
static int walk_follow(struct walk *w)
{
	char link[4096];
	ssize_t n = readlink(w->cur, link, sizeof(link) - 1);
	if (n < 0)
		return walk_fail(w, NULL, errno);
	link[n] = '\0';
	char *next = link[0] == '/' ? xstrndup(link, (size_t)n) : join(w->rdir, link);
	free(w->cur);
	w->cur = next;
	return 0;
}

/* One hop: 1 with T filled, 0 when CUR became the next name to look at, -1 with D set. */
static int walk_step(struct walk *w, struct output_target *t)
{
	const char *slash = strrchr(w->cur, '/');
	w->base = slash ? slash + 1 : w->cur;
	if (w->hop > 40)
		return walk_fail(w, NULL, ELOOP);
	if (!*w->base)
		return walk_fail(w, "names a directory, expected a file", 0);
	if (walk_dir(w) < 0)
		return -1;
	long pid;
	if (fd_dir(w->rdir, &pid))
		return walk_fd(w, t, pid);
	struct stat st;
	if (lstat(w->cur, &st) < 0) {
		if (errno != ENOENT)
			return walk_fail(w, NULL, errno);
		t->kind = OUT_FILE;   /* a new file */
		walk_take(w, t, w->hop > 0);
		return 1;
	}
	if (refuse_foreign(w->d, w->path, w->cur, &w->ds, &st, w->rdir) < 0)
		return -1;
	if (S_ISLNK(st.st_mode))
		return walk_follow(w);
	if (S_ISDIR(st.st_mode))
		return walk_fail(w, "is a directory, expected a file", 0);
	t->kind = S_ISREG(st.st_mode) ? OUT_FILE : OUT_DEVICE;
	t->exists = S_ISREG(st.st_mode);
	t->st = st;
	walk_take(w, t, w->hop > 0 && t->exists);
	return 1;
}

int output_target_resolve(const char *path, struct output_target *t, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	if (!*path)
		return diag_at(d, "''", 0, "an empty file name, expected a file to write");
	if (!strcmp(path, "-")) {
		t->kind = OUT_STDOUT;
		return 0;
	}
	struct walk w = { .path = path, .cur = xstrndup(path, strlen(path)), .d = d };
	int rc;
	do {
		rc = walk_step(&w, t);
		free(w.dir);
		free(w.rdir);
		w.dir = w.rdir = NULL;
		w.hop++;
	} while (rc == 0);
	free(w.cur);
	return rc < 0 ? -1 : 0;
}

int output_path_in_place(const char *path)
{
	struct output_target t;
	struct diag d = { 0 };
	if (output_target_resolve(path, &t, &d) < 0)
		return 0;
	free(t.path);
	return t.kind != OUT_FILE;
}
