/* record_run.h - what `cgjit record` does to the system: finds programs on PATH, asks CPython
 * its version, runs valgrind (signals forwarded, no shell, no zombie, every process of the
 * run waited for), and collects the profiles and the perf maps and jitdumps the run's
 * processes wrote. Prints nothing. */
#ifndef CGJIT_RECORD_RUN_H
#define CGJIT_RECORD_RUN_H

#include <stddef.h>
#include <time.h>

struct diag;

/* Finds NAME as execvp() would: NAME itself when it holds a '/', else the first executable
 * regular file NAME in $PATH. Writes the path into OUT (size OUTSZ). Returns 0 or -1. */
int record_which(const char *name, char *out, size_t outsz);

/* Reads what the command at PATH is: its path with the links resolved into REAL, and its
 * first bytes (at most HEADSZ) into HEAD, *LEN of them, for record_shim_check(). Returns 0,
 * or -1 when it cannot be read (then nothing is known, and nothing refused). */
int record_command_head(const char *path, char *real, size_t realsz, char *head, size_t headsz,
			size_t *len);

/* cgjit's JVMTI agent: $CGJIT_JVMTI_AGENT if set (empty: none), else libcgjit-jvmti.so
 * beside the cgjit binary (a build directory), else DIR/../lib/cgjit/libcgjit-jvmti.so
 * (make install). Writes its path into OUT. Returns 0, or -1 when there is none. */
int record_find_jvmti_agent(char *out, size_t outsz);

/* A record_probe_fn: runs `COMMAND --version` (stdin /dev/null, stdout and stderr into OUT,
 * at most OUTSZ - 1 bytes) and waits for it. CTX is unused. Returns 0, or -1 when it could
 * not be run or failed. */
int record_probe_version(void *ctx, const char *command, char *out, size_t outsz);

/* Told by record_spawn_wait() that the program's own process has ended while N other
 * processes of the run (PIDS; N is 0 when /proc cannot be read) are still running. */
typedef void (*record_waiting_fn)(void *ctx, const long *pids, size_t n);

/* Told by record_spawn_wait(), right after the start and then about once a second while
 * the run lasts, how long it has run (whole seconds). */
typedef void (*record_tick_fn)(void *ctx, unsigned seconds);

/* What record_spawn_wait() tells as the run goes; each callback may be NULL. */
struct record_watch {
	record_waiting_fn waiting;
	record_tick_fn tick;
	void *ctx;
};

/* Sets each of ENV's "NAME=VALUE" (NULL-terminated) that is not set already, runs ARGV
 * (execvp: ARGV[0] from $PATH), and waits for it and for every process it starts, also
 * those that outlive it (this process is their subreaper meanwhile: callgrind writes a
 * process's profile when it ends). W's waiting is called once when ARGV's process has
 * ended and others still run; its tick as the run goes. SIGINT, SIGTERM and SIGHUP sent
 * to this process are passed on to every process of the run (from a terminal, only to
 * those outside this process group, which did not get it). *PID is ARGV's pid; *STATUS
 * its waitpid() status. Returns 0, or -1 with D set when it could not be started. */
int record_spawn_wait(char *const *argv, const char *const *env, const struct record_watch *w,
		      long *pid, int *status, struct diag *d);

/* The exit status a shell would give for waitpid() STATUS: the code, or 128 + signal. */
int record_exit_code(int status);

/* One profile of the run and the symbol files of its process. */
struct record_profile {
	char *path;              /* OUT_DIR/callgrind.out.PID... */
	long pid;                /* from its pid: line (the file name's number without one) */
	char *symfiles[4];       /* its perf maps and jitdumps (cwd, /tmp), after the move */
	size_t nsymfiles;
};

/* A file of the run that record_collect() moved into OUT_DIR, or left where it is. */
struct record_move {
	char *from;                        /* where it was written */
	char *to;                          /* OUT_DIR/NAME; NULL when kept */
	int kept;                          /* not moved: a file of that name is in OUT_DIR */
	int profile;                       /* a profile (else a map, a dump or a V8 log) */
};

/* What record_collect() found and did. Owns every string. */
struct record_found {
	struct record_profile *profiles;   /* sorted by pid */
	size_t nprofiles;
	long *empty;                       /* pids whose profile was empty (0 bytes: the process
	                                      was killed before callgrind wrote it); removed,
	                                      neither moved nor augmented */
	size_t nempty;
	struct record_move *moved;         /* one per file of the run found outside OUT_DIR */
	size_t nmoved;
};

/* The time a run starts, comparable with file modification times: the coarse clock the
 * kernel stamps files with (a precise clock can be ahead of a file written after it). */
void record_now(struct timespec *t);

/* Collects the run started at SINCE (record_now()), after record_spawn_wait() (every process
 * of the run has ended): every profile callgrind.out.<digits>...
 * in STAGE (the run's own directory, so that runs into one OUT_DIR at the same time do not
 * take each other's profiles), moved into OUT_DIR, and for each of their pids the files
 * perf-PID.map and
 * jit-PID.dump in /tmp and in the current directory, and node's isolate-*-PID-v8.log in
 * the current directory, that are regular files owned by this user and modified since
 * SINCE. Those are moved into OUT_DIR (across file systems: copied, then removed), never
 * over a file already there (then the file is used where it is, and F->moved says so).
 * An empty profile (0 bytes) is never complete: it is removed and its pid listed in
 * F->empty; that process's maps and dumps are still moved.
 * Nothing else is touched. Fills F (record_found_free() frees it). Returns 0, or -1 with D set
 * when a file could not be moved (the rest are still moved; that one is used where it is). */
int record_collect(const char *stage, const char *out_dir, const struct timespec *since,
		   struct record_found *f, struct diag *d);
void record_found_free(struct record_found *f);

struct record_progress;

/* Fills P's counts (not its seconds) with what the run in STAGE, begun at SINCE, has
 * written so far: the profiles callgrind began there (empty while their process runs) and
 * wrote, and their processes' perf maps and jitdumps in /tmp and the current directory
 * that are this user's and new since SINCE, with their sizes. Reads only. */
void record_progress_scan(const char *stage, const struct timespec *since,
			  struct record_progress *p);

#endif
