/* Unit tests for perfmap.c: the line shapes producers write, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/diag.h"
#include "helpers.h"
#include "core/io.h"
#include "jit/perfmap.h"
#include "jit/symtab.h"

static void parses(const char *line, uint64_t start, uint64_t size, const char *name)
{
	struct symtab_entry e = { 0 };
	const char *what;
	if (perfmap_parse_line(line, strlen(line), &e, &what) < 0)
		fail_msg("'%s' refused: %s", line, what);
	assert_int_equal(e.start, start);
	assert_int_equal(e.size, size);
	assert_int_equal(e.name_len, strlen(name));
	assert_memory_equal(e.name, name, e.name_len);
}

static void refuses(const char *line, const char *expect)
{
	struct symtab_entry e = { 0 };
	const char *what;
	assert_int_equal(perfmap_parse_line(line, strlen(line), &e, &what), -1);
	assert_non_null(strstr(what, expect));
}

static void test_perfmap__producer_shapes(void **state)
{
	(void)state;
	parses("7ff7f5fc6180 180 JS:*fib /path/to/a.js:1:13", 0x7ff7f5fc6180, 0x180, "JS:*fib /path/to/a.js:1:13");
	parses("0x00007ff018ec7620 0x0000000000000218 int H.f(int)", 0x7ff018ec7620, 0x218, "int H.f(int)");
	parses("7f7bdf626000 1abd f(-e:1)", 0x7f7bdf626000, 0x1abd, "f(-e:1)");
	parses("7f18579ed000 b py::_find_and_load:<frozen importlib._bootstrap>", 0x7f18579ed000, 0xb,
	       "py::_find_and_load:<frozen importlib._bootstrap>");
	parses("10 2 ab", 0x10, 2, "ab");                         /* names shorter than 3 */
	parses("10  2\tname with  spaces  \r", 0x10, 2, "name with  spaces");
	parses("0X10 0X2 (1)x", 0x10, 2, "(1)x");
	parses("  10 2 x", 0x10, 2, "x");
	/* every length, case, padding and the 64-bit edge */
	parses("0123456789abcdef FEDCBA98 x", 0x0123456789abcdef, 0xfedcba98, "x");
	parses("ffffffffffffffff 1 x", UINT64_MAX, 1, "x");
	parses("00000000000000000000000000000001 0000000000000000000000000000000a x", 1, 10, "x");
	parses("0x0000000000000000ffffffffffffffff 0X8 x", UINT64_MAX, 8, "x");
	parses("aBcDeF12 3 x", 0xabcdef12, 3, "x");
	parses("aBcDeF123 3 x", 0xabcdef123, 3, "x");
	parses("1234567 1234567\t\tx", 0x1234567, 0x1234567, "x");
}

static void test_perfmap__refused(void **state)
{
	(void)state;
	refuses("zz 10 x", "START in hex");
	refuses("10g 10 x", "space after START");
	refuses("10 x", "SIZE in hex");
	refuses("10 10", "symbol name");
	refuses("10 10   ", "symbol name");
	refuses("10 10x name", "space after SIZE");
	refuses("11111111111111111 1 x", "START in hex");   /* 17 hex digits overflow */
	refuses("000000000010000000000000000 1 x", "START in hex");   /* zeros, then 17 digits */
	refuses("1 fffffffffffffffff0 x", "SIZE in hex");
	refuses("12345678g 1 x", "space after START");
	refuses("1234567812345678 12345678z x", "space after SIZE");
	refuses("10 12345678", "symbol name");
	refuses("0x 1 x", "START in hex");
}

/* The hex table (perfmap.c): each digit in both cases, the bytes next to the digit ranges
 * refused, 0x/0X or not, leading zeros not counted against the 16 digits, overflow. */
static void test_perfmap__hex_edges(void **state)
{
	(void)state;
	static const char digits[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
	for (unsigned v = 0; v < 16; v++) {
		char line[32];
		snprintf(line, sizeof(line), "%c0 %c x", digits[v], upper[v]);
		parses(line, v * 16, v ? v : 0, "x");
		snprintf(line, sizeof(line), "0x%c 0X%c x", upper[v], digits[v]);
		parses(line, v, v, "x");
	}
	/* the neighbours of '0'-'9', 'A'-'F', 'a'-'f', and bytes with the high bit set */
	static const char *near[] = { "/", ":", "@", "G", "`", "g", "\xb0", "\xc1", "\xff" };
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		char line[32];
		snprintf(line, sizeof(line), "%s1 1 x", near[i]);
		refuses(line, "START in hex");
		snprintf(line, sizeof(line), "1%s 1 x", near[i]);
		refuses(line, "space after START");
		snprintf(line, sizeof(line), "1 1%s x", near[i]);
		refuses(line, "space after SIZE");
	}
	parses("0 0x0 x", 0, 0, "x");
	parses("0x0 000 x", 0, 0, "x");
	parses("0x1 0xF x", 1, 15, "x");
	parses("0X0000000000000000000000000000000000000000000000000000000000000000000000000000000000000001 1 x",
	       1, 1, "x");                                        /* any number of zeros */
	parses("0x0000FEDCBA9876543210 00000000000000000000Ffffffffffffffff x",
	       0xfedcba9876543210, UINT64_MAX, "x");             /* 16 digits after the zeros */
	parses("8000000000000000 7fffffffffffffff x", 0x8000000000000000, INT64_MAX, "x");
	refuses("0x10000000000000000 1 x", "START in hex");        /* 2^64 */
	refuses("0x00010000000000000000 1 x", "START in hex");
	refuses("1 10000000000000000 x", "SIZE in hex");
	refuses("1 0X1ffffffffffffffff x", "SIZE in hex");
	refuses("0x1 0x x", "SIZE in hex");                        /* a prefix, no digits */
	refuses("0x1 0x", "space after SIZE");                     /* "0", then 'x' */
	refuses("0xx 1 x", "START in hex");
	refuses("0x 0x1 x", "START in hex");
	refuses("-1 1 x", "START in hex");
	refuses("+1 1 x", "START in hex");
}

