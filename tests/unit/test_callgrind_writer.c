/* Unit tests for callgrind_writer.c: ids defined at first use, implicit cob/cfi only when
 * they equal the callee's identity, fi/fe, position compression, raw copy; and its output
 * buffer (callgrind_outbuf.c): blocks written in order while the writer fills more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "callgrind/callgrind_outbuf.h"
#include "callgrind/callgrind_writer.h"
#include "core/diag.h"
#include "helpers.h"
#include "core/io.h"
#include "core/io_pump.h"

/* Identities numbered by the writer, in the order they are made (an input without ids) */
static const struct cgw_id fresh = { CGW_ID_FRESH, 0 };

/* BODY's output, written in the layout "instr line" with NEVENTS events. */
static char *run_writer_events(void (*body)(struct cgw *w), unsigned nevents)
{
	char path[] = "/tmp/cgjit-wtest-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_non_null(o);
	struct cgw *w = cgw_new(o);
	cgw_part_begin(w);
	enum cg_pos_kind kinds[2] = { POS_INSTR, POS_LINE };
	cgw_layout(w, 2, kinds, nevents);
	body(w);
	assert_int_equal(cgw_flush(w, &d), 0);
	cgw_free(w);
	assert_int_equal(output_commit(o, &d), 0);
	char *s = slurp(path);
	unlink(path);
	return s;
}

static char *run_writer(void (*body)(struct cgw *w))
{
	return run_writer_events(body, 2);
}

/* A cost line with no input text to copy. */
static void cost(struct cgw *w, uint32_t fn, uint32_t file, const uint64_t *pos,
		 const uint64_t *costs)
{
	cgw_cost(w, &(struct cgw_cost){ .fn = fn, .file = file, .pos = pos, .costs = costs });
}

static void body_calls(struct cgw *w)
{
	uint32_t libc = cgw_obj(w, "/lib/libc.so", 12), jit = cgw_obj(w, "perf-1.map", 10);
	uint32_t cfile = cgw_file(w, "a.c", 3), jfile = cgw_file(w, "/src/a.js", 9);
	uint32_t main_fn = cgw_fn(w, "main", 4, libc, cfile, &fresh);
	uint32_t jf = cgw_fn(w, "JS:*f /src/a.js:3:1", 19, jit, jfile, &fresh);
	uint32_t helper = cgw_fn(w, "helper", 6, libc, cfile, &fresh);
	uint64_t p1[2] = { 0x1000, 10 }, p2[2] = { 0x1004, 10 }, t[2] = { 0x7000, 3 };
	uint64_t c1[2] = { 5, 0 }, c2[2] = { 100, 7 };
	cost(w, main_fn, cfile, p1, c1);
	/* other object and file */
	cgw_call(w, &(struct cgw_call){ .fn = main_fn, .file = cfile, .pos = p2, .callee = jf,
					.target = t, .count = 2, .costs = c2 });
	/* same object and file */
	cgw_call(w, &(struct cgw_call){ .fn = main_fn, .file = cfile, .pos = p2, .callee = helper,
					.target = p1, .count = 1, .costs = c1, .comment = "note" });
	uint64_t p3[2] = { 0x7000, 3 };
	cost(w, jf, jfile, p3, c1);
	cost(w, main_fn, cgw_file(w, "inl.h", 5), p1, c1);
	cost(w, main_fn, cfile, p2, c1);
}

static void test_callgrind_writer__ids_and_contexts(void **state)
{
	(void)state;
	char *s = run_writer(body_calls);
	assert_string_equal(s,
		"ob=(1) /lib/libc.so\n"
		"fl=(1) a.c\n"
		"fn=(1) main\n"
		"0x1000 10 5\n"
		"cob=(2) perf-1.map\n"
		"cfi=(2) /src/a.js\n"
		"cfn=(2) JS:*f /src/a.js:3:1\n"
		"calls=2 0x7000 3\n"
		"+4 * 100 7\n"
		"# note\n"
		"cfn=(3) helper\n"
		"calls=1 0x1000 10\n"
		"* * 5\n"
		"ob=(2)\n"
		"fl=(2)\n"
		"fn=(2)\n"
		"0x7000 3 5\n"
		"ob=(1)\n"
		"fl=(1)\n"
		"fn=(1)\n"
		"fi=(3) inl.h\n"
		"0x1000 10 5\n"
		"fe=(1)\n"
		"+4 * 5\n");
	free(s);
}

