/* Unit tests for io.h (input.c, output.c, output_target.c, tempfiles.c) and io_zstd.c:
 * magic detection, zstd round trip, cut-short streams, atomic output (nothing under the
 * final name until commit), peeking at one open stream, skippable frames, error offsets in
 * compressed data. */
#define _GNU_SOURCE   /* sync_file_range(), defined below */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core/diag.h"
#include "helpers.h"
#include "core/io.h"
#include "core/xalloc.h"

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

/* Writes TEXT zstd-compressed (one frame, with checksum) to a new file; returns its path. */
static char *zstd_file(const char *text, size_t n)
{
	char *path = strdup("/tmp/cgjit-io-XXXXXX.zst");
	close(mkstemps(path, 4));
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_non_null(o);
	assert_int_equal(output_write(o, text, n, &d), 0);
	assert_int_equal(output_commit(o, &d), 0);
	return path;
}

static char *file_bytes(const char *path, size_t *n)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	*n = (size_t)st.st_size;
	char *s = slurp(path);
	assert_non_null(s);
	return s;
}

/* Reads everything from IN; returns -1 and the message in D on an error. */
static ssize_t drain(struct input *in, struct diag *d)
{
	char buf[4096];
	ssize_t r, total = 0;
	while ((r = input_read(in, buf, sizeof(buf), d)) > 0)
		total += r;
	return r < 0 ? -1 : total;
}

/* input_peek: the first bytes without consuming them, on every kind of input (symbol files
 * are told apart by their first bytes and then read from the same stream, once). */
static void test_io__peek_then_read(void **state)
{
	(void)state;
	static const char text[] = "DTiJ and more bytes after the magic";
	size_t tn = sizeof(text) - 1, n;
	char *plain = tmp_file(text), *z = zstd_file(text, tn);
	struct diag d = { 0 };
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, tn), (ssize_t)tn);
	close(fds[1]);
	struct input *ins[] = { input_open(plain, &d), input_open(z, &d), input_open_mem(text, tn, "mem"),
				input_open_fd(fds[0], "pipe", &d) };
	for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
		assert_non_null(ins[i]);
		unsigned char m[8];
		assert_int_equal(input_peek(ins[i], m, 8, &d), 4);   /* at most INPUT_PEEK_MAX */
		assert_memory_equal(m, "DTiJ", 4);
		assert_int_equal(input_peek(ins[i], m, 4, &d), 4);   /* again: nothing consumed */
		char *back = read_all(ins[i], &n);
		assert_int_equal(n, tn);
		assert_memory_equal(back, text, tn);
		free(back);
		input_close(ins[i]);
	}
	/* shorter than the peek */
	struct input *in = input_open_mem("ab", 2, "short");
	unsigned char m[4];
	assert_int_equal(input_peek(in, m, 4, &d), 2);
	input_close(in);
	char *zs = zstd_file("x", 1);
	in = input_open(zs, &d);
	assert_int_equal(input_peek(in, m, 4, &d), 1);
	char *back = read_all(in, &n);
	assert_int_equal(n, 1);
	free(back);
	input_close(in);
	assert_false(d.set);
	unlink(plain);
	unlink(z);
	unlink(zs);
	free(plain);
	free(z);
	free(zs);
}

/* pzstd and the seekable format begin with a skippable frame; zstd -dc skips it. */
static void test_io__zstd_skippable_frame_first(void **state)
{
	(void)state;
	static const char text[] = "version: 1\n";
	char *z = zstd_file(text, sizeof(text) - 1);
	size_t zn, n;
	char *zb = file_bytes(z, &zn);
	for (unsigned variant = 0; variant < 16; variant += 15) {
		/* magic 0x184D2A5V, 4 bytes of content, as pzstd writes; then the frame */
		unsigned char buf[256] = { (unsigned char)(0x50 + variant), 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4 };
		memcpy(buf + 12, zb, zn);
		struct input *in = input_open_mem(buf, 12 + zn, "skippable");
		assert_true(input_is_zstd(in));
		char *back = read_all(in, &n);
		assert_int_equal(n, sizeof(text) - 1);
		assert_memory_equal(back, text, n);
		free(back);
		input_close(in);
		/* and a skippable frame between two frames */
		memcpy(buf, zb, zn);
		memcpy(buf + zn, (unsigned char[]){ 0x5e, 0x2a, 0x4d, 0x18, 0, 0, 0, 0 }, 8);
		memcpy(buf + zn + 8, zb, zn);
		in = input_open_mem(buf, 2 * zn + 8, "between");
		back = read_all(in, &n);
		assert_int_equal(n, 2 * (sizeof(text) - 1));
		free(back);
		input_close(in);
	}
	unlink(z);
	free(z);
	free(zb);
}

