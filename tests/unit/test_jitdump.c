/* Unit tests for jitdump.c: every record kind, both byte orders, longer headers, bias
 * detection and override, rows that are not machine-code offsets (V8 baseline code, the
 * first-quarter rule at its boundaries), and each corruption: short header, lying sizes,
 * garbage file names, truncated tails, unknown records. Dumps are built byte by byte here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "core/diag.h"
#include "helpers.h"
#include "dump_builder.h"
#include "jit/elf_files.h"
#include "jit/jitdump.h"
#include "jit/pathmap.h"
#include "augment/augment_stats.h"
#include "augment/augment_stats_text.h"
#include "augment/augment_stats_yaml.h"
#include "jit/symtab.h"

static void header(struct dump *d, int be, uint32_t total)
{
	dump_header(d, be, total, 4242, 123, 0);
}

static void simple(struct dump *d, uint32_t id, size_t body)
{
	size_t at = d->n;
	put(d, id, 4);
	put(d, 0, 4);
	put(d, 5, 8);
	for (size_t i = 0; i < body; i++)
		d->b[d->n++] = 0;
	dump_end(d, at);
}

static struct symtab *st;
static struct jitdump_stats js;
static struct diag dg;
static const struct pathmap *paths;   /* --root/--path-map of the next read_dump() */

static int read_dump(const struct dump *d, int64_t bias)
{
	char *p = tmp_file_n((const char *)d->b, d->n);
	symtab_free(st);
	st = symtab_new();
	symtab_set_paths(st, paths);
	memset(&dg, 0, sizeof(dg));
	int rc = jitdump_read(st, p, "obj", bias, &js, &dg);
	if (rc == 0)
		symtab_finish(st);
	unlink(p);
	free(p);
	return rc;
}

static const struct symbol *sym_at(uint64_t addr)
{
	const struct symtab_segment *s = symtab_lookup(st, addr);
	return s ? symtab_symbol(st, s->sym) : NULL;
}

static void test_jitdump__records_both_byte_orders(void **state)
{
	(void)state;
	for (int be = 0; be <= 1; be++) {
		struct dump d;
		header(&d, be, 40);
		struct dump_row e[] = { { 0x1000, 10, "/src/a.wat" }, { 0x1004, 11, "\xff" }, { 0x1008, 12, "/src/b.wat" } };
		dump_debug(&d, 0x1000, e, 3, 0);
		dump_load(&d, 0x1000, 16, 0, "wasm[0]::function[1]");
		simple(&d, 4, 40);    /* UNWINDING_INFO */
		simple(&d, 77, 8);    /* unknown id */
		dump_load(&d, 0x2000, 8, 1, "second");
		simple(&d, 3, 0);     /* CODE_CLOSE */
		assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
		assert_int_equal(js.big_endian, be);
		assert_int_equal(js.pid, 4242);
		assert_int_equal(js.loads, 2);
		assert_int_equal(js.debug_used, 1);
		assert_int_equal(js.unwinding, 1);
		assert_int_equal(js.unknown, 1);
		assert_int_equal(js.closes, 1);
		assert_int_equal(js.bias, 0);
		const struct symbol *s = sym_at(0x100f);
		assert_non_null(s);
		assert_string_equal(s->name, "wasm[0]::function[1]");
		assert_int_equal(s->code[0], 0x90);
		assert_int_equal(s->code[15], 0x9f);
		assert_string_equal(s->file, "/src/a.wat");
		assert_int_equal(s->line, 10);
		assert_int_equal(symtab_line(s, 0x1005)->line, 11);
		assert_string_equal(symtab_line(s, 0x1005)->file, "/src/a.wat");   /* \xff repeats */
		assert_string_equal(symtab_line(s, 0x100f)->file, "/src/b.wat");
		assert_string_equal(sym_at(0x2000)->name, "second");
		assert_null(sym_at(0x2008));
	}
}

