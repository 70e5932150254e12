/* io_zstd.c - zstd streams over file descriptors (libzstd's streaming API). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "diag.h"
#include "io_zstd.h"
#include "xalloc.h"

struct zstd_in {
	int fd;
	const char *name;
	ZSTD_DCtx *ctx;
	unsigned char *buf;
	size_t cap;
	ZSTD_inBuffer in;
	size_t last_ret;   /* 0 when the last frame ended exactly */
	int eof;
	unsigned long long consumed;
};

int zstd_is_magic(const unsigned char *p)
{
	return p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
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
	z->last_ret = 1;
	return z;
}

ssize_t zstd_in_read(struct zstd_in *z, void *buf, size_t n, struct diag *d)
{
	ZSTD_outBuffer out = { buf, n, 0 };
	while (out.pos == 0) {
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
				return diag_at(d, z->name, 0, "read error: %s", strerror(errno));
			if (r == 0) {
				z->eof = 1;
				continue;
			}
			z->in.size = (size_t)r;
			z->in.pos = 0;
		}
		size_t before = z->in.pos;
		size_t ret = ZSTD_decompressStream(z->ctx, &out, &z->in);
		z->consumed += z->in.pos - before;
		if (ZSTD_isError(ret))
			return diag_byte(d, z->name, z->consumed, "corrupt zstd data: %s",
					 ZSTD_getErrorName(ret));
		z->last_ret = ret;
	}
	if (out.pos == 0 && z->eof && z->last_ret != 0)
		return diag_byte(d, z->name, z->consumed,
				 "zstd stream cut short: the last frame is incomplete");
	return (ssize_t)out.pos;
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
