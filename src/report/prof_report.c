/* prof_report.c - `cgjit report`: builds the report document from a struct profile and
 * renders it as text or Markdown. The JSON and YAML writers (doc_out.c) take the same
 * document, so every format shows the same numbers. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/doc_out.h"
#include "report/prof_report.h"
#include "report/profile.h"

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* A cost of P as a JSON integer: signed in a profile with negative counts (cg_diff's),
 * where the sums are two's complement; else unsigned, clamped as doc_u64() does. */
json_t *prof_report_cost(const struct profile *p, uint64_t v)
{
	return p->negative ? json_integer((json_int_t)(int64_t)v) : doc_u64(v);
}

/* PART's share of WHOLE, signed where P's costs are. */
static double cost_share(const struct profile *p, uint64_t part, uint64_t whole)
{
	if (!p->negative)
		return share(part, whole);
	return whole ? (double)(int64_t)part / (double)(int64_t)whole : 0.0;
}

/* The order of a top list: by cost, or where costs are signed by their size either way
 * (cg_annotate's order for cg_diff's files: the largest changes first). */
static uint64_t rank_key(const struct profile *p, uint64_t v)
{
	if (!p->negative || (int64_t)v >= 0)
		return v;
	return (uint64_t)0 - v;
}

/* a function in the order of a top list: its cost and what breaks ties, so that the
 * comparator needs no context */
struct ranked {
	uint64_t cost;
	const struct profile *p;
	size_t i;
};

static int cmp_cost(const void *x, const void *y)
{
	const struct ranked *ra = x, *rb = y;
	if (ra->cost != rb->cost)
		return ra->cost < rb->cost ? 1 : -1;
	/* ties in a stable, documented order: strcmp()'s of the names */
	int c = profile_name_cmp(ra->p, ra->i, rb->p, rb->i);
	if (c)
		return c;
	c = strcmp(profile_file(ra->p, ra->i), profile_file(rb->p, rb->i));
	return c ? c : strcmp(profile_obj(ra->p, ra->i), profile_obj(rb->p, rb->i));
}

json_t *prof_report_fn_ident(const struct profile *p, size_t i)
{
	const struct prof_fn *fn = &p->fns[i];
	json_t *o = json_object();
	struct prof_name name = { 0 };
	json_object_set_new(o, "name", doc_string(profile_name(p, i, &name)));
	prof_name_free(&name);
	/* the object file's name without its directory, which diff matches and budgets'
	 * object: patterns see: the directory of a JIT object is wherever augment wrote its
	 * output, often a temporary one, so documents of two runs would differ by it */
	const char *obj = profile_obj(p, i), *base = strrchr(obj, '/');
	json_object_set_new(o, "object", doc_string(base ? base + 1 : obj));
	json_object_set_new(o, "file", doc_string(profile_file(p, i)));
	json_object_set_new(o, "kind", json_string(profile_kind_name((enum prof_kind)fn->kind)));
	json_object_set_new(o, "jit", json_boolean(fn->jit));
	return o;
}

static json_t *fn_entry(const struct profile *p, size_t i, unsigned ev)
{
	const struct prof_fn *fn = &p->fns[i];
	json_t *o = prof_report_fn_ident(p, i);
	uint64_t self = profile_self(p, i)[ev], incl = profile_incl(p, i)[ev];
	json_object_set_new(o, "self", prof_report_cost(p, self));
	json_object_set_new(o, "self_share", json_real(cost_share(p, self, p->totals[ev])));
	/* a cachegrind file has no calls: these keys are null there, never missing */
	int cg = p->cachegrind;
	json_object_set_new(o, "inclusive", cg ? json_null() : doc_u64(incl));
	json_object_set_new(o, "inclusive_share", cg ? json_null() : json_real(share(incl, p->totals[ev])));
	json_object_set_new(o, "calls", cg ? json_null() : doc_u64(fn->calls));
	json_object_set_new(o, "self_calls", cg ? json_null() : json_boolean(fn->self_calls));
	json_object_set_new(o, "in_cycle", cg ? json_null() : json_boolean(fn->in_cycle));
	return o;
}

