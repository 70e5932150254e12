/* io_gzip.h - streaming gzip decompression (zlib's inflate); the only user of <zlib.h>.
 * Input only: cgjit writes plain text or zstd. */
#ifndef CGJIT_IO_GZIP_H
#define CGJIT_IO_GZIP_H

#include <stddef.h>
#include <sys/types.h>

struct diag;
struct gzip_in;

/* 1 if the two bytes at P are gzip's magic (1f 8b, RFC 1952 section 2.3.1). */
int gzip_is_magic(const unsigned char *p);

/* Decompresses from FD (-1: PREFIX is the whole stream); PREFIX (N bytes, already read from
 * FD) comes first. NAME is for messages and must outlive the stream. Returns NULL when zlib
 * cannot allocate its state. */
struct gzip_in *gzip_in_new(int fd, const unsigned char *prefix, size_t n, const char *name);
/* Returns decompressed bytes, 0 at the end of the last complete member (members
 * concatenated are read one after the other, as gzip -dc does), -1 with D set: "NAME: byte
 * N: ..." with N the compressed offset where zlib found the error (and the member's start),
 * or the end of a stream cut short, or bytes after a member that begin no other. */
ssize_t gzip_in_read(struct gzip_in *z, void *buf, size_t n, struct diag *d);
enum { GZIP_IN_PEEK_MAX = 16 };
/* Copies the first min(N, GZIP_IN_PEEK_MAX) decompressed bytes into BUF without consuming
 * them: gzip_in_read() returns them again. Only before the first gzip_in_read(). Returns
 * the count (less only at the end of the stream), or -1 with D set. */
ssize_t gzip_in_peek(struct gzip_in *z, void *buf, size_t n, struct diag *d);
void gzip_in_free(struct gzip_in *z);

#endif
