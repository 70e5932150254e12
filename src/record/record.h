/* record.h - `cgjit record`'s decisions, without running anything: the command line split
 * into cgjit's options, valgrind's and the program's; which JIT runtime the program is; the
 * flags and environment that make it write a perf map or a jitdump, and those that make its
 * counts repeatable; valgrind's argv; whether the command is a version manager's shim; and
 * the text of the progress line and of the one-line summaries.
 * Running, waiting and collecting are in record_run.h; argv and messages in cmd_record.c. */
#ifndef CGJIT_RECORD_H
#define CGJIT_RECORD_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct augment_stats;

/* Which symbol file the user asked for (--symbols). */
enum record_symbols {
	RECORD_SYMBOLS_DEFAULT,   /* the runtime's best: a jitdump where it writes one */
	RECORD_SYMBOLS_MAP,
	RECORD_SYMBOLS_JITDUMP,
};

/* Where a runtime writes its symbol file. */
enum record_where {
	RECORD_IN_TMP,            /* /tmp/perf-PID.map, /tmp/jit-PID.dump */
	RECORD_IN_CWD,            /* ./jit-PID.dump, the program's current directory */
};

/* The command line of `cgjit record`. Every pointer points into the argv given to
 * record_parse_args() and lives as long as it. */
struct record_args {
	const char *out_dir;               /* -d/--out-dir; NULL: the current directory */
	const char *runtime;               /* --runtime NAME; NULL: from the command's name */
	enum record_symbols symbols;       /* --symbols map|jitdump */
	int quiet;                         /* -q: only the final lines that name the outputs */
	int verbose;                       /* -v: valgrind's own messages, every move, augment's
	                                      whole summary */
	int no_deterministic;              /* --no-deterministic: no determinism settings */
	int no_augment;                    /* --no-augment: record and collect only */
	const char *root;                  /* --root DIR for augment; NULL: the current
	                                      directory, where the command runs */
	int no_root;                       /* --no-root: JIT names keep absolute paths */
	int help;                          /* -h/--help: nothing else was checked */
	const char *const *vg_opts;        /* valgrind's options, in the order given */
	size_t nvg;
	char *const *cmd;                  /* COMMAND ARGS..., NULL-terminated (argv's end) */
	size_t ncmd;
};

/* Splits ARGV (ARGV[0] is "record") before the command: cgjit's own options; any other
 * argument starting with '-' is valgrind's, passed through in order; "--" or the first
 * argument not starting with '-' begins the command. VG_BUF (ARGC entries, the caller's)
 * holds the valgrind options. Valgrind's --tool other than callgrind and
 * --callgrind-out-file are refused: record owns them. Returns 0, or -1 with D set (a
 * usage error). */
int record_parse_args(int argc, char **argv, const char **vg_buf, struct record_args *a,
		      struct diag *d);

/* What to run: the runtime and what it will add to the command line. Strings are static,
 * or point into the command line and environment given to record_plan_make(). */
struct record_plan {
	const char *runtime;               /* "node", "java", "python", "moar", "php", "mono",
	                                      "none" */
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
	char agent_flag[4200];             /* java with cgjit's JVMTI agent: -agentpath:PATH */
};

/* The runtime a command's basename names ("node", "/usr/bin/nodejs" -> "node"; "python3.13"
 * -> "python"; "rakudo" -> "moar"), or NULL when it names none. */
const char *record_runtime_of(const char *command);

/* The runtime names --runtime takes, for messages: "node, java, ...". */
const char *record_runtime_names(void);

/* Runs `COMMAND --version` and puts its output (stdout and stderr) into OUT, NUL-terminated.
 * Returns 0, or -1 when it could not be run. */
typedef int (*record_probe_fn)(void *ctx, const char *command, char *out, size_t outsz);

/* Reads "Python 3.13.0" (a `python --version` line). Returns 0 with MAJOR and MINOR, or -1. */
int record_python_version(const char *text, int *major, int *minor);