static void test_perfmap__read_file(void **state)
{
	(void)state;
	char *path = tmp_file("1000 10 a\n\n1008 10 b\r\n2000 0 empty\n3000 8 last-unterminated");
	struct symtab *st = symtab_new();
	struct perfmap_stats ps;
	struct diag d = { 0 };
	assert_int_equal(perfmap_read(st, path, "obj", 1 << 16, &ps, &d), 0);
	assert_int_equal(ps.lines, 5);
	assert_int_equal(ps.entries, 3);
	assert_int_equal(ps.empty_lines, 1);
	assert_int_equal(ps.zero_size, 1);
	assert_true(ps.unterminated);
	symtab_finish(st);
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0x1007)->sym)->name, "a");
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0x1008)->sym)->name, "b");
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0x3007)->sym)->name, "last-unterminated");
	symtab_free(st);
	unlink(path);
	free(path);
}

static void test_perfmap__errors_name_file_and_line(void **state)
{
	(void)state;
	char *path = tmp_file("1000 10 a\nthis is not a map\n");
	struct symtab *st = symtab_new();
	struct perfmap_stats ps;
	struct diag d = { 0 };
	assert_int_equal(perfmap_read(st, path, "obj", 1 << 16, &ps, &d), -1);
	char expect[256];
	snprintf(expect, sizeof(expect), "%s:2: expected 'START SIZE NAME' with START in hex, got 'this is not a map'", path);
	assert_string_equal(d.msg, expect);
	symtab_free(st);
	unlink(path);
	free(path);
	path = tmp_file_n("1000 10 a\x00" "b\n", 12);
	st = symtab_new();
	memset(&d, 0, sizeof(d));
	assert_int_equal(perfmap_read(st, path, "obj", 1 << 16, &ps, &d), -1);
	if (!strstr(d.msg, ":1: NUL byte"))
		fail_msg("%s", d.msg);
	symtab_free(st);
	unlink(path);
	free(path);
	st = symtab_new();
	memset(&d, 0, sizeof(d));
	assert_int_equal(perfmap_read(st, "/nonexistent/perf-1.map", "obj", 1 << 16, &ps, &d), -1);
	assert_string_equal(d.msg, "/nonexistent/perf-1.map: cannot open: No such file or directory");
	symtab_free(st);
}

/* A range may end exactly at 2^64 (its last byte at 2^64 - 1); one byte more is refused,
 * with the file and line. */
static void test_perfmap__range_ending_at_2_64(void **state)
{
	(void)state;
	char *path = tmp_file("ffffffffffffff00 100 top\n1000 10 low\n");
	struct symtab *st = symtab_new();
	struct perfmap_stats ps;
	struct diag d = { 0 };
	assert_int_equal(perfmap_read(st, path, "obj", 1 << 16, &ps, &d), 0);
	assert_int_equal(ps.entries, 2);
	symtab_finish(st);
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, UINT64_MAX)->sym)->name, "top");
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0xffffffffffffff00)->sym)->name, "top");
	assert_null(symtab_lookup(st, 0xfffffffffffffeff));
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0x100f)->sym)->name, "low");
	symtab_free(st);
	unlink(path);
	free(path);
	path = tmp_file("1000 10 low\nffffffffffffff00 101 past\n");
	st = symtab_new();
	assert_int_equal(perfmap_read(st, path, "obj", 1 << 16, &ps, &d), -1);
	char expect[256];
	snprintf(expect, sizeof(expect), "%s:2: range 0xffffffffffffff00 + 0x101 goes past the end of the "
		 "address space", path);
	assert_string_equal(d.msg, expect);
	symtab_free(st);
	unlink(path);
	free(path);
}

/* A map read from a pipe, as augment reads a symbol file: once, from its first byte. */
static void test_perfmap__read_from_pipe(void **state)
{
	(void)state;
	static const char map[] = "1000 10 first\n2000 10 second\n";
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], map, sizeof(map) - 1), (ssize_t)sizeof(map) - 1);
	close(fds[1]);
	struct diag d = { 0 };
	struct input *in = input_open_fd(fds[0], "pipe", &d);
	unsigned char m[4];
	assert_int_equal(input_peek(in, m, 4, &d), 4);
	struct symtab *st = symtab_new();
	struct perfmap_stats ps;
	assert_int_equal(perfmap_read_input(st, in, "pipe", 1 << 16, &ps, &d), 0);
	assert_int_equal(ps.entries, 2);
	symtab_finish(st);
	assert_string_equal(symtab_symbol(st, symtab_lookup(st, 0x1000)->sym)->name, "first");
	symtab_free(st);
	input_close(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfmap__producer_shapes),
		cmocka_unit_test(test_perfmap__refused),
		cmocka_unit_test(test_perfmap__hex_edges),
		cmocka_unit_test(test_perfmap__read_file),
		cmocka_unit_test(test_perfmap__errors_name_file_and_line),
		cmocka_unit_test(test_perfmap__range_ending_at_2_64),
		cmocka_unit_test(test_perfmap__read_from_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
