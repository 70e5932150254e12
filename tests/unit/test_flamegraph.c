/* Unit tests for flamegraph.c (with flamegraph_model.c, flamegraph_scope.c) and
 * flamegraph_svg.c: stacks built from call arcs (widths split by the arcs, direct recursion, cycles of two and three functions entered at two
 * members, a cycle nobody calls, a callee shared by two callers, arcs that say more than the callee spends, a
 * thread started through clone), each function's frames carrying its self cost, the
 * elision frames of the minimum width and depth limit, the frame cap, the folded output
 * exactly (control characters too), and the SVG's escaping and frame attributes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/diag.h"
#include "report/flamegraph.h"
#include "report/flamegraph_svg.h"
#include "helpers.h"
#include "prof_names.h"
#include "core/io.h"
#include "report/profile.h"

static uint32_t fn(struct profile_builder *b, const char *name)
{
	return profile_builder_fn(b, &(struct prof_fn_key){ "/bin/x", 6, "x.c", 3, name, strlen(name) });
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
		struct flamegraph_base fb = { 0 };
		if (base)
			flamegraph_base_make(&fb, base, 0, p);
		struct flamegraph_svg_opts so = { "test", base ? &fb : NULL, NULL, 0, NULL };
		rc = flamegraph_svg_write(g, &so, out, &d);
		flamegraph_base_free(&fb);
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
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	/* a's recursion is inside a; c and d are one component entered at c: its spanning tree
	 * is c -> d (d -> c is not followed again), and the values add up to 120 */
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
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
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

/* Per function: the self costs of its frames, and how many frames it has. */
struct tally {
	uint64_t drawn[16], elided, total;
	size_t frames[16], nframes;
};

static int tally_visit(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct tally *t = ctx;
	const struct flamegraph_frame *fr = &stack[depth];
	if (leave)
		return 0;
	t->nframes++;
	t->total += fr->self;
	if (fr->fn == FLAMEGRAPH_ELIDED) {
		t->elided += fr->self;
	} else if (fr->fn != FLAMEGRAPH_ROOT) {
		assert_true(fr->fn < 16);
		t->drawn[fr->fn] += fr->self;
		t->frames[fr->fn]++;
	}
	return 0;
}

/* Walks P's graph: the frames' self costs add up to the total, and every function's
 * frames carry its self cost, exactly (SLACK 0) or, where widths do not divide evenly,
 * within the rounding of less than one unit per frame (docs/flamegraph.md section 1). */
static void check_selfs(const struct profile *p, const struct flamegraph_opts *o, int slack)
{
	struct flamegraph *g = flamegraph_new(p, o);
	struct tally t = { 0 };
	assert_int_equal(flamegraph_walk(g, tally_visit, &t), 0);
	assert_int_equal(t.total, p->totals[0]);
	assert_int_equal(t.elided, 0);
	for (size_t f = 0; f < p->nfns; f++) {
		uint64_t s = profile_self(p, f)[0];
		if (!slack) {
			assert_int_equal(t.drawn[f], s);
			continue;
		}
		uint64_t diff = t.drawn[f] > s ? t.drawn[f] - s : s - t.drawn[f];
		assert_true(diff < t.frames[f] || diff == 0);
	}
	flamegraph_free(g);
}

static void test_flamegraph__selfs_exact(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	check_selfs(&p, &o, 0);
	profile_free(&p);
}

/* s (self 30, calls t 30, t self 30) is called by a (40) and b (20) with different arc
 * costs; main (self 10) calls a (60) and b (30); a has self 20, b 10. Total 100. */
static void test_flamegraph__shared_callee(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "main"), a = fn(b, "a"), bb = fn(b, "b"), sh = fn(b, "s"), t = fn(b, "t");
	self(b, m, 10);
	self(b, a, 20);
	self(b, bb, 10);
	self(b, sh, 30);
	self(b, t, 30);
	call(b, m, a, 60);
	call(b, m, bb, 30);
	call(b, a, sh, 40);
	call(b, bb, sh, 20);
	call(b, sh, t, 30);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	/* each frame of s splits as s does: half its own cost, half t's */
	assert_string_equal(s,
		"main 10\n"
		"main;a 20\n"
		"main;a;s 20\n"
		"main;a;s;t 20\n"
		"main;b 10\n"
		"main;b;s 10\n"
		"main;b;s;t 10\n");
	free(s);
	check_selfs(&p, &o, 0);
	profile_free(&p);
}

