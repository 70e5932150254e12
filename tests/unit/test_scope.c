/* Unit tests for prof_scope.c and the costs under a focus (flamegraph_scope()): a callee
 * shared by the focus and another caller, recursion (the copies folded and a call of
 * itself), a cycle through the focus, two matches one under the other, no match (with the
 * names suggested), a cachegrind file; JIT code only in report and diff; the report's
 * header and notes; the suggestions for names that match nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "report/doc_out.h"
#include "helpers.h"
#include "prof_names.h"
#include "report/prof_diff.h"
#include "report/prof_report.h"
#include "report/prof_scope.h"
#include "report/profile.h"

static const struct fn_view *find(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nfns; i++)
		if (!strcmp(fn_name(p, i), name))
			return fn_view(p, i);
	return NULL;
}

static uint32_t fn(struct profile_builder *b, const char *obj, const char *name)
{
	return profile_builder_fn(b, &(struct prof_fn_key){ obj, strlen(obj), "x.c", 3, name, strlen(name) });
}

static void self(struct profile_builder *b, uint32_t f, uint64_t v)
{
	profile_builder_self(b, f, &v);
}

static void call(struct profile_builder *b, uint32_t from, uint32_t to, uint64_t count, uint64_t v)
{
	profile_builder_call(b, from, to, count, &v);
}

static struct profile_builder *start(struct profile *p)
{
	static const char *const ev[] = { "Ir" };
	memset(p, 0, sizeof(*p));
	p->path = strdup("t.out");
	return profile_builder_new(p, 1, ev);
}

/* main (5) calls F twice (100) and g once (40); F (20) calls g 3 times (30) and h (50);
 * g (70), h (50): g is shared by F and main. Total 145. */
static void shared(struct profile *p)
{
	struct profile_builder *b = start(p);
	uint32_t m = fn(b, "/bin/x", "main"), f = fn(b, "/bin/x", "F"), g = fn(b, "/bin/x", "g");
	uint32_t h = fn(b, "/bin/x", "h");
	self(b, m, 5);
	self(b, f, 20);
	self(b, g, 70);
	self(b, h, 50);
	call(b, m, f, 2, 100);
	call(b, m, g, 1, 40);
	call(b, f, g, 3, 30);
	call(b, f, h, 1, 50);
	profile_builder_finish(b);
}

static struct profile scoped(const struct profile *p, const struct prof_select *s, int jit_only)
{
	struct prof_scope_opts o = { s, jit_only };
	struct profile out;
	struct diag d = { 0 };
	if (prof_scope_make(p, &o, 0, &out, &d) < 0)
		fail_msg("%s", d.msg);
	return out;
}

static char *render_text(const json_t *doc, void (*r)(const json_t *, FILE *, int), int md)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	r(doc, m, md);
	fclose(m);
	return buf;
}

