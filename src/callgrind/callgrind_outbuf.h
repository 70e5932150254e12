/* callgrind_outbuf.h - the callgrind writer's output buffer (private to src/callgrind/).
 * Text is formatted in place in one buffer while a second thread hands the other one,
 * about 1 MiB, to struct output: compression (zstd output) and the write system
 * calls overlap with reading and rewriting. Owns both buffers and the thread; the first
 * write error is kept until cg_outbuf_flush() reports it. */
#ifndef CGJIT_CALLGRIND_OUTBUF_H
#define CGJIT_CALLGRIND_OUTBUF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"

struct output;

/* The thread and the buffer it writes. */
struct cg_flusher {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, stop;
	const char *job;          /* the block being written, NULL when idle */
	size_t job_len;
	char *spare;              /* the buffer not being filled */
	size_t spare_cap;
};

struct cg_outbuf {
	struct output *out;
	char *buf;
	size_t len, cap;
	struct diag err;          /* the first write error (set by the flusher thread) */
	uint64_t bytes;           /* written so far, before compression */
	struct cg_flusher flusher;
};

/* Writes to OUT (not owned). */
void cg_outbuf_init(struct cg_outbuf *b, struct output *out);
/* Stops the thread (after it wrote what it had) and frees the buffers. */
void cg_outbuf_free(struct cg_outbuf *b);
/* The size at which a buffer goes to the thread. */
enum { CG_OUTBUF_BLOCK = 1 << 20 };

/* The out-of-line halves of the two below: the buffer handed to the thread (and grown
 * for N bytes), and the handing over itself. */
char *cg_outbuf_reserve_slow(struct cg_outbuf *b, size_t n);
void cg_outbuf_submit(struct cg_outbuf *b);

/* Room for N more bytes, at the returned address; cg_outbuf_commit() then counts them.
 * Inline: the writer reserves a few times a line. */
static inline char *cg_outbuf_reserve(struct cg_outbuf *b, size_t n)
{
	return b->len + n <= b->cap ? b->buf + b->len : cg_outbuf_reserve_slow(b, n);
}
static inline void cg_outbuf_commit(struct cg_outbuf *b, size_t n)
{
	b->len += n;
	b->bytes += n;
}
/* N bytes at S. */
void cg_outbuf_put(struct cg_outbuf *b, const char *s, size_t n);
/* Hands the buffer to the thread if it holds a block's worth: after each line. */
static inline void cg_outbuf_maybe_flush(struct cg_outbuf *b)
{
	if (b->len >= CG_OUTBUF_BLOCK)
		cg_outbuf_submit(b);
}
/* Hands everything buffered to the output and waits until it is written. Returns 0, or
 * -1 with D set (the first write error) unless D is NULL or already set. */
int cg_outbuf_flush(struct cg_outbuf *b, struct diag *d);

#endif