static void test_jitdump__bias_detected_and_overridden(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	/* V8: entries at code_addr + 0x40 onwards, padded to 8 bytes. */
	struct dump_row e[] = { { 0x1040, 3, "/x.js" }, { 0x1050, 4, "/x.js" }, { 0x1070, 5, "/x.js" } };
	dump_debug(&d, 0x1000, e, 3, 5);
	dump_load(&d, 0x1000, 0x40, 0, "JS:*f /x.js:3:1");
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.bias, 0x40);
	assert_true(js.bias_detected);
	const struct symbol *s = sym_at(0x1000);
	assert_int_equal(symtab_line(s, 0x1000)->line, 3);
	assert_int_equal(symtab_line(s, 0x1010)->line, 4);
	assert_int_equal(symtab_line(s, 0x1035)->line, 5);
	assert_int_equal(read_dump(&d, 0), 0);   /* --debug-bias=0 */
	assert_int_equal(js.bias, 0);
	assert_false(js.bias_detected);
	assert_int_equal(symtab_line(sym_at(0x1000), 0x1010)->line, 3);
}

static void test_jitdump__garbage_debug_dropped(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	/* node 20: a file name of garbage with an embedded NUL desynchronises the entries. */
	struct dump_row e[] = { { 0x1000, 1, "\xc2\x96" }, { 0xd18000000, 2, "ok" } };
	dump_debug(&d, 0x1000, e, 2, 0);
	dump_load(&d, 0x1000, 16, 0, "f");
	struct dump_row e2[] = { { 0x2000, 1, "bad\x01name" } };
	dump_debug(&d, 0x2000, e2, 1, 0);
	dump_load(&d, 0x2000, 16, 1, "g");
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.bad_debug, 2);
	assert_int_equal(js.debug_used, 0);
	assert_non_null(strstr(js.bad_debug_reason, "outside its function"));
	assert_int_equal(sym_at(0x1000)->nlines, 0);
	assert_string_equal(sym_at(0x2000)->name, "g");
}

static void test_jitdump__node_overwritten_names_recovered(void **state)
{
	(void)state;
	/* node 20: each file-name field has the full path's length, its first 16 bytes
	 * overwritten with NULs and pointer bytes; the record is padded to 8 bytes. */
	static const char path[] = "/tmp/sample.XXXXXX/prog.js";   /* 26 bytes */
	struct dump d;
	header(&d, 0, 40);
	size_t at = d.n;
	put(&d, 2, 4);
	put(&d, 0, 4);
	put(&d, 999, 8);
	put(&d, 0x1000, 8);
	put(&d, 3, 8);
	for (int i = 0; i < 3; i++) {
		put(&d, 0x1040 + 8 * (uint64_t)i, 8);
		put(&d, 5 + (uint32_t)i, 4);
		put(&d, 0, 4);
		static const unsigned char junk[16] = { 0x0e, 'Y', 0, 0, 0, 0, 0, 0, 0xa0, 0xa3, '#', 0xf9, 'D', 0xf8, 0x9b, 'u' };
		memcpy(d.b + d.n, junk, 16);
		d.n += 16;
		put_str(&d, path + 16);
	}
	while ((d.n - at) % 8)
		d.b[d.n++] = 0;
	dump_end(&d, at);
	dump_load(&d, 0x1000, 0x40, 0, "JS:*fib /tmp/sample.XXXXXX/prog.js:3:13");
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.debug_recovered, 1);
	assert_int_equal(js.bad_debug, 0);
	assert_int_equal(js.bias, 0x40);
	const struct symbol *s = sym_at(0x1000);
	assert_int_equal(s->nlines, 3);
	assert_string_equal(symtab_line(s, 0x1008)->file, path);
	assert_int_equal(symtab_line(s, 0x1008)->line, 6);
}

/* --root: the path in every name and every row's file name mapped as they are read, the
 * node 20 rows read at their stride included; the function's file is then the mapped one. */