static void test_scope__shared_callee(void **state)
{
	(void)state;
	struct profile p;
	shared(&p);
	struct prof_select s = { .name = "F" };
	struct profile q = scoped(&p, &s, 0);
	assert_int_equal(q.totals[0], 100);   /* F's self cost and calls out */
	assert_null(find(&q, "main"));        /* nothing of main runs under F */
	const struct fn_view *F = find(&q, "F"), *g = find(&q, "g"), *h = find(&q, "h");
	assert_int_equal(F->self[0], 20);
	assert_int_equal(F->incl[0], 100);
	assert_int_equal(F->calls, 2);         /* the calls into the focus */
	assert_int_equal(g->self[0], 30);      /* g's 70 shared by its callers' arcs: 30 from F */
	assert_int_equal(g->incl[0], 30);
	assert_int_equal(g->calls, 3);         /* main's call is not under F */
	assert_int_equal(h->self[0], 50);
	assert_int_equal(q.scope->profile_totals[0], 145);
	assert_int_equal(q.scope->nfocus, 1);
	assert_int_equal(q.scope->calls, 2);

	json_t *doc = prof_report_build(&q, 0, 10);
	const json_t *fo = json_object_get(json_object_get(doc, "scope"), "focus");
	assert_string_equal(doc_get_str(fo, "match"), "name");
	assert_string_equal(doc_get_str(fo, "pattern"), "F");
	assert_true(json_is_null(json_object_get(fo, "object")));
	assert_int_equal(doc_get_u64(fo, "calls"), 2);
	assert_int_equal(doc_get_u64(json_object_get(fo, "profile_totals"), "Ir"), 145);
	assert_int_equal(json_array_size(json_object_get(fo, "functions")), 1);
	const json_t *top = json_array_get(json_object_get(doc, "functions_by_inclusive"), 0);
	assert_string_equal(doc_get_str(top, "name"), "F");
	assert_true(doc_get_real(top, "inclusive_share") == 1.0);   /* the done-when: 100% */
	assert_true(doc_get_real(json_array_get(json_object_get(doc, "functions"), 0), "self_share") == 0.5);
	assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "notes"), 0)), PROF_REPORT_NOTE_FOCUS);
	char *tx = render_text(doc, prof_report_render, 0);
	assert_non_null(strstr(tx, "focus     name 'F': 1 function, 2 calls; 100 Ir, 68.97% of the profile's 145 (100% below)\n"));
	assert_non_null(strstr(tx, "total     Ir                      100\n"));
	free(tx);
	char *md = render_text(doc, prof_report_render, 1);
	assert_non_null(strstr(md, "Focus: name `F`, 1 function, 2 calls: 100 Ir, 68.97% of the profile's 145"));
	free(md);
	json_decref(doc);
	profile_free(&q);

	/* g's own focus: all 70, called from both */
	s.name = "g";
	q = scoped(&p, &s, 0);
	assert_int_equal(q.totals[0], 70);
	assert_int_equal(find(&q, "g")->calls, 4);
	assert_int_equal(q.nfns, 1);
	profile_free(&q);
	profile_free(&p);
}

/* f calls its recursion copy f'2, folded into f: a call of f by itself, which costs nothing
 * more (F inside F counts once). g calls f. */
