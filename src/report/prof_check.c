/* prof_check.c - `cgjit check`: measures each limit of a budget (budget.c) on a profile,
 * compares soft limits with a baseline profile matched as `cgjit diff` matches functions,
 * and renders the verdicts as text or Markdown (JSON and YAML: doc_out.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "report/budget.h"
#include "report/doc_out.h"
#include "report/prof_check.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/prof_report.h"
#include "report/prof_scope.h"
#include "report/profile.h"

/* The profiles a limit is measured on: the whole ones, or seen through a scope (a focus,
 * JIT code only), made once per scope. */
struct view {
	const void *key;             /* the selector the scope is made of; NULL: no focus */
	const struct profile *p, *base;
	struct profile sp, sbase;    /* the scoped profiles, when made */
	int made_p, made_base;
	char *p_missing;             /* the focus matches nothing in P: why, with a hint */
	char *base_missing;          /* ... nothing in BASE */
	json_t *suggestions;         /* names close to the focus, when P_MISSING */
	size_t *base_of;             /* per function of P: its match in BASE, or SIZE_MAX */
};

struct checker {
	const struct budget *b;
	const struct profile *p, *base;
	const struct prof_scope_opts *cli;
	struct view *views;
	size_t nviews, cap;
	struct view *v;              /* the view of the limit being checked */
	json_t *results;
	size_t held, exceeded, missing, skipped;
	struct diag *d;              /* the first error, which stops the check */
	int bad_budget;              /* that error is the budget's (it does not fit P), not the inputs' */
};

/* The limit's event in P and BASE. Returns 0, or -1 with C's diag (and bad_budget) set. */
static int limit_events(struct checker *c, const struct budget_limit *lim, int *ev, int *bev)
{
	struct diag *d = c->d;
	const char *name = lim->event ? lim->event : c->b->event ? c->b->event : c->p->events[0];
	char list[512];
	size_t k = 0;
	*ev = profile_event(c->p, name);
	*bev = c->base ? profile_event(c->base, name) : -1;
	const struct profile *lacking = *ev < 0 ? c->p : c->base && *bev < 0 ? c->base : NULL;
	if (!lacking)
		return 0;
	list[0] = '\0';
	for (unsigned i = 0; i < lacking->nevents && k + 1 < sizeof(list); i++)
		k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", i ? " " : "", lacking->events[i]);
	c->bad_budget = lacking == c->p;
	if (c->bad_budget)
		return diag_at_col(d, c->b->path, lim->event_at.line, lim->event_at.column,
				   "event '%s' is not in %s (it counts '%s')", name, c->p->path, list);
	return diag_at(d, c->base->path, 0, "the baseline has no event '%s', which %s uses (it counts '%s')",
		       name, c->b->path, list);
}

/* The selector of a budget's focus. */
static struct prof_select select_of(const struct budget_focus *f)
{
	return (struct prof_select){ f->name, f->glob, f->object, f->file };
}

/* The focus LIM is measured under: its own, else --focus, else the file's; NULL: none.
 * *SEL gets it as a selector. */
static const void *limit_focus(const struct checker *c, const struct budget_limit *lim,
			       struct prof_select *sel)
{
	if (lim->own_focus || (lim->focus && !(c->cli && c->cli->focus))) {
		*sel = select_of(lim->focus);
		return lim->focus;
	}
	if (c->cli && c->cli->focus) {
		*sel = *c->cli->focus;
		return c->cli->focus;
	}
	return NULL;
}

/* Makes the view of KEY (the focus SEL, or none) and --jit-only. Returns 0, or -1 with
 * C's diag and bad_budget set (a focus on a cachegrind file, which has no calls). */