static void body_raw(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	uint32_t fn = cgw_fn(w, "f", 1, o, f, &fresh);
	uint64_t p1[2] = { 0x10, 1 }, p2[2] = { 0x12, 1 }, c[2] = { 1, 2 };
	/* first line: base unknown */
	cgw_cost(w, &(struct cgw_cost){ .fn = fn, .file = f, .pos = p1, .costs = c,
					.raw = "RAW-NOT-COPIED", .raw_len = 14, .prev = p2 });
	/* bases agree: copied */
	cgw_cost(w, &(struct cgw_cost){ .fn = fn, .file = f, .pos = p2, .costs = c,
					.raw = "+2 * 1 2", .raw_len = 8, .prev = p1 });
	const uint64_t *sums = cgw_sums(w);
	assert_int_equal(sums[0], 2);
	assert_int_equal(sums[1], 4);
}

static void test_callgrind_writer__raw_copy_needs_same_base(void **state)
{
	(void)state;
	char *s = run_writer(body_raw);
	assert_string_equal(s, "ob=(1) x\nfl=(1) x.c\nfn=(1) f\n0x10 1 1 2\n+2 * 1 2\n");
	free(s);
}

/* A range sink's run (cg_reader_sink_range(): "+N L C" lines) written at one source line
 * LINE reads as its lines written one by one by cgw_cost() at (instr, LINE), as augment
 * writes a JIT function's lines (rewrite.c, write_home_line()): the input's text given
 * where L is LINE, with the base it was read against. Where the base agrees that text is
 * copied, else the line is re-encoded: "+N * C". */
static const char run_text[] = "+3 0 1\n+12 0 40\n+1 7 1\n+1048575 0 123456789\n+7 0 2";
static const uint64_t run_d[] = { 3, 12, 1, 1048575, 7 }, run_l[] = { 0, 0, 7, 0, 0 };
static const uint64_t run_costs[] = { 1, 40, 1, 123456789, 2 };
static uint64_t run_line;   /* LINE */

static void run_lines(struct cgw *w, int as_run)
{
	uint32_t o = cgw_obj(w, "perf-1.map", 10), f = cgw_file(w, "/src/a.js", 9);
	uint32_t fn = cgw_fn(w, "JS:*f /src/a.js:3:1", 19, o, f, &fresh);
	uint32_t g = cgw_fn(w, "g", 1, o, f, &fresh);
	uint64_t c = 5, sum = 0;
	for (size_t i = 0; i < 5; i++)
		sum += run_costs[i];
	for (int k = 0; k < 2; k++) {
		/* first after another function's line (the base is absolute), then after a line
		 * of its own at LINE: the first line's text may be copied too */
		uint64_t prev[2] = { 0x4000 + (uint64_t)k * 0x200000, k ? run_line : 9 };
		cost(w, k ? fn : g, f, prev, &c);
		const char *p = run_text;
		uint64_t pos[5][2], at[2], before[2] = { prev[0], prev[1] };
		for (size_t i = 0; i < 5; i++) {
			pos[i][0] = before[0] + run_d[i];
			pos[i][1] = run_l[i];
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			at[0] = pos[i][0], at[1] = run_line;
			if (!as_run)
				cgw_cost(w, &(struct cgw_cost){ .fn = fn, .file = f, .pos = at,
								.costs = &run_costs[i],
								.raw = run_l[i] == run_line ? p : NULL,
								.raw_len = len, .prev = before });
			before[0] = pos[i][0], before[1] = pos[i][1];
			p += len + 1;
		}
		if (!as_run)
			continue;
		struct cg_cost_run run = {
			.text = run_text, .len = strlen(run_text), .first_len = 6, .lines = 5,
			.prev = prev, .first_pos = pos[0], .first_costs = &run_costs[0],
			.last_pos = pos[4], .sums = &sum, .lo = pos[0][0], .hi = pos[4][0],
		};
		cgw_cost_run_at_line(w, fn, f, &run, run_line);
	}
	assert_int_equal(cgw_sums(w)[0], 2 * (5 + sum));
}

static void body_run_lines(struct cgw *w)
{
	run_lines(w, 0);
}

static void body_run_at_line(struct cgw *w)
{
	run_lines(w, 1);
}

