/* record_run.c - the side effects of `cgjit record` (docs/record.md): PATH lookup, the
 * CPython version probe, valgrind run with fork/execvp (never a shell) and every process of
 * the run waited for (as their subreaper) while signals are passed on to them, and the
 * collection of the run's profiles, perf maps and jitdumps. Owns the struct record_found
 * it fills; prints nothing. */
#define _GNU_SOURCE   /* renameat2(RENAME_NOREPLACE) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "record/record.h"
#include "record/record_run.h"

static char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

static int is_exec_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int readable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

int record_find_jvmti_agent(char *out, size_t outsz)
{
	const char *env = getenv("CGJIT_JVMTI_AGENT");
	if (env)
		return *env && (size_t)snprintf(out, outsz, "%s", env) < outsz && readable_file(out) ? 0 : -1;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	static const char *const rel[] = { "/libcgjit-jvmti.so", "/../lib/cgjit/libcgjit-jvmti.so" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX + 40];
		snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
		/* the JVM wants an absolute path without ".." games: resolve it */
		if (readable_file(path) && realpath(path, out) && strlen(out) < outsz)
			return 0;
	}
	return -1;
}

int record_command_head(const char *path, char *real, size_t realsz, char *head, size_t headsz,
			size_t *len)
{
	char buf[PATH_MAX];
	if (!realpath(path, buf) || (size_t)snprintf(real, realsz, "%s", buf) >= realsz)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	while ((n = read(fd, head, headsz)) < 0 && errno == EINTR)
		;
	close(fd);
	if (n < 0)
		return -1;
	*len = (size_t)n;
	return 0;
}

int record_which(const char *name, char *out, size_t outsz)
{
	if (!*name)
		return -1;
	if (strchr(name, '/')) {
		if (!is_exec_file(name) || (size_t)snprintf(out, outsz, "%s", name) >= outsz)
			return -1;
		return 0;
	}
	/* execvp()'s search: unset PATH means confstr(_CS_PATH), an empty entry the cwd. */
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; ) {
		size_t len = strcspn(p, ":");
		int n = len ? snprintf(out, outsz, "%.*s/%s", (int)len, p, name)
			    : snprintf(out, outsz, "%s", name);
		if (n > 0 && (size_t)n < outsz && is_exec_file(out))
			return 0;
		if (!p[len])
			return -1;
		p += len + 1;
	}
}

