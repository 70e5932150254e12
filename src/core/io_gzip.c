/* io_gzip.c - gzip streams over file descriptors (zlib's inflate with the gzip wrapper):
 * the profiles Xdebug 3 writes with xdebug.use_compression=1, and any `gzip`ed file. Read
 * exactly as io_zstd.c reads zstd (input.c sniffs the magic, reads once); owns the zlib
 * state and its input buffer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/diag.h"
#include "core/io_gzip.h"
#include "core/xalloc.h"

enum { GZIP_BUF = 1 << 16 };

struct gzip_in {
	int fd;
	const char *name;
	z_stream zs;
	unsigned char *buf;
	size_t cap;
	int in_member;         /* a member has begun and not ended */
	int eof;
	uint64_t consumed;     /* compressed bytes before buf[0] */
	uint64_t member_start; /* where the current member began */
	unsigned char peek[GZIP_IN_PEEK_MAX];   /* decompressed bytes read ahead by gzip_in_peek */
	size_t npeek, peek_pos;
};

int gzip_is_magic(const unsigned char *p)
{
	return p[0] == 0x1f && p[1] == 0x8b;
}

struct gzip_in *gzip_in_new(int fd, const unsigned char *prefix, size_t n, const char *name)
{
	struct gzip_in *z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->name = name;
	/* 16 + MAX_WBITS: the gzip wrapper only (header, CRC-32 and length checked by zlib). */
	if (inflateInit2(&z->zs, 16 + MAX_WBITS) != Z_OK) {
		free(z);
		return NULL;
	}
	z->cap = n > GZIP_BUF ? n : GZIP_BUF;
	z->buf = xmalloc(z->cap);
	memcpy(z->buf, prefix, n);
	z->zs.next_in = z->buf;
	z->zs.avail_in = (uInt)n;
	return z;
}

/* The compressed offset of zlib's next input byte. */
static uint64_t at(const struct gzip_in *z)
{
	return z->consumed + (uint64_t)(z->zs.next_in - z->buf);
}

static int refill(struct gzip_in *z, struct diag *d)
{
	z->consumed = at(z);
	ssize_t r = 0;   /* fd -1: everything came as the prefix (input_open_mem) */
	while (z->fd >= 0 && (r = read(z->fd, z->buf, z->cap)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return diag_byte(d, z->name, z->consumed, "read error: %s", strerror(errno));
	if (r == 0)
		z->eof = 1;
	z->zs.next_in = z->buf;
	z->zs.avail_in = (uInt)r;
	return 0;
}

/* Between members: the next bytes must begin another (gzip -dc reads concatenated members
 * whole). Returns 1 to go on, 0 at the end, -1 with D set. */
static int next_member(struct gzip_in *z, struct diag *d)
{
	while (z->zs.avail_in < 2 && !z->eof) {
		/* Keep a lone first byte: move it to the front before reading after it. */
		unsigned char keep = z->zs.avail_in ? z->zs.next_in[0] : 0;
		size_t k = z->zs.avail_in;
		z->consumed = at(z);
		z->buf[0] = keep;
		ssize_t r;
		if (z->fd < 0)
			r = 0;
		else
			do
				r = read(z->fd, z->buf + k, z->cap - k);
			while (r < 0 && errno == EINTR);
		if (r < 0)
			return diag_byte(d, z->name, z->consumed, "read error: %s", strerror(errno));
		if (r == 0)
			z->eof = 1;
		z->zs.next_in = z->buf;
		z->zs.avail_in = (uInt)(k + (size_t)r);
	}
	if (z->zs.avail_in == 0)
		return 0;
	if (z->zs.avail_in < 2 || !gzip_is_magic(z->zs.next_in))
		return diag_byte(d, z->name, at(z),
				 "not gzip data after the member that ends here (trailing garbage)");
	inflateReset(&z->zs);
	return 1;
}

static ssize_t inflate_some(struct gzip_in *z, unsigned char *out, size_t n, struct diag *d)
{
	z->zs.next_out = out;
	z->zs.avail_out = (uInt)n;
	while (z->zs.avail_out == n) {
		if (!z->in_member) {
			int m = next_member(z, d);
			if (m <= 0)
				return m;
			z->in_member = 1;
			z->member_start = at(z);
		}
		if (z->zs.avail_in == 0 && !z->eof && refill(z, d) < 0)
			return -1;
		/* Called even with no input left: zlib may hold output a full buffer cut off. */
		int ret = inflate(&z->zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			z->in_member = 0;
			continue;
		}
		if (ret == Z_MEM_ERROR)
			return diag_byte(d, z->name, at(z), "out of memory while decompressing gzip data");
		if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR)
			return diag_byte(d, z->name, at(z), "corrupt gzip data (member at byte %llu): %s",
					 (unsigned long long)z->member_start,
					 z->zs.msg ? z->zs.msg : zError(ret));
		if (ret == Z_BUF_ERROR && z->eof)
			break;   /* no progress and no more input */
	}
	if (z->zs.avail_out == n && z->in_member)
		return diag_byte(d, z->name, at(z),
				 "gzip stream cut short: the member that starts at byte %llu is incomplete",
				 (unsigned long long)z->member_start);
	return (ssize_t)(n - z->zs.avail_out);
}

ssize_t gzip_in_read(struct gzip_in *z, void *buf, size_t n, struct diag *d)
{
	if (n == 0)   /* inflate_some() loops until it makes output */
		return 0;
	if (z->peek_pos < z->npeek) {
		size_t k = z->npeek - z->peek_pos < n ? z->npeek - z->peek_pos : n;
		memcpy(buf, z->peek + z->peek_pos, k);
		z->peek_pos += k;
		return (ssize_t)k;
	}
	if (n > (1u << 30))
		n = 1u << 30;   /* zlib counts in uInt */
	return inflate_some(z, buf, n, d);
}

ssize_t gzip_in_peek(struct gzip_in *z, void *buf, size_t n, struct diag *d)
{
	if (n > GZIP_IN_PEEK_MAX)
		n = GZIP_IN_PEEK_MAX;
	while (z->npeek < n) {
		ssize_t r = inflate_some(z, z->peek + z->npeek, n - z->npeek, d);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		z->npeek += (size_t)r;
	}
	size_t k = z->npeek < n ? z->npeek : n;
	memcpy(buf, z->peek, k);
	return (ssize_t)k;
}

void gzip_in_free(struct gzip_in *z)
{
	if (!z)
		return;
	inflateEnd(&z->zs);
	free(z->buf);
	free(z);
}