/* Arcs that contradict each other: main calls f with an arc of 100 and h (self 10) with
 * 10, but f spends only 30 (self 10, g 20). The arc into f is scaled down to 30, so main
 * is 40 wide and h is not drawn narrower than its 10. */
static void test_flamegraph__contradictory_arcs(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "main"), f = fn(b, "f"), gg = fn(b, "g"), h = fn(b, "h");
	self(b, f, 10);
	self(b, gg, 20);
	self(b, h, 10);
	call(b, m, f, 100);
	call(b, m, h, 10);
	call(b, f, gg, 20);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "main;f 10\nmain;f;g 20\nmain;h 10\n");
	free(s);
	check_selfs(&p, &o, 0);
	profile_free(&p);
}

/* A cycle of three, x -> y -> z -> x, entered from main at x (arc 100) and at z (10):
 * more than the cycle spends (self 10 + 20 + 30, y -> w 10, w self 10: 70), so the arcs in
 * become 63 and 7. Each entry draws the whole cycle once, as a spanning tree rooted where
 * it is entered (x -> y -> z, and z -> x -> y), at its share of the cycle's 70. */
static void test_flamegraph__cycle_of_three(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "main"), x = fn(b, "x"), y = fn(b, "y"), z = fn(b, "z"), w = fn(b, "w");
	self(b, m, 5);
	self(b, x, 10);
	self(b, y, 20);
	self(b, z, 30);
	self(b, w, 10);
	call(b, m, x, 100);
	call(b, m, z, 10);
	call(b, x, y, 80);
	call(b, y, z, 60);
	call(b, y, w, 10);
	call(b, z, x, 50);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s,
		"main 5\n"
		"main;x 9\n"
		"main;x;y 18\n"
		"main;x;y;w 9\n"
		"main;x;y;z 27\n"
		"main;z 3\n"
		"main;z;x 1\n"
		"main;z;x;y 2\n"
		"main;z;x;y;w 1\n");
	free(s);
	check_selfs(&p, &o, 0);
	profile_free(&p);
}

/* Elision frames: 20% of 120 = 24, so b (20) and e (10) are cut; each goes to an elision
 * frame above its parent, not into the parent's own cost. */
static void test_flamegraph__elision(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	struct flamegraph_opts o = { 0, 0.2, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s,
		"main 10\n"
		"main;a 40\n"
		"main;a;[elided] 20\n"
		"main;c 10\n"
		"main;c;d 30\n"
		"main;c;d;[elided] 10\n");
	free(s);
	/* two function frames below the root: what a and c call is one elision frame each */
	o = (struct flamegraph_opts){ 0, 0.0, 2, 0, NULL, 0 };
	s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "main 10\nmain;a 40\nmain;a;[elided] 20\nmain;c 10\nmain;c;[elided] 40\n");
	free(s);
	/* the SVG names it and draws it dashed */
	o = (struct flamegraph_opts){ 0, 0.2, 64, 0, NULL, 0 };
	s = render(&p, &o, 1, NULL);
	assert_non_null(strstr(s, "<title>[elided]\n20 Ir (16.67%), self 20\nframes cut here"));
	assert_non_null(strstr(s, "stroke-dasharray"));
	free(s);
	profile_free(&p);
}

/* The frame cap: build() has 7 frames at the smallest width; with at most 4 the minimum
 * width is raised to the narrowest that fits (a, 60 wide, no longer does: 61 units), and
 * everything below main is one elision frame, rather than the last frames of the walk. */
static void test_flamegraph__frame_cap(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	struct flamegraph_opts o = { 0, 0.0, 64, 4, NULL, 0 };
	struct flamegraph *g = flamegraph_new(&p, &o);
	struct flamegraph_limits l;
	flamegraph_limits(g, &l);
	assert_int_equal(l.capped, 1);
	assert_int_equal(l.max_frames, 4);
	assert_int_equal(l.frames, 3);
	assert_true(l.asked_units == 1.0);
	assert_true(l.min_units > 60.0 && l.min_units <= 61.0);
	flamegraph_free(g);
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "main 10\nmain;[elided] 110\n");
	free(s);
	/* the default cap is not reached: nothing raised */
	o.max_frames = 0;
	g = flamegraph_new(&p, &o);
	flamegraph_limits(g, &l);
	assert_int_equal(l.capped, 0);
	assert_int_equal(l.max_frames, FLAMEGRAPH_MAX_FRAMES);
	assert_int_equal(l.frames, 7);
	assert_true(l.min_units == 1.0);
	flamegraph_free(g);
	profile_free(&p);
}