/* The lowest cost among the TOP largest of V[0..N) (0 < TOP < N), by a min-heap of TOP costs. */
static uint64_t top_threshold(const struct ranked *v, size_t n, size_t top)
{
	uint64_t *h = xmalloc(top * sizeof(*h));
	for (size_t i = 0; i < n; i++) {
		uint64_t c = v[i].cost;
		size_t k;
		if (i < top) {   /* sift up */
			for (k = i; k && h[(k - 1) / 2] > c; k = (k - 1) / 2)
				h[k] = h[(k - 1) / 2];
		} else if (c > h[0]) {   /* replace the root, sift down */
			for (k = 0;;) {
				size_t m = 2 * k + 1;
				if (m >= top)
					break;
				if (m + 1 < top && h[m + 1] < h[m])
					m++;
				if (h[m] >= c)
					break;
				h[k] = h[m];
				k = m;
			}
		} else {
			continue;
		}
		h[k] = c;
	}
	uint64_t t = h[0];
	free(h);
	return t;
}

/* The listed functions in cmp_cost's order, the first TOP of them. Only those that cost at
 * least the TOP-th largest cost are sorted: ties are ordered by name, and comparing
 * names (by their parts) for every function of a large profile, which repeats costs in
 * each copy of a function, took seconds. */