static void test_jitdump__paths_mapped(void **state)
{
	(void)state;
	struct pathmap *pm = pathmap_new();
	struct diag d = { 0 };
	assert_int_equal(pathmap_add_arg(pm, "/ci=", &d), 0);
	paths = pm;
	struct dump dd;
	header(&dd, 0, 40);
	struct dump_row e[] = { { 0x1000, 10, "/ci/a.js" }, { 0x1004, 11, "/ci/lib/b.js" },
			     { 0x1008, 12, "\xff" }, { 0x100c, 13, "/other/c.js" }, { 0x100e, 14, "/ci/a.js" } };
	dump_debug(&dd, 0x1000, e, 5, 0);
	dump_load(&dd, 0x1000, 16, 0, "JS:*f /ci/a.js:10:3");
	dump_load(&dd, 0x2000, 16, 1, "JS:*g /cix/a.js:1:1");
	dump_load(&dd, 0x3000, 16, 2, "py::h:/ci/h.py");
	assert_int_equal(read_dump(&dd, 0), 0);
	const struct symbol *s = sym_at(0x1000);
	assert_string_equal(s->name, "JS:*f a.js:10:3");
	assert_int_equal(s->file_len, 4);   /* s->file points into the name */
	assert_memory_equal(s->file, "a.js", 4);
	assert_int_equal(s->line, 10);
	assert_string_equal(symtab_line(s, 0x1000)->file, "a.js");
	assert_int_equal(symtab_line(s, 0x1000)->file_len, 4);
	assert_string_equal(symtab_line(s, 0x1005)->file, "lib/b.js");
	assert_string_equal(symtab_line(s, 0x1009)->file, "lib/b.js");   /* \xff repeats it */
	assert_int_equal(symtab_line(s, 0x1009)->file_len, 8);
	assert_string_equal(symtab_line(s, 0x100c)->file, "/other/c.js");
	assert_ptr_equal(symtab_line(s, 0x100f)->file, symtab_line(s, 0x1000)->file);
	assert_string_equal(sym_at(0x2000)->name, "JS:*g /cix/a.js:1:1");
	assert_string_equal(sym_at(0x3000)->name, "py::h:h.py");
	assert_memory_equal(sym_at(0x3000)->file, "h.py", 5);
	assert_int_equal(symtab_stats(st)->paths_mapped, 2);
	assert_int_equal(symtab_stats(st)->paths_mapped_files, 2);   /* a.js and lib/b.js */

	/* node 20's overwritten file names: recognised by the name as written, then mapped */
	static const char path[] = "/ci/sample.XXXXXX/prog.js";
	header(&dd, 0, 40);
	size_t at = dd.n;
	put(&dd, 2, 4);
	put(&dd, 0, 4);
	put(&dd, 999, 8);
	put(&dd, 0x1000, 8);
	put(&dd, 2, 8);
	for (int i = 0; i < 2; i++) {
		put(&dd, 0x1040 + 8 * (uint64_t)i, 8);
		put(&dd, 5 + (uint32_t)i, 4);
		put(&dd, 0, 4);
		memset(dd.b + dd.n, 0, 16);
		dd.n += 16;
		put_str(&dd, path + 16);
	}
	while ((dd.n - at) % 8)
		dd.b[dd.n++] = 0;
	dump_end(&dd, at);
	dump_load(&dd, 0x1000, 0x40, 0, "JS:*fib /ci/sample.XXXXXX/prog.js:3:13");
	assert_int_equal(read_dump(&dd, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.debug_recovered, 1);
	s = sym_at(0x1000);
	assert_string_equal(s->name, "JS:*fib sample.XXXXXX/prog.js:3:13");
	assert_int_equal(s->nlines, 2);
	assert_string_equal(symtab_line(s, 0x1008)->file, "sample.XXXXXX/prog.js");
	paths = NULL;
	pathmap_free(pm);
}

static void test_jitdump__lying_sizes(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	struct dump_row e[] = { { 0x1000, 1, "a" } };
	dump_debug(&d, 0x1000, e, 1, 0);
	/* nr_entry says a million entries */
	memset(d.b + 40 + 24, 0xff, 4);
	dump_load(&d, 0x1000, 16, 0, "f");
	/* a load whose code_size is larger than the record */
	size_t at = d.n;
	dump_load(&d, 0x3000, 16, 1, "h");
	d.b[at + 40] = 0xff;
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.bad_debug, 1);
	assert_non_null(strstr(js.bad_debug_reason, "more than fit"));
	assert_int_equal(js.bad_loads, 1);
	assert_null(sym_at(0x3000));
	/* a record size below the prefix is an error with the byte offset */
	header(&d, 0, 40);
	simple(&d, 0, 0);
	d.b[44] = 8;
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), -1);
	assert_non_null(strstr(dg.msg, ": byte 40: record size 8 is smaller than the 16-byte prefix"));
	header(&d, 0, 40);
	simple(&d, 0, 0);
	memset(d.b + 44, 0x7f, 4);   /* 2 GiB */
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), -1);
	assert_non_null(strstr(dg.msg, "larger than the limit"));
}

