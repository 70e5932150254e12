/* cmd_timeline.c - argv -> `cgjit timeline`: read the jitdump (timeline.c), render the
 * document as text, JSON (doc_out.c) or SVG (timeline_svg.c) into memory, and write it
 * through core/output.c (stdout, or -o OUT renamed into place only when all went well).
 * Exit 0, 1 for an unreadable or malformed dump or a failed write, 2 usage, 3 when
 * --max-late is exceeded (as `cgjit check`'s budget). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/cmd_util.h"
#include "core/diag.h"
#include "core/io.h"
#include "report/doc_out.h"
#include "report/timeline.h"
#include "report/timeline_svg.h"
#include "report/timeline_text.h"

static const char usage[] =
	"usage: cgjit timeline [options] DUMP\n"
	"\n"
	"When the JIT loaded (compiled) and moved code, from the record timestamps of a jitdump\n"
	"(jit-PID.dump, plain, zstd or gzip): loads and bytes per time bucket, the loads after the\n"
	"warm-up, functions loaded more than once (recompiled), functions moved most. DUMP may\n"
	"also be a RaptorJIT auditlog (raptorjit -a audit.log): its compiled traces are the\n"
	"loads, and its aborted recordings are listed.\n"
	"\n"
	"  -o, --output OUT      write to OUT (default: stdout); nothing is written on error\n"
	"  -f, --format FORMAT   text (default), json (schema cgjit.timeline/1,\n"
	"                        docs/timeline.md section 6), svg (a chart)\n"
	"  -w, --warmup W        the end of start-up: SECONDS from the first record (e.g. 2.5),\n"
	"                        or PCT% of the dump's time span (default 10%)\n"
	"  -b, --buckets N       time buckets (default 20, at most 10000)\n"
	"  -n, --top N           entries per list: late loads, recompiled, moved (default 20;\n"
	"                        0: all)\n"
	"      --max-late N      a budget: exit 3 when more than N loads come after the warm-up\n"
	"                        (the output is written all the same)\n"
	"  -h, --help            this text\n";

enum format { FMT_TEXT, FMT_JSON, FMT_SVG };

static int parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	if (!*s || *s < '0' || *s > '9')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "2.5" (seconds) or "10%" (of the span). Returns 0, or -1. */
static int parse_warmup(const char *s, struct timeline_opts *o)
{
	char *end;
	if (!*s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	double v = strtod(s, &end);
	if (end == s)
		return -1;
	if (!strcmp(end, "%")) {
		if (!(v >= 0 && v <= 100))
			return -1;
		o->warmup_is_pct = 1;
		o->warmup_pct = v;
		return 0;
	}
	if (*end || !(v >= 0 && v < 1e9))   /* below 2^64 ns */
		return -1;
	o->warmup_is_pct = 0;
	o->warmup_ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, struct timeline_opts *o, enum format *fmt, const char **out,
		 unsigned long long *max_late)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "buckets", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 'n' },
		{ "max-late", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	unsigned long long v;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:f:w:b:n:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (!*optarg)
				return cmd_util_empty_output(usage, "-o");
			*out = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				*fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				*fmt = FMT_JSON;
			else if (!strcmp(optarg, "svg"))
				*fmt = FMT_SVG;
			else
				return cmd_util_usage_error(usage, "--format takes text, json or svg, got '%s'", optarg);
			break;
		case 'w':
			if (parse_warmup(optarg, o) < 0)
				return cmd_util_usage_error(usage, "--warmup takes SECONDS (e.g. 2.5) or a percentage (e.g. 10%%), "
						   "got '%s'", optarg);
			break;
		case 'b':
			if (parse_count(optarg, TIMELINE_MAX_BUCKETS, &v) < 0 || v == 0)
				return cmd_util_usage_error(usage, "--buckets takes a number from 1 to %d, got '%s'",
						   TIMELINE_MAX_BUCKETS, optarg);
			o->buckets = (unsigned)v;
			break;
		case 'n':
			if (parse_count(optarg, 1000000000, &v) < 0)
				return cmd_util_usage_error(usage, "--top takes a number of entries (0: all), got '%s'", optarg);
			o->top = v ? (size_t)v : SIZE_MAX;
			break;
		case 'L':
			if (parse_count(optarg, UINT64_MAX, max_late) < 0)
				return cmd_util_usage_error(usage, "--max-late takes a number of loads, got '%s'", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cmd_util_option_error(usage, opt, argv);
		}
	}
	return -1;
}

