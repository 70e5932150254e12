/* prof_diff.c - `cgjit diff`: with the functions of two profiles matched (prof_match.c),
 * computes the change of self and inclusive cost of one
 * event, warns when the profiles ran different commands, and renders the result as text
 * or Markdown (JSON and YAML: doc_out.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "report/doc_out.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/prof_report.h"
#include "report/profile.h"

struct change {
	size_t a, b;              /* function in BASE / NEW, or SIZE_MAX */
	uint64_t sa, sb, ia, ib;  /* self and inclusive, BASE and NEW */
	int sig;                  /* the costs are signed (a profile of cg_diff's: absdiff_as()) */
	size_t seq;               /* its place in pair_up()'s order: the last tie-break */
};

/* |Y - X|. Costs are unsigned up to 2^64 - 1, or signed in a profile with negative counts
 * (cg_diff's): SIGNED says which, and the difference is then taken in two's complement. */
static uint64_t absdiff_as(int is_signed, uint64_t x, uint64_t y)
{
	if (!is_signed)
		return x > y ? x - y : y - x;
	int64_t d = (int64_t)(y - x);
	return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
}

static int cmp_change(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	uint64_t da = absdiff_as(a->sig, a->sa, a->sb), db = absdiff_as(b->sig, b->sa, b->sb);
	if (da != db)
		return da < db ? 1 : -1;
	da = absdiff_as(a->sig, a->ia, a->ib);
	db = absdiff_as(b->sig, b->ia, b->ib);
	if (da != db)
		return da < db ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void event_list(char *buf, size_t n, const struct profile *p)
{
	size_t k = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < p->nevents && k + 1 < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? " " : "", p->events[i]);
}

static json_t *rel(int sig, uint64_t from, uint64_t to)
{
	if (!from)
		return json_null();
	if (sig)   /* of the base's size, so that the sign is the change's */
		return json_real(((double)(int64_t)to - (double)(int64_t)from) /
				 (double)absdiff_as(1, 0, from));
	return json_real(((double)to - (double)from) / (double)from);
}

/* TO - FROM as a JSON integer. Costs go up to 2^64 - 1 (the readers bound their sums at 64
 * bits), so the difference can pass what 64 signed bits hold: it is clamped to them, where
 * subtracting the two as json_int_t overflowed (undefined, and the wrong sign). */
static json_t *change(int sig, uint64_t from, uint64_t to)
{
	if (sig)   /* two's complement: real differences of cg_diff's files fit in 63 bits */
		return json_integer((json_int_t)(int64_t)(to - from));
	if (to >= from)
		return json_integer(to - from > INT64_MAX ? INT64_MAX : (json_int_t)(to - from));
	uint64_t down = from - to;   /* -down, of which -2^63 still fits */
	return json_integer(down > (uint64_t)INT64_MAX ? INT64_MIN : -(json_int_t)down);
}

/* A function's entry: the keys of the report's (self, inclusive: the new profile's), and
 * the baseline's value and the change of each (docs/reports.md, "cgjit.diff/2"). */
static json_t *change_entry(const struct profile *A, const struct profile *B, const struct change *c)
{
	json_t *o = c->b != SIZE_MAX ? prof_report_fn_ident(B, c->b) : prof_report_fn_ident(A, c->a);
	json_object_set_new(o, "status", json_string(c->a == SIZE_MAX ? "added" : c->b == SIZE_MAX ? "removed" : "both"));
	json_object_set_new(o, "self", prof_report_cost(B, c->sb));
	json_object_set_new(o, "baseline_self", prof_report_cost(A, c->sa));
	json_object_set_new(o, "self_change", change(c->sig, c->sa, c->sb));
	json_object_set_new(o, "self_change_rel", rel(c->sig, c->sa, c->sb));
	json_object_set_new(o, "inclusive", prof_report_cost(B, c->ib));
	json_object_set_new(o, "baseline_inclusive", prof_report_cost(A, c->ia));
	json_object_set_new(o, "inclusive_change", change(c->sig, c->ia, c->ib));
	json_object_set_new(o, "inclusive_change_rel", rel(c->sig, c->ia, c->ib));
	return o;
}

/* What the document counts of the functions, and the changes it lists: the TOP first in
 * cmp_change()'s order, kept in a heap whose root is the last of them, so that a diff of
 * two large profiles holds TOP entries, not one per function (prof_diff_build()). */
struct tally {
	size_t added, removed, changed;
	double limit;   /* a change below it in both self and inclusive cost is not listed */
	size_t top;     /* SIZE_MAX: all */
	struct change *c;
	size_t n, cap;
};

