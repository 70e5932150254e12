/* Unit tests for pathmap.c (--root, --path-map): component boundaries, "..", trailing
 * slashes, several maps (the longest OLD wins, of equal ones the later), roots given
 * relative or through a link, the path in the names of each runtime convention (and that
 * jitname.c finds the mapped path in the mapped name), callgrind's "'" parts, and the
 * refused arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <sys/stat.h>

#include "core/diag.h"
#include "helpers.h"
#include "jit/jitname.h"
#include "jit/pathmap.h"

static struct pathmap_buf buf;

static struct pathmap *map_of(const char *const *args, size_t n)
{
	struct pathmap *pm = pathmap_new();
	for (size_t i = 0; i < n; i++) {
		struct diag d = { 0 };
		if (pathmap_add_arg(pm, args[i], &d) < 0)
			fail_msg("%s: %s", args[i], d.msg);
	}
	return pm;
}

static void expect_path(const struct pathmap *pm, const char *in, const char *want)
{
	size_t n;
	const char *got = pathmap_path(pm, in, strlen(in), &buf, &n);
	if (n != strlen(want) || memcmp(got, want, n))
		fail_msg("'%s': got '%.*s', want '%s'", in, (int)n, got, want);
	if (!strcmp(in, want))
		assert_ptr_equal(got, in);   /* unchanged: no copy */
}

static void expect_name(const struct pathmap *pm, const char *in, const char *want)
{
	size_t n;
	const char *got = pathmap_name(pm, in, strlen(in), &buf, &n);
	if (n != strlen(want) || memcmp(got, want, n))
		fail_msg("'%s': got '%.*s', want '%s'", in, (int)n, got, want);
}

static void test_pathmap__component_boundary(void **state)
{
	(void)state;
	static const char *const a[] = { "/ci/app=" };
	struct pathmap *pm = map_of(a, 1);
	expect_path(pm, "/ci/app/bench.js", "bench.js");
	expect_path(pm, "/ci/app/lib/x.js", "lib/x.js");
	expect_path(pm, "/ci/app", ".");               /* the root itself */
	expect_path(pm, "/ci/app/", ".");
	expect_path(pm, "/ci/app//x.js", "x.js");
	expect_path(pm, "/ci/apps/x.js", "/ci/apps/x.js");   /* /a/bc is not under /a/b */
	expect_path(pm, "/ci/ap", "/ci/ap");
	expect_path(pm, "/ci", "/ci");
	expect_path(pm, "ci/app/x.js", "ci/app/x.js");  /* relative: not under an absolute OLD */
	expect_path(pm, "/other/x.js", "/other/x.js");  /* not under the root: stays absolute */
	expect_path(pm, "node:internal/main", "node:internal/main");
	expect_path(pm, "", "");
	pathmap_free(pm);
}

static void test_pathmap__dotdot_and_slashes(void **state)
{
	(void)state;
	static const char *const a[] = { "/ci/app///=/src/", "/=/slash" };
	struct pathmap *pm = map_of(a, 2);
	/* a ".." after the prefix would climb out of it: no OLD covers the path */
	expect_path(pm, "/ci/app/../etc/x.js", "/ci/app/../etc/x.js");
	expect_path(pm, "/ci/app/lib/../../x", "/ci/app/lib/../../x");
	expect_path(pm, "/ci/app/..", "/ci/app/..");
	/* dots that are not a ".." component */
	expect_path(pm, "/ci/app/x..js", "/src/x..js");
	expect_path(pm, "/ci/app/.../x", "/src/.../x");
	expect_path(pm, "/ci/app/.x/y", "/src/.x/y");
	expect_path(pm, "/ci/app/./x", "/src/./x");
	/* paths are compared as written, not resolved: this one is under "/" only, and its
	 * ".." climbs out of that too */
	expect_path(pm, "/ci/../ci/app/x", "/ci/../ci/app/x");
	expect_path(pm, "/etc/x", "/slash/etc/x");
	expect_path(pm, "/ci/app", "/src");            /* OLD itself: NEW */
	pathmap_free(pm);
	static const char *const b[] = { "/=" };
	pm = map_of(b, 1);
	expect_path(pm, "/x/y.js", "x/y.js");
	expect_path(pm, "/", ".");
	pathmap_free(pm);
	static const char *const c[] = { "/ci=/" };
	pm = map_of(c, 1);
	expect_path(pm, "/ci/x.js", "/x.js");
	pathmap_free(pm);
}

