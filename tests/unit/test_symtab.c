/* Unit tests for symtab.c: lookup at boundaries, the later-entry-wins overlap policy,
 * address reuse, priorities, conflict statistics, names kept compactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "jit/symtab.h"

static struct symtab *st;
static uint32_t src;

static int setup(void **state)
{
	(void)state;
	st = symtab_new();
	src = symtab_add_source(st, "perf-1.map", "perf-1.map", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	symtab_free(st);
	return 0;
}

static void add(uint64_t start, uint64_t size, const char *name)
{
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ start, size, name, strlen(name), 1 }, &d), 0);
}

static const char *at(uint64_t addr)
{
	const struct symtab_segment *s = symtab_lookup(st, addr);
	return s ? symtab_symbol(st, s->sym)->name : NULL;
}

static void test_symtab__boundaries(void **state)
{
	(void)state;
	add(0x1000, 0x100, "a");
	add(0x1100, 0x10, "b");
	add(0x2000, 1, "c");
	symtab_finish(st);
	assert_null(at(0xfff));
	assert_string_equal(at(0x1000), "a");
	assert_string_equal(at(0x10ff), "a");
	assert_string_equal(at(0x1100), "b");
	assert_null(at(0x1110));
	assert_string_equal(at(0x2000), "c");
	assert_null(at(0x2001));
	assert_null(at(UINT64_MAX));
	assert_int_equal(symtab_stats(st)->shadowed, 0);
}

static void test_symtab__later_entry_wins(void **state)
{
	(void)state;
	add(0x1000, 0x100, "old");
	add(0x1040, 0x20, "new");      /* inside old: old keeps both sides */
	add(0x10f0, 0x20, "tail");     /* overlaps old's end */
	symtab_finish(st);
	assert_string_equal(at(0x103f), "old");
	assert_string_equal(at(0x1040), "new");
	assert_string_equal(at(0x105f), "new");
	assert_string_equal(at(0x1060), "old");
	assert_string_equal(at(0x10ef), "old");
	assert_string_equal(at(0x10f0), "tail");
	assert_string_equal(at(0x110f), "tail");
	const struct symtab_stats *s = symtab_stats(st);
	assert_int_equal(s->shadowed, 1);
	assert_int_equal(s->shadowed_other, 1);
	assert_true(symtab_lookup(st, 0x1050)->contested);
	assert_false(symtab_lookup(st, 0x1030)->contested);
}

static void test_symtab__reuse_same_range(void **state)
{
	(void)state;
	add(0x1000, 0x100, "first");
	add(0x1000, 0x100, "second");
	add(0x1000, 0x100, "second");  /* a repeated line */
	symtab_finish(st);
	assert_string_equal(at(0x1080), "second");
	/* the repeated line is no overlap: only "first" was shadowed */
	assert_int_equal(symtab_stats(st)->shadowed, 1);
	assert_int_equal(symtab_stats(st)->shadowed_other, 1);
	assert_int_equal(symtab_stats(st)->duplicates, 1);
}

static void test_symtab__priority_beats_order(void **state)
{
	(void)state;
	uint32_t dump = symtab_add_source(st, "jit-1.dump", "jit-1.dump", 1);
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, dump, &(struct symtab_entry){ 0x1000, 0x100, "from_dump", 9, 1 }, &d), 0);
	add(0x1000, 0x100, "from_map");
	add(0x2000, 0x100, "map_a");
	add(0x2080, 0x100, "map_b");
	symtab_finish(st);
	assert_string_equal(at(0x1000), "from_dump");
	/* a map entry replaced by the dump's is the policy, not an overlap */
	assert_int_equal(symtab_stats(st)->superseded, 1);
	assert_int_equal(symtab_stats(st)->shadowed, 1);   /* map_a by map_b */
	assert_int_equal(symtab_stats(st)->shadowed_other, 1);
	assert_int_equal(symtab_stats(st)->duplicates, 0);
}