/* Errors in compressed input name the byte where the bad part starts: for a checksum, the
 * checksum's first byte (the frame's last 4), not the first bytes zstd was given. */
static void test_io__zstd_error_offsets(void **state)
{
	(void)state;
	char *text = malloc(300000);
	for (int i = 0; i < 300000; i++)
		text[i] = (char)('a' + (i * 7 + i / 1000) % 26);
	char *z = zstd_file(text, 300000);
	size_t zn;
	char *zb = file_bytes(z, &zn);
	zb[zn - 1] ^= 0x55;   /* the checksum */
	struct diag d = { 0 };
	struct input *in = input_open_mem(zb, zn, "ck.zst");
	assert_int_equal(drain(in, &d), -1);
	char expect[200];
	snprintf(expect, sizeof(expect), "ck.zst: byte %zu: corrupt zstd data: the checksum of the frame "
		 "that starts at byte 0 does not match", zn - 4);
	if (strncmp(d.msg, expect, strlen(expect)))
		fail_msg("got '%s', expected '%s...'", d.msg, expect);
	input_close(in);
	zb[zn - 1] ^= 0x55;
	/* Two frames: an error in the second names its frame and a byte past the first. */
	char *two = malloc(2 * zn);
	memcpy(two, zb, zn);
	memcpy(two + zn, zb, zn);
	two[2 * zn - 1] ^= 0x55;
	memset(&d, 0, sizeof(d));
	in = input_open_mem(two, 2 * zn, "two.zst");
	assert_int_equal(drain(in, &d), -1);
	snprintf(expect, sizeof(expect), "two.zst: byte %zu: corrupt zstd data: the checksum of the frame "
		 "that starts at byte %zu", 2 * zn - 4, zn);
	if (strncmp(d.msg, expect, strlen(expect)))
		fail_msg("got '%s', expected '%s...'", d.msg, expect);
	input_close(in);
	/* A damaged block of the second frame: somewhere inside that frame, not at byte 4. */
	memcpy(two, zb, zn);
	memcpy(two + zn, zb, zn);
	for (size_t i = zn + zn / 2; i < zn + zn / 2 + 64; i++)
		two[i] = (char)0xff;
	memset(&d, 0, sizeof(d));
	in = input_open_mem(two, 2 * zn, "two.zst");
	assert_int_equal(drain(in, &d), -1);
	unsigned long long at = 0;
	if (sscanf(d.msg, "two.zst: byte %llu: corrupt zstd data", &at) != 1 || at < zn || at > zn + zn / 2)
		fail_msg("got '%s' (frame 2 is bytes %zu to %zu, damaged at %zu)", d.msg, zn, 2 * zn, zn + zn / 2);
	input_close(in);
	unlink(z);
	free(z);
	free(zb);
	free(two);
	free(text);
}

/* ---- output: issue #8 (files.sh has the command-line side) ---- */

/* Number of entries in DIR whose name contains ".cgjit-tmp." */
static int count_tmp(const char *dir)
{
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL)
		n += strstr(e->d_name, ".cgjit-tmp.") != NULL;
	closedir(dp);
	return n;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void assert_file_is(const char *path, const char *text)
{
	char *s = slurp(path);
	assert_non_null(s);
	assert_string_equal(s, text);
	free(s);
}

static struct output *open_write(const char *path, const char *text)
{
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_non_null(o);
	assert_int_equal(output_write(o, text, strlen(text), &d), 0);
	return o;
}

static void commit_ok(struct output *o)
{
	struct diag d = { 0 };
	assert_int_equal(output_commit(o, &d), 0);
}