static void sift_down(struct change *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && cmp_change(&h[l], &h[m]) > 0)
			m = l;
		if (l + 1 < n && cmp_change(&h[l + 1], &h[m]) > 0)
			m = l + 1;
		if (m == i)
			return;
		struct change x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static void sift_up(struct change *h, size_t i)
{
	while (i && cmp_change(&h[(i - 1) / 2], &h[i]) < 0) {
		struct change x = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

/* Function A of BASE and B of NEW (either SIZE_MAX: only in the other) as a change: counted
 * in T, and among its listed ones while it is one of the TOP. */
static void take(struct tally *t, struct change x)
{
	t->added += x.a == SIZE_MAX;
	t->removed += x.b == SIZE_MAX;
	uint64_t ds = absdiff_as(x.sig, x.sa, x.sb), di = absdiff_as(x.sig, x.ia, x.ib);
	int both = x.a != SIZE_MAX && x.b != SIZE_MAX;
	if (!ds && !di && both)
		return;
	t->changed += both;
	if ((double)ds < t->limit && (double)di < t->limit && (ds || di))
		return;
	if (!t->top)
		return;
	if (t->n < t->top) {
		XGROW(t->c, t->cap, t->n + 1);
		t->c[t->n++] = x;
		sift_up(t->c, t->n - 1);
	} else if (cmp_change(&x, &t->c[0]) < 0) {
		t->c[0] = x;
		sift_down(t->c, t->n, 0);
	}
}

/* Every function of A and B once, A's in order and then those only in B, into T. */
static void pair_up(const struct profile *A, const struct profile *B, unsigned ea, unsigned eb,
		    struct tally *t)
{
	size_t *in_a = prof_match(A, B);
	size_t *in_b = xmalloc((A->nfns + 1) * sizeof(*in_b));
	for (size_t i = 0; i < A->nfns; i++)
		in_b[i] = SIZE_MAX;
	for (size_t j = 0; j < B->nfns; j++)
		if (in_a[j] != SIZE_MAX)
			in_b[in_a[j]] = j;
	int sig = A->negative || B->negative;
	for (size_t i = 0; i < A->nfns; i++) {
		size_t j = in_b[i];
		if (!profile_listed(A, i) || (j != SIZE_MAX && !profile_listed(B, j)))
			continue;   /* --jit-only */
		uint64_t sb = j != SIZE_MAX ? profile_self(B, j)[eb] : 0, ib = j != SIZE_MAX ? profile_incl(B, j)[eb] : 0;
		take(t, (struct change){ i, j, profile_self(A, i)[ea], sb, profile_incl(A, i)[ea], ib, sig, i });
	}
	for (size_t j = 0; j < B->nfns; j++)
		if (in_a[j] == SIZE_MAX && profile_listed(B, j))
			take(t, (struct change){ SIZE_MAX, j, 0, profile_self(B, j)[eb], 0, profile_incl(B, j)[eb],
						 sig, A->nfns + j });
	free(in_a);
	free(in_b);
}

json_t *prof_diff_build(const struct profile *A, const struct profile *B, const char *event,
			size_t top, double threshold, struct diag *d)
{
	char la[512], lb[512];
	event_list(la, sizeof(la), A);
	event_list(lb, sizeof(lb), B);
	/* BASE's first event unless --event names one: the files may count different sets
	 * (an Ir-only base against a run with cache simulation) as long as NEW counts it. */
	const char *name = event ? event : A->events[0];
	int ea = profile_event(A, name), eb = profile_event(B, name);
	if (ea < 0 || eb < 0) {
		diag_at(d, ea < 0 ? A->path : B->path, 0, "no event '%s' (it counts '%s')%s", name,
			ea < 0 ? la : lb, event ? "" : ": the base's first event; pick one both count "
			"with --event");
		return NULL;
	}
	int sig = A->negative || B->negative;
	/* the threshold is a share of BASE's total, so that noise in tiny functions hides */
	struct tally t = { 0, 0, 0, threshold / 100.0 * (double)absdiff_as(sig, 0, A->totals[ea]), top, NULL, 0, 0 };
	pair_up(A, B, (unsigned)ea, (unsigned)eb, &t);
	if (t.n)   /* t.c is NULL then, which qsort() may not be given */
		qsort(t.c, t.n, sizeof(*t.c), cmp_change);
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string("cgjit.diff/2"));
	json_object_set_new(doc, "profile", doc_string(B->path));
	json_object_set_new(doc, "baseline", doc_string(A->path));
	json_object_set_new(doc, "command", B->cmd ? doc_string(B->cmd) : json_null());
	json_object_set_new(doc, "baseline_command", A->cmd ? doc_string(A->cmd) : json_null());
	json_object_set_new(doc, "event", doc_string(A->events[ea]));
	json_object_set_new(doc, "scope", prof_report_scope(B));
	json_object_set_new(doc, "inclusive", json_boolean(!A->cachegrind && !B->cachegrind));
	/* the events both count, in the baseline's order */
	json_t *tot = json_object(), *btot = json_object(), *ch = json_object(), *chr = json_object();
	for (unsigned e = 0; e < A->nevents; e++) {
		int k = profile_event(B, A->events[e]);
		if (k < 0)
			continue;
		doc_set_key(tot, A->events[e], prof_report_cost(B, B->totals[k]));
		doc_set_key(btot, A->events[e], prof_report_cost(A, A->totals[e]));
		doc_set_key(ch, A->events[e], change(sig, A->totals[e], B->totals[k]));
		doc_set_key(chr, A->events[e], rel(sig, A->totals[e], B->totals[k]));
	}
	json_object_set_new(doc, "totals", tot);
	json_object_set_new(doc, "baseline_totals", btot);
	json_object_set_new(doc, "totals_change", ch);
	json_object_set_new(doc, "totals_change_rel", chr);
	json_object_set_new(doc, "totals_calculated", json_boolean(B->totals_calculated));
	json_object_set_new(doc, "baseline_totals_calculated", json_boolean(A->totals_calculated));
	json_object_set_new(doc, "units", prof_report_units(B));
	json_object_set_new(doc, "threshold_percent", json_real(threshold));
	json_t *list = json_array();
	for (size_t i = 0; i < t.n; i++)
		json_array_append_new(list, change_entry(A, B, &t.c[i]));
	json_object_set_new(doc, "changed", doc_u64(t.changed));
	json_object_set_new(doc, "added", doc_u64(t.added));
	json_object_set_new(doc, "removed", doc_u64(t.removed));
	json_object_set_new(doc, "warnings", prof_diff_warnings(A, B));
	json_object_set_new(doc, "functions", list);
	free(t.c);
	return doc;
}

json_t *prof_diff_warnings(const struct profile *base, const struct profile *p)
{
	json_t *w = json_array();
	/* two different programs compare without error, function by function, and a diff of
	 * them reads like a regression: say so (cmd: lines, as callgrind wrote them) */
	if (base->cmd && p->cmd && strcmp(base->cmd, p->cmd)) {
		char *a = doc_clean_utf8(base->cmd, strlen(base->cmd)), *b = doc_clean_utf8(p->cmd, strlen(p->cmd));
		json_array_append_new(w, json_pack("s++++", "the profiles ran different commands: the baseline '",
						   a, "', this one '", b, "'"));
		free(a);
		free(b);
	}
	return w;
}

void prof_diff_render_warnings(const json_t *doc, FILE *f, int md)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(doc, "warnings"), i, w) {
		if (md) {
			fputs("> **Warning:** ", f);
			doc_md_text(f, json_string_value(w));
			fputs("\n\n", f);
		} else {
			fprintf(f, "warning   %s\n", json_string_value(w));
		}
	}
}

