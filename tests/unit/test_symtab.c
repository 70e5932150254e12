/* Unit tests for symtab.c: lookup at boundaries, the later-entry-wins overlap policy,
 * address reuse, priorities, conflict statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "symtab.h"

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
	assert_int_equal(symtab_add(st, src, start, size, name, strlen(name), 1, &d), 0);
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
	assert_int_equal(symtab_stats(st)->shadowed, 2);
	assert_int_equal(symtab_stats(st)->shadowed_other, 1);
}

static void test_symtab__priority_beats_order(void **state)
{
	(void)state;
	uint32_t dump = symtab_add_source(st, "jit-1.dump", "jit-1.dump", 1);
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, dump, 0x1000, 0x100, "from_dump", 9, 1, &d), 0);
	add(0x1000, 0x100, "from_map");
	symtab_finish(st);
	assert_string_equal(at(0x1000), "from_dump");
}

static void test_symtab__errors_and_zero_size(void **state)
{
	(void)state;
	struct diag d = { 0 };
	assert_int_equal(symtab_add(st, src, 0x1000, 0, "empty", 5, 3, &d), 0);
	assert_int_equal(symtab_source(st, src)->skipped, 1);
	assert_int_equal(symtab_add(st, src, UINT64_MAX - 4, 0x10, "wrap", 4, 7, &d), -1);
	assert_non_null(strstr(d.msg, "perf-1.map:7: range 0xfffffffffffffffb + 0x10 goes past"));
	add(UINT64_MAX - 0x10, 0x10, "top");   /* ends exactly at 2^64-1 */
	add(UINT64_MAX - 0x7, 0x8, "last");    /* ends exactly at 2^64 */
	/* a jitdump entry is located by its byte offset, not a line */
	uint32_t dump = symtab_add_source(st, "jit-1.dump", "jit-1.dump", SYMTAB_PRIO_JITDUMP);
	memset(&d, 0, sizeof(d));
	assert_int_equal(symtab_add(st, dump, UINT64_MAX - 4, 0x10, "wrap", 4, 96, &d), -1);
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
	assert_int_equal(symtab_add(st, src, 0x1000, 0x10, "a\nb\rc\x01", 6, 1, &d), 0);
	assert_int_equal(symtab_add(st, src, 0x2000, 0x10, "", 0, 2, &d), 0);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
