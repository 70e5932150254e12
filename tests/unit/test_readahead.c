/* Unit tests for the line reader's read-ahead thread (readahead.c, linereader.c): every
 * line of a multi-megabyte input comes back whole and in order across the buffers the
 * thread fills (lines cut by a buffer's end, lines longer than the room kept for them,
 * CRLF, NUL bytes, a last line without "\n"), from a file, memory, a zstd stream and a
 * pipe; a read error in the thread reaches the caller with its message; stopping while
 * the thread waits on a pipe that stays open returns; the buffers stay bounded; and the
 * thread fills several buffers ahead, in the order given. The same reads done by a shared
 * pump (io_pump.h) instead of the reader's own thread give the same lines and errors. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>
#include <zstd.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/io_pump.h"
#include "core/linereader.h"
#include "core/readahead.h"
#include "helpers.h"

/* A text of about SIZE bytes, its lines described in LENS (without "\n"; -1 ends): line
 * lengths from 0 to 200 bytes, every 997th line 300 to 700 KB (longer than the 64 KB kept
 * in front of a buffer), every 13th ending in CRLF, every 29th holding a NUL byte; the
 * last line has no "\n". Deterministic. */
struct text {
	char *s;
	size_t n;
	size_t *lens;
	size_t nlines;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static struct text make_text(size_t size)
{
	struct text t = { malloc(size + (1 << 20)), 0, malloc(sizeof(size_t) * (size + 1)), 0 };
	uint64_t x = 88172645463325252ULL;
	while (t.n < size) {
		size_t i = t.nlines;
		size_t len = i % 997 == 996 ? 300000 + rnd(&x) % 400000 : rnd(&x) % 201;
		for (size_t k = 0; k < len; k++)
			t.s[t.n + k] = (char)('a' + (i + k) % 26);
		if (i % 29 == 5 && len > 2)
			t.s[t.n + len / 2] = '\0';
		t.n += len;
		if (i % 13 == 7)
			t.s[t.n++] = '\r';
		t.lens[t.nlines++] = len;
		t.s[t.n++] = '\n';
	}
	t.n--;   /* the last line without its "\n" (nor a "\r") */
	if (t.s[t.n - 1] == '\r')
		t.n--;
	return t;
}

/* Reads every line of IN and checks it against T: content, length, the NUL flag, the line
 * numbers and the missing last "\n"; with PUMP, the reads ahead done by that shared thread.
 * Returns whether the thread was started. */
static int read_all_on(struct input *in, const struct text *t, struct io_pump *pump)
{
	struct line_reader lr;
	struct diag d = { 0 };
	line_reader_init(&lr, in, 1 << 20);
	line_reader_share_pump(&lr, pump);
	size_t at = 0;
	int joined = 0;
	for (size_t i = 0; i < t->nlines; i++) {
		const char *l;
		size_t len;
		assert_int_equal(line_reader_next(&lr, &l, &len, &d), 1);
		/* with PUMP, the reads ahead are the pump's, not a thread of the reader's own */
		if (pump && lr.ra && !joined)
			joined = io_pump_clients(pump) == 1;
		assert_int_equal(len, t->lens[i]);
		assert_memory_equal(l, t->s + at, len);
		assert_int_equal(lr.nul, memchr(t->s + at, '\0', len) != NULL);
		assert_int_equal(lr.lineno, i + 1);
		at += len + (t->s[at + len] == '\r') + 1;
	}
	assert_true(lr.missing_newline);
	const char *l;
	size_t len;
	assert_int_equal(line_reader_next(&lr, &l, &len, &d), 0);
	assert_false(d.set);
	int started = lr.started;
	if (pump && started)
		assert_true(joined);
	line_reader_free(&lr);
	if (pump)
		assert_int_equal(io_pump_clients(pump), 0);
	input_close(in);
	return started;
}

static int read_all(struct input *in, const struct text *t)
{
	return read_all_on(in, t, NULL);
}

static void test_readahead__lines_across_buffers(void **state)
{
	(void)state;
	struct text t = make_text(12 << 20);
	size_t long_lines = 0;
	for (size_t i = 0; i < t.nlines; i++)
		long_lines += t.lens[i] > (64 << 10);
	assert_true(t.nlines > 15000 && long_lines >= 10);
	char *p = tmp_file_n(t.s, t.n);
	struct diag d = { 0 };
	assert_true(read_all(input_open(p, &d), &t));       /* a file: read(2) in the thread */
	assert_true(read_all(input_open_mem(t.s, t.n, "mem"), &t));   /* memory */
	size_t zcap = ZSTD_compressBound(t.n);
	char *z = malloc(zcap);
	size_t zn = ZSTD_compress(z, zcap, t.s, t.n, 1);
	assert_false(ZSTD_isError(zn));
	assert_true(read_all(input_open_mem(z, zn, "mem.zst"), &t));   /* decompressed there */
	/* the same through a shared pump (io_pump.h), polling and sleeping between reads */
	alarm(120);   /* a read never done hangs: fails the test */
	for (int spin = 0; spin < 2; spin++) {
		struct io_pump *pump = io_pump_new(spin ? 2000000 : 0);
		assert_true(read_all_on(input_open(p, &d), &t, pump));
		assert_true(read_all_on(input_open_mem(t.s, t.n, "mem"), &t, pump));
		assert_true(read_all_on(input_open_mem(z, zn, "mem.zst"), &t, pump));
		io_pump_free(pump);
	}
	alarm(0);
	/* a small input is read without a thread */
	struct text small = make_text(2 << 10);   /* below the first read, 4 KiB under ASan */
	char *sp = tmp_file_n(small.s, small.n);
	assert_false(read_all(input_open(sp, &d), &small));
	unlink(sp);
	free(sp);
	free(small.s);
	free(small.lens);
	unlink(p);
	free(p);
	free(z);
	free(t.s);
	free(t.lens);
}

/* A child that writes T into a pipe in pieces of at most PIECE bytes, then ends, or with
 * STAY_OPEN waits to be killed with the pipe still open. Returns its pid; the read end
 * is in *FD. */
static pid_t spawn_writer(const struct text *t, size_t piece, int stay_open, int *fd)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		for (size_t at = 0; at < t->n;) {
			size_t k = t->n - at < piece ? t->n - at : piece;
			ssize_t w = write(fds[1], t->s + at, k);
			if (w <= 0)
				_exit(1);
			at += (size_t)w;
		}
		if (stay_open)
			pause();
		_exit(0);
	}
	close(fds[1]);
	*fd = fds[0];
	return pid;
}