static void test_pathmap__several_maps(void **state)
{
	(void)state;
	/* the longest OLD wins whatever the order; of two equal ones the later */
	static const char *const a[] = { "/ci/app/node_modules=deps", "/ci=ROOT", "/ci/app=", "/ci/app=app" };
	struct pathmap *pm = map_of(a, 4);
	assert_int_equal(pathmap_count(pm), 4);
	expect_path(pm, "/ci/app/x.js", "app/x.js");
	expect_path(pm, "/ci/app/node_modules/m/i.js", "deps/m/i.js");
	expect_path(pm, "/ci/tools/t.js", "ROOT/tools/t.js");
	/* once: a mapped path is not mapped again */
	expect_path(pm, "/ci/ci/x", "ROOT/ci/x");
	pathmap_free(pm);
	/* relative OLD, e.g. the JVM's package paths */
	static const char *const b[] = { "com/acme=src/main/java/com/acme" };
	pm = map_of(b, 1);
	expect_path(pm, "com/acme/Shop.java", "src/main/java/com/acme/Shop.java");
	expect_path(pm, "com/acmex/Shop.java", "com/acmex/Shop.java");
	pathmap_free(pm);
	/* no map, an empty map: every path as it is */
	expect_path(NULL, "/ci/x", "/ci/x");
	pm = pathmap_new();
	expect_name(pm, "JS:*f /ci/x.js:1:2", "JS:*f /ci/x.js:1:2");
	pathmap_free(pm);
}

/* The name mapped, and jitname.c finding the mapped path (and line) in it. */
static void expect_convention(const struct pathmap *pm, const char *in, const char *want,
			      const char *file, uint64_t line)
{
	expect_name(pm, in, want);
	struct jitname jn;
	assert_int_not_equal(jitname_parse(want, strlen(want), &jn), JN_NONE);
	if (!file) {
		assert_null(jn.file);
		return;
	}
	if (!jn.file || jn.file_len != strlen(file) || memcmp(jn.file, file, jn.file_len))
		fail_msg("'%s': file '%.*s', want '%s'", want, jn.file ? (int)jn.file_len : 4,
			 jn.file ? jn.file : "NULL", file);
	assert_int_equal(jn.line, line);
}

static void test_pathmap__conventions(void **state)
{
	(void)state;
	static const char *const a[] = { "/ci/app=" };
	struct pathmap *pm = map_of(a, 1);
	expect_convention(pm, "JS:*bubbleSort /ci/app/bench.js:21:20", "JS:*bubbleSort bench.js:21:20", "bench.js", 21);
	expect_convention(pm, "LazyCompile:~main /ci/app/lib/a.js:10", "LazyCompile:~main lib/a.js:10", "lib/a.js", 10);
	expect_convention(pm, "JS:~ /ci/app/bench.js:1:1", "JS:~ bench.js:1:1", "bench.js", 1);
	expect_convention(pm, "py::fib:/ci/app/prog.py", "py::fib:prog.py", "prog.py", 1);
	expect_convention(pm, "py::words.<locals>.<genexpr>:/ci/app/p.py", "py::words.<locals>.<genexpr>:p.py", "p.py", 1);
	expect_convention(pm, "add-squares(/ci/app/prog.raku:4)", "add-squares(prog.raku:4)", "prog.raku", 4);
	expect_convention(pm, "(/ci/app/prog.raku:14)", "(prog.raku:14)", "prog.raku", 14);
	expect_convention(pm, "TRACE_1::@/ci/app/f.lua:3", "TRACE_1::@f.lua:3", "f.lua", 3);
	expect_convention(pm, "TRACE-5$/ci/app/x.php$11", "TRACE-5$x.php$11", "x.php", 11);
	expect_convention(pm, "JIT$/ci/app/x.php", "JIT$x.php", "x.php", 1);
	expect_convention(pm, "JIT${closure:/ci/app/x.php:5}", "JIT${closure:x.php:5}", "x.php", 5);
	expect_convention(pm, "TRACE-3${closure:/ci/app/lib/x.php:5}$6", "TRACE-3${closure:lib/x.php:5}$6", "lib/x.php", 6);
	/* what is not a path of the convention stays, even when it looks like one */
	expect_name(pm, "JS:*f node:internal/x:1:2", "JS:*f node:internal/x:1:2");
	expect_name(pm, "int com.acme.Shop.sum(java.util.List)", "int com.acme.Shop.sum(java.util.List)");
	expect_name(pm, "/ci/app/x.js", "/ci/app/x.js");            /* no convention */
	expect_name(pm, "TRACE-9$ack$14", "TRACE-9$ack$14");
	expect_name(pm, "JS:*g /ci/apps/x.js:3:1", "JS:*g /ci/apps/x.js:3:1");
	expect_name(pm, "JS:*g a:1", "JS:*g a:1");                  /* shorter than OLD */
	expect_name(pm, "JS:*g /ci/ap", "JS:*g /ci/ap");
	expect_name(pm, "(x:1)/ci/app", "(x:1)/ci/app");             /* OLD outside the path */
	expect_name(pm, "/ci/x(/ci/app/y.raku:1)", "/ci/x(y.raku:1)");
	/* PHP without the root: a function name is not taken for a file */
	expect_convention(pm, "TRACE-1$P::sq$7", "TRACE-1$P::sq$7", NULL, 7);
	pathmap_free(pm);
}