static int wait_for(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int record_probe_version(void *ctx, const char *command, char *out, size_t outsz)
{
	(void)ctx;
	int fds[2];
	if (outsz == 0 || pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);   /* Python 2 prints its version on stderr */
		close(fds[0]);
		close(fds[1]);
		char *const argv[] = { (char *)command, (char *)"--version", NULL };
		execvp(command, argv);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	char drop[256];
	for (;;) {   /* read to the end, so that the child never blocks on a full pipe */
		ssize_t got = n + 1 < outsz ? read(fds[0], out + n, outsz - 1 - n)
					    : read(fds[0], drop, sizeof(drop));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (n + 1 < outsz)
			n += (size_t)got;
	}
	out[n] = '\0';
	close(fds[0]);
	int status;
	if (wait_for(pid, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

/* ---- the run: every process valgrind starts, waited for ----
 * cgjit is a child subreaper while the program runs (prctl(PR_SET_CHILD_SUBREAPER)): a
 * process of the run whose parent ends (a background child of a shell, a daemon) becomes
 * cgjit's child rather than init's, so cgjit can wait for it; callgrind writes a process's
 * profile only when that process ends. SIGINT, SIGTERM and SIGHUP are blocked except in
 * sigsuspend(): the handler only notes the signal, and the wait loop passes it on to the
 * processes of the run, found in /proc as this process's descendants. */

static long leading_number(const char *s);

static volatile sig_atomic_t from_process;   /* signals to pass on, as bits 1 << sig */
static volatile sig_atomic_t from_tty;

static void note_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* A terminal's ^C (si_code SI_KERNEL, > 0) reaches its whole foreground process
	 * group, the program included: passing it on there would deliver it twice. A signal
	 * sent to this process alone (kill, timeout, a CI runner: si_code <= 0) must be
	 * passed on to every process of the run, or the run would go on after cgjit is
	 * asked to stop. */
	if (si && si->si_code <= 0)
		from_process |= 1 << sig;
	else
		from_tty |= 1 << sig;
}

static void on_child(int sig)
{
	(void)sig;   /* only to end sigsuspend() */
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };
enum { NFORWARDED = sizeof(forwarded) / sizeof(forwarded[0]) };

/* The saved dispositions: forwarded[] and then SIGCHLD. */
struct saved_signals {
	struct sigaction act[NFORWARDED + 1];
	sigset_t mask;
};

/* Installs note_signal() for the signals not ignored (a signal ignored here, as in a
 * background job, stays ignored in the program, which inherits that) and on_child() for
 * SIGCHLD, with all of them blocked; S gets what was there. */
static void catch_signals(struct saved_signals *s)
{
	sigset_t block;
	sigemptyset(&block);
	for (int i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &s->mask);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = note_signal;
	sa.sa_flags = SA_SIGINFO;
	sa.sa_mask = block;
	for (int i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &s->act[i]);
		if (s->act[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sa.sa_mask = block;
	sigaction(SIGCHLD, &sa, &s->act[NFORWARDED]);
	from_process = from_tty = 0;
}

static void restore_signals(const struct saved_signals *s)
{
	for (int i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &s->act[i], NULL);
	sigaction(SIGCHLD, &s->act[NFORWARDED], NULL);
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
}

/* A process in /proc: its parent and process group. */
struct proc {
	long pid, ppid, pgrp;
};

/* The processes that descend from this one (the run: cgjit is its subreaper), from /proc.
 * Returns their number with *OUT malloc'd, or -1 when /proc cannot be read. */
static long run_processes(struct proc **out)
{
	DIR *dir = opendir("/proc");
	if (!dir)
		return -1;
	struct proc *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;   /* gone meanwhile */
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		/* "PID (COMM) STATE PPID PGRP ...": COMM may hold anything, ')' included */
		char *p = strrchr(buf, ')');
		long v[3] = { 0 };
		if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
			continue;
		p += 4;
		for (int f = 0; f < 2; f++, p++) {
			for (; *p >= '0' && *p <= '9'; p++)
				v[f + 1] = v[f + 1] * 10 + (*p - '0');
			if (*p != ' ')
				break;
		}
		v[0] = leading_number(e->d_name);
		XGROW(all, cap, n + 1);
		all[n++] = (struct proc){ v[0], v[1], v[2] };
	}
	closedir(dir);
	/* the descendants: breadth first from this process, in place at the front */
	size_t found = 0;
	long self = (long)getpid();
	for (size_t i = 0; i < n; i++)
		if (all[i].ppid == self) {
			struct proc t = all[found];
			all[found++] = all[i];
			all[i] = t;
		}
	for (size_t q = 0; q < found; q++)
		for (size_t i = found; i < n; i++)
			if (all[i].ppid == all[q].pid) {
				struct proc t = all[found];
				all[found++] = all[i];
				all[i] = t;
			}
	*out = all;
	return (long)found;
}

/* Passes the signals noted by note_signal() on to the processes of the run: one sent to
 * cgjit alone to all of them, one from the terminal only to those outside cgjit's process
 * group (a process that left the terminal's group did not get it). MAIN is the program's
 * own process while it runs (0 after), the one to signal when /proc cannot be read. */
static void pass_on(pid_t main)
{
	int proc_bits = from_process, tty_bits = from_tty;
	from_process = from_tty = 0;
	struct proc *run = NULL;
	long n = run_processes(&run);
	long own = (long)getpgrp();
	for (int i = 0; i < NFORWARDED; i++) {
		int sig = forwarded[i];
		if (!((proc_bits | tty_bits) & (1 << sig)))
			continue;
		if (n < 0 && main > 0 && (proc_bits & (1 << sig)))
			kill(main, sig);
		for (long k = 0; k < n; k++)
			if ((proc_bits & (1 << sig)) || run[k].pgrp != own)
				kill((pid_t)run[k].pid, sig);
	}
	free(run);
}

/* Whole seconds from START to now (CLOCK_MONOTONIC). */
static unsigned elapsed(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long s = (long)(now.tv_sec - start->tv_sec) - (now.tv_nsec < start->tv_nsec);
	return s > 0 ? (unsigned)s : 0;
}

/* Sleeps until a signal in OPEN_MASK arrives, or, with TICK, until the next whole second
 * since START, when it calls TICK. pselect() unblocks the signals and waits in one step,
 * as sigsuspend() does, so that a SIGCHLD is never missed between the check and the wait. */
static void wait_signal_or_tick(const sigset_t *open_mask, const struct record_watch *w,
				const struct timespec *start, unsigned *shown)
{
	if (!w || !w->tick) {
		sigsuspend(open_mask);
		return;
	}
	struct timespec now, next = { start->tv_sec + (time_t)*shown + 1, start->tv_nsec }, left;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = next.tv_sec - now.tv_sec;
	left.tv_nsec = next.tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000L;
	}
	if (left.tv_sec >= 0 && pselect(0, NULL, NULL, NULL, &left, open_mask) < 0)
		return;   /* a signal: the loop looks at what it was first */
	unsigned t = elapsed(start);
	if (t > *shown) {
		*shown = t;
		w->tick(w->ctx, t);
	}
}

/* Waits for MAIN (its status into *STATUS) and for every other process of the run, passing
 * signals on; W is told once when MAIN has ended and others still run, and ticks as the
 * run goes (from START). Returns 0, or -1 (errno set) when MAIN could not be waited for. */
static int wait_run(pid_t main, int *status, const struct saved_signals *s,
		    const struct record_watch *w, const struct timespec *start)
{
	sigset_t open_mask = s->mask;   /* in sigsuspend(): ours unblocked */
	for (int i = 0; i < NFORWARDED; i++)
		sigdelset(&open_mask, forwarded[i]);
	sigdelset(&open_mask, SIGCHLD);
	int main_done = 0, told = 0;
	unsigned shown = 0;
	pid_t alive = main;
	for (;;) {
		int st;
		pid_t got = waitpid(-1, &st, WNOHANG);
		if (got > 0) {
			if (got == main) {
				*status = st;
				main_done = 1;
				alive = 0;
			}
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;   /* ECHILD: no process of the run is left */
		if (from_process || from_tty) {
			pass_on(alive);
			continue;
		}
		if (main_done && !told) {
			told = 1;
			struct proc *run = NULL;
			long n = run_processes(&run);
			long *pids = xmalloc((n > 0 ? (size_t)n : 1) * sizeof(*pids));
			for (long k = 0; k < n; k++)
				pids[k] = run[k].pid;
			if (w && w->waiting)
				w->waiting(w->ctx, pids, n > 0 ? (size_t)n : 0);
			free(pids);
			free(run);
		}
		wait_signal_or_tick(&open_mask, w, start, &shown);
	}
	if (!main_done) {
		errno = ECHILD;
		return -1;
	}
	return 0;
}

int record_spawn_wait(char *const *argv, const char *const *env, const struct record_watch *w,
		      long *pid, int *status, struct diag *d)
{
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		char *name = xstrndup(env[i], (size_t)(eq - env[i]));
		setenv(name, eq + 1, 0);   /* the user's own setting wins */
		free(name);
	}
	fflush(NULL);   /* or the child would flush our buffered output again */
	/* From before fork() the signals are blocked: one arriving before the wait is noted
	 * and passed on then (parent), or delivered to the old disposition once it is back
	 * (child). */
	struct saved_signals saved;
	catch_signals(&saved);
	int reaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t p = fork();
	if (p < 0) {
		int e = errno;
		if (reaper)
			prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
		restore_signals(&saved);
		return diag_at(d, argv[0], 0, "cannot start: %s", strerror(e));
	}
	if (p == 0) {
		restore_signals(&saved);
		execvp(argv[0], argv);
		dprintf(2, "cgjit: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	*pid = p;
	if (w && w->tick)
		w->tick(w->ctx, 0);   /* at once: a run shorter than a second shows it too */
	int rc = wait_run(p, status, &saved, w, &start);
	int e = errno;
	if (reaper)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	restore_signals(&saved);
	if (rc < 0)
		return diag_at(d, argv[0], 0, "cannot wait for pid %ld: %s", (long)p, strerror(e));
	return 0;
}

int record_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
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

/* The pid: line of a callgrind header (callgrind-format.md 1.3), or -1. It comes before the
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

static int find_profiles(const char *out_dir, const struct timespec *since,
			 struct record_found *f, struct diag *d)
{
	DIR *dir = opendir(out_dir);
	if (!dir)
		return diag_at(d, out_dir, 0, "cannot read the directory: %s", strerror(errno));
	size_t cap = 0, ecap = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!is_profile_name(e->d_name))
			continue;
		char *path = xmalloc(strlen(out_dir) + strlen(e->d_name) + 2);
		sprintf(path, "%s/%s", out_dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) < 0 || !is_ours(&st, since)) {
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
static void note_moved(struct record_found *f, size_t *cap, const char *from, const char *to,
		       int profile)
{
	XGROW(f->moved, *cap, f->nmoved + 1);
	f->moved[f->nmoved++] = (struct record_move){ xstrdup(from), to ? xstrdup(to) : NULL, !to,
						      profile };
}

/* Moves FROM into OUT_DIR under the same name; returns the new path (malloc'd), or NULL
 * with D set. A file already in OUT_DIR stays: FROM is then used where it is (its path is
 * returned) and F says so. PROFILE: FROM is a profile. */
static char *move_in(const char *from, const char *name, const char *out_dir, int same_dir,
		     const struct stat *st, int profile, struct record_found *f, size_t *cap,
		     struct diag *d)
{
	char *to = xmalloc(strlen(out_dir) + strlen(name) + 2);
	sprintf(to, "%s/%s", out_dir, name);
	if (same_dir)
		return to;
	/* /tmp is often another file system: then a copy, and the original removed only once
	 * the copy is complete. */
	if (rename_noreplace(from, to) < 0 &&
	    (errno != EXDEV || copy_file(from, to, st) < 0 || unlink(from) < 0)) {
		if (errno == EEXIST) {
			note_moved(f, cap, from, NULL, profile);
			free(to);
			return xstrdup(from);
		}
		diag_at(d, from, 0, "cannot move it to '%s': %s", out_dir, strerror(errno));
		free(to);
		return NULL;
	}
	note_moved(f, cap, from, to, profile);
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

/* Moves PID's files from DIR (/tmp or the cwd) into OUT_DIR; maps and dumps go to the
 * profiles of PID. Returns 0 or -1 (D set, the rest still moved). */
static int collect_pid(const char *dir, const char *out_dir, long pid,
		       const struct timespec *since, struct record_found *f, size_t *cap,
		       struct diag *d)
{
	int rc = 0, here = same_dir(dir, out_dir);
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
		if (lstat(from, &st) == 0 && is_ours(&st, since)) {
			to = move_in(from, e->d_name, out_dir, here, &st, 0, f, cap, d);
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
	if (find_profiles(stage, since, f, d) < 0)
		return -1;
	int rc = 0, here = same_dir(stage, out_dir);
	size_t cap = 0;
	for (size_t i = 0; i < f->nprofiles; i++) {
		struct record_profile *p = &f->profiles[i];
		const char *name = strrchr(p->path, '/') + 1;
		struct stat st;
		char *to = lstat(p->path, &st) == 0 ? move_in(p->path, name, out_dir, here, &st, 1, f, &cap, d)
			: NULL;
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
		if (collect_pid(".", out_dir, pid, since, f, &cap, d) < 0)
			rc = -1;
		if (!same_dir("/tmp", ".") && collect_pid("/tmp", out_dir, pid, since, f, &cap, d) < 0)
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