static uint32_t lcg(uint64_t *r)
{
	*r = *r * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*r >> 33);
}

/* A cycle nobody calls (a thread that starts inside it): p (self 10) and q (self 20)
 * call each other (p -> q 25, q -> p 15). Its 30 are entered at each member by its own
 * excess: p 10 + 25 - 15 = 20, q 20 + 15 - 25 = 10; each entry draws the whole cycle,
 * rooted where it is entered, at its share (2/3, 1/3), and rounding keeps the totals. */
static void test_flamegraph__cycle_entries(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t pp = fn(b, "p"), q = fn(b, "q");
	self(b, pp, 10);
	self(b, q, 20);
	call(b, pp, q, 25);
	call(b, q, pp, 15);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "p 7\np;q 13\nq 7\nq;p 3\n");
	free(s);
	check_selfs(&p, &o, 0);
	profile_free(&p);
}

/* Random call graphs of 12 functions and 40 arcs (cycles, self-calls, arcs far from what
 * their callees spend), the same every run: the frames' self costs add up to the total,
 * and each function's frames carry its self cost within the bound of docs/flamegraph.md:
 * more by less than one unit per frame, less by that plus what the elision frames hold
 * and less than one unit per frame that was cut to nothing. */
static void test_flamegraph__random_graphs(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	static const char *const names[12] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11" };
	uint64_t r = 12345;
	for (int round = 0; round < 200; round++) {
		struct profile p;
		memset(&p, 0, sizeof(p));
		struct profile_builder *b = profile_builder_new(&p, 1, ev);
		uint32_t f[12];
		for (int i = 0; i < 12; i++) {
			f[i] = fn(b, names[i]);
			uint32_t some = lcg(&r) % 4, v = lcg(&r) % 100000;
			self(b, f[i], some ? v : 0);
		}
		for (int i = 0; i < 40; i++) {
			uint32_t from = lcg(&r) % 12, to = lcg(&r) % 12, v = lcg(&r) % 300000;
			call(b, f[from], f[to], v);
		}
		profile_builder_finish(b);
		struct flamegraph_opts o = { 0, round % 2 ? 0.0 : 0.01, 64, 0, NULL, 0 };
		struct flamegraph *g = flamegraph_new(&p, &o);
		struct tally t = { 0 };
		assert_int_equal(flamegraph_walk(g, tally_visit, &t), 0);
		assert_int_equal(t.total, p.totals[0]);
		for (size_t i = 0; i < p.nfns; i++) {
			uint64_t s = profile_self(&p, i)[0], d = t.drawn[i];
			if (d > s)
				assert_true(d - s < t.frames[i]);
			else
				assert_true(s - d <= t.frames[i] + t.elided + t.nframes);
		}
		flamegraph_free(g);
		profile_free(&p);
	}
}

/* A thread: start (self 5) calls clone (2, self 2); clone's second return calls thread
 * (100, self 100), far more than came into clone. clone enters 100 of its own. */
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
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	/* clone's 2 under start hold a sliver of thread's cost (2 * 100 / 102, rounded to 2),
	 * and clone's own cost is split the same way: 1.96 and 0.04, rounded to 2 and 0 */
	assert_string_equal(s, "clone 2\nclone;thread 98\nstart 5\nstart;clone;thread 2\n");
	free(s);
	check_selfs(&p, &o, 1);
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
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
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

/* Control characters (bytes below 0x20, and 0x7f) in a name: spaces in folded output, as
 * in the SVG, so that a folded line stays one line of text. */
