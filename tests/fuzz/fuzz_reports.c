/* fuzz_reports.c - libFuzzer target for the report commands past the loader: report,
 * diff (prof_match() included), check and flamegraph on fuzzed profiles and budgets.
 * The input is split at lines "%%": the first piece is the profile (NEW), a second one the
 * baseline (BASE; without it, or when it does not load, NEW is its own baseline), a
 * third one the budget file (without it, a budget with a glob on every function, so that
 * per-function soft limits go through the matching). Options come from the input's size,
 * so that every input is one fixed case. Every document is rendered in the four formats
 * (to /dev/null) and the folded stacks written, so that ASan sees what they read.
 * Checked beyond "no crash": an error exactly when a build fails; matched functions have
 * the same name and no BASE function is matched twice; a profile diffed with itself has
 * no change; the check's counts add up; the flame graph's frames nest and their self costs
 * add up to the total. A focus (the first function, or a glob on every function) and JIT
 * code only go through the report, the check and the flame graph: the focus's total is the
 * flame graph's, and its function is at 100%. Only the public flame graph API
 * (flamegraph.h) is used. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/budget.h"
#include "core/diag.h"
#include "report/doc_out.h"
#include "report/flamegraph.h"
#include "fuzz.h"
#include "core/io.h"
#include "report/prof_check.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/prof_report.h"
#include "report/prof_scope.h"
#include "report/profile.h"

enum { FUZZ_MAX_LINE = 4096, MAX_DEPTH = 16 };

static const char default_budget[] =
	"total: {hard: 1000, soft: 5%}\n"
	"functions:\n"
	"  - {glob: '*', hard: 100, soft: -50, required: false}\n"
	"  - {glob: '*', sum: true, cost: inclusive, soft: 10}\n";

static FILE *null_file(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	FUZZ_CHECK(f != NULL);
	return f;
}

/* The next line "%%" at or after P: where it starts, and *AFTER past it. NULL if none. */
static const uint8_t *next_sep(const uint8_t *data, const uint8_t *p, const uint8_t *end,
			       const uint8_t **after)
{
	for (const uint8_t *q = p; q + 3 <= end; q++) {
		if ((q == data || q[-1] == '\n') && !memcmp(q, "%%\n", 3)) {
			*after = q + 3;
			return q;
		}
	}
	return NULL;
}

static void render(const json_t *doc, void (*text)(const json_t *, FILE *, int))
{
	FILE *f = null_file();
	text(doc, f, 0);
	text(doc, f, 1);
	FUZZ_CHECK(doc_write_json(doc, f) == 0);
	FUZZ_CHECK(doc_write_yaml(doc, f) == 0);
}