/* A pipe: the writer (a child) sends the text in small pieces. */
static void test_readahead__pipe(void **state)
{
	(void)state;
	struct text t = make_text(5 << 20);
	int fd;
	pid_t pid = spawn_writer(&t, 4000, 0, &fd);
	struct diag d = { 0 };
	assert_true(read_all(input_open_fd(fd, "pipe", &d), &t));
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(t.s);
	free(t.lens);
}

/* The reader stops (an error of its own, say) while the thread waits for more of a pipe
 * whose writer neither writes nor closes it: line_reader_free() returns. */
static void test_readahead__stop_while_waiting(void **state)
{
	(void)state;
	struct text t = make_text(3 << 20);
	int fd;
	pid_t pid = spawn_writer(&t, t.n, 1, &fd);
	alarm(60);   /* a hang fails the test */
	struct diag d = { 0 };
	struct input *in = input_open_fd(fd, "pipe", &d);
	struct line_reader lr;
	line_reader_init(&lr, in, 1 << 20);
	const char *l;
	size_t len;
	for (size_t i = 0; i + 1 < t.nlines; i++)   /* all but the last line: the thread waits */
		assert_int_equal(line_reader_next(&lr, &l, &len, &d), 1);
	assert_non_null(lr.ra);
	line_reader_free(&lr);
	input_close(in);
	alarm(0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(t.s);
	free(t.lens);
}

/* A zstd stream cut short after several buffers: the thread's error reaches the caller,
 * naming the input, after the lines before it; also from a shared pump. */
static void error_in_thread(struct io_pump *pump)
{
	struct text t = make_text(8 << 20);
	size_t zcap = ZSTD_compressBound(t.n);
	char *z = malloc(zcap);
	size_t zn = ZSTD_compress(z, zcap, t.s, t.n, 1);
	assert_false(ZSTD_isError(zn));
	struct input *in = input_open_mem(z, zn * 3 / 4, "cut.zst");
	struct line_reader lr;
	struct diag d = { 0 };
	line_reader_init(&lr, in, 1 << 20);
	line_reader_share_pump(&lr, pump);
	const char *l;
	size_t len, lines = 0;
	int rc;
	int joined = 0;
	while ((rc = line_reader_next(&lr, &l, &len, &d)) == 1) {
		lines++;
		if (pump && lr.ra && !joined)
			joined = io_pump_clients(pump) == 1;
	}
	assert_int_equal(rc, -1);
	if (pump)
		assert_true(joined);
	assert_true(lines > 1000);
	assert_non_null(strstr(d.msg, "cut.zst"));
	assert_null(lr.ra);   /* the thread is stopped once it has failed */
	line_reader_free(&lr);
	input_close(in);
	free(z);
	free(t.s);
	free(t.lens);
}

static void test_readahead__error_in_thread(void **state)
{
	(void)state;
	error_in_thread(NULL);
	struct io_pump *pump = io_pump_new(2000000);
	error_in_thread(pump);
	io_pump_free(pump);
}

/* Lines up to the limit, long and short mixed, over 60 MB: the buffers stay within twice
 * the limit plus a read each. When each read filled a whole grown buffer, the two buffers
 * grew each other in turn (10 MB here, 20 MB on 200 MB with a 2 MB limit). */
static void test_readahead__buffers_stay_bounded(void **state)
{
	(void)state;
	size_t total = 60 << 20, max_line = 1 << 20, n = 0;
	char *s = malloc(total);
	uint64_t x = 1;
	for (;;) {
		size_t len = (size_t)(rnd(&x) % (max_line - 10));
		if (rnd(&x) % 3 == 0)
			len %= 1000;
		if (n + len + 1 > total)
			break;
		memset(s + n, 'a', len);
		n += len;
		s[n++] = '\n';
	}
	char *p = tmp_file_n(s, n);
	struct diag d = { 0 };
	struct input *in = input_open(p, &d);
	struct line_reader lr;
	line_reader_init(&lr, in, max_line);
	const char *l;
	size_t len, most = 0;
	int rc;
	while ((rc = line_reader_next(&lr, &l, &len, &d)) == 1)
		most = lr.cap > most ? lr.cap : most;
	assert_int_equal(rc, 0);
	assert_true(most <= 2 * (max_line + (1 << 20) + 1));
	line_reader_free(&lr);
	input_close(in);
	unlink(p);
	free(p);
	free(s);
}

/* The thread holds READAHEAD_MAX buffers: they come back filled in the order given, each
 * read at the offset kept in front, a read at most the chunk and at most the room; at the
 * end the buffers still given are freed by readahead_stop() (a leak fails check-asan). */
static void test_readahead__several_ahead(void **state)
{
	(void)state;
	enum { HEAD = 16, CHUNK = 1000 };
	size_t n = 50 * CHUNK + 123;
	char *s = malloc(n);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + i % 23);
	struct input *in = input_open_mem(s, n, "mem");
	struct readahead *ra = readahead_start(in, HEAD, CHUNK, NULL);
	assert_non_null(ra);
	/* one buffer smaller than a chunk: its reads stop at its room */
	for (int i = 0; i < READAHEAD_MAX; i++) {
		size_t cap = i == 1 ? HEAD + 300 + 1 : HEAD + CHUNK + 1;
		char *b = malloc(cap);
		b[i == 1 ? HEAD + 300 : HEAD + CHUNK] = 'Z';   /* overwritten by the NUL */
		readahead_give(ra, b, cap);
	}
	size_t at = 0, takes = 0;
	for (;;) {
		char *b;
		size_t cap;
		struct diag d = { 0 };
		ssize_t r = readahead_take(ra, &b, &cap, &d);
		assert_true(r >= 0);
		takes++;
		if (r == 0) {
			free(b);
			break;
		}
		assert_true((size_t)r <= CHUNK && (size_t)r <= cap - HEAD - 1);
		assert_memory_equal(b + HEAD, s + at, (size_t)r);
		assert_int_equal(b[HEAD + r], '\0');
		at += (size_t)r;
		readahead_give(ra, b, cap);   /* back to the end of the queue */
	}
	assert_int_equal(at, n);
	assert_true(takes > n / CHUNK);
	readahead_stop(ra);   /* frees the READAHEAD_MAX - 1 buffers given after the end */
	input_close(in);
	free(s);
}

