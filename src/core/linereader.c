/* linereader.c - splits a byte stream into lines with memchr over a sliding buffer. */
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/xalloc.h"

enum { CHUNK = 1 << 20 };

void line_reader_init(struct line_reader *lr, struct input *in, size_t max_line)
{
	memset(lr, 0, sizeof(*lr));
	lr->in = in;
	lr->max_line = max_line;
	lr->cap = 2 * CHUNK;
	lr->buf = xmalloc(lr->cap);
	lr->buf[0] = '\0';
}

void line_reader_free(struct line_reader *lr)
{
	free(lr->buf);
	lr->buf = NULL;
}

static int fill(struct line_reader *lr, struct diag *d)
{
	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->cap - lr->end < CHUNK + 1) {
		size_t need = lr->end + CHUNK + 1;
		XGROW(lr->buf, lr->cap, need);
	}
	ssize_t r = input_read(lr->in, lr->buf + lr->end, lr->cap - lr->end - 1, d);
	if (r < 0)
		return -1;
	if (r == 0)
		lr->eof = 1;
	lr->end += (size_t)r;
	lr->buf[lr->end] = '\0';
	return 0;
}

int line_reader_next(struct line_reader *lr, const char **line, size_t *len, struct diag *d)
{
	size_t scanned = 0;
	for (;;) {
		char *s = lr->buf + lr->start;
		size_t avail = lr->end - lr->start;
		char *nl = memchr(s + scanned, '\n', avail - scanned);
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
		*line = s;
		*len = n;
		return 1;
	}
}

void line_reader_skip(struct line_reader *lr, size_t n, uint64_t lines)
{
	lr->start += n;
	lr->lineno += lines;
}
