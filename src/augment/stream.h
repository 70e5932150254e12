/* stream.h - what every stage of augment's body shares: the symbols, the reader's names,
 * the writer, the run's statistics, and the layout of the current part (its positions:
 * and events: lines). Filled by augment.c, which owns everything it points to; read by
 * resolve.c, rewrite.c and moves.c (which add to the statistics through it). Past it, the
 * links are one way: rewrite.c hands pieces to moves.c and asks resolve.c; moves.c reads
 * resolve.c's functions for rule 9; resolve.c sees neither. */
#ifndef CGJIT_STREAM_H
#define CGJIT_STREAM_H

#include <stdint.h>

#include "callgrind/callgrind_reader.h"

struct augment_stats;
struct augment_stats_event;
struct cgw;
struct symtab;

struct stream {
	struct symtab *st;              /* frozen before the first cost line */
	const struct cg_names *names;   /* the reader's (of the current part) */
	struct cgw *w;
	struct augment_stats *rep;
	/* the current part's layout, from its events: line */
	unsigned npos, nevents;
	int instr, line;                /* indices into positions, or -1 */
	struct augment_stats_event *ev[CG_MAX_EVENTS];   /* each event's statistics, or NULL */
};

/* S for the profile R reads, with nothing read yet: no positions, no events. The
 * pointers are the caller's and must outlive S. */
void stream_init(struct stream *s, struct symtab *st, const struct cg_reader *r, struct cgw *w,
		 struct augment_stats *rep);

/* Takes the layout of the part whose events: line R has just read, and adds its events
 * to the statistics. */
void stream_layout(struct stream *s, const struct cg_reader *r);

/* Adds self costs COSTS to the statistics: to the JIT share if JIT, to the unnamed share
 * if UNKNOWN, to the contested share if CONTESTED. */
void stream_account(const struct stream *s, const uint64_t *costs, int jit, int unknown,
		    int contested);

#endif
