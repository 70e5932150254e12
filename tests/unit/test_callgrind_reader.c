/* Unit tests for callgrind_reader.c: each line kind, compression, parts, contexts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind/callgrind_names.h"
#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "helpers.h"
#include "core/io.h"

struct fixture {
	char *path;
	struct input *in;
	struct cg_reader *r;
	struct diag d;
	char *names[16];   /* function index -> name, from the records' definitions */
	uint32_t objs[16], files[16];   /* ... and its object and file */
	unsigned ndefs;    /* definitions handed out so far */
};

/* The reader hands out each function's name once, where it is defined. */
static void keep_defs(struct fixture *f, const struct cg_record *rec)
{
	for (unsigned i = 0; i < rec->ndefs; i++) {
		assert_true(rec->defs[i].fn < 16);
		free(f->names[rec->defs[i].fn]);
		f->names[rec->defs[i].fn] = strndup(rec->defs[i].name, rec->defs[i].len);
		f->objs[rec->defs[i].fn] = rec->defs[i].obj;
		f->files[rec->defs[i].fn] = rec->defs[i].file;
		f->ndefs++;
	}
}

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
	for (int i = 0; i < 16; i++)
		free(f->names[i]);
	input_close(f->in);
	unlink(f->path);
	free(f->path);
}

/* Reads records until one of KIND; fails on error or end. */
static void next_of(struct fixture *f, enum cg_kind kind, struct cg_record *rec)
{
	for (;;) {
		int rc = cg_reader_next(f->r, rec, &f->d);
		if (rc != 1)
			fail_msg("expected a record, got %d: %s", rc, f->d.msg);
		keep_defs(f, rec);
		if (rec->kind == kind)
			return;
	}
}

/* Reads to the end; returns the last rc and leaves the message in f->d. */
static int drain(struct fixture *f)
{
	struct cg_record rec;
	int rc;
	while ((rc = cg_reader_next(f->r, &rec, &f->d)) == 1)
		;
	return rc;
}

static const char *fn_name(struct fixture *f, uint32_t fn)
{
	assert_true(fn < 16 && f->names[fn]);
	return f->names[fn];
}

static const char *obj_of(struct fixture *f, uint32_t fn)
{
	const struct cg_names *n = cg_reader_names(f->r);
	assert_true(fn < 16 && f->names[fn]);
	return cg_names_get(n, SP_OBJ, f->objs[fn])->str;
}

static const char *file_of(struct fixture *f, uint32_t fn)
{
	const struct cg_names *n = cg_reader_names(f->r);
	assert_true(fn < 16 && f->names[fn]);
	return cg_names_get(n, SP_FILE, f->files[fn])->str;
}

#define HDR "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd: x\npart: 1\n"

static void test_callgrind_reader__subpositions(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: instr line\nevents: Ir Dr\nsummary: 10\n"
		      "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		      "0x1000 5 1 2\n+4 * 2\n-2 +3 3\n* -1\n0x20 0x10 4 0x5\ntotals: 10 7\n");
	struct cg_record rec;
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 0x1000);
	assert_int_equal(rec.pos[1], 5);
	assert_int_equal(rec.costs[0], 1);
	assert_int_equal(rec.costs[1], 2);
	assert_true(rec.clean);
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 0x1004);
	assert_int_equal(rec.pos[1], 5);
	assert_int_equal(rec.costs[1], 0);   /* missing trailing events are 0 */
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 0x1002);
	assert_int_equal(rec.pos[1], 8);
	assert_int_equal(rec.prev_pos[0], 0x1004);
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 0x1002);
	assert_int_equal(rec.pos[1], 7);
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 0x20);
	assert_int_equal(rec.pos[1], 16);
	assert_int_equal(rec.costs[1], 5);
	assert_false(rec.clean);   /* hex in a cost: callgrind_annotate reads decimal only */
	next_of(&f, CG_TOTALS, &rec);
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__three_id_spaces(void **state)
{
	(void)state;
	struct fixture f;
	/* id 1 names an object, a file and a function at once; the JIT name is first
	 * defined on cfn= with the implicit object of the caller (docs/formats.md 1.4). */
	open_text(&f, HDR "positions: line\nevents: Ir\nsummary: 3\n"
		      "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n0 1\n"
		      "cfn=(2) 0x0000000010000100\ncalls=1 0\n0 2\n"
		      "fn=(2)\n0 2\ntotals: 3\n");
	struct cg_record rec;
	next_of(&f, CG_FN, &rec);
	assert_string_equal(fn_name(&f, rec.fn), "0x0000000010000000");
	next_of(&f, CG_CALL, &rec);
	assert_string_equal(fn_name(&f, rec.callee), "0x0000000010000100");
	assert_string_equal(obj_of(&f, rec.callee), "???");
	assert_string_equal(file_of(&f, rec.callee), "???");
	assert_int_equal(rec.count, 1);
	assert_int_equal(rec.costs[0], 2);
	uint32_t callee = rec.callee;
	next_of(&f, CG_FN, &rec);
	assert_int_equal(rec.fn, callee);   /* the reference binds to the definition */
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__binding_at_definition(void **state)
{
	(void)state;
	struct fixture f;
	/* foo is defined at a call site with cob/cfi; fn=(2) under another ob/fl still means
	 * that identity (kcachegrind's rule, docs/formats.md 3.1). */
	open_text(&f, HDR "positions: line\nevents: Ir\nsummary: 2\n"
		      "ob=(1) /a\nfl=(1) a.c\nfn=(1) main\n1 1\n"
		      "cob=(2) /jit\ncfi=(2) j.c\ncfn=(2) foo\ncalls=1 3\n1 1\n"
		      "ob=(3) /other\nfl=(3) other.c\nfn=(2)\n3 1\ntotals: 2\n");
	struct cg_record rec;
	next_of(&f, CG_CALL, &rec);
	next_of(&f, CG_FN, &rec);
	assert_string_equal(fn_name(&f, rec.fn), "foo");
	assert_string_equal(obj_of(&f, rec.fn), "/jit");
	assert_string_equal(file_of(&f, rec.fn), "j.c");
	next_of(&f, CG_COST, &rec);
	const struct cg_names *n = cg_reader_names(f.r);
	assert_string_equal(cg_names_get(n, SP_FILE, rec.file)->str, "other.c");
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__uncompressed_and_fi(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: line\nevents: Ir\nsummary: 3\n"
		      "ob=/a\nfl=a.c\nfn=main\n1 1\nfi=inl.h\n2 1\nfe=a.c\n"
		      "cfn=callee\ncalls=2 9\n3 5\n4 1\nfn=callee\n9 0\ntotals: 3\n");
	struct cg_record rec;
	next_of(&f, CG_COST, &rec);
	next_of(&f, CG_COST, &rec);
	const struct cg_names *n = cg_reader_names(f.r);
	assert_string_equal(cg_names_get(n, SP_FILE, rec.file)->str, "inl.h");
	next_of(&f, CG_CALL, &rec);
	assert_string_equal(cg_names_get(n, SP_FILE, rec.file)->str, "a.c");
	assert_int_equal(rec.target[0], 9);
	assert_int_equal(rec.pos[0], 3);
	uint32_t callee = rec.callee;
	next_of(&f, CG_COST, &rec);
	assert_int_equal(rec.pos[0], 4);
	next_of(&f, CG_FN, &rec);
	assert_int_equal(rec.fn, callee);   /* same name, object and file: same identity */
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__parts_reset_ids(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: line\nevents: Ir\nsummary: 1\n"
		      "ob=(1) /a\nfl=(1) a.c\nfn=(1) main\n1 1\ntotals: 1\n"
		      "part: 2\npositions: instr\nevents: Ir\nsummary: 2\n"
		      "ob=(1) /b\nfl=(1) b.c\nfn=(1) other\n0x10 2\ntotals: 2\n");
	struct cg_record rec;
	next_of(&f, CG_TOTALS, &rec);
	next_of(&f, CG_HEADER, &rec);
	assert_true(rec.new_part);
	assert_int_equal(rec.key, HK_PART);
	next_of(&f, CG_FN, &rec);
	assert_string_equal(fn_name(&f, rec.fn), "other");
	assert_int_equal(cg_reader_pos_index(f.r, POS_INSTR), 0);
	assert_int_equal(cg_reader_pos_index(f.r, POS_LINE), -1);
	assert_int_equal(cg_reader_part_count(f.r), 2);
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__jumps_and_crlf(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: instr line\r\nevents: Ir\r\nsummary: 1\r\n"
		      "ob=(1) ???\r\nfl=(1) ???\r\nfn=(1) 0x0000000010000000\r\n0x10000000 0 1\r\n"
		      "jcnd=19800/20000 +9 0\r\n+4 0\r\njump=50 0x10000204 0\r\n* 0\r\ntotals: 1\r\n");
	struct cg_record rec;
	next_of(&f, CG_JUMP, &rec);
	assert_true(rec.conditional);
	assert_int_equal(rec.followed, 19800);
	assert_int_equal(rec.count, 20000);
	assert_int_equal(rec.target[0], 0x10000009);
	assert_int_equal(rec.pos[0], 0x10000004);
	next_of(&f, CG_JUMP, &rec);
	assert_false(rec.conditional);
	assert_int_equal(rec.count, 50);
	assert_int_equal(rec.target[0], 0x10000204);
	assert_int_equal(rec.callee, rec.fn);
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

static void test_callgrind_reader__long_line_and_context_names(void **state)
{
	(void)state;
	char *big = malloc(300000);
	int n = sprintf(big, HDR "positions: line\nevents: Ir\nsummary: 1\nob=(1) ???\nfl=(1) ???\nfn=(1) ");
	memset(big + n, 'a', 200000);
	n += 200000;
	n += sprintf(big + n, "'0x0000000010000000'main\n0 1\ntotals: 1\n");
	struct fixture f;
	open_text(&f, big);
	struct cg_record rec;
	next_of(&f, CG_FN, &rec);
	assert_int_equal(strlen(fn_name(&f, rec.fn)), 200000 + strlen("'0x0000000010000000'main"));
	assert_int_equal(drain(&f), 0);
	close_text(&f);
	free(big);
}

struct bad_case {
	const char *text;
	const char *msg;
};

/* Each case's text read to its end: read whole where MSG is NULL, else refused with an
 * error holding MSG. */
static void expect_cases(const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fixture f;
		open_text(&f, cases[i].text);
		int rc = drain(&f);
		if (!cases[i].msg) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -1);
			if (!strstr(f.d.msg, cases[i].msg))
				fail_msg("case %zu: '%s' lacks '%s'", i, f.d.msg, cases[i].msg);
		}
		close_text(&f);
	}
}

