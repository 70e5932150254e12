/* io.h - byte streams in and out.
 * Input: a path or "-" (stdin), plain, zstd- or gzip-compressed, detected by the magic in
 * the first bytes (zstd's four, gzip's two: 1f 8b), never by the name.
 * Output: "-" is stdout; a path into a descriptor directory (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N) writes through that descriptor, and any other existing file that is not
 * a regular file (/dev/null, a FIFO) is written in place. Everything else is a regular file
 * (symbolic links are followed, never replaced): it is written to a temporary file
 * DIR/.cgjit-tmp.PID.XXXXXX beside it, created with mode 0666 minus the umask (a file being
 * replaced keeps its mode), and renamed into place only by output_commit_all(). Until then
 * a failed write, output_abort(), exit() (out of memory) and the fatal signals (HUP INT QUIT
 * TERM PIPE ALRM USR1 USR2 XCPU XFSZ VTALRM PROF POLL PWR STKFLT, unless inherited as
 * ignored or handled) remove it. No file that this process did not create is ever removed,
 * and a destination is replaced only by output_commit_all(). A temporary left by a killed
 * process is removed by the next output_open() in the same directory (tempfiles.c, "stale
 * temporaries"). In a shared directory (sticky and world-writable, as /tmp) a symbolic
 * link, file or FIFO of another user (neither this user nor the directory's owner) is
 * never followed, replaced or written to: output_open() refuses the path
 * (output_target.c, "shared directories"). An input is read by one thread at a time:
 * the line reader's read-ahead thread (readahead.h) while it runs, and meanwhile the
 * caller only asks input_position(), input_name() and input_is_*(), which read what does
 * not change. Implemented by input.c, output.c, output_target.c and tempfiles.c. */
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
 * zstd and gzip detection; NAME is used in messages. For fuzz drivers and tests. */
struct input *input_open_mem(const void *data, size_t n, const char *name);
/* Reads up to N decompressed bytes. Returns the count, 0 at a clean end, -1 with D set
 * (read error, or a zstd or gzip stream cut short / corrupt: "NAME: byte N: ..."). */
ssize_t input_read(struct input *in, void *buf, size_t n, struct diag *d);
const char *input_name(const struct input *in);
/* The length of the first LEN bytes of NAME without a compression suffix (".zst", ".gz"):
 * the stem of the names made from an input's (augment's output, ELF files), whose contents
 * are not compressed. */
size_t input_name_stem(const char *name, size_t len);
/* 1 if the stream is zstd-compressed. */
int input_is_zstd(const struct input *in);
/* 1 if the stream is gzip-compressed (io_gzip.h: concatenated members read whole). */
int input_is_gzip(const struct input *in);
/* 1 if IN is a regular file read as it is (not compressed): a read of it ends, and costs
 * a copy, no decompression. */
int input_is_plain_file(const struct input *in);
void input_close(struct input *in);   /* NULL is a no-op */
/* Reads from FD, already open (a FIFO opened O_NONBLOCK may be handed over once switched
 * back to blocking), with the same zstd and gzip detection; NAME is used in messages. Takes FD:
 * input_close() closes it, and so does a failure here. Returns NULL with D set. */
struct input *input_open_fd(int fd, const char *name, struct diag *d);
/* How far a regular file has been read and its size, for a progress line (compressed
 * bytes for zstd and gzip). Returns 0, or -1 for stdin, pipes and
 * memory inputs (no size known). */
int input_position(const struct input *in, uint64_t *done, uint64_t *size);
enum { INPUT_PEEK_MAX = 4 };
/* Copies the first min(N, INPUT_PEEK_MAX) decompressed bytes into BUF without consuming
 * them (input_read() returns them again), to tell formats apart on one open stream. Only
 * before the first input_read(). Returns the count (less only when the input is shorter),
 * or -1 with D set. */
ssize_t input_peek(struct input *in, void *buf, size_t n, struct diag *d);

/* Returns -1 with D set ("PATH: '/tmp/d' is a symbolic link of another user (uid 65534) in
 * the shared directory '/tmp' ...") when resolving PATH would follow a symbolic link that
 * another user put in a shared directory, in any component or in a link's target; else 0.
 * output_open() checks this itself; for directories that other programs write into
 * (`cgjit record -d DIR`). */
int output_check_links(const char *path, struct diag *d);

/* Opens the output for PATH (see above; "" is an error). Compresses with zstd when PATH ends
 * in ".zst". Returns NULL with D set (e.g. "PATH: is a directory, expected a file"). */
struct output *output_open(const char *path, struct diag *d);
/* Appends N bytes. Returns 0, or -1 with D set (e.g. "No space left on device"). */
int output_write(struct output *o, const void *p, size_t n, struct diag *d);
/* 1 if O compresses with zstd. */
int output_is_zstd(const struct output *o);
/* PATH as given to output_open(), or "<stdout>". */
const char *output_path(const struct output *o);
/* 1 if output_open(PATH) would write in place (stdout, a descriptor path, a device, a FIFO)
 * rather than create or replace a regular file. */
int output_path_in_place(const char *path);
/* 1 if O replaces or writes into the regular file PATH ("-" = stdin), compared by device and
 * inode: another spelling, a symbolic or a hard link of the same file counts. */
int output_same_file(const struct output *o, const char *path);
/* Returns -1 with D set ("OUT: is the same file as the input 'IN'; ...") if one of the N
 * outputs OUTS (NULL entries skipped) is the same file as one of the NI INPUTS
 * (output_same_file), or two of them have the same destination; otherwise 0. */
int output_check_clashes(struct output *const *outs, size_t n, const char *const *inputs,
			 size_t ni, struct diag *d);
/* Makes the N outputs OUTS (NULL entries skipped) final, in that order, so the last one
 * decides: first every one is finished (zstd frame ended, fsync, close) and if one fails
 * nothing is renamed; then, with the fatal signals held, each temporary takes its
 * destination's place (RENAME_EXCHANGE, or a hard link of the old file kept aside where the
 * file system has no exchange). If a rename fails, or a fatal signal arrived meanwhile,
 * every destination already replaced gets its old file back (a new one is removed), so that
 * all or none of them change. Frees every output. Returns 0, or -1 with D set, every
 * temporary removed (and the held signal delivered when it returns). */
int output_commit_all(struct output **outs, size_t n, struct diag *d);
/* output_commit_all() of one output. */
int output_commit(struct output *o, struct diag *d);
/* Removes the temporary file and frees O. NULL is a no-op. */
void output_abort(struct output *o);

#endif