static void test_symtab__errors_and_zero_size(void **state)
{
	(void)state;
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ 0x1000, 0, "empty", 5, 3 }, &d), 0);
	assert_int_equal(symtab_source(st, src)->skipped, 1);
	assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ UINT64_MAX - 4, 0x10, "wrap", 4, 7 }, &d), -1);
	assert_non_null(strstr(d.msg, "perf-1.map:7: range 0xfffffffffffffffb + 0x10 goes past"));
	add(UINT64_MAX - 0x10, 0x10, "top");   /* ends exactly at 2^64-1 */
	add(UINT64_MAX - 0x7, 0x8, "last");    /* ends exactly at 2^64 */
	/* a jitdump entry is located by its byte offset, not a line */
	uint32_t dump = symtab_add_source(st, "jit-1.dump", "jit-1.dump", SYMTAB_PRIO_JITDUMP);
	memset(&d, 0, sizeof(d));
	assert_int_equal(symtab_add(st, dump, &(struct symtab_entry){ UINT64_MAX - 4, 0x10, "wrap", 4, 96 }, &d), -1);
	assert_string_equal(d.msg, "jit-1.dump: byte 96: range 0xfffffffffffffffb + 0x10 goes past the end "
			    "of the address space");
	symtab_finish(st);
	assert_string_equal(at(UINT64_MAX - 1), "last");
	assert_string_equal(at(UINT64_MAX), "last");
	assert_string_equal(at(UINT64_MAX - 8), "top");
	assert_null(at(0x1000));
}

static void test_symtab__names_fit_a_text_line(void **state)
{
	(void)state;
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ 0x1000, 0x10, "a\nb\rc\x01", 6, 1 }, &d), 0);
	assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ 0x2000, 0x10, "", 0, 2 }, &d), 0);
	symtab_finish(st);
	assert_string_equal(at(0x1000), "a_b_c_");   /* fuzzing found names with newlines */
	assert_string_equal(at(0x2000), "[JIT code at 0x2000]");
}

static void test_symtab__many_nested(void **state)
{
	(void)state;
	/* 1000 nested ranges: each later one is inside the previous; the innermost wins. */
	for (int i = 0; i < 1000; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		add(0x100000 + (uint64_t)i, 2000 - 2 * (uint64_t)i, name);
	}
	symtab_finish(st);
	assert_string_equal(at(0x100000), "n0");
	assert_string_equal(at(0x100000 + 999), "n999");
	assert_string_equal(at(0x100000 + 1000), "n999");
	assert_string_equal(at(0x100000 + 1001), "n998");
	assert_int_equal(symtab_count(st), 1000);
}

/* The name of entry I in names_survive_growth, as added (CLEAN 0) or as kept (1):
 * 0 mod 4, a path that many names share; 1, a path of its own; 2, no last word to share;
 * 3, a control byte in a shared path. */
static const char *growth_name(char *out, size_t n, uint32_t i, int clean)
{
	switch (i % 4) {
	case 0:
		snprintf(out, n, "JS:*f%u /srv/app/lib/file_%u.js:%u:%u", i, i % 97, i, i % 80);
		break;
	case 1:
		snprintf(out, n, "LazyCompile:~g /tmp/only_%u.js:%u", i, i);
		break;
	case 2:
		snprintf(out, n, "Builtin:Thing_%u", i);
		break;
	default:
		snprintf(out, n, "JS:~h /srv/app/%clib_%u.js:7:8", clean ? '_' : '\x01', i % 5);
		break;
	}
	return out;
}

/* Names are kept in one growing stream and by their shared last word: a symbol built
 * early keeps its name, and every entry reads back as it was added, after the stream
 * and the table of last words have grown many times. */
