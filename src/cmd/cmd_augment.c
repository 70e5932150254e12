/* cmd_augment.c - argv -> struct augment_opts, augment_run(), messages and exit status. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/augment.h"
#include "augment/augment_stats.h"
#include "augment/augment_stats_text.h"
#include "cmd/cmd.h"
#include "cmd/cmd_progress.h"
#include "cmd/cmd_util.h"
#include "core/diag.h"
#include "core/xalloc.h"
#include "jit/jitdump.h"
#include "jit/pathmap.h"

static const char usage_text[] =
	"usage: cgjit augment [options] PROFILE [PERF-MAP|JITDUMP|AUDITLOG...]\n"
	"\n"
	"Rewrites a callgrind profile so that JIT code has names, files, lines and consistent\n"
	"callers and callees. PROFILE may be plain, zstd- or gzip-compressed, or - for stdin.\n"
	"Symbol files are told apart by content; AUDITLOG is RaptorJIT's (raptorjit -a FILE).\n"
	"Without symbol files, perf-PID.map (profile's directory, then /tmp) and jit-PID.dump\n"
	"(profile's directory, current directory, $JITDUMPDIR, /tmp) are used, PID from the\n"
	"profile's 'pid:' line.\n"
	"\n"
	"  -o, --output FILE     where to write (default: callgrind.out.PID -> callgrind.out.jit.PID\n"
	"                        beside the input; - for stdout; zstd if FILE ends in .zst; never\n"
	"                        an input; devices and /dev/stdout are written in place)\n"
	"  -q, --quiet           no summary (and no progress line) on stderr\n"
	"      --stats FILE.yaml the summary as YAML\n"
	"      --keep-addresses  keep code blobs with the same name apart (address in the name)\n"
	"      --map-dir DIR     where to look for perf-PID.map (default: the profile's\n"
	"                        directory, then /tmp)\n"
	"      --max-line BYTES  longest accepted input line (default 64 MiB)\n"
	"      --no-verify       skip the check that output self costs equal the input's\n"
	"      --debug-bias N    subtract N from jitdump debug addresses (default: detect 0 or 0x40)\n"
	"      --elf DIR         write the ELF files with jitdump code there (default: beside the output;\n"
	"                        the current directory when the output is stdout or a device)\n"
	"      --no-elf          no ELF files; JIT functions' object is the dump's path\n"
	"      --root DIR        paths under DIR in JIT names and line tables become relative\n"
	"                        to it (bench.js for DIR/bench.js), so that runs from two\n"
	"                        checkouts name their JIT code alike\n"
	"      --path-map OLD=NEW  paths under OLD begin with NEW instead (repeatable; the\n"
	"                        longest OLD wins; --root DIR is --path-map DIR=)\n"
	"  -h, --help            this text\n";

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || v == 0 || v > (1ULL << 40))
		return -1;
	*out = (size_t)v;
	return 0;
}

enum { OPT_STATS = 256, OPT_KEEP, OPT_MAPDIR, OPT_MAXLINE, OPT_NOVERIFY, OPT_BIAS, OPT_ELF,
       OPT_NOELF, OPT_ROOT, OPT_PATHMAP };

/* --debug-bias and --max-line into O: 0, or 2 after saying what the option takes. */
static int number_option(int c, const char *arg, struct augment_opts *o)
{
	if (c == OPT_BIAS) {
		char *end;
		unsigned long long v = strtoull(arg, &end, 0);
		if (end == arg || *end || v > 0xffff) {
			fprintf(stderr, "cgjit: --debug-bias takes a number of bytes from 0 to 0xffff (e.g. 0x40), got '%s'\n", arg);
			return 2;
		}
		o->debug_bias = (int64_t)v;
		return 0;
	}
	if (parse_size(arg, &o->max_line) < 0) {
		fprintf(stderr, "cgjit: --max-line takes a number of bytes from 1 to 2^40, got '%s'\n", arg);
		return 2;
	}
	return 0;
}

