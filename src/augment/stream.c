/* stream.c - the layout of the part being streamed and its statistics (stream.h). Owns
 * nothing: the symbols, the writer and the statistics are augment.c's. */
#include <string.h>

#include "augment/augment_stats.h"
#include "augment/stream.h"

void stream_init(struct stream *s, struct symtab *st, const struct cg_reader *r, struct cgw *w,
		 struct augment_stats *rep)
{
	memset(s, 0, sizeof(*s));
	s->st = st;
	s->names = cg_reader_names(r);
	s->w = w;
	s->rep = rep;
	s->instr = s->line = -1;
}

void stream_layout(struct stream *s, const struct cg_reader *r)
{
	s->npos = cg_reader_npos(r);
	s->nevents = cg_reader_nevents(r);
	s->instr = cg_reader_pos_index(r, POS_INSTR);
	s->line = cg_reader_pos_index(r, POS_LINE);
	if (s->instr >= 0)
		s->rep->instr_positions = 1;
	for (unsigned i = 0; i < s->nevents; i++)
		s->ev[i] = augment_stats_event(s->rep, cg_reader_event_name(r, i));
}

void stream_account(const struct stream *s, const uint64_t *costs, int jit, int unknown,
		    int contested)
{
	for (unsigned i = 0; i < s->nevents; i++) {
		struct augment_stats_event *e = s->ev[i];
		if (!e)
			continue;
		if (jit)
			e->jit += costs[i];
		if (unknown)
			e->unknown += costs[i];
		if (contested)
			e->contested += costs[i];
	}
}
