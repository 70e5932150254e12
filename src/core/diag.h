/* diag.h - the first error of a run, as one message with its location.
 * The library fills a struct diag and returns -1; only the front end prints it.
 * Format: "FILE:LINE: message" or "FILE: byte OFFSET: message" (GNU style). */
#ifndef CGJIT_DIAG_H
#define CGJIT_DIAG_H

#include <stdint.h>

struct diag {
	int set;          /* 1 once an error was recorded; later errors are ignored */
	char msg[1024];   /* location and text, without the "cgjit: " prefix */
};

/* Records "FILE:LINE: fmt..." unless D already holds an error (the first error wins).
 * LINE 0 leaves the line out. Returns -1, so callers can write `return diag_at(...)`. */
int diag_at(struct diag *d, const char *file, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Same with a column (from 1) after the line: "FILE:LINE:COLUMN: fmt...", for the YAML
 * budget file. Returns -1. */
int diag_at_col(struct diag *d, const char *file, uint64_t line, uint64_t column,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Same with a byte offset, for binary inputs: "FILE: byte N: fmt...". Returns -1. */
int diag_byte(struct diag *d, const char *file, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Formats a byte string for a message: at most MAX bytes, non-printable bytes as \xNN.
 * Writes into OUT (size OUTSZ, always NUL-terminated) and returns OUT. */
const char *diag_quote(char *out, size_t outsz, const char *s, size_t len);

#endif