static int make_view(struct checker *c, struct view *v, const void *key, const struct prof_select *sel,
		     const struct budget_limit *lim)
{
	struct diag *d = c->d;
	struct prof_scope_opts o = { key ? sel : NULL, c->cli && c->cli->jit_only };
	*v = (struct view){ .key = key, .p = c->p, .base = c->base, .suggestions = json_array() };
	if (key || o.jit_only) {
		struct diag e = { 0 };
		if (key && (c->p->cachegrind || (c->base && c->base->cachegrind))) {
			c->bad_budget = 1;
			const struct profile *cg = c->p->cachegrind ? c->p : c->base;
			if (lim->focus == key)
				return diag_at_col(d, c->b->path, lim->focus->at.line, lim->focus->at.column,
						   "a focus needs calls, and %s is a cachegrind file: it has none", cg->path);
			return diag_at(d, cg->path, 0, "a cachegrind file records no calls: --focus needs a callgrind profile");
		}
		if (prof_scope_make(c->p, &o, 0, &v->sp, &e) == 0) {
			v->made_p = 1;
			v->p = &v->sp;
		} else {
			profile_free(&v->sp);
			v->p_missing = xstrndup(e.msg, strlen(e.msg));
			size_t idx[3], n = prof_select_suggest(c->p, sel, idx, 3);
			struct prof_name name = { 0 };
			for (size_t i = 0; i < n; i++)
				json_array_append_new(v->suggestions, doc_string(profile_name(c->p, idx[i], &name)));
			prof_name_free(&name);
		}
		e.set = 0;
		if (c->base && prof_scope_make(c->base, &o, 0, &v->sbase, &e) == 0) {
			v->made_base = 1;
			v->base = &v->sbase;
		} else if (c->base) {
			profile_free(&v->sbase);
			v->base_missing = xstrndup(e.msg, strlen(e.msg));
			v->base = NULL;
		}
	}
	if (v->base && !v->p_missing)
		v->base_of = prof_match(v->base, v->p);
	return 0;
}

/* The view for LIM, made the first time its scope is used. Returns 0, or -1 (make_view). */
static int pick_view(struct checker *c, const struct budget_limit *lim)
{
	struct prof_select sel = { 0 };
	const void *key = limit_focus(c, lim, &sel);
	for (size_t i = 0; i < c->nviews; i++)
		if (c->views[i].key == key) {
			c->v = &c->views[i];
			return 0;
		}
	XGROW(c->views, c->cap, c->nviews + 1);
	if (make_view(c, &c->views[c->nviews], key, &sel, lim) < 0)
		return -1;
	c->v = &c->views[c->nviews++];
	return 0;
}

static void free_views(struct checker *c)
{
	for (size_t i = 0; i < c->nviews; i++) {
		struct view *v = &c->views[i];
		if (v->made_p)
			profile_free(&v->sp);
		if (v->made_base)
			profile_free(&v->sbase);
		free(v->p_missing);
		free(v->base_missing);
		free(v->base_of);
		json_decref(v->suggestions);
	}
	free(c->views);
}

static size_t base_match(const struct checker *c, size_t fn)
{
	return c->v->base_of ? c->v->base_of[fn] : SIZE_MAX;
}

static json_t *opt_u64(int has, uint64_t v)
{
	return has ? doc_u64(v) : json_null();
}

/* Why a soft limit could not be checked: no baseline, or the focus not in it, or NOTE. */
static const char *no_base_note(const struct checker *c, const char *note)
{
	return !c->base ? "no --baseline given" : c->v->base_missing ? "the focus matches nothing in the baseline" : note;
}

/* Fills the measured value, the limits and the verdict of one result. BASE is the
 * baseline's value, or NULL when it is not known (then NO_BASE_NOTE says why). */
