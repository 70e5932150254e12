/* record_collect.c - after a run of `cgjit record` (docs/record.md 4): the profiles callgrind
 * wrote into the run's own directory and the perf maps, jitdumps and V8 logs their processes
 * wrote into /tmp and the current directory, moved into the output directory (never over a
 * file there) and matched by pid; and, while the run lasts, what the progress line counts.
 * Owns the struct record_found it fills; prints nothing. */
#define _GNU_SOURCE   /* renameat2(RENAME_NOREPLACE) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "record/record_collect.h"
#include "record/record_text.h"

/* One collection: where the files go, which files are the run's, what was found and done. */
struct collect {
	const char *out_dir;
	const struct timespec *since;      /* when the run began (record_now()) */
	struct record_found *f;
	size_t moved_cap;                  /* F->moved's room */
	struct diag *d;
};

static char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* "callgrind.out." then a digit: valgrind's %p name, with the .N or -TID that
 * --dump-every-bb and --separate-threads append; never our callgrind.out.jit.* outputs. */
static int is_profile_name(const char *name)
{
	static const char stem[] = "callgrind.out.";
	return !strncmp(name, stem, sizeof(stem) - 1) && name[sizeof(stem) - 1] >= '0' &&
	       name[sizeof(stem) - 1] <= '9';
}

static long leading_number(const char *s)
{
	long v = 0;
	for (int k = 0; *s >= '0' && *s <= '9' && k < 12; s++, k++)
		v = v * 10 + (*s - '0');
	return v;
}

/* The pid: line of a callgrind header (docs/formats.md 1.1), or -1. It comes before the
 * cmd: line, within the first few lines. */
static long profile_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[512];
	long pid = -1;
	for (int i = 0; i < 20 && fgets(line, sizeof(line), f); i++) {
		if (!strncmp(line, "pid:", 4)) {
			const char *p = line + 4;
			while (*p == ' ')
				p++;
			if (*p >= '0' && *p <= '9')
				pid = leading_number(p);
			break;
		}
		if (!strncmp(line, "events:", 7))
			break;
	}
	fclose(f);
	return pid;
}

void record_now(struct timespec *t)
{
#ifdef CLOCK_REALTIME_COARSE
	if (clock_gettime(CLOCK_REALTIME_COARSE, t) == 0)
		return;
#endif
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_nsec = 0;   /* a file system may keep whole seconds */
}

/* A file this run made: regular, ours, written since the run began. */
static int is_ours(const struct stat *st, const struct timespec *since)
{
	if (!S_ISREG(st->st_mode) || st->st_uid != geteuid())
		return 0;
	return st->st_mtim.tv_sec > since->tv_sec ||
	       (st->st_mtim.tv_sec == since->tv_sec && st->st_mtim.tv_nsec >= since->tv_nsec);
}

static int cmp_profile(const void *a, const void *b)
{
	const struct record_profile *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Fills C->f's profiles and empty pids from STAGE. Returns 0, or -1 with C->d set when
 * STAGE cannot be read. */
static int find_profiles(struct collect *c, const char *stage)
{
	struct record_found *f = c->f;
	DIR *dir = opendir(stage);
	if (!dir)
		return diag_at(c->d, stage, 0, "cannot read the directory: %s", strerror(errno));
	size_t cap = 0, ecap = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!is_profile_name(e->d_name))
			continue;
		char *path = xmalloc(strlen(stage) + strlen(e->d_name) + 2);
		sprintf(path, "%s/%s", stage, e->d_name);
		struct stat st;
		if (lstat(path, &st) < 0 || !is_ours(&st, c->since)) {
			free(path);
			continue;
		}
		if (st.st_size == 0) {
			/* callgrind creates the file when the process starts and writes it when it
			 * ends; every process of the run has ended (record_spawn_wait), so this one
			 * never will: killed by SIGKILL. Nothing to move or augment; the empty file
			 * is this run's own, in its own directory. */
			XGROW(f->empty, ecap, f->nempty + 1);
			f->empty[f->nempty++] = leading_number(e->d_name + strlen("callgrind.out."));
			unlink(path);
			free(path);
			continue;
		}
		XGROW(f->profiles, cap, f->nprofiles + 1);
		struct record_profile *p = &f->profiles[f->nprofiles++];
		memset(p, 0, sizeof(*p));
		p->path = path;
		p->pid = profile_pid(path);
		if (p->pid < 0)
			p->pid = leading_number(e->d_name + strlen("callgrind.out."));
	}
	closedir(dir);
	if (f->nprofiles)
		qsort(f->profiles, f->nprofiles, sizeof(*f->profiles), cmp_profile);
	/* With --separate-threads=yes the data is in callgrind.out.PID-01, -02...: the file
	 * without a suffix stays empty. That is no lost profile. */
	size_t keep = 0;
	for (size_t i = 0; i < f->nempty; i++) {
		int has = 0;
		for (size_t k = 0; k < f->nprofiles && !has; k++)
			has = f->profiles[k].pid == f->empty[i];
		for (size_t k = 0; k < keep && !has; k++)
			has = f->empty[k] == f->empty[i];
		if (!has)
			f->empty[keep++] = f->empty[i];
	}
	f->nempty = keep;
	return 0;
}

