/* io_zstd.c - zstd streams over file descriptors (libzstd's streaming API). */
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "core/diag.h"
#include "core/io_zstd.h"
#include "core/xalloc.h"

struct zstd_in {
	int fd;
	const char *name;
	ZSTD_DCtx *ctx;
	unsigned char *buf;
	size_t cap;
	ZSTD_inBuffer in;
	int in_frame;          /* a frame has begun and not ended */
	size_t hint;           /* ... bytes zstd needs to finish the unit it is loading */
	int eof;
	uint64_t consumed;     /* compressed bytes zstd has taken */
	uint64_t frame_start;  /* where the current frame began */
	uint64_t unit_start;   /* where the unit (header, block, checksum) being loaded began */
	unsigned char peek[ZSTD_IN_PEEK_MAX];   /* decompressed bytes read ahead by zstd_in_peek */
	size_t npeek, peek_pos;
};

int zstd_is_magic(const unsigned char *p)
{
	uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	/* A stream may begin with a skippable frame (pzstd's size header, the seekable
	 * format's): zstd -dc skips it, and so does ZSTD_decompressStream. */
	return m == ZSTD_MAGICNUMBER || (m & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

struct zstd_in *zstd_in_new(int fd, const unsigned char *prefix, size_t n, const char *name)
{
	struct zstd_in *z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->name = name;
	z->ctx = ZSTD_createDCtx();
	if (!z->ctx) {
		free(z);
		return NULL;
	}
	z->cap = ZSTD_DStreamInSize();
	if (z->cap < n)
		z->cap = n;
	z->buf = xmalloc(z->cap);
	memcpy(z->buf, prefix, n);
	z->in.src = z->buf;
	z->in.size = n;
	z->in.pos = 0;
	return z;
}

/* Bytes given to zstd at a frame's start: its magic and header descriptor, from which zstd
 * learns how long the header is. */
enum { FRAME_START_FEED = 5 };

static ssize_t corrupt(struct zstd_in *z, size_t ret, size_t given, struct diag *d)
{
	/* zstd checks the checksum once it holds all of its 4 bytes, which end the frame and
	 * the bytes given (never more than the unit it asked for): they start 4 before. */
	if (ZSTD_getErrorCode(ret) == ZSTD_error_checksum_wrong)
		return diag_byte(d, z->name, z->consumed + given - 4,
				 "corrupt zstd data: the checksum of the frame that starts at byte %llu "
				 "does not match its decompressed data", (unsigned long long)z->frame_start);
	return diag_byte(d, z->name, z->unit_start, "corrupt zstd data (frame at byte %llu): %s",
			 (unsigned long long)z->frame_start, ZSTD_getErrorName(ret));
}

/* Gives zstd at most the bytes it asked for (its hint: the rest of the header, block or
 * checksum it is loading), so that every byte it has taken is counted before an error and
 * an error names the unit it lies in, not the start of the buffer. */
static ssize_t decompress(struct zstd_in *z, ZSTD_outBuffer *out, struct diag *d)
{
	while (out->pos == 0) {
		if (z->in.pos == z->in.size) {
			if (z->eof)
				break;
			if (z->fd < 0) {   /* everything came as the prefix (input_open_mem) */
				z->eof = 1;
				continue;
			}
			ssize_t r;
			do
				r = read(z->fd, z->buf, z->cap);
			while (r < 0 && errno == EINTR);
			if (r < 0)
				return diag_byte(d, z->name, z->consumed, "read error: %s", strerror(errno));
			if (r == 0) {
				z->eof = 1;
				continue;
			}
			z->in.size = (size_t)r;
			z->in.pos = 0;
		}
		if (!z->in_frame)
			z->frame_start = z->unit_start = z->consumed;
		size_t want = z->in_frame ? z->hint : FRAME_START_FEED;
		size_t avail = z->in.size - z->in.pos;
		size_t give = want < avail ? want : avail;
		ZSTD_inBuffer part = { z->in.src, z->in.pos + give, z->in.pos };
		size_t ret = ZSTD_decompressStream(z->ctx, out, &part);
		if (ZSTD_isError(ret))
			return corrupt(z, ret, give, d);
		size_t took = part.pos - z->in.pos;
		z->in.pos = part.pos;
		z->consumed += took;
		if (z->in_frame && took == want)   /* the units asked for are complete */
			z->unit_start = z->consumed;
		z->hint = ret;
		z->in_frame = ret != 0;
	}
	if (out->pos == 0 && z->eof && z->in_frame)
		return diag_byte(d, z->name, z->consumed,
				 "zstd stream cut short: the last frame is incomplete");
	return (ssize_t)out->pos;
}

ssize_t zstd_in_read(struct zstd_in *z, void *buf, size_t n, struct diag *d)
{
	if (z->peek_pos < z->npeek) {
		size_t k = z->npeek - z->peek_pos < n ? z->npeek - z->peek_pos : n;
		memcpy(buf, z->peek + z->peek_pos, k);
		z->peek_pos += k;
		return (ssize_t)k;
	}
	ZSTD_outBuffer out = { buf, n, 0 };
	return decompress(z, &out, d);
}

ssize_t zstd_in_peek(struct zstd_in *z, void *buf, size_t n, struct diag *d)
{
	if (n > ZSTD_IN_PEEK_MAX)
		n = ZSTD_IN_PEEK_MAX;
	while (z->npeek < n) {
		ZSTD_outBuffer out = { z->peek + z->npeek, n - z->npeek, 0 };
		ssize_t r = decompress(z, &out, d);
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

void zstd_in_free(struct zstd_in *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->ctx);
	free(z->buf);
	free(z);
}

struct zstd_out {
	int fd;
	const char *name;
	ZSTD_CCtx *ctx;
	unsigned char *buf;
	size_t cap;
};

int write_all(int fd, const void *p, size_t n, const char *name, struct diag *d)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return diag_at(d, name, 0, "write error: %s", strerror(errno));
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

struct zstd_out *zstd_out_new(int fd, const char *name)
{
	struct zstd_out *z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->name = name;
	z->ctx = ZSTD_createCCtx();
	if (!z->ctx) {
		free(z);
		return NULL;
	}
	/* Level 3 (zstd's default) keeps up with the rewriter; -19 would dominate the run time. */
	ZSTD_CCtx_setParameter(z->ctx, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(z->ctx, ZSTD_c_checksumFlag, 1);
	z->cap = ZSTD_CStreamOutSize();
	z->buf = xmalloc(z->cap);
	return z;
}

static int pump(struct zstd_out *z, ZSTD_inBuffer *in, ZSTD_EndDirective mode, struct diag *d)
{
	for (;;) {
		ZSTD_outBuffer out = { z->buf, z->cap, 0 };
		size_t ret = ZSTD_compressStream2(z->ctx, &out, in, mode);
		if (ZSTD_isError(ret))
			return diag_at(d, z->name, 0, "zstd compression failed: %s", ZSTD_getErrorName(ret));
		if (out.pos && write_all(z->fd, z->buf, out.pos, z->name, d) < 0)
			return -1;
		if (mode == ZSTD_e_end ? ret == 0 : in->pos == in->size)
			return 0;
	}
}

int zstd_out_write(struct zstd_out *z, const void *p, size_t n, struct diag *d)
{
	ZSTD_inBuffer in = { p, n, 0 };
	return pump(z, &in, ZSTD_e_continue, d);
}

int zstd_out_finish(struct zstd_out *z, struct diag *d)
{
	ZSTD_inBuffer in = { NULL, 0, 0 };
	return pump(z, &in, ZSTD_e_end, d);
}

void zstd_out_free(struct zstd_out *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->ctx);
	free(z->buf);
	free(z);
}