static void test_callgrind_writer__run_at_line(void **state)
{
	(void)state;
	static const char *const expect[] = {
		/* LINE 3: no L is 3 */
		"\n0x4003 3 1\n+12 * 40\n+1 * 1\n+1048575 * 123456789\n+7 * 2\n",
		/* LINE 0: the first line's base is another function's; then L copied where
		 * it and the line before are at 0 */
		"\n0x4003 0 1\n+12 0 40\n+1 * 1\n+1048575 * 123456789\n+7 0 2\n",
		/* the second run, after a line at 0: its first line copied too */
		"\n+3 0 1\n+12 0 40\n+1 * 1\n+1048575 * 123456789\n+7 0 2\n",
	};
	for (int i = 0; i < 2; i++) {
		run_line = i ? 0 : 3;
		char *a = run_writer_events(body_run_lines, 1);
		char *z = run_writer_events(body_run_at_line, 1);
		assert_string_equal(z, a);
		if (!strstr(z, expect[i]) || (i && !strstr(z, expect[2])))
			fail_msg("LINE %llu:\n%s", (unsigned long long)run_line, z);
		free(a);
		free(z);
	}
}

/* A run of a cost line and an empty line (callgrind's line after a block), copied after
 * another function's line: its first line re-encoded, the empty line kept. */
static void body_run_empty_line(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	uint32_t g = cgw_fn(w, "g", 1, o, f, &fresh), h = cgw_fn(w, "h", 1, o, f, &fresh);
	uint64_t at[2] = { 0x10, 1 }, c[2] = { 1, 0 };
	cost(w, g, f, at, c);
	uint64_t prev[2] = { 0x90, 4 }, pos[2] = { 0x91, 4 }, sum = 2;
	struct cg_cost_run run = {
		.text = "+1 * 2\n", .len = 7, .first_len = 6, .lines = 2, .prev = prev,
		.first_pos = pos, .first_costs = &sum, .last_pos = pos, .sums = &sum,
		.lo = pos[0], .hi = pos[0],
	};
	cgw_cost_run(w, h, f, &run);
	cost(w, g, f, at, c);
}

static void test_callgrind_writer__run_keeps_empty_line(void **state)
{
	(void)state;
	char *s = run_writer_events(body_run_empty_line, 1);
	if (!strstr(s, "fn=(2) h\n0x91 4 2\n\nfn=(1)\n0x10 1 1\n"))
		fail_msg("%s", s);
	free(s);
}

static void body_jump(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "j", 1), o2 = cgw_obj(w, "k", 1), f = cgw_file(w, "???", 3);
	uint32_t a = cgw_fn(w, "a", 1, o, f, &fresh), b = cgw_fn(w, "b", 1, o, f, &fresh);
	uint32_t c = cgw_fn(w, "c", 1, o2, f, &fresh);
	uint64_t p[2] = { 0x10, 0 }, t[2] = { 0x20, 0 };
	struct cgw_jump j = { .fn = a, .file = f, .pos = p, .tfn = b, .tfile = f, .target = t,
			      .count = 4, .followed = 3, .conditional = 1 };
	assert_int_equal(cgw_jump(w, &j), 0);
	j = (struct cgw_jump){ .fn = a, .file = f, .pos = p, .tfn = c, .tfile = f, .target = t,
			       .count = 4 };
	assert_int_equal(cgw_jump(w, &j), -1);   /* across objects */
}

static void test_callgrind_writer__jumps(void **state)
{
	(void)state;
	char *s = run_writer(body_jump);
	assert_string_equal(s, "ob=(1) j\nfl=(1) ???\nfn=(1) a\njfn=(2) b\njcnd=3/4 0x20 0\n0x10 0\n");
	free(s);
}

/* Empty and blank-edged names (a map name "f( :5)", a jitdump row with an empty file)
 * would be written as "fl=(1) ", which readers take for a reference to an undefined id. */
static void body_blank(struct cgw *w)
{
	uint32_t ob = cgw_obj(w, "", 0), fl = cgw_file(w, " ", 1);
	uint32_t f = cgw_fn(w, " \tf ", 4, ob, fl, &fresh);
	uint32_t g = cgw_fn_borrowed(w, "g ", 2, ob, cgw_file(w, "\ta.c", 4), &fresh);
	uint32_t e = cgw_fn_borrowed(w, "", 0, ob, fl, &fresh);
	uint64_t p[2] = { 0x10, 1 }, c[2] = { 1, 0 };
	cost(w, f, fl, p, c);
	cost(w, g, cgw_fn_get(w, g).file, p, c);
	cost(w, e, fl, p, c);
}