static void test_flamegraph__control_bytes(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	static const char name[] = "a\tb\x01" "c\x7f" "d;e\x1b[0m";
	uint32_t f = profile_builder_fn(b, &(struct prof_fn_key){ "/bin/x", 6, "x.c", 3, name, sizeof(name) - 1 });
	self(b, f, 4);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 0, NULL);
	assert_string_equal(s, "a b c d:e [0m 4\n");
	free(s);
	s = render(&p, &o, 1, NULL);
	assert_non_null(strstr(s, "<title>a b c d;e [0m\n"));
	for (const char *q = s; *q; q++)
		assert_true((unsigned char)*q >= 0x20 || *q == '\n');
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
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
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

/* Self costs past 2^63: the change is clamped to INT64_MAX (as cgjit diff clamps it), not
 * an overflow (UBSan in check-asan) with the wrong sign. */
static void test_flamegraph__svg_diff_past_2_63(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p, base;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "main"), a = fn(b, "a");
	self(b, m, 5);
	self(b, a, ((uint64_t)1 << 63) + 10);
	call(b, m, a, ((uint64_t)1 << 63) + 10);
	profile_builder_finish(b);
	memset(&base, 0, sizeof(base));
	b = profile_builder_new(&base, 1, ev);
	m = fn(b, "main");
	a = fn(b, "a");
	self(b, m, ((uint64_t)1 << 63) + 20);
	self(b, a, 5);
	call(b, m, a, 5);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 0 };
	char *s = render(&p, &o, 1, &base);
	assert_non_null(strstr(s, "self 5 -> 9,223,372,036,854,775,818 (+9,223,372,036,854,775,807"));
	assert_non_null(strstr(s, "self 9,223,372,036,854,775,828 -> 5 (-9,223,372,036,854,775,807"));
	free(s);
	profile_free(&p);
	profile_free(&base);
}

/* --focus: only what runs under the focus, each focus function a root of its own, its
 * arcs in cut (so c, on a cycle with d, is a root, and d's call back into it is not
 * followed); the frames' own costs are the report's costs under the focus. */
