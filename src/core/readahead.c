/* readahead.c - the thread that reads an input ahead of its reader (readahead.h). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/io_pump.h"
#include "core/quiet_thread.h"
#include "core/readahead.h"
#include "core/xalloc.h"

struct slot {
	char *buf;
	size_t cap;
	ssize_t result;
	struct diag err;
};

struct readahead {
	struct input *in;
	size_t head, chunk;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* the buffers held, in the order given, from q[first] on (a ring): the first NDONE
	 * read, the rest to read */
	struct slot q[READAHEAD_MAX];
	unsigned first, n, ndone;
	int reading;            /* the thread is reading into q[first + ndone] */
	int ended;              /* a read returned 0 or failed: no more reads */
	int stop;
	/* buffers given and not read yet (n - ndone), for the pump's look without the lock */
	atomic_uint unread;
	struct io_pump *pump;   /* the shared thread, or NULL: THREAD is this one's own */
	struct io_pump_client *client;
};

/* Whether there is a buffer to read into (called with the lock held). */
static int has_work(const struct readahead *ra)
{
	return ra->ndone < ra->n && !ra->ended && !ra->stop;
}

/* Reads into the first buffer given and not read, with the lock held, which it drops
 * during the read; in the thread of its own (CANCELLABLE) the read may be cancelled. */
static void read_next(struct readahead *ra, int cancellable)
{
	struct slot *s = &ra->q[(ra->first + ra->ndone) % READAHEAD_MAX];
	char *at = s->buf + ra->head;
	size_t room = s->cap - ra->head - 1;
	if (room > ra->chunk)
		room = ra->chunk;
	struct diag err = { 0 };
	ra->reading = 1;
	pthread_mutex_unlock(&ra->mu);
	if (cancellable)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	ssize_t r = input_read(ra->in, at, room, &err);
	if (cancellable)
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	if (r >= 0)
		at[r] = '\0';
	pthread_mutex_lock(&ra->mu);
	ra->reading = 0;
	s->result = r;
	s->err = err;
	ra->ndone++;
	atomic_fetch_sub_explicit(&ra->unread, 1, memory_order_relaxed);
	ra->ended = r <= 0;
	pthread_cond_broadcast(&ra->cv);
}

static void *reader_main(void *arg)
{
	struct readahead *ra = arg;
	/* Cancelled only inside the read (readahead_stop): never with the lock held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&ra->mu);
	for (;;) {
		while (!has_work(ra) && !ra->stop)
			pthread_cond_wait(&ra->cv, &ra->mu);
		if (ra->stop)
			break;
		read_next(ra, 1);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* The pump's step: one read if there is a buffer to read into. UNREAD is looked at first,
 * without the lock, so that a pump polling takes no lock the caller may want. */
static int pump_step(void *arg)
{
	struct readahead *ra = arg;
	if (!atomic_load_explicit(&ra->unread, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&ra->mu);
	int work = has_work(ra);
	if (work)
		read_next(ra, 0);
	pthread_mutex_unlock(&ra->mu);
	return work;
}

struct readahead *readahead_start(struct input *in, size_t head, size_t chunk,
				  struct io_pump *pump)
{
	struct readahead *ra = xcalloc(1, sizeof(*ra));
	ra->in = in;
	ra->head = head;
	ra->chunk = chunk;
	atomic_init(&ra->unread, 0);
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	if (pump && (ra->client = io_pump_join(pump, pump_step, ra))) {
		ra->pump = pump;
		return ra;
	}
	/* a read raises only SIGTTIN of its own (a terminal read in the background, which
	 * stops the process as it would without the thread) */
	static const int own[] = { SIGTTIN };
	if (quiet_thread_start(&ra->thread, reader_main, ra, own, 1) < 0) {
		pthread_mutex_destroy(&ra->mu);
		pthread_cond_destroy(&ra->cv);
		free(ra);
		return NULL;
	}
	return ra;
}

void readahead_give(struct readahead *ra, char *buf, size_t cap)
{
	pthread_mutex_lock(&ra->mu);
	if (ra->n == READAHEAD_MAX)
		abort();   /* the caller's error: the slot of a buffer held would be overwritten */
	struct slot *s = &ra->q[(ra->first + ra->n) % READAHEAD_MAX];
	s->buf = buf;
	s->cap = cap;
	ra->n++;
	atomic_fetch_add_explicit(&ra->unread, 1, memory_order_release);
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	if (ra->pump)
		io_pump_kick(ra->pump);
}

ssize_t readahead_take(struct readahead *ra, char **buf, size_t *cap, struct diag *d)
{
	pthread_mutex_lock(&ra->mu);
	while (!ra->ndone)
		pthread_cond_wait(&ra->cv, &ra->mu);
	struct slot *s = &ra->q[ra->first];
	ra->first = (ra->first + 1) % READAHEAD_MAX;
	ra->n--;
	ra->ndone--;
	*buf = s->buf;
	*cap = s->cap;
	ssize_t r = s->result;
	if (r < 0 && d && !d->set)
		*d = s->err;
	pthread_mutex_unlock(&ra->mu);
	return r;
}

void readahead_stop(struct readahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	int reading = ra->reading;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	/* A read from a pipe whose writer is still there would never end: the reader has
	 * stopped (an error, or it needs no more), so the read is cut. A cancel that comes
	 * after the read is ignored (cancelling is off outside it); the thread sees STOP. */
	if (ra->pump) {
		io_pump_leave(ra->pump, ra->client);   /* waits for a read under way */
	} else {
		if (reading)
			pthread_cancel(ra->thread);
		pthread_join(ra->thread, NULL);
	}
	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->cv);
	for (unsigned i = 0; i < ra->n; i++)
		free(ra->q[(ra->first + i) % READAHEAD_MAX].buf);
	free(ra);
}
