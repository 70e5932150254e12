/* record_run.h - what `cgjit record` does to the system before and during the run: finds
 * programs on PATH, reads the command's file, finds the JVMTI agent, asks CPython its
 * version, runs valgrind (signals forwarded, no shell, no zombie, every process of the run
 * waited for). Collecting what the run wrote is record_collect.h. Prints nothing. */
#ifndef CGJIT_RECORD_RUN_H
#define CGJIT_RECORD_RUN_H

#include <stddef.h>

struct diag;
struct record_shim_file;

/* Finds NAME as execvp() would: NAME itself when it holds a '/', else the first executable
 * regular file NAME in $PATH. Writes the path into OUT (size OUTSZ). Returns 0 or -1. */
int record_which(const char *name, char *out, size_t outsz);

/* Reads what the command at PATH is into F, for record_shim_check(): PATH itself (borrowed),
 * its path with the links resolved, and its first bytes. Returns 0, or -1 when it cannot be
 * read (then nothing is known, and nothing refused). */
int record_command_head(const char *path, struct record_shim_file *f);

/* cgjit's JVMTI agent: $CGJIT_JVMTI_AGENT if set (empty: none), else libcgjit-jvmti.so
 * beside the cgjit binary (a build directory), else DIR/../lib/cgjit/libcgjit-jvmti.so
 * (make install). Writes its path into OUT. Returns 0, or -1 when there is none. */
int record_find_jvmti_agent(char *out, size_t outsz);

/* cgjit's LuaJIT agent, the same way: $CGJIT_LUAJIT_AGENT, else cgjit_luajit.lua beside
 * the binary or in ../lib/cgjit/ (docs/luajit.md). Returns 0 with OUT, or -1. */
int record_find_luajit_agent(char *out, size_t outsz);

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

#endif
