/* cmd_report.c - argv -> `cgjit report` and `cgjit diff`: load the profiles
 * (profile_read.c), build the document (prof_report.c, prof_diff.c), write it in the
 * chosen format to stdout. Exit 0, 1 for an unreadable profile or a failed write, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_util.h"
#include "core/diag.h"
#include "jit/pathmap.h"
#include "report/budget.h"
#include "report/doc_out.h"
#include "report/prof_check.h"
#include "report/prof_diff.h"
#include "report/prof_report.h"
#include "report/prof_scope.h"
#include "report/profile.h"

static const char report_usage[] =
	"usage: cgjit report [options] PROFILE\n"
	"\n"
	"Totals per event and the top functions by self and by inclusive cost of a callgrind\n"
	"(plain, zstd or gzip, augmented or not) or cachegrind profile.\n"
	"\n"
	"  -n, --top N           functions per list (default 20)\n"
	"  -e, --event NAME      the event the lists are sorted by (default: the first)\n"
	"  -f, --format FORMAT   text (default), json, markdown, yaml (JSON and YAML: the\n"
	"                        schema cgjit.report/2, docs/reports.md section 3)\n"
	"      --focus FUNCTION  costs under FUNCTION only, its inclusive cost 100%: its exact\n"
	"                        name, or glob:PATTERN (fnmatch); several matches are added up;\n"
	"                        estimated from call arcs (docs/reports.md section 2.1)\n"
	"      --focus-object PATTERN, --focus-file PATTERN\n"
	"                        --focus only functions of such objects, of such files\n"
	"      --jit-only        list JIT functions only (the totals stay all code's)\n"
	"      --part N          only part N (from 1); default: all parts summed\n"
	"      --no-fold         keep callgrind's recursion copies name'N apart from name\n"
	"                        (by default they count as name, as in diff, check and\n"
	"                        flamegraph)\n"
	"      --path-map OLD=NEW  paths under OLD in names and files begin with NEW (repeatable;\n"
	"                        NEW may be empty: relative to OLD)\n"
	"  -h, --help            this text\n";

static const char diff_usage[] =
	"usage: cgjit diff [options] BASE NEW\n"
	"\n"
	"The change of self and inclusive cost per function from BASE to NEW, largest first.\n"
	"Functions are matched by object file name, file and name; callgrind's recursion\n"
	"copies name'N count as name.\n"
	"\n"
	"  -n, --top N           functions listed (default 20; 0: all)\n"
	"  -e, --event NAME      the event compared (default: the first of BASE; both must count it)\n"
	"  -f, --format FORMAT   text (default), json, markdown, yaml (JSON and YAML: the\n"
	"                        schema cgjit.diff/2, docs/reports.md section 3)\n"
	"      --focus FUNCTION  compare the costs under FUNCTION (in both profiles): its exact\n"
	"                        name, or glob:PATTERN; --focus-object, --focus-file narrow it\n"
	"                        (docs/reports.md section 2.1)\n"
	"      --focus-object PATTERN, --focus-file PATTERN\n"
	"      --jit-only        compare and count JIT functions only\n"
	"  -t, --threshold PCT   hide functions whose self and inclusive cost changed by less than\n"
	"                        PCT percent of BASE's total (default 0)\n"
	"      --part N          only part N of both files\n"
	"      --no-fold         keep name'N apart\n"
	"      --path-map OLD=NEW  paths under OLD in both files' names and files begin with NEW\n"
	"                        before matching (repeatable; NEW may be empty: relative to OLD)\n"
	"  -h, --help            this text\n";

static const char check_usage[] =
	"usage: cgjit check [options] --budget FILE PROFILE\n"
	"\n"
	"Applies the limits of a budget file (YAML: limits on totals and functions, absolute or\n"
	"relative to a baseline profile) to PROFILE. Exit 0 when every limit holds, 3 when one is\n"
	"exceeded or a required function is missing, 2 for a bad budget file, 1 for an\n"
	"unreadable profile.\n"
	"\n"
	"  -b, --budget FILE     the budget file (docs/reports.md, section 4)\n"
	"  -B, --baseline FILE   the profile soft limits are relative to (e.g. the base branch's)\n"
	"  -f, --format FORMAT   text (default), json, markdown, yaml (JSON and YAML: the\n"
	"                        schema cgjit.check/2, docs/reports.md section 3)\n"
	"      --focus FUNCTION  measure the limits under FUNCTION (those without a focus of\n"
	"                        their own): its exact name, or glob:PATTERN; --focus-object,\n"
	"                        --focus-file narrow it (docs/reports.md sections 2.1 and 4)\n"
	"      --focus-object PATTERN, --focus-file PATTERN\n"
	"      --jit-only        function limits match JIT functions only\n"
	"      --part N          only part N of the profiles\n"
	"      --no-fold         keep callgrind's recursion copies name'N apart from name\n"
	"      --path-map OLD=NEW  paths under OLD in names and files begin with NEW, in the\n"
	"                        profile and the baseline (repeatable; NEW may be empty)\n"
	"  -h, --help            this text\n";

enum command { CMD_REPORT, CMD_DIFF, CMD_CHECK, };

struct common {
	size_t top;
	const char *event;
	enum doc_format format;
	struct profile_opts popts;
	double threshold;
	const char *budget, *baseline;
	struct pathmap *paths;   /* --path-map, made on first use; freed by the caller */
	struct prof_select focus;   /* --focus, --focus-object, --focus-file */
	struct prof_scope_opts scope;
};