static void test_callgrind_reader__errors(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\ncfn=(2) g\ncalls=1 0\nfn=(1)\ntotals: 0\n",
		  ":13: expected the cost line of the call before it, got 'fn=(1)'" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(3)\n", ":10: function id (3) is used before it is defined" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n1 5\ntotals: 6\n",
		  ":12: 'totals:' gives 6 for event Ir, but the cost lines of part 1 add up to 5" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n1 5\n", ":11: the file ends inside part 1" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n1\t5\ntotals: 5\n", NULL },   /* tabs are fine */
		{ HDR "events: Ir\nob=(1) x\nfn=(1) f\nob=(2) y\n1 5\ntotals: 5\n", ":11: cost line before any 'fn='" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n1 5\npart: 2\n", "'part: 2' starts a new part, but part 1 has no 'totals:'" },
		{ "desc: I1 cache: 1\ncmd: x\nevents: Ir\nfl=x.c\nfn=f\n0 5\nsummary: 5\n", "this is cachegrind output" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\nbb=3\n", "--dump-bbs=yes" },
		{ HDR "positions: instr\nevents: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n0x10 1\n-0x20 1\n", "relative position goes below 0" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n99999999999999999999 1\n", "expected a position" },
		/* "-D" and "+D" past 0 and 2^64 - 1 as callgrind would write them (the fast
		 * parser's), not only in hex */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n3 1\n-4 1\n", ":12: relative position goes below 0" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n18446744073709551615 1\n+1 1\n",
		  ":12: position overflows 64 bits" },
		/* an "=" where a tag would end, after bytes that are no tag: not read as one */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\nf1=(2) g\n", ":11: expected a callgrind line" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\ncfx=(2) g\n", ":11: unknown position spec" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\nFN=(2) g\n", ":11: unknown position spec" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\nc_fn=(2) g\n", ":11: expected a callgrind line" },
	};
	expect_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* One name defined under two ids (callgrind's --separate-callers can do that): two
 * indices, each handed out with its name, object and file, for the consumer to merge by
 * name; an id defined again with its own name is that index, no new definition. */
static void test_callgrind_reader__one_name_two_ids(void **state)
{
	(void)state;
	struct fixture f;
	open_text(&f, HDR "positions: line\nevents: Ir\nsummary: 3\n"
		      "ob=(1) /a\nfl=(1) a.c\nfn=(1) f'g\n1 1\n"
		      "fn=(2) f'g\n2 1\n"
		      "fn=(1) f'g\n3 1\n"
		      "cfn=(2) f'g\ncalls=1 2\n3 1\ntotals: 3\n");
	struct cg_record rec;
	next_of(&f, CG_FN, &rec);
	uint32_t first = rec.fn;
	next_of(&f, CG_FN, &rec);
	uint32_t second = rec.fn;
	assert_int_not_equal(first, second);
	assert_string_equal(fn_name(&f, first), "f'g");
	assert_string_equal(fn_name(&f, second), "f'g");
	assert_string_equal(obj_of(&f, second), "/a");
	assert_string_equal(file_of(&f, second), "a.c");
	assert_int_equal(f.ndefs, 2);
	next_of(&f, CG_FN, &rec);
	assert_int_equal(rec.fn, first);     /* "(1) f'g" again: the same function */
	assert_int_equal(rec.ndefs, 0);
	next_of(&f, CG_CALL, &rec);
	assert_int_equal(rec.callee, second);
	assert_int_equal(f.ndefs, 2);
	assert_int_equal(drain(&f), 0);
	close_text(&f);
}

/* An id defined again with another name, or with its name in another object or file, is
 * refused: kcachegrind and callgrind_annotate would disagree on what it means. */
static void test_callgrind_reader__redefinition_refused(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) f\n1 1\nfn=(2) g\n1 1\ntotals: 2\n",
		  ":12: id (2) redefined as 'g', which is not the name (or the object and file) it was defined with" },
		/* the same length, one byte apart, past the first sixteen */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) 0123456789abcdefXYZ\n1 1\n"
		  "fn=(2) 0123456789abcdefXyZ\n1 1\ntotals: 2\n",
		  ":12: id (2) redefined as '0123456789abcdefXyZ', which is not the name" },
		/* the same name in another object */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) f\n1 1\nob=(3) y\nfn=(2) f\n1 1\ntotals: 2\n",
		  ":13: id (2) redefined as 'f', which is not the name (or the object and file)" },
		/* the same name in another file, at a call site */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) f\n1 1\ncfi=(4) z.c\ncfn=(2) f\ncalls=1 1\n1 0\ntotals: 1\n",
		  ":13: id (2) redefined as 'f'" },
		/* the same name, object and file again: fine */
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) f\n1 1\ncfn=(2) f\ncalls=1 1\n1 0\nfn=(2) f\n1 1\ntotals: 2\n",
		  NULL },
	};
	expect_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* The fn= lines that cg_namerefs_fast_fn() takes from the buffer and the ones it leaves to
 * the general path read alike: the same name (blanks after the id skipped, a CR before
 * the newline dropped, a blank at the end kept), the same line number, the same parts. */
static void test_callgrind_reader__fn_line_forms(void **state)
{
	(void)state;
	static const struct {
		const char *line, *name;
		size_t nparts;
	} forms[] = {
		{ "fn=(3) f", "f", 0 },
		{ "fn=(3)  f", "f", 0 },
		{ "fn=(3)\tf", "f", 0 },
		{ "fn=(3) f\r", "f", 0 },
		{ "fn=(3) f ", "f ", 0 },
		{ "fn=(003) f", "f", 0 },
		{ "fn=(3) f'0x0000000004a8e0c0'g'0x00001000", "f'0x0000000004a8e0c0'g'0x00001000", 2 },
		{ "fn=(3)f", "f", 0 },
		{ "fn=f'0x1", "f'0x1", 1 },
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), HDR "events: Ir\nob=(1) x\nfl=(1) x\n%s\n1 1\n"
			 "fn=(9) h\n1 1\ntotals: 2\n", forms[i].line);
		struct fixture f;
		open_text(&f, text);
		struct cg_record rec;
		next_of(&f, CG_FN, &rec);
		assert_int_equal(rec.line, 10);
		assert_int_equal(rec.ndefs, 1);
		assert_int_equal(rec.defs[0].nparts, forms[i].nparts);
		for (size_t k = 0; k < rec.defs[0].nparts; k++)
			assert_memory_equal(rec.defs[0].name + rec.defs[0].parts[k], "'0x", 3);
		if (strcmp(fn_name(&f, rec.fn), forms[i].name))
			fail_msg("%s: read as '%s'", forms[i].line, fn_name(&f, rec.fn));
		next_of(&f, CG_FN, &rec);
		assert_int_equal(rec.line, 12);
		assert_string_equal(fn_name(&f, rec.fn), "h");
		assert_int_equal(drain(&f), 0);
		close_text(&f);
	}
	/* and what the general path refuses, refused alike */
	static const struct bad_case bad[] = {
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(123456789012345678901) f\n1 1\ntotals: 1\n",
		  ":10: expected '(id)' with a decimal id" },
		{ HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(4)\n1 1\ntotals: 1\n",
		  ":10: function id (4) is used before it is defined" },
		{ HDR "fn=(1) x\nevents: Ir\n", ":7: body line outside a part's body" },
	};
	expect_cases(bad, sizeof(bad) / sizeof(bad[0]));
}

/* fn= lines longer than the limit, a reference (made long by the zeros of its id) and a
 * definition: the general path's error, not the fast path's reading. No header lines,
 * which would be longer. */
static void test_callgrind_reader__fn_lines_over_the_limit(void **state)
{
	(void)state;
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "events: Ir\nob=(1) x\nfl=(1) x\nfn=(1) f\n1 1\nfn=(000000000000000000001)\n1 1\n"
		  "totals: 2\n", ":6: line longer than the limit of 24 bytes" },
		{ "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) a_name_longer_than_that\n1 1\ntotals: 1\n",
		  ":4: line longer than the limit of 24 bytes" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct diag d = { 0 };
		char *path = tmp_file(cases[i].text);
		struct input *in = input_open(path, &d);
		assert_non_null(in);
		struct cg_reader *r = cg_reader_new(in, 24);
		struct cg_record rec;
		int rc;
		while ((rc = cg_reader_next(r, &rec, &d)) == 1)
			;
		assert_int_equal(rc, -1);
		if (!strstr(d.msg, cases[i].err))
			fail_msg("case %zu: %s", i, d.msg);
		cg_reader_free(r);
		input_close(in);
		unlink(path);
		free(path);
	}
}

/* Names longer than the 65,535 bytes a length is kept in: the same again is fine, one a
 * byte longer (both lengths capped alike) is refused by the fingerprint. */
static void test_callgrind_reader__long_name_redefinition(void **state)
{
	(void)state;
	enum { LONG = 70000 };
	char *a = malloc(LONG + 2), *text = malloc(3 * LONG + 512);
	assert_non_null(a);
	assert_non_null(text);
	memset(a, 'a', LONG + 1);
	a[LONG + 1] = '\0';
	for (int longer = 0; longer < 2; longer++) {
		snprintf(text, 3 * LONG + 512, HDR "events: Ir\nob=(1) x\nfl=(1) x\nfn=(2) %.*s\n1 1\n"
			 "fn=(2) %.*s\n1 1\ntotals: 2\n", LONG, a, LONG + longer, a);
		struct bad_case c = { text, longer ? ":12: id (2) redefined as 'aaaa" : NULL };
		expect_cases(&c, 1);
	}
	free(a);
	free(text);
}

/* The id tables: dense ids in 3-byte entries, sparse and hostile ids and indices of
 * 2^24 - 1 or more in the map; every id gives back the index put last. */
static void test_callgrind_reader__id_tables(void **state)
{
	(void)state;
	enum { N = 20000 };
	static uint64_t ids[N];
	static uint32_t idx[N];
	struct cg_names n;
	cg_names_init(&n);
	srand(25);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < N; i++) {
			int k = rand() % 8;
			ids[i] = k == 0 ? UINT64_MAX - (uint64_t)(rand() % 1000)          /* hostile */
			       : k == 1 ? ((uint64_t)1 << 40) + (uint64_t)rand()       /* sparse */
			       : (uint64_t)(rand() % (3 * N));                       /* dense, reused */
			idx[i] = k == 2 ? CG_DENSE_NONE + (uint32_t)(rand() % 3)       /* past 3 bytes */
			       : (uint32_t)rand() % CG_DENSE_NONE;
			cg_names_id_put(&n, SP_FN, ids[i], idx[i]);
		}
		for (size_t i = 0; i < N; i++) {
			size_t last = i;   /* the index this id got last */
			for (size_t j = i + 1; j < N; j++)
				if (ids[j] == ids[i])
					last = j;
			assert_int_equal(cg_names_id_get(&n, SP_FN, ids[i]), idx[last]);
		}
		assert_int_equal(cg_names_id_get(&n, SP_FN, 3 * N + 5), UINT32_MAX);
		assert_int_equal(cg_names_id_get(&n, SP_OBJ, ids[0]), UINT32_MAX);
		cg_names_clear(&n);   /* a new part: nothing bound */
		assert_int_equal(cg_names_id_get(&n, SP_FN, ids[N - 1]), UINT32_MAX);
	}
	cg_names_free(&n);
}

