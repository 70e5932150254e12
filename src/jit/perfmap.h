/* perfmap.h - perf map text (/tmp/perf-PID.map) into symtab entries.
 * Format: "START SIZE name" per line (perf's jit-interface.txt). Accepted as producers
 * really write it (docs/formats.md 4.2): hex with or without 0x/0X, zero padding,
 * one or more spaces or tabs between fields, names with spaces (trimmed), CRLF, an
 * unterminated last line (a map still being appended to: warned), empty lines.
 * Refused with FILE:LINE: anything else, NUL bytes, ranges past 2^64. */
#ifndef CGJIT_PERFMAP_H
#define CGJIT_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct input;
struct symtab;
struct symtab_entry;

struct perfmap_stats {
	uint64_t lines;            /* lines read */
	uint64_t entries;          /* symbols added */
	uint64_t empty_lines;
	uint64_t zero_size;        /* entries of size 0 (ignored) */
	int unterminated;          /* the last line had no newline */
};

/* Reads the perf map at PATH into ST as a new source whose object name is OBJECT.
 * MAX_LINE bounds a line. Returns 0, or -1 with D set. */
int perfmap_read(struct symtab *st, const char *path, const char *object, size_t max_line,
		 struct perfmap_stats *stats, struct diag *d);

/* The same from an open input (not closed here); its name is used in messages. */
int perfmap_read_input(struct symtab *st, struct input *in, const char *object, size_t max_line,
		       struct perfmap_stats *stats, struct diag *d);

/* Parses one line (without its newline) into E's start, size and trimmed name (pointing
 * into LINE); E's source_line is left as it is. Returns 0, or -1 with *WHAT set to what
 * was expected. */
int perfmap_parse_line(const char *line, size_t len, struct symtab_entry *e, const char **what);

#endif
