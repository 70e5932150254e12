/* linereader.h - bounded lines from a struct input.
 * A line is returned without its "\n" and without one trailing "\r" (CRLF input).
 * It borrows the reader's buffer until the next call. Lines longer than the limit are an
 * error, so memory stays bounded whatever the file holds. The buffered bytes, BUF + START
 * to BUF + END, are always followed by a NUL, so a parser can scan a line without bounds:
 * a line ends in "\n", or (the last one, unterminated) in that NUL. Once it has read 1 MiB
 * it reads on through a thread (readahead.h), which the reader owns; the input is then the
 * thread's until line_reader_free(). */
#ifndef CGJIT_LINEREADER_H
#define CGJIT_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct input;
struct io_pump;
struct readahead;

struct line_reader {
	struct input *in;
	char *buf;
	size_t cap, start, end;
	size_t max_line;
	int eof;
	uint64_t lineno;       /* number of the line last returned, from 1 */
	int missing_newline;   /* the line last returned was the last and had no "\n" */
	int nul;               /* the line last returned holds a NUL byte */
	size_t read_alone;     /* bytes read without RA: CHUNK of them start it */
	int started;           /* RA was started (it is NULL again after the end) */
	struct readahead *ra;  /* the thread reading the next buffer, or NULL */
	struct io_pump *pump;  /* RA's reads done by this shared thread, or NULL (not owned) */
	/* Called before a read changes the buffer (the lines returned so far are still
	 * there), for a caller that keeps some of them longer than a line: it copies them. */
	void (*before_fill)(void *ctx);
	void *before_fill_ctx;
};

/* MAX_LINE is the longest line accepted, in bytes. */
void line_reader_init(struct line_reader *lr, struct input *in, size_t max_line);
void line_reader_free(struct line_reader *lr);
/* Has the reads ahead done by PUMP (io_pump.h; not owned, it must outlive LR) rather than
 * by a thread of the reader's own: only for an input whose reads end (readahead.h). Before
 * the first line. */
void line_reader_share_pump(struct line_reader *lr, struct io_pump *pump);
/* Consumes N bytes holding LINES whole lines, each ending in "\n", that the caller has
 * read in place, from BUF + START: at most END - START bytes. */
void line_reader_skip(struct line_reader *lr, size_t n, uint64_t lines);
/* Returns 1 with *LINE and *LEN set, 0 at the end, -1 with D set (read error, line too long). */
int line_reader_next(struct line_reader *lr, const char **line, size_t *len, struct diag *d);

#endif
