/* Unit tests for pseudo_name.c (callgrind's 0x... names) and jitname.c (the table of
 * runtime name conventions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "jit/jitname.h"
#include "callgrind/pseudo_name.h"

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
	/* 8 digits then a caller, whose own "'" falls where a 16-digit name would end */
	assert_true(pseudo("0x10000400'abcdefg'main", &a, &h));
	assert_int_equal(a, 0x10000400);
	assert_int_equal(h, 10);
	assert_false(pseudo("0x1000040'abcdefgh'main", &a, &h));   /* 7 digits */
}

/* The reading of pseudo names as first written: digit by digit to the end or a "'". */
static int pseudo_by_digit(const char *name, size_t len, uint64_t *addr, size_t *head_len)
{
	if (len < 10 || name[0] != '0' || name[1] != 'x')
		return 0;
	size_t n = 2;
	uint64_t v = 0;
	while (n < len && name[n] != '\'') {
		char c = name[n];
		int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (h < 0)
			return 0;
		v = v << 4 | (uint64_t)h;
		if (++n > 18)
			return 0;
	}
	if (n != 18 && n != 10)
		return 0;
	*addr = v;
	*head_len = n;
	return 1;
}

/* pseudo_name_parse() (digits read without a test each, by a table) and the digit by
 * digit reading agree on 300,000 strings near the forms: "0x", then digits, letters,
 * uppercase, the bytes next to the digits' ranges, "'" anywhere, lengths 0 to 26. */
static void test_pseudo_name__same_as_by_digit(void **state)
{
	(void)state;
	/* with the bytes next to each range of digits: "/", ":", "`", "g", and high bytes */
	static const char alphabet[] = "0123456789abcdefAFgx'/:`\xb0\xe6";
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char s[32];
	for (int k = 0; k < 300000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t len = (size_t)(x % 27);
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly digits, so that many strings are whole names */
			s[i] = x % 4 ? alphabet[x % 16] : alphabet[(x >> 8) % (sizeof(alphabet) - 1)];
		}
		if (len >= 2 && x % 8)
			s[0] = '0', s[1] = 'x';
		uint64_t a1 = 1, a2 = 2;
		size_t h1 = 3, h2 = 4;
		int r1 = pseudo_name_parse(s, len, &a1, &h1), r2 = pseudo_by_digit(s, len, &a2, &h2);
		assert_int_equal(r1, r2);
		if (r1) {
			assert_int_equal(a1, a2);
			assert_int_equal(h1, h2);
		}
	}
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
	/* a file without a line gets line 1 (line 0 makes callgrind_annotate warn) */
	expect_name("py::_find_and_load:<frozen importlib._bootstrap>", JN_CPYTHON, "<frozen importlib._bootstrap>", 1);
	expect_name("py::fib:/src/prog.py", JN_CPYTHON, "/src/prog.py", 1);
	expect_name("py::Foo.bar:/src/prog.py", JN_CPYTHON, "/src/prog.py", 1);
	expect_name("TRACE_5::@/src/f.lua:17", JN_LUAJIT, "/src/f.lua", 17);
	expect_name("f(/x/a.nqp:0)", JN_MOARVM, "/x/a.nqp", 1);   /* line 0 is no line */
	expect_name("int H.f(int)", JN_NONE, NULL, 0);
	expect_name("Builtin:DeoptimizationEntry_Eager", JN_NONE, NULL, 0);
	expect_name("jitted_frame_12", JN_NONE, NULL, 0);
	expect_name("g(x:y)", JN_NONE, NULL, 0);
	expect_name("()", JN_NONE, NULL, 0);
	expect_name("(:5)", JN_NONE, NULL, 0);
}

/* Expects NAME to be a PHP name with LINE and no file. */
static void expect_php_line(const char *name, uint64_t line)
{
	struct jitname j;
	assert_int_equal(jitname_parse(name, strlen(name), &j), JN_PHP);
	assert_null(j.file);
	assert_int_equal(j.line, line);
}