/* What the sink received, checked against what the test wrote. */
struct sink_log {
	char *text;             /* every line delivered (sink or record), in order, "\n" after each */
	size_t len, cap;
	uint64_t lines, runs, multi_line_runs, jump_runs, sums[2];
	unsigned nev;
	/* per text line, in order: the absolute instr position after it (the base), whether
	 * it is a cost line (not a jump's two lines), and 0 for x.c, 1 for y.c */
	const uint64_t *instr;
	const char *is_cost;
	const uint32_t *files;
	uint32_t file_of[2];    /* the reader's index of each, once seen */
	int file_changes;
	uint32_t last_file;
};

static void log_text(struct sink_log *g, const char *t, size_t n)
{
	if (g->len + n + 1 > g->cap) {
		g->cap = (g->len + n + 1) * 2;
		g->text = realloc(g->text, g->cap);
		assert_non_null(g->text);
	}
	memcpy(g->text + g->len, t, n);
	g->len += n;
	g->text[g->len++] = '\n';
}

static void sink_check(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct sink_log *g = ctx;
	(void)fn;
	assert_true(run->lines >= 1);
	assert_true(run->first_len <= run->len);
	assert_int_equal(run->lines == 1, run->first_len == run->len);
	uint64_t first = g->lines, last = g->lines + run->lines - 1;
	assert_true(g->is_cost[first]);
	assert_int_equal(run->first_pos[0], g->instr[first]);
	assert_int_equal(run->last_pos[0], g->instr[last]);
	if (first > 0)
		assert_int_equal(run->prev[0], g->instr[first - 1]);
	uint64_t lo = UINT64_MAX, hi = 0;
	int jumps = 0;
	for (uint64_t i = first; i <= last; i++) {
		if (!g->is_cost[i]) {
			jumps = 1;
			continue;
		}
		lo = g->instr[i] < lo ? g->instr[i] : lo;
		hi = g->instr[i] > hi ? g->instr[i] : hi;
		if (g->file_of[g->files[i]] == UINT32_MAX)
			g->file_of[g->files[i]] = file;
		assert_int_equal(file, g->file_of[g->files[i]]);
	}
	assert_int_equal(run->lo, lo);
	assert_int_equal(run->hi, hi);
	if (g->lines && file != g->last_file)
		g->file_changes++;
	g->last_file = file;
	g->lines += run->lines;
	g->runs++;
	g->multi_line_runs += run->lines > 1;
	g->jump_runs += jumps;
	for (unsigned e = 0; e < g->nev; e++)
		g->sums[e] += run->sums[e];
	log_text(g, run->text, run->len);
}

/* Cost lines of a block that stays are handed over in runs, straight from the line
 * reader's buffer: over several buffer fills (4 MiB of lines), with name lines (fi=) and
 * lines that are not canonical (two spaces: a record) in between, every line arrives
 * exactly once, in order, with its absolute positions, file and costs; so do the jumps
 * inside the function (jump=, jcnd= and their source lines), which move the base. NEV
 * events and NPOS positions: the reader has its own loop for one event and one or two
 * positions. */
static void sink_runs_case(unsigned nev, unsigned npos)
{
	enum { N = 450000 };
	size_t nlines = 2 * (size_t)N;   /* at most one jump (two lines) after each line */
	uint64_t *instr = malloc(nlines * sizeof(*instr));
	uint32_t *files = malloc(nlines * sizeof(*files));
	char *is_cost = malloc(nlines);
	size_t cap = 96 * (size_t)N + 1024, len = 0;
	char *text = malloc(cap), *body = malloc(cap);
	size_t blen = 0, k = 0;
	assert_true(instr && files && is_cost && text && body);
	len += (size_t)sprintf(text + len, HDR "positions: %s\nevents: %s\n"
			       "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n",
			       npos == 2 ? "instr line" : "instr", nev == 2 ? "Ir Dr" : "Ir");
	uint64_t a = 0, ir = 0, dr = 0;
	int other_file = 0;
	for (uint32_t i = 0; i < N; i++) {
		if (i % 7919 == 7918) {
			other_file = !other_file;
			len += (size_t)sprintf(text + len, other_file ? "fi=(2) y.c\n" : "fe=(1)\n");
		}
		char pos[64], line[128], jump[64] = "";
		const char *sep = " ";
		uint64_t c1 = i % 13, c2 = i % 3, jump_to = 0;
		switch (i % 1000 == 999 ? 5 : i % 5) {
		case 0: a = 0x400000 + i * 4;
			sprintf(pos, npos == 2 ? "0x%llx %u" : "0x%llx", (unsigned long long)a, i % 1000);
			break;
		case 1: a += 3; sprintf(pos, npos == 2 ? "+3 *" : "+3"); c2 = 0;
			/* a jump inside the function, then its source line, which moves the base */
			if (i % 10 == 1) {
				sprintf(jump, npos == 2 ? "jump=%u +7 *\n+1 *" : "jump=%u +7\n+1", i % 50);
				jump_to = a + 1;
			} else {
				sprintf(jump, npos == 2 ? "jcnd=3/5 -2 *\n* * " : "jcnd=3/5 -2\n* ");
				jump_to = a;
			}
			break;
		case 2: a -= 1; sprintf(pos, npos == 2 ? "-1 +2" : "-1"); break;
		case 3:
			sprintf(pos, npos == 2 ? "* -1" : "*"); c2 = 0;
			if (c1 == 0)
				sep = NULL;   /* no costs at all: zero */
			break;
		case 5:   /* two spaces: not canonical, so a record */
			a += 1; c2 = 0; sprintf(pos, npos == 2 ? "+1 * " : "+1 "); break;
		default: a += 12345678;
			sprintf(pos, npos == 2 ? "+12345678 4000000000" : "+12345678");
			c2 = 1234567890123;
			break;
		}
		if (nev == 1)
			c2 = 0;
		int n;
		if (!sep)
			n = sprintf(line, "%s", pos);
		else if (nev == 2 && c2)
			n = sprintf(line, "%s %llu %llu", pos, (unsigned long long)c1, (unsigned long long)c2);
		else
			n = sprintf(line, "%s %llu", pos, (unsigned long long)c1);
		instr[k] = a;
		files[k] = other_file;
		is_cost[k++] = 1;
		ir += c1;
		dr += c2;
		len += (size_t)sprintf(text + len, "%s\n", line);
		memcpy(body + blen, line, (size_t)n);
		blen += (size_t)n;
		body[blen++] = '\n';
		if (*jump) {
			a = jump_to;
			for (int j = 0; j < 2; j++) {
				instr[k] = a;   /* the jump line leaves the base, the source line set it */
				files[k] = other_file;
				is_cost[k++] = 0;
			}
			len += (size_t)sprintf(text + len, "%s\n", jump);
			blen += (size_t)sprintf(body + blen, "%s\n", jump);
		}
	}
	if (nev == 2)
		len += (size_t)sprintf(text + len, "totals: %llu %llu\n", (unsigned long long)ir,
				       (unsigned long long)dr);
	else
		len += (size_t)sprintf(text + len, "totals: %llu\n", (unsigned long long)ir);
	assert_true(len > (4u << 20));
	struct fixture f;
	memset(&f, 0, sizeof(f));
	f.path = tmp_file_n(text, len);
	f.in = input_open(f.path, &f.d);
	assert_non_null(f.in);
	f.r = cg_reader_new(f.in, 1 << 20);
	struct sink_log g = { .nev = nev, .instr = instr, .is_cost = is_cost, .files = files,
			      .file_of = { UINT32_MAX, UINT32_MAX } };
	struct cg_record rec;
	int rc, records = 0;
	while ((rc = cg_reader_next(f.r, &rec, &f.d)) == 1) {
		keep_defs(&f, &rec);
		if (rec.kind == CG_FN)
			cg_reader_sink_costs(f.r, rec.fn, sink_check, &g);
		if (rec.kind == CG_JUMP) {
			/* a jump first in a buffer, with no cost line before it to join */
			assert_false(is_cost[g.lines] || is_cost[g.lines + 1]);
			assert_int_equal(rec.pos[0], instr[g.lines + 1]);
			assert_non_null(rec.line_text);
			log_text(&g, rec.line_text, rec.line_len);
			log_text(&g, rec.text, rec.len);
			g.lines += 2;
			continue;
		}
		if (rec.kind != CG_COST)
			continue;
		/* the line that is not canonical, and nothing else, comes as a record */
		assert_false(rec.clean);
		assert_true(is_cost[g.lines]);
		assert_int_equal(rec.pos[0], instr[g.lines]);
		for (unsigned e = 0; e < nev; e++)
			g.sums[e] += rec.costs[e];
		g.lines++;
		records++;
		log_text(&g, rec.text, rec.len);
	}
	if (rc != 0)
		fail_msg("%s (lines %llu, sums %llu)", f.d.msg, (unsigned long long)g.lines, (unsigned long long)g.sums[0]);
	assert_int_equal(g.lines, k);
	assert_int_equal(records, N / 1000);
	assert_true(g.multi_line_runs > 0 && g.runs < N / 100);
	assert_true(g.jump_runs > 0);
	assert_true(g.file_changes > 0);
	assert_true(g.file_of[0] != g.file_of[1] && g.file_of[1] != UINT32_MAX);
	assert_int_equal(g.sums[0], ir);
	assert_int_equal(g.sums[1], dr);
	assert_int_equal(g.len, blen);
	assert_memory_equal(g.text, body, blen);
	free(g.text);
	close_text(&f);
	free(text);
	free(body);
	free(instr);
	free(files);
	free(is_cost);
}

static void test_callgrind_reader__sink_runs(void **state)
{
	(void)state;
	sink_runs_case(2, 2);
}

static void test_callgrind_reader__sink_runs_one_event(void **state)
{
	(void)state;
	sink_runs_case(1, 2);
}

static void test_callgrind_reader__sink_runs_one_event_one_position(void **state)
{
	(void)state;
	sink_runs_case(1, 1);
}

/* ---- the sink's two loops agree ---- */

/* The reader has a loop of its own for runs of one event (callgrind_costs.c,
 * sink_run_1ev()); with two events the general one reads them. A body whose lines carry at
 * most one cost reads the same under "events: Ir" and "events: Ir Dr" (a missing cost is
 * 0): every record, every run and every error must then be the same, down to each
 * position of each run. */

static uint64_t xs = 88172645463325252ULL;
static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}
static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