/* #8.3: names of 0 and 1 characters (the temporary's name was built 1-2 bytes past its
 * buffer: ASan in check-asan), and "" is an error, not a file in the current directory. */
static void test_io__short_names(void **state)
{
	(void)state;
	char *dir = tmp_dir(), cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(mkdir("d", 0755), 0);
	commit_ok(open_write("a", "A"));
	commit_ok(open_write("d/x", "X"));
	commit_ok(open_write("b.zst", "B"));
	assert_file_is("a", "A");
	assert_file_is("d/x", "X");
	struct diag d = { 0 };
	assert_null(output_open("", &d));
	assert_non_null(strstr(d.msg, "empty file name"));
	struct diag d2 = { 0 };
	assert_null(output_open("d/", &d2));   /* a directory's name: no file "d/" */
	assert_non_null(strstr(d2.msg, "directory"));
	assert_int_equal(count_tmp("."), 0);
	assert_int_equal(count_tmp("d"), 0);
	unlink("a");
	unlink("b.zst");
	unlink("d/x");
	rmdir("d");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	free(dir);
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Each sync_file_range() of output.c, noted here (this program's own definition comes
 * before the C library's when output.o is linked into it); not made: it is a hint. */
static struct {
	int calls;
	off_t from, to;    /* the ranges met end to end, from FROM to TO */
	int gap;           /* one began elsewhere than where the one before ended */
} writeback;

int sync_file_range(int fd, off_t from, off_t n, unsigned int flags)
{
	if (writeback.calls++ == 0)
		writeback.from = writeback.to = from;
	writeback.gap |= from != writeback.to || n <= 0 || flags != SYNC_FILE_RANGE_WRITE;
	writeback.to = from + n;
	(void)fd;
	return 0;
}

/* Block I of the bytes write_20_mib() writes: bytes no compressor shrinks (xorshift). */
static void block_bytes(unsigned char *b, size_t n, int i)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
	for (size_t k = 0; k < n; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[k] = (unsigned char)x;
	}
}

/* 20 MiB written to PATH in writes of 1 MiB and committed; read back (decompressed, for a
 * ".zst" name), the file holds them. */
static void write_20_mib(const char *path)
{
	enum { MIB = 1 << 20, N = 20 };
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_non_null(o);
	unsigned char *block = malloc(MIB), *back = malloc(MIB);
	for (int i = 0; i < N; i++) {
		block_bytes(block, MIB, i);
		assert_int_equal(output_write(o, block, MIB, &d), 0);
	}
	assert_int_equal(output_commit(o, &d), 0);
	struct input *in = input_open(path, &d);
	assert_non_null(in);
	for (int i = 0; i < N; i++) {
		size_t got = 0;
		while (got < MIB) {
			ssize_t r = input_read(in, back + got, MIB - got, &d);
			assert_true(r > 0);
			got += (size_t)r;
		}
		block_bytes(block, MIB, i);
		assert_memory_equal(back, block, MIB);
	}
	assert_int_equal(input_read(in, back, 1, &d), 0);
	input_close(in);
	free(block);
	free(back);
}

/* A temporary that replaces a file has its bytes sent to the disk while it is written,
 * 8 MiB at a time from its start, so that the fsync() before the rename has little left
 * to wait for (README, "Bad input"); a new file is left to the kernel. */
static void test_io__writeback_while_replacing(void **state)
{
	(void)state;
	char *dir = tmp_dir(), p[4200];
	snprintf(p, sizeof(p), "%s/new", dir);
	memset(&writeback, 0, sizeof(writeback));
	write_20_mib(p);
	assert_int_equal(writeback.calls, 0);
	write_20_mib(p);   /* now it replaces the file made above */
	assert_int_equal(writeback.calls, 2);
	assert_int_equal(writeback.gap, 0);
	assert_int_equal(writeback.from, 0);
	assert_int_equal(writeback.to, 16 << 20);
	/* compressed: the ranges are of the bytes written, which these barely shrink */
	snprintf(p, sizeof(p), "%s/new.zst", dir);
	write_20_mib(p);
	memset(&writeback, 0, sizeof(writeback));
	write_20_mib(p);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(writeback.calls, 2);
	assert_int_equal(writeback.gap, 0);
	assert_int_equal(writeback.from, 0);
	assert_true(writeback.to >= 16 << 20 && writeback.to <= st.st_size);
	assert_int_equal(count_tmp(dir), 0);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* #8: a new file gets 0666 minus the umask, a replaced file keeps its mode. */
static void test_io__umask_and_kept_mode(void **state)
{
	(void)state;
	char *dir = tmp_dir(), p[4200];
	mode_t old = umask(077);
	snprintf(p, sizeof(p), "%s/new077", dir);
	commit_ok(open_write(p, "x"));
	assert_int_equal(mode_of(p), 0600);
	umask(002);
	snprintf(p, sizeof(p), "%s/new002", dir);
	commit_ok(open_write(p, "x"));
	assert_int_equal(mode_of(p), 0664);
	umask(022);
	snprintf(p, sizeof(p), "%s/kept0600", dir);
	write_text(p, "old", 0600);
	commit_ok(open_write(p, "new"));
	assert_int_equal(mode_of(p), 0600);
	assert_file_is(p, "new");
	snprintf(p, sizeof(p), "%s/kept0640", dir);
	write_text(p, "old", 0640);
	commit_ok(open_write(p, "new"));
	assert_int_equal(mode_of(p), 0640);
	umask(old);
	assert_int_equal(count_tmp(dir), 0);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* #8.1: when a later output cannot be renamed into place, the earlier ones are undone: a
 * replaced file gets its old contents back, a new one is removed, nothing else is touched. */
static void test_io__commit_all_restores(void **state)
{
	(void)state;
	char *dir = tmp_dir(), a[4200], n[4200], z[4200], c[4200];
	snprintf(a, sizeof(a), "%s/a.elf", dir);
	snprintf(n, sizeof(n), "%s/new.yaml", dir);
	snprintf(z, sizeof(z), "%s/b.zst", dir);
	snprintf(c, sizeof(c), "%s/profile", dir);
	write_text(a, "old a", 0644);
	write_text(z, "old b", 0644);
	struct output *outs[4] = { open_write(a, "new a"), open_write(n, "new n"), open_write(z, "new b"),
				   open_write(c, "new profile") };
	assert_int_equal(mkdir(c, 0755), 0);   /* the profile's rename will fail */
	struct diag d = { 0 };
	assert_int_equal(output_commit_all(outs, 4, &d), -1);
	assert_non_null(strstr(d.msg, "profile"));
	assert_file_is(a, "old a");
	assert_file_is(z, "old b");
	struct stat st;
	assert_int_equal(stat(n, &st), -1);
	assert_int_equal(stat(c, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(count_tmp(dir), 0);
	/* and when all succeed, all are replaced */
	rmdir(c);
	struct output *again[3] = { open_write(a, "new a"), open_write(n, "new n"), open_write(c, "new p") };
	assert_int_equal(output_commit_all(again, 3, &d), 0);
	assert_file_is(a, "new a");
	assert_file_is(n, "new n");
	assert_file_is(c, "new p");
	assert_int_equal(count_tmp(dir), 0);
	unlink(a);
	unlink(n);
	unlink(z);
	unlink(c);
	rmdir(dir);
	free(dir);
}

/* Runs FN(ARG) in a child process; returns its wait status. */
static int in_child(void (*fn)(const char *), const char *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void open_100_then_sigterm(const char *dir)
{
	char p[4200];
	for (int i = 0; i < 100; i++) {
		snprintf(p, sizeof(p), "%s/out%d", dir, i);
		struct diag d = { 0 };
		if (!output_open(p, &d))
			_exit(3);
	}
	raise(SIGTERM);
	_exit(4);
}

/* #8.7: more temporaries than the old table's 64 slots are all removed on a signal. */
static void test_io__many_temporaries_on_signal(void **state)
{
	(void)state;
	char *dir = tmp_dir();
	int st = in_child(open_100_then_sigterm, dir);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_int_equal(count_tmp(dir), 0);
	rmdir(dir);
	free(dir);
}

static void signal_during_commit(const char *dir)
{
	char a[4200], n[4200], p[4200];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(n, sizeof(n), "%s/n", dir);
	snprintf(p, sizeof(p), "%s/p", dir);
	struct output *outs[3] = { open_write(a, "new a"), open_write(n, "new n"), open_write(p, "new p") };
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGTERM);   /* arrives "during" the commit: held until it is over */
	struct diag d = { 0 };
	if (output_commit_all(outs, 3, &d) != -1 || !strstr(d.msg, "signal"))
		_exit(5);
	sigprocmask(SIG_SETMASK, &old, NULL);
	_exit(6);
}

/* #8.7: a signal during the final renames: every output is put back, then it kills. */
static void test_io__signal_during_commit_rolls_back(void **state)
{
	(void)state;
	char *dir = tmp_dir(), a[4200], n[4200], p[4200];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(n, sizeof(n), "%s/n", dir);
	snprintf(p, sizeof(p), "%s/p", dir);
	write_text(a, "old a", 0644);
	write_text(p, "old p", 0644);
	int st = in_child(signal_during_commit, dir);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_file_is(a, "old a");
	assert_file_is(p, "old p");
	assert_int_equal(access(n, F_OK), -1);
	assert_int_equal(count_tmp(dir), 0);
	unlink(a);
	unlink(p);
	rmdir(dir);
	free(dir);
}

static struct output *volatile oom_out;   /* a root for LeakSanitizer at exit */

static void open_then_oom(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/out", dir);
	oom_out = open_write(p, "partial");
	xalloc_limit(1000);
	void *big = xmalloc(4096);   /* exits 1 */
	(void)big;
	_exit(7);
}

/* #8.6: out of memory exits 1 and removes the temporaries (exit() runs io's cleanup). */
static void test_io__oom_removes_temporaries(void **state)
{
	(void)state;
	char *dir = tmp_dir();
	int st = in_child(open_then_oom, dir);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_int_equal(count_tmp(dir), 0);
	assert_int_equal(access(dir, F_OK), 0);
	rmdir(dir);
	free(dir);
}

static void create_named(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	write_text(p, "stale", 0644);
}

static int exists_in(const char *dir, const char *name)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* #8.7: a temporary's name holds its PID; one of a dead process that nobody holds locked
 * is removed by the next output in that directory, every other look-alike stays. */
static void test_io__stale_temporaries(void **state)
{
	(void)state;
	char *dir = tmp_dir(), name[6][64], p[4200];
	/* a PID that has just died */
	fflush(NULL);
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(name[0], 64, ".cgjit-tmp.%ld.AAAAAA", (long)dead);      /* stale: removed */
	snprintf(name[1], 64, ".cgjit-tmp.%ld.BBBBBB.old", (long)dead);  /* stale backup: removed */
	snprintf(name[2], 64, ".cgjit-tmp.%ld.CCCCCC", (long)dead);      /* locked: stays */
	snprintf(name[3], 64, ".cgjit-tmp.1.DDDDDD");                    /* PID alive: stays */
	snprintf(name[4], 64, ".cgjit-tmp.%ld.EEEEEE", (long)dead);      /* a symlink: stays */
	snprintf(name[5], 64, ".cgjit-tmp.XXXXXX");                      /* no PID: stays */
	for (int i = 0; i < 6; i++)
		if (i != 4)
			create_named(dir, name[i]);
	snprintf(p, sizeof(p), "%s/%s", dir, name[4]);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/%s", dir, name[2]);
	int lock = open(p, O_RDONLY);
	assert_int_equal(flock(lock, LOCK_EX), 0);
	snprintf(p, sizeof(p), "%s/out", dir);
	struct output *o = open_write(p, "x");
	assert_false(exists_in(dir, name[0]));
	assert_false(exists_in(dir, name[1]));
	for (int i = 2; i < 6; i++)
		assert_true(exists_in(dir, name[i]));
	/* ours is named .cgjit-tmp.<our PID>. */
	char mine[64];
	snprintf(mine, sizeof(mine), ".cgjit-tmp.%ld.", (long)getpid());
	DIR *dp = opendir(dir);
	int found = 0;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL)
		found += !strncmp(e->d_name, mine, strlen(mine));
	closedir(dp);
	assert_int_equal(found, 1);
	commit_ok(o);
	close(lock);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* #8.2: descriptor paths and symbolic links to them are written through the descriptor
 * (offset and O_APPEND shared), never replaced; a link to a regular file is followed. */
static void test_io__descriptor_paths_and_links(void **state)
{
	(void)state;
	char *dir = tmp_dir(), f[4200], l[4200], p[4200], t[4200];
	snprintf(f, sizeof(f), "%s/redirect", dir);
	write_text(f, "head\n", 0644);
	int fd = open(f, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	snprintf(p, sizeof(p), "/dev/fd/%d", fd);
	commit_ok(open_write(p, "one\n"));
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	commit_ok(open_write(p, "two\n"));
	snprintf(l, sizeof(l), "%s/link", dir);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	assert_int_equal(symlink(p, l), 0);
	commit_ok(open_write(l, "three\n"));
	close(fd);
	assert_file_is(f, "head\none\ntwo\nthree\n");
	struct stat st;
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_true(output_path_in_place("-"));
	assert_true(output_path_in_place("/dev/stdout"));
	assert_true(output_path_in_place("/dev/null"));
	assert_false(output_path_in_place(f));
	/* a link to a regular file: the file is replaced, the link stays */
	snprintf(t, sizeof(t), "%s/target", dir);
	write_text(t, "old", 0600);
	unlink(l);
	assert_int_equal(symlink("target", l), 0);
	commit_ok(open_write(l, "new"));
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_file_is(t, "new");
	assert_int_equal(mode_of(t), 0600);
	assert_int_equal(count_tmp(dir), 0);
	unlink(l);
	unlink(t);
	unlink(f);
	rmdir(dir);
	free(dir);
}

/* #8.11: outputs are compared with inputs by device and inode. */
static void test_io__clashes(void **state)
{
	(void)state;
	char *dir = tmp_dir(), in[4200], other[4200], sl[4200], hl[4200], dot[4200], n[4200];
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(sl, sizeof(sl), "%s/symlink", dir);
	snprintf(hl, sizeof(hl), "%s/hardlink", dir);
	snprintf(dot, sizeof(dot), "%s/./in", dir);
	snprintf(n, sizeof(n), "%s/new", dir);
	write_text(in, "input", 0644);
	write_text(other, "other", 0644);
	assert_int_equal(symlink("in", sl), 0);
	assert_int_equal(link(in, hl), 0);
	const char *inputs[] = { other, in };
	const char *spellings[] = { in, dot, sl, hl };
	for (int i = 0; i < 4; i++) {
		struct diag d = { 0 };
		struct output *o = open_write(spellings[i], "x");
		assert_true(output_same_file(o, in));
		assert_int_equal(output_check_clashes(&o, 1, inputs, 2, &d), -1);
		assert_non_null(strstr(d.msg, "is the same file as the input"));
		output_abort(o);
	}
	struct diag d = { 0 };
	struct output *two[2] = { open_write(n, "a"), open_write(n, "b") };
	assert_false(output_same_file(two[0], in));
	assert_int_equal(output_check_clashes(two, 1, inputs, 2, &d), 0);
	assert_int_equal(output_check_clashes(two, 2, inputs, 2, &d), -1);
	assert_non_null(strstr(d.msg, "is the same file as the output"));
	output_abort(two[0]);
	output_abort(two[1]);
	assert_file_is(in, "input");
	assert_int_equal(count_tmp(dir), 0);
	unlink(in);
	unlink(other);
	unlink(sl);
	unlink(hl);
	rmdir(dir);
	free(dir);
}

/* #19.1: in a shared directory (sticky, world-writable) a link, file or FIFO of another user
 * is refused, in the last component or on the way; one of this user or of the directory's
 * owner is followed or replaced as anywhere else (the kernel's protected_symlinks rule).
 * Needs root to give names to another user (uid 65534). */
static void expect_refused(const char *path, const char *what)
{
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_null(o);
	assert_non_null(strstr(d.msg, what));
	assert_non_null(strstr(d.msg, "(uid 65534) in the shared directory"));
}

static void test_io__shared_directories(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char *top = tmp_dir(), sh[512], secret[512], l[4200], p[4200], f[4200], q[4200];
	snprintf(sh, sizeof(sh), "%s/shared", top);
	snprintf(secret, sizeof(secret), "%s/secret", top);
	assert_int_equal(mkdir(sh, 0755), 0);
	assert_int_equal(chmod(sh, 01777), 0);
	write_text(secret, "secret", 0600);
	/* another user's link as the output, and as a directory on the way */
	snprintf(l, sizeof(l), "%s/out", sh);
	assert_int_equal(symlink(secret, l), 0);
	assert_int_equal(lchown(l, 65534, 65534), 0);
	expect_refused(l, "out: is a symbolic link of another user");
	snprintf(p, sizeof(p), "%s/d", sh);
	assert_int_equal(symlink(top, p), 0);
	assert_int_equal(lchown(p, 65534, 65534), 0);
	snprintf(q, sizeof(q), "%s/d/new", sh);
	expect_refused(q, "d' is a symbolic link of another user");
	struct diag d = { 0 };
	assert_int_equal(output_check_links(q, &d), -1);
	/* ... also reached through a link of this user's elsewhere */
	snprintf(f, sizeof(f), "%s/mine", top);
	assert_int_equal(symlink(p, f), 0);
	snprintf(q, sizeof(q), "%s/mine/new", top);
	expect_refused(q, "d' is a symbolic link of another user");
	unlink(f);
	/* another user's regular file and FIFO are neither replaced nor written to */
	snprintf(f, sizeof(f), "%s/file", sh);
	write_text(f, "theirs", 0666);
	assert_int_equal(chown(f, 65534, 65534), 0);
	expect_refused(f, "file: belongs to another user");
	snprintf(q, sizeof(q), "%s/fifo", sh);
	assert_int_equal(mkfifo(q, 0666), 0);
	assert_int_equal(chown(q, 65534, 65534), 0);
	expect_refused(q, "fifo: belongs to another user");
	assert_file_is(secret, "secret");
	assert_file_is(f, "theirs");
	assert_int_equal(count_tmp(sh), 0);
	assert_int_equal(count_tmp(top), 0);
	/* this user's link is followed: the file it leads to is replaced, the link stays */
	assert_int_equal(lchown(l, 0, 0), 0);
	commit_ok(open_write(l, "mine"));
	assert_file_is(secret, "mine");
	/* the directory's owner's link too (it could replace anything there anyway) */
	assert_int_equal(chown(sh, 65534, 65534), 0);
	assert_int_equal(lchown(l, 65534, 65534), 0);
	commit_ok(open_write(l, "owner's"));
	assert_file_is(secret, "owner's");
	struct stat st;
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* and not sticky, not shared: as anywhere */
	assert_int_equal(chown(sh, 0, 0), 0);
	assert_int_equal(chmod(sh, 0777), 0);
	commit_ok(open_write(l, "plain"));
	assert_file_is(secret, "plain");
	unlink(l);
	unlink(p);
	unlink(f);
	unlink(q);
	rmdir(sh);
	unlink(secret);
	rmdir(top);
	free(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io__zstd_round_trip),
		cmocka_unit_test(test_io__plain_short_and_abort),
		cmocka_unit_test(test_io__peek_then_read),
		cmocka_unit_test(test_io__zstd_skippable_frame_first),
		cmocka_unit_test(test_io__zstd_error_offsets),
		cmocka_unit_test(test_io__short_names),
		cmocka_unit_test(test_io__umask_and_kept_mode),
		cmocka_unit_test(test_io__writeback_while_replacing),
		cmocka_unit_test(test_io__commit_all_restores),
		cmocka_unit_test(test_io__many_temporaries_on_signal),
		cmocka_unit_test(test_io__signal_during_commit_rolls_back),
		cmocka_unit_test(test_io__oom_removes_temporaries),
		cmocka_unit_test(test_io__stale_temporaries),
		cmocka_unit_test(test_io__descriptor_paths_and_links),
		cmocka_unit_test(test_io__clashes),
		cmocka_unit_test(test_io__shared_directories),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
