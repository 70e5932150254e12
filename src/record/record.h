/* record.h - `cgjit record`'s command line, without running anything: split into cgjit's
 * options, valgrind's and the program's; and valgrind's argv from it and the plan. The
 * other decisions are in record_plan.h (the runtime and its flags), record_det.h (the
 * determinism settings), record_shim.h (shims refused) and record_text.h (the lines
 * shown); running, waiting and collecting in record_run.h and record_collect.h; argv and
 * messages in cmd_record.c. */
#ifndef CGJIT_RECORD_H
#define CGJIT_RECORD_H

#include <stddef.h>

struct diag;
struct record_plan;

/* Which symbol file the user asked for (--symbols). */
enum record_symbols {
	RECORD_SYMBOLS_DEFAULT,   /* the runtime's best: a jitdump where it writes one */
	RECORD_SYMBOLS_MAP,
	RECORD_SYMBOLS_JITDUMP,
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

/* Valgrind's argv: valgrind, callgrind's options (--callgrind-out-file=OUT_DIR/callgrind.out.%p,
 * OUT_DIR being the run's own directory),
 * -q unless A->verbose (valgrind's banner and per-process messages are then left out; its
 * errors still show), A's valgrind options, COMMAND, PLAN's flags, the program's arguments.
 * Returns a malloc'd NULL-terminated array whose strings are malloc'd too;
 * record_argv_free() frees both. */
char **record_valgrind_argv(const struct record_args *a, const struct record_plan *plan,
			    const char *out_dir);
void record_argv_free(char **v);   /* NULL is a no-op */

/* The file name of PATH: what follows its last '/' (PATH itself without one). Points into
 * PATH. */
const char *record_base_name(const char *path);

#endif