enum { OPT_PART = 256, OPT_FOLD, OPT_NOFOLD, OPT_PATHMAP };
enum { OPT_FOCUS = 320, OPT_FOCUS_OBJECT, OPT_FOCUS_FILE, OPT_JIT_ONLY };

/* One table for the three commands, indexed by enum command; option_takes() refuses what
 * a command does not take. */
static const char *const shortopts[] = { ":n:e:f:h", ":n:e:f:t:h", ":b:B:f:h" };
static const struct option longopts[] = {
	{ "top", required_argument, NULL, 'n' },
	{ "event", required_argument, NULL, 'e' },
	{ "format", required_argument, NULL, 'f' },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "focus-object", required_argument, NULL, OPT_FOCUS_OBJECT },
	{ "focus-file", required_argument, NULL, OPT_FOCUS_FILE },
	{ "jit-only", no_argument, NULL, OPT_JIT_ONLY },
	{ "threshold", required_argument, NULL, 't' },
	{ "part", required_argument, NULL, OPT_PART },
	{ "fold-recursion", no_argument, NULL, OPT_FOLD },
	{ "no-fold", no_argument, NULL, OPT_NOFOLD },
	{ "budget", required_argument, NULL, 'b' },
	{ "baseline", required_argument, NULL, 'B' },
	{ "path-map", required_argument, NULL, OPT_PATHMAP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A parse of one command's options: what the handler of one option needs. */
struct parser {
	const char *usage;
	enum command cmd;
	char **argv;
	struct common *c;   /* the options so far */
};

static int option_takes(const struct parser *ps, int opt)
{
	if (opt == ':' || opt == '?')
		return 1;   /* cmd_util_option_error()'s */
	return opt < 256 ? strchr(shortopts[ps->cmd], opt) != NULL : opt != OPT_FOLD || ps->cmd == CMD_REPORT;
}

/* The option getopt_long() returned as OPT (its value in optarg). Returns -1 to go on, or
 * an exit status. */
static int parse_option(const struct parser *ps, int opt)
{
	struct common *c = ps->c;
	const char *usage = ps->usage;
	int is_diff = ps->cmd == CMD_DIFF;
	unsigned long long v;
	if (!option_takes(ps, opt))
		return cmd_util_usage_error(usage, "unknown option '%s'", ps->argv[optind - 1]);
	switch (opt) {
	case 'b': c->budget = optarg; break;
	case 'B': c->baseline = optarg; break;
	case 'n':
		if (cmd_util_parse_count(optarg, 1000000000, &v) < 0 || (!is_diff && v == 0))
			return cmd_util_usage_error(usage, "--top takes a number of functions, got '%s'", optarg);
		c->top = v ? (size_t)v : (size_t)-1;
		break;
	case 'e': c->event = optarg; break;
	case 'f':
		if (doc_format_parse(optarg, &c->format) < 0)
			return cmd_util_usage_error(usage, "--format takes text, json, markdown or yaml, got '%s'", optarg);
		break;
	case 't': {
		char *end;
		c->threshold = strtod(optarg, &end);
		if (!is_diff || end == optarg || *end || !(c->threshold >= 0 && c->threshold <= 100))
			return cmd_util_usage_error(usage, "--threshold takes a percentage from 0 to 100, got '%s'", optarg);
		break;
	}
	case OPT_PART:
		if (cmd_util_parse_count(optarg, 1000000, &v) < 0 || v == 0)
			return cmd_util_usage_error(usage, "--part takes a part number from 1, got '%s'", optarg);
		c->popts.part = (unsigned)v;
		break;
	case OPT_FOLD:   /* the default since folding became every command's: still accepted */
		c->popts.fold_recursion = 1;
		break;
	case OPT_NOFOLD:
		c->popts.fold_recursion = 0;
		break;
	case OPT_PATHMAP:
		return cmd_util_path_map(&c->paths, &c->popts, usage, optarg);
	case OPT_FOCUS:
	case OPT_FOCUS_OBJECT:
	case OPT_FOCUS_FILE:
	case OPT_JIT_ONLY:
		return cmd_util_scope_option(usage, opt - OPT_FOCUS, optarg, &c->focus, &c->scope) >= 0 ? 2 : -1;
	case 'h':
		fputs(usage, stdout);
		return 0;
	default:
		return cmd_util_option_error(usage, opt, ps->argv);
	}
	return -1;
}

/* The options of report, diff and check into C. Returns -1 to go on, or an exit status. */
static int parse_common(int argc, char **argv, const char *usage, enum command cmd, struct common *c)
{
	const struct parser ps = { usage, cmd, argv, c };
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shortopts[cmd], longopts, NULL)) != -1)
		if ((rc = parse_option(&ps, opt)) >= 0)
			return rc;
	return cmd_util_scope_done(usage, &c->focus, &c->scope);
}

