/* Unit tests for profile_name.c: function names kept as a tree of their "'" parts (parts
 * interned once, contexts shared, names made into the caller's buffer), strcmp's order
 * without the text, the report's ties in that order, and diff's matching by parts across
 * two profiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/prof_report.h"
#include "report/profile.h"

static uint32_t add(struct profile_builder *b, const char *obj, const char *file, const char *name,
		    size_t len)
{
	struct prof_fn_key k = { obj, strlen(obj), file, strlen(file), name, len };
	return profile_builder_fn(b, &k);
}

/* P with the functions NAMES[0..N) in /bin/x, x.c, each with self cost 1. */
static void build(struct profile *p, const char *const *names, size_t n)
{
	static const char *const ev[] = { "Ir" };
	memset(p, 0, sizeof(*p));
	struct profile_builder *b = profile_builder_new(p, 1, ev);
	uint64_t one = 1;
	for (size_t i = 0; i < n; i++)
		profile_builder_self(b, add(b, "/bin/x", "x.c", names[i], strlen(names[i])), &one);
	profile_builder_finish(b);
	p->path = strdup("x.out");   /* the documents name it */
}

/* Every name comes back as given, with its length and parts. */
static void expect_names(const struct profile *p, const char *const *names, size_t n)
{
	struct prof_name buf = { 0 };
	assert_int_equal(p->nfns, n);
	for (size_t i = 0; i < n; i++) {
		size_t parts = 1;
		for (const char *s = names[i]; *s; s++)
			parts += *s == '\'';
		assert_string_equal(profile_name(p, i, &buf), names[i]);
		assert_int_equal(buf.len, strlen(names[i]));
		assert_int_equal(profile_name_len(p, i), strlen(names[i]));
		assert_int_equal(profile_name_parts(p, i), parts);
	}
	prof_name_free(&buf);
	assert_null(buf.s);
}

static void test_profile_name__parts_round_trip(void **state)
{
	(void)state;
	static const char *const names[] = {
		"main", "f'g", "f'g'h", "a''b", "", "'", "''", "'a", "f'", "f''", "g'f", "f'g'",
	};
	size_t n = sizeof(names) / sizeof(names[0]);
	struct profile p;
	build(&p, names, n);
	expect_names(&p, names, n);
	/* parts kept once: main f g h a "" b */
	assert_int_equal(p.name_parts.count, 7);
	assert_int_equal(profile_name_part(&p, 1, 0), profile_name_part(&p, 2, 0));   /* f */
	assert_int_equal(profile_name_part(&p, 1, 1), profile_name_part(&p, 10, 0));  /* g */
	assert_int_equal(profile_name_part(&p, 4, 0), profile_name_part(&p, 3, 1));   /* "" */
	profile_free(&p);
}

/* A name of 100,000 bytes in one part, and one of 5,000 parts (more than fit on the
 * stack while interning). */
static void test_profile_name__very_long(void **state)
{
	(void)state;
	size_t len = 100000;
	char *one = malloc(len + 1), *many = malloc(len + 1);
	for (size_t i = 0; i < len; i++) {
		one[i] = (char)('a' + i % 26);
		many[i] = i % 20 == 19 ? '\'' : (char)('a' + i % 7);
	}
	one[len] = many[len] = '\0';
	const char *names[] = { one, many };
	struct profile p;
	build(&p, names, 2);
	expect_names(&p, names, 2);
	assert_int_equal(profile_name_parts(&p, 1), len / 20 + 1);
	/* ONE; MANY's parts of 19 bytes, 7 distinct (20 * k mod 7); the empty one after its
	 * last "'" */
	assert_int_equal(p.name_parts.count, 1 + 7 + 1);
	struct prof_name buf = { 0 };   /* one buffer for both: it grows, then is reused */
	assert_int_equal(strlen(profile_name(&p, 0, &buf)), len);
	assert_string_equal(profile_name(&p, 1, &buf), many);
	prof_name_free(&buf);
	profile_free(&p);
	free(one);
	free(many);
}