static void test_jitdump__truncated_tail_and_headers(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 48);   /* a longer header is skipped */
	dump_load(&d, 0x1000, 16, 0, "kept");
	dump_load(&d, 0x2000, 16, 1, "cut");
	d.n -= 5;            /* the JIT was still writing */
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.loads, 1);
	assert_true(js.truncated_bytes > 0);
	assert_string_equal(sym_at(0x1000)->name, "kept");
	assert_null(sym_at(0x2000));
	header(&d, 0, 40);
	d.n = 20;
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), -1);
	assert_non_null(strstr(dg.msg, ": byte 20: the file ends inside the 40-byte jitdump header"));
	header(&d, 0, 40);
	d.b[4] = 9;
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), -1);
	assert_non_null(strstr(dg.msg, "jitdump version 9 is not supported"));
	header(&d, 0, 40);
	d.b[0] = 'X';
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), -1);
	assert_non_null(strstr(dg.msg, "not a jitdump file"));
}

static void test_jitdump__move_and_reuse(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	dump_load(&d, 0x1000, 16, 7, "moved");
	size_t at = d.n;
	put(&d, 1, 4);
	put(&d, 0, 4);
	put(&d, 9, 8);
	put(&d, 1, 4);
	put(&d, 1, 4);
	put(&d, 0, 8);
	put(&d, 0x1000, 8);
	put(&d, 0x5000, 8);
	put(&d, 16, 8);
	put(&d, 7, 8);
	dump_end(&d, at);
	dump_load(&d, 0x1000, 16, 8, "reused");   /* new code at the old address */
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.moves, 1);
	assert_string_equal(sym_at(0x5004)->name, "moved");
	assert_string_equal(sym_at(0x1004)->name, "reused");   /* the later load wins */
	assert_int_equal(js.reused, 1);
	assert_int_equal(sym_at(0x1004)->generation, 0);   /* the code there last: generation 0 */
	assert_int_equal(symtab_symbol(st, 0)->generation, 1);
}

static void test_jitdump__reuse_generations_bounded(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	for (int i = 0; i < JITDUMP_MAX_GENERATIONS + 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "v%d", i);
		dump_load(&d, 0x1000, 8, (uint64_t)i, name);
	}
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.reused, JITDUMP_MAX_GENERATIONS + 3);
	assert_int_equal(js.no_elf, 4);
	assert_string_equal(sym_at(0x1000)->name, "v19");   /* the last load names the code */
	assert_int_equal(sym_at(0x1000)->generation, 0);   /* ... and gets an ELF file */
	assert_int_equal(symtab_symbol(st, 4)->generation, 15);
	assert_int_equal(symtab_symbol(st, 3)->generation, JITDUMP_NO_GENERATION);
}

/* N rows at OFF[i] into the function at ADDR (plus BIAS), lines 100, 101, ... */
static void rows_at(struct dump *d, uint64_t addr, uint64_t bias, const uint64_t *off, size_t n, const char *file)
{
	struct dump_row e[16];
	for (size_t i = 0; i < n; i++)
		e[i] = (struct dump_row){ addr + bias + off[i], 100 + (uint32_t)i, file };
	dump_debug(d, addr, e, n, 0);
}

static void move(struct dump *d, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	size_t at = d->n;
	put(d, 1, 4);
	put(d, 0, 4);
	put(d, 9, 8);
	put(d, 1, 4);
	put(d, 1, 4);
	put(d, 0, 8);
	put(d, from, 8);
	put(d, to, 8);
	put(d, size, 8);
	put(d, index, 8);
	dump_end(d, at);
}

