/* callgrind_outbuf.c - the writer's buffers and the thread that writes them
 * (callgrind_outbuf.h). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_outbuf.h"
#include "core/io.h"
#include "core/io_pump.h"
#include "core/quiet_thread.h"
#include "core/xalloc.h"

/* Writes the first filled block, with the lock held, which it drops during the write. */
static void write_next(struct cg_outbuf *b)
{
	struct cg_flusher *f = &b->flusher;
	unsigned i = f->head;
	const char *p = f->queue[i];
	size_t n = f->queue_len[i];
	pthread_mutex_unlock(&f->mu);
	if (!b->err.set)
		output_write(b->out, p, n, &b->err);
	pthread_mutex_lock(&f->mu);
	f->spare[f->nspare] = f->queue[i];
	f->spare_cap[f->nspare++] = f->queue_cap[i];
	f->head = (i + 1) % (CG_OUTBUF_RING - 1);
	f->count--;
	atomic_store_explicit(&f->queued, f->count, memory_order_relaxed);
	pthread_cond_broadcast(&f->cv);
}

static void *flusher_main(void *arg)
{
	struct cg_outbuf *b = arg;
	struct cg_flusher *f = &b->flusher;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->count && !f->stop)
			pthread_cond_wait(&f->cv, &f->mu);
		if (!f->count)
			break;
		write_next(b);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* The pump's step: one write if a block is filled. QUEUED is looked at first, without
 * the lock, so that a pump polling takes no lock the writer may want. */
static int pump_step(void *arg)
{
	struct cg_outbuf *b = arg;
	struct cg_flusher *f = &b->flusher;
	if (!atomic_load_explicit(&f->queued, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&f->mu);
	int work = f->count > 0;
	if (work)
		write_next(b);
	pthread_mutex_unlock(&f->mu);
	return work;
}

/* Waits until the flusher has written every filled block (called with its lock held). */
static void flusher_wait(struct cg_flusher *f)
{
	while (f->count)
		pthread_cond_wait(&f->cv, &f->mu);
}

/* Starts the thread with the signals sent to the process blocked (quiet_thread.h). The
 * ones its own write() raises (SIGPIPE, SIGXFSZ) stay unblocked, so that
 * `cgjit ... -o - | head` ends by SIGPIPE as any writer does. 0, or -1 if it cannot start. */
static int flusher_start(struct cg_outbuf *b)
{
	struct cg_flusher *f = &b->flusher;
	if (f->pump && (f->client = io_pump_join(f->pump, pump_step, b))) {
		f->started = 1;
		return 0;
	}
	f->pump = NULL;
	static const int own[] = { SIGPIPE, SIGXFSZ };
	if (quiet_thread_start(&f->thread, flusher_main, b, own, sizeof(own) / sizeof(own[0])) < 0)
		return -1;
	f->started = 1;
	return 0;
}

/* Queues the filled buffer for the flusher and continues in one it has written (a new one
 * while there are fewer than CG_OUTBUF_RING), waiting while CG_OUTBUF_RING - 1 are
 * queued; writes here if no thread can be started. */
void cg_outbuf_submit(struct cg_outbuf *b)
{
	struct cg_flusher *f = &b->flusher;
	if (!b->len)
		return;
	if (!f->started && flusher_start(b) < 0) {
		if (!b->err.set)
			output_write(b->out, b->buf, b->len, &b->err);
		b->len = 0;
		return;
	}
	pthread_mutex_lock(&f->mu);
	while (f->count == CG_OUTBUF_RING - 1)
		pthread_cond_wait(&f->cv, &f->mu);
	unsigned i = (f->head + f->count) % (CG_OUTBUF_RING - 1);
	f->queue[i] = b->buf;
	f->queue_len[i] = b->len;
	f->queue_cap[i] = b->cap;
	f->count++;
	atomic_store_explicit(&f->queued, f->count, memory_order_release);
	char *next = NULL;
	size_t c = CG_OUTBUF_BLOCK + 64 * 1024;   /* not B's, which a long line may have grown */
	if (f->nspare) {
		next = f->spare[--f->nspare];
		c = f->spare_cap[f->nspare];
	}
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (f->pump)
		io_pump_kick(f->pump);
	if (!next)
		next = xmalloc(c);
	b->buf = next;
	b->cap = c;
	b->len = 0;
}

void cg_outbuf_init(struct cg_outbuf *b, struct output *out)
{
	memset(b, 0, sizeof(*b));
	b->out = out;
	b->cap = CG_OUTBUF_BLOCK + 64 * 1024;
	b->buf = xmalloc(b->cap);
	pthread_mutex_init(&b->flusher.mu, NULL);
	pthread_cond_init(&b->flusher.cv, NULL);
}

void cg_outbuf_share_pump(struct cg_outbuf *b, struct io_pump *pump)
{
	b->flusher.pump = pump;
}

void cg_outbuf_free(struct cg_outbuf *b)
{
	if (b->flusher.client) {
		/* what is queued is written, as by the thread of its own when it stops */
		pthread_mutex_lock(&b->flusher.mu);
		flusher_wait(&b->flusher);
		pthread_mutex_unlock(&b->flusher.mu);
		io_pump_leave(b->flusher.pump, b->flusher.client);
	} else if (b->flusher.started) {
		pthread_mutex_lock(&b->flusher.mu);
		b->flusher.stop = 1;
		pthread_cond_broadcast(&b->flusher.cv);
		pthread_mutex_unlock(&b->flusher.mu);
		pthread_join(b->flusher.thread, NULL);
	}
	pthread_mutex_destroy(&b->flusher.mu);
	pthread_cond_destroy(&b->flusher.cv);
	for (unsigned i = 0; i < b->flusher.nspare; i++)
		free(b->flusher.spare[i]);
	free(b->buf);
}

int cg_outbuf_flush(struct cg_outbuf *b, struct diag *d)
{
	cg_outbuf_submit(b);
	if (b->flusher.started) {
		pthread_mutex_lock(&b->flusher.mu);
		flusher_wait(&b->flusher);
		pthread_mutex_unlock(&b->flusher.mu);
	}
	if (b->err.set) {
		if (d && !d->set)
			*d = b->err;
		return -1;
	}
	return 0;
}

char *cg_outbuf_reserve_slow(struct cg_outbuf *b, size_t n)
{
	cg_outbuf_submit(b);
	if (n > b->cap) {
		b->cap = n + 1024;
		b->buf = xrealloc(b->buf, b->cap);
	}
	return b->buf + b->len;
}

void cg_outbuf_put(struct cg_outbuf *b, const char *s, size_t n)
{
	memcpy(cg_outbuf_reserve(b, n), s, n);
	cg_outbuf_commit(b, n);
}