/* DOC rendered in FMT into a malloc'd buffer *BUF of *N bytes. Returns 0, or -1. */
static int render(const json_t *doc, enum format fmt, char **buf, size_t *n)
{
	FILE *f = open_memstream(buf, n);
	if (!f)
		return -1;
	int rc = 0;
	switch (fmt) {
	case FMT_TEXT: timeline_text_render(doc, f); break;
	case FMT_JSON: rc = doc_write_json(doc, f); break;
	case FMT_SVG: timeline_svg_render(doc, f); break;
	}
	if (ferror(f))
		rc = -1;
	if (fclose(f) == EOF)
		rc = -1;
	return rc;
}

/* A callgrind profile of the dump's pid in the dump's directory, as cgjit record and
 * valgrind leave them (callgrind.out.PID, also compressed, augmented or in parts): the run
 * was under valgrind. Returns a malloc'd path, or NULL. */
static char *profile_beside(const char *dump, uint64_t pid)
{
	static const char *const forms[][2] = { { "callgrind.out.", "" }, { "callgrind.out.", ".zst" },
		{ "callgrind.out.jit.", "" }, { "callgrind.out.", ".1" } };
	const char *slash = strrchr(dump, '/');
	int dir = slash ? (int)(slash - dump + 1) : 0;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s%" PRIu64 "%s", forms[i][0], pid, forms[i][1]);
		size_t n = (size_t)dir + strlen(name) + 1;
		char *path = malloc(n);
		if (!path)
			return NULL;
		snprintf(path, n, "%.*s%s", dir, dump, name);
		if (access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/* Opens OUT (refusing the dump itself), writes BUF, makes it final. Returns 0, or -1 with D
 * set (nothing left behind). */
static int write_out(const char *path, const char *dump, const char *buf, size_t n, struct diag *d)
{
	struct output *o = output_open(path, d);
	if (!o)
		return -1;
	if (output_check_clashes(&o, 1, &dump, 1, d) < 0 || output_write(o, buf, n, d) < 0) {
		output_abort(o);
		return -1;
	}
	return output_commit(o, d);
}

/* --max-late: 3 and a line on stderr when DOC has more late loads than MAX (ULLONG_MAX:
 * no budget), else 0. */
static int late_budget(const json_t *doc, const char *path, unsigned long long max)
{
	const json_t *late = json_object_get(doc, "late");
	uint64_t n = doc_get_u64(late, "loads");
	if (max == ULLONG_MAX || n <= max)
		return 0;
	fprintf(stderr, "cgjit: %s: %" PRIu64 " loads after the warm-up (--warmup %s), more than --max-late %llu\n",
		path, n, doc_get_str(late, "warmup"), max);
	return 3;
}

int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o;
	timeline_opts_init(&o);
	enum format fmt = FMT_TEXT;
	const char *out = "-";
	unsigned long long max_late = ULLONG_MAX;   /* none */
	int rc = parse(argc, argv, &o, &fmt, &out, &max_late);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return cmd_util_usage_error(usage, "%s", argc - optind ? "timeline takes one DUMP" : "timeline needs a DUMP");
	const char *path = argv[optind];
	struct diag d = { 0 };
	struct input *in = input_open(path, &d);
	json_t *doc = in ? timeline_build(in, &o, &d) : NULL;
	input_close(in);
	if (!doc) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return 1;
	}
	/* an auditlog names no pid (0) */
	char *beside = strcmp(path, "-") && doc_get_u64(doc, "pid") ? profile_beside(path, doc_get_u64(doc, "pid")) : NULL;
	if (beside)
		timeline_set_valgrind_profile(doc, beside);
	free(beside);
	if (doc_get_u64(doc, "truncated_bytes"))
		fprintf(stderr, "cgjit: warning: %s: the last %" PRIu64 " bytes are a record cut off (%s); "
			"the records before it are used\n", path, doc_get_u64(doc, "truncated_bytes"),
			strcmp(doc_get_str(doc, "source"), "auditlog") ? "dump copied while the JIT was writing?"
			: "the process died before the log was flushed?");
	char *buf = NULL;
	size_t n = 0;
	if (render(doc, fmt, &buf, &n) < 0) {
		fputs("cgjit: out of memory while rendering the timeline\n", stderr);
		rc = 1;
	} else if (write_out(out, path, buf, n, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		rc = 1;
	} else {
		rc = late_budget(doc, path, max_late);
	}
	free(buf);
	json_decref(doc);
	return rc;
}