static json_t *top_list(const struct profile *p, unsigned ev, size_t top, int by_incl)
{
	struct ranked *v = xmalloc((p->nfns ? p->nfns : 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < p->nfns; i++)
		if (profile_listed(p, i))
			v[n++] = (struct ranked){ rank_key(p, by_incl ? profile_incl(p, i)[ev] : profile_self(p, i)[ev]), p, i };
	if (top && top < n) {
		uint64_t t = top_threshold(v, n, top);
		size_t m = 0;
		for (size_t i = 0; i < n; i++)   /* in index order, as the full sort saw them */
			if (v[i].cost >= t)
				v[m++] = v[i];
		n = m;
	}
	qsort(v, n, sizeof(*v), cmp_cost);
	json_t *a = json_array();
	for (size_t i = 0; i < n && i < top; i++)
		json_array_append_new(a, fn_entry(p, v[i].i, ev));
	free(v);
	return a;
}

json_t *prof_report_totals(const struct profile *p)
{
	json_t *tot = json_object();
	for (unsigned e = 0; e < p->nevents; e++)
		doc_set_key(tot, p->events[e], prof_report_cost(p, p->totals[e]));
	return tot;
}

json_t *prof_report_units(const struct profile *p)
{
	json_t *units = json_object();
	for (unsigned e = 0; e < p->nevents; e++) {
		const char *n = p->events[e], *open = strrchr(n, '(');
		size_t len = strlen(n);
		if (open && open > n && len - (size_t)(open - n) > 2 && n[len - 1] == ')') {
			char *u = xstrndup(open + 1, len - (size_t)(open - n) - 2);
			doc_set_key(units, n, doc_string(u));
			free(u);
		}
	}
	return units;
}

/* The file's summary: when it differs from the cost lines' sum (Xdebug's counts time
 * outside every function): callgrind_annotate's PROGRAM TOTALS. */
static int summary_differs(const struct profile *p)
{
	for (unsigned e = 0; p->summary && e < p->nevents; e++)
		if (p->summary[e] != p->totals[e])
			return 1;
	return 0;
}

static json_t *summary(const struct profile *p)
{
	if (!p->summary)
		return json_null();
	json_t *s = json_object();
	for (unsigned e = 0; e < p->nevents; e++)
		doc_set_key(s, p->events[e], doc_u64(p->summary[e]));
	return s;
}

static void totals_notes(const struct profile *p, json_t *notes)
{
	if (p->totals_calculated)
		json_array_append_new(notes, json_string(PROF_REPORT_NOTE_CALCULATED));
	if (summary_differs(p))
		json_array_append_new(notes, json_string(
			"the file's summary: line differs from what its cost lines add up to (Xdebug's "
			"time counts what ran outside every function it timed; its memory is the peak, "
			"not the sum of each function's growth): callgrind_annotate shows the summary "
			"as PROGRAM TOTALS and its percentages are of it; the totals and shares here "
			"are of the cost lines, whose self costs add up to 100%"));
	if (p->negative)
		json_array_append_new(notes, json_string(
			"the file has negative counts (cg_diff's output: the differences between two "
			"runs): costs, totals and shares are signed, and the lists put the largest "
			"changes either way first, as cg_annotate does"));
}

static json_t *opt_string(const char *s)
{
	return s ? doc_string(s) : json_null();
}

json_t *prof_report_scope(const struct profile *p)
{
	const struct profile_scope *sc = p->scope;
	json_t *s = json_object(), *f = json_null();
	if (sc && sc->focused) {
		f = json_object();
		json_object_set_new(f, "match", opt_string(sc->match));
		json_object_set_new(f, "pattern", opt_string(sc->pattern));
		json_object_set_new(f, "object", opt_string(sc->object));
		json_object_set_new(f, "file", opt_string(sc->file));
		json_t *fns = json_array();
		for (size_t i = 0; i < sc->nfocus; i++)
			json_array_append_new(fns, prof_report_fn_ident(p, sc->focus[i]));
		json_object_set_new(f, "functions", fns);
		json_object_set_new(f, "calls", doc_u64(sc->calls));
		json_t *tot = json_object();
		for (unsigned e = 0; e < p->nevents; e++)
			doc_set_key(tot, p->events[e], doc_u64(sc->profile_totals[e]));
		json_object_set_new(f, "profile_totals", tot);
	}
	json_object_set_new(s, "focus", f);
	json_object_set_new(s, "jit_only", json_boolean(sc && sc->jit_only));
	json_object_set_new(s, "fold_recursion", json_boolean(p->folded));
	return s;
}

void prof_report_scope_notes(const struct profile *p, json_t *notes)
{
	const struct profile_scope *sc = p->scope;
	if (!sc || !sc->focused)
		return;
	json_array_append_new(notes, json_string(PROF_REPORT_NOTE_FOCUS));
	if (sc->nfocus > 1)
		json_array_append_new(notes, json_pack("s+", "the focus is ",
			sc->nfocus == 2 ? "2 functions: their costs are added, and one that runs under the other counts "
					  "once, at its own root" : "several functions: their costs are added, and one that "
					  "runs under another counts once, at its own root"));
}

/* Per kind of code (enum prof_kind): how many functions, their self cost of EV, its share. */
static json_t *kinds(const struct profile *p, unsigned ev)
{
	uint64_t n[4] = { 0 }, self[4] = { 0 };
	for (size_t i = 0; i < p->nfns; i++) {
		n[p->fns[i].kind]++;
		self[p->fns[i].kind] += profile_self(p, i)[ev];
	}
	json_t *k = json_object();
	static const enum prof_kind order[] = { PROF_JIT, PROF_UNNAMED_JIT, PROF_NO_SYMBOL, PROF_NATIVE };
	for (size_t i = 0; i < 4; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "functions", doc_u64(n[order[i]]));
		json_object_set_new(o, "self", prof_report_cost(p, self[order[i]]));
		json_object_set_new(o, "share", json_real(cost_share(p, self[order[i]], p->totals[ev])));
		json_object_set_new(k, profile_kind_name(order[i]), o);
	}
	return k;
}

/* CPython's perf support (3.12 and later) writes one small trampoline per Python function,
 * which calls the interpreter: the JIT share of self cost is then near 0 by design, and a
 * report that says "JIT 0.05%" with no more misleads. Said when JIT functions carry under
 * 1% of EV's self cost while one of them is at least 10% inclusive. */