struct text {
	char *s;
	size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	if (!t->s) {
		t->cap = 256;
		t->s = malloc(t->cap);
		assert_non_null(t->s);
	}
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
		assert_true(k >= 0);
		if (t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		t->cap = 2 * (t->n + (size_t)k + 64);
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
}

static int tame;   /* no values near the limits: a large body that reads to its end */

/* Fails, showing where the two readings A and Z of INPUT part (WHAT names them), unless
 * they are the same. */
static void same_reading(const char *a, const char *z, const char *what, const char *input)
{
	if (strcmp(a, z) == 0)
		return;
	size_t i = 0;
	while (a[i] == z[i])
		i++;
	while (i > 0 && a[i - 1] != '\n')
		i--;
	fprintf(stderr, "%s: read differently from\n%.400s\n---- the second reading:\n%.400s\n"
		"---- input:\n%.3000s\n", what, a + i, z + i, input);
	fail();
}

/* A value: small ones mostly, now and then one near the limits of 64 bits or of 19 digits. */
static unsigned long long value(void)
{
	switch (tame ? 3 : below(400)) {
	case 0: return UINT64_MAX - below(4);
	case 1: return 9999999999999999999ULL - below(3);
	case 2: return rnd();
	default: return below(8) ? below(12) : below(8) ? below(1000000) : 0x400000 + below(100000);
	}
}

/* The layouts the generated bodies are read under (npos 2 for the first and last). */
static const char *const layouts[] = { "instr line", "line", "instr", "line instr" };

static unsigned junk;   /* per 1000 subpositions: 0 in half the cases */
static int big_costs;   /* costs of about 2^62: the part's sum overflows in a few lines */

/* A subposition: each form callgrind writes, and now and then one that only the general
 * path takes, or that it refuses (which ends the reading, the same way for both). The
 * bases stay well above what "-N" takes off. */

static void subposition(struct text *t)
{
	unsigned k = below(990 + junk);
	if (k < 300) {
		put(t, "*");
	} else if (k < 550) {
		put(t, "+%u", below(8) ? below(16) : below(100000));
	} else if (k < 650) {
		put(t, tame ? "+%u" : "-%u", below(4));   /* the bases may be small */
	} else if (k < 750) {
		/* now and then near 2^64: "+D" then goes past it */
		put(t, "0x%llx", (unsigned long long)(tame || below(4) ? 0x400000 + below(1 << 20) :
						     below(4) ? UINT64_MAX - below(12) : rnd() | 1ULL << 62));
	} else if (k < 990) {
		put(t, "%llu", 1000 + value());
	} else {
		switch (below(10)) {
		case 0: put(t, "+%llu", value()); break;
		case 1: put(t, "-%llu", value()); break;
		case 2: put(t, "0X%x", below(1 << 20)); break;
		case 3: put(t, "0x%x", 0xABC00 + below(256)); break;   /* uppercase digits */
		case 4: put(t, "0x%llx%u", (unsigned long long)rnd() | 1ULL << 63, below(16)); break;
		case 5: put(t, "0x"); break;
		case 6: put(t, "%llu%u", 1000000000000000000ULL + below(1000), below(1000)); break;
		case 7: put(t, "0%u", below(10)); break;
		case 8: put(t, "%u", below(1000)); break;
		default: put(t, "%c", "+-xg*/:"[below(7)]); break;
		}
	}
}

static void blank(struct text *t)
{
	unsigned k = below(60);
	put(t, k == 0 ? "  " : k == 1 ? "\t" : " ");
}

static void positions(struct text *t, unsigned npos)
{
	for (unsigned i = 0; i < npos; i++) {
		if (i)
			blank(t);
		subposition(t);
	}
}

static void end_line(struct text *t)
{
	unsigned k = below(80);
	put(t, k == 0 ? " \n" : k == 1 ? "\r\n" : "\n");
}

/* A cost line with no cost or one (never two: one event would refuse what two take).
 * A third are "+D D C" or "+D C" (one digit each, C mostly one digit too), as most of
 * callgrind's are, which the one-event loop reads from one word (short_line()); with
 * junk, one of their bytes may be a byte next to the digits or the spaces. */
static void cost_line(struct text *t, unsigned npos)
{
	if (below(3) == 0) {
		char s[40];
		unsigned long long c = below(3) ? below(10) : big_costs ? (1ULL << 62) + below(1000) : value();
		int n = npos == 2 ? snprintf(s, sizeof(s), "+%u %u %llu", below(10), below(10), c)
				  : snprintf(s, sizeof(s), "+%u %llu", below(10), c);
		if (junk && below(4) == 0)
			s[below((unsigned)n)] = "/:\x1f!-x\x80"[below(7)];
		put(t, "%s", s);
		end_line(t);
		return;
	}
	positions(t, npos);
	if (below(12)) {
		blank(t);
		put(t, "%llu", big_costs ? (1ULL << 62) + below(1000) :
			       below(20) ? (unsigned long long)below(12) : value());
	}
	end_line(t);
}

/* A block's first line, absolute as callgrind writes it. */
static void first_line(struct text *t, unsigned npos)
{
	if (npos == 2)
		put(t, "0x%x %u %u\n", 0x400000 + below(1 << 20), 1000 + below(100), below(5));
	else
		put(t, "%u %u\n", 1000 + below(100), below(5));
}

static void body(struct text *t, unsigned npos, unsigned nlines)
{
	/* names are defined once, then named by id (a second definition in another file's
	 * context is an error) */
	unsigned callee = 0, target = 0, objs = 0, defined = 0;
	put(t, "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n");
	first_line(t, npos);
	for (unsigned i = 0; i < nlines; i++) {
		unsigned k = below(100);
		if (k < 70) {
			cost_line(t, npos);
		} else if (k < 80) {   /* a jump and its source line */
			/* big counts make a jump's line longer than the one-event loop's cost lines */
			unsigned long long big = big_costs ? 1ULL << 62 : 0;
			if (below(2))
				put(t, "jump=%llu ", big + below(50));
			else
				put(t, "jcnd=%llu/%llu ", big + below(5), big + 5 + below(5));
			positions(t, npos);
			end_line(t);
			positions(t, npos);
			end_line(t);
		} else if (k < 84) {
			/* a call, now and then with cob=, cfi= or cfl= before it (naming an object
			 * or file defined before, or defining one), to the block's own function or
			 * to one it defines, with no cfn= (the last one's callee), or with a
			 * comment before its cost line */
			unsigned o = below(8), f = below(8), n = below(12);
			if (o < 2)
				put(t, "cob=(1)\n");
			else if (o == 2)
				put(t, objs++ ? "cob=(2)\n" : "cob=(2) /lib/y.so\n");
			if (f < 2)
				put(t, f ? "cfi=(1)\n" : "cfl=(1)\n");
			else if (f == 2)
				put(t, "cfi=(2) y.c\n");
			if (n < 2)
				put(t, "cfn=(1)\n");
			else if (n == 2)
				put(t, "cfn=(%u) f%u\n", 5 + defined, defined), defined++;
			else if (n != 3)
				put(t, callee++ ? "cfn=(2)\n" : "cfn=(2) callee\n");
			put(t, "calls=%u ", 1 + below(3));
			positions(t, npos);
			end_line(t);
			if (below(20) == 0)
				put(t, "# between\n");
			cost_line(t, npos);
		} else if (k < 87) {
			put(t, below(2) ? "fi=(2) y.c\n" : "fe=(1)\n");
		} else if (k < 89) {
			put(t, below(2) ? "jfi=(2) y.c\n" : target++ ? "jfn=(3)\n" : "jfn=(3) target\n");
		} else if (k < 93) {
			put(t, below(2) ? "fn=(1)\n" : "fn=(4) other\n");
			first_line(t, npos);
		} else if (k < 95) {
			put(t, below(2) ? "\n" : "# a comment\n");
		} else {
			cost_line(t, npos);
		}
	}
	put(t, "totals: %u\n", below(3));
}

struct agree_log {
	struct text t;
	unsigned npos;
	struct cg_reader *r;
	int call_lines;   /* calls: records are logged without their line number ... */
	unsigned calls_taken;   /* ... and those a call sink took counted (call_sink_agrees) */
};

static void log_positions(struct agree_log *g, const uint64_t *pos)
{
	for (unsigned i = 0; i < g->npos; i++)
		put(&g->t, " %llu", (unsigned long long)pos[i]);
}

static void agree_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct agree_log *g = ctx;
	put(&g->t, "run fn %u file %u lines %llu len %zu first %zu prev", fn, file,
	    (unsigned long long)run->lines, run->len, run->first_len);
	log_positions(g, run->prev);
	put(&g->t, " first");
	log_positions(g, run->first_pos);
	put(&g->t, " cost %llu last", (unsigned long long)run->first_costs[0]);
	log_positions(g, run->last_pos);
	put(&g->t, " sum %llu lo %llu hi %llu [%.*s]\n", (unsigned long long)run->sums[0],
	    (unsigned long long)run->lo, (unsigned long long)run->hi, (int)run->len, run->text);
}

static void agree_record(struct agree_log *g, const struct cg_record *rec)
{
	/* the events: lines differ, and headers are not the loops' */
	if (rec->kind == CG_HEADER) {
		put(&g->t, "header line %llu\n", (unsigned long long)rec->line);
		return;
	}
	for (unsigned i = 0; i < rec->ndefs; i++)
		put(&g->t, "def %u obj %u file %u [%.*s]\n", rec->defs[i].fn, rec->defs[i].obj,
		    rec->defs[i].file, (int)rec->defs[i].len, rec->defs[i].name);
	if (rec->kind == CG_CALL && g->call_lines)
		put(&g->t, "rec %d [%.*s]", (int)rec->kind, (int)rec->len, rec->text);
	else
		put(&g->t, "rec %d line %llu [%.*s]", (int)rec->kind, (unsigned long long)rec->line,
		    (int)rec->len, rec->text);
	if (rec->kind == CG_COST || rec->kind == CG_CALL || rec->kind == CG_JUMP) {
		put(&g->t, " fn %u file %u clean %d pos", rec->fn, rec->file, rec->clean);
		log_positions(g, rec->pos);
		put(&g->t, " prev");
		log_positions(g, rec->prev_pos);
	}
	if (rec->kind == CG_COST || rec->kind == CG_CALL)
		put(&g->t, " cost %llu", (unsigned long long)rec->costs[0]);
	if (rec->kind == CG_CALL || rec->kind == CG_JUMP) {
		put(&g->t, " count %llu target", (unsigned long long)rec->count);
		log_positions(g, rec->target);
		if (rec->line_text)
			put(&g->t, " [%.*s]", (int)rec->line_len, rec->line_text);
	}
	put(&g->t, "\n");
}


/* ---- a call sink takes the calls a record would carry ---- */

/* In a block whose cost lines are sunk in runs or offered one by one, a call sink
 * (cg_reader_sink_calls(), augment's plain blocks and JIT blocks) takes each call as
 * callgrind writes it, "cob=(ID)", "cfi=(ID)" or
 * "cfl=(ID)" and "cfn=(ID)" referring to names defined before, a canonical calls= line
 * and its canonical cost line right after it: what it gets must be what the call's record
 * carries, and every other line must read as without it (the same records, runs, errors
 * and sums; a call that defines its callee, has a comment before its cost line or text
 * not canonical comes as a record). Calls are logged as records, but for the line number,
 * which a call sink is not given; the blocks to sink are chosen by one seed for both. */