static void test_jitdump__baseline_rows_ignored(void **state)
{
	(void)state;
	/* V8 Sparkplug code: rows at the bytecode offsets 0..0x31 (+0x40), as node 20 writes
	 * them for a 0x504-byte function; TurboFan rows reach most of their code. */
	static const uint64_t bytecode[] = { 0, 2, 0x10, 0x31 };
	static const uint64_t turbofan[] = { 0, 0x30, 0x120, 0x1d0 };
	struct dump d;
	header(&d, 0, 40);
	rows_at(&d, 0x10000, 0x40, bytecode, 4, "/t/hot.js");
	dump_load(&d, 0x10000, 0x504, 0, "JS:^collatz /t/hot.js:1:17");
	move(&d, 0x10000, 0x20000, 0x504, 0);   /* its copy is ignored alike, counted once */
	rows_at(&d, 0x11000, 0x40, turbofan, 4, "/t/hot.js");
	dump_load(&d, 0x11000, 0x240, 1, "JS:*collatz /t/hot.js:1:17");
	rows_at(&d, 0x12000, 0x40, bytecode, 2, "node:path");
	dump_load(&d, 0x12000, 0x60, 2, "LazyCompile:^next node:path:330:9");   /* older V8; small */
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	assert_int_equal(js.bias, 0x40);   /* the ignored rows still vote for the bias */
	assert_int_equal(js.debug_records, 3);
	assert_int_equal(js.debug_used, 1);
	assert_int_equal(js.debug_entries, 4);
	assert_int_equal(js.not_code_baseline, 2);
	assert_int_equal(js.not_code_prefix, 0);
	assert_int_equal(js.not_code_rows, 6);
	for (uint64_t at = 0x10000; at <= 0x20000; at += 0x10000) {
		const struct symbol *s = sym_at(at + 0x500);
		assert_string_equal(s->name, "JS:^collatz /t/hot.js:1:17");
		assert_int_equal(s->nlines, 0);
		assert_null(symtab_line(s, at + 0x500));
		assert_int_equal(s->file_len, 9);   /* from the name */
		assert_memory_equal(s->file, "/t/hot.js", 9);
		assert_int_equal(s->line, 1);
	}
	const struct symbol *o = sym_at(0x11000);
	assert_int_equal(o->nlines, 4);
	assert_int_equal(symtab_line(o, 0x11200)->line, 103);
	const struct symbol *n = sym_at(0x12000);
	assert_int_equal(n->nlines, 0);
	assert_int_equal(n->file_len, 9);
	assert_memory_equal(n->file, "node:path", 9);
	assert_int_equal(n->line, 330);
}

/* One function named "f" of SIZE bytes with rows at OFF (no bias); returns whether its
 * rows were kept, and checks the counters agree. */
static int prefix_kept(uint64_t size, const uint64_t *off, size_t n, int64_t given_bias, uint64_t written_bias)
{
	struct dump d;
	header(&d, 0, 40);
	rows_at(&d, 0x10000, written_bias, off, n, "/src/f.c");
	dump_load(&d, 0x10000, size, 0, "f");
	assert_int_equal(read_dump(&d, given_bias), 0);
	const struct symbol *s = sym_at(0x10000);
	assert_int_equal(js.not_code_baseline, 0);
	if (s->nlines == 0) {
		assert_int_equal(js.not_code_prefix, 1);
		assert_int_equal(js.not_code_rows, n);
		assert_int_equal(js.debug_used, 0);
		assert_null(s->file);   /* "f" follows no convention: no file, line 0 */
		assert_int_equal(s->line, 0);
		return 0;
	}
	assert_int_equal(js.not_code_prefix, 0);
	assert_int_equal(s->nlines, n);
	return 1;
}