static void trampoline_note(json_t *notes, const struct profile *p, unsigned ev)
{
	uint64_t self = 0, top = 0;
	size_t top_fn = SIZE_MAX;
	for (size_t i = 0; i < p->nfns; i++) {
		if (!p->fns[i].jit)
			continue;
		self += profile_self(p, i)[ev];
		if (!p->cachegrind && (top_fn == SIZE_MAX || profile_incl(p, i)[ev] > top)) {
			top = profile_incl(p, i)[ev];
			top_fn = i;
		}
	}
	if (top_fn == SIZE_MAX || share(self, p->totals[ev]) >= 0.01 || share(top, p->totals[ev]) < 0.10)
		return;
	char a[32], b[32];
	struct prof_name buf = { 0 };
	const char *name = profile_name(p, top_fn, &buf);
	int cpython = !strncmp(name, "py::", 4);
	doc_percent(a, share(self, p->totals[ev]));
	doc_percent(b, share(top, p->totals[ev]));
	char *clean = doc_clean_utf8(name, strlen(name));
	json_array_append_new(notes, json_pack("s+++++++++", "JIT functions carry only ", a, " of ", p->events[ev],
		" as self cost, but ", clean, " is ", b, " inclusive: ",
		cpython ? "CPython's JIT code is trampolines (one per Python function, from its perf "
			  "support) that call the interpreter and run almost nothing themselves; their "
			  "inclusive cost is the time spent in each Python function"
			: "this runtime's JIT code looks like trampolines into its interpreter, which run "
			  "almost nothing themselves; read their inclusive cost"));
	free(clean);
	prof_name_free(&buf);
}

json_t *prof_report_build(const struct profile *p, unsigned ev, size_t top)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string("cgjit.report/2"));
	json_object_set_new(doc, "profile", doc_string(p->path));
	json_object_set_new(doc, "command", p->cmd ? doc_string(p->cmd) : json_null());
	json_object_set_new(doc, "format", json_string(p->cachegrind ? "cachegrind" : "callgrind"));
	json_object_set_new(doc, "parts", json_integer(p->parts));
	json_object_set_new(doc, "part", p->part ? json_integer(p->part) : json_null());
	json_object_set_new(doc, "event", doc_string(p->events[ev]));
	json_object_set_new(doc, "scope", prof_report_scope(p));
	json_object_set_new(doc, "inclusive", json_boolean(!p->cachegrind));
	json_object_set_new(doc, "totals", prof_report_totals(p));
	json_object_set_new(doc, "totals_calculated", json_boolean(p->totals_calculated));
	json_object_set_new(doc, "summary", summary(p));
	json_object_set_new(doc, "units", prof_report_units(p));
	json_object_set_new(doc, "function_count", doc_u64(p->nfns));
	json_object_set_new(doc, "kinds", kinds(p, ev));
	json_t *notes = json_array();
	totals_notes(p, notes);
	prof_report_scope_notes(p, notes);
	trampoline_note(notes, p, ev);
	json_object_set_new(doc, "notes", notes);
	json_object_set_new(doc, "functions", top_list(p, ev, top, 0));
	json_object_set_new(doc, "functions_by_inclusive", p->cachegrind ? json_array() : top_list(p, ev, top, 1));
	return doc;
}

/* ---- text and Markdown ---- */

static void fn_label(FILE *f, const json_t *fn, int markdown)
{
	const char *name = doc_get_str(fn, "name"), *obj = doc_get_str(fn, "object");
	const char *file = doc_get_str(fn, "file");
	const char *base = strrchr(obj, '/');
	base = base ? base + 1 : obj;
	if (markdown) {
		doc_md_cell(f, name);
		fputs(json_is_true(json_object_get(fn, "jit")) ? " **JIT**" : "", f);
		fputs(" | ", f);
		doc_md_cell(f, *base ? base : "-");
		fputs(" | ", f);
		doc_md_cell(f, file);
		return;
	}
	fprintf(f, "%s%s  [%s%s%s]", json_is_true(json_object_get(fn, "jit")) ? "JIT " : "", name,
		*base ? base : "", *base ? ", " : "", file);
}