static void call_logged(void *ctx, uint32_t fn, uint32_t file, const struct cg_call_line *c)
{
	struct agree_log *g = ctx;
	struct cg_record rec = {
		.kind = CG_CALL, .defs = c->defs, .ndefs = c->ndefs, .fn = fn, .file = file,
		.callee = c->callee, .count = c->count,
		.target = c->target, .pos = c->pos, .prev_pos = c->prev, .costs = c->costs,
		.clean = 1, .line_text = c->line_text, .line_len = c->line_len, .text = c->text,
		.len = c->len,
	};
	agree_record(g, &rec);
	put(&g->t, " callee %u\n", c->callee);
	g->calls_taken++;
}

static int all_blocks;   /* read_sinking() sinks every block, not those the seed chooses */
static int line_blocks;  /* ... and offers their cost lines to a line sink, not in runs */

/* read_sinking()'s line sink: takes the lines at addresses not 3 mod 4, each logged (the
 * others come as records). */
static int agree_line(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *l)
{
	struct agree_log *g = ctx;
	if (l->pos[0] % 4 == 3)
		return 0;
	put(&g->t, "line fn %u file %u prev", fn, file);
	log_positions(g, l->prev);
	put(&g->t, " pos");
	log_positions(g, l->pos);
	put(&g->t, " cost %llu [%.*s]\n", (unsigned long long)l->costs[0], (int)l->len, l->text);
	return 1;
}

/* Reads TEXT with a sink on the blocks SEED chooses (all with all_blocks; a line sink with
 * line_blocks), and with CALLS a call sink too, logging every record, run, line and call
 * taken (*TAKEN counts the calls); the end says how it ended. */
static char *read_sinking(const char *text, size_t n, unsigned npos, size_t max_line,
			  uint64_t seed, int calls, unsigned *taken)
{
	struct input *in = input_open_mem(text, n, "t.cg");
	assert_non_null(in);
	struct agree_log g = { .npos = npos, .r = cg_reader_new(in, max_line), .call_lines = 1 };
	struct cg_record rec;
	struct diag d = { 0 };
	uint64_t keep = xs;
	xs = seed;
	int rc;
	while ((rc = cg_reader_next(g.r, &rec, &d)) == 1) {
		agree_record(&g, &rec);
		if (rec.kind == CG_CALL)
			put(&g.t, " callee %u\n", rec.callee);
		if (rec.kind == CG_FN && (all_blocks || below(3))) {
			if (line_blocks)
				cg_reader_sink_lines(g.r, rec.fn, agree_line, &g);
			else
				cg_reader_sink_costs(g.r, rec.fn, agree_sink, &g);
			if (calls)
				cg_reader_sink_calls(g.r, call_logged);
		}
	}
	xs = keep;
	put(&g.t, "end %d %s sums %llu\n", rc, rc < 0 ? d.msg : "",
	    (unsigned long long)cg_reader_part_sums(g.r)[0]);
	cg_reader_free(g.r);
	input_close(in);
	*taken = g.calls_taken;
	return g.t.s;
}

static void test_callgrind_reader__call_sink_agrees(void **state)
{
	(void)state;
	unsigned taken_all = 0, cases = 2000;
	for (unsigned c = 0; c < cases; c++) {
		unsigned lay = below(4), npos = lay == 0 || lay == 3 ? 2 : 1;
		/* most bodies tame, so that they read on to many calls */
		tame = below(4) > 0;
		junk = tame || below(2) ? 0 : 10;
		big_costs = !tame && below(10) == 0;
		struct text b = { 0 }, t = { 0 };
		body(&b, npos, 1 + below(300));
		tame = 0;
		put(&t, HDR "positions: %s\nevents: %s\n%s", layouts[lay], below(2) ? "Ir" : "Ir Dr", b.s);
		unsigned limit = below(4);
		size_t max_line = limit < 2 ? 1 << 20 : limit == 2 ? 12 + below(90) : 50 + below(30);
		uint64_t seed = rnd();
		unsigned none, taken;
		line_blocks = below(2);
		char *a = read_sinking(t.s, t.n, npos, max_line, seed, 0, &none);
		char *z = read_sinking(t.s, t.n, npos, max_line, seed, 1, &taken);
		char what[100];
		snprintf(what, sizeof(what), "case %u, positions: %s, %s, without and with a call sink",
			 c, layouts[lay], line_blocks ? "lines offered" : "runs");
		line_blocks = 0;
		same_reading(a, z, what, b.s);
		taken_all += taken;
		free(a);
		free(z);
		free(b.s);
		free(t.s);
	}
	if (taken_all < cases)
		fail_msg("%u calls taken", taken_all);
}

/* Calls a call sink takes, each next to the line that would read differently if the sink
 * left the wrong state or took a line it must not: the reading with the sink must be the
 * one without, each case must give a call to the sink, and end as said. */
static void test_callgrind_reader__call_sink_cases(void **state)
{
	(void)state;
	static const char head[] = HDR "positions: instr line\nevents: Ir\nob=(1) /bin/x\n"
		"fl=(1) x.c\nfn=(1) main\n0x400000 1 1\ncob=(2) /lib/y.so\ncfi=(2) y.c\n"
		"cfn=(2) callee\ncalls=1 0x500000 1\n+1 * 5\n";
	static const struct {
		const char *lines;
		size_t max_line;
		const char *end;
		const char *after_nul;   /* then a NUL byte and this */
	} cases[] = {
		/* cob= and cfi= bind nothing after their call: f3 is /bin/x's, in x.c */
		{ "cob=(2)\ncfi=(2)\ncfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(3) f3\n"
		  "calls=1 0x600000 1\n+1 * 5\n", 1 << 20, "end -1", NULL },
		/* calls= with no cfn= calls the last callee */
		{ "cfn=(1)\ncalls=1 0x400000 1\n+1 * 5\ncalls=2 0x400000 1\n+1 * 1\n", 1 << 20, "end -1", NULL },
		/* ")" then more text is a definition of id 2, which has another name */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(2))calls=1 0x500000 1\n+1 * 5\n", 1 << 20,
		  "t.cg:21: id (2) redefined as ')calls=1 0x500000 1'", NULL },
		/* file 3 is not defined, object 3 is */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncob=(3) /lib/z.so\ncfn=(2)\ncalls=1 0x500000 1\n"
		  "+1 * 1\ncfi=(3)\ncfn=(2)\ncalls=1 0x500000 1\n+1 * 1\n", 1 << 20,
		  "t.cg:25: file id (3) is used before it is defined", NULL },
		/* lines longer than the limit: a calls= line, a cost line */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(2)\ncalls=1 0x500000 1234567890123456\n"
		  "+1 * 1\n", 32, "t.cg:22: line longer than the limit of 32 bytes", NULL },
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(2)\ncalls=1 0x500000 1\n"
		  "+1234567890123456 * 1234567890123456789\n", 34,
		  "t.cg:23: line longer than the limit of 34 bytes", NULL },
		/* callees defined on the call: bound to the cob=/cfi= before, or to the
		 * block's; after blanks; then named by id */
		{ "cob=(2)\ncfi=(2)\ncfn=(5) f5\ncalls=1 0x500000 1\n+1 * 5\ncfn=(6) \t f6 \n"
		  "calls=1 0x500000 1\n+1 * 5\ncfn=(5)\ncalls=1 0x500000 1\n+1 * 5\n", 1 << 20, "end -1", NULL },
		/* defined again as it was: a record */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncob=(2)\ncfi=(2)\ncfn=(2) callee\n"
		  "calls=1 0x500000 1\n+1 * 5\n", 1 << 20, "end -1", NULL },
		/* an empty name names id 7, not defined; a CR before the newline is not the
		 * name's; a NUL byte; a definition over the limit */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(7) \ncalls=1 0x500000 1\n+1 * 5\n",
		  1 << 20, "t.cg:21: function id (7) is used before it is defined", NULL },
		{ "cfn=(7) f7\r\ncalls=1 0x500000 1\n+1 * 5\ncfn=(7)\ncalls=1 0x500000 1\n+1 * 5\n",
		  1 << 20, "end -1", NULL },
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(7) f", 1 << 20,
		  "t.cg:21: NUL byte in the line", "calls=1 0x500000 1\n+1 * 5\n" },
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\ncfn=(7) f_with_a_much_longer_name_7\n"
		  "calls=1 0x500000 1\n+1 * 5\n", 30, "t.cg:21: line longer than the limit of 30 bytes", NULL },
		/* a cob=/cfi= read by the general path before a fn= line is still set when the
		 * sink starts at the next call: the call unsets it (f4 is /bin/x's, in x.c) ... */
		{ "cob=(2)\ncfi=(2)\nfn=(1)\ncfn=(1)\ncalls=3 0x400000 1\n+1 * 10\ncfn=(4) f4\n"
		  "calls=2 0x400000 1\n+1 * 10\n", 1 << 20, "end -1", NULL },
		/* ... and a callee defined in the sink is bound to it (f5 is /lib/y.so's, in y.c) */
		{ "cob=(2)\ncfi=(2)\nfn=(1)\ncfn=(5) f5\ncalls=2 0x400000 1\n+1 * 10\n", 1 << 20,
		  "end -1", NULL },
		/* ob= ends the block: its calls are not the sink's, and an error */
		{ "cfn=(2)\ncalls=1 0x500000 1\n+1 * 5\nob=(1)\ncfn=(2)\ncalls=1 0x500000 1\n+1 * 5\n",
		  1 << 20, "t.cg:23: 'calls=' before any 'fn='", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct text t = { 0 };
		put(&t, "%s%s", head, cases[i].lines);
		if (cases[i].after_nul) {
			put(&t, "%c", 0);
			put(&t, "%s", cases[i].after_nul);
		}
		for (line_blocks = 0; line_blocks < 2; line_blocks++) {
			unsigned none, taken;
			all_blocks = 1;
			char *a = read_sinking(t.s, t.n, 2, cases[i].max_line, 1, 0, &none);
			char *z = read_sinking(t.s, t.n, 2, cases[i].max_line, 1, 1, &taken);
			all_blocks = 0;
			if (strcmp(a, z) != 0 || taken == 0 || !strstr(z, cases[i].end)) {
				fprintf(stderr, "case %zu (%s): %u taken; without the sink:\n%s\nwith it:\n%s",
					i, line_blocks ? "lines offered" : "runs", taken, a, z);
				fail();
			}
			free(a);
			free(z);
		}
		line_blocks = 0;
		free(t.s);
	}
}

/* A reference line made longer than the limit by the zeros of its id (19 digits, as
 * many as the sink reads): the general path's error, for each of cob=, cfi= and cfn=. The
 * profile has no header lines, which would be longer. */