static void judge(struct checker *c, json_t *r, const struct budget_limit *lim, uint64_t v,
		  const uint64_t *base, const char *no_base_note)
{
	int has_base = base != NULL;
	uint64_t basev = base ? *base : 0;
	json_t *over = json_array();
	int checked = 0;
	/* a profile of cg_diff's holds signed costs (struct profile negative): a value or a
	 * base below 0 is compared as such */
	int sig = c->p->negative || (c->base && c->base->negative);
	long double lv = sig ? (long double)(int64_t)v : (long double)v;
	long double lb = sig ? (long double)(int64_t)basev : (long double)basev;
	json_object_set_new(r, "value", prof_report_cost(c->p, v));
	json_object_set_new(r, "hard", opt_u64(lim->has_hard, lim->hard));
	if (lim->has_hard) {
		checked = 1;
		if (lv > (long double)lim->hard)
			json_array_append_new(over, json_string("hard"));
	}
	int soft = lim->has_soft && has_base;
	json_object_set_new(r, "baseline_value", has_base && c->base ? prof_report_cost(c->base, basev)
			    : opt_u64(has_base, basev));
	json_object_set_new(r, "soft_percent", lim->has_soft ? json_real(lim->soft) : json_null());
	/* in long double: a base near 2^63 times 1.05 must not round the limit down. A limit
	 * past INT64_MAX is shown as INT64_MAX, as doc_u64() shows every cost: converting a
	 * value past UINT64_MAX to an integer is undefined (x86 gave 0, printed beside
	 * "held"). The verdict compares in long double and needs no clamp. */
	/* of the base's size either way, so that a signed base below 0 allows more, not less */
	long double allowed = sig ? lb + (lb < 0 ? -lb : lb) * ((long double)lim->soft / 100.0L)
				  : lb * (1.0L + (long double)lim->soft / 100.0L);
	json_t *soft_json = allowed >= 0x1p63L ? doc_u64((uint64_t)INT64_MAX)
		: allowed < 0 ? json_integer((json_int_t)allowed) : doc_u64((uint64_t)allowed);
	json_object_set_new(r, "soft_limit", soft ? soft_json : json_null());
	if (!soft)
		json_decref(soft_json);
	json_object_set_new(r, "change_rel", has_base && basev ? json_real((double)((lv - lb) / (lb < 0 ? -lb : lb)))
			    : json_null());
	if (soft) {
		checked = 1;
		if (lv > allowed)
			json_array_append_new(over, json_string("soft"));
	}
	if (lim->has_soft && !has_base)
		json_object_set_new(r, "note", json_string(no_base_note));
	const char *verdict = json_array_size(over) ? "exceeded" : checked ? "held" : "skipped";
	json_object_set_new(r, "verdict", json_string(verdict));
	json_object_set_new(r, "exceeded", over);
	*(json_array_size(over) ? &c->exceeded : checked ? &c->held : &c->skipped) += 1;
}

/* A result with every key of docs/reports.md ("cgjit.check/2"), in its order: what does
 * not apply to this limit stays null, and the verdict's keys are filled by judge() or
 * missing(). */
static json_t *result_head(const struct checker *c, const struct budget_limit *lim, const char *event)
{
	static const char *const later[] = { "function", "functions", "baseline_functions", "value", "hard",
		"baseline_value", "soft_percent", "soft_limit", "change_rel", "verdict", "exceeded", "note" };
	int fn = lim->kind == BUDGET_FUNCTION;
	struct prof_select sel;
	json_t *r = json_object();
	json_object_set_new(r, "line", json_integer(lim->at.line));
	json_object_set_new(r, "limit", json_string(fn ? "function" : "total"));
	json_object_set_new(r, "event", doc_string(event));
	json_object_set_new(r, "focus", limit_focus(c, lim, &sel) ? prof_select_json(&sel) : json_null());
	json_object_set_new(r, "cost", fn ? json_string(lim->cost == BUDGET_SELF ? "self" : "inclusive") : json_null());
	json_object_set_new(r, "match", fn ? json_string(lim->name ? "name" : "glob") : json_null());
	json_object_set_new(r, "pattern", fn ? doc_string(lim->name ? lim->name : lim->glob) : json_null());
	json_object_set_new(r, "sum", json_boolean(fn && lim->sum));
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		json_object_set_new(r, later[i], json_null());
	json_object_set_new(r, "suggestions", json_array());
	return r;
}