static void test_callgrind_writer__no_blank_names(void **state)
{
	(void)state;
	char *s = run_writer(body_blank);
	assert_string_equal(s,
		"ob=(1) ???\n"
		"fl=(1) ???\n"
		"fn=(1) f\n"
		"0x10 1 1\n"
		"fl=(2) a.c\n"
		"fn=(2) g\n"
		"0x10 1 1\n"
		"fl=(1)\n"
		"fn=(3) ???\n"
		"0x10 1 1\n");
	free(s);
}

/* A name is kept until its identity is first written, and no longer: borrowed names are
 * copied when their record settles, interned ones are found again after the index grew,
 * and names written where they were made are never copied. */
enum { MANY = 5000 };

static void body_pending(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	char borrowed[] = "borrowed-one";
	uint32_t a = cgw_fn_borrowed(w, borrowed, strlen(borrowed), o, f, &fresh);
	uint32_t b = cgw_fn(w, "interned", 8, o, f, &fresh);
	cgw_settle(w);
	memset(borrowed, 'X', strlen(borrowed));   /* the reader's buffer moves on */
	uint32_t many[MANY];
	char name[32];
	for (int i = 0; i < MANY; i++) {
		int n = snprintf(name, sizeof(name), "name%d", i);
		many[i] = cgw_fn(w, name, (size_t)n, o, f, &fresh);
		if (i % 100 == 99)
			cgw_settle(w);
	}
	cgw_settle(w);
	for (int i = 0; i < MANY; i++) {
		int n = snprintf(name, sizeof(name), "name%d", i);
		assert_int_equal(cgw_fn(w, name, (size_t)n, o, f, &fresh), many[i]);
	}
	assert_int_equal(cgw_fn(w, "interned", 8, o, f, &fresh), b);
	uint64_t p[2] = { 0x10, 1 }, c[2] = { 1, 0 };
	cost(w, a, f, p, c);
	cgw_call(w, &(struct cgw_call){ .fn = a, .file = f, .pos = p, .callee = many[MANY - 1],
					.target = p, .count = 1, .costs = c });
	cgw_call(w, &(struct cgw_call){ .fn = a, .file = f, .pos = p, .callee = b, .target = p,
					.count = 1, .costs = c });
	cost(w, many[7], f, p, c);
	cost(w, a, f, p, c);
	cgw_settle(w);
}

static void test_callgrind_writer__names_kept_until_written(void **state)
{
	(void)state;
	char *s = run_writer(body_pending);
	assert_string_equal(s,
		"ob=(1) x\n"
		"fl=(1) x.c\n"
		"fn=(1) borrowed-one\n"
		"0x10 1 1\n"
		"cfn=(5002) name4999\n"
		"calls=1 0x10 1\n"
		"* * 1\n"
		"cfn=(2) interned\n"
		"calls=1 0x10 1\n"
		"* * 1\n"
		"fn=(10) name7\n"
		"0x10 1 1\n"
		"fn=(1)\n"
		"0x10 1 1\n");
	free(s);
}

/* A part forgets the last one's identities: interned names and pending names alike. */
static void body_two_parts(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	uint32_t a = cgw_fn(w, "f", 1, o, f, &fresh);
	cgw_fn_borrowed(w, "never-written", 13, o, f, &fresh);
	cgw_settle(w);
	uint64_t p[2] = { 0x10, 1 }, c[2] = { 1, 0 };
	cost(w, a, f, p, c);
	cgw_part_begin(w);
	enum cg_pos_kind kinds[2] = { POS_INSTR, POS_LINE };
	cgw_layout(w, 2, kinds, 2);
	o = cgw_obj(w, "x", 1);
	f = cgw_file(w, "x.c", 3);
	char borrowed[] = "pending-two";
	uint32_t b = cgw_fn_borrowed(w, borrowed, strlen(borrowed), o, f, &fresh);
	uint32_t a2 = cgw_fn(w, "f", 1, o, f, &fresh);
	assert_int_equal(b, 0);    /* numbered anew */
	assert_int_equal(a2, 1);   /* interned anew, not part 1's */
	cgw_settle(w);
	memset(borrowed, 'X', strlen(borrowed));
	cost(w, a2, f, p, c);
	cost(w, b, f, p, c);
}

