/* readahead.c - the thread that reads an input one buffer ahead (readahead.h). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/quiet_thread.h"
#include "core/readahead.h"
#include "core/xalloc.h"

struct readahead {
	struct input *in;
	size_t head, chunk;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf;              /* the buffer given, until taken */
	size_t cap;
	int job;                /* the thread is filling BUF */
	int done;               /* BUF is filled: RESULT (and ERR) tell how */
	int stop;
	ssize_t result;
	struct diag err;
};

static void *reader_main(void *arg)
{
	struct readahead *ra = arg;
	/* Cancelled only inside the read (readahead_stop): never with the lock held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&ra->mu);
	for (;;) {
		while (!ra->job && !ra->stop)
			pthread_cond_wait(&ra->cv, &ra->mu);
		if (ra->stop)
			break;
		char *at = ra->buf + ra->head;
		size_t room = ra->cap - ra->head - 1;
		if (room > ra->chunk)
			room = ra->chunk;
		struct diag err = { 0 };
		pthread_mutex_unlock(&ra->mu);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		ssize_t r = input_read(ra->in, at, room, &err);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (r >= 0)
			at[r] = '\0';
		pthread_mutex_lock(&ra->mu);
		ra->result = r;
		ra->err = err;
		ra->job = 0;
		ra->done = 1;
		pthread_cond_broadcast(&ra->cv);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

struct readahead *readahead_start(struct input *in, size_t head, size_t chunk)
{
	struct readahead *ra = xcalloc(1, sizeof(*ra));
	ra->in = in;
	ra->head = head;
	ra->chunk = chunk;
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
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
	ra->buf = buf;
	ra->cap = cap;
	ra->job = 1;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
}

ssize_t readahead_take(struct readahead *ra, char **buf, size_t *cap, struct diag *d)
{
	pthread_mutex_lock(&ra->mu);
	while (!ra->done)
		pthread_cond_wait(&ra->cv, &ra->mu);
	ra->done = 0;
	*buf = ra->buf;
	*cap = ra->cap;
	ra->buf = NULL;
	ssize_t r = ra->result;
	if (r < 0 && d && !d->set)
		*d = ra->err;
	pthread_mutex_unlock(&ra->mu);
	return r;
}

void readahead_stop(struct readahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	int reading = ra->job;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	/* A read from a pipe whose writer is still there would never end: the reader has
	 * stopped (an error, or it needs no more), so the read is cut. A cancel that comes
	 * after the read is ignored (cancelling is off outside it); the thread sees STOP. */
	if (reading)
		pthread_cancel(ra->thread);
	pthread_join(ra->thread, NULL);
	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->cv);
	free(ra->buf);
	free(ra);
}