/* LIM names function I of P, and P lists it (--jit-only: it is JIT code). */
static int fn_matches(const struct budget_limit *lim, const struct profile *p, size_t i)
{
	struct prof_select s = { lim->name, lim->glob, lim->object, lim->file };
	return profile_listed(p, i) && prof_select_match(&s, p, i);
}

static uint64_t fn_cost(const struct profile *p, size_t fn, const struct budget_limit *lim, unsigned ev)
{
	return lim->cost == BUDGET_SELF ? profile_self(p, fn)[ev] : profile_incl(p, fn)[ev];
}

/* A limit that matches no function, or whose focus matches none: it fails unless the
 * budget says it may. The names closest to what matched nothing are suggested. */
static void missing(struct checker *c, const struct budget_limit *lim, json_t *r)
{
	json_object_set_new(r, "value", json_null());
	json_object_set_new(r, "verdict", json_string(lim->required ? "missing" : "skipped"));
	json_object_set_new(r, "exceeded", json_array());
	json_t *sugg = json_array();
	char *hint = NULL;
	if (c->v->p_missing) {
		json_array_extend(sugg, c->v->suggestions);
		json_object_set_new(r, "note", doc_string(c->v->p_missing));
	} else {
		struct prof_select s = { lim->name, lim->glob, lim->object, lim->file };
		size_t idx[3], n = prof_select_suggest(c->p, &s, idx, 3);
		struct prof_name name = { 0 };
		for (size_t i = 0; i < n; i++)
			json_array_append_new(sugg, doc_string(profile_name(c->p, idx[i], &name)));
		prof_name_free(&name);
		hint = prof_select_hint(c->p, &s);
		char *clean = hint ? doc_clean_utf8(hint, strlen(hint)) : NULL;
		json_object_set_new(r, "note", clean ? json_pack("s+", "matches no function; ", clean)
					    : json_string("matches no function"));
		free(clean);
	}
	free(hint);
	json_object_set_new(r, "suggestions", sugg);
	*(lim->required ? &c->missing : &c->skipped) += 1;
	json_array_append_new(c->results, r);
}

/* One result for the sum over the functions LIM matches in P and, apart, in BASE. */
static void check_sum(struct checker *c, const struct budget_limit *lim, unsigned ev, int bev)
{
	const struct profile *p = c->v->p, *base = c->v->base;
	uint64_t v = 0, bv = 0;
	size_t n = 0, bn = 0;
	for (size_t i = 0; !c->v->p_missing && i < p->nfns; i++)
		if (fn_matches(lim, p, i))
			v += fn_cost(p, i, lim, ev), n++;
	for (size_t j = 0; base && j < base->nfns; j++)
		if (fn_matches(lim, base, j))
			bv += fn_cost(base, j, lim, (unsigned)bev), bn++;
	json_t *r = result_head(c, lim, c->p->events[ev]);
	json_object_set_new(r, "functions", doc_u64(n));
	if (!n) {
		missing(c, lim, r);
		return;
	}
	json_object_set_new(r, "baseline_functions", c->base ? doc_u64(bn) : json_null());
	judge(c, r, lim, v, bn > 0 ? &bv : NULL, no_base_note(c, "matches nothing in the baseline"));
	json_array_append_new(c->results, r);
}

static void check_functions(struct checker *c, const struct budget_limit *lim, unsigned ev, int bev)
{
	if (lim->sum) {
		check_sum(c, lim, ev, bev);
		return;
	}
	const struct profile *p = c->v->p;
	size_t matched = 0;
	for (size_t i = 0; !c->v->p_missing && i < p->nfns; i++) {
		if (!fn_matches(lim, p, i))
			continue;
		matched++;
		json_t *r = result_head(c, lim, c->p->events[ev]);
		json_object_set_new(r, "function", prof_report_fn_ident(p, i));
		size_t j = base_match(c, i);
		uint64_t bcost = j != SIZE_MAX ? fn_cost(c->v->base, j, lim, (unsigned)bev) : 0;
		judge(c, r, lim, fn_cost(p, i, lim, ev), j != SIZE_MAX ? &bcost : NULL, no_base_note(c, "not in the baseline"));
		json_array_append_new(c->results, r);
	}
	if (!matched)
		missing(c, lim, result_head(c, lim, c->p->events[ev]));
}