static void test_jitdump__first_quarter_rule_boundaries(void **state)
{
	(void)state;
	/* Ignored in a dump with V8's 0x40 bias: code of 256 bytes or more, 4 or more
	 * distinct row addresses, the highest less than a quarter of the code in
	 * (4 * offset < size), the bias taken off first. */
	static const uint64_t last63[] = { 0, 8, 16, 63 }, last64[] = { 0, 8, 16, 64 };
	static const uint64_t dup[] = { 0, 8, 8, 63 }, five[] = { 0, 1, 2, 3, 10 };
	assert_false(prefix_kept(256, last63, 4, 0x40, 0x40));
	assert_true(prefix_kept(256, last64, 4, 0x40, 0x40));    /* 4 * 64 == 256: not less */
	assert_false(prefix_kept(257, last64, 4, 0x40, 0x40));   /* 256 < 257 */
	assert_true(prefix_kept(255, last63, 4, 0x40, 0x40));    /* below 256 bytes */
	assert_true(prefix_kept(256, dup, 4, 0x40, 0x40));       /* 3 distinct addresses */
	assert_false(prefix_kept(0x1000, five, 5, 0x40, 0x40));
	assert_true(prefix_kept(0x1000, last63, 1, 0x40, 0x40)); /* one row: the whole function's line */
	assert_false(prefix_kept(256, last63, 4, JITDUMP_BIAS_AUTO, 0x40));   /* detected */
	/* Other producers' rows (no bias) are never guessed away, whatever their shape: the
	 * JVM's C1 code of StringConcatHelper.mix(long, int), 464 bytes with rows at 0x0,
	 * 0x3c, 0x52 and 0x65 (the main path; the last row covers C1's out-of-line stubs). */
	static const uint64_t c1_mix[] = { 0, 0x3c, 0x52, 0x65 };
	assert_true(prefix_kept(464, c1_mix, 4, 0, 0));
	assert_true(prefix_kept(464, c1_mix, 4, JITDUMP_BIAS_AUTO, 0));
	assert_true(prefix_kept(256, last63, 4, 0, 0));
	assert_true(prefix_kept(0x1000, five, 5, 0, 0));
	assert_true(prefix_kept(256, last63, 4, 0, 0x40));   /* rows at +0x40..+0x7f, bias 0 */
}

/* Identity is (object, file, name): every load of a name gets one file and first line,
 * whichever load came first and whichever file its rows start in (README rule 3), while
 * the rows keep each instruction's own file and line. */