static int write_doc(const json_t *doc, enum doc_format format,
		     void (*render)(const json_t *, FILE *, int))
{
	int rc = 0;
	/* text and Markdown show the warnings in the document; JSON and YAML are read by
	 * programs, so a person watching the job sees them on stderr */
	if (format == DOC_JSON || format == DOC_YAML) {
		size_t i;
		json_t *w;
		json_array_foreach(json_object_get(doc, "warnings"), i, w)
			fprintf(stderr, "cgjit: warning: %s\n", json_string_value(w));
	}
	switch (format) {
	case DOC_JSON: rc = doc_write_json(doc, stdout); break;
	case DOC_YAML: rc = doc_write_yaml(doc, stdout); break;
	case DOC_TEXT: render(doc, stdout, 0); break;
	case DOC_MARKDOWN:
		/* a blank line after the last table, so that documents appended one after the
		 * other (>> "$GITHUB_STEP_SUMMARY") stay apart */
		render(doc, stdout, 1);
		fputc('\n', stdout);
		break;
	}
	if (fflush(stdout) == EOF || ferror(stdout) || rc < 0) {
		fputs("cgjit: cannot write the report to stdout\n", stderr);
		return 1;
	}
	return 0;
}

static int report_main(int argc, char **argv, struct pathmap **left)
{
	struct common c = { .top = 20 };
	c.popts.fold_recursion = 1;
	int rc = parse_common(argc, argv, report_usage, CMD_REPORT, &c);
	*left = c.paths;
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return cmd_util_usage_error(report_usage, "%s", argc - optind ? "report takes one PROFILE" : "report needs a PROFILE");
	c.popts.drop_arcs = !c.scope.focus;   /* only a focus reads the arcs */
	struct profile p;
	unsigned ev;
	if (cmd_util_load(&p, argv[optind], &c.popts) < 0)
		return 1;
	if (cmd_util_pick_event(&p, c.event, &ev) < 0) {
		profile_free(&p);
		return 1;
	}
	if ((rc = cmd_util_apply_scope(&p, &c.scope, ev)) >= 0) {
		profile_free(&p);
		return rc;
	}
	json_t *doc = prof_report_build(&p, ev, c.top);
	rc = write_doc(doc, c.format, prof_report_render);
	json_decref(doc);
	profile_free(&p);
	return rc;
}