/* rename() that never replaces TO: EEXIST when TO exists. A file system without
 * RENAME_NOREPLACE gets link() and unlink(), which fail the same way. */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(from, to) < 0)
		return -1;
	return unlink(from);
}

/* Copies FROM to TO through a temporary file beside TO, renamed into place when complete,
 * with FROM's permission bits. Returns 0 or -1 (errno set). */
static int copy_file(const char *from, const char *to, const struct stat *st)
{
	char *tmp = xmalloc(strlen(to) + 32);
	const char *slash = strrchr(to, '/');
	size_t dirlen = slash ? (size_t)(slash - to) + 1 : 0;
	sprintf(tmp, "%.*s.cgjit-tmp.%ld.XXXXXX", (int)dirlen, to, (long)getpid());
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = in < 0 ? -1 : mkstemp(tmp);
	int ok = in >= 0 && out >= 0;
	char buf[65536];
	while (ok) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ok = n == 0;
			break;
		}
		for (ssize_t w = 0; ok && w < n; ) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k < 0 && errno != EINTR)
				ok = 0;
			else if (k > 0)
				w += k;
		}
	}
	int e = errno;
	if (ok && fchmod(out, st->st_mode & 07777) < 0)
		ok = 0, e = errno;
	if (out >= 0 && close(out) < 0 && ok)
		ok = 0, e = errno;
	if (in >= 0)
		close(in);
	if (ok && rename_noreplace(tmp, to) < 0)
		ok = 0, e = errno;
	if (!ok && out >= 0)
		unlink(tmp);
	free(tmp);
	errno = e;
	return ok ? 0 : -1;
}

/* Notes that FROM was moved to TO, or kept where it is (TO NULL). */
static void note_moved(struct collect *c, const char *from, const char *to, int profile)
{
	struct record_found *f = c->f;
	XGROW(f->moved, c->moved_cap, f->nmoved + 1);
	f->moved[f->nmoved++] = (struct record_move){ xstrdup(from), to ? xstrdup(to) : NULL, !to,
						      profile };
}

/* Moves FROM (ST its lstat()) into C->out_dir under NAME, its own; returns the new path
 * (malloc'd), or NULL with C->d set. HERE: FROM is in C->out_dir already. A file already in
 * C->out_dir stays: FROM is then used where it is (its path is returned) and C->f says so.
 * PROFILE: FROM is a profile. */
static char *move_in(struct collect *c, const char *from, const char *name, int here,
		     const struct stat *st, int profile)
{
	const char *out_dir = c->out_dir;
	char *to = xmalloc(strlen(out_dir) + strlen(name) + 2);
	sprintf(to, "%s/%s", out_dir, name);
	if (here)
		return to;
	/* /tmp is often another file system: then a copy, and the original removed only once
	 * the copy is complete. */
	if (rename_noreplace(from, to) < 0 &&
	    (errno != EXDEV || copy_file(from, to, st) < 0 || unlink(from) < 0)) {
		if (errno == EEXIST) {
			note_moved(c, from, NULL, profile);
			free(to);
			return xstrdup(from);
		}
		diag_at(c->d, from, 0, "cannot move it to '%s': %s", out_dir, strerror(errno));
		free(to);
		return NULL;
	}
	note_moved(c, from, to, profile);
	return to;
}

