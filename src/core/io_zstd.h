/* io_zstd.h - streaming zstd decompression and compression; the only user of <zstd.h>. */
#ifndef CGJIT_IO_ZSTD_H
#define CGJIT_IO_ZSTD_H

#include <stddef.h>
#include <sys/types.h>

struct diag;
struct zstd_in;
struct zstd_out;

/* 1 if the four bytes at P begin a zstd frame (magic 0xFD2FB528, little-endian) or a
 * skippable frame (0x184D2A50 to 0x184D2A5F), with which pzstd and the seekable format
 * begin. */
int zstd_is_magic(const unsigned char *p);

/* Decompresses from FD; PREFIX (N bytes, already read from FD) comes first. NAME is for messages. */
struct zstd_in *zstd_in_new(int fd, const unsigned char *prefix, size_t n, const char *name);
/* Returns decompressed bytes, 0 at the end of the last complete frame, -1 with D set:
 * "NAME: byte N: ..." with N the offset of the header, block or checksum that is corrupt
 * (for a checksum, its first byte), or the end of a stream cut short. */
ssize_t zstd_in_read(struct zstd_in *z, void *buf, size_t n, struct diag *d);
enum { ZSTD_IN_PEEK_MAX = 16 };
/* Copies the first min(N, ZSTD_IN_PEEK_MAX) decompressed bytes into BUF without consuming
 * them: zstd_in_read() returns them again. Only before the first zstd_in_read(). Returns
 * the count (less only at the end of the stream), or -1 with D set. */
ssize_t zstd_in_peek(struct zstd_in *z, void *buf, size_t n, struct diag *d);
void zstd_in_free(struct zstd_in *z);

/* Compresses into FD. NAME is for messages. */
struct zstd_out *zstd_out_new(int fd, const char *name);
int zstd_out_write(struct zstd_out *z, const void *p, size_t n, struct diag *d);
/* Ends the frame and writes what is left. Returns 0 or -1 with D set. */
int zstd_out_finish(struct zstd_out *z, struct diag *d);
void zstd_out_free(struct zstd_out *z);

/* Writes all N bytes to FD, retrying short writes. Returns 0 or -1 with D set. */
int write_all(int fd, const void *p, size_t n, const char *name, struct diag *d);

#endif
