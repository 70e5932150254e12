/* input.c - the profile and the symbol files as byte streams: a path, stdin, a descriptor
 * or memory, plain, zstd- or gzip-compressed, told apart by the first bytes (never by the
 * name) and read once, so that a pipe or a FIFO works as a file does. The first layer of
 * docs/design.md's data flow; owns the descriptor it opened and the decompressor. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/io_gzip.h"
#include "core/io_zstd.h"
#include "core/xalloc.h"

struct input {
	char *name;
	int fd;
	int own_fd;
	const unsigned char *mem;    /* input_open_mem: the bytes and how many are left */
	size_t mem_left;
	struct zstd_in *z;
	struct gzip_in *gz;
	unsigned char prefix[4];
	size_t prefix_len, prefix_pos;
};

static ssize_t read_fd(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

struct input *input_open(const char *path, struct diag *d)
{
	int fd = 0;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			diag_at(d, path, 0, "cannot open: %s", strerror(errno));
			return NULL;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			diag_at(d, path, 0, "is a directory, expected a file");
			return NULL;
		}
	}
	return input_open_fd(fd, path, d);
}


struct input *input_open_mem(const void *data, size_t n, const char *name)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(name, strlen(name));
	in->fd = -1;
	in->mem = data;
	in->mem_left = n;
	if (n >= 4 && zstd_is_magic(data)) {
		/* zstd reads from a descriptor: hand it the bytes through a pipe-free path by
		 * giving the whole buffer as the prefix. */
		in->z = zstd_in_new(-1, data, n, in->name);
		in->mem_left = 0;
	} else if (n >= 2 && gzip_is_magic(data)) {
		in->gz = gzip_in_new(-1, data, n, in->name);
		in->mem_left = in->gz ? 0 : n;
	}
	return in;
}

ssize_t input_read(struct input *in, void *buf, size_t n, struct diag *d)
{
	if (in->gz)
		return gzip_in_read(in->gz, buf, n, d);
	if (in->mem && !in->z) {
		size_t k = n < in->mem_left ? n : in->mem_left;
		memcpy(buf, in->mem, k);
		in->mem += k;
		in->mem_left -= k;
		return (ssize_t)k;
	}
	if (in->z)
		return zstd_in_read(in->z, buf, n, d);
	if (in->prefix_pos < in->prefix_len) {
		size_t k = in->prefix_len - in->prefix_pos;
		if (k > n)
			k = n;
		memcpy(buf, in->prefix + in->prefix_pos, k);
		in->prefix_pos += k;
		return (ssize_t)k;
	}
	ssize_t r = read_fd(in->fd, buf, n);
	if (r < 0)
		return diag_at(d, in->name, 0, "read error: %s", strerror(errno));
	return r;
}

const char *input_name(const struct input *in)
{
	return in->name;
}

size_t input_name_stem(const char *name, size_t len)
{
	if (len > 4 && !memcmp(name + len - 4, ".zst", 4))
		return len - 4;
	if (len > 3 && !memcmp(name + len - 3, ".gz", 3))
		return len - 3;
	return len;
}

int input_position(const struct input *in, uint64_t *done, uint64_t *size)
{
	struct stat st;
	if (in->mem || in->fd < 0 || fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	off_t at = lseek(in->fd, 0, SEEK_CUR);
	if (at < 0)
		return -1;
	*done = (uint64_t)at;
	*size = (uint64_t)st.st_size;
	return 0;
}

int input_is_zstd(const struct input *in)
{
	return in->z != NULL;
}

int input_is_gzip(const struct input *in)
{
	return in->gz != NULL;
}

int input_is_plain_file(const struct input *in)
{
	struct stat st;
	return !in->mem && !in->z && !in->gz && in->fd >= 0 && fstat(in->fd, &st) == 0 &&
	       S_ISREG(st.st_mode);
}

void input_close(struct input *in)
{
	if (!in)
		return;
	zstd_in_free(in->z);
	gzip_in_free(in->gz);
	if (in->own_fd)
		close(in->fd);
	free(in->name);
	free(in);
}

/* ---- one open per input: sniffed and read from the same stream ----
 * (a pipe, FIFO or stdin can be read only once; input_open() is open() + this) */

struct input *input_open_fd(int fd, const char *name, struct diag *d)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(name, strlen(name));
	in->fd = fd;
	in->own_fd = fd != 0;   /* stdin stays open */
	while (in->prefix_len < 4) {
		ssize_t r = read_fd(fd, in->prefix + in->prefix_len, 4 - in->prefix_len);
		if (r < 0) {
			diag_at(d, name, 0, "read error: %s", strerror(errno));
			input_close(in);
			return NULL;
		}
		if (r == 0)
			break;
		in->prefix_len += (size_t)r;
	}
	if (in->prefix_len == 4 && zstd_is_magic(in->prefix)) {
		in->z = zstd_in_new(fd, in->prefix, 4, in->name);
		if (!in->z) {
			diag_at(d, name, 0, "cannot create a zstd decompression context");
			input_close(in);
			return NULL;
		}
		in->prefix_len = 0;
	} else if (in->prefix_len >= 2 && gzip_is_magic(in->prefix)) {
		in->gz = gzip_in_new(fd, in->prefix, in->prefix_len, in->name);
		if (!in->gz) {
			diag_at(d, name, 0, "cannot create a gzip decompression context");
			input_close(in);
			return NULL;
		}
		in->prefix_len = 0;
	}
	return in;
}

ssize_t input_peek(struct input *in, void *buf, size_t n, struct diag *d)
{
	if (n > INPUT_PEEK_MAX)
		n = INPUT_PEEK_MAX;
	if (in->z)
		return zstd_in_peek(in->z, buf, n, d);
	if (in->gz)
		return gzip_in_peek(in->gz, buf, n, d);
	/* Plain: the first bytes are the magic-sniffing prefix (or the memory itself). */
	const unsigned char *p = in->mem ? in->mem : in->prefix + in->prefix_pos;
	size_t have = in->mem ? in->mem_left : in->prefix_len - in->prefix_pos;
	size_t k = n < have ? n : have;
	memcpy(buf, p, k);
	return (ssize_t)k;
}