static int same_dir(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* node writes isolate-0xADDR-PID-v8.log into its current directory (V8's --logfile
 * default) with the perf flags: moved too, so that the checkout stays clean. */
static int is_v8_log(const char *name, long pid)
{
	char tail[40];
	int n = snprintf(tail, sizeof(tail), "-%ld-v8.log", pid);
	size_t len = strlen(name);
	return !strncmp(name, "isolate-", 8) && len > 8 + (size_t)n &&
	       !strcmp(name + len - (size_t)n, tail);
}

/* Moves PID's files from DIR (/tmp or the cwd) into C->out_dir; maps and dumps go to the
 * profiles of PID. Returns 0 or -1 (C->d set, the rest still moved). */
static int collect_pid(struct collect *c, const char *dir, long pid)
{
	struct record_found *f = c->f;
	int rc = 0, here = same_dir(dir, c->out_dir);
	DIR *dh = opendir(dir);
	if (!dh)
		return 0;
	char map[40], dump[40];
	snprintf(map, sizeof(map), "perf-%ld.map", pid);
	snprintf(dump, sizeof(dump), "jit-%ld.dump", pid);
	int in_cwd = !strcmp(dir, ".");
	struct dirent *e;
	while ((e = readdir(dh))) {
		int sym = !strcmp(e->d_name, map) || !strcmp(e->d_name, dump);
		if (!sym && !(in_cwd && is_v8_log(e->d_name, pid)))
			continue;
		char *from = xmalloc(strlen(dir) + strlen(e->d_name) + 2);
		sprintf(from, "%s/%s", dir, e->d_name);
		struct stat st;
		char *to = NULL;
		if (lstat(from, &st) == 0 && is_ours(&st, c->since)) {
			to = move_in(c, from, e->d_name, here, &st, 0);
			if (!to) {
				rc = -1;
				to = xstrdup(from);
			}
		}
		for (size_t i = 0; to && sym && i < f->nprofiles; i++) {
			struct record_profile *p = &f->profiles[i];
			if (p->pid == pid && p->nsymfiles < 4)
				p->symfiles[p->nsymfiles++] = xstrdup(to);
		}
		free(to);
		free(from);
	}
	closedir(dh);
	return rc;
}

int record_collect(const char *stage, const char *out_dir, const struct timespec *since,
		   struct record_found *f, struct diag *d)
{
	memset(f, 0, sizeof(*f));
	struct collect c = { out_dir, since, f, 0, d };
	if (find_profiles(&c, stage) < 0)
		return -1;
	int rc = 0, here = same_dir(stage, out_dir);
	for (size_t i = 0; i < f->nprofiles; i++) {
		struct record_profile *p = &f->profiles[i];
		const char *name = strrchr(p->path, '/') + 1;
		struct stat st;
		char *to = lstat(p->path, &st) == 0 ? move_in(&c, p->path, name, here, &st, 1) : NULL;
		if (!to) {
			rc = -1;
			continue;
		}
		free(p->path);
		p->path = to;
	}
	/* the maps and dumps of every process, also of one whose profile was empty: files of
	 * the run, moved out of /tmp all the same */
	for (size_t i = 0; i < f->nprofiles + f->nempty; i++) {
		long pid = i < f->nprofiles ? f->profiles[i].pid : f->empty[i - f->nprofiles];
		if (i > 0 && i < f->nprofiles && f->profiles[i - 1].pid == pid)
			continue;   /* one process, several profiles (threads, parts) */
		if (collect_pid(&c, ".", pid) < 0)
			rc = -1;
		if (!same_dir("/tmp", ".") && collect_pid(&c, "/tmp", pid) < 0)
			rc = -1;
	}
	return rc;
}

void record_found_free(struct record_found *f)
{
	for (size_t i = 0; i < f->nprofiles; i++) {
		free(f->profiles[i].path);
		for (size_t k = 0; k < f->profiles[i].nsymfiles; k++)
			free(f->profiles[i].symfiles[k]);
	}
	free(f->profiles);
	free(f->empty);
	for (size_t i = 0; i < f->nmoved; i++) {
		free(f->moved[i].from);
		free(f->moved[i].to);
	}
	free(f->moved);
	memset(f, 0, sizeof(*f));
}

/* Adds DIR/NAME to P when it is a file of this run (ours, new since SINCE). */
static void progress_file(const char *dir, const char *name, const struct timespec *since,
			  struct record_progress *p)
{
	char path[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    lstat(path, &st) < 0 || !is_ours(&st, since))
		return;
	if (p->nfiles < sizeof(p->files) / sizeof(p->files[0])) {
		snprintf(p->files[p->nfiles].name, sizeof(p->files[0].name), "%s", name);
		p->files[p->nfiles].bytes = (uint64_t)st.st_size;
	}
	p->nfiles++;
	p->bytes += (uint64_t)st.st_size;
}

void record_progress_scan(const char *stage, const struct timespec *since,
			  struct record_progress *p)
{
	unsigned seconds = p->seconds;
	memset(p, 0, sizeof(*p));
	p->seconds = seconds;
	DIR *dir = opendir(stage);
	if (!dir)
		return;
	long seen[64];
	size_t nseen = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!is_profile_name(e->d_name))
			continue;
		char path[PATH_MAX];
		struct stat st;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", stage, e->d_name) >= sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size == 0)
			p->running++;
		else
			p->written++;
		/* the maps and dumps of that process: once per pid (parts and threads share
		 * them); past 64 processes the line counts the first 64's */
		long pid = leading_number(e->d_name + strlen("callgrind.out."));
		size_t k = 0;
		while (k < nseen && seen[k] != pid)
			k++;
		if (k < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[nseen++] = pid;
		char name[64];
		static const char *const dirs[] = { ".", "/tmp" };
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			if (i && same_dir("/tmp", "."))
				break;
			snprintf(name, sizeof(name), "jit-%ld.dump", pid);
			progress_file(dirs[i], name, since, p);
			snprintf(name, sizeof(name), "perf-%ld.map", pid);
			progress_file(dirs[i], name, since, p);
		}
	}
	closedir(dir);
}