static void test_jitname__php(void **state)
{
	(void)state;
	/* tracing JIT (zend_jit_trace_name): TRACE-N$FUNCTION$LINE, the file only for
	 * top-level code, which PHP names after its file (seen with PHP 8.2, jit_debug=0x10) */
	expect_php_line("TRACE-9$ack$14", 14);
	expect_php_line("TRACE-1$P::sq$7", 7);
	expect_php_line("TRACE-2${closure}$8", 8);
	expect_php_line("TRACE-12$Ns\\Cls::run$120", 120);
	expect_name("TRACE-5$/tmp/jdw/php/ack.php$11", JN_PHP, "/tmp/jdw/php/ack.php", 11);
	/* PHP 8.4 names closures {closure:SCOPE:LINE}; SCOPE is the file at top level */
	expect_name("TRACE-3${closure:/srv/a.php:5}$6", JN_PHP, "/srv/a.php", 6);
	expect_php_line("TRACE-4${closure:Foo::bar():5}$7", 7);
	/* function JIT (zend_jit_func_name): JIT$FUNCTION, JIT$/file for top-level code */
	expect_name("JIT$/tmp/jdw/php/ack.php", JN_PHP, "/tmp/jdw/php/ack.php", 1);
	expect_name("JIT${closure:/srv/a.php:5}", JN_PHP, "/srv/a.php", 5);
	expect_name("JIT$Foo::{closure:/srv/a.php:9}", JN_PHP, "/srv/a.php", 9);
	expect_php_line("JIT${closure:Foo::bar():5}", 5);
	/* a path --root made relative: no '/', but a '.', which no PHP identifier holds */
	expect_name("TRACE-5$ack.php$11", JN_PHP, "ack.php", 11);
	expect_name("JIT$ack.php", JN_PHP, "ack.php", 1);
	expect_name("TRACE-3${closure:a.php:5}$6", JN_PHP, "a.php", 6);
	expect_name("JIT$ack", JN_PHP, NULL, 0);
	expect_name("JIT$P::sq", JN_PHP, NULL, 0);
	expect_name("JIT${closure}", JN_PHP, NULL, 0);
	expect_name("JIT$$trace_exit", JN_PHP, NULL, 0);   /* stubs */
	expect_name("JIT$$hybrid_runtime_jit", JN_PHP, NULL, 0);
	expect_name("jit$$trace_exit_0", JN_NONE, NULL, 0);   /* exit groups: no location */
	/* not PHP's */
	expect_name("TRACE-$ack$14", JN_NONE, NULL, 0);
	expect_name("TRACE-9$ack$", JN_NONE, NULL, 0);
	expect_name("TRACE-9$$14", JN_NONE, NULL, 0);
	expect_name("TRACE-9$ack$1x", JN_NONE, NULL, 0);
	expect_name("TRACE-9", JN_NONE, NULL, 0);
	expect_name("JIT$", JN_NONE, NULL, 0);
	expect_name("JIT${closure:/srv/a.php:x}", JN_PHP, NULL, 0);
	expect_name("TRACE_5::@/src/f.lua:17", JN_LUAJIT, "/src/f.lua", 17);   /* LuaJIT's, not PHP's */
}