static int load(struct profile *p, const uint8_t *data, size_t size, const char *name, int fold,
		int drop_arcs)
{
	struct input *in = input_open_mem(data, size, name);
	struct profile_opts o = { .max_line = FUZZ_MAX_LINE, .fold_recursion = fold, .drop_arcs = drop_arcs };
	struct diag d = { 0 };
	int rc = profile_load_input(p, in, &o, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	input_close(in);
	if (rc < 0)
		profile_free(p);
	return rc;
}

static void check_match(const struct profile *base, const struct profile *p)
{
	size_t *in_base = prof_match(base, p);
	char *used = calloc(base->nfns + 1, 1);
	FUZZ_CHECK(used != NULL);
	for (size_t j = 0; j < p->nfns; j++) {
		size_t i = in_base[j];
		if (i == SIZE_MAX)
			continue;
		/* both rules (the key, then unique JIT names) match equal names */
		FUZZ_CHECK(i < base->nfns && !used[i]);
		FUZZ_CHECK(profile_name_cmp(base, i, p, j) == 0);
		struct prof_name x = { 0 }, y = { 0 };
		FUZZ_CHECK(!strcmp(profile_name(base, i, &x), profile_name(p, j, &y)));
		prof_name_free(&x);
		prof_name_free(&y);
		/* against itself, every match is the function itself */
		FUZZ_CHECK(base != p || i == j);
		used[i] = 1;
	}
	free(used);
	free(in_base);
}

static void check_diff(const struct profile *base, const struct profile *p, const char *event,
		       size_t top, double threshold)
{
	struct diag d = { 0 };
	json_t *doc = prof_diff_build(base, p, event, top, threshold, &d);
	FUZZ_CHECK(doc ? !d.set : d.set);
	if (!doc)
		return;
	FUZZ_CHECK(json_array_size(json_object_get(doc, "functions")) <= top);
	if (base == p) {
		/* every match is the function itself; two functions of one key (objects with one
		 * file name in two directories) may stay unmatched, one on each side */
		FUZZ_CHECK(doc_get_u64(doc, "changed") == 0);
		FUZZ_CHECK(doc_get_u64(doc, "added") == doc_get_u64(doc, "removed"));
	}
	render(doc, prof_diff_render);
	json_decref(doc);
}

static void check_budget(const struct profile *p, const struct profile *base, const char *text,
			 size_t len)
{
	struct budget b;
	struct diag d = { 0 };
	int rc = budget_parse(&b, "fuzz.yaml", text, len, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	if (rc == 0) {
		int bad = -1;
		json_t *doc = prof_check_build(&b, p, base, NULL, &bad, &d);
		FUZZ_CHECK(doc ? !d.set : d.set && (bad == 0 || bad == 1));
		if (doc) {
			size_t held = doc_get_u64(doc, "held"), exceeded = doc_get_u64(doc, "exceeded"),
			       missing = doc_get_u64(doc, "missing"), skipped = doc_get_u64(doc, "skipped");
			const json_t *results = json_object_get(doc, "results");
			FUZZ_CHECK(held + exceeded + missing + skipped == json_array_size(results));
			FUZZ_CHECK(prof_check_passed(doc) == (!exceeded && !missing));
			size_t i;
			json_t *r;
			json_array_foreach(results, i, r) {
				const json_t *lim = json_object_get(r, "soft_limit");
				FUZZ_CHECK(json_is_null(lim) || json_integer_value(lim) >= 0);
			}
			render(doc, prof_check_render);
			json_decref(doc);
		}
	}
	budget_free(&b);
}

struct walk {
	uint64_t self_sum;
	uint64_t child_sum[MAX_DEPTH + 2];   /* per depth: the widths of the children so far */
};

static int visit(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct walk *w = ctx;
	const struct flamegraph_frame *f = &stack[depth];
	FUZZ_CHECK(depth <= MAX_DEPTH && f->depth == depth && f->self <= f->width);
	if (leave) {
		/* the children fit in the frame, and its self cost is what they leave */
		FUZZ_CHECK(w->child_sum[depth + 1] <= f->width);
		FUZZ_CHECK(f->self == f->width - w->child_sum[depth + 1]);
		return 0;
	}
	w->child_sum[depth + 1] = 0;
	w->self_sum += f->self;
	if (depth) {
		const struct flamegraph_frame *parent = &stack[depth - 1];
		FUZZ_CHECK(f->x >= parent->x && f->x - parent->x + f->width <= parent->width);
		w->child_sum[depth] += f->width;
	}
	return 0;
}

static void check_flamegraph(const struct profile *p, unsigned ev, size_t size,
			     const unsigned char *focus, int jit_only)
{
	static const double widths[] = { 0.001, 0.01, 0.2 };
	if (p->negative)
		return;   /* cg_diff's signed costs: cgjit flamegraph refuses them */
	struct flamegraph_opts o = { .event = ev, .min_width = widths[size % 3],
				     .max_depth = 1 + (unsigned)(size % MAX_DEPTH), .focus = focus,
				     .jit_only = jit_only };
	struct flamegraph *g = flamegraph_new(p, &o);
	struct walk w = { 0 };
	FUZZ_CHECK(flamegraph_walk(g, visit, &w) == 0);
	FUZZ_CHECK(w.self_sum == flamegraph_total(g));
	struct diag d = { 0 };
	struct output *out = output_open("/dev/null", &d);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(flamegraph_write_folded(g, out, &d) == 0 && !d.set);
	FUZZ_CHECK(output_commit(out, &d) == 0);
	if (focus && !jit_only) {
		struct flamegraph_scope sc;
		flamegraph_scope(p, ev, focus, &sc);
		FUZZ_CHECK(sc.total == flamegraph_total(g));
		flamegraph_scope_free(&sc);
	}
	flamegraph_free(g);
}

/* The report under a focus on P's first function (by name, so its recursion copies and
 * namesakes in other files too), and of JIT code only. */
static void check_scope(const struct profile *p, unsigned ev, size_t top, size_t size)
{
	if (!p->nfns)
		return;
	struct prof_name name = { 0 };
	struct prof_select sel = { .name = profile_name(p, 0, &name) };
	struct prof_scope_opts o = { size & 16 ? NULL : &sel, (int)(size >> 5) & 1 };
	struct profile q;
	struct diag d = { 0 };
	int rc = prof_scope_make(p, &o, ev, &q, &d);
	/* only a cachegrind file has no focus */
	FUZZ_CHECK(rc == 0 ? !d.set : d.set && p->cachegrind && o.focus);
	if (rc == 0) {
		json_t *doc = prof_report_build(&q, ev, top);
		FUZZ_CHECK(json_array_size(json_object_get(doc, "functions")) <= top);
		render(doc, prof_report_render);
		json_decref(doc);
		if (o.focus && q.scope->nfocus == 1) {
			FUZZ_CHECK(profile_incl(&q, q.scope->focus[0])[ev] == q.totals[ev]);
		}
		unsigned char *flags = calloc(p->nfns + 1, 1);
		FUZZ_CHECK(flags != NULL);
		for (size_t i = 0; i < p->nfns; i++)
			flags[i] = (unsigned char)prof_select_match(&sel, p, i);
		if (!p->cachegrind)
			check_flamegraph(p, ev, size, o.focus ? flags : NULL, o.jit_only);
		free(flags);
	}
	profile_free(&q);
	prof_name_free(&name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size, *after = NULL, *base_at = NULL, *budget_at = NULL;
	const uint8_t *sep = next_sep(data, data, end, &after), *base_end = end, *budget_end = end;
	const uint8_t *new_end = sep ? sep : end;
	if (sep) {
		base_at = after;
		if ((sep = next_sep(data, base_at, end, &after)) != NULL) {
			base_end = sep;
			budget_at = after;
			if ((sep = next_sep(data, budget_at, end, &after)) != NULL)
				budget_end = sep;
		}
	}
	int fold = size & 1;
	struct profile p, base;
	if (load(&p, data, (size_t)(new_end - data), "new.out", fold, 0) < 0)
		return 0;
	int has_base = base_at && load(&base, base_at, (size_t)(base_end - base_at), "base.out", fold, 0) == 0;
	const struct profile *b = has_base ? &base : &p;
	unsigned ev = p.nevents ? (unsigned)(size >> 1) % p.nevents : 0;
	size_t top = 1 + (size >> 2) % 8;

	if (p.nevents) {
		json_t *doc = prof_report_build(&p, ev, top);
		FUZZ_CHECK(json_array_size(json_object_get(doc, "functions")) <= top);
		render(doc, prof_report_render);
		json_decref(doc);
	}
	check_match(b, &p);
	check_match(&p, &p);
	check_diff(b, &p, NULL, top, (size >> 3) & 1 ? 1.0 : 0.0);
	check_diff(&p, &p, NULL, top, 0.0);
	if (p.nevents)
		check_diff(b, &p, p.events[ev], top, 0.0);
	if (budget_at)
		check_budget(&p, has_base ? b : NULL, (const char *)budget_at, (size_t)(budget_end - budget_at));
	else
		check_budget(&p, b, default_budget, sizeof(default_budget) - 1);
	if (p.nevents) {
		check_flamegraph(&p, ev, size, NULL, 0);
		check_scope(&p, ev, top, size);
	}
	/* read without its arcs (profile_opts.drop_arcs: report, diff and check without a
	 * focus), the profile gives the same report and diff */
	struct profile q;
	if (p.nevents && load(&q, data, (size_t)(new_end - data), "new.out", fold, 1) == 0) {
		FUZZ_CHECK(q.arcs_dropped && !q.arcs && q.narcs == p.narcs);
		json_t *x = prof_report_build(&p, ev, top), *y = prof_report_build(&q, ev, top);
		FUZZ_CHECK(json_equal(x, y));
		json_decref(x);
		json_decref(y);
		check_diff(b, &q, NULL, top, 0.0);
		profile_free(&q);
	}
	profile_free(&p);
	if (has_base)
		profile_free(&base);
	return 0;
}
