/* readahead.h - a thread that reads an input a few buffers ahead of its reader.
 * The line reader parses one buffer while this thread reads (and decompresses: zstd, gzip)
 * the next ones, so that the read system calls' copy and the decompression overlap with the
 * parsing. Buffers go back and forth whole (no copy): the reader gives them with
 * readahead_give(), the thread fills each in turn from offset HEAD on (the room before is
 * the reader's, for the end of a line that the previous buffer cut), readahead_take() waits
 * for the first one given and not taken. Owns the thread and the buffers it holds; the
 * input stays the caller's, and is read by the thread alone between readahead_start() and
 * readahead_stop(). */
#ifndef CGJIT_READAHEAD_H
#define CGJIT_READAHEAD_H

#include <stddef.h>
#include <sys/types.h>

struct diag;
struct input;
struct io_pump;
struct readahead;

/* The most buffers the thread holds at once: given and not taken back. */
enum { READAHEAD_MAX = 4 };

/* Starts the thread on IN, each read placed at offset HEAD of the buffer it is given and
 * of at most CHUNK bytes. With PUMP (not owned, NULL for none) the reads are done by that
 * shared thread (io_pump.h) instead of one of the reader's own: only for an input whose
 * reads end (a file, memory), as readahead_stop() then waits for a read under way where
 * it cancels the reader's own thread. Returns NULL if no thread can be started (the
 * caller then reads itself). */
struct readahead *readahead_start(struct input *in, size_t head, size_t chunk,
				  struct io_pump *pump);
/* Hands BUF (CAP bytes, CAP > HEAD + 1) to the thread, which reads into it, after the
 * buffers given before, at most min(CHUNK, CAP - HEAD - 1) bytes (at least one, unless the
 * input ended) and a NUL after them: a buffer grown for a long line does not make the
 * reads longer, which would make the other buffers grow in turn. Only while the thread
 * holds fewer than READAHEAD_MAX. After the input's end or a read error the thread reads
 * no more; the buffers it holds then are freed by readahead_stop(). */
void readahead_give(struct readahead *ra, char *buf, size_t cap);
/* Waits for the first buffer given and not taken: returns it in *BUF and *CAP with the
 * count of bytes read at BUF + HEAD, 0 at the input's end, or -1 with D set (read error,
 * corrupt stream); the buffer is then the caller's. Only while the thread holds one, and
 * not after a take returned 0 or -1 (the thread reads no more). */
ssize_t readahead_take(struct readahead *ra, char **buf, size_t *cap, struct diag *d);
/* Stops the thread, also one of its own waiting in a read that may never end (a pipe
 * still open), or leaves the pump; frees the buffers it holds and RA. NULL is a no-op. */
void readahead_stop(struct readahead *ra);

#endif
