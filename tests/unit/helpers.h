/* helpers.h - shared by the cmocka unit tests: temporary files with given bytes. */
#ifndef CGJIT_TEST_HELPERS_H
#define CGJIT_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Writes LEN bytes of DATA to a new temporary file; returns its malloc'd path. */
static inline char *tmp_file_n(const char *data, size_t len)
{
	char *path = strdup("/tmp/cgjit-test-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

static inline char *tmp_file(const char *data)
{
	return tmp_file_n(data, strlen(data));
}

/* A new empty temporary directory; returns its malloc'd path. */
static inline char *tmp_dir(void)
{
	char *path = strdup("/tmp/cgjit-test-XXXXXX");
	if (!mkdtemp(path))
		abort();
	return path;
}

/* Reads a whole file into a malloc'd NUL-terminated string. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		abort();
	s[n] = '\0';
	fclose(f);
	return s;
}

/* A child that copies the FIFO at FIFO into the file COPY 64 KiB at a time, 2 ms after each
 * (a slow reader, so that a writer waits for it), exiting 0 when the FIFO ends; it is gone
 * after 120 s if nobody opens the FIFO. Returns its pid (-1 if fork() failed). */
static inline pid_t spawn_slow_fifo_reader(const char *fifo, const char *copy)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	alarm(120);
	FILE *in = fopen(fifo, "rb"), *out = fopen(copy, "wb");
	static char buf[64 << 10];
	size_t n;
	if (!in || !out)
		_exit(1);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (fwrite(buf, 1, n, out) != n)
			_exit(1);
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	_exit(fclose(out) == 0 ? 0 : 1);
}

/* Waits for the child PID: its exit status, or -1 if it did not exit (a signal). */
static inline int child_exit_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The bytes of the file COPY that differ from PATTERN(offset); their count in *GOT (-1 for
 * no file). */
static inline size_t copy_mismatches(const char *copy, char (*pattern)(size_t), size_t *got)
{
	FILE *f = fopen(copy, "rb");
	size_t bad = 0;
	int c;
	*got = (size_t)-1;
	if (!f)
		return 0;
	*got = 0;
	while ((c = getc(f)) != EOF)
		bad += (char)c != pattern((*got)++);
	fclose(f);
	return bad;
}

#endif
