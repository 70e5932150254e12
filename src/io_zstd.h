/* io_zstd.h - streaming zstd decompression and compression; the only user of <zstd.h>. */
#ifndef CGJIT_IO_ZSTD_H
#define CGJIT_IO_ZSTD_H

#include <stddef.h>
#include <sys/types.h>

struct diag;
struct zstd_in;
struct zstd_out;

/* 1 if the four bytes at P are a zstd frame magic (0xFD2FB528, little-endian). */
int zstd_is_magic(const unsigned char *p);

/* Decompresses from FD; PREFIX (N bytes, already read from FD) comes first. NAME is for messages. */
struct zstd_in *zstd_in_new(int fd, const unsigned char *prefix, size_t n, const char *name);
/* Returns decompressed bytes, 0 at the end of the last complete frame, -1 with D set. */
ssize_t zstd_in_read(struct zstd_in *z, void *buf, size_t n, struct diag *d);
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