static void test_callgrind_writer__parts_forget_names(void **state)
{
	(void)state;
	char *s = run_writer(body_two_parts);
	assert_string_equal(s,
		"ob=(1) x\nfl=(1) x.c\nfn=(1) f\n0x10 1 1\n"
		"ob=(1) x\nfl=(1) x.c\nfn=(2) f\n0x10 1 1\n"
		"fn=(1) pending-two\n0x10 1 1\n");
	free(s);
}

/* Function ids are the input's: a merged identity keeps its first definition's, the
 * identities cgjit adds wait for ids above the part's largest, and so do the calls and
 * jumps that name them; ids of any size are written as given. */
static void body_input_ids(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	uint32_t a = cgw_fn_borrowed(w, "a", 1, o, f, &(struct cgw_id){ CGW_ID_INPUT, 7 });
	uint32_t j = cgw_fn(w, "jit", 3, o, f, &(struct cgw_id){ CGW_ID_INPUT, 12 });
	/* a second definition of the same identity: the first id stays */
	assert_int_equal(cgw_fn(w, "jit", 3, o, f, &(struct cgw_id){ CGW_ID_INPUT, 30 }), j);
	uint32_t moved = cgw_fn(w, "moved", 5, o, f, &(struct cgw_id){ CGW_ID_LATER, 0 });
	uint32_t big = cgw_fn_borrowed(w, "big", 3, o, f,
				       &(struct cgw_id){ CGW_ID_INPUT, (1ULL << 63) + 5 });
	cgw_settle(w);
	uint64_t p[2] = { 0x10, 1 }, c[2] = { 1, 0 };
	cost(w, a, f, p, c);
	/* waits: it names MOVED */
	cgw_call(w, &(struct cgw_call){ .fn = a, .file = f, .pos = p, .callee = moved,
					.target = p, .count = 2, .costs = c });
	struct cgw_jump jp = { .fn = moved, .file = f, .pos = p, .tfn = j, .tfile = f,
			       .target = p, .count = 3 };
	assert_int_equal(cgw_jump(w, &jp), 0);
	cgw_call(w, &(struct cgw_call){ .fn = a, .file = f, .pos = p, .callee = big,
					.target = p, .count = 1, .costs = c });
	cgw_call(w, &(struct cgw_call){ .fn = a, .file = f, .pos = p, .callee = j,
					.target = p, .count = 1, .costs = c });
	assert_int_equal(cgw_number_new(w), 0);
	cost(w, moved, f, p, c);
}

static void test_callgrind_writer__input_ids(void **state)
{
	(void)state;
	char *s = run_writer(body_input_ids);
	assert_string_equal(s,
		"ob=(1) x\nfl=(1) x.c\nfn=(7) a\n0x10 1 1\n"
		"cfn=(9223372036854775813) big\ncalls=1 0x10 1\n* * 1\n"
		"cfn=(12) jit\ncalls=1 0x10 1\n* * 1\n"
		/* held until the part's ids were known: above 2^63 + 5 */
		"cfn=(9223372036854775814) moved\ncalls=2 0x10 1\n* * 1\n"
		"fn=(9223372036854775814)\njfn=(12)\njump=3 0x10 1\n0x10 1\n"
		"* * 1\n");
	free(s);
}

/* A part that names functions both with and without ids: the writer's ids never meet
 * the input's. */
static void body_mixed_ids(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	uint32_t a = cgw_fn_borrowed(w, "a", 1, o, f, &(struct cgw_id){ CGW_ID_INPUT, 1 });
	uint32_t b = cgw_fn_borrowed(w, "b", 1, o, f, &fresh);   /* 2 */
	uint32_t c = cgw_fn_borrowed(w, "c", 1, o, f, &(struct cgw_id){ CGW_ID_INPUT, 2 });
	uint32_t d = cgw_fn_borrowed(w, "d", 1, o, f, &(struct cgw_id){ CGW_ID_INPUT, 9 });
	uint64_t p[2] = { 0x10, 1 }, k[2] = { 1, 0 };
	cost(w, a, f, p, k);
	cost(w, b, f, p, k);
	cost(w, c, f, p, k);
	cost(w, d, f, p, k);
}