static void test_symtab__names_survive_growth(void **state)
{
	(void)state;
	struct diag d = { 0 };
	char name[96];
	add(0x1000, 0x10, "JS:~first /srv/app/lib/first.js:1:1");
	const struct symbol *first = symtab_symbol(st, 0);
	assert_string_equal(first->name, "JS:~first /srv/app/lib/first.js:1:1");
	enum { N = 200000 };
	for (uint32_t i = 1; i < N; i++) {
		uint64_t start = 0x100000 + (uint64_t)(i % 1000) * 0x100000 + (uint64_t)i * 0x40;
		growth_name(name, sizeof(name), i, 0);
		assert_int_equal(symtab_add(st, src, &(struct symtab_entry){ start, 0x20 + i % 0x20, name, strlen(name), i + 1 }, &d), 0);
	}
	symtab_finish(st);
	assert_string_equal(first->name, "JS:~first /srv/app/lib/first.js:1:1");
	assert_ptr_equal(symtab_symbol(st, 0), first);
	assert_string_equal(at(0x1000), "JS:~first /srv/app/lib/first.js:1:1");
	for (uint32_t i = 1; i < N; i += 7) {
		const struct symbol *s = symtab_symbol(st, i);
		assert_string_equal(s->name, growth_name(name, sizeof(name), i, 1));
		assert_int_equal(s->name_len, strlen(name));
		assert_int_equal(s->start, 0x100000 + (uint64_t)(i % 1000) * 0x100000 + (uint64_t)i * 0x40);
		assert_int_equal(s->size, 0x20 + i % 0x20);
		assert_int_equal(s->source_line, i + 1);
		assert_string_equal(at(s->start + 1), name);
		if (i % 4 == 0) {   /* the file from V8's convention points into the name */
			assert_non_null(s->file);
			assert_true(s->file >= s->name && s->file < s->name + s->name_len);
			assert_int_equal(s->line, i);
		}
	}
	assert_int_equal(symtab_stats(st)->segments, N);
}

/* A cluster of overlapping entries can give more segments than it has entries; the
 * entries after it must stay where they are. */
static void test_symtab__cluster_gives_more_segments(void **state)
{
	(void)state;
	add(0x1000, 0x100, "outer");
	add(0x1040, 0x20, "inner");    /* splits outer: 3 segments from 2 entries */
	add(0x1200, 0x100, "outer2");
	add(0x1210, 0x10, "inner2");
	for (int i = 0; i < 100; i++) {
		char name[24];
		snprintf(name, sizeof(name), "after%d", i);
		add(0x2000 + 0x10 * (uint64_t)i, 0x10, name);
	}
	add(0x10, 0x10, "before");     /* added last, sorted first */
	symtab_finish(st);
	assert_int_equal(symtab_stats(st)->segments, 1 + 3 + 3 + 100);
	assert_string_equal(at(0x10), "before");
	assert_string_equal(at(0x103f), "outer");
	assert_string_equal(at(0x1040), "inner");
	assert_string_equal(at(0x1060), "outer");
	assert_string_equal(at(0x1210), "inner2");
	assert_string_equal(at(0x1220), "outer2");
	for (int i = 0; i < 100; i++) {
		char name[24];
		snprintf(name, sizeof(name), "after%d", i);
		assert_string_equal(at(0x2000 + 0x10 * (uint64_t)i + 0xf), name);
	}
	assert_null(at(0x2000 + 0x10 * 100));
}

/* Equal names are equal whether their last word was shared or not: repeated lines are no
 * conflict, and names that differ only in ":LINE:COL" are. */
static void test_symtab__equal_names_with_shared_words(void **state)
{
	(void)state;
	add(0x1000, 0x100, "JS:~f /srv/app/lib/a.js:1:2");
	add(0x1000, 0x100, "JS:~f /srv/app/lib/a.js:1:2");
	add(0x2000, 0x100, "JS:~f /srv/app/lib/a.js:1:2");
	add(0x2000, 0x100, "JS:~f /srv/app/lib/a.js:1:3");
	symtab_finish(st);
	assert_false(symtab_lookup(st, 0x1000)->contested);
	assert_true(symtab_lookup(st, 0x2000)->contested);
	assert_int_equal(symtab_stats(st)->shadowed, 1);
	assert_int_equal(symtab_stats(st)->shadowed_other, 1);
	assert_int_equal(symtab_stats(st)->duplicates, 1);
	assert_string_equal(at(0x2000), "JS:~f /srv/app/lib/a.js:1:3");
	/* built once, the same object for both accessors */
	assert_ptr_equal(symtab_symbol(st, 1), symtab_symbol_mut(st, 1));
	symtab_symbol_mut(st, 1)->object = "x";
	assert_string_equal(symtab_symbol(st, 1)->object, "x");
}

/* MoarVM's "name(file:line)" is kept as its head, the file by number and the line as a
 * number (symtab_stream.c): every form reads back byte for byte, and a symbol's file and
 * line, parsed from its name only when it is built, are those of the name's convention;
 * a name whose file:line is malformed or absent has none. */