static void test_jitname__v8_code_kind(void **state)
{
	(void)state;
	static const struct { const char *name; char kind; } cases[] = {
		{ "JS:^collatz /tmp/nz/hot.js:1:17", '^' },
		{ "LazyCompile:^f /x.js:3:2", '^' },
		{ "JS:^ node:internal/validators:161:40", '^' },   /* anonymous */
		{ "JS:*fib /a.js:1:13", '*' },
		{ "JS:+fib /a.js:1:13", '+' },
		{ "JS:~main /a.js:10:1", '~' },
		{ "Script:~ node:internal/main:1:1", '~' },
		{ "Function:f /a.js:1:1", 0 },
		{ "JS: /a.js:1:1", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jitname j;
		assert_int_equal(jitname_parse(cases[i].name, strlen(cases[i].name), &j), JN_V8);
		assert_int_equal(jitname_v8_kind(cases[i].name, strlen(cases[i].name)), cases[i].kind);
	}
	/* the marker counts without a location after it; other names have none */
	static const char *none = "JS:^f";
	assert_int_equal(jitname_v8_kind(none, strlen(none)), '^');
	assert_int_equal(jitname_v8_kind("JS:", 3), 0);
	assert_int_equal(jitname_v8_kind("TRACE-1$P::sq$7", 15), 0);
	assert_int_equal(jitname_v8_kind("Builtin:^x", 10), 0);
	assert_int_equal(jitname_v8_kind("py::^f:/a.py", 12), 0);
}

/* Expects NAME to be V8's name of wasm code: function FUNC, INDEX, TIER; and no location. */
static void expect_wasm(const char *name, const char *func, uint64_t index, const char *tier)
{
	struct jitname_wasm w;
	assert_int_equal(jitname_v8_wasm(name, strlen(name), &w), 1);
	assert_int_equal(w.func_len, strlen(func));
	assert_memory_equal(w.func, func, w.func_len);
	assert_int_equal(w.index, index);
	assert_int_equal(w.tier_len, strlen(tier));
	assert_memory_equal(w.tier, tier, w.tier_len);
	expect_name(name, JN_NONE, NULL, 0);
	assert_int_equal(jitname_v8_kind(name, strlen(name)), 0);
}

/* V8's names for wasm code, as node 20 writes them to its perf map and jitdump
 * (samples/node-wasm): the name section's name, else wasm-function[INDEX]. */
static void test_jitname__v8_wasm(void **state)
{
	(void)state;
	expect_wasm("JS:fib-3-turbofan", "fib", 3, "turbofan");
	expect_wasm("JS:fill-0-liftoff", "fill", 0, "liftoff");
	expect_wasm("JS:wasm-function[4]-4-liftoff", "wasm-function[4]", 4, "liftoff");
	expect_wasm("Function:f-12-turbofan", "f", 12, "turbofan");   /* older V8's prefix */
	expect_wasm("JS:jump table-<anonymous>-none", "jump table", UINT64_MAX, "none");
	/* a name section holds any bytes: spaces, colons, digits, a V8 marker first */
	expect_wasm("JS:f x.js:1:2-7-liftoff", "f x.js:1:2", 7, "liftoff");
	expect_wasm("JS:std::vector<int>::size() const-25-turbofan", "std::vector<int>::size() const", 25,
		    "turbofan");
	expect_wasm("JS:^f-0-liftoff", "^f", 0, "liftoff");
	expect_wasm("JS:*g-1-turbofan", "*g", 1, "turbofan");
	expect_wasm("JS:a-1-2-liftoff", "a-1", 2, "liftoff");
	expect_wasm("JS:(x:1)-0-liftoff", "(x:1)", 0, "liftoff");
	/* not wasm code */
	static const char *not_wasm[] = {
		"JS:*fib /a.js:1:13", "JS:^f", "JS:-0-liftoff", "JS:f--liftoff", "JS:f-x-liftoff",
		"JS:f-0liftoff", "JS:f-0-", "JS:f-0-baseline", "Builtin:f-0-liftoff", "fib-3-turbofan",
		"JS:f-<anonymous>liftoff", "JS:f-99999999999999999999-liftoff", "JS:-liftoff",
	};
	for (size_t i = 0; i < sizeof(not_wasm) / sizeof(not_wasm[0]); i++)
		assert_int_equal(jitname_v8_wasm(not_wasm[i], strlen(not_wasm[i]), NULL), 0);
	/* JS code keeps its marker, a JS name its location */
	assert_int_equal(jitname_v8_kind("JS:*fib /a.js:1:13", 18), '*');
	expect_name("JS:*f-0-liftoff /a.js:4:2", JN_V8, "/a.js", 4);
}

/* The JVM's method names (perf map, cgjit's agent) name the declaring class: its source
 * file is the package path and the outer class, whatever the extension. */
static void test_jitname__jvm_declaring_file(void **state)
{
	(void)state;
	static const struct {
		const char *name, *file;
		int declared;
	} cases[] = {
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "com/acme/Checksums.java", 1 },
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "java/lang/String.java", 0 },
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "com/acme/Checksums.kt", 1 },
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "com/acme/Checksums", 0 },
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "acme/Checksums.java", 0 },
		{ "int com.acme.Checksums.checksum(java.lang.String, int)", "Xcom/acme/Checksums.java", 0 },
		{ "void java.lang.Object.<init>()", "java/lang/Object.java", 1 },
		{ "boolean java.util.ImmutableCollections$SetN$SetNIterator.hasNext()",
		  "java/util/ImmutableCollections.java", 1 },
		{ "void Main.main(java.lang.String[])", "Main.java", 1 },   /* default package */
		{ "void Main.main(java.lang.String[])", "x/Main.java", 0 },
		{ "StubRoutines (1)", "StubRoutines.java", 0 },
		{ "Interpreter", "Interpreter.java", 0 },
		{ "main()", "main.java", 0 },
		{ "JS:*f /a/b.js:1:2", "/a/b.js", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(jitname_jvm_declared_in(cases[i].name, strlen(cases[i].name), cases[i].file,
							 strlen(cases[i].file)), cases[i].declared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pseudo_name__forms),
		cmocka_unit_test(test_pseudo_name__same_as_by_digit),
		cmocka_unit_test(test_jitname__conventions),
		cmocka_unit_test(test_jitname__php),
		cmocka_unit_test(test_jitname__v8_code_kind),
		cmocka_unit_test(test_jitname__v8_wasm),
		cmocka_unit_test(test_jitname__jvm_declaring_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
