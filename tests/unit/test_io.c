/* Unit tests for io.c and io_zstd.c: magic detection, zstd round trip, cut-short
 * streams, atomic output (nothing under the final name until commit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "diag.h"
#include "helpers.h"
#include "io.h"

static char *read_all(struct input *in, size_t *n)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	struct diag d = { 0 };
	for (;;) {
		ssize_t r = input_read(in, buf + len, cap - len, &d);
		assert_true(r >= 0);
		if (r == 0)
			break;
		len += (size_t)r;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	*n = len;
	return buf;
}

static void test_io__zstd_round_trip(void **state)
{
	(void)state;
	char out[] = "/tmp/cgjit-io-XXXXXX.zst";
	close(mkstemps(out, 4));
	struct diag d = { 0 };
	struct output *o = output_open(out, &d);
	assert_non_null(o);
	char *text = malloc(1 << 20);
	for (int i = 0; i < (1 << 20); i++)
		text[i] = (char)('a' + i % 26);
	assert_int_equal(output_write(o, text, 1 << 20, &d), 0);
	struct stat st;
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_size, 0);   /* nothing under the final name before commit */
	assert_int_equal(output_commit(o, &d), 0);
	struct input *in = input_open(out, &d);
	assert_non_null(in);
	assert_true(input_is_zstd(in));
	size_t n;
	char *back = read_all(in, &n);
	assert_int_equal(n, 1 << 20);
	assert_memory_equal(back, text, n);
	input_close(in);
	/* Cut the file short: the reader must say so, not end early. */
	assert_int_equal(truncate(out, 20), 0);
	in = input_open(out, &d);
	char buf[4096];
	ssize_t r;
	while ((r = input_read(in, buf, sizeof(buf), &d)) > 0)
		;
	assert_int_equal(r, -1);
	assert_non_null(strstr(d.msg, "byte"));
	input_close(in);
	unlink(out);
	free(text);
	free(back);
}

static void test_io__plain_short_and_abort(void **state)
{
	(void)state;
	char *p = tmp_file("ab");
	struct diag d = { 0 };
	struct input *in = input_open(p, &d);
	assert_false(input_is_zstd(in));
	size_t n;
	char *s = read_all(in, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(s, "ab", 2);
	input_close(in);
	free(s);
	unlink(p);
	free(p);
	char out[] = "/tmp/cgjit-io-abort-XXXXXX";
	int fd = mkstemp(out);
	close(fd);
	unlink(out);
	struct output *o = output_open(out, &d);
	assert_int_equal(output_write(o, "partial", 7, &d), 0);
	output_abort(o);
	struct stat st;
	assert_int_equal(stat(out, &st), -1);   /* aborted: no file at all */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io__zstd_round_trip),
		cmocka_unit_test(test_io__plain_short_and_abort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
