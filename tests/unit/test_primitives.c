/* Unit tests for the small shared modules: strtab (interning), idmap (hostile ids),
 * arena, linereader (CRLF, missing newline, the line limit), diag (first error wins,
 * quoting). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/arena.h"
#include "core/diag.h"
#include "helpers.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/scan.h"
#include "core/slot_index.h"
#include "core/strtab.h"

static void test_strtab__interning(void **state)
{
	(void)state;
	struct strtab t;
	strtab_init(&t);
	int added;
	uint32_t a = strtab_intern(&t, "alpha", 5, &added);
	assert_true(added);
	assert_int_equal(strtab_intern(&t, "alpha", 5, &added), a);
	assert_false(added);
	char name[32];
	for (int i = 0; i < 10000; i++) {   /* through several rehashes */
		int n = snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(strtab_intern(&t, name, (size_t)n, NULL), (uint32_t)i + 1);
	}
	assert_int_equal(strtab_find(&t, "n9999", 5), 10000);
	/* long names (hashed in four lanes of 8 bytes): one byte changed anywhere, in any
	 * lane or the tail, is another name, and the same bytes are the same one */
	char lng[100], twice[100];
	memset(lng, 'q', sizeof(lng));
	for (size_t k = 0; k < sizeof(lng); k++) {
		lng[k] = 'r';
		uint32_t i = strtab_intern(&t, lng, sizeof(lng), &added);
		assert_true(added);
		memcpy(twice, lng, sizeof(lng));
		assert_int_equal(strtab_find(&t, twice, sizeof(twice)), i);
		assert_int_equal(strtab_hash(lng, sizeof(lng)), strtab_hash(twice, sizeof(twice)));
		lng[k] = 'q';
		assert_true(strtab_hash(lng, sizeof(lng)) != strtab_hash(twice, sizeof(twice)));
	}
	/* two words swapped, each xored with a constant: lanes that start a constant apart
	 * or are combined even-handedly would give both the same hash, whatever the seed */
	static const uint64_t start_gaps[] = { 0, 0x2545f4914f6cdd1dULL, 0xb7d1d6e5b5e5d8f6ULL };
	for (size_t g = 0; g < sizeof(start_gaps) / sizeof(start_gaps[0]); g++) {
		uint64_t w[5] = { 0x6f6f6f6f6f6f6f6fULL, 0x7070707070707070ULL, 1, 2, 3 }, v[5];
		memcpy(v, w, sizeof(w));
		v[0] = w[1] ^ start_gaps[g];
		v[1] = w[0] ^ start_gaps[g];
		assert_true(strtab_hash((const char *)w, sizeof(w)) != strtab_hash((const char *)v, sizeof(v)));
	}
	/* the top bit of one word flipped, and bits 31 and 63 of a later word of the same
	 * chain: a multiply-xorshift step lets the second cancel the first, whatever the seed
	 * (bytes 7, 11, 15 of 16: the chain of short names; bytes 7, 35, 39 of 64: lane a's
	 * first two words) */
	static const int flips[][3] = { { 7, 11, 15 }, { 7, 35, 39 } };
	for (size_t f = 0; f < 2; f++) {
		char x[64], y[64];
		size_t n = f ? 64 : 16;
		memset(x, 'm', sizeof(x));
		memcpy(y, x, sizeof(y));
		for (int k = 0; k < 3; k++)
			y[flips[f][k]] ^= (char)0x80;
		assert_true(strtab_hash(x, n) != strtab_hash(y, n));
	}
	assert_int_equal(strtab_find(&t, "nope", 4), UINT32_MAX);
	uint32_t k1 = strtab_intern_key(&t, "f", 1, 1, 2, NULL), k2 = strtab_intern_key(&t, "f", 1, 2, 1, NULL);
	assert_int_not_equal(k1, k2);   /* same name, another object/file: another identity */
	assert_string_equal(strtab_get(&t, k1)->str, "f");
	strtab_clear(&t);
	assert_int_equal(strtab_intern(&t, "alpha", 5, &added), 0);
	assert_true(added);
	strtab_free(&t);
}

static void test_idmap__hostile_ids(void **state)
{
	(void)state;
	struct idmap m;
	idmap_init(&m);
	idmap_put(&m, UINT64_MAX, 1);
	idmap_put(&m, (uint64_t)1 << 63, 2);
	idmap_put(&m, 0, 3);
	for (uint64_t i = 1; i < 5000; i++)
		idmap_put(&m, i * 0x100000001ULL, (uint32_t)i + 10);
	assert_int_equal(idmap_get(&m, UINT64_MAX), 1);
	assert_int_equal(idmap_get(&m, (uint64_t)1 << 63), 2);
	assert_int_equal(idmap_get(&m, 0), 3);
	assert_int_equal(idmap_get(&m, 4999 * 0x100000001ULL), 5009);
	assert_int_equal(idmap_get(&m, 12345), UINT32_MAX);
	assert_true(m.nslots < 20000);   /* memory follows the number of ids, not their values */
	idmap_clear(&m);
	assert_int_equal(idmap_get(&m, 0), UINT32_MAX);
	idmap_free(&m);
}