static void test_symtab__moarvm_names_read_back(void **state)
{
	(void)state;
	static const struct {
		const char *name, *file;   /* FILE NULL: the name gives none */
		uint64_t line;
	} cases[] = {
		{ "find_method(gen/moar/stage2/nqpmo.nqp:1391)", "gen/moar/stage2/nqpmo.nqp", 1391 },
		{ "(gen/moar/stage2/NQPCORE.setting:770)", "gen/moar/stage2/NQPCORE.setting", 770 },
		{ "f(gen/moar/stage2/nqpmo.nqp:0)", "gen/moar/stage2/nqpmo.nqp", 1 },   /* jitname.h: 0 is 1 */
		{ "g(gen/moar/stage2/nqpmo.nqp:1)", "gen/moar/stage2/nqpmo.nqp", 1 },
		{ "h(gen/moar/stage2/nqpmo.nqp:007)", "gen/moar/stage2/nqpmo.nqp", 7 },   /* kept whole */
		{ "i(gen/moar/stage2/nqpmo.nqp:)", NULL, 0 },            /* no line */
		{ "j(gen/moar/stage2/nqpmo.nqp)", NULL, 0 },             /* no line, no colon */
		{ "k(gen/moar/stage2/nqpmo.nqp:12x)", NULL, 0 },
		{ "l(gen/moar/stage2/nqpmo.nqp:12", NULL, 0 },           /* not closed */
		{ "m(short:5)", "short", 5 },                            /* file too short to share */
		{ "n(node:internal/streams/x:9999999999999999999)", "node:internal/streams/x",
		  9999999999999999999ULL },                              /* 19 digits */
		{ "o(node:internal/streams/x:99999999999999999999)", NULL, 0 },   /* past 2^64 */
		{ "o(node:internal/streams/x:9223372036854775807)", "node:internal/streams/x",
		  9223372036854775807ULL },                              /* 2^63 - 1: kept as a number */
		{ "o(node:internal/streams/x:9223372036854775808)", "node:internal/streams/x",
		  9223372036854775808ULL },                              /* 2^63: kept whole */
		{ "JS:~o /srv/app/lib/a.js:9223372036854775807", "/srv/app/lib/a.js", 9223372036854775807ULL },
		{ "JS:~o /srv/app/lib/a.js:9223372036854775808", "/srv/app/lib/a.js", 9223372036854775808ULL },
		{ "p(a(b)/moar/stage2/x.nqp:3)", "b)/moar/stage2/x.nqp", 3 },   /* the last '(' */
		{ "q x(gen/moar/stage2/nqpmo.nqp:12)", "gen/moar/stage2/nqpmo.nqp", 12 },
		{ "JS:~r /srv/app/lib/a.js:1:2", "/srv/app/lib/a.js", 1 },
		{ "s(gen/moar/stage2/nqpmo.nqp:12) ", NULL, 0 },         /* as added, untrimmed */
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	for (int round = 0; round < 2; round++)   /* the second time, the files are shared */
		for (int i = 0; i < N; i++)
			add(0x1000 * (uint64_t)(1 + round * N + i), 0x10, cases[i].name);
	symtab_finish(st);
	for (int i = 0; i < 2 * N; i++) {
		const struct symbol *s = symtab_symbol(st, (uint32_t)i);
		int c = i % N;
		assert_string_equal(s->name, cases[c].name);
		assert_int_equal(s->name_len, strlen(cases[c].name));
		assert_int_equal(s->line, cases[c].line);
		if (!cases[c].file) {
			assert_null(s->file);
			continue;
		}
		assert_int_equal(s->file_len, strlen(cases[c].file));
		assert_memory_equal(s->file, cases[c].file, s->file_len);
	}
	/* equal names are equal whichever way they were kept */
	assert_int_equal(symtab_symbol(st, 0)->name_id, symtab_symbol(st, N)->name_id);
	assert_true(symtab_symbol(st, 0)->name_id != symtab_symbol(st, 1)->name_id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symtab__boundaries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__later_entry_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__reuse_same_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__priority_beats_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__errors_and_zero_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__many_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__names_fit_a_text_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__names_survive_growth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__cluster_gives_more_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__equal_names_with_shared_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symtab__moarvm_names_read_back, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