/* One name in two files and in two objects is three functions; their parts are shared. */
static void test_profile_name__same_name_elsewhere(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t a = add(b, "/bin/x", "x.c", "f'g", 3), c = add(b, "/bin/x", "y.c", "f'g", 3);
	uint32_t d = add(b, "/bin/y", "x.c", "f'g", 3), e = add(b, "/bin/x", "x.c", "f'gX", 3);
	profile_builder_finish(b);
	assert_int_equal(p.nfns, 3);
	assert_int_equal(a, 0);
	assert_int_equal(c, 1);
	assert_int_equal(d, 2);
	assert_int_equal(e, 0);   /* NLEN bytes only */
	assert_int_equal(p.name_parts.count, 2);
	assert_string_equal(profile_file(&p, 1), "y.c");
	assert_string_equal(profile_obj(&p, 2), "/bin/y");
	for (size_t i = 0; i < 3; i++) {
		uint32_t o, f;
		profile_key_where(&p, i, &o, &f);
		assert_string_equal(strtab_get(&p.objs, o)->str, profile_obj(&p, i));
		assert_string_equal(strtab_get(&p.files, f)->str, profile_file(&p, i));
		assert_int_equal(profile_name_cmp(&p, 0, &p, i), 0);
	}
	profile_free(&p);
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* Names whose order turns on "'" (0x27) against the bytes around it, on a part that is a
 * prefix of another, on empty parts, and on bytes past 0x7f (strcmp compares unsigned). */
static const char *const tricky[] = {
	"a", "a'", "a''", "a'b", "a'b'", "a'b'c", "a'bc", "a'b(", "a'b!", "ab", "a!", "a(", "a&",
	"", "'", "''", "'a", "b", "a\x80", "a'\x80", "a'b\xff", "a'a", "a'aa'b", "a'a'b", "aa'b",
	"a'b'c'd", "a'b'cd", "a'b'c(",
};
#define NTRICKY (sizeof(tricky) / sizeof(tricky[0]))

static void test_profile_name__strcmp_order(void **state)
{
	(void)state;
	struct profile p, q;
	build(&p, tricky, NTRICKY);
	const char *reversed[NTRICKY];
	for (size_t i = 0; i < NTRICKY; i++)
		reversed[i] = tricky[NTRICKY - 1 - i];
	build(&q, reversed, NTRICKY);   /* other part indices for the same texts */
	for (size_t i = 0; i < NTRICKY; i++) {
		for (size_t j = 0; j < NTRICKY; j++) {
			int want = sign(strcmp(tricky[i], tricky[j]));
			if (sign(profile_name_cmp(&p, i, &p, j)) != want ||
			    sign(profile_name_cmp(&p, i, &q, NTRICKY - 1 - j)) != want)
				fail_msg("'%s' against '%s': want %d", tricky[i], tricky[j], want);
		}
	}
	profile_free(&p);
	profile_free(&q);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Equal costs are listed in strcmp's order of the full names, as before names had parts. */
static void test_profile_name__report_ties(void **state)
{
	(void)state;
	struct profile p;
	build(&p, tricky, NTRICKY);
	json_t *doc = prof_report_build(&p, 0, NTRICKY);
	const json_t *fns = json_object_get(doc, "functions");
	assert_int_equal(json_array_size(fns), NTRICKY);
	const char *sorted[NTRICKY];
	memcpy(sorted, tricky, sizeof(sorted));
	qsort(sorted, NTRICKY, sizeof(sorted[0]), cmp_str);
	for (size_t i = 0; i < NTRICKY; i++) {
		const char *name = json_string_value(json_object_get(json_array_get(fns, i), "name"));
		/* the documents write bytes that are not UTF-8 otherwise: compare the others */
		if (!strchr(sorted[i], '\x80') && !strchr(sorted[i], '\xff'))
			assert_string_equal(name, sorted[i]);
	}
	json_decref(doc);
	profile_free(&p);
}

/* diff matches by the parts' texts: a name with a part the other profile lacks matches
 * nothing, and the part indices of the two profiles differ. */
static void test_profile_name__diff_match(void **state)
{
	(void)state;
	static const char *const base[] = { "f'h", "f'g", "only'base", "g'f", "f" };
	static const char *const now[] = { "x", "f", "f'g", "g'f", "f'k", "f'g'" };
	struct profile a, b;
	build(&a, base, 5);
	build(&b, now, 6);
	size_t *in_a = prof_match(&a, &b);
	static const size_t want[] = { SIZE_MAX, 4, 1, 3, SIZE_MAX, SIZE_MAX };
	for (size_t j = 0; j < 6; j++)
		assert_int_equal(in_a[j], want[j]);
	free(in_a);
	profile_free(&a);
	profile_free(&b);
}

/* 3,000 names from a few parts (callgrind's contexts: many functions under one chain of
 * callers), in two objects, grown past the first index sizes: each reads back, names
 * sharing their last parts share nodes (fewer than the parts written), and the order of
 * any two is strcmp's, within one profile (equal nodes end the walk) and across two. */
static void test_profile_name__tree(void **state)
{
	(void)state;
	static const char *const parts[] = { "f", "g", "main", "", "0x1000", "h\xff", "g2" };
	enum { N = 3000 };
	char (*names)[96] = calloc(N, sizeof(*names));
	uint64_t seed = 3;
	size_t written = 0;
	for (size_t i = 0; i < N; i++) {
		size_t np = 1 + (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) % 7 % 6, len = 0;
		for (size_t k = 0; k < np; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			len += (size_t)snprintf(names[i] + len, sizeof(names[i]) - len, "%s%s", k ? "'" : "",
						parts[(seed >> 33) % 7]);
		}
		written += np;
	}
	static const char *const ev[] = { "Ir" };
	struct profile p, q;
	memset(&p, 0, sizeof(p));
	memset(&q, 0, sizeof(q));
	struct profile_builder *b = profile_builder_new(&p, 1, ev), *c = profile_builder_new(&q, 1, ev);
	uint32_t *fn = malloc(N * sizeof(*fn)), *gn = malloc(N * sizeof(*gn));
	uint64_t one = 1;
	for (size_t i = 0; i < N; i++) {
		fn[i] = add(b, i % 2 ? "/bin/x" : "/bin/y", "x.c", names[i], strlen(names[i]));
		profile_builder_self(b, fn[i], &one);
		gn[i] = add(c, "/bin/x", "x.c", names[N - 1 - i], strlen(names[N - 1 - i]));
		profile_builder_self(c, gn[i], &one);
	}
	profile_builder_finish(b);
	profile_builder_finish(c);
	assert_true(p.names.nnodes < written);
	assert_null(p.names.node_index.slots);   /* sealed: the indices are gone */
	assert_null(p.names.key_index.slots);
	struct prof_name buf = { 0 };
	for (size_t i = 0; i < N; i++) {
		assert_string_equal(profile_name(&p, fn[i], &buf), names[i]);
		assert_int_equal(profile_name_len(&p, fn[i]), strlen(names[i]));
		assert_string_equal(profile_obj(&p, fn[i]), i % 2 ? "/bin/x" : "/bin/y");
	}
	for (size_t i = 0; i < N; i += 7)
		for (size_t j = 0; j < N; j += 5) {
			int want = sign(strcmp(names[i], names[j]));
			assert_int_equal(sign(profile_name_cmp(&p, fn[i], &p, fn[j])), want);
			assert_int_equal(sign(profile_name_cmp(&p, fn[i], &q, gn[N - 1 - j])), want);
		}
	prof_name_free(&buf);
	free(fn);
	free(gn);
	free(names);
	profile_free(&p);
	profile_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_name__parts_round_trip),
		cmocka_unit_test(test_profile_name__very_long),
		cmocka_unit_test(test_profile_name__same_name_elsewhere),
		cmocka_unit_test(test_profile_name__strcmp_order),
		cmocka_unit_test(test_profile_name__report_ties),
		cmocka_unit_test(test_profile_name__diff_match),
		cmocka_unit_test(test_profile_name__tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