static int check_limit(struct checker *c, const struct budget_limit *lim)
{
	int ev, bev;
	if (limit_events(c, lim, &ev, &bev) < 0)
		return -1;
	if (lim->kind == BUDGET_FUNCTION && lim->cost == BUDGET_INCLUSIVE &&
	    (c->p->cachegrind || (c->base && c->base->cachegrind))) {
		c->bad_budget = c->p->cachegrind;
		return diag_at_col(c->d, c->b->path, lim->cost_at.line, lim->cost_at.column,
				   "inclusive cost does not exist in %s: a cachegrind file has no calls",
				   c->p->cachegrind ? c->p->path : c->base->path);
	}
	if (pick_view(c, lim) < 0)
		return -1;
	if (lim->kind == BUDGET_TOTAL) {
		json_t *r = result_head(c, lim, c->p->events[ev]);
		if (c->v->p_missing) {
			missing(c, lim, r);
			return 0;
		}
		const struct profile *base = c->v->base;
		judge(c, r, lim, c->v->p->totals[ev], base ? &base->totals[bev] : NULL, no_base_note(c, NULL));
		json_array_append_new(c->results, r);
		return 0;
	}
	check_functions(c, lim, (unsigned)ev, bev);
	return 0;
}

json_t *prof_check_build(const struct budget *b, const struct profile *p, const struct profile *base,
			 const struct prof_scope_opts *scope, int *bad_budget, struct diag *d)
{
	struct checker c = { .b = b, .p = p, .base = base, .cli = scope, .results = json_array(), .d = d };
	json_t *doc = NULL;
	size_t i;
	for (i = 0; i < b->n; i++)
		if (check_limit(&c, &b->limits[i]) < 0)
			break;
	*bad_budget = c.bad_budget;
	/* the command line's scope, as the report writes one */
	const struct profile *shown = p;
	for (size_t k = 0; k < c.nviews; k++)
		if (scope && scope->focus && c.views[k].key == scope->focus && c.views[k].made_p)
			shown = c.views[k].p;
	if (i == b->n) {
		doc = json_object();
		json_object_set_new(doc, "schema", json_string("cgjit.check/2"));
		json_object_set_new(doc, "profile", doc_string(p->path));
		json_object_set_new(doc, "baseline", base ? doc_string(base->path) : json_null());
		json_object_set_new(doc, "budget", doc_string(b->path));
		json_object_set_new(doc, "command", p->cmd ? doc_string(p->cmd) : json_null());
		json_object_set_new(doc, "baseline_command", base && base->cmd ? doc_string(base->cmd) : json_null());
		json_t *sc = prof_report_scope(shown);
		json_object_set_new(sc, "jit_only", json_boolean(scope && scope->jit_only));
		json_object_set_new(doc, "scope", sc);
		json_object_set_new(doc, "totals", prof_report_totals(p));
		json_object_set_new(doc, "totals_calculated", json_boolean(p->totals_calculated));
		json_object_set_new(doc, "units", prof_report_units(p));
		json_object_set_new(doc, "warnings", base ? prof_diff_warnings(base, p) : json_array());
		json_object_set_new(doc, "passed", json_boolean(!c.exceeded && !c.missing));
		json_object_set_new(doc, "held", doc_u64(c.held));
		json_object_set_new(doc, "exceeded", doc_u64(c.exceeded));
		json_object_set_new(doc, "missing", doc_u64(c.missing));
		json_object_set_new(doc, "skipped", doc_u64(c.skipped));
		json_object_set_new(doc, "results", json_incref(c.results));
	}
	json_decref(c.results);
	free_views(&c);
	return doc;
}

