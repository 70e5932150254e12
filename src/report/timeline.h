/* timeline.h - `cgjit timeline`: when a JIT loaded (compiled) and moved code, from a
 * jitdump's record timestamps, as one document (docs/timeline.md gives its JSON schema,
 * "cgjit.timeline/1"): loads, bytes and moves per time bucket, the late loads (after the
 * warm-up), the recompiled functions (a name loaded more than once) and the functions
 * moved most. Rendered as text by timeline_text.h, as an SVG chart by timeline_svg.h and
 * as JSON by doc_out.h. */
#ifndef CGJIT_TIMELINE_H
#define CGJIT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct diag;
struct input;

enum { TIMELINE_MAX_BUCKETS = 10000, TIMELINE_DEFAULT_BUCKETS = 20 };
#define TIMELINE_DEFAULT_WARMUP_PCT 10.0
/* Load times listed per recompiled function, at most (the count is always complete). */
#define TIMELINE_MAX_TIMES 1000

struct timeline_opts {
	int warmup_is_pct;      /* 1: warmup_pct of the time span; 0: warmup_ns */
	double warmup_pct;      /* 0 to 100 */
	uint64_t warmup_ns;     /* from the first timestamp; needs CLOCK_MONOTONIC times */
	unsigned buckets;       /* 1 to TIMELINE_MAX_BUCKETS */
	size_t top;             /* entries per list; SIZE_MAX: all */
};

/* Default options: TIMELINE_DEFAULT_BUCKETS buckets, warm-up TIMELINE_DEFAULT_WARMUP_PCT
 * percent of the span, 20 entries per list. */
void timeline_opts_init(struct timeline_opts *o);

/* Reads the jitdump IN (plain or zstd; not closed here) in one pass and returns the
 * document (a new reference). Memory: about 20 bytes per CODE_LOAD (time, size, name id)
 * and 12 per CODE_MOVE, plus the distinct names and the buckets. Returns NULL with D set
 * for a malformed dump ("FILE: byte N: ...") or a warm-up in seconds on a dump whose
 * timestamps are CPU counter ticks. */
json_t *timeline_build(struct input *in, const struct timeline_opts *o, struct diag *d);

/* The note every timeline carries ("notes"): the times are the recorded run's. */
#define TIMELINE_NOTE_VALGRIND "times are the recorded run's: under valgrind (cgjit record) a " \
	"program and its JIT run many times slower than natively (docs/timeline.md section 2)"

/* Records in DOC that PATH, a callgrind profile of the dump's pid beside the dump, shows
 * that the run was under valgrind ("valgrind_profile", and a note). */
void timeline_set_valgrind_profile(json_t *doc, const char *path);

/* A time of DOC (in its unit, from its start) for people: "1.234 s" for nanoseconds,
 * "1,234,567 ticks" for CPU counter values. Into BUF (at least 48 bytes); returns BUF. */
const char *timeline_time(char *buf, const json_t *doc, uint64_t t);

/* V's height on a logarithmic scale up to MAX (log2(1 + V) / log2(1 + MAX), 0 for V 0),
 * from 0 to 1; shared by the text bars and the SVG so that both show the same shape. */
double timeline_log_scale(uint64_t v, uint64_t max);


#endif
