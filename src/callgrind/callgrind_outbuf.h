/* callgrind_outbuf.h - the callgrind writer's output buffer (private to src/callgrind/).
 * Text is formatted in place in one buffer while a second thread hands the ones filled
 * before, about 1 MiB each, to struct output: compression (zstd output) and the write
 * system calls overlap with reading and rewriting. Owns the buffers and the thread; the
 * first write error is kept until cg_outbuf_flush() reports it. */
#ifndef CGJIT_CALLGRIND_OUTBUF_H
#define CGJIT_CALLGRIND_OUTBUF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"

struct io_pump;
struct output;

/* The thread and the blocks it writes: at most CG_OUTBUF_RING buffers, the one being
 * filled and up to CG_OUTBUF_RING - 1 filled ones, queued or being written. With one
 * filled block at a time the main thread waited for the thread where a stretch of the
 * profile is written faster than the other CPU reads and writes it (README,
 * "Performance": issue 25, the ninth session). */
enum { CG_OUTBUF_RING = 3 };
struct cg_flusher {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, stop;
	/* the filled blocks in order, from queue[head] on (a ring): COUNT of them, the first
	 * being written while the thread works */
	char *queue[CG_OUTBUF_RING - 1];
	size_t queue_len[CG_OUTBUF_RING - 1], queue_cap[CG_OUTBUF_RING - 1];
	unsigned head, count;
	char *spare[CG_OUTBUF_RING - 1];   /* buffers written, for the next blocks */
	size_t spare_cap[CG_OUTBUF_RING - 1];
	unsigned nspare;
	/* COUNT, for the pump's look without the lock */
	atomic_uint queued;
	/* the shared thread that writes instead of THREAD, or NULL (not owned) */
	struct io_pump *pump;
	struct io_pump_client *client;
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
/* Has the blocks written by PUMP (io_pump.h; not owned, it must outlive B) rather than by
 * a thread of B's own. Before the first block is handed over. */
void cg_outbuf_share_pump(struct cg_outbuf *b, struct io_pump *pump);
/* Stops the thread or leaves the pump (after what was handed over is written) and frees
 * the buffers. */
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
