/* record_text.h - the texts `cgjit record` shows as it goes: the progress line of a run
 * (counted by record_progress_scan(), record_collect.h) and the one-line summary of an
 * augmented profile. Pure: writes into the caller's buffers. */
#ifndef CGJIT_RECORD_TEXT_H
#define CGJIT_RECORD_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct augment_stats;

/* What is known of a run while it lasts, for the progress line. */
struct record_progress {
	unsigned seconds;         /* since the run began */
	unsigned running;         /* processes under callgrind (profiles begun, not written) */
	unsigned written;         /* profile files written (parts, with --dump-every-bb) */
	unsigned nfiles;          /* perf maps and jitdumps of the run's processes so far */
	uint64_t bytes;           /* ... their sizes together */
	struct {
		char name[64];
		uint64_t bytes;
	} files[3];               /* the first min(nfiles, 3) of them */
};

/* The progress line for P, without a newline: "cgjit: 12 s under callgrind: 1 process, 0
 * profiles written; jit-1234.dump 1.2 MB", cut to WIDTH - 1 columns (a line as wide as
 * the terminal would wrap, and "\r" would then clear only its last row). Writes OUT
 * (OUTSZ bytes, NUL-terminated). */
void record_progress_line(const struct record_progress *p, size_t width, char *out, size_t outsz);

/* The one line that sums up an augmented profile: "OUTPUT: Ir 47.02% JIT, 0.00% unknown
 * (211 of 246 pseudo-functions named)", with the ELF file of its jitdump code. Writes OUT
 * (OUTSZ bytes, NUL-terminated). */
void record_summary_line(const struct augment_stats *r, char *out, size_t outsz);

#endif