static void test_callgrind_reader__call_sink_long_refs(void **state)
{
	(void)state;
	static const char *const calls[] = {
		"cob=(0000000000000000002)\ncfn=(2)\n", "cfi=(0000000000000000002)\ncfn=(2)\n",
		"cfn=(0000000000000000002)\n",
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct text t = { 0 };
		put(&t, "positions: instr line\nevents: Ir\nob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		    "0x400000 1 1\ncob=(2) /lib/y.so\ncfi=(2) y.c\ncfn=(2) callee\ncalls=1 0x500000 1\n"
		    "+1 * 5\ncfn=(2)\ncalls=1 0x500000 1\n+1 * 5\n%scalls=1 0x500000 1\n+1 * 5\n"
		    "totals: 1\n", calls[i]);
		for (line_blocks = 0; line_blocks < 2; line_blocks++) {
			unsigned none, taken;
			all_blocks = 1;
			char *a = read_sinking(t.s, t.n, 2, 24, 1, 0, &none);
			char *z = read_sinking(t.s, t.n, 2, 24, 1, 1, &taken);
			all_blocks = 0;
			if (strcmp(a, z) != 0 || taken != 1 ||
			    !strstr(z, "t.cg:15: line longer than the limit of 24 bytes"))
				fail_msg("case %zu (%s): %u taken; without the sink:\n%s\nwith it:\n%s", i,
					 line_blocks ? "lines offered" : "runs", taken, a, z);
			free(a);
			free(z);
		}
		line_blocks = 0;
		free(t.s);
	}
}

/* The sinks read lines in the buffer up to the NUL after its bytes and no further: a
 * buffer that ends right after any line of a call, or of a run, must stop them there.
 * Under AddressSanitizer the reader's buffers are 4 KiB, each allocated to its size, so
 * a byte read past one is reported: bodies of a few buffers, each shifted by one more
 * byte of padding, put a buffer's end after each line of the calls (a cob= line was read
 * past once). In other builds the buffers are larger and the test reads as usual. */
static void test_callgrind_reader__sinks_at_buffer_ends(void **state)
{
	(void)state;
	for (unsigned pad = 0; pad < 64; pad++) {
		struct text t = { 0 };
		unsigned long long sum = 1;
		put(&t, HDR "positions: instr line\nevents: Ir\nob=(1) /bin/x\nfl=(1) x.c\n"
		    "fn=(1) main\n0x400000 1 1\ncob=(2) /lib/y.so\ncfi=(2) y.c\ncfn=(2) callee\n"
		    "calls=1 0x500000 1\n+1 * 5\n#%.*s\n", (int)pad,
		    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp");
		for (unsigned i = 0; i < 400; i++) {
			if (i % 3 == 0)
				put(&t, "cob=(2)\n");
			if (i % 4 == 0)
				put(&t, "cfi=(2)\n");
			if (i % 7 == 0)
				put(&t, "cfn=(%u) f%u\n", 10 + i, i);
			else
				put(&t, "cfn=(2)\n");
			put(&t, "calls=1 0x500000 1\n+1 * 5\n+1 * 1\n");
			sum++;
		}
		put(&t, "totals: %llu\n", sum);
		for (line_blocks = 0; line_blocks < 2; line_blocks++) {
			unsigned taken;
			all_blocks = 1;
			char *z = read_sinking(t.s, t.n, 2, 1 << 20, 1, 1, &taken);
			all_blocks = 0;
			/* (a call that a buffer's end cuts is read as a record) */
			if (!strstr(z, "\nend 0 ") || taken < 350)
				fail_msg("pad %u (%s): %u calls taken; %s", pad,
					 line_blocks ? "lines offered" : "runs", taken, strstr(z, "\nend "));
			free(z);
		}
		line_blocks = 0;
		free(t.s);
	}
}

static char *read_logged(const char *text, size_t n, unsigned npos, size_t max_line,
			 uint64_t seed)
{
	unsigned none;
	return read_sinking(text, n, npos, max_line, seed, 0, &none);
}

static void test_callgrind_reader__sink_loops_agree(void **state)
{
	(void)state;
	unsigned runs = 0, cases = 2000;
	for (unsigned c = 0; c < cases; c++) {
		unsigned lay = below(4), npos = lay == 0 || lay == 3 ? 2 : 1;
		junk = below(2) ? 0 : 10;
		big_costs = below(10) == 0;
		struct text b = { 0 }, one = { 0 }, two = { 0 };
		body(&b, npos, 1 + below(300));
		put(&one, HDR "positions: %s\nevents: Ir\n%s", layouts[lay], b.s);
		put(&two, HDR "positions: %s\nevents: Ir Dr\n%s", layouts[lay], b.s);
		/* lines longer than the limit must stop a run where the general path reports them;
		 * below 61 bytes (SINK_1EV_LONGEST) both readings take the general loop, from
		 * there on a jump's lines may still be too long for the one-event loop */
		unsigned limit = below(4);
		size_t max_line = limit < 2 ? 1 << 20 : limit == 2 ? 12 + below(90) : 50 + below(30);
		uint64_t seed = rnd();
		char *a = read_logged(one.s, one.n, npos, max_line, seed);
		char *z = read_logged(two.s, two.n, npos, max_line, seed);
		char what[80];
		snprintf(what, sizeof(what), "case %u, positions: %s, one event and two", c,
			 layouts[lay]);
		same_reading(a, z, what, b.s);
		for (const char *p = a; (p = strstr(p, "run fn")); p++)
			runs++;
		free(a);
		free(z);
		free(b.s);
		free(one.s);
		free(two.s);
	}
	/* the loops were exercised, not only the general path */
	assert_true(runs > cases);
}

/* ---- a line sink takes what it takes; the rest reads as without it ---- */

/* A line sink (cg_reader_sink_lines(), augment's JIT blocks) is offered the canonical cost
 * lines of its function one by one and takes some: each line it takes must carry what its
 * record would have (positions, the base before it, costs, text), the lines it leaves and
 * every other line must come as the same records, and the reading must end the same way
 * (errors, line numbers, sums). The sink here leaves the lines whose first position is 3
 * modulo 4; the same bodies as above, read once without a sink and once with one on a
 * fifth of the blocks (every block in the large case, whose buffer ends fall inside
 * blocks). */

struct offer_log {
	struct agree_log a;     /* first: agree_record() logs the other records */
	unsigned nev;
	unsigned long long taken;
	int layout_ranges;      /* "instr line", one event: cg_reader_sink_range() sets one */
	uint64_t lo, hi;        /* the range set last */
	unsigned long long ranged;   /* lines the range sink took */
};

static void log_cost(struct offer_log *g, uint32_t fn, uint32_t file, int clean,
		     const uint64_t *pos, const uint64_t *prev, const uint64_t *costs,
		     const char *text, size_t len)
{
	put(&g->a.t, "cost fn %u file %u clean %d pos", fn, file, clean);
	log_positions(&g->a, pos);
	put(&g->a.t, " prev");
	log_positions(&g->a, prev);
	for (unsigned e = 0; e < g->nev; e++)
		put(&g->a.t, " %llu", (unsigned long long)costs[e]);
	put(&g->a.t, " [%.*s]\n", (int)len, text);
}

/* "+N L C" as the range sink takes it (cg_reader_sink_range()), read here on its own:
 * N 1 to 2^20 - 1 and C 1 to 2^64 - 1 without leading zeros, L one digit. */
static int range_shape(const char *p, size_t n, uint64_t *d, uint64_t *l, uint64_t *c)
{
	char s[64], *e;
	if (n >= sizeof(s) || n < 6)
		return 0;
	memcpy(s, p, n);
	s[n] = '\0';
	if (s[0] != '+' || s[1] < '1' || s[1] > '9')
		return 0;
	*d = strtoull(s + 1, &e, 10);
	if (*d >= 1 << 20 || e[0] != ' ' || e[1] < '0' || e[1] > '9' || e[2] != ' ' ||
	    e[3] < '1' || e[3] > '9')
		return 0;
	*l = (uint64_t)(e[1] - '0');
	errno = 0;
	*c = strtoull(e + 3, &e, 10);
	return *e == '\0' && errno == 0;
}

static unsigned long long long_runs;   /* range sink runs of more than one line */

/* A range sink that logs each line of a run as take_some() logs a line it takes, read
 * from the run's text against the run's base: the reading must be the same as with the
 * line sink alone; each line must have the shape, lie in the range, and the run's other
 * fields must agree with its lines. */
static void range_logged(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct offer_log *g = ctx;
	uint64_t base[2] = { run->prev[0], run->prev[1] }, sum = 0, n = 0;
	const char *p = run->text, *end = run->text + run->len;
	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		uint64_t d = 0, l = 0, c = 0;
		if (!range_shape(p, (size_t)(nl - p), &d, &l, &c))
			fail_msg("range sink given '%.*s'", (int)(nl - p), p);
		uint64_t pos[2] = { base[0] + d, l };
		assert_true(pos[0] >= g->lo && pos[0] <= g->hi);
		if (n == 0) {
			assert_true(pos[0] == run->first_pos[0] && l == run->first_pos[1]);
			assert_true(c == run->first_costs[0] && (size_t)(nl - p) == run->first_len);
			assert_true(run->lo == pos[0]);
		}
		log_cost(g, fn, file, 1, pos, base, &c, p, (size_t)(nl - p));
		g->taken++;
		g->ranged++;
		sum += c;
		base[0] = pos[0], base[1] = pos[1];
		n++;
		if (nl == end)
			break;
		p = nl + 1;
	}
	assert_true(n == run->lines && sum == run->sums[0] && run->hi == base[0]);
	long_runs += n > 1;
	assert_true(base[0] == run->last_pos[0] && base[1] == run->last_pos[1]);
}

static int with_range;   /* take_some() sets a range around each line it takes */

static int take_some(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *l)
{
	struct offer_log *g = ctx;
	if (l->pos[0] % 4 == 3)
		return 0;
	g->taken++;
	log_cost(g, fn, file, 1, l->pos, l->prev, l->costs, l->text, l->len);
	if (with_range) {
		uint64_t a = l->pos[0], below_a = below(40), above_a = below(40);
		uint64_t lo = a - (below_a < a ? below_a : a);
		uint64_t hi = a + (above_a <= UINT64_MAX - a ? above_a : UINT64_MAX - a);
		int set = cg_reader_sink_range(g->a.r, lo, hi, range_logged);
		assert_int_equal(set, g->layout_ranges);
		if (set)
			g->lo = lo, g->hi = hi;
	}
	return 1;
}

static unsigned long long ranged_lines;   /* of the last read_offered() */

/* Reads TEXT, with a line sink on the blocks EVERY chooses (0: none; 1: all; 5: a fifth,
 * by SEED), logging every record and line taken. *TAKEN counts the lines taken. */