static void test_scope__recursion(void **state)
{
	(void)state;
	char *path = tmp_file("events: Ir\nfl=a.c\nfn=f\n1 5\ncfn=f'2\ncalls=1 1\n1 20\n"
			      "fn=f'2\n1 12\ncfn=f'2\ncalls=1 1\n1 8\ncfn=h\ncalls=1 1\n1 3\n"
			      "fn=h\n1 3\nfn=g\n1 3\ncfn=f\ncalls=2 1\n1 28\ntotals: 23\n");
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { .fold_recursion = 1 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	struct prof_select s = { .name = "f" };
	struct profile q = scoped(&p, &s, 0);
	assert_int_equal(q.totals[0], 20);   /* f's 17 and h's 3, not the calls of itself again */
	assert_int_equal(find(&q, "f")->incl[0], 20);
	assert_int_equal(find(&q, "f")->self[0], 17);
	assert_int_equal(find(&q, "h")->self[0], 3);
	assert_int_equal(find(&q, "f")->calls, 2);
	assert_null(find(&q, "g"));
	profile_free(&q);
	profile_free(&p);
	unlink(path);
	free(path);
}

/* x calls F (70); F (30) calls G (50); G (40) calls F again (10: the inner F's self cost).
 * F and G are a cycle: under F, G's 40 and all of F's 30, and F counts once, at 100%. */
static void test_scope__cycle_through_focus(void **state)
{
	(void)state;
	struct profile p;
	struct profile_builder *b = start(&p);
	uint32_t x = fn(b, "/bin/x", "x"), f = fn(b, "/bin/x", "F"), g = fn(b, "/bin/x", "G");
	self(b, f, 30);
	self(b, g, 40);
	call(b, x, f, 1, 70);
	call(b, f, g, 2, 50);
	call(b, g, f, 1, 10);
	profile_builder_finish(b);
	assert_true(find(&p, "F")->in_cycle);
	struct prof_select s = { .name = "F" };
	struct profile q = scoped(&p, &s, 0);
	assert_int_equal(q.totals[0], 70);
	assert_int_equal(find(&q, "F")->incl[0], 70);
	assert_int_equal(find(&q, "F")->self[0], 30);
	assert_int_equal(find(&q, "G")->self[0], 40);
	assert_int_equal(find(&q, "G")->incl[0], 40);
	assert_false(find(&q, "G")->in_cycle);   /* the cycle is cut at the focus */
	assert_int_equal(find(&q, "F")->calls, 2);   /* from x, and from G: outside the focus */
	profile_free(&q);
	profile_free(&p);
}

/* main calls F1 (60); F1 (10) calls F2 (50); F2 (30) calls h (20). glob F*: both, F2
 * under F1 counted once, at its own root. */
static void test_scope__two_matches(void **state)
{
	(void)state;
	struct profile p;
	struct profile_builder *b = start(&p);
	uint32_t m = fn(b, "/bin/x", "main"), f1 = fn(b, "/bin/x", "F1"), f2 = fn(b, "/bin/x", "F2");
	uint32_t h = fn(b, "/bin/x", "h");
	self(b, m, 1);
	self(b, f1, 10);
	self(b, f2, 30);
	self(b, h, 20);
	call(b, m, f1, 1, 60);
	call(b, f1, f2, 4, 50);
	call(b, f2, h, 1, 20);
	profile_builder_finish(b);
	struct prof_select s = { .glob = "F*" };
	struct profile q = scoped(&p, &s, 0);
	assert_int_equal(q.totals[0], 60);
	assert_int_equal(q.scope->nfocus, 2);
	assert_int_equal(q.scope->calls, 1);   /* the focus entered once, from main */
	assert_int_equal(find(&q, "F1")->incl[0], 10);
	assert_int_equal(find(&q, "F2")->incl[0], 50);
	assert_int_equal(find(&q, "h")->self[0], 20);
	json_t *doc = prof_report_build(&q, 0, 10);
	const json_t *notes = json_object_get(doc, "notes");
	assert_int_equal(json_array_size(notes), 2);
	assert_non_null(strstr(json_string_value(json_array_get(notes, 1)), "2 functions: their costs are added"));
	char *tx = render_text(doc, prof_report_render, 0);
	assert_non_null(strstr(tx, "focus     glob 'F*': 2 functions, 1 calls; 60 Ir"));
	free(tx);
	json_decref(doc);
	profile_free(&q);

	/* narrowed by object: none of them is in /bin/y */
	s.object = "y";
	struct prof_scope_opts o = { &s, 0 };
	struct diag d = { 0 };
	assert_int_equal(prof_scope_make(&p, &o, 0, &q, &d), -1);
	assert_non_null(strstr(d.msg, "t.out: the focus glob 'F*' in object y matches no function"));
	profile_free(&q);
	profile_free(&p);
}

/* A selector that names nothing: the closest names, JIT first. */
static void test_scope__no_match_suggests(void **state)
{
	(void)state;
	struct profile p;
	struct profile_builder *b = start(&p);
	uint32_t a = fn(b, "/tmp/perf-1.map", "JS:*bubbleSort /t/x.js:3:20");
	uint32_t c = fn(b, "/bin/x", "bubble_sort_native");
	uint32_t e = fn(b, "/bin/x", "main");
	self(b, a, 10);
	self(b, c, 90);
	self(b, e, 1);
	profile_builder_finish(b);
	struct prof_select s = { .name = "bubbleSort" };
	struct prof_scope_opts o = { &s, 0 };
	struct profile q;
	struct diag d = { 0 };
	assert_int_equal(prof_scope_make(&p, &o, 0, &q, &d), -1);
	assert_string_equal(d.msg, "t.out: the focus name 'bubbleSort' matches no function; did you mean "
			    "'JS:*bubbleSort /t/x.js:3:20' or 'bubble_sort_native'?");
	profile_free(&q);
	size_t idx[3];
	/* a typo (one letter left out), and case: the closest first (bubble_sort_native is two
	 * edits away) */
	s.name = "BubleSort";
	assert_int_equal(prof_select_suggest(&p, &s, idx, 3), 2);
	assert_string_equal(fn_name(&p, idx[0]), "JS:*bubbleSort /t/x.js:3:20");
	assert_string_equal(fn_name(&p, idx[1]), "bubble_sort_native");
	/* a glob: its longest literal run, "bubblesort " */
	s.name = NULL;
	s.glob = "JS:*bubblesort *";
	assert_int_equal(prof_select_suggest(&p, &s, idx, 3), 2);
	assert_string_equal(fn_name(&p, idx[0]), "JS:*bubbleSort /t/x.js:3:20");
	/* nothing like it */
	s.glob = "quicksort";
	assert_int_equal(prof_select_suggest(&p, &s, idx, 3), 0);
	assert_null(prof_select_hint(&p, &s));
	/* a short name is suggested only where it is in a name as it is */
	s.glob = NULL;
	s.name = "mian";
	assert_int_equal(prof_select_suggest(&p, &s, idx, 3), 0);
	profile_free(&p);
}

static void test_scope__cachegrind(void **state)
{
	(void)state;
	char *path = tmp_file("desc: x\ncmd: ./a\nevents: Ir\nfl=a.c\nfn=main\n1 5\nsummary: 5\n");
	struct profile p, q;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	struct prof_select s = { .name = "main" };
	struct prof_scope_opts so = { &s, 0 };
	assert_int_equal(prof_scope_make(&p, &so, 0, &q, &d), -1);
	assert_non_null(strstr(d.msg, "a cachegrind file records no calls"));
	profile_free(&q);
	profile_free(&p);
	unlink(path);
	free(path);
}

/* --jit-only: the lists hold JIT functions, the totals and kinds are all code's; a diff
 * compares and counts JIT functions only. */
static void test_scope__jit_only(void **state)
{
	(void)state;
	struct profile p, p2;
	for (int k = 0; k < 2; k++) {
		struct profile *t = k ? &p2 : &p;
		struct profile_builder *b = start(t);
		uint32_t m = fn(b, "/bin/x", "main"), j = fn(b, "/tmp/perf-7.map", "JS:*f a.js:1");
		uint32_t n = fn(b, "/bin/x", "native");
		self(b, m, 50);
		self(b, j, 30 + 10 * (uint64_t)k);
		self(b, n, 20 + 5 * (uint64_t)k);
		call(b, m, j, 1, 40 + 15 * (uint64_t)k);
		call(b, j, n, 1, 10 + 5 * (uint64_t)k);
		profile_builder_finish(b);
	}
	struct profile q = scoped(&p, NULL, 1);
	json_t *doc = prof_report_build(&q, 0, 10);
	assert_int_equal(json_array_size(json_object_get(doc, "functions")), 1);
	assert_string_equal(doc_get_str(json_array_get(json_object_get(doc, "functions"), 0), "name"), "JS:*f a.js:1");
	assert_int_equal(doc_get_u64(json_object_get(doc, "totals"), "Ir"), 100);
	assert_int_equal(doc_get_u64(json_object_get(json_object_get(doc, "kinds"), "native"), "functions"), 2);
	assert_true(json_is_true(json_object_get(json_object_get(doc, "scope"), "jit_only")));
	char *tx = render_text(doc, prof_report_render, 0);
	assert_non_null(strstr(tx, "scope     JIT functions only (--jit-only); the totals are all code's\n"));
	free(tx);
	json_decref(doc);
	struct profile q2 = scoped(&p2, NULL, 1);
	struct diag d = { 0 };
	doc = prof_diff_build(&q, &q2, NULL, 10, 0, &d);
	assert_int_equal(json_array_size(json_object_get(doc, "functions")), 1);
	assert_int_equal(doc_get_u64(doc, "changed"), 1);   /* main and native changed too */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(doc, "functions"), 0),
							     "self_change")), 10);
	json_decref(doc);
	profile_free(&q);
	profile_free(&q2);
	profile_free(&p);
	profile_free(&p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope__shared_callee),
		cmocka_unit_test(test_scope__recursion),
		cmocka_unit_test(test_scope__cycle_through_focus),
		cmocka_unit_test(test_scope__two_matches),
		cmocka_unit_test(test_scope__no_match_suggests),
		cmocka_unit_test(test_scope__cachegrind),
		cmocka_unit_test(test_scope__jit_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
