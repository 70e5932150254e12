/* cmd_flamegraph.c - argv -> `cgjit flamegraph`: load the profile (and --diff's base),
 * build the stacks (flamegraph.c), write SVG (flamegraph_svg.c) or folded stacks through
 * core/output.c: a file appears only complete. Exit 0, 1 for an unreadable profile or a
 * failed write, 2 usage; the option handling follows cmd_report.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_util.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/pathmap.h"
#include "report/doc_out.h"
#include "report/flamegraph.h"
#include "report/flamegraph_svg.h"
#include "report/prof_scope.h"
#include "report/profile.h"

static const char usage[] =
	"usage: cgjit flamegraph [options] PROFILE\n"
	"\n"
	"A flame graph of a callgrind profile (plain, zstd or gzip, augmented or not) for one event:\n"
	"an interactive SVG (hover for cost, click to zoom) or folded stacks for flamegraph.pl\n"
	"and inferno. Stacks are built from the call arcs (docs/flamegraph.md).\n"
	"\n"
	"  -o, --output FILE     write there (default: stdout; FILE.zst is compressed)\n"
	"  -e, --event NAME      the event drawn (default: the first)\n"
	"  -f, --format FORMAT   svg (default) or folded\n"
	"      --focus FUNCTION  only what runs under FUNCTION, drawn from it as the root: its\n"
	"                        exact name, or glob:PATTERN (several: one root each);\n"
	"                        --focus-object, --focus-file narrow it (docs/flamegraph.md 1.7)\n"
	"      --focus-object PATTERN, --focus-file PATTERN\n"
	"      --jit-only        draw JIT frames only: other code is collapsed out of the\n"
	"                        stacks, its cost in [not JIT] frames (docs/flamegraph.md 1.8)\n"
	"  -d, --diff BASE       colour functions by the change of their self cost from the\n"
	"                        profile BASE: red more, blue less (svg only)\n"
	"      --min-width PCT   frames narrower than PCT percent of the total go to one\n"
	"                        [elided] frame per parent (default 0.01; 0: down to 1 unit)\n"
	"      --max-depth N     function frames below the root (default 256); what they\n"
	"                        call is one [elided] frame above them\n"
	"      --max-frames N    at most N frames (default 200000): past it the minimum\n"
	"                        width is raised until they fit, with a note on stderr\n"
	"      --part N          only part N (from 1) of PROFILE and BASE; default: all summed\n"
	"      --no-fold         keep callgrind's recursion copies name'N apart from name\n"
	"      --path-map OLD=NEW  paths under OLD in names and files begin with NEW, in PROFILE\n"
	"                        and BASE, before --diff matches them (repeatable; NEW may be empty)\n"
	"  -h, --help            this text\n";

struct fg_args {
	const char *output, *event, *base;
	const char *profile;     /* PROFILE, once the options are read */
	int folded;
	struct profile_opts popts;
	struct flamegraph_opts fopts;
	struct pathmap *paths;   /* --path-map, made on first use */
	struct prof_select focus;   /* --focus, --focus-object, --focus-file */
	struct prof_scope_opts scope;
};

