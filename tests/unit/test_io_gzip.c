/* Unit tests for gzip input (io_gzip.c through io.h's input_*): magic detection on files,
 * memory and pipes, peeking, members concatenated read whole, and the errors: a stream cut
 * short, a wrong CRC-32, bytes after a member that begin no other, each naming its byte.
 * The gzip bytes are made here with zlib's deflate (the gzip wrapper), independent of the
 * inflate side under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/wait.h>
#include <zlib.h>

#include "core/diag.h"
#include "core/io.h"
#include "helpers.h"

/* TEXT (N bytes) as one gzip member; *ZN its size. Malloc'd. */
static unsigned char *gz(const char *text, size_t n, size_t *zn)
{
	z_stream s = { 0 };
	assert_int_equal(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&s, (uLong)n) + 64;
	unsigned char *out = malloc(cap);
	s.next_in = (unsigned char *)(uintptr_t)text;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
	*zn = s.total_out;
	deflateEnd(&s);
	return out;
}

static char *text_of(size_t n)
{
	char *t = malloc(n);
	for (size_t i = 0; i < n; i++)
		t[i] = (char)('a' + (i * 7 + i / 1000) % 26);
	return t;
}

/* Everything from IN; -1 with D set on an error. */
static ssize_t drain(struct input *in, char *into, size_t cap, struct diag *d)
{
	size_t len = 0;
	for (;;) {
		char buf[1000];   /* not a power of two: reads end mid-member */
		ssize_t r = input_read(in, buf, sizeof(buf), d);
		if (r < 0)
			return -1;
		if (r == 0)
			return (ssize_t)len;
		if (into && len + (size_t)r <= cap)
			memcpy(into + len, buf, (size_t)r);
		len += (size_t)r;
	}
}

static void test_io_gzip__round_trip_file_mem_pipe(void **state)
{
	(void)state;
	size_t n = 300000, zn;
	char *text = text_of(n), *back = malloc(n);
	unsigned char *z = gz(text, n, &zn);
	char *path = tmp_file_n((const char *)z, zn);
	struct diag d = { 0 };
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(write(fds[1], z, zn) == (ssize_t)zn ? 0 : 1);
	}
	close(fds[1]);
	struct input *ins[] = { input_open(path, &d), input_open_mem(z, zn, "mem"),
				input_open_fd(fds[0], "pipe", &d) };
	for (size_t i = 0; i < 3; i++) {
		assert_non_null(ins[i]);
		assert_true(input_is_gzip(ins[i]));
		assert_false(input_is_zstd(ins[i]));
		unsigned char m[4];
		assert_int_equal(input_peek(ins[i], m, 4, &d), 4);
		assert_memory_equal(m, text, 4);
		char none;
		assert_int_equal(input_read(ins[i], &none, 0, &d), 0);   /* nothing asked: nothing read */
		memset(back, 0, n);
		assert_int_equal(drain(ins[i], back, n, &d), (ssize_t)n);
		assert_memory_equal(back, text, n);
		input_close(ins[i]);
	}
	waitpid(pid, NULL, 0);
	assert_false(d.set);
	unlink(path);
	free(path);
	free(z);
	free(text);
	free(back);
}

/* gzip -dc reads members one after the other; so do Xdebug's readers. */
static void test_io_gzip__members_concatenated(void **state)
{
	(void)state;
	size_t an, bn;
	unsigned char *a = gz("version: 1\n", 11, &an), *b = gz("events: Ir\n", 11, &bn);
	unsigned char *both = malloc(an + bn + an);
	memcpy(both, a, an);
	memcpy(both + an, b, bn);
	memcpy(both + an + bn, a, an);
	struct diag d = { 0 };
	char back[64];
	struct input *in = input_open_mem(both, an + bn + an, "two");
	assert_int_equal(drain(in, back, sizeof(back), &d), 33);
	assert_memory_equal(back, "version: 1\nevents: Ir\nversion: 1\n", 33);
	input_close(in);
	/* an empty member (gzip of nothing) in between changes nothing */
	size_t en;
	unsigned char *e = gz("", 0, &en);
	memcpy(both + an, e, en);
	memcpy(both + an + en, b, bn);
	in = input_open_mem(both, an + en + bn, "empty");
	assert_int_equal(drain(in, back, sizeof(back), &d), 22);
	input_close(in);
	assert_false(d.set);
	free(a);
	free(b);
	free(e);
	free(both);
}

static void test_io_gzip__errors_name_the_byte(void **state)
{
	(void)state;
	size_t n = 200000, zn;
	char *text = text_of(n);
	unsigned char *z = gz(text, n, &zn);
	char want[128];
	/* cut short: at every kind of place (header, data, trailer) */
	size_t cuts[] = { 2, 5, 12, zn / 2, zn - 5, zn - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct diag d = { 0 };
		struct input *in = input_open_mem(z, cuts[i], "cut.gz");
		assert_int_equal(drain(in, NULL, 0, &d), -1);
		snprintf(want, sizeof(want), "cut.gz: byte %zu: gzip stream cut short: the member that starts at byte 0", cuts[i]);
		assert_non_null(strstr(d.msg, want));
		input_close(in);
	}
	/* a wrong CRC-32 (the trailer's first 4 bytes): zlib's message */
	unsigned char *bad = malloc(zn + 16);
	memcpy(bad, z, zn);
	bad[zn - 8] ^= 0xff;
	struct diag d = { 0 };
	struct input *in = input_open_mem(bad, zn, "crc.gz");
	assert_int_equal(drain(in, NULL, 0, &d), -1);
	assert_non_null(strstr(d.msg, "corrupt gzip data (member at byte 0): incorrect data check"));
	input_close(in);
	/* a bad block type right after the 10-byte header */
	memcpy(bad, z, zn);
	bad[10] = 0xff;
	d = (struct diag){ 0 };
	in = input_open_mem(bad, zn, "block.gz");
	assert_int_equal(drain(in, NULL, 0, &d), -1);
	assert_non_null(strstr(d.msg, "block.gz: byte 1"));
	assert_non_null(strstr(d.msg, "corrupt gzip data"));
	input_close(in);
	/* trailing bytes that begin no member; one stray byte too */
	memcpy(bad, z, zn);
	memcpy(bad + zn, "junk", 4);
	for (size_t extra = 1; extra <= 4; extra += 3) {
		d = (struct diag){ 0 };
		in = input_open_mem(bad, zn + extra, "junk.gz");
		assert_int_equal(drain(in, NULL, 0, &d), -1);
		snprintf(want, sizeof(want), "junk.gz: byte %zu: not gzip data after the member", zn);
		assert_non_null(strstr(d.msg, want));
		input_close(in);
	}
	free(bad);
	free(z);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_gzip__round_trip_file_mem_pipe),
		cmocka_unit_test(test_io_gzip__members_concatenated),
		cmocka_unit_test(test_io_gzip__errors_name_the_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
