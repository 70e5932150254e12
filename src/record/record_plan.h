/* record_plan.h - which JIT runtime `cgjit record`'s command is and what it adds to the
 * command line and the environment so that the runtime writes a perf map or a jitdump (and,
 * through record_det.h, so that its counts repeat): the plan, decided without running
 * anything (the CPython version probe is the caller's). */
#ifndef CGJIT_RECORD_PLAN_H
#define CGJIT_RECORD_PLAN_H

#include <stddef.h>

#include "record/record.h"

struct diag;

/* Where a runtime writes its symbol file. */
enum record_where {
	RECORD_IN_TMP,            /* /tmp/perf-PID.map, /tmp/jit-PID.dump */
	RECORD_IN_CWD,            /* ./jit-PID.dump, the program's current directory */
};

/* What to run: the runtime and what it will add to the command line. Strings are static,
 * or point into the command line and environment given to record_plan_make(). */
struct record_plan {
	const char *runtime;               /* "node", "java", "python", "moar", "php", "mono",
	                                      "luajit", "none" */
	int py_major, py_minor;            /* the CPython version, when runtime is "python" */
	const char *flags[24];             /* inserted after COMMAND, NULL-terminated: the
	                                      symbol file's, then the determinism settings */
	const char *env[8];                /* NAME=VALUE set when NAME is unset, NULL-terminated */
	const char *det[16];               /* the determinism settings added, as shown: flags
	                                      (also in FLAGS) and NAME=VALUE (also in ENV) */
	const char *det_yours[8];          /* the command's own settings that stand in for one
	                                      (an argument, or a NAME=VALUE of the environment):
	                                      nothing was added for those */
	int deterministic;                 /* 0: --no-deterministic, nothing was added */
	enum record_symbols writes;        /* MAP or JITDUMP (DEFAULT for "none") */
	enum record_where where;
	const char *made_by;               /* what writes it, for messages: "--perf-prof" */
	char agent_flag[4200];             /* java with cgjit's JVMTI agent: -agentpath:PATH;
	                                      luajit: dofile[==[PATH]==] after -e */
};

/* The runtime a command's basename names ("node", "/usr/bin/nodejs" -> "node"; "python3.13"
 * -> "python"; "rakudo" -> "moar"), or NULL when it names none. */
const char *record_runtime_of(const char *command);

/* The runtime names --runtime takes, for messages: "node, java, ...". */
const char *record_runtime_names(void);

/* Returns 1 when NAME is one of record_runtime_names(), else 0. */
int record_runtime_known(const char *name);

/* Runs `COMMAND --version` and puts its output (stdout and stderr) into OUT, NUL-terminated.
 * Returns 0, or -1 when it could not be run. */
typedef int (*record_probe_fn)(void *ctx, const char *command, char *out, size_t outsz);

/* Reads "Python 3.13.0" (a `python --version` line). Returns 0 with MAJOR and MINOR, or -1. */
int record_python_version(const char *text, int *major, int *minor);

/* What the plan takes from the system, found by the caller so that record_plan_make()
 * stays pure. Every pointer is the caller's and must outlive the plan. */
struct record_plan_env {
	const char *const *envp;           /* NULL-terminated NAME=VALUE: the environment the
	                                      program will get */
	const char *jvmti_agent;           /* libcgjit-jvmti.so's path, or NULL: none */
	record_probe_fn probe;             /* `COMMAND --version`, for a CPython whose name has
	                                      no version */
	void *probe_ctx;                   /* PROBE's CTX */
	const char *luajit_agent;          /* cgjit_luajit.lua's path, or NULL: none */
};

/* Fills PLAN for A's command (A->cmd[0] is COMMAND): the runtime is A->runtime if set
 * (--runtime), else record_runtime_of(COMMAND). For CPython the version comes from the name
 * (python3.13), or from ENV->probe when the name has none (python3). For java,
 * ENV->jvmti_agent makes it write a jitdump, the default then (docs/jvmti.md); without it
 * java writes a perf map. luajit needs ENV->luajit_agent (an error without it), loaded
 * with -e before the script.
 * Unless A->no_deterministic, the runtime's determinism settings are added too
 * (record_det_add(): the user's own setting, an argument of A->cmd or a variable of
 * ENV->envp, wins; docs/record.md 1.1).
 * PLAN's strings point into A's command line and ENV->envp where they name the user's
 * settings. Returns 0, -1 with D set when the runtime is unknown, cannot write what
 * A->symbols asks, or is a CPython older than 3.12; -2 when the probe failed. */
int record_plan_make(const struct record_args *a, const struct record_plan_env *env,
		     struct record_plan *plan, struct diag *d);

#endif