int prof_check_passed(const json_t *doc)
{
	return json_is_true(json_object_get(doc, "passed"));
}

static const char *num_or_dash(char *buf, const json_t *v)
{
	if (!json_is_integer(v))
		return "-";
	json_int_t x = json_integer_value(v);
	if (x >= 0)
		return doc_commas(buf, (uint64_t)x);
	buf[0] = '-';   /* a signed cost (cg_diff's files) */
	doc_commas(buf + 1, (uint64_t)0 - (uint64_t)x);
	return buf;
}

static const char *soft_text(char *buf, const json_t *r)
{
	const json_t *lim = json_object_get(r, "soft_limit"), *pct = json_object_get(r, "soft_percent");
	if (!json_is_number(pct))
		return "-";
	char n[32];
	if (json_is_integer(lim))
		snprintf(buf, 64, "%s (%+g%%)", num_or_dash(n, lim), json_number_value(pct));
	else
		snprintf(buf, 64, "%+g%%", json_number_value(pct));
	return buf;
}

static const char *change_text(char *buf, const json_t *r)
{
	const json_t *v = json_object_get(r, "change_rel");
	if (!json_is_number(v))
		return "-";
	snprintf(buf, 32, "%+.2f%%", json_number_value(v) * 100.0);
	return buf;
}

static void render_what(FILE *f, const json_t *r, int md)
{
	if (!strcmp(doc_get_str(r, "limit"), "total")) {
		fputs("total", f);
		return;
	}
	const json_t *fn = json_object_get(r, "function");
	const char *name = json_is_object(fn) ? doc_get_str(fn, "name") : NULL;
	if (md)
		doc_md_cell(f, name ? name : doc_get_str(r, "pattern"));
	else
		fputs(name ? name : doc_get_str(r, "pattern"), f);
	if (json_is_true(json_object_get(r, "sum")))
		fprintf(f, " (%s, sum of %" JSON_INTEGER_FORMAT ")", doc_get_str(r, "cost"),
			json_integer_value(json_object_get(r, "functions")));
	else
		fprintf(f, " (%s%s)", !name && !strcmp(doc_get_str(r, "match"), "glob") ? "glob, " : "",
			doc_get_str(r, "cost"));
	if (json_is_object(fn) && json_is_true(json_object_get(fn, "jit")))
		fputs(md ? " **JIT**" : " JIT", f);
}

/* " under F" for a result measured under a focus. */
static void render_focus(FILE *f, const json_t *r, int md)
{
	const json_t *fo = json_object_get(r, "focus");
	if (!json_is_object(fo))
		return;
	fputs(" under ", f);
	if (md)
		doc_md_cell(f, doc_get_str(fo, "pattern"));
	else
		fputs(doc_get_str(fo, "pattern"), f);
}

/* The command line's scope: --focus for the limits without a focus of their own (each
 * result names its focus), --jit-only. */
static void render_scope(const json_t *doc, FILE *f, int md)
{
	const json_t *sc = json_object_get(doc, "scope"), *fo = json_object_get(sc, "focus");
	if (json_is_object(fo)) {
		fprintf(f, md ? "Focus (`--focus`, for the limits without their own): %s " : "focus     %s ",
			doc_get_str(fo, "match"));
		if (md)
			doc_md_cell(f, doc_get_str(fo, "pattern"));
		else
			fprintf(f, "'%s' (--focus), for the limits without their own", doc_get_str(fo, "pattern"));
		fputs(md ? "\n\n" : "\n", f);
	}
	if (json_is_true(json_object_get(sc, "jit_only")))
		fputs(md ? "Function limits match JIT functions only (`--jit-only`).\n\n"
			 : "scope     function limits match JIT functions only (--jit-only)\n", f);
}

