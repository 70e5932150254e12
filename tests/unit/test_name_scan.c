/* Unit tests for name_scan.c: the byte loop, the 16-byte and the 32-byte loops find the
 * same end, lanes and "'0x" parts for random names (heavy in "'", "0", "x" and "\n",
 * parts across every block boundary, names ending at the buffer's NUL or holding one), and
 * agree with name_scan_len() and with the parts counted by hand; each buffer is allocated
 * to its last byte, so that AddressSanitizer sees a read past it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind/name_scan.h"

/* The two bytes before each name: callgrind's "= " or ") ", or here anything, a "'0"
 * included (which makes no part of an "x" at the name's start). */
static char before[2] = { '=', ' ' };

/* A line BEFORE, NAME then TAIL, in a buffer that ends in its NUL: returns the buffer. */
static char *line_buffer(const char *name, size_t n, const char *tail, size_t tail_len,
			 char **limit)
{
	char *buf = malloc(2 + n + tail_len + 1);
	assert_non_null(buf);
	memcpy(buf, before, 2);
	memcpy(buf + 2, name, n);
	memcpy(buf + 2 + n, tail, tail_len);
	buf[2 + n + tail_len] = '\0';
	*limit = buf + 2 + n + tail_len;
	return buf;
}

/* The parts of the N bytes at P, counted by hand. */
static size_t count_parts(const char *p, size_t n, size_t *at, size_t max)
{
	size_t k = 0;
	for (size_t j = 0; j + 2 < n; j++)
		if (p[j] == '\'' && p[j + 1] == '0' && p[j + 2] == 'x' && k < max)
			at[k++] = j;
	return k;
}

/* Scans the line in BUF (name at BUF + 2) with every implementation the host has and
 * checks that they agree with each other, with name_scan_len() and with count_parts();
 * returns the end's offset from the name. */
static size_t check_all(const char *buf, const char *limit)
{
	const char *p = buf + 2;
	struct name_sum sum0, sum;
	struct name_parts parts0 = { 0 }, parts = { 0 };
	const char *end0 = name_scan_line_impl(0, p, limit, &sum0, &parts0);
	assert_non_null(end0);
	size_t n = (size_t)(end0 - p);
	for (size_t i = 0; i < n; i++)
		assert_true(p[i] != '\n' && p[i] != '\0');
	assert_true(*end0 == '\n' || *end0 == '\0');
	for (int impl = 1; impl <= 2; impl++) {
		parts.n = 0;
		memset(&sum, 0xa5, sizeof(sum));
		const char *end = name_scan_line_impl(impl, p, limit, &sum, &parts);
		if (!end)
			continue;   /* not on this host */
		assert_ptr_equal(end, end0);
		assert_memory_equal(&sum, &sum0, sizeof(sum));
		assert_int_equal(parts.n, parts0.n);
		if (parts.n)
			assert_memory_equal(parts.at, parts0.at, parts.n * sizeof(*parts.at));
	}
	parts.n = 0;
	const char *end = name_scan_line(p, limit, &sum, &parts);
	assert_ptr_equal(end, end0);
	assert_memory_equal(&sum, &sum0, sizeof(sum));
	parts.n = 0;
	name_scan_len(p, n, &sum, &parts);
	assert_memory_equal(&sum, &sum0, sizeof(sum));
	assert_int_equal(name_scan_fp(&sum, n, 1, 2), name_scan_fp(&sum0, n, 1, 2));
	size_t at[512];
	size_t k = count_parts(p, n, at, 512);
	assert_int_equal(parts.n, k);
	assert_int_equal(parts0.n, k);
	if (k)
		assert_memory_equal(parts0.at, at, k * sizeof(*at));
	free(parts0.at);
	free(parts.at);
	return n;
}

/* Random names of 0 to 700 bytes from a small alphabet, ended by "\n" or not at all (the
 * buffer's NUL), some with a NUL inside. */