enum { OPT_PART = 256, OPT_NOFOLD, OPT_MINW, OPT_DEPTH, OPT_FRAMES, OPT_PATHMAP };
enum { OPT_FOCUS = 320, OPT_FOCUS_OBJECT, OPT_FOCUS_FILE, OPT_JIT_ONLY };
static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "event", required_argument, NULL, 'e' },
	{ "format", required_argument, NULL, 'f' },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "focus-object", required_argument, NULL, OPT_FOCUS_OBJECT },
	{ "focus-file", required_argument, NULL, OPT_FOCUS_FILE },
	{ "jit-only", no_argument, NULL, OPT_JIT_ONLY },
	{ "diff", required_argument, NULL, 'd' },
	{ "min-width", required_argument, NULL, OPT_MINW },
	{ "max-depth", required_argument, NULL, OPT_DEPTH },
	{ "max-frames", required_argument, NULL, OPT_FRAMES },
	{ "part", required_argument, NULL, OPT_PART },
	{ "no-fold", no_argument, NULL, OPT_NOFOLD },
	{ "path-map", required_argument, NULL, OPT_PATHMAP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The numbers of --min-width, --max-depth, --max-frames and --part (OPT) into A. Returns
 * -1 to go on, or 2 after the usage error. */
static int parse_number(struct fg_args *a, int opt)
{
	unsigned long long v;
	switch (opt) {
	case OPT_MINW: {
		char *end;
		double pct = strtod(optarg, &end);
		if (end == optarg || *end || !(pct >= 0 && pct <= 100))
			return cmd_util_usage_error(usage, "--min-width takes a percentage from 0 to 100, got '%s'", optarg);
		a->fopts.min_width = pct / 100.0;
		break;
	}
	case OPT_DEPTH:
		if (cmd_util_parse_count(optarg, 100000, &v) < 0 || v == 0)
			return cmd_util_usage_error(usage, "--max-depth takes a number of frames from 1, got '%s'", optarg);
		a->fopts.max_depth = (unsigned)v;
		break;
	case OPT_FRAMES:
		if (cmd_util_parse_count(optarg, 1000000000, &v) < 0 || v < 2)
			return cmd_util_usage_error(usage, "--max-frames takes a number of frames from 2, got '%s'", optarg);
		a->fopts.max_frames = (size_t)v;
		break;
	default:   /* OPT_PART */
		if (cmd_util_parse_count(optarg, 1000000, &v) < 0 || v == 0)
			return cmd_util_usage_error(usage, "--part takes a part number from 1, got '%s'", optarg);
		a->popts.part = (unsigned)v;
		break;
	}
	return -1;
}

/* The option getopt_long() returned as OPT (its value in optarg) into A. Returns -1 to go
 * on, or an exit status. */
static int parse_option(struct fg_args *a, int opt, char **argv)
{
	switch (opt) {
	case 'o':
		if (!*optarg)
			return cmd_util_empty_output(usage, "-o");
		a->output = optarg;
		break;
	case 'e': a->event = optarg; break;
	case 'd': a->base = optarg; break;
	case 'f':
		if (strcmp(optarg, "svg") && strcmp(optarg, "folded"))
			return cmd_util_usage_error(usage, "--format takes svg or folded, got '%s'", optarg);
		a->folded = !strcmp(optarg, "folded");
		break;
	case OPT_MINW:
	case OPT_DEPTH:
	case OPT_FRAMES:
	case OPT_PART:
		return parse_number(a, opt);
	case OPT_NOFOLD: a->popts.fold_recursion = 0; break;
	case OPT_PATHMAP:
		return cmd_util_path_map(&a->paths, &a->popts, usage, optarg);
	case OPT_FOCUS:
	case OPT_FOCUS_OBJECT:
	case OPT_FOCUS_FILE:
	case OPT_JIT_ONLY:
		return cmd_util_scope_option(usage, opt - OPT_FOCUS, optarg, &a->focus, &a->scope);
	case 'h':
		fputs(usage, stdout);
		return 0;
	default:
		return cmd_util_option_error(usage, opt, argv);
	}
	return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, struct fg_args *a)
{
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:e:f:d:h", longopts, NULL)) != -1)
		if ((rc = parse_option(a, opt, argv)) >= 0)
			return rc;
	if (cmd_util_scope_done(usage, &a->focus, &a->scope) >= 0)
		return 2;
	if (argc - optind != 1)
		return cmd_util_usage_error(usage, "%s", argc - optind ? "flamegraph takes one PROFILE" : "flamegraph needs a PROFILE");
	if (a->folded && a->base)
		return cmd_util_usage_error(usage, "%s", "--diff colours the SVG; folded stacks have no colours (use --format svg)");
	a->profile = argv[optind];
	return -1;
}

/* The frame cap changes what is drawn: say so, with the minimum width it took. */
static void note_cap(const struct flamegraph *g, double min_width)
{
	struct flamegraph_limits l;
	flamegraph_limits(g, &l);
	if (!l.capped)
		return;
	const char *ev = flamegraph_profile(g)->events[flamegraph_event(g)];
	fprintf(stderr, "cgjit: note: more than %zu frames are at least %.0f %s wide (--min-width %g); "
		"frames narrower than %.0f %s (%.2g%%) are drawn as " FLAMEGRAPH_ELIDED_NAME
		" (--max-frames raises the cap)\n", l.max_frames, l.asked_units, ev, 100.0 * min_width,
		l.min_units, ev, 100.0 * l.min_units / (double)flamegraph_total(g));
}

/* The line of the SVG that says what the graph is cut to, into BUF, or NULL. */
static const char *scope_line(char *buf, size_t n, const struct fg_args *a, const struct profile *p,
			      const struct flamegraph *g)
{
	char b1[32], b2[32];
	const struct prof_select *f = a->scope.focus;
	if (!f && !a->scope.jit_only)
		return NULL;
	uint64_t t = flamegraph_total(g), whole = p->totals[a->fopts.event];
	doc_commas(b1, t);
	doc_commas(b2, whole);
	snprintf(buf, n, "%s%s%s%s%s: %s of the profile's %s %s (%.2f%%)", f ? "under the focus " : "",
		 f ? (f->name ? "" : "glob ") : "", f ? (f->name ? f->name : f->glob) : "",
		 f && a->scope.jit_only ? ", " : "", a->scope.jit_only ? "JIT frames only (--jit-only)" : "",
		 b1, b2, p->events[a->fopts.event], whole ? 100.0 * (double)t / (double)whole : 0.0);
	return buf;
}

/* What write_graph() draws. */
struct fg_profiles {
	const struct profile *p;      /* the graph's */
	const struct flamegraph_base *base;   /* --diff's, or NULL */
	const struct profile *now;    /* whose self costs --diff compares with BASE's, or NULL */
};

/* Writes the graph of DR's profiles to A->output; nothing is left there on an error. */
static int write_graph(const struct fg_args *a, const struct fg_profiles *dr)
{
	const struct profile *p = dr->p;
	const char *inputs[2] = { a->profile, a->base };
	struct diag d = { 0 };
	struct output *out = output_open(a->output, &d);
	if (!out || output_check_clashes(&out, 1, inputs, a->base ? 2 : 1, &d) < 0) {
		output_abort(out);
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return 1;
	}
	struct flamegraph *g = flamegraph_new(p, &a->fopts);
	note_cap(g, a->fopts.min_width);
	int rc;
	if (a->folded) {
		rc = flamegraph_write_folded(g, out, &d);
	} else {
		char line[640];
		struct flamegraph_svg_opts so = { NULL, dr->base, dr->now, a->fopts.event,
						  scope_line(line, sizeof(line), a, p, g) };
		rc = flamegraph_svg_write(g, &so, out, &d);
	}
	flamegraph_free(g);
	if (rc < 0) {
		output_abort(out);
	} else {
		rc = output_commit(out, &d);
	}
	if (rc < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return 1;
	}
	return 0;
}

static int flamegraph_main(int argc, char **argv, struct pathmap **left)
{
	struct fg_args a = { .output = "-" };
	a.popts.fold_recursion = 1;
	a.fopts.min_width = 0.0001;   /* flamegraph.pl omits frames under 0.1 px of 1200 */
	a.fopts.max_depth = 256;
	int rc = parse(argc, argv, &a);
	*left = a.paths;
	if (rc >= 0)
		return rc;
	struct profile p, base;
	unsigned ev = 0, base_ev = 0;
	int have_base = 0;
	struct flamegraph_base fb;
	memset(&fb, 0, sizeof(fb));
	/* --diff's base is read first and without its arcs (they serve only a focus), and
	 * reduced to the self costs the drawing compares before the graph is built, so that
	 * the graph is never made beside two whole profiles (docs/design.md, "Memory"); both
	 * files are opened first, in the order given, so that one that cannot be opened is
	 * named before anything is read */
	struct diag od = { 0 };
	struct input *in = input_open(a.profile, &od), *base_in = NULL;
	if (in && a.base)
		base_in = input_open(a.base, &od);
	if (!in || (a.base && !base_in)) {
		fprintf(stderr, "cgjit: %s\n", od.msg);
		input_close(in);
		return 1;
	}
	struct profile_opts base_opts = a.popts;
	base_opts.drop_arcs = !a.scope.focus;
	if (base_in) {
		rc = cmd_util_load_input(&base, base_in, &base_opts);
		input_close(base_in);
		if (rc < 0) {
			input_close(in);
			return 1;
		}
		have_base = 1;
	}
	rc = cmd_util_load_input(&p, in, &a.popts);
	input_close(in);
	if (rc < 0) {
		if (have_base)
			profile_free(&base);
		return 1;
	}
	rc = 1;
	unsigned char *focus = NULL;
	struct profile now;
	memset(&now, 0, sizeof(now));
	if (cmd_util_pick_event(&p, a.event, &ev) < 0 ||
	    (a.base && cmd_util_pick_event(&base, p.events[ev], &base_ev) < 0))
		goto done;
	a.fopts.event = ev;
	a.fopts.jit_only = a.scope.jit_only;
	if (a.scope.focus) {
		/* the focus names something in both, as for cgjit diff; --diff compares the self
		 * costs under it */
		struct prof_scope_opts o = { a.scope.focus, 0 };
		if ((rc = cmd_util_check_focus(&p, &o)) >= 0 ||
		    (a.base && (rc = cmd_util_apply_scope(&base, &o, base_ev)) >= 0))
			goto done;
		rc = 1;
		focus = calloc(p.nfns + 1, 1);
		if (!focus) {
			fputs("cgjit: out of memory\n", stderr);
			goto done;
		}
		for (size_t i = 0; i < p.nfns; i++)
			focus[i] = (unsigned char)prof_select_match(a.scope.focus, &p, i);
		a.fopts.focus = focus;
		struct diag d = { 0 };
		if (a.base && prof_scope_make(&p, &o, ev, &now, &d) < 0) {
			fprintf(stderr, "cgjit: %s\n", d.msg);
			goto done;
		}
	}
	const struct profile *neg = p.negative ? &p : have_base && base.negative ? &base : NULL;
	if (neg) {
		/* nothing is opened yet: no output is left behind */
		fprintf(stderr, "cgjit: %s: the file has negative counts (cg_diff's output, the differences "
			"between two runs): a flame graph draws costs as widths and cannot draw them; "
			"`cgjit report` lists them, and `cgjit flamegraph --diff BASE` colours two runs' "
			"difference\n", neg->path);
		goto done;
	}
	const struct profile *compared = a.scope.focus && a.base ? &now : a.scope.jit_only ? &p : NULL;
	if (have_base) {
		flamegraph_base_make(&fb, &base, base_ev, compared ? compared : &p);
		profile_free(&base);
		have_base = 0;
		xalloc_give_back();
	}
	struct fg_profiles drawn = { &p, a.base ? &fb : NULL, compared };
	rc = write_graph(&a, &drawn);
done:
	free(focus);
	flamegraph_base_free(&fb);
	profile_free(&now);
	profile_free(&p);
	if (have_base)
		profile_free(&base);
	return rc;
}

int cmd_flamegraph(int argc, char **argv)
{
	struct pathmap *left = NULL;
	int rc = flamegraph_main(argc, argv, &left);
	pathmap_free(left);   /* --path-map's, on every exit */
	return rc;
}