static void test_pathmap__callgrind_parts(void **state)
{
	(void)state;
	static const char *const a[] = { "/ci=" };
	struct pathmap *pm = map_of(a, 1);
	size_t n;
	const char *in = "JS:*f /ci/a.js:1:2'2'JS:^g /ci/b.js:5:1'main'fib(/ci/c.raku:3)";
	const char *got = pathmap_callgrind_name(pm, in, strlen(in), &buf, &n);
	assert_int_equal(n, strlen("JS:*f a.js:1:2'2'JS:^g b.js:5:1'main'fib(c.raku:3)"));
	assert_memory_equal(got, "JS:*f a.js:1:2'2'JS:^g b.js:5:1'main'fib(c.raku:3)", n);
	in = "memcpy'0x0000000010000000'main";
	assert_ptr_equal(pathmap_callgrind_name(pm, in, strlen(in), &buf, &n), in);
	assert_int_equal(n, strlen(in));
	in = "";
	assert_ptr_equal(pathmap_callgrind_name(pm, in, 0, &buf, &n), in);
	in = "JS:*f /ci/a.js:1:2'";   /* an empty last part stays */
	got = pathmap_callgrind_name(pm, in, strlen(in), &buf, &n);
	assert_int_equal(n, strlen("JS:*f a.js:1:2'"));
	assert_memory_equal(got, "JS:*f a.js:1:2'", n);
	pathmap_free(pm);
}