/* From a pipe that holds four chunks, the thread reads into each of the four buffers
 * given before the first is taken: less than a chunk is left in the pipe (the first read
 * may be short: the input keeps the bytes it looked at to tell a compressed stream), where
 * reading one ahead would leave three. */
static void test_readahead__reads_ahead_into_every_buffer(void **state)
{
	(void)state;
	enum { HEAD = 16, CHUNK = 1000 };
	char s[READAHEAD_MAX * CHUNK];
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = (char)('A' + i % 17);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], s, sizeof(s)), (ssize_t)sizeof(s));   /* fits the pipe */
	struct diag d = { 0 };
	struct input *in = input_open_fd(fds[0], "pipe", &d);
	struct readahead *ra = readahead_start(in, HEAD, CHUNK, NULL);
	assert_non_null(ra);
	for (int i = 0; i < READAHEAD_MAX; i++)
		readahead_give(ra, malloc(HEAD + CHUNK + 1), HEAD + CHUNK + 1);
	int left = CHUNK;
	for (int tries = 0; tries < 1000 && left >= CHUNK; tries++) {   /* at most 10 s */
		assert_int_equal(ioctl(fds[0], FIONREAD, &left), 0);
		if (left >= CHUNK)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	assert_true(left < CHUNK);
	size_t at = 0;
	for (int i = 0; i < READAHEAD_MAX; i++) {
		char *b;
		size_t cap;
		ssize_t r = readahead_take(ra, &b, &cap, &d);
		assert_true(r > 0);
		assert_memory_equal(b + HEAD, s + at, (size_t)r);
		at += (size_t)r;
		free(b);
	}
	assert_int_equal(at, sizeof(s) - (size_t)left);
	close(fds[1]);
	readahead_stop(ra);
	input_close(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readahead__lines_across_buffers),
		cmocka_unit_test(test_readahead__pipe),
		cmocka_unit_test(test_readahead__stop_while_waiting),
		cmocka_unit_test(test_readahead__error_in_thread),
		cmocka_unit_test(test_readahead__buffers_stay_bounded),
		cmocka_unit_test(test_readahead__several_ahead),
		cmocka_unit_test(test_readahead__reads_ahead_into_every_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