static void test_name_scan__random(void **state)
{
	(void)state;
	static const char alphabet[] = "''00xxx\nab:/ \t";
	char name[800], tail[80];
	srand(13);
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)rand() % 701, tail_len = (size_t)rand() % 70;
		for (size_t i = 0; i < n; i++)
			name[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
		if (round % 7 == 0 && n)
			name[rand() % (int)n] = '\0';
		for (size_t i = 0; i < tail_len; i++)
			tail[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
		for (int i = 0; i < 2; i++)
			before[i] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
		char *limit, *buf = line_buffer(name, n, tail, tail_len, &limit);
		check_all(buf, limit);
		free(buf);
	}
	/* long names (the 64-byte loop's rounds of 16 pairs, parts past 1 KB): few ends */
	static const char long_alphabet[] = "''00xxxab:/ \t0000xxxx";
	char *big = malloc(4000);
	assert_non_null(big);
	for (int round = 0; round < 300; round++) {
		size_t n = 1000 + (size_t)rand() % 3000;
		for (size_t i = 0; i < n; i++)
			big[i] = long_alphabet[rand() % (int)(sizeof(long_alphabet) - 1)];
		char *limit, *buf = line_buffer(big, n, "\nfn=(1)\n", round % 2 ? 8 : 0, &limit);
		assert_int_equal(check_all(buf, limit), n);
		free(buf);
	}
	free(big);
	/* an "x" or "0x" at the name's start after "'0" or "'": no part */
	static const char *const starts[][2] = { { "'0", "x'0xa" }, { "x'", "0x'0x" } };
	for (size_t i = 0; i < 2; i++) {
		memcpy(before, starts[i][0], 2);
		char *limit, *buf = line_buffer(starts[i][1], 5, "\n", 1, &limit);
		struct name_parts parts = { 0 };
		struct name_sum sum;
		for (int impl = 0; impl <= 2; impl++) {
			parts.n = 0;
			if (name_scan_line_impl(impl, buf + 2, limit, &sum, &parts)) {
				assert_int_equal(parts.n, 1);
				assert_int_equal(parts.at[0], i == 0 ? 1 : 2);
			}
		}
		free(parts.at);
		free(buf);
	}
	memcpy(before, "= ", 2);
}

/* A part "'0x..." at every offset from 0 to 130 (across the 16-, 32- and 64-byte steps),
 * after a name of "a"s, ended by "\n" at every length, or by the buffer's end. */
static void test_name_scan__parts_at_boundaries(void **state)
{
	(void)state;
	char name[400];
	for (size_t at = 0; at <= 130; at++) {
		for (size_t n = at; n <= at + 70; n++) {
			memset(name, 'a', n);
			memcpy(name + at, "'0x0000000004a8e0c0", n - at < 19 ? n - at : 19);
			for (int ended = 0; ended < 2; ended++) {
				char *limit, *buf = line_buffer(name, n, "\nfn=(1)\n", ended ? 8 : 0, &limit);
				size_t len = check_all(buf, limit);
				assert_int_equal(len, n);
				free(buf);
			}
		}
	}
}

/* Lanes and fingerprints: names one byte apart, the same name in another object or file,
 * and names that differ only in length (zero bytes past the end do not count) differ. */
static void test_name_scan__fingerprint(void **state)
{
	(void)state;
	struct name_sum a, b;
	struct name_parts parts = { 0 };
	char x[100], y[100];
	memset(x, 'q', sizeof(x));
	memcpy(y, x, sizeof(y));
	y[77] = 'r';
	name_scan_len(x, sizeof(x), &a, &parts);
	name_scan_len(y, sizeof(y), &b, &parts);
	assert_int_not_equal(name_scan_fp(&a, 100, 1, 1), name_scan_fp(&b, 100, 1, 1));
	assert_int_not_equal(name_scan_fp(&a, 100, 1, 1), name_scan_fp(&a, 100, 2, 1));
	assert_int_not_equal(name_scan_fp(&a, 100, 1, 1), name_scan_fp(&a, 100, 1, 2));
	char z[40] = "abc";
	name_scan_len(z, 3, &a, &parts);
	name_scan_len(z, 4, &b, &parts);   /* "abc" and "abc\0": the same lanes */
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_not_equal(name_scan_fp(&a, 3, 1, 1), name_scan_fp(&b, 4, 1, 1));
	assert_int_equal(parts.n, 0);
	free(parts.at);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_scan__random),
		cmocka_unit_test(test_name_scan__parts_at_boundaries),
		cmocka_unit_test(test_name_scan__fingerprint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
