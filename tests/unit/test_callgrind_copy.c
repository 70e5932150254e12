/* Unit tests for what the reader hands over to be copied as it is (issue 24 step 2):
 * canonical calls= and jump lines with their second line, and the jumps inside a
 * function that stay in the sink's runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "core/io.h"
#include "helpers.h"

#define HDR "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd: x\npart: 1\n"

struct fixture {
	char *path;
	struct input *in;
	struct cg_reader *r;
	struct diag d;
};

static void open_text(struct fixture *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	f->path = tmp_file(text);
	f->in = input_open(f->path, &f->d);
	assert_non_null(f->in);
	f->r = cg_reader_new(f->in, 1 << 20);
}

static void close_text(struct fixture *f)
{
	cg_reader_free(f->r);
	input_close(f->in);
	unlink(f->path);
	free(f->path);
}

/* Reads records until one of KIND; fails on error or end. */
static void next_of(struct fixture *f, enum cg_kind kind, struct cg_record *rec)
{
	int rc;
	while ((rc = cg_reader_next(f->r, rec, &f->d)) == 1)
		if (rec->kind == kind)
			return;
	fail_msg("expected a record, got %d: %s", rc, f->d.msg);
}

static int drain(struct fixture *f)
{
	struct cg_record rec;
	int rc;
	while ((rc = cg_reader_next(f->r, &rec, &f->d)) == 1)
		;
	return rc;
}

/* The calls= and jump lines kept for a copy (issue 24 step 2): canonical ones, with the
 * trailing space callgrind writes after a call's target and a CRLF dropped, are handed out
 * with their second line; hex counts, tabs, double spaces, hex line numbers are not. */
static void test_callgrind_copy__canonical_lines_kept(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: instr line\nevents: Ir\nsummary: 1\n"
		      "ob=(1) /bin/p\nfl=(1) p.c\nfn=(1) main\n0x400 5 1\n"
		      "cfn=(2) f\ncalls=2 0x500 12 \n# between\n* 0 7\n"
		      "cfn=(2)\ncalls=0x2 0x500 12\n* 0 7\n"
		      "cfn=(2)\ncalls=2\t0x500 12\n* 0 7\n"
		      "cfn=(2)\ncalls=2 0x500  12\n* 0 7\n"
		      "cfn=(2)\ncalls=2 0x500 0xc\n* 0 7\n"
		      "jcnd=1/4 +8 *\r\n+2 *\r\n"
		      "jump=3 +8 *\n+2\t*\ntotals: 1\n");
	struct cg_record rec;
	next_of(&f, CG_CALL, &rec);
	assert_true(rec.clean);
	assert_int_equal(rec.line_len, 17);
	assert_memory_equal(rec.line_text, "calls=2 0x500 12 ", 17);
	assert_int_equal(rec.len, 5);
	assert_memory_equal(rec.text, "* 0 7", 5);
	for (int i = 0; i < 4; i++) {
		next_of(&f, CG_CALL, &rec);
		assert_false(rec.clean);
		assert_int_equal(rec.count, 2);
		assert_int_equal(rec.target[1], 12);
	}
	next_of(&f, CG_JUMP, &rec);
	assert_true(rec.clean);
	assert_int_equal(rec.line_len, 13);
	assert_memory_equal(rec.line_text, "jcnd=1/4 +8 *", 13);
	assert_int_equal(rec.len, 4);
	assert_memory_equal(rec.text, "+2 *", 4);
	next_of(&f, CG_JUMP, &rec);
	assert_false(rec.clean);
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

/* Issue 24 step 2: the jumps inside the sink's function stay in its run, as text; a jump
 * with jfn=, a jump first in the run or one not as callgrind writes it is a record. */
struct jump_sink {
	char text[512];
	size_t len;
	uint64_t lines, runs, ir, last_line;
};

static void jump_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct jump_sink *g = ctx;
	(void)fn;
	(void)file;
	assert_true(g->len + run->len + 1 < sizeof(g->text));
	memcpy(g->text + g->len, run->text, run->len);
	g->len += run->len;
	g->text[g->len++] = '|';
	g->lines += run->lines;
	g->runs++;
	g->ir += run->sums[0];
	g->last_line = run->last_pos[1];
}

/* Reads F to its clean end with every function's cost lines sunk into G: returns how
 * many records of kind KIND came (none a cost line). */
static int read_sunk(struct fixture *f, struct jump_sink *g, enum cg_kind kind)
{
	struct cg_record rec;
	int rc, n = 0;
	while ((rc = cg_reader_next(f->r, &rec, &f->d)) == 1) {
		if (rec.kind == CG_FN)
			cg_reader_sink_costs(f->r, rec.fn, jump_sink, g);
		n += rec.kind == kind;
		assert_true(rec.kind != CG_COST);
	}
	assert_int_equal(rc, 0);
	g->text[g->len] = '\0';
	return n;
}

static void test_callgrind_copy__sink_runs_keep_jumps(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: instr line\nevents: Ir\nsummary: 6\n"
		      "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		      "0x400 5 1\njump=3 +8 * \n* +1 \n+1 * 1\njcnd=1/4 0x420 6 \n+3 6 \n+1 * 1\n"
		      "jfn=(2) g\njump=2 0x600 9 \n* * \n+1 * 1\n"
		      "jump=2 0x600 9  \n* * \n+1 * 1\n"
		      "fn=(2)\njump=1 0x400 5 \n0x600 9 \n* * 1\ntotals: 6\n");
	struct jump_sink g = { .len = 0 };
	assert_int_equal(read_sunk(&f, &g, CG_JUMP), 3);
	assert_string_equal(g.text, "0x400 5 1\njump=3 +8 * \n* +1 \n+1 * 1\njcnd=1/4 0x420 6 \n+3 6 \n+1 * 1|"
			    "+1 * 1|+1 * 1|* * 1|");
	assert_int_equal(g.lines, 10);
	assert_int_equal(g.ir, 6);
	assert_int_equal(g.last_line, 9);
	close_text(&f);
}

/* The empty lines after a block's cost lines (callgrind writes one after each) and among
 * them stay in its run, as text; one right after fn= is a record of its own. */
static void test_callgrind_copy__sink_runs_keep_empty_lines(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: instr line\nevents: Ir\nsummary: 4\n"
		      "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		      "0x400 5 1\n\n+1 * 1\n\nfn=(2) g\n\n0x500 1 1\n\n\nfn=(1)\n0x400 5 1\n"
		      "totals: 4\n");
	struct jump_sink g = { .len = 0 };
	assert_int_equal(read_sunk(&f, &g, CG_COMMENT), 1);
	assert_string_equal(g.text, "0x400 5 1\n\n+1 * 1\n|0x500 1 1\n\n|0x400 5 1|");
	assert_int_equal(g.lines, 4 + 3 + 1);
	assert_int_equal(g.ir, 4);
	close_text(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callgrind_copy__canonical_lines_kept),
		cmocka_unit_test(test_callgrind_copy__sink_runs_keep_jumps),
		cmocka_unit_test(test_callgrind_copy__sink_runs_keep_empty_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