static void test_flamegraph__focus(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	unsigned char focus[6] = { 0 };
	struct flamegraph_opts o = { 0, 0.0, 64, 0, focus, 0 };
	static const struct { const char *names; const char *want; uint64_t total; } cases[] = {
		{ "c", "c 10\nc;d 30\nc;d;e 10\n", 50 },
		{ "a", "a 40\na;b 20\n", 60 },   /* a's call of itself is inside it */
		/* c (10 in all once its call of d is cut) is called by main (50) and by the focus
		 * d (15): the focus's call is what is asked about, and takes c's 10 first */
		{ "ad", "a 40\na;b 20\nd 30\nd;c 10\nd;e 10\n", 110 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		memset(focus, 0, sizeof(focus));
		for (size_t i = 0; i < p.nfns; i++)
			focus[i] = strchr(cases[k].names, fn_name(&p, i)[0]) != NULL && fn_name(&p, i)[1] == '\0';
		char *got = render(&p, &o, 0, NULL);
		assert_string_equal(got, cases[k].want);
		free(got);
		struct flamegraph *g = flamegraph_new(&p, &o);
		assert_int_equal(flamegraph_total(g), cases[k].total);
		flamegraph_free(g);
		struct flamegraph_scope sc;
		flamegraph_scope(&p, 0, focus, &sc);
		assert_int_equal(sc.total, cases[k].total);
		flamegraph_scope_free(&sc);
	}
	profile_free(&p);
}

/* On random graphs with a random focus, the frames of every function carry its cost under
 * the focus as flamegraph_scope() (the report's --focus) gives it, within the rounding of
 * one unit per frame and the one of rounding the exact share; the total is the same. */
static void test_flamegraph__focus_random(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	static const char *const names[12] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11" };
	uint64_t r = 777;
	for (int round = 0; round < 200; round++) {
		struct profile p;
		memset(&p, 0, sizeof(p));
		struct profile_builder *b = profile_builder_new(&p, 1, ev);
		uint32_t f[12];
		unsigned char focus[12] = { 0 };
		for (int i = 0; i < 12; i++) {
			f[i] = fn(b, names[i]);
			self(b, f[i], lcg(&r) % 4 ? lcg(&r) % 100000 : 0);
		}
		for (int i = 0; i < 40; i++) {
			uint32_t from = lcg(&r) % 12, to = lcg(&r) % 12, v = lcg(&r) % 300000;
			call(b, f[from], f[to], v);
		}
		profile_builder_finish(b);
		focus[lcg(&r) % 12] = 1;
		if (round % 3 == 0)
			focus[lcg(&r) % 12] = 1;
		struct flamegraph_opts o = { 0, 0.0, 64, 0, focus, 0 };
		struct flamegraph *g = flamegraph_new(&p, &o);
		struct flamegraph_scope sc;
		flamegraph_scope(&p, 0, focus, &sc);
		struct tally t = { 0 };
		assert_int_equal(flamegraph_walk(g, tally_visit, &t), 0);
		assert_int_equal(t.total, sc.total);
		assert_int_equal(flamegraph_total(g), sc.total);
		for (size_t i = 0; i < p.nfns; i++) {
			uint64_t s = sc.self[i], d = t.drawn[i];
			assert_true((d > s ? d - s : s - d) <= t.frames[i] + 1);
			assert_true(sc.incl[i] >= sc.self[i] || sc.self[i] - sc.incl[i] <= 1);
			if (focus[i])
				assert_true(sc.incl[i] <= sc.total);
		}
		flamegraph_scope_free(&sc);
		flamegraph_free(g);
		profile_free(&p);
	}
}

/* --jit-only: main (5) calls J1 (95, JIT); J1 (10) calls n1 (85, native); n1 (25) calls J2
 * (60, JIT); J2 (40) calls n2 (20, native). The graph has J1 and J2 (J2 under J1, the native
 * n1 collapsed out between them) and "[not JIT]" for the native code they call; main, above
 * every JIT frame, is not drawn. Every JIT function keeps its self cost. */
static void test_flamegraph__jit_only(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t m = fn(b, "main"), n1 = fn(b, "n1"), n2 = fn(b, "n2");
	uint32_t j1 = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "J1", 2 });
	uint32_t j2 = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "J2", 2 });
	self(b, m, 5);
	self(b, j1, 10);
	self(b, n1, 25);
	self(b, j2, 40);
	self(b, n2, 20);
	call(b, m, j1, 95);
	call(b, j1, n1, 85);
	call(b, n1, j2, 60);
	call(b, j2, n2, 20);
	profile_builder_finish(b);
	struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 1 };
	char *got = render(&p, &o, 0, NULL);
	assert_string_equal(got, "J1 10\nJ1;J2 40\nJ1;J2;[not JIT] 20\nJ1;[not JIT] 25\n");
	free(got);
	got = render(&p, &o, 1, NULL);
	assert_non_null(strstr(got, "code that is not JIT, called from the JIT frame below (--jit-only)"));
	assert_non_null(strstr(got, "fill=\"rgb(222,222,222)\""));
	free(got);
	/* w (100) is called by J (JIT: 100) and by n1..n4 (native, under K: 5 each): J's
	 * call takes all of w first, the natives' calls get nothing, and nothing is passed on
	 * for them (a component once queued with nothing was queued again, past the queue's
	 * end, on node-diff-base) */
	profile_free(&p);
	memset(&p, 0, sizeof(p));
	b = profile_builder_new(&p, 1, ev);
	uint32_t k = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "K", 1 });
	uint32_t jj = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "J", 1 });
	uint32_t w = fn(b, "w"), ni[4] = { fn(b, "n1"), fn(b, "n2"), fn(b, "n3"), fn(b, "n4") };
	self(b, k, 10);
	self(b, w, 100);
	call(b, jj, w, 100);
	for (int i = 0; i < 4; i++) {
		self(b, ni[i], 5);
		call(b, k, ni[i], 10);
		call(b, ni[i], w, 5);
	}
	profile_builder_finish(b);
	o.focus = NULL;
	got = render(&p, &o, 0, NULL);
	assert_string_equal(got, "J;[not JIT] 100\nK 10\nK;[not JIT] 20\n");
	free(got);
	profile_free(&p);
	memset(&p, 0, sizeof(p));
	b = profile_builder_new(&p, 1, ev);
	m = fn(b, "main"), n1 = fn(b, "n1"), n2 = fn(b, "n2");
	j1 = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "J1", 2 });
	j2 = profile_builder_fn(b, &(struct prof_fn_key){ "/tmp/perf-9.map", 15, "a.js", 4, "J2", 2 });
	self(b, m, 5);
	self(b, j1, 10);
	self(b, n1, 25);
	self(b, j2, 40);
	self(b, n2, 20);
	call(b, m, j1, 95);
	call(b, j1, n1, 85);
	call(b, n1, j2, 60);
	call(b, j2, n2, 20);
	profile_builder_finish(b);

	/* under the focus n1 (native), with --jit-only: n1 is the root, J2 drawn above it */
	unsigned char focus[5] = { 0 };
	focus[n1] = 1;
	o.focus = focus;
	got = render(&p, &o, 0, NULL);
	assert_string_equal(got, "n1 25\nn1;J2 40\nn1;J2;[not JIT] 20\n");
	free(got);
	profile_free(&p);
}