static char *read_offered(const char *text, size_t n, unsigned npos, unsigned nev,
			  size_t max_line, unsigned every, uint64_t seed, unsigned long long *taken)
{
	struct input *in = input_open_mem(text, n, "t.cg");
	assert_non_null(in);
	struct offer_log g = { .a = { .npos = npos, .r = cg_reader_new(in, max_line) }, .nev = nev,
			       .layout_ranges = npos == 2 && nev == 1 && strstr(text, "positions: instr line\n") };
	struct cg_record rec;
	struct diag d = { 0 };
	uint64_t keep = xs;
	xs = seed;
	int rc;
	while ((rc = cg_reader_next(g.a.r, &rec, &d)) == 1) {
		/* a cost line's number is not the sink's to know: records leave it out too */
		if (rec.kind == CG_COST)
			log_cost(&g, rec.fn, rec.file, rec.clean, rec.pos, rec.prev_pos, rec.costs,
				 rec.text, rec.len);
		else
			agree_record(&g.a, &rec);
		if (rec.kind == CG_FN && every && below(every) == 0)
			cg_reader_sink_lines(g.a.r, rec.fn, take_some, &g);
	}
	xs = keep;
	put(&g.a.t, "end %d %s sums", rc, rc < 0 ? d.msg : "");
	for (unsigned e = 0; e < nev; e++)
		put(&g.a.t, " %llu", (unsigned long long)cg_reader_part_sums(g.a.r)[e]);
	put(&g.a.t, "\n");
	cg_reader_free(g.a.r);
	input_close(in);
	*taken = g.taken;
	ranged_lines = g.ranged;
	return g.a.t.s;
}

/* Bodies read without a sink and with a line sink, with_range or not: the same. */
static void line_sink_cases(void)
{
	unsigned long long taken_all = 0, ranged_all = 0;
	unsigned cases = 1500;
	for (unsigned c = 0; c <= cases; c++) {
		int large = c == cases;
		unsigned lay = below(4), npos = lay == 0 || lay == 3 ? 2 : 1, nev = 1 + below(2);
		if (large && with_range)   /* the range sink's layout, across buffer ends */
			lay = 0, npos = 2, nev = 1;
		junk = large || below(2) ? 0 : 10;
		big_costs = !large && below(10) == 0;
		tame = large;
		struct text b = { 0 }, t = { 0 };
		body(&b, npos, large ? 600000 : 1 + below(300));
		tame = 0;
		put(&t, HDR "positions: %s\nevents: %s\n%s", layouts[lay], nev == 1 ? "Ir" : "Ir Dr", b.s);
		unsigned limit = below(4);
		size_t max_line = limit < 2 || (large && with_range) ? 1 << 20 :
				  limit == 2 ? 12 + below(90) : 50 + below(30);
		uint64_t seed = rnd();
		unsigned long long none, taken;
		char *a = read_offered(t.s, t.n, npos, nev, max_line, 0, seed, &none);
		char *z = read_offered(t.s, t.n, npos, nev, max_line, large ? 1 : 5, seed, &taken);
		assert_int_equal(none, 0);
		char what[80];
		snprintf(what, sizeof(what), "case %u, positions: %s, %u events, without and with "
			 "a line sink", c, layouts[lay], nev);
		same_reading(a, z, what, b.s);
		/* the large body reads to its end (its totals: line, which need not match the
		 * sums), across buffer ends inside blocks */
		if (large && (taken <= 100000 || !(strstr(z, "\nend 0 ") || strstr(z, "'totals:' gives"))))
			fail_msg("large: %llu taken; %s", taken, strstr(z, "\nend "));
		taken_all += taken;
		ranged_all += ranged_lines;
		free(a);
		free(z);
		free(b.s);
		free(t.s);
	}
	assert_true(taken_all > 10 * cases);
	/* the range sink took lines, and in runs of more than one (82,441 lines in the large
	 * body, which is in its layout) */
	if (with_range && (ranged_all < 10000 || long_runs < 1000))
		fail_msg("%llu lines went to the range sink, %llu runs of more than one",
			 ranged_all, long_runs);
	if (!with_range && ranged_all)
		fail_msg("%llu lines went to a range sink that was never set", ranged_all);
}

static void test_callgrind_reader__line_sink_agrees(void **state)
{
	(void)state;
	with_range = 0;
	line_sink_cases();
}

/* A range sink (cg_reader_sink_range(): augment's JIT functions from perf maps) set by the
 * line sink around each line it takes: the lines it gets read as the line sink would have
 * taken them, and the rest as before. */
static void test_callgrind_reader__range_sink_agrees(void **state)
{
	(void)state;
	with_range = 1;   /* set by each test that reads it: a failed one leaves it */
	line_sink_cases();
}

/* Which lines the range sink gets: "+N L C" with N 1 to 2^20 - 1 and C above 0, both
 * without leading zeros, L one digit, in the range, with no definition waiting for its
 * record; the line sink gets the other cost lines of its function it takes. The log has
 * "L" for a line the line sink took, "R<n>" for a run of N lines, "C" for a cost record. */
struct range_case_log {
	struct cg_reader *r;
	char s[256];
	int armed;
};

static void range_case_run(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct range_case_log *g = ctx;
	(void)fn, (void)file;
	snprintf(g->s + strlen(g->s), sizeof(g->s) - strlen(g->s), " R%llu",
		 (unsigned long long)run->lines);
}

static int range_case_line(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *l)
{
	struct range_case_log *g = ctx;
	(void)fn, (void)file, (void)l;
	strcat(g->s, " L");
	if (!g->armed++)
		assert_true(cg_reader_sink_range(g->r, 0x400000, 0x400000 + (1 << 21) + 100,
						 range_case_run));
	return 1;
}

static void test_callgrind_reader__range_sink_cases(void **state)
{
	(void)state;
	static const char text[] = HDR "positions: instr line\nevents: Ir\nob=(1) ???\nfl=(1) ???\n"
		"fn=(1) f\n0x400000 0 1\n+1 0 1\n+12 0 3\n"
		"+0 0 1\n+1 0 0\n+1 0 07\n+1 12 1\n+01 0 1\n* 0 1\n-1 0 1\n+1048576 0 1\n"
		"+1048575 0 1\n+1048575 0 1\n-1048575 0 1\n"   /* in the range, past it, back */
		"jfn=(3) t\n+1 0 1\n+1 0 1\n"    /* a definition waits for its record */
		"+1 0 1 \n+1 0 1\nfn=(2) g\n+1 0 1\n+2 0 1\ntotals: 27\n";
	struct input *in = input_open_mem(text, strlen(text), "t.cg");
	struct range_case_log g = { .r = cg_reader_new(in, 1 << 20) };
	struct cg_record rec;
	struct diag d = { 0 };
	int rc;
	while ((rc = cg_reader_next(g.r, &rec, &d)) == 1) {
		if (rec.kind == CG_COST)
			strcat(g.s, " C");
		/* the range set in the first block is not the second's */
		if (rec.kind == CG_FN)
			cg_reader_sink_lines(g.r, rec.fn, range_case_line, &g);
	}
	if (rc != 0)
		fail_msg("%s (%s)", d.msg, g.s);
	assert_string_equal(g.s, " L R2 L L L L L L L L R1 L L C R1 C R1 L L");
	/* every line counted once, as without the sinks */
	uint64_t sum = cg_reader_part_sums(g.r)[0];
	cg_reader_free(g.r);
	input_close(in);
	assert_int_equal(sum, 27);

	/* under a line limit below the one-event loop's, a line of the shape longer than
	 * the limit is reported as without the sinks */
	static const char longer[] = HDR "positions: instr line\nevents: Ir\nob=(1) ???\n"
		"fl=(1) ???\nfn=(1) f\n0x400000 0 1\n+1 0 1\n+1048575 0 1234567890123456\ntotals: 3\n";
	char msg[2][sizeof(d.msg)];
	for (int sinks = 0; sinks < 2; sinks++) {
		in = input_open_mem(longer, strlen(longer), "t.cg");
		g = (struct range_case_log){ .r = cg_reader_new(in, 26) };
		d = (struct diag){ 0 };
		while ((rc = cg_reader_next(g.r, &rec, &d)) == 1)
			if (rec.kind == CG_FN && sinks)
				cg_reader_sink_lines(g.r, rec.fn, range_case_line, &g);
		assert_int_equal(rc, -1);
		snprintf(msg[sinks], sizeof(msg[sinks]), "%s", d.msg);
		cg_reader_free(g.r);
		input_close(in);
	}
	assert_string_equal(msg[1], msg[0]);
	if (!strstr(msg[0], "t.cg:14: line longer"))
		fail_msg("%s", msg[0]);

	/* only in the layout "instr line" */
	static const char bb[] = HDR "positions: instr bb\nevents: Ir\nob=(1) ???\nfl=(1) ???\n"
		"fn=(1) f\n0x400000 0 1\ntotals: 1\n";
	in = input_open_mem(bb, strlen(bb), "t.cg");
	struct cg_reader *r = cg_reader_new(in, 1 << 20);
	while ((rc = cg_reader_next(r, &rec, &d)) == 1 && rec.kind != CG_FN)
		;
	assert_int_equal(rc, 1);
	cg_reader_sink_lines(r, rec.fn, range_case_line, &g);
	assert_false(cg_reader_sink_range(r, 0, UINT64_MAX, range_case_run));
	cg_reader_free(r);
	input_close(in);
}

/* A line a line sink takes is a body's cost line like any other: after it, a summary:
 * line starts a new part without totals: (reported), as after its record. */
static void test_callgrind_reader__line_sink_counts_as_cost(void **state)
{
	(void)state;
	static const char text[] = HDR "positions: instr line\nevents: Ir\nob=(1) ???\nfl=(1) ???\n"
		"fn=(1) f\n0x400000 0 1\nsummary: 1\ntotals: 1\n";
	unsigned long long none, taken;
	char *a = read_offered(text, strlen(text), 2, 1, 1 << 20, 0, 1, &none);
	char *z = read_offered(text, strlen(text), 2, 1, 1 << 20, 1, 1, &taken);
	if (strcmp(a, z) != 0 || taken != 1 || !strstr(z, "t.cg:13: 'summary: 1' starts a new part"))
		fail_msg("%llu taken; without the sink:\n%s\nwith it:\n%s", taken, a, z);
	free(a);
	free(z);
}

static void count_sunk(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	(void)fn;
	(void)file;
	*(uint64_t *)ctx += run->lines;
}

static int take_all(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *l)
{
	(void)fn;
	(void)file;
	(void)l;
	++*(uint64_t *)ctx;
	return 1;
}

static int by_line;   /* read_sunk() offers the lines to a line sink that takes each */

/* Reads TEXT under a limit of MAX_LINE bytes a line, every block's cost lines sunk (in
 * runs, or with BY_LINE one by one): returns the end's rc, with the lines sunk in *SUNK
 * and an error in D. */