/* Fills PLAN for A's command (A->cmd[0] is COMMAND): the runtime is A->runtime if set
 * (--runtime), else record_runtime_of(COMMAND). For CPython the version comes from the name
 * (python3.13), or from PROBE (with CTX) when the name has none (python3). For java,
 * JVMTI_AGENT (the path of libcgjit-jvmti.so, or NULL when there is none) makes it write a
 * jitdump, the default then (docs/jvmti.md); without it java writes a perf map.
 * Unless A->no_deterministic, the runtime's determinism settings are added too (flags after
 * the symbol file's, or environment variables), except each that the command sets itself:
 * an argument of A->cmd (anywhere: a program argument that looks like one counts too), a
 * variable of ENVP (NULL-terminated NAME=VALUE, the environment the program will get), or a
 * word of the runtime's options variable (JAVA_TOOL_OPTIONS...) in ENVP. The user's own
 * setting wins and nothing that contradicts it is added (docs/record.md 1.1).
 * PLAN's strings point into A's command line and ENVP where they name the user's settings.
 * Returns 0, -1 with D set when the runtime is unknown, cannot write what A->symbols asks,
 * or is a CPython older than 3.12; -2 when the probe failed. */
int record_plan_make(const struct record_args *a, const char *const *envp,
		     const char *jvmti_agent, record_probe_fn probe, void *ctx,
		     struct record_plan *plan, struct diag *d);

/* Valgrind's argv: valgrind, callgrind's options (--callgrind-out-file=OUT_DIR/callgrind.out.%p,
 * OUT_DIR being the run's own directory),
 * -q unless A->verbose (valgrind's banner and per-process messages are then left out; its
 * errors still show), A's valgrind options, COMMAND, PLAN's flags, the program's arguments.
 * Returns a malloc'd NULL-terminated array whose strings are malloc'd too;
 * record_argv_free() frees both. */
char **record_valgrind_argv(const struct record_args *a, const struct record_plan *plan,
			    const char *out_dir);
void record_argv_free(char **v);

/* A command that is a version manager's shim or a script, not the runtime's program. */
struct record_shim {
	char manager[32];         /* "pyenv", "asdf", "volta"...; "" for a plain script */
	char interp[128];         /* its #! line without "#!" ("/usr/bin/env bash"), or "" */
};

/* Checks, before the run, that A's command is the runtime's program and not a shim or a
 * script that would start it: under valgrind --trace-children=yes every process the shim
 * runs (bash, pyenv, ...) is profiled, and its counts are added to the program's. PATH is
 * where the command was found, REAL that path with the links resolved, HEAD (LEN bytes)
 * the file's first bytes. A script is a file starting with "#!"; a shim is a script in a
 * directory named "shims" (pyenv, rbenv, nodenv, jenv, asdf, mise: the manager named by
 * the directory above it), or volta's volta-shim program. Only a runtime told by the
 * command's name is checked: --runtime NAME says that the command is what it should be (a
 * wrapper that passes the flags on). Returns 0 when it is a program (or not checked), or -1
 * with S filled and D set to the message that names it and says what to give instead. */
int record_shim_check(const struct record_args *a, const char *path, const char *real,
		      const char *head, size_t len, struct record_shim *s, struct diag *d);

/* What is known of a run while it lasts, for the progress line. */
struct record_progress {
	unsigned seconds;         /* since the run began */
	unsigned running;         /* processes under callgrind (profiles begun, not written) */
	unsigned written;         /* profile files written (parts, with --dump-every-bb) */
	unsigned nfiles;          /* perf maps and jitdumps of the run's processes so far */
	uint64_t bytes;           /* ... their sizes together */
	struct {
		char name[64];
		uint64_t bytes;
	} files[3];               /* the first min(nfiles, 3) of them */
};

/* The progress line for P, without a newline: "cgjit: 12 s under callgrind: 1 process, 0
 * profiles written; jit-1234.dump 1.2 MB", cut to WIDTH - 1 columns (a line as wide as
 * the terminal would wrap, and "\r" would then clear only its last row). Writes OUT
 * (OUTSZ bytes, NUL-terminated). */
void record_progress_line(const struct record_progress *p, size_t width, char *out, size_t outsz);

/* The one line that sums up an augmented profile: "OUTPUT: Ir 47.02% JIT, 0.00% unknown
 * (211 of 246 pseudo-functions named)", with the ELF file of its jitdump code. Writes OUT
 * (OUTSZ bytes, NUL-terminated). */
void record_summary_line(const struct augment_stats *r, char *out, size_t outsz);

#endif