/* DOC's list LIST: costs of the event EV (in its unit when the file names one: doc_cost()). */
static void render_list(FILE *f, const json_t *doc, const json_t *list, const char *title, const char *ev,
			int incl_avail, int markdown)
{
	char b1[48], b2[32], b3[48], b4[32], b5[32];
	if (markdown) {
		fprintf(f, "\n### %s (%s)\n\n", title, ev);
		fputs(incl_avail ? "| self | % | inclusive | % | calls | function | object | file |\n"
				   "|---:|---:|---:|---:|---:|---|---|---|\n"
				 : "| self | % | function | object | file |\n|---:|---:|---|---|---|\n", f);
	} else {
		fprintf(f, "\n%s (%s)\n", title, ev);
		if (incl_avail)
			fprintf(f, "%16s %7s %16s %7s %10s  %s\n", "self", "", "inclusive", "", "calls", "function  [object, file]");
		else
			fprintf(f, "%16s %7s  %s\n", "self", "", "function  [file]");
	}
	size_t i;
	json_t *fn;
	json_array_foreach(list, i, fn) {
		doc_cost_json(b1, json_object_get(fn, "self"), doc, ev);
		doc_percent(b2, doc_get_real(fn, "self_share"));
		if (incl_avail) {
			doc_cost(b3, doc_get_u64(fn, "inclusive"), doc, ev);
			doc_percent(b4, doc_get_real(fn, "inclusive_share"));
			doc_commas(b5, doc_get_u64(fn, "calls"));
		}
		if (markdown) {
			if (incl_avail)
				fprintf(f, "| %s | %s | %s | %s | %s | ", b1, b2, b3, b4, b5);
			else
				fprintf(f, "| %s | %s | ", b1, b2);
			fn_label(f, fn, 1);
			fputs(" |\n", f);
			continue;
		}
		if (incl_avail)
			fprintf(f, "%16s %7s %16s %7s %10s  ", b1, b2, b3, b4, b5);
		else
			fprintf(f, "%16s %7s  ", b1, b2);
		fn_label(f, fn, 0);
		fputc('\n', f);
	}
}

void prof_report_render_scope(const json_t *doc, FILE *f, int markdown)
{
	char b1[32], b2[32], b3[32], calls[32];
	const json_t *sc = json_object_get(doc, "scope"), *fo = json_object_get(sc, "focus");
	const char *ev = doc_get_str(doc, "event");
	if (json_is_object(fo)) {
		const json_t *fns = json_object_get(fo, "functions");
		const json_t *all = json_object_get(json_object_get(fo, "profile_totals"), ev);
		uint64_t t = doc_get_u64(json_object_get(doc, "totals"), ev);
		uint64_t whole = json_is_integer(all) ? (uint64_t)json_integer_value(all) : 0;
		doc_commas(b1, t);
		doc_commas(b2, whole);
		doc_percent(b3, whole ? (double)t / (double)whole : 0.0);
		size_t n = json_array_size(fns), i;
		json_t *fn;
		if (markdown) {
			fprintf(f, "Focus: %s ", doc_get_str(fo, "match"));
			doc_md_cell(f, doc_get_str(fo, "pattern"));
			fprintf(f, ", %zu function%s, %s calls: %s %s, %s of the profile's %s; the costs below "
				"are those under it (100%% = the focus)\n\n", n, n == 1 ? "" : "s",
				doc_commas(calls, doc_get_u64(fo, "calls")), b1, ev, b3, b2);
		} else {
			fprintf(f, "focus     %s '%s': %zu function%s, %s calls; %s %s, %s of the profile's %s "
				"(100%% below)\n", doc_get_str(fo, "match"), doc_get_str(fo, "pattern"), n,
				n == 1 ? "" : "s", doc_commas(calls, doc_get_u64(fo, "calls")), b1, ev, b3, b2);
			json_array_foreach(fns, i, fn) {
				if (i == 10) {
					fprintf(f, "          ... and %zu more\n", n - 10);
					break;
				}
				fputs("          ", f);
				fn_label(f, fn, 0);
				fputc('\n', f);
			}
		}
	}
	if (json_is_true(json_object_get(sc, "jit_only")))
		fputs(markdown ? "Only JIT functions are listed (`--jit-only`); the totals are all code's.\n\n"
			       : "scope     JIT functions only (--jit-only); the totals are all code's\n", f);
}

/* The shares of code that has no name: JIT code no map names, and code without symbols in
 * ELF files. They are different stories (the first is a reason to run augment, the second
 * a stripped library), so they are told apart. */