static void test_jitdump__one_file_per_name(void **state)
{
	(void)state;
	static const char jname[] = "int com.acme.Checksums.checksum(java.lang.String, int)";
	/* C1 code: rows from its own file and an inlined callee's */
	static const struct dump_row c1[] = { { 0x10000, 7, "com/acme/Checksums.java" },
					   { 0x10010, 350, "java/lang/StringConcatHelper.java" },
					   { 0x10020, 351, "java/lang/StringConcatHelper.java" },
					   { 0x10030, 8, "com/acme/Checksums.java" } };
	/* C2 code: every row is inlined code, starting in String.java */
	static const struct dump_row c2[] = { { 0x20000, 1481, "java/lang/String.java" },
					   { 0x20010, 10, "java/lang/Integer.java" },
					   { 0x20020, 11, "java/lang/Integer.java" },
					   { 0x20030, 12, "java/lang/Integer.java" },
					   { 0x20040, 2342, "java/lang/String.java" } };
	/* no declaring class: the file with the most rows over all loads (b.c), its lowest line */
	static const struct dump_row f1[] = { { 0x30000, 1, "/s/a.c" }, { 0x30010, 6, "/s/b.c" },
					   { 0x30020, 5, "/s/b.c" } };
	static const struct dump_row f2[] = { { 0x40000, 9, "/s/c.c" } };
	/* a tie: the first file in byte order */
	static const struct dump_row g1[] = { { 0x50000, 3, "/s/z.c" } };
	static const struct dump_row g2[] = { { 0x60000, 4, "/s/y.c" } };
	/* a V8 name: the name's file, not the first row's */
	static const struct dump_row v8[] = { { 0x70040, 20, "/t/inlined.js" }, { 0x70050, 3, "/t/a.js" } };
	for (int order = 0; order < 2; order++) {
		struct dump d;
		header(&d, 0, 40);
		for (int k = 0; k < 2; k++) {
			if ((k ^ order) == 0) {
				dump_debug(&d, 0x10000, c1, 4, 0);
				dump_load(&d, 0x10000, 0x100, 0, jname);
				dump_debug(&d, 0x30000, f1, 3, 0);
				dump_load(&d, 0x30000, 0x100, 2, "f");
				dump_debug(&d, 0x50000, g1, 1, 0);
				dump_load(&d, 0x50000, 0x100, 4, "g");
				dump_load(&d, 0x90000, 0x100, 7, "void java.lang.Object.<init>()");
			} else {
				dump_debug(&d, 0x20000, c2, 5, 0);
				dump_load(&d, 0x20000, 0x100, 1, jname);
				dump_debug(&d, 0x40000, f2, 1, 0);
				dump_load(&d, 0x40000, 0x100, 3, "f");
				dump_debug(&d, 0x60000, g2, 1, 0);
				dump_load(&d, 0x60000, 0x100, 5, "g");
				static const struct dump_row init[] = { { 0x80000, 44, "java/lang/Object.java" } };
				dump_debug(&d, 0x80000, init, 1, 0);
				dump_load(&d, 0x80000, 0x100, 6, "void java.lang.Object.<init>()");
			}
		}
		dump_debug(&d, 0x70000, v8, 2, 0);
		dump_load(&d, 0x70000, 0x100, 8, "JS:*f /t/a.js:3:1");
		assert_int_equal(read_dump(&d, 0), 0);
		static const struct {
			uint64_t addr;
			const char *file;
			uint64_t line;
		} want[] = {
			{ 0x10000, "com/acme/Checksums.java", 7 }, { 0x20000, "com/acme/Checksums.java", 7 },
			{ 0x30000, "/s/b.c", 5 }, { 0x40000, "/s/b.c", 5 },
			{ 0x50000, "/s/y.c", 4 }, { 0x60000, "/s/y.c", 4 },
			{ 0x80000, "java/lang/Object.java", 44 }, { 0x90000, "java/lang/Object.java", 44 },
			{ 0x70000, "/t/a.js", 3 },
		};
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const struct symbol *s = sym_at(want[i].addr);
			assert_non_null(s);
			assert_non_null(s->file);
			assert_int_equal(s->file_len, strlen(want[i].file));
			assert_memory_equal(s->file, want[i].file, s->file_len);
			assert_int_equal(s->line, want[i].line);
		}
		/* the rows still give each instruction its own file and line */
		const struct symline *r = symtab_line(sym_at(0x20000), 0x20000);
		assert_int_equal(r->line, 1481);
		assert_string_equal(r->file, "java/lang/String.java");
		assert_int_equal(symtab_line(sym_at(0x70000), 0x70000)->line, 20);
	}
	/* a perf map's entry of the name, built after symtab_finish(), gets the same place */
	struct dump d;
	header(&d, 0, 40);
	dump_debug(&d, 0x20000, c2, 5, 0);
	dump_load(&d, 0x20000, 0x100, 1, jname);
	dump_debug(&d, 0x10000, c1, 4, 0);
	dump_load(&d, 0x10000, 0x100, 0, jname);
	char *p = tmp_file_n((const char *)d.b, d.n);
	symtab_free(st);
	st = symtab_new();
	assert_int_equal(jitdump_read(st, p, "obj", 0, &js, &dg), 0);
	uint32_t map = symtab_add_source(st, "perf-1.map", "perf-1.map", SYMTAB_PRIO_MAP);
	assert_int_equal(symtab_add(st, map, &(struct symtab_entry){ 0xa0000, 0x10, jname, strlen(jname), 1 }, &dg), 0);
	symtab_finish(st);
	const struct symbol *m = sym_at(0xa0000);
	assert_int_equal(m->source, map);
	assert_int_equal(m->file_len, strlen("com/acme/Checksums.java"));
	assert_memory_equal(m->file, "com/acme/Checksums.java", m->file_len);
	assert_int_equal(m->line, 7);
	unlink(p);
	free(p);
}

/* A name whose loads end in two ELF generations (one was loaded where other code had
 * been) is still one function: one object (ob=) for all its loads, its first file's. */
