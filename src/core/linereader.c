/* linereader.c - splits a byte stream into lines over a sliding buffer; once 1 MiB is
 * read, a thread reads the next buffers meanwhile (readahead.h). */
#define _GNU_SOURCE   /* strchrnul() */
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/readahead.h"
#include "core/xalloc.h"

/* Reads of CHUNK bytes; the thread's buffers keep HEAD bytes in front of what it reads for
 * the end of a line that the previous buffer cut: longer ends are copied (docs/design.md).
 * Under AddressSanitizer they are small, and a buffer is never used again once a read
 * has moved on from it (a new one is allocated, the old one freed): every input of more
 * than a few KB changes buffers many times, and a line or a name kept past the next read
 * is a use after free that `make check-asan` reports on the suite's own profiles.
 * The thread reads up to AHEAD buffers ahead of the one being parsed: with one, the main
 * thread waited where a stretch of the profile parses faster than the other CPU reads
 * and writes it (README, "Performance": issue 25, the ninth session). */
#if defined(__SANITIZE_ADDRESS__)
enum { CHUNK = 4 << 10, HEAD = 1 << 10, REUSE = 0 };
#else
enum { CHUNK = 1 << 20, HEAD = 64 << 10, REUSE = 1 };
#endif
enum { AHEAD = 2 };
_Static_assert((int)AHEAD <= (int)READAHEAD_MAX, "AHEAD must not exceed READAHEAD_MAX");

/* The bytes of the current buffer from START on, moved to the front: in place, or (REUSE
 * off) into a new buffer of at least NEED bytes, the old one freed. */
static void move_to_front(struct line_reader *lr, size_t need)
{
	size_t carry = lr->end - lr->start;
	if (REUSE) {
		memmove(lr->buf, lr->buf + lr->start, carry);
	} else {
		size_t cap = need > lr->cap ? need : lr->cap;
		char *nb = xmalloc(cap);
		memcpy(nb, lr->buf + lr->start, carry);
		nb[carry] = '\0';
		free(lr->buf);
		lr->buf = nb;
		lr->cap = cap;
	}
	lr->start = 0;
	lr->end = carry;
}

void line_reader_init(struct line_reader *lr, struct input *in, size_t max_line)
{
	memset(lr, 0, sizeof(*lr));
	lr->in = in;
	lr->max_line = max_line;
	/* the size of the thread's buffers, which this one becomes one of (join()) */
	lr->cap = HEAD + CHUNK + 1;
	lr->buf = xmalloc(lr->cap);
	lr->buf[0] = '\0';
}

void line_reader_free(struct line_reader *lr)
{
	readahead_stop(lr->ra);
	lr->ra = NULL;
	free(lr->buf);
	lr->buf = NULL;
}

void line_reader_share_pump(struct line_reader *lr, struct io_pump *pump)
{
	lr->pump = pump;
}

/* The bytes the thread read into NB (N at NB + HEAD) follow the unread end of the current
 * buffer: in NB, where HEAD has room for that end (the current buffer goes to the thread),
 * else appended to the current buffer (NB goes back). */
static void join(struct line_reader *lr, char *nb, size_t ncap, size_t n)
{
	size_t carry = lr->end - lr->start;
	if (carry <= HEAD) {
		memcpy(nb + HEAD - carry, lr->buf + lr->start, carry);
		if (REUSE) {
			readahead_give(lr->ra, lr->buf, lr->cap);
		} else {
			free(lr->buf);
			readahead_give(lr->ra, xmalloc(lr->cap), lr->cap);
		}
		lr->buf = nb;
		lr->cap = ncap;
		lr->start = HEAD - carry;
		lr->end = HEAD + n;
		return;
	}
	move_to_front(lr, carry + n + 1);
	XGROW(lr->buf, lr->cap, carry + n + 1);
	memcpy(lr->buf + carry, nb + HEAD, n);
	lr->end += n;
	lr->buf[lr->end] = '\0';
	readahead_give(lr->ra, nb, ncap);
}

/* Reads on through the thread; 0 or -1 as fill(). */
static int fill_ahead(struct line_reader *lr, struct diag *d)
{
	char *nb;
	size_t ncap;
	ssize_t r = readahead_take(lr->ra, &nb, &ncap, d);
	if (r <= 0) {
		/* the end, or an error: the thread has nothing more to do (a call after an
		 * error reads the input itself, as before the thread) */
		free(nb);
		readahead_stop(lr->ra);
		lr->ra = NULL;
		if (r < 0)
			return -1;
		lr->eof = 1;
		return 0;
	}
	join(lr, nb, ncap, (size_t)r);
	return 0;
}

