/* Unit tests for prof_match.c: which function of NEW is which of BASE. The cases the
 * documents rely on, then random profiles against a brute-force matcher that builds every
 * key as text (the way the index is meant to behave, written out the long way); and
 * diff's list of the largest changes, kept TOP at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/profile.h"

struct fn_spec {
	const char *obj, *file, *name;
};

static void build(struct profile *p, const struct fn_spec *f, size_t n)
{
	static const char *const ev[] = { "Ir" };
	memset(p, 0, sizeof(*p));
	struct profile_builder *b = profile_builder_new(p, 1, ev);
	uint64_t one = 1;
	for (size_t i = 0; i < n; i++) {
		struct prof_fn_key k = { f[i].obj, strlen(f[i].obj), f[i].file, strlen(f[i].file),
					 f[i].name, strlen(f[i].name) };
		profile_builder_self(b, profile_builder_fn(b, &k), &one);
	}
	profile_builder_finish(b);
	p->path = strdup("x.out");
}

static void expect(const struct fn_spec *base, size_t nb, const struct fn_spec *now, size_t nn,
		   const size_t *want)
{
	struct profile a, b;
	build(&a, base, nb);
	build(&b, now, nn);
	size_t *in_a = prof_match(&a, &b);
	for (size_t j = 0; j < nn; j++)
		assert_int_equal(in_a[j], want[j]);
	free(in_a);
	profile_free(&a);
	profile_free(&b);
}

/* The object counts by its file name without the directory and a JIT object's pid; the
 * file counts whole; where two functions of one side share a key, the first matches. */
static void test_match__key_rules(void **state)
{
	(void)state;
	static const struct fn_spec base[] = {
		{ "/usr/lib/libc.so.6", "a.c", "f" },        /* 0 */
		{ "/tmp/perf-1234.map", "x.js", "JS:g" },    /* 1 */
		{ "/opt/libc.so.6", "a.c", "f" },            /* 2: same key as 0 */
		{ "/bin/node", "b.c", "h'f" },               /* 3 */
		{ "/bin/node", "c.c", "h'f" },               /* 4: its file is none of NEW's */
		{ "/bin/other", "b.c", "k" },                /* 5: its object is none of NEW's */
	};
	static const struct fn_spec now[] = {
		{ "/lib/libc.so.6", "a.c", "f" },            /* 0 */
		{ "/lib64/libc.so.6", "a.c", "f" },          /* 1: same key as 0: matches nothing */
		{ "/tmp/perf-99.map", "x.js", "JS:g" },      /* 2 */
		{ "/bin/node", "b.c", "h'f" },               /* 3 */
		{ "/bin/node", "b.c", "k" },                 /* 4 */
		{ "/bin/node", "b.c", "h'f'" },              /* 5: one more (empty) part */
	};
	static const size_t want[] = { 0, SIZE_MAX, 1, 3, SIZE_MAX, SIZE_MAX };
	expect(base, 6, now, 6, want);
}

/* JIT functions left unmatched match by name alone where it is unique among them on both
 * sides: a perf map's against a jitdump's; a name twice among them matches nothing. */
static void test_match__jit_by_unique_name(void **state)
{
	(void)state;
	static const struct fn_spec base[] = {
		{ "/tmp/perf-1.map", "???", "JS:a" },
		{ "/tmp/perf-1.map", "???", "JS:b" },
		{ "/tmp/perf-1.map", "???", "JS:c" },
		{ "/tmp/perf-1.map", "other.js", "JS:c" },
		{ "/bin/node", "???", "JS:d" },   /* not JIT code: no match by name */
	};
	static const struct fn_spec now[] = {
		{ "/tmp/jit-7.dump.elf", "a.js", "JS:a" },
		{ "/tmp/jit-7.dump.elf", "b.js", "JS:b" },
		{ "/tmp/jit-7.dump.elf", "b2.js", "JS:b" },   /* twice here: b matches nothing */
		{ "/tmp/jit-7.dump.elf", "c.js", "JS:c" },    /* twice in BASE: nothing */
		{ "/tmp/jit-7.dump.elf", "d.js", "JS:d" },
	};
	static const size_t want[] = { 0, SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX };
	expect(base, 5, now, 5, want);
}

/* The reference: the key as text, "object-class\0file\0name", compared by strcmp. */
static void ref_key(const struct fn_spec *f, char *out, size_t cap)
{
	const char *base = strrchr(f->obj, '/');
	base = base ? base + 1 : f->obj;
	char cls[256];
	const char *digits = !strncmp(base, "perf-", 5) ? base + 5 : !strncmp(base, "jit-", 4) ? base + 4 : NULL;
	if (digits && *digits >= '0' && *digits <= '9') {
		const char *rest = digits;
		while (*rest >= '0' && *rest <= '9')
			rest++;
		snprintf(cls, sizeof(cls), "%.*sPID%s", (int)(digits - base), base, rest);
	} else {
		snprintf(cls, sizeof(cls), "%s", base);
	}
	snprintf(out, cap, "%s|%s|%s", cls, f->file, f->name);
}