static void test_arena__alignment_and_big_blocks(void **state)
{
	(void)state;
	struct arena a = { 0 };
	char *s = arena_strndup(&a, "abc", 3);
	char *t = arena_strndup(&a, "de", 2);
	double *y = arena_alloc(&a, sizeof(double));   /* after 7 bytes of strings */
	void *big = arena_alloc(&a, 1 << 20);
	double *x = arena_alloc(&a, sizeof(double));
	assert_string_equal(s, "abc");
	assert_ptr_equal(t, s + 4);   /* strings packed, not rounded up */
	assert_string_equal(t, "de");
	assert_non_null(big);
	assert_int_equal((uintptr_t)y % _Alignof(max_align_t), 0);
	assert_int_equal((uintptr_t)x % _Alignof(max_align_t), 0);
	arena_reset(&a);
	assert_int_equal(a.total, 0);
	arena_free(&a);
}

static int next(struct line_reader *lr, char *out, size_t n, struct diag *d)
{
	const char *l;
	size_t len;
	int rc = line_reader_next(lr, &l, &len, d);
	if (rc == 1)
		snprintf(out, n, "%.*s", (int)len, l);
	return rc;
}

static void test_linereader__crlf_limit_and_last_line(void **state)
{
	(void)state;
	char *p = tmp_file("one\r\ntwo\n\nlast");
	struct diag d = { 0 };
	struct input *in = input_open(p, &d);
	struct line_reader lr;
	line_reader_init(&lr, in, 100);
	char buf[128];
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 1);
	assert_string_equal(buf, "one");
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 1);
	assert_string_equal(buf, "two");
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 1);
	assert_string_equal(buf, "");
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 1);
	assert_string_equal(buf, "last");
	assert_true(lr.missing_newline);
	assert_int_equal(lr.lineno, 4);
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 0);
	line_reader_free(&lr);
	input_close(in);
	unlink(p);
	free(p);
	/* a line over the limit is an error naming its number, whatever its length */
	char *big = malloc(3 << 20);
	memset(big, 'x', 3 << 20);
	memcpy(big, "ok\n", 3);
	p = tmp_file_n(big, 3 << 20);
	in = input_open(p, &d);
	line_reader_init(&lr, in, 1 << 20);
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), 1);
	assert_int_equal(next(&lr, buf, sizeof(buf), &d), -1);
	assert_non_null(strstr(d.msg, ":2: line longer than the limit of 1048576 bytes"));
	line_reader_free(&lr);
	input_close(in);
	unlink(p);
	free(p);
	free(big);
}

static void test_diag__first_error_wins_and_quote(void **state)
{
	(void)state;
	struct diag d = { 0 };
	assert_int_equal(diag_at(&d, "f", 3, "first %d", 1), -1);
	diag_at(&d, "g", 4, "second");
	assert_string_equal(d.msg, "f:3: first 1");
	char q[16];
	assert_string_equal(diag_quote(q, sizeof(q), "a\x01" "b", 3), "a\\x01b");
	const char *cut = diag_quote(q, sizeof(q), "abcdefghijklmnopqrstuvwxyz", 26);
	assert_true(strlen(cut) < sizeof(q));
	assert_string_equal(cut + strlen(cut) - 3, "...");   /* a long subject is cut, and says so */
}

/* Items in a caller's table found by key: every one found, absent keys not, the index
 * grown past its first size and never more than three quarters full. */
struct numbered {
	uint64_t keys[5000];
};

static uint64_t numbered_key(const void *ctx, size_t i)
{
	return ((const struct numbered *)ctx)->keys[i];
}

static size_t find_item(const struct slot_index *x, const struct numbered *t, uint64_t key)
{
	for (size_t i = slot_index_home(x, key);; i = slot_index_next(x, i)) {
		if (!x->slots[i])
			return SIZE_MAX;
		if (t->keys[x->slots[i] - 1] == key)
			return x->slots[i] - 1;
	}
}

static void test_slot_index__find_and_grow(void **state)
{
	(void)state;
	static struct numbered t;
	struct slot_index x = { 0 };
	for (size_t n = 0; n < 5000; n++) {
		t.keys[n] = n * 0x100000000ULL;   /* keys that differ only in their high half */
		slot_index_reserve(&x, 0, n, numbered_key, &t);
		size_t i = slot_index_home(&x, t.keys[n]);
		while (x.slots[i])
			i = slot_index_next(&x, i);
		x.slots[i] = (uint32_t)n + 1;
		assert_true((n + 1) * 4 <= x.nslots * 3);
	}
	assert_true(x.nslots >= 8192);
	for (size_t n = 0; n < 5000; n++)
		assert_int_equal(find_item(&x, &t, t.keys[n]), n);
	assert_int_equal(find_item(&x, &t, 5000 * 0x100000000ULL), SIZE_MAX);
	assert_int_equal(find_item(&x, &t, 1), SIZE_MAX);
	slot_index_free(&x);
	assert_null(x.slots);
	slot_index_sized(&x, 5000);   /* room for all at once: never more than 3/4 full */
	assert_true(5000 * 4 <= x.nslots * 3 && x.nslots / 2 * 3 < 5000 * 4);
	for (size_t i = 0; i < x.nslots; i++)
		assert_int_equal(x.slots[i], 0);
	slot_index_free(&x);
}