static void test_callgrind_writer__mixed_ids(void **state)
{
	(void)state;
	char *s = run_writer(body_mixed_ids);
	assert_string_equal(s,
		"ob=(1) x\nfl=(1) x.c\nfn=(1) a\n0x10 1 1\n"
		"fn=(2) b\n0x10 1 1\n"
		"fn=(3) c\n0x10 1 1\n"   /* the input's 2 was the writer's already */
		"fn=(9) d\n0x10 1 1\n");
	free(s);
}

/* An input whose ids reach 2^64 - 1 leaves none for what cgjit adds. */
static void body_ids_exhausted(struct cgw *w)
{
	uint32_t o = cgw_obj(w, "x", 1), f = cgw_file(w, "x.c", 3);
	cgw_fn_borrowed(w, "a", 1, o, f, &(struct cgw_id){ CGW_ID_INPUT, UINT64_MAX });
	cgw_fn(w, "moved", 5, o, f, &(struct cgw_id){ CGW_ID_LATER, 0 });
	assert_int_equal(cgw_number_new(w), -1);
}

static void test_callgrind_writer__ids_exhausted(void **state)
{
	(void)state;
	char *s = run_writer(body_ids_exhausted);
	assert_string_equal(s, "");
	free(s);
}

/* More (object, file) pairs than 2-byte indices hold: identities keep theirs when the
 * table widens, calls write cfi= by them, and the next part starts narrow again. */
static void body_many_files(struct cgw *w)
{
	enum { N = 70000 };
	static uint32_t fn[N], file[N];
	char name[32];
	uint32_t obj = cgw_obj(w, "/bin/prog", 9);
	for (uint32_t i = 0; i < N; i++) {
		int n = snprintf(name, sizeof(name), "f%u.c", i);
		file[i] = cgw_file(w, name, (size_t)n);
		fn[i] = cgw_fn_copied(w, name, (size_t)n, obj, file[i], &fresh);
		cgw_settle(w);
	}
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(cgw_fn_get(w, fn[i]).file, file[i]);
		assert_int_equal(cgw_fn_get(w, fn[i]).obj, obj);
	}
	uint64_t p[2] = { 0x1000, 1 }, c[2] = { 1, 0 };
	cost(w, fn[N - 1], file[N - 1], p, c);
	cgw_call(w, &(struct cgw_call){ .fn = fn[N - 1], .file = file[N - 1], .pos = p,
					.callee = fn[3], .target = p, .count = 1, .costs = c });
	assert_int_equal(cgw_number_new(w), 0);
	cgw_part_begin(w);
	uint32_t f = cgw_file(w, "g.c", 3), g = cgw_fn_copied(w, "g", 1, cgw_obj(w, "x", 1), f, &fresh);
	assert_int_equal(cgw_fn_get(w, g).file, f);
}

static void test_callgrind_writer__many_pairs(void **state)
{
	(void)state;
	char *s = run_writer(body_many_files);
	/* files are numbered where first written */
	assert_non_null(strstr(s, "ob=(1) /bin/prog\nfl=(1) f69999.c\nfn=(70000) f69999.c\n"));
	assert_non_null(strstr(s, "cfi=(2) f3.c\ncfn=(4) f3.c\ncalls=1 "));
	free(s);
}

/* Input ids around the 24 bits an identity keeps in place: the larger ones in the map. */
static void body_id_widths(struct cgw *w)
{
	static const uint64_t ids[] = { 3, (1u << 24) - 1, 1u << 24, ((uint64_t)1 << 32) + 5,
					UINT64_MAX - 1, 0 };
	uint32_t obj = cgw_obj(w, "/bin/prog", 9), file = cgw_file(w, "a.c", 3);
	uint64_t p[2] = { 0x1000, 1 }, c[2] = { 1, 0 };
	uint32_t fn[6];
	for (int i = 0; i < 6; i++) {
		char name[8];
		int n = snprintf(name, sizeof(name), "f%d", i);
		struct cgw_id id = { CGW_ID_INPUT, ids[i] };
		fn[i] = cgw_fn_copied(w, name, (size_t)n, obj, file, &id);
		cgw_settle(w);
		cost(w, fn[i], file, p, c);
	}
	for (int i = 0; i < 6; i++)   /* each written again by its id alone */
		cost(w, fn[i], file, p, c);
}