/* Always into BUF: the callers print BUF. */
static const char *rel_text(char *buf, const json_t *v)
{
	if (!json_is_number(v))
		snprintf(buf, 32, "new");
	else
		snprintf(buf, 32, "%+.2f%%", json_number_value(v) * 100.0);
	return buf;
}

/* Which profiles' totals are callgrind_annotate's "PROGRAM TOTALS (calculated)": files
 * without totals: or summary: lines (go tool pprof's). */
static void render_calculated(const json_t *doc, FILE *f, int md)
{
	int cb = json_is_true(json_object_get(doc, "baseline_totals_calculated"));
	int cn = json_is_true(json_object_get(doc, "totals_calculated"));
	if (cb || cn)
		fprintf(f, md ? "\nTotals (calculated) of %s: the file has no totals: or summary: line.\n"
			      : "totals    (calculated) of %s: the file has no totals: or summary: line\n",
			cb && cn ? "both" : cb ? "base" : "new");
}

void prof_diff_render(const json_t *doc, FILE *f, int md)
{
	char b1[48], b2[48], b3[48], b4[48], b5[32];
	const char *ev = doc_get_str(doc, "event");
	int incl = json_is_true(json_object_get(doc, "inclusive"));
	if (md) {
		fprintf(f, "## Profile diff (%s)\n\nbase `%s`, new `%s`\n\n", ev, doc_get_str(doc, "baseline"),
			doc_get_str(doc, "profile"));
		prof_diff_render_warnings(doc, f, 1);
		prof_report_render_scope(doc, f, 1);
		fputs("| event | base | new | change | |\n|---|---:|---:|---:|---:|\n", f);
	} else {
		fprintf(f, "base      %s\nnew       %s\n", doc_get_str(doc, "baseline"), doc_get_str(doc, "profile"));
		prof_diff_render_warnings(doc, f, 0);
		prof_report_render_scope(doc, f, 0);
	}
	const json_t *tot = json_object_get(doc, "totals"), *btot = json_object_get(doc, "baseline_totals");
	const char *key;
	json_t *t;
	json_object_foreach((json_t *)tot, key, t) {
		doc_cost_json(b1, json_object_get(btot, key), doc, key);
		doc_cost_json(b2, t, doc, key);
		doc_cost_signed(b3, json_integer_value(json_object_get(json_object_get(doc, "totals_change"), key)), doc, key);
		rel_text(b4, json_object_get(json_object_get(doc, "totals_change_rel"), key));
		fprintf(f, md ? "| %s | %s | %s | %s | %s |\n" : "total     %-10s %16s -> %16s %16s %9s\n",
			key, b1, b2, b3, b4);
	}
	render_calculated(doc, f, md);
	double th = doc_get_real(doc, "threshold_percent");
	fprintf(f, md ? "\n%" JSON_INTEGER_FORMAT " functions changed, %" JSON_INTEGER_FORMAT " only in new, %" JSON_INTEGER_FORMAT " only in base"
		      : "functions %" JSON_INTEGER_FORMAT " changed, %" JSON_INTEGER_FORMAT " only in new, %" JSON_INTEGER_FORMAT " only in base",
		(json_int_t)doc_get_u64(doc, "changed"), (json_int_t)doc_get_u64(doc, "added"),
		(json_int_t)doc_get_u64(doc, "removed"));
	if (th > 0)
		fprintf(f, "; changes under %g%% of the base total hidden", th);
	fputs(md ? "\n\n" : "\n\n", f);
	if (md)
		fputs(incl ? "| self change | % | self new | incl. change | % | function | object | file |\n|---:|---:|---:|---:|---:|---|---|---|\n"
			   : "| self change | % | self new | function | object | file |\n|---:|---:|---:|---|---|---|\n", f);
	else
		fprintf(f, incl ? "%14s %9s %16s %14s %9s  %s\n" : "%14s %9s %16s  %s%s%s\n", "self change", "",
			"self new", incl ? "incl. change" : "function  [object, file]", "", incl ? "function  [object, file]" : "");
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(doc, "functions"), i, c) {
		doc_cost_signed(b1, json_integer_value(json_object_get(c, "self_change")), doc, ev);
		rel_text(b2, json_object_get(c, "self_change_rel"));
		doc_cost_json(b3, json_object_get(c, "self"), doc, ev);
		doc_cost_signed(b4, json_integer_value(json_object_get(c, "inclusive_change")), doc, ev);
		rel_text(b5, json_object_get(c, "inclusive_change_rel"));
		const char *status = doc_get_str(c, "status");
		const char *mark = !strcmp(status, "added") ? " (only in new)" : !strcmp(status, "removed") ? " (only in base)" : "";
		const char *obj = doc_get_str(c, "object"), *base = strrchr(obj, '/');
		base = base ? base + 1 : obj;
		int jit = json_is_true(json_object_get(c, "jit"));
		if (md) {
			if (incl)
				fprintf(f, "| %s | %s | %s | %s | %s | ", b1, b2, b3, b4, b5);
			else
				fprintf(f, "| %s | %s | %s | ", b1, b2, b3);
			doc_md_cell(f, doc_get_str(c, "name"));
			fprintf(f, "%s%s | ", jit ? " **JIT**" : "", mark);
			doc_md_cell(f, *base ? base : "-");
			fputs(" | ", f);
			doc_md_cell(f, doc_get_str(c, "file"));
			fputs(" |\n", f);
			continue;
		}
		if (incl)
			fprintf(f, "%14s %9s %16s %14s %9s  ", b1, b2, b3, b4, b5);
		else
			fprintf(f, "%14s %9s %16s  ", b1, b2, b3);
		fprintf(f, "%s%s%s  [%s%s%s]\n", jit ? "JIT " : "", doc_get_str(c, "name"), mark, base,
			*base ? ", " : "", doc_get_str(c, "file"));
	}
}
