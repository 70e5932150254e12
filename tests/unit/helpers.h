/* helpers.h - shared by the cmocka unit tests: temporary files with given bytes. */
#ifndef CGJIT_TEST_HELPERS_H
#define CGJIT_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#endif
