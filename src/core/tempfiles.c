/* tempfiles.c - the table of the temporary files this process created and has not renamed
 * yet, emptied by removing them on exit() and on the fatal signals; their names and locks,
 * by which a later run removes those whose process died. Below output.c (which owns the
 * names: the table only points at them); the table and the handlers are this file's. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/tempfiles.h"
#include "core/xalloc.h"

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

void tempfiles_hold(sigset_t *old)
{
	sigprocmask(SIG_BLOCK, &handled, old);
}

void tempfiles_release(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

int tempfiles_signal_waiting(void)
{
	sigset_t p;
	if (sigpending(&p) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (sigismember(&handled, fatal_signals[i]) == 1 && sigismember(&p, fatal_signals[i]) == 1)
			return 1;
	return 0;
}

void tempfiles_forget(const char *path)
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

size_t tempfiles_name_size(const char *dest)
{
	const char *slash = strrchr(dest, '/');
	size_t dirlen = slash ? (size_t)(slash - dest) + 1 : 0;
	/* DIR + ".cgjit-tmp." + pid + "." + 6 + ".old" + NUL */
	return dirlen + 11 + 20 + 1 + 6 + 4 + 1;
}

int tempfiles_create(const char *dest, char *name, size_t size)
{
	const char *slash = strrchr(dest, '/');
	int dirlen = slash ? (int)(slash - dest) + 1 : 0;
	char *dir = dirlen ? xstrndup(dest, (size_t)dirlen) : xstrndup(".", 1);
	remove_stale(dir);
	free(dir);
	install_handlers();
	sigset_t old;
	tempfiles_hold(&old);
	/* Grown with the signals held: the handler must never see the table being moved (out of
	 * memory here exits, and the old table is still intact for the atexit handler). */
	XGROW(tmp_list, tmp_cap, tmp_n + 1);
	int fd = -1, e = EEXIST;
	for (int tries = 0; tries < 100 && e == EEXIST; tries++) {
		char sfx[7];
		random_suffix(sfx);
		snprintf(name, size, "%.*s.cgjit-tmp.%ld.%s", dirlen, dest, (long)getpid(), sfx);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
		e = fd < 0 ? errno : 0;
	}
	if (fd >= 0) {
		if (tmp_owner != getpid()) {   /* a forked child: the table's files are its parent's */
			tmp_owner = getpid();
			tmp_n = 0;
		}
		tmp_list[tmp_n++] = name;
	}
	tempfiles_release(&old);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	flock(fd, LOCK_EX | LOCK_NB);   /* "in use" for remove_stale() of other runs */
	return fd;
}