void prof_check_render(const json_t *doc, FILE *f, int md)
{
	char b1[32], b2[32], b3[32], b4[64], b5[32];
	int passed = prof_check_passed(doc);
	const json_t *base = json_object_get(doc, "baseline");
	unsigned long long held = doc_get_u64(doc, "held"), exc = doc_get_u64(doc, "exceeded"),
			   mis = doc_get_u64(doc, "missing"), skip = doc_get_u64(doc, "skipped");
	if (md) {
		fprintf(f, "## Budget check: %s\n\n`%s` against `%s`", passed ? "passed" : "**failed**",
			doc_get_str(doc, "profile"), doc_get_str(doc, "budget"));
		if (json_is_string(base))
			fprintf(f, ", baseline `%s`", json_string_value(base));
		fputs("\n\n", f);
		render_scope(doc, f, 1);
		prof_diff_render_warnings(doc, f, 1);
		if (json_is_true(json_object_get(doc, "totals_calculated")))
			fputs("Totals (calculated): the file has no totals: or summary: line.\n\n", f);
		fprintf(f, "%llu held, %llu exceeded, %llu missing, %llu skipped\n\n"
			"| | limit | event | value | hard limit | baseline | soft limit | change | line |\n"
			"|---|---|---|---:|---:|---:|---:|---:|---:|\n", held, exc, mis, skip);
	} else {
		fprintf(f, "profile   %s\nbudget    %s\n", doc_get_str(doc, "profile"), doc_get_str(doc, "budget"));
		if (json_is_string(base))
			fprintf(f, "baseline  %s\n", json_string_value(base));
		render_scope(doc, f, 0);
		prof_diff_render_warnings(doc, f, 0);
		if (json_is_true(json_object_get(doc, "totals_calculated")))
			fputs("totals    (calculated): the file has no totals: or summary: line\n", f);
		fprintf(f, "result    %s: %llu held, %llu exceeded, %llu missing, %llu skipped\n\n",
			passed ? "passed" : "FAILED", held, exc, mis, skip);
		fprintf(f, "%-9s %-6s %16s %16s %16s %24s %9s  %s\n", "verdict", "event", "value", "hard limit",
			"baseline", "soft limit", "change", "limit");
	}
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "results"), i, r) {
		const char *v = doc_get_str(r, "verdict");
		int bad = !strcmp(v, "exceeded") || !strcmp(v, "missing");
		const char *val = num_or_dash(b1, json_object_get(r, "value"));
		const char *hard = num_or_dash(b2, json_object_get(r, "hard"));
		const char *basev = num_or_dash(b3, json_object_get(r, "baseline_value"));
		const char *soft = soft_text(b4, r), *change = change_text(b5, r);
		const json_t *note = json_object_get(r, "note");
		if (md) {
			fprintf(f, "| %s %s | ", bad ? "❌" : !strcmp(v, "held") ? "✅" : "➖", v);
			render_what(f, r, 1);
			render_focus(f, r, 1);
			if (json_is_string(note))
				fprintf(f, " (%s)", json_string_value(note));
			fprintf(f, " | %s | %s | %s | %s | %s | %s | %" JSON_INTEGER_FORMAT " |\n",
				doc_get_str(r, "event"), val, hard, basev, soft, change, json_integer_value(json_object_get(r, "line")));
			continue;
		}
		char up[16];
		size_t k = 0;
		for (; v[k] && k + 1 < sizeof(up); k++)
			up[k] = bad ? (char)(v[k] - 'a' + 'A') : v[k];
		up[k] = '\0';
		fprintf(f, "%-9s %-6s %16s %16s %16s %24s %9s  ", up, doc_get_str(r, "event"), val, hard, basev, soft,
			change);
		render_what(f, r, 0);
		render_focus(f, r, 0);
		fprintf(f, "  [%s:%" JSON_INTEGER_FORMAT "%s%s]\n", doc_get_str(doc, "budget"),
			json_integer_value(json_object_get(r, "line")), json_is_string(note) ? "; " : "",
			json_is_string(note) ? json_string_value(note) : "");
	}
}