/* --jit-only on random graphs (every other function JIT): only JIT frames and "[not JIT]",
 * every JIT function's frames carry its self cost within the rounding of one unit per
 * frame, and the total is the JIT functions' self cost and the code they call. */
static void test_flamegraph__jit_only_random(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	static const char *const names[12] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11" };
	uint64_t r = 4242;
	for (int round = 0; round < 200; round++) {
		struct profile p;
		memset(&p, 0, sizeof(p));
		struct profile_builder *b = profile_builder_new(&p, 1, ev);
		uint32_t f[12];
		for (int i = 0; i < 12; i++) {
			const char *obj = i % 2 ? "/tmp/perf-3.map" : "/bin/x";
			f[i] = profile_builder_fn(b, &(struct prof_fn_key){ obj, strlen(obj), "x.c", 3, names[i], strlen(names[i]) });
			self(b, f[i], lcg(&r) % 4 ? lcg(&r) % 100000 : 0);
		}
		for (int i = 0; i < 40; i++) {
			uint32_t from = lcg(&r) % 12, to = lcg(&r) % 12, v = lcg(&r) % 300000;
			call(b, f[from], f[to], v);
		}
		profile_builder_finish(b);
		struct flamegraph_opts o = { 0, 0.0, 64, 0, NULL, 1 };
		struct flamegraph *g = flamegraph_new(&p, &o);
		const struct profile *d = flamegraph_profile(g);
		struct tally t = { 0 };
		assert_int_equal(flamegraph_walk(g, tally_visit, &t), 0);
		assert_int_equal(t.total, flamegraph_total(g));
		assert_int_equal(d->nfns, 7);   /* the 6 JIT functions and [not JIT] */
		for (size_t i = 0; i < d->nfns; i++) {
			if (!d->fns[i].jit) {
				assert_string_equal(fn_name(d, i), FLAMEGRAPH_NOT_JIT_NAME);
				continue;
			}
			char *name = strdup(fn_name(d, i));   /* fn_name()'s buffers are reused below */
			uint64_t s = 0;
			for (size_t k = 0; k < p.nfns; k++)
				if (!strcmp(fn_name(&p, k), name))
					s = profile_self(&p, k)[0];
			free(name);
			uint64_t dr = t.drawn[i];
			assert_true((dr > s ? dr - s : s - dr) < t.frames[i] || dr == s);
		}
		flamegraph_free(g);
		profile_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flamegraph__folded),
		cmocka_unit_test(test_flamegraph__widths),
		cmocka_unit_test(test_flamegraph__selfs_exact),
		cmocka_unit_test(test_flamegraph__shared_callee),
		cmocka_unit_test(test_flamegraph__contradictory_arcs),
		cmocka_unit_test(test_flamegraph__cycle_of_three),
		cmocka_unit_test(test_flamegraph__elision),
		cmocka_unit_test(test_flamegraph__frame_cap),
		cmocka_unit_test(test_flamegraph__cycle_entries),
		cmocka_unit_test(test_flamegraph__random_graphs),
		cmocka_unit_test(test_flamegraph__thread_entry),
		cmocka_unit_test(test_flamegraph__names),
		cmocka_unit_test(test_flamegraph__control_bytes),
		cmocka_unit_test(test_flamegraph__svg_diff),
		cmocka_unit_test(test_flamegraph__svg_diff_past_2_63),
		cmocka_unit_test(test_flamegraph__focus),
		cmocka_unit_test(test_flamegraph__focus_random),
		cmocka_unit_test(test_flamegraph__jit_only),
		cmocka_unit_test(test_flamegraph__jit_only_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
