/* record_collect.h - what `cgjit record` finds after the run (every process of which has
 * ended): the profiles in the run's own directory and the perf maps, jitdumps and V8 logs
 * their processes wrote, moved into the output directory; and, while it lasts, what the
 * progress line counts. Prints nothing. */
#ifndef CGJIT_RECORD_COLLECT_H
#define CGJIT_RECORD_COLLECT_H

#include <stddef.h>
#include <time.h>

struct diag;
struct record_progress;

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

/* Fills P's counts (not its seconds) with what the run in STAGE, begun at SINCE, has
 * written so far: the profiles callgrind began there (empty while their process runs) and
 * wrote, and their processes' perf maps and jitdumps in /tmp and the current directory
 * that are this user's and new since SINCE, with their sizes. Reads only. */
void record_progress_scan(const char *stage, const struct timespec *since,
			  struct record_progress *p);

#endif
