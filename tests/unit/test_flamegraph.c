/* Unit tests for flamegraph.c and flamegraph_svg.c: stacks built from call arcs (widths
 * split by the arcs, direct recursion, a cycle of two functions that must not loop, a
 * thread started through clone), the minimum width and depth limit, the folded output
 * exactly, and the SVG's escaping and frame attributes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "diag.h"
#include "flamegraph.h"
#include "flamegraph_svg.h"
#include "helpers.h"
#include "io.h"
#include "profile.h"

static uint32_t fn(struct profile_builder *b, const char *name)
{
	return profile_builder_fn(b, "/bin/x", 6, "x.c", 3, name, strlen(name));
}

static void self(struct profile_builder *b, uint32_t f, uint64_t v)
{
	profile_builder_self(b, f, &v);
}

static void call(struct profile_builder *b, uint32_t from, uint32_t to, uint64_t v)
{
	profile_builder_call(b, from, to, 1, &v);
}

/* main (self 10) calls a (60) and c (50). a (self 40) calls itself (25: direct recursion)
 * and b (20, self 20). c (self 10) and d (self 30) call each other: c -> d 40, d -> c 15;
 * d -> e 10 (self 10). Total 120, every cost from main. */
static void build(struct profile *p)
{
	static const char *const ev[] = { "Ir" };
	memset(p, 0, sizeof(*p));
	struct profile_builder *b = profile_builder_new(p, 1, ev);
	uint32_t m = fn(b, "main"), a = fn(b, "a"), bb = fn(b, "b"), c = fn(b, "c");
	uint32_t d = fn(b, "d"), e = fn(b, "e");
	self(b, m, 10);
	self(b, a, 40);
	self(b, bb, 20);
	self(b, c, 10);
	self(b, d, 30);
	self(b, e, 10);
	call(b, m, a, 60);
	call(b, m, c, 50);
	call(b, a, a, 25);
	call(b, a, bb, 20);
	call(b, c, d, 40);
	call(b, d, c, 15);
	call(b, d, e, 10);
	profile_builder_finish(b);
}

/* Writes the folded stacks (or the SVG) of P into a string. */
static char *render(const struct profile *p, const struct flamegraph_opts *o, int svg,
		    const struct profile *base)
{
	char *path = tmp_file("");
	struct diag d = { 0 };
	struct output *out = output_open(path, &d);
	assert_non_null(out);
	struct flamegraph *g = flamegraph_new(p, o);
	int rc;
	if (svg) {
		struct flamegraph_svg_opts so = { "test", base, 0 };
		rc = flamegraph_svg_write(g, &so, out, &d);
	} else {
		rc = flamegraph_write_folded(g, out, &d);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(output_commit(out, &d), 0);
	flamegraph_free(g);
	char *s = slurp(path);
	unlink(path);
	free(path);
	return s;
}

static void test_flamegraph__folded(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	struct flamegraph_opts o = { 0, 0.0, 64 };
	char *s = render(&p, &o, 0, NULL);
	/* a's recursion stays in a; d -> c is not entered again (c is on the stack): its 15
	 * stay in d, and the values add up to 120 */
	assert_string_equal(s,
		"main 10\n"
		"main;a 40\n"
		"main;a;b 20\n"
		"main;c 10\n"
		"main;c;d 30\n"
		"main;c;d;e 10\n");
	free(s);
	profile_free(&p);
}

struct seen {
	size_t n;
	struct { const char *name; unsigned depth; uint64_t x, width, self; } f[16];
	uint64_t children[16];   /* per depth: widths of the children of the open frame */
};

static int collect(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct seen *s = ctx;
	const struct flamegraph_frame *fr = &stack[depth];
	if (leave) {
		/* the children drawn never outgrow their parent, and the rest is its self cost */
		assert_int_equal(s->children[depth + 1] + fr->self, fr->width);
		s->children[depth + 1] = 0;
		return 0;
	}
	assert_true(s->n < 16);
	s->f[s->n].name = fr->fn == FLAMEGRAPH_ROOT ? "all" : NULL;
	s->f[s->n].depth = depth;
	s->f[s->n].x = fr->x;
	s->f[s->n].width = fr->width;
	s->f[s->n].self = fr->self;
	s->n++;
	if (depth)
		s->children[depth] += fr->width;
	return 0;
}

static void test_flamegraph__widths(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	struct flamegraph_opts o = { 0, 0.0, 64 };
	struct flamegraph *g = flamegraph_new(&p, &o);
	struct seen s = { 0 };
	assert_int_equal(flamegraph_walk(g, collect, &s), 0);
	/* all, main, a, b, c, d, e: depth, x, width, self */
	static const uint64_t want[7][4] = {
		{ 0, 0, 120, 0 }, { 1, 0, 120, 10 }, { 2, 0, 60, 40 }, { 3, 0, 20, 20 },
		{ 2, 60, 50, 10 }, { 3, 60, 40, 30 }, { 4, 60, 10, 10 },
	};
	assert_int_equal(s.n, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(s.f[i].depth, want[i][0]);
		assert_int_equal(s.f[i].x, want[i][1]);
		assert_int_equal(s.f[i].width, want[i][2]);
		assert_int_equal(s.f[i].self, want[i][3]);
	}
	assert_string_equal(s.f[0].name, "all");
	/* the same walk again (the stack is clean) */
	struct seen again = { 0 };
	assert_int_equal(flamegraph_walk(g, collect, &again), 0);
	assert_int_equal(again.n, 7);
	flamegraph_free(g);
	profile_free(&p);
}

static void test_flamegraph__limits(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	/* 20% of 120 = 24: b (20) and e (10) are left out, their cost stays in a and d */
	struct flamegraph_opts o = { 0, 0.2, 64 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "main 10\nmain;a 60\nmain;c 10\nmain;c;d 40\n");
	free(s);
	/* two frames below the root: a and c keep what they call */
	o = (struct flamegraph_opts){ 0, 0.0, 2 };
	s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "main 10\nmain;a 60\nmain;c 50\n");
	free(s);
	profile_free(&p);
}