/* argv into O, PATHS (from --root and --path-map) and *QUIET: -1 to run, or the exit status
 * after --help or a usage error. */
static int parse(int argc, char **argv, struct augment_opts *o, struct pathmap *paths, int *quiet)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", required_argument, NULL, OPT_STATS },
		{ "keep-addresses", no_argument, NULL, OPT_KEEP },
		{ "map-dir", required_argument, NULL, OPT_MAPDIR },
		{ "max-line", required_argument, NULL, OPT_MAXLINE },
		{ "no-verify", no_argument, NULL, OPT_NOVERIFY },
		{ "debug-bias", required_argument, NULL, OPT_BIAS },
		{ "elf", required_argument, NULL, OPT_ELF },
		{ "no-elf", no_argument, NULL, OPT_NOELF },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "path-map", required_argument, NULL, OPT_PATHMAP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diag d = { 0 };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'q': *quiet = 1; break;
		case OPT_STATS: o->stats_path = optarg; break;
		case OPT_KEEP: o->keep_addresses = 1; break;
		case OPT_MAPDIR: o->map_dir = optarg; break;
		case OPT_NOVERIFY: o->no_verify = 1; break;
		case OPT_ELF: o->elf_dir = optarg; break;
		case OPT_NOELF: o->no_elf = 1; break;
		case OPT_ROOT:
		case OPT_PATHMAP:
			/* in the order given: of two equal OLDs the later wins */
			if ((c == OPT_ROOT ? pathmap_add_root(paths, optarg, &d)
					   : pathmap_add_arg(paths, optarg, &d)) < 0)
				return cmd_util_usage_error(usage_text, "%s", d.msg);
			break;
		case OPT_BIAS:
		case OPT_MAXLINE:
			if (number_option(c, optarg, o))
				return 2;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cmd_util_option_error(usage_text, c, argv);
		}
	}
	if (optind >= argc)
		return cmd_util_usage_error(usage_text, "%s", "augment needs a PROFILE");
	if ((o->output && !*o->output) || (o->stats_path && !*o->stats_path))
		return cmd_util_empty_output(usage_text, o->output && !*o->output ? "-o" : "--stats");
	o->profile = argv[optind];
	if (!strcmp(o->profile, "-") && !o->output) {
		fputs("cgjit: reading the profile from stdin (-) needs -o FILE (or -o - for stdout)\n", stderr);
		return 2;
	}
	o->symfiles = (const char *const *)argv + optind + 1;
	o->nsymfiles = (size_t)(argc - optind - 1);
	return -1;
}

/* The command with PATHS (the caller's, empty) to fill from --root and --path-map. */
static int augment_main(int argc, char **argv, struct pathmap *paths)
{
	struct augment_opts o;
	augment_opts_init(&o);
	o.paths = paths;
	o.separate_io = getenv("CGJIT_TEST_SEPARATE_IO") != NULL;
	int quiet = 0;
	int rc = parse(argc, argv, &o, paths, &quiet);
	if (rc >= 0)
		return rc;
	struct cmd_progress prog;
	if (!quiet && cmd_progress_init(&prog, o.profile)) {
		o.progress = cmd_progress_update;
		o.progress_ctx = &prog;
	}
	struct augment_stats rep;
	struct diag d = { 0 };
	xalloc_map_large_blocks();   /* the per-function arrays: moved, not copied */
	rc = augment_run(&o, &rep, &d);
	if (o.progress)
		cmd_progress_end(&prog);
	if (rc < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return rc == -2 ? 2 : 1;
	}
	if (!quiet)
		augment_stats_text_write(&rep, stderr);
	return 0;
}

int cmd_augment(int argc, char **argv)
{
	struct pathmap *paths = pathmap_new();
	int rc = augment_main(argc, argv, paths);
	pathmap_free(paths);
	return rc;
}