static void render_kinds(FILE *f, const json_t *doc, const char *ev, int markdown)
{
	char b1[32], b2[32], b3[32];
	const json_t *k = json_object_get(doc, "kinds");
	const json_t *jit = json_object_get(k, "jit"), *unnamed = json_object_get(k, "unnamed_jit");
	const json_t *nosym = json_object_get(k, "no_symbol");
	uint64_t nj = doc_get_u64(jit, "functions");
	doc_percent(b1, doc_get_real(jit, "share"));
	doc_percent(b2, doc_get_real(unnamed, "share"));
	doc_percent(b3, doc_get_real(nosym, "share"));
	const char *hint = doc_get_real(unnamed, "share") > 0.01 && !nj
		? (markdown ? " (run `cgjit augment` to name JIT code)" : " (run cgjit augment to name JIT code)") : "";
	if (markdown)
		fprintf(f, "\nJIT functions: %llu, %s of %s; unnamed JIT code (`0x…` in `???`): %s%s; "
			"code without symbols (`0x…` in an ELF file): %s\n", (unsigned long long)nj, b1, ev, b2, hint, b3);
	else
		fprintf(f, "JIT       %llu functions, %s of %s\nunnamed   JIT code (0x... in ?\?\?) %s%s; "
			"code without symbols (0x... in an ELF file) %s\n", (unsigned long long)nj, b1, ev, b2, hint, b3);
}

void prof_report_render(const json_t *doc, FILE *f, int markdown)
{
	char b1[48];
	const char *ev = doc_get_str(doc, "event");
	int incl = json_is_true(json_object_get(doc, "inclusive"));
	const json_t *tot = json_object_get(doc, "totals");
	json_int_t parts = json_integer_value(json_object_get(doc, "parts"));
	const json_t *part = json_object_get(doc, "part"), *cmd = json_object_get(doc, "command");
	if (markdown) {
		fprintf(f, "## Profile `%s`\n\n", doc_get_str(doc, "profile"));
		if (json_is_string(cmd)) {
			fputs("Command: ", f);
			doc_md_cell(f, json_string_value(cmd));
			fputs("\n\n", f);
		}
	} else {
		fprintf(f, "profile   %s\n", doc_get_str(doc, "profile"));
		if (json_is_string(cmd))
			fprintf(f, "command   %s\n", json_string_value(cmd));
	}
	prof_report_render_scope(doc, f, markdown);
	fprintf(f, markdown ? "%s, %lld part%s%s\n\n| event | total |\n|---|---:|\n" : "format    %s, %lld part%s%s\n",
		doc_get_str(doc, "format"), (long long)parts, parts == 1 ? "" : "s",
		json_is_integer(part) ? " (one read: --part)" : parts > 1 ? " (summed)" : "");
	const char *key;
	json_t *v;
	const char *calc = json_is_true(json_object_get(doc, "totals_calculated")) ? " (calculated)" : "";
	json_object_foreach((json_t *)tot, key, v) {
		doc_cost_json(b1, v, doc, key);
		fprintf(f, markdown ? "| %s | %s%s |\n" : "total     %-10s %16s%s\n", key, b1, calc);
	}
	const json_t *sum = json_object_get(doc, "summary");
	int differs = 0;
	json_object_foreach((json_t *)sum, key, v)
		differs |= doc_get_u64(sum, key) != doc_get_u64(tot, key);
	json_object_foreach((json_t *)(differs ? sum : NULL), key, v) {
		doc_cost(b1, doc_get_u64(sum, key), doc, key);
		fprintf(f, markdown ? "| %s (the file's summary:) | %s |\n" : "summary   %-10s %16s\n", key, b1);
	}
	render_kinds(f, doc, ev, markdown);
	size_t i;
	json_array_foreach(json_object_get(doc, "notes"), i, v) {
		if (!markdown) {
			fprintf(f, "note      %s\n", json_string_value(v));
			continue;
		}
		fputs("\nNote: ", f);
		doc_md_text(f, json_string_value(v));
		fputc('\n', f);
	}
	if (!incl)
		fprintf(f, markdown ? "\nA cachegrind profile has no calls: self cost only, inclusive cost does not exist there.\n"
				    : "cachegrind profile: no calls, so self cost only (inclusive cost does not exist there)\n");
	render_list(f, doc, json_object_get(doc, "functions"), "Top functions by self cost", ev, incl, markdown);
	if (incl)
		render_list(f, doc, json_object_get(doc, "functions_by_inclusive"), "Top functions by inclusive cost", ev, 1, markdown);
}