/* Fills V from N up to CAP with random numbers of every length (SEED for srand()); returns
 * CAP. */
static size_t fill_random(uint64_t *v, size_t n, size_t cap, unsigned seed)
{
	srand(seed);
	while (n < cap) {
		uint64_t x = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
		v[n++] = x >> (rand() % 64);
	}
	return n;
}

/* fmt_dec() (HEX: fmt_hex()) of each of the N values in V against snprintf(). */
static void expect_as_printf(const uint64_t *v, size_t n, int hex)
{
	for (size_t i = 0; i < n; i++) {
		char want[32], got[32];
		int w = snprintf(want, sizeof(want), hex ? "0x%llx" : "%llu", (unsigned long long)v[i]);
		size_t g = hex ? fmt_hex(got, v[i]) : fmt_dec(got, v[i]);
		assert_int_equal(g, (size_t)w);
		assert_memory_equal(got, want, g);
	}
}

/* fmt_dec() against snprintf(): 0, every power of ten and its neighbours (10^19 too),
 * 2^64 - 1, and random numbers of every length. */
static void test_scan__fmt_dec_is_printf(void **state)
{
	(void)state;
	uint64_t v[4000];
	size_t n = 0;
	v[n++] = 0;
	v[n++] = UINT64_MAX;
	for (uint64_t t = 1; t <= UINT64_MAX / 10; t *= 10) {
		v[n++] = t - 1;
		v[n++] = t;
		v[n++] = t + 1;
	}
	/* and 10^19, the largest power of ten below 2^64 (the loop stops at 10^18) */
	v[n++] = 10000000000000000000ULL - 1;
	v[n++] = 10000000000000000000ULL;
	v[n++] = 10000000000000000000ULL + 1;
	n = fill_random(v, n, sizeof(v) / sizeof(v[0]), 24);
	expect_as_printf(v, n, 0);
}

/* scan_dec() against strtoull(): every length up to 25 digits, leading zeros, values
 * next to 2^64 - 1, and what follows the digits; a number past 2^64 - 1 is refused and
 * leaves *P where it was. */
static void test_scan__scan_dec_is_strtoull(void **state)
{
	(void)state;
	static const char *const fixed[] = {
		"0", "7", "18446744073709551615", "18446744073709551616", "18446744073709551614x",
		"99999999999999999999", "00000000000000000000000018446744073709551615",
		"1844674407370955161", "9999999999999999999", "10000000000000000000 ",
	};
	char buf[64];
	srand(26);
	for (int k = 0; k < 20000; k++) {
		if (k < (int)(sizeof(fixed) / sizeof(fixed[0]))) {
			snprintf(buf, sizeof(buf), "%s", fixed[k]);
		} else {
			int n = 1 + rand() % 25;
			for (int i = 0; i < n; i++)
				buf[i] = (char)('0' + (i == 0 && rand() % 4 ? 1 + rand() % 9 : rand() % 10));
			buf[n] = rand() % 2 ? ' ' : 'x';
			buf[n + 1] = '\0';
		}
		const char *end = buf + strlen(buf), *p = buf;
		uint64_t v = 0;
		errno = 0;
		char *e;
		unsigned long long want = strtoull(buf, &e, 10);
		int rc = scan_dec(&p, end, &v);
		if (errno == ERANGE) {
			assert_int_equal(rc, -1);
			assert_ptr_equal(p, buf);
		} else {
			assert_int_equal(rc, 0);
			assert_true(v == want);
			assert_ptr_equal(p, e);
		}
	}
}

/* hexval() (a table) against the ranges it stands for, on every byte. */
static void test_scan__hexval_every_byte(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		int want = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			   c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		assert_int_equal(hexval((char)c), want);
	}
}

/* fmt_hex() against snprintf("0x%llx"): 0, each bit length's first and last values, and
 * random numbers of every length. */
static void test_scan__fmt_hex_is_printf(void **state)
{
	(void)state;
	uint64_t v[3000];
	size_t n = 0;
	v[n++] = 0;
	for (unsigned b = 0; b < 64; b++) {
		v[n++] = (uint64_t)1 << b;
		v[n++] = ((uint64_t)2 << b) - 1;
	}
	n = fill_random(v, n, sizeof(v) / sizeof(v[0]), 25);
	expect_as_printf(v, n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strtab__interning),
		cmocka_unit_test(test_idmap__hostile_ids),
		cmocka_unit_test(test_arena__alignment_and_big_blocks),
		cmocka_unit_test(test_slot_index__find_and_grow),
		cmocka_unit_test(test_linereader__crlf_limit_and_last_line),
		cmocka_unit_test(test_diag__first_error_wins_and_quote),
		cmocka_unit_test(test_scan__fmt_dec_is_printf),
		cmocka_unit_test(test_scan__fmt_hex_is_printf),
		cmocka_unit_test(test_scan__hexval_every_byte),
		cmocka_unit_test(test_scan__scan_dec_is_strtoull),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