static int read_sunk(const char *text, size_t max_line, uint64_t *sunk, struct diag *d)
{
	struct input *in = input_open_mem(text, strlen(text), "t.cg");
	struct cg_reader *r = cg_reader_new(in, max_line);
	struct cg_record rec;
	int rc;
	*sunk = 0;
	while ((rc = cg_reader_next(r, &rec, d)) == 1) {
		if (rec.kind == CG_FN && by_line)
			cg_reader_sink_lines(r, rec.fn, take_all, sunk);
		else if (rec.kind == CG_FN)
			cg_reader_sink_costs(r, rec.fn, count_sunk, sunk);
	}
	cg_reader_free(r);
	input_close(in);
	return rc;
}

/* The one-event loop checks no cost line against the limit: it runs only for limits of
 * 61 bytes or more, the longest line it takes. A jump's lines can be longer, and are
 * checked (its two lines together, so a jump whose lines fit one by one but not
 * together is left to the records). Each case at the limit and one byte below it. */
static void test_callgrind_reader__sink_line_limit(void **state)
{
	(void)state;
	static const char longest[] = "+1999999999999999999 +1999999999999999999 1999999999999999999";
	static const char jump[] = "jcnd=4611686018427387904/4611686018427387905 +1999999999999999 *";
	assert_int_equal(strlen(longest), 61);
	assert_int_equal(strlen(jump), 64);
	char text[1024];
	struct diag d = { 0 };
	uint64_t sunk;
	snprintf(text, sizeof(text), HDR "positions: instr line\nevents: Ir\n"
		 "summary: 2000000000000000001\nob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		 "0x400000 1 1\n%s\n+1 * 1\ntotals: 2000000000000000001\n", longest);
	assert_int_equal(read_sunk(text, 61, &sunk, &d), 0);
	assert_int_equal(sunk, 3);
	assert_int_equal(read_sunk(text, 60, &sunk, &d), -1);
	if (!strstr(d.msg, "t.cg:14: line longer than the limit of 60 bytes"))
		fail_msg("%s", d.msg);
	memset(&d, 0, sizeof(d));
	snprintf(text, sizeof(text), HDR "positions: instr line\nevents: Ir\nsummary: 3\n"
		 "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n0x400000 1 1\n%s\n+1 *\n+1 * 1\n"
		 "+1 * 1\ntotals: 3\n", jump);
	/* the jump and its source line are sunk when both fit in the limit together */
	assert_int_equal(read_sunk(text, 69, &sunk, &d), 0);
	assert_int_equal(sunk, 5);
	assert_int_equal(read_sunk(text, 68, &sunk, &d), 0);
	assert_int_equal(sunk, 3);   /* the jump then comes as a record */
	assert_int_equal(read_sunk(text, 64, &sunk, &d), 0);
	assert_int_equal(read_sunk(text, 63, &sunk, &d), -1);
	if (!strstr(d.msg, "t.cg:14: line longer than the limit of 63 bytes"))
		fail_msg("%s", d.msg);
	/* a line sink has no loop of its own: every line offered is checked, at any limit;
	 * jumps are never offered */
	by_line = 1;
	memset(&d, 0, sizeof(d));
	assert_int_equal(read_sunk(text, 64, &sunk, &d), 0);
	assert_int_equal(sunk, 3);
	snprintf(text, sizeof(text), HDR "positions: instr line\nevents: Ir\nsummary: 3\n"
		 "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n0x400000 1 1\n+1 * 1\n+1234567890 12345678901234567 1\n"
		 "totals: 3\n");
	assert_int_equal(read_sunk(text, 30, &sunk, &d), -1);
	if (!strstr(d.msg, "t.cg:15: line longer than the limit of 30 bytes"))
		fail_msg("%s", d.msg);
	assert_int_equal(sunk, 2);
	assert_int_equal(read_sunk(text, 31, &sunk, &d), 0);
	assert_int_equal(sunk, 3);
	by_line = 0;
}

/* Relative subpositions past 0 and 2^64 - 1 in a block whose lines are sunk, where the
 * one-event loop reads them: refused where they are, as the general path refuses them. */
static void test_callgrind_reader__sink_position_bounds(void **state)
{
	(void)state;
	static const struct {
		const char *lines, *msg;
	} cases[] = {
		{ "0x3 1 1\n-4 * 1\n", "t.cg:14: relative position goes below 0" },
		{ "0x3 1 1\n* -2 1\n", "t.cg:14: relative position goes below 0" },
		{ "0xffffffffffffffff 1 1\n+1 * 1\n", "t.cg:14: position overflows 64 bits" },
		{ "0xffffffffffffffff 1 1\n+1 2 1\n", "t.cg:14: position overflows 64 bits" },
	};
	/* in runs, then offered one by one to a line sink */
	for (size_t i = 0; i < 2 * sizeof(cases) / sizeof(cases[0]); i++) {
		size_t c = i % (sizeof(cases) / sizeof(cases[0]));
		char text[512];
		struct diag d = { 0 };
		uint64_t sunk;
		by_line = c != i;
		snprintf(text, sizeof(text), HDR "positions: instr line\nevents: Ir\nsummary: 2\n"
			 "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n%stotals: 2\n", cases[c].lines);
		assert_int_equal(read_sunk(text, 1 << 20, &sunk, &d), -1);
		if (!strstr(d.msg, cases[c].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.msg, cases[c].msg);
		assert_int_equal(sunk, 1);
	}
	by_line = 0;
}

/* A one-digit cost that takes the part's sum past 2^64 - 1 on a "+D D D" line (the loop's
 * word path, short_line()): refused where it is, as the general path refuses it. */
static void test_callgrind_reader__sink_sum_overflow(void **state)
{
	(void)state;
	static const char text[] = HDR "positions: instr line\nevents: Ir\n"
		"summary: 18446744073709551615\nob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
		"0x400000 1 18446744073709551610\n+1 2 3\n+1 2 3\n+1 2 3\ntotals: 18446744073709551615\n";
	/* in runs, then offered one by one to a line sink */
	for (by_line = 0; by_line < 2; by_line++) {
		struct diag d = { 0 };
		uint64_t sunk;
		assert_int_equal(read_sunk(text, 1 << 20, &sunk, &d), -1);
		if (!strstr(d.msg, "t.cg:15: the sum of self costs overflows 64 bits"))
			fail_msg("%s", d.msg);
		/* the first "+1 2 3" (the line before has 20 digits: a record) */
		assert_int_equal(sunk, 1);
	}
	by_line = 0;
}

/* A call's callee defined on its cfn= line is handed out with the call's record, lines
 * later; the buffer may change in between (a long comment before the cost line makes it
 * all but certain at each of the 6 MB's buffer ends): the name must be the one defined.
 * Under ASan the reader frees the buffers it moves on from, so a name not copied in time
 * is a use after free; in the plain build the thread may not have overwritten it yet. */
static void test_callgrind_reader__definition_across_buffers(void **state)
{
	(void)state;
	enum { CALLS = 1300 };
	size_t cap = 8 << 20, n = 0;
	char *text = malloc(cap), pad[5001];
	memset(pad, 'c', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	n += (size_t)snprintf(text + n, cap - n, HDR "positions: line\nevents: Ir\n"
			      "ob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n1 1\n");
	for (int i = 1; i <= CALLS; i++)
		n += (size_t)snprintf(text + n, cap - n, "cfn=(%d) callee_%d_%.*s\ncalls=1 2\n#%s\n1 1\n",
				      i + 1, i, i % 100, pad, pad);
	n += (size_t)snprintf(text + n, cap - n, "totals: 1\n");   /* calls cost nothing of their own */
	assert_true(n > (6 << 20) && n < cap);
	char *path = tmp_file_n(text, n);
	struct diag d = { 0 };
	struct input *in = input_open(path, &d);
	struct cg_reader *r = cg_reader_new(in, 1 << 20);
	struct cg_record rec;
	int rc, defs = 0;
	char want[200];
	while ((rc = cg_reader_next(r, &rec, &d)) == 1) {
		for (unsigned k = 0; k < rec.ndefs; k++) {
			const struct cg_def *def = &rec.defs[k];
			if (def->fn == 0)
				continue;   /* main */
			int w = snprintf(want, sizeof(want), "callee_%u_%.*s", def->fn, (int)(def->fn % 100), pad);
			assert_int_equal(def->len, (size_t)w);
			/* memcmp() here, not in cmocka: AddressSanitizer sees this read */
			assert_true(memcmp(def->name, want, def->len) == 0);
			defs++;
		}
	}
	if (rc != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(defs, CALLS);
	cg_reader_free(r);
	input_close(in);
	unlink(path);
	free(path);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callgrind_reader__subpositions),
		cmocka_unit_test(test_callgrind_reader__three_id_spaces),
		cmocka_unit_test(test_callgrind_reader__binding_at_definition),
		cmocka_unit_test(test_callgrind_reader__uncompressed_and_fi),
		cmocka_unit_test(test_callgrind_reader__one_name_two_ids),
		cmocka_unit_test(test_callgrind_reader__redefinition_refused),
		cmocka_unit_test(test_callgrind_reader__fn_line_forms),
		cmocka_unit_test(test_callgrind_reader__fn_lines_over_the_limit),
		cmocka_unit_test(test_callgrind_reader__long_name_redefinition),
		cmocka_unit_test(test_callgrind_reader__id_tables),
		cmocka_unit_test(test_callgrind_reader__parts_reset_ids),
		cmocka_unit_test(test_callgrind_reader__jumps_and_crlf),
		cmocka_unit_test(test_callgrind_reader__long_line_and_context_names),
		cmocka_unit_test(test_callgrind_reader__errors),
		cmocka_unit_test(test_callgrind_reader__sink_runs),
		cmocka_unit_test(test_callgrind_reader__sink_runs_one_event),
		cmocka_unit_test(test_callgrind_reader__sink_runs_one_event_one_position),
		cmocka_unit_test(test_callgrind_reader__sink_loops_agree),
		cmocka_unit_test(test_callgrind_reader__line_sink_agrees),
		cmocka_unit_test(test_callgrind_reader__range_sink_agrees),
		cmocka_unit_test(test_callgrind_reader__range_sink_cases),
		cmocka_unit_test(test_callgrind_reader__line_sink_counts_as_cost),
		cmocka_unit_test(test_callgrind_reader__call_sink_agrees),
		cmocka_unit_test(test_callgrind_reader__call_sink_cases),
		cmocka_unit_test(test_callgrind_reader__call_sink_long_refs),
		cmocka_unit_test(test_callgrind_reader__sinks_at_buffer_ends),
		cmocka_unit_test(test_callgrind_reader__sink_line_limit),
		cmocka_unit_test(test_callgrind_reader__sink_sum_overflow),
		cmocka_unit_test(test_callgrind_reader__sink_position_bounds),
		cmocka_unit_test(test_callgrind_reader__definition_across_buffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