static int diff_main(int argc, char **argv, struct pathmap **left)
{
	struct common c = { .top = 20 };
	c.popts.fold_recursion = 1;
	int rc = parse_common(argc, argv, diff_usage, CMD_DIFF, &c);
	*left = c.paths;
	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return cmd_util_usage_error(diff_usage, "%s", "diff takes two profiles: BASE NEW");
	c.popts.drop_arcs = !c.scope.focus;
	struct profile a, b;
	if (cmd_util_load(&a, argv[optind], &c.popts) < 0)
		return 1;
	if (cmd_util_load(&b, argv[optind + 1], &c.popts) < 0) {
		profile_free(&a);
		return 1;
	}
	struct diag d = { 0 };
	/* scoped with the event compared; an event either lacks is prof_diff_build()'s error */
	const char *evname = c.event ? c.event : a.events[0];
	int ea = profile_event(&a, evname), eb = profile_event(&b, evname);
	if (ea >= 0 && eb >= 0 && ((rc = cmd_util_apply_scope(&a, &c.scope, (unsigned)ea)) >= 0 ||
				   (rc = cmd_util_apply_scope(&b, &c.scope, (unsigned)eb)) >= 0)) {
		profile_free(&a);
		profile_free(&b);
		return rc;
	}
	json_t *doc = prof_diff_build(&a, &b, c.event, c.top, c.threshold, &d);
	if (!doc) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		rc = 1;
	} else {
		rc = write_doc(doc, c.format, prof_diff_render);
		json_decref(doc);
	}
	profile_free(&a);
	profile_free(&b);
	return rc;
}

static int check_main(int argc, char **argv, struct pathmap **left)
{
	struct common c = { 0 };
	c.popts.fold_recursion = 1;
	int rc = parse_common(argc, argv, check_usage, CMD_CHECK, &c);
	*left = c.paths;
	if (rc >= 0)
		return rc;
	if (!c.budget)
		return cmd_util_usage_error(check_usage, "%s", "check needs a budget file: --budget FILE");
	if (argc - optind != 1)
		return cmd_util_usage_error(check_usage, "%s", argc - optind ? "check takes one PROFILE" : "check needs a PROFILE");
	struct diag d = { 0 };
	struct budget b;
	/* the budget first: a bad budget file is reported before a long profile is read */
	if (budget_load(&b, c.budget, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		budget_free(&b);
		return 2;
	}
	c.popts.drop_arcs = !c.scope.focus && !budget_has_focus(&b);
	struct profile p, base;
	if (cmd_util_load(&p, argv[optind], &c.popts) < 0) {
		budget_free(&b);
		return 1;
	}
	if (c.baseline && cmd_util_load(&base, c.baseline, &c.popts) < 0) {
		profile_free(&p);
		budget_free(&b);
		return 1;
	}
	int bad_budget;
	/* a --focus that names nothing is a usage error, as in report; a focus of the budget
	 * file that names nothing makes its limits missing (exit 3) */
	if (c.scope.focus && (rc = cmd_util_check_focus(&p, &c.scope)) >= 0) {
		if (c.baseline)
			profile_free(&base);
		profile_free(&p);
		budget_free(&b);
		return rc;
	}
	json_t *doc = prof_check_build(&b, &p, c.baseline ? &base : NULL, &c.scope, &bad_budget, &d);
	if (!doc) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		rc = bad_budget ? 2 : 1;
	} else {
		rc = write_doc(doc, c.format, prof_check_render);
		if (!rc && !prof_check_passed(doc))
			rc = 3;
		json_decref(doc);
	}
	if (c.baseline)
		profile_free(&base);
	profile_free(&p);
	budget_free(&b);
	return rc;
}

/* The commands, with what they leave in *LEFT (--path-map's map) freed on every exit. */
static int run_freeing(int (*cmd)(int, char **, struct pathmap **), int argc, char **argv)
{
	struct pathmap *left = NULL;
	int rc = cmd(argc, argv, &left);
	pathmap_free(left);
	return rc;
}

int cmd_report(int argc, char **argv) { return run_freeing(report_main, argc, argv); }
int cmd_diff(int argc, char **argv) { return run_freeing(diff_main, argc, argv); }
int cmd_check(int argc, char **argv) { return run_freeing(check_main, argc, argv); }