/* A thread: start (self 5) calls clone (2, self 2); clone's second return calls thread
 * (100, self 100), far more than came into clone. clone starts 100 of its own. */
static void test_flamegraph__thread_entry(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t st = fn(b, "start"), cl = fn(b, "clone"), th = fn(b, "thread");
	self(b, st, 5);
	self(b, cl, 2);
	self(b, th, 100);
	call(b, st, cl, 2);
	call(b, cl, th, 100);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64 };
	char *s = render(&p, &o, 0, NULL);
	/* clone's 2 under start hold a sliver of thread's cost (2 * 100 / 100) */
	assert_string_equal(s, "clone;thread 100\nstart 5\nstart;clone;thread 2\n");
	free(s);
	profile_free(&p);
}

/* Names as folded frames and as XML: ';' and line breaks, markup, bytes not UTF-8. */
static void test_flamegraph__names(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "Lfoo;::bar\nx"), w = fn(b, "<a&b> \xff\xc3\xa9");
	self(b, m, 3);
	self(b, w, 7);
	call(b, m, w, 7);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "Lfoo:::bar x 3\nLfoo:::bar x;<a&b> \xff\xc3\xa9 7\n");
	free(s);
	s = render(&p, &o, 1, NULL);
	assert_non_null(strstr(s, "<title>&lt;a&amp;b&gt; \xef\xbf\xbd\xc3\xa9\n7 Ir (70.00%), self 7\n/bin/x, x.c</title>"));
	assert_non_null(strstr(s, "<g class=\"f\" data-x=\"0\" data-v=\"10\" data-d=\"0\">"));
	assert_non_null(strstr(s, "<g class=\"f\" data-x=\"0\" data-v=\"7\" data-d=\"2\">"));
	assert_null(strstr(s, "\xff"));
	free(s);
	profile_free(&p);
}

/* --diff: the tooltip has the change of self cost against the base, matched by name. */
static void test_flamegraph__svg_diff(void **state)
{
	(void)state;
	struct profile p, base;
	build(&p);
	static const char *const ev[] = { "Ir" };
	memset(&base, 0, sizeof(base));
	struct profile_builder *b = profile_builder_new(&base, 1, ev);
	uint32_t m = fn(b, "main"), a = fn(b, "a");
	self(b, m, 10);
	self(b, a, 10);
	call(b, m, a, 10);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64 };
	char *s = render(&p, &o, 1, &base);
	assert_non_null(strstr(s, "Differential flame graph: test against "));
	assert_non_null(strstr(s, "self 10 -> 40 (+30, +300.00%)"));
	assert_non_null(strstr(s, "not in the base profile (self 20)"));
	/* a grew the most: full red */
	assert_non_null(strstr(s, "fill=\"rgb(222,36,36)\""));
	free(s);
	profile_free(&p);
	profile_free(&base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flamegraph__folded),
		cmocka_unit_test(test_flamegraph__widths),
		cmocka_unit_test(test_flamegraph__limits),
		cmocka_unit_test(test_flamegraph__thread_entry),
		cmocka_unit_test(test_flamegraph__names),
		cmocka_unit_test(test_flamegraph__svg_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
