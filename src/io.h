/* io.h - byte streams in and out.
 * Input: a path or "-" (stdin), plain or zstd-compressed, detected by the zstd magic in
 * the first four bytes, never by the name. Output: written to a temporary file in the
 * destination's directory and renamed into place only by output_commit(); aborting, a
 * failed write or SIGINT/SIGTERM leaves no file behind. "-" writes to stdout. */
#ifndef CGJIT_IO_H
#define CGJIT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct input;
struct output;

/* Opens PATH ("-" = stdin). The name used in messages is PATH. Returns NULL with D set. */
struct input *input_open(const char *path, struct diag *d);
/* Reads from the N bytes at DATA (not copied: they must outlive the input), with the same
 * zstd detection; NAME is used in messages. For fuzz drivers and tests. */
struct input *input_open_mem(const void *data, size_t n, const char *name);
/* Reads up to N decompressed bytes. Returns the count, 0 at a clean end, -1 with D set
 * (read error, or a zstd stream cut short / corrupt). */
ssize_t input_read(struct input *in, void *buf, size_t n, struct diag *d);
const char *input_name(const struct input *in);
/* 1 if the stream is zstd-compressed. */
int input_is_zstd(const struct input *in);
void input_close(struct input *in);   /* NULL is a no-op */

/* Opens the temporary file for PATH ("-" = stdout). Compresses with zstd when PATH ends
 * in ".zst". Returns NULL with D set. */
struct output *output_open(const char *path, struct diag *d);
/* Appends N bytes. Returns 0, or -1 with D set (e.g. "No space left on device"). */
int output_write(struct output *o, const void *p, size_t n, struct diag *d);
/* Flushes, closes and renames the temporary file to its final name. Frees O.
 * Returns 0, or -1 with D set, in which case the temporary file was removed. */
int output_commit(struct output *o, struct diag *d);
/* Removes the temporary file and frees O. NULL is a no-op. */
void output_abort(struct output *o);

#endif