static uint32_t next_random(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* Random functions from a few objects (two classes each), files and parts: the index
 * finds what the text keys find, first-come on both sides (no JIT objects here, so the
 * by-name pass adds nothing). */
static void test_match__random_against_text_keys(void **state)
{
	(void)state;
	static const char *const objs[] = { "/a/lib.so", "/b/lib.so", "/bin/x", "/usr/bin/x", "/bin/y" };
	static const char *const files[] = { "a.c", "b.c", "???" };
	static const char *const parts[] = { "f", "g", "h", "", "0x1", "main" };
	uint64_t seed = 5;
	for (int round = 0; round < 30; round++) {
		size_t n[2] = { 1 + next_random(&seed) % 300, 1 + next_random(&seed) % 300 };
		struct fn_spec *f[2];
		char (*names[2])[64];
		for (int s = 0; s < 2; s++) {
			f[s] = calloc(n[s], sizeof(*f[s]));
			names[s] = calloc(n[s], sizeof(*names[s]));
			for (size_t i = 0; i < n[s]; i++) {
				size_t np = 1 + next_random(&seed) % 4, len = 0;
				for (size_t k = 0; k < np; k++)
					len += (size_t)snprintf(names[s][i] + len, sizeof(names[s][i]) - len, "%s%s",
								k ? "'" : "", parts[next_random(&seed) % 6]);
				f[s][i] = (struct fn_spec){ objs[next_random(&seed) % 5], files[next_random(&seed) % 3], names[s][i] };
			}
		}
		struct profile a, b;
		build(&a, f[0], n[0]);
		build(&b, f[1], n[1]);
		size_t *in_a = prof_match(&a, &b);
		/* the reference over the profiles' own functions (a name repeated in the spec is one) */
		struct prof_name na = { 0 }, nb = { 0 };
		char ka[512], kb[512];
		size_t *want = malloc((b.nfns + 1) * sizeof(*want));
		for (size_t j = 0; j < b.nfns; j++) {
			want[j] = SIZE_MAX;
			struct fn_spec sj = { profile_obj(&b, j), profile_file(&b, j), profile_name(&b, j, &nb) };
			ref_key(&sj, kb, sizeof(kb));
			int first = 1;
			for (size_t j2 = 0; j2 < j && first; j2++) {
				struct fn_spec s2 = { profile_obj(&b, j2), profile_file(&b, j2), profile_name(&b, j2, &na) };
				ref_key(&s2, ka, sizeof(ka));
				first = strcmp(ka, kb) != 0;
			}
			if (!first)
				continue;
			for (size_t i = 0; i < a.nfns; i++) {
				struct fn_spec si = { profile_obj(&a, i), profile_file(&a, i), profile_name(&a, i, &na) };
				ref_key(&si, ka, sizeof(ka));
				if (!strcmp(ka, kb)) {
					want[j] = i;
					break;
				}
			}
		}
		for (size_t j = 0; j < b.nfns; j++)
			assert_int_equal(in_a[j], want[j]);
		prof_name_free(&na);
		prof_name_free(&nb);
		free(want);
		free(in_a);
		profile_free(&a);
		profile_free(&b);
		for (int s = 0; s < 2; s++) {
			free(f[s]);
			free(names[s]);
		}
	}
}

/* diff keeps only the TOP changes it lists (a heap): for every TOP its list is the first TOP
 * entries of the whole list, ties (equal changes) in the profiles' order, and the counts
 * are the same. 400 functions with costs from a few values, so that ties are many. */
static void test_match__diff_top_is_a_prefix(void **state)
{
	(void)state;
	enum { N = 400 };
	static const char *const ev[] = { "Ir" };
	struct profile a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	struct profile_builder *ba = profile_builder_new(&a, 1, ev), *bb = profile_builder_new(&b, 1, ev);
	uint64_t seed = 9;
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", i);
		struct prof_fn_key k = { "/bin/x", 6, "x.c", 3, name, strlen(name) };
		uint64_t x = next_random(&seed) % 4, y = next_random(&seed) % 4;
		if (i % 10)   /* every tenth only in NEW */
			profile_builder_self(ba, profile_builder_fn(ba, &k), &x);
		if (i % 7)    /* every seventh only in BASE */
			profile_builder_self(bb, profile_builder_fn(bb, &k), &y);
	}
	profile_builder_finish(ba);
	profile_builder_finish(bb);
	a.path = strdup("a.out");
	b.path = strdup("b.out");
	struct diag d = { 0 };
	json_t *all = prof_diff_build(&a, &b, NULL, SIZE_MAX, 0, &d);
	assert_non_null(all);
	json_t *list = json_object_get(all, "functions");
	assert_true(json_array_size(list) > 100);
	static const size_t tops[] = { 0, 1, 2, 7, 50, 1000 };
	for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++) {
		json_t *doc = prof_diff_build(&a, &b, NULL, tops[t], 0, &d);
		json_t *l = json_object_get(doc, "functions");
		size_t want = tops[t] < json_array_size(list) ? tops[t] : json_array_size(list);
		assert_int_equal(json_array_size(l), want);
		for (size_t i = 0; i < want; i++)
			assert_true(json_equal(json_array_get(l, i), json_array_get(list, i)));
		assert_true(json_equal(json_object_get(doc, "changed"), json_object_get(all, "changed")));
		assert_true(json_equal(json_object_get(doc, "added"), json_object_get(all, "added")));
		json_decref(doc);
	}
	json_decref(all);
	profile_free(&a);
	profile_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match__key_rules),
		cmocka_unit_test(test_match__jit_by_unique_name),
		cmocka_unit_test(test_match__random_against_text_keys),
		cmocka_unit_test(test_match__diff_top_is_a_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