static void test_callgrind_writer__id_widths(void **state)
{
	(void)state;
	char *s = run_writer(body_id_widths);
	static const char *const want[] = {
		"fn=(3) f0\n", "fn=(16777215) f1\n", "fn=(16777216) f2\n", "fn=(4294967301) f3\n",
		"fn=(18446744073709551614) f4\n", "fn=(0) f5\n",
		"fn=(3)\n", "fn=(16777215)\n", "fn=(16777216)\n", "fn=(4294967301)\n",
		"fn=(18446744073709551614)\n", "fn=(0)\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(s, want[i]))
			fail_msg("'%s' not written", want[i]);
	free(s);
}

/* The byte at offset I of the output buffer test's stream. */
static char pattern(size_t i)
{
	return (char)('a' + (i * 7 + i / 4093) % 26);
}

/* Writes 8 MiB in pieces of 1 to 70,000 bytes, and one of 1.5 MiB (more than a buffer
 * holds: it grows), through the output buffer to a FIFO whose reader (a child) takes 64
 * KiB every 2 ms: the flusher thread waits on it, the buffers fill up, and the writer
 * waits for one to be written. The child's copy holds every byte in order; also with the
 * blocks written by a shared pump (io_pump.h), polling or sleeping between them. */
static void outbuf_blocks_in_order(struct io_pump *pump)
{
	const size_t total = 8u << 20;
	char *dir = tmp_dir(), fifo[256], copy[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(120);   /* a hang fails the test */
	pid_t pid = spawn_slow_fifo_reader(fifo, copy);
	assert_true(pid > 0);
	struct diag d = { 0 };
	struct output *o = output_open(fifo, &d);
	assert_non_null(o);
	struct cg_outbuf b;
	cg_outbuf_init(&b, o);
	cg_outbuf_share_pump(&b, pump);
	static char piece[3 << 19];
	uint64_t x = 12345;
	for (size_t at = 0, k = 0; at < total; k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t n = k == 100 ? sizeof(piece) : 1 + (size_t)(x >> 33) % 70000;
		if (n > total - at)
			n = total - at;
		for (size_t i = 0; i < n; i++)
			piece[i] = pattern(at + i);
		cg_outbuf_put(&b, piece, n);
		at += n;
	}
	assert_int_equal(cg_outbuf_flush(&b, &d), 0);
	assert_int_equal(b.bytes, total);
	if (pump)   /* the pump wrote the blocks, not a thread of B's own */
		assert_true(b.flusher.client != NULL && io_pump_clients(pump) == 1);
	cg_outbuf_free(&b);
	if (pump)
		assert_int_equal(io_pump_clients(pump), 0);
	assert_int_equal(output_commit(o, &d), 0);
	assert_int_equal(child_exit_status(pid), 0);
	alarm(0);
	size_t got, bad = copy_mismatches(copy, pattern, &got);
	assert_int_equal(got, total);
	assert_int_equal(bad, 0);
	unlink(copy);
	unlink(fifo);
	rmdir(dir);
	free(dir);
}

static void test_callgrind_writer__outbuf_blocks_in_order(void **state)
{
	(void)state;
	outbuf_blocks_in_order(NULL);
	for (int spin = 0; spin < 2; spin++) {
		struct io_pump *pump = io_pump_new(spin ? 2000000 : 0);
		outbuf_blocks_in_order(pump);
		io_pump_free(pump);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callgrind_writer__many_pairs),
		cmocka_unit_test(test_callgrind_writer__id_widths),
		cmocka_unit_test(test_callgrind_writer__ids_and_contexts),
		cmocka_unit_test(test_callgrind_writer__no_blank_names),
		cmocka_unit_test(test_callgrind_writer__raw_copy_needs_same_base),
		cmocka_unit_test(test_callgrind_writer__run_keeps_empty_line),
		cmocka_unit_test(test_callgrind_writer__jumps),
		cmocka_unit_test(test_callgrind_writer__names_kept_until_written),
		cmocka_unit_test(test_callgrind_writer__parts_forget_names),
		cmocka_unit_test(test_callgrind_writer__run_at_line),
		cmocka_unit_test(test_callgrind_writer__input_ids),
		cmocka_unit_test(test_callgrind_writer__mixed_ids),
		cmocka_unit_test(test_callgrind_writer__ids_exhausted),
		cmocka_unit_test(test_callgrind_writer__outbuf_blocks_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