static void test_pathmap__root(void **state)
{
	(void)state;
	char *dir = tmp_dir();                      /* /tmp/cgjit-test-XXXXXX */
	char real[PATH_MAX], sub[PATH_MAX + 8], link[PATH_MAX + 8], in[PATH_MAX + 32];
	assert_non_null(realpath(dir, real));
	snprintf(sub, sizeof(sub), "%s/ci", real);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", real);
	assert_int_equal(symlink("ci", link), 0);
	struct diag d = { 0 };

	/* spelled with ".", "..", repeated and trailing slashes: resolved by the spelling */
	struct pathmap *pm = pathmap_new();
	snprintf(in, sizeof(in), "%s//./x/../ci/", real);
	assert_int_equal(pathmap_add_root(pm, in, &d), 0);
	assert_int_equal(pathmap_count(pm), 1);    /* its real path is the same */
	snprintf(in, sizeof(in), "%s/ci/bench.js", real);
	expect_path(pm, in, "bench.js");
	pathmap_free(pm);

	/* through a link: the spelling and the real path (node's) both */
	pm = pathmap_new();
	assert_int_equal(pathmap_add_root(pm, link, &d), 0);
	assert_int_equal(pathmap_count(pm), 2);
	snprintf(in, sizeof(in), "%s/link/a.js", real);
	expect_path(pm, in, "a.js");
	snprintf(in, sizeof(in), "%s/ci/a.js", real);
	expect_path(pm, in, "a.js");
	pathmap_free(pm);

	/* relative: from the current directory ($PWD when it is that directory) */
	char old[PATH_MAX];
	assert_non_null(getcwd(old, sizeof(old)));
	const char *oldpwd = getenv("PWD");
	char *saved = oldpwd ? strdup(oldpwd) : NULL;
	assert_int_equal(chdir(link), 0);
	setenv("PWD", link, 1);
	pm = pathmap_new();
	assert_int_equal(pathmap_add_root(pm, ".", &d), 0);
	assert_int_equal(pathmap_count(pm), 2);
	snprintf(in, sizeof(in), "JS:*f %s/link/a.js:1:2", real);
	expect_name(pm, in, "JS:*f a.js:1:2");
	snprintf(in, sizeof(in), "JS:*f %s/ci/a.js:1:2", real);
	expect_name(pm, in, "JS:*f a.js:1:2");
	pathmap_free(pm);
	/* a $PWD that is not the current directory is not believed */
	setenv("PWD", "/", 1);
	pm = pathmap_new();
	assert_int_equal(pathmap_add_root(pm, "..", &d), 0);
	assert_int_equal(pathmap_count(pm), 1);
	snprintf(in, sizeof(in), "%s/ci/a.js", real);
	expect_path(pm, in, "ci/a.js");
	pathmap_free(pm);
	/* a root that does not exist here (a profile recorded elsewhere): by its spelling */
	pm = pathmap_new();
	assert_int_equal(pathmap_add_root(pm, "/home/runner/work/app/app", &d), 0);
	assert_int_equal(pathmap_count(pm), 1);
	expect_path(pm, "/home/runner/work/app/app/b.js", "b.js");
	pathmap_free(pm);
	assert_int_equal(chdir(old), 0);
	if (saved)
		setenv("PWD", saved, 1);
	free(saved);

	snprintf(in, sizeof(in), "rm -rf '%s'", real);
	assert_int_equal(system(in), 0);
	free(dir);
}

static void expect_refused(const char *arg, const char *msg)
{
	struct pathmap *pm = pathmap_new();
	struct diag d = { 0 };
	assert_int_equal(pathmap_add_arg(pm, arg, &d), -1);
	if (!strstr(d.msg, msg))
		fail_msg("'%s': message '%s' lacks '%s'", arg, d.msg, msg);
	assert_int_equal(pathmap_count(pm), 0);
	pathmap_free(pm);
}

static void test_pathmap__refused(void **state)
{
	(void)state;
	expect_refused("/ci", "expected OLD=NEW");
	expect_refused("", "expected OLD=NEW");
	expect_refused("=x", "OLD is empty");
	expect_refused("/ci=my dir", "blank");
	expect_refused("/ci=a'b", "blank");
	expect_refused("/c\ni=x", "control characters");
	expect_refused("/ci=x\ty", "control characters");
	struct pathmap *pm = pathmap_new();
	struct diag d = { 0 };
	assert_int_equal(pathmap_add_root(pm, "", &d), -1);
	assert_non_null(strstr(d.msg, "--root"));
	/* split at the first '=': NEW may hold one */
	assert_int_equal(pathmap_add_arg(pm, "/ci=/x=y", &d), 0);
	expect_path(pm, "/ci/a", "/x=y/a");
	/* OLD with a blank is fine: CPython and MoarVM names keep whole paths */
	assert_int_equal(pathmap_add_arg(pm, "/my dir=", &d), 0);
	expect_name(pm, "py::f:/my dir/p.py", "py::f:p.py");
	pathmap_free(pm);
	pathmap_free(NULL);
	pathmap_buf_free(&buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pathmap__component_boundary),
		cmocka_unit_test(test_pathmap__dotdot_and_slashes),
		cmocka_unit_test(test_pathmap__several_maps),
		cmocka_unit_test(test_pathmap__conventions),
		cmocka_unit_test(test_pathmap__callgrind_parts),
		cmocka_unit_test(test_pathmap__root),
		cmocka_unit_test(test_pathmap__refused),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	pathmap_buf_free(&buf);
	return rc;
}
