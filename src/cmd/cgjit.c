/* cgjit.c - main(): the subcommand table, exit codes, the only exit() (besides the
 * allocator's on out-of-memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/xalloc.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "run a program under callgrind with its JIT's perf map flags, then augment" },
	{ "augment", cmd_augment, "name JIT code in a callgrind profile from perf maps and jitdumps" },
	{ "report", cmd_report, "totals and top functions of a profile (text, json, markdown, yaml)" },
	{ "diff", cmd_diff, "per-function change of cost between two profiles" },
	{ "check", cmd_check, "apply a budget file's limits to a profile (exit 3 when one is exceeded)" },
	{ "timeline", cmd_timeline, "when a JIT compiled what, from a jitdump's timestamps (text, json, svg)" },
	{ "flamegraph", cmd_flamegraph, "flame graph of a profile: interactive SVG (also --diff) or folded stacks" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cgjit <command> [options] ...\n\n"
		"Makes JIT-compiled code readable in valgrind's callgrind profiles: names, source\n"
		"files and lines from the runtime's perf maps (/tmp/perf-PID.map) and jitdumps\n"
		"(jit-PID.dump), then reports, diffs, budgets and flame graphs of the result.\n\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nexample:\n"
		"  cgjit record -- node app.js           # callgrind with the JIT's map, then augment\n"
		"  kcachegrind callgrind.out.jit.1234\n"
		"or by hand:\n"
		"  valgrind --tool=callgrind --dump-instr=yes node --perf-prof app.js\n"
		"  cgjit augment callgrind.out.1234      # perf-1234.map / jit-1234.dump found from its pid\n"
		"\n'cgjit <command> --help' describes a command; 'cgjit --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	/* Test hook (tests/e2e/files.sh): allocations above this many bytes fail as out of
	 * memory, so the out-of-memory exit can be tested under ASan, where ulimit -v cannot. */
	const char *lim = getenv("CGJIT_TEST_ALLOC_LIMIT");
	if (lim) {
		size_t v = 0;
		for (; *lim >= '0' && *lim <= '9' && v < ((size_t)1 << 50); lim++)
			v = v * 10 + (size_t)(*lim - '0');
		xalloc_limit(v);
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	/* `cgjit augment --version` too: people type the version question after the command */
	if (!strcmp(argv[1], "--version") || (argc == 3 && !strcmp(argv[2], "--version"))) {
		printf("cgjit %s\n", CGJIT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "cgjit: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