static void test_jitdump__one_object_per_name(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 40);
	dump_load(&d, 0x11080, 0x100, 0, "X");   /* overlapped by the later Z: generation 1 */
	dump_load(&d, 0x11000, 0x100, 1, "Z");   /* wins [0x11080, 0x11100); X keeps the rest */
	dump_load(&d, 0x15000, 0x100, 2, "X");   /* generation 0 */
	char *p = tmp_file_n((const char *)d.b, d.n);
	char *dir = tmp_dir();
	symtab_free(st);
	st = symtab_new();
	assert_int_equal(jitdump_read(st, p, p, 0, &js, &dg), 0);
	struct elf_files *ef = elf_files_new(dir, "out");
	assert_int_equal(elf_files_write(ef, st, p, 0, 62, &dg), 0);
	assert_int_equal(elf_files_count(ef), 2);
	symtab_finish(st);
	const struct symbol *x1 = sym_at(0x11100), *x2 = sym_at(0x15000), *z = sym_at(0x11000);
	assert_string_equal(x1->name, "X");
	assert_int_equal(x1->generation, 1);
	assert_int_equal(x2->generation, 0);
	assert_ptr_equal(x1->object, x2->object);
	assert_string_equal(x2->object, elf_files_path(ef, 0));
	assert_string_equal(z->object, elf_files_path(ef, 0));
	elf_files_free(ef);
	rmdir(dir);
	unlink(p);
	free(p);
	free(dir);
}

static void test_jitdump__not_code_in_summary(void **state)
{
	(void)state;
	static const uint64_t off[] = { 0, 4, 8, 12, 20 };
	struct dump d;
	header(&d, 0, 40);
	rows_at(&d, 0x10000, 0x40, off, 5, "/t/a.js");
	dump_load(&d, 0x10000, 0x400, 0, "JS:^f /t/a.js:2:1");
	rows_at(&d, 0x20000, 0x40, off, 5, "/t/b.wat");
	dump_load(&d, 0x20000, 0x400, 1, "wasm-function[3]");
	assert_int_equal(read_dump(&d, JITDUMP_BIAS_AUTO), 0);
	static struct augment_stats r;
	memset(&r, 0, sizeof(r));
	r.nsources = 1;
	r.sources[0].is_jitdump = 1;
	r.sources[0].jd = js;
	snprintf(r.sources[0].kind, sizeof(r.sources[0].kind), "jitdump");
	char *txt = tmp_file("");
	FILE *f = fopen(txt, "w");
	augment_stats_text_write(&r, f);
	fclose(f);
	char *t = slurp(txt);
	assert_non_null(strstr(t, "0 of 2 debug records used (0 line rows)"));
	assert_non_null(strstr(t, "2 debug records ignored (10 rows): not machine-code offsets (1 of V8 "
				  "baseline code 'JS:^', 1 with every row in the first quarter of the code)"));
	char *yml = tmp_file("");
	assert_int_equal(augment_stats_yaml_write(&r, yml, &dg), 0);
	char *y = slurp(yml);
	assert_non_null(strstr(y, "debug_records_not_code_baseline: 1\n"));
	assert_non_null(strstr(y, "debug_records_not_code_prefix: 1\n"));
	assert_non_null(strstr(y, "debug_rows_not_code: 10\n"));
	unlink(txt);
	unlink(yml);
	free(t);
	free(y);
	free(txt);
	free(yml);
}

static int teardown(void **state)
{
	(void)state;
	symtab_free(st);
	st = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jitdump__records_both_byte_orders),
		cmocka_unit_test(test_jitdump__bias_detected_and_overridden),
		cmocka_unit_test(test_jitdump__garbage_debug_dropped),
		cmocka_unit_test(test_jitdump__node_overwritten_names_recovered),
		cmocka_unit_test(test_jitdump__paths_mapped),
		cmocka_unit_test(test_jitdump__lying_sizes),
		cmocka_unit_test(test_jitdump__truncated_tail_and_headers),
		cmocka_unit_test(test_jitdump__move_and_reuse),
		cmocka_unit_test(test_jitdump__reuse_generations_bounded),
		cmocka_unit_test(test_jitdump__baseline_rows_ignored),
		cmocka_unit_test(test_jitdump__first_quarter_rule_boundaries),
		cmocka_unit_test(test_jitdump__one_file_per_name),
		cmocka_unit_test(test_jitdump__one_object_per_name),
		cmocka_unit_test(test_jitdump__not_code_in_summary),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
