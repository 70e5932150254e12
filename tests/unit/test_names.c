/* Unit tests for pseudo_name.c (callgrind's 0x... names) and jitname.c (the table of
 * runtime name conventions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "jitname.h"
#include "pseudo_name.h"

static int pseudo(const char *s, uint64_t *addr, size_t *head)
{
	return pseudo_name_parse(s, strlen(s), addr, head);
}

static void test_pseudo_name__forms(void **state)
{
	(void)state;
	uint64_t a;
	size_t h;
	assert_true(pseudo("0x00000000060c0000", &a, &h));
	assert_int_equal(a, 0x60c0000);
	assert_int_equal(h, 18);
	assert_true(pseudo("0x0000000010000400'2", &a, &h));
	assert_int_equal(a, 0x10000400);
	assert_int_equal(h, 18);
	assert_true(pseudo("0x0000000010000400'2'0x0000000010000300'main", &a, &h));
	assert_true(pseudo("0x10000400", &a, &h));   /* 32-bit hosts: %#08lx */
	assert_int_equal(h, 10);
	assert_false(pseudo("0x000000001000040", &a, &h));     /* 15 digits */
	assert_false(pseudo("0x00000000100004000", &a, &h));   /* 17 digits */
	assert_false(pseudo("0x00000000060C0000", &a, &h));    /* uppercase: not callgrind's */
	assert_false(pseudo("0x0000000000109000 [PLT]", &a, &h));
	assert_false(pseudo("main", &a, &h));
	assert_false(pseudo("0x00000000060c000g", &a, &h));
}

static void expect_name(const char *name, enum jitname_convention c, const char *file, uint64_t line)
{
	struct jitname j;
	assert_int_equal(jitname_parse(name, strlen(name), &j), c);
	if (!file) {
		assert_null(j.file);
		return;
	}
	assert_int_equal(j.file_len, strlen(file));
	assert_memory_equal(j.file, file, j.file_len);
	assert_int_equal(j.line, line);
}

static void test_jitname__conventions(void **state)
{
	(void)state;
	expect_name("infix:<cmp>(gen/moar/CORE.c.setting:71)", JN_MOARVM, "gen/moar/CORE.c.setting", 71);
	expect_name("(gen/moar/stage2/NQPCORE.setting:527)", JN_MOARVM, "gen/moar/stage2/NQPCORE.setting", 527);
	expect_name("f(-e:1)", JN_MOARVM, "-e", 1);
	expect_name("JS:*fib /path/to/a.js:1:13", JN_V8, "/path/to/a.js", 1);
	expect_name("LazyCompile:~main /x/app.js:10", JN_V8, "/x/app.js", 10);
	expect_name("JS:^f file:///C:/x.mjs:3:2", JN_V8, "file:///C:/x.mjs", 3);
	expect_name("py::_find_and_load:<frozen importlib._bootstrap>", JN_CPYTHON, "<frozen importlib._bootstrap>", 0);
	expect_name("TRACE_5::@/src/f.lua:17", JN_LUAJIT, "/src/f.lua", 17);
	expect_name("int H.f(int)", JN_NONE, NULL, 0);
	expect_name("Builtin:DeoptimizationEntry_Eager", JN_NONE, NULL, 0);
	expect_name("jitted_frame_12", JN_NONE, NULL, 0);
	expect_name("g(x:y)", JN_NONE, NULL, 0);
	expect_name("()", JN_NONE, NULL, 0);
	expect_name("(:5)", JN_NONE, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pseudo_name__forms),
		cmocka_unit_test(test_jitname__conventions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