/* Starts the thread once CHUNK bytes have been read without it, so that a small input
 * (most maps and test inputs) never starts one: it reads into buffers of its own, given
 * here. */
static void start_ahead(struct line_reader *lr)
{
	if (lr->eof || lr->read_alone < CHUNK || lr->started)
		return;
	lr->started = 1;
	lr->ra = readahead_start(lr->in, HEAD, CHUNK, lr->pump);
	for (int i = 0; lr->ra && i < AHEAD; i++)
		readahead_give(lr->ra, xmalloc(HEAD + CHUNK + 1), HEAD + CHUNK + 1);
}

static int fill(struct line_reader *lr, struct diag *d)
{
	if (lr->before_fill)
		lr->before_fill(lr->before_fill_ctx);
	if (!lr->ra)
		start_ahead(lr);
	if (lr->ra)
		return fill_ahead(lr, d);
	if (lr->start > 0)
		move_to_front(lr, lr->end - lr->start + CHUNK + 1);
	if (lr->cap - lr->end < CHUNK + 1) {
		size_t need = lr->end + CHUNK + 1;
		XGROW(lr->buf, lr->cap, need);
	}
	ssize_t r = input_read(lr->in, lr->buf + lr->end, lr->cap - lr->end - 1, d);
	if (r < 0)
		return -1;
	if (r == 0)
		lr->eof = 1;
	lr->read_alone += (size_t)r;
	lr->end += (size_t)r;
	lr->buf[lr->end] = '\0';
	return 0;
}

/* line_reader_next() where the buffer's first line is not whole, holds a NUL byte or is
 * too long. */
static __attribute__((noinline)) int next_slow(struct line_reader *lr, const char **line,
					       size_t *len, struct diag *d)
{
	size_t scanned = 0;
	int nul = 0;
	for (;;) {
		char *s = lr->buf + lr->start, *e = s + (lr->end - lr->start);
		size_t avail = lr->end - lr->start;
		/* the "\n", or a NUL: the one after the bytes, or one in them (the line then
		 * has one, which the caller may refuse: one pass finds both) */
		char *nl = strchrnul(s + scanned, '\n');
		for (; nl < e && *nl == '\0'; nl = strchrnul(nl + 1, '\n'))
			nul = 1;
		if (nl == e)
			nl = NULL;
		size_t n;
		if (nl) {
			n = (size_t)(nl - s);
			lr->start += n + 1;
			lr->missing_newline = 0;
		} else if (lr->eof) {
			if (avail == 0)
				return 0;
			n = avail;
			lr->start += n;
			lr->missing_newline = 1;
		} else {
			if (avail > lr->max_line)
				return diag_at(d, input_name(lr->in), lr->lineno + 1,
					       "line longer than the limit of %zu bytes", lr->max_line);
			scanned = avail;
			if (fill(lr, d) < 0)
				return -1;
			continue;
		}
		if (n > lr->max_line)
			return diag_at(d, input_name(lr->in), lr->lineno + 1,
				       "line longer than the limit of %zu bytes", lr->max_line);
		lr->lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		lr->nul = nul;
		*line = s;
		*len = n;
		return 1;
	}
}

int line_reader_next(struct line_reader *lr, const char **line, size_t *len, struct diag *d)
{
	/* most lines: whole in the buffer, within the limit, no NUL (a NUL, the one after
	 * the buffer's bytes or one in the line, stops the scan first) */
	char *s = lr->buf + lr->start, *nl = strchrnul(s, '\n');
	size_t n = (size_t)(nl - s);
	if (*nl != '\n' || n > lr->max_line)
		return next_slow(lr, line, len, d);
	lr->start += n + 1;
	lr->missing_newline = 0;
	lr->lineno++;
	lr->nul = 0;
	if (n && s[n - 1] == '\r')
		n--;
	*line = s;
	*len = n;
	return 1;
}

void line_reader_skip(struct line_reader *lr, size_t n, uint64_t lines)
{
	lr->start += n;
	lr->lineno += lines;
}
