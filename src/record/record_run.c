/* record_run.c - the side effects of `cgjit record` before and during the run
 * (docs/record.md): PATH lookup, what the command's file is, the JVMTI agent, the CPython
 * version probe, and valgrind run with fork/execvp (never a shell) and every process of
 * the run waited for (as their subreaper) while signals are passed on to them. The files
 * the run leaves are collected by record_collect.c. Prints nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "record/record_run.h"
#include "record/record_shim.h"

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

/* $ENV_NAME if set (empty: none), else FILE beside the cgjit binary, else in
 * ../lib/cgjit/ from it: resolved to an absolute path (the JVM wants one without ".."). */
static int find_agent(const char *env_name, const char *file, char *out, size_t outsz)
{
	const char *env = getenv(env_name);
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
	static const char *const rel[] = { "/", "/../lib/cgjit/" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX + 80];
		snprintf(path, sizeof(path), "%s%s%s", exe, rel[i], file);
		if (readable_file(path) && realpath(path, out) && strlen(out) < outsz)
			return 0;
	}
	return -1;
}

int record_find_jvmti_agent(char *out, size_t outsz)
{
	return find_agent("CGJIT_JVMTI_AGENT", "libcgjit-jvmti.so", out, outsz);
}

int record_find_luajit_agent(char *out, size_t outsz)
{
	return find_agent("CGJIT_LUAJIT_AGENT", "cgjit_luajit.lua", out, outsz);
}

int record_command_head(const char *path, struct record_shim_file *f)
{
	char buf[PATH_MAX];
	f->path = path;
	f->len = 0;
	if (!realpath(path, buf) ||
	    (size_t)snprintf(f->real, sizeof(f->real), "%s", buf) >= sizeof(f->real))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	while ((n = read(fd, f->head, sizeof(f->head))) < 0 && errno == EINTR)
		;
	close(fd);
	if (n < 0)
		return -1;
	f->len = (size_t)n;
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

static long leading_number(const char *s)
{
	long v = 0;
	for (int k = 0; *s >= '0' && *s <= '9' && k < 12; s++, k++)
		v = v * 10 + (*s - '0');
	return v;
}

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
