/* rewrite.h - the rewrite rules for a part's body records (README "What augment does"):
 * each cost line goes to the function that owns its address, calls between fragments of
 * one function are folded, and what moved to another function is held (moves.h) for its
 * synthetic call. Lines of blocks that are not JIT code go straight to the writer. Owns
 * the current block: a fn= line and the lines up to the next. */
#ifndef CGJIT_REWRITE_H
#define CGJIT_REWRITE_H

#include <stdint.h>

#include "augment/resolve.h"
#include "callgrind/callgrind_reader.h"

struct moves;
struct stream;

struct rewrite {
	const struct stream *s;
	struct resolver *res;
	struct moves *mv;
	struct cg_reader *r;             /* hands plain blocks' cost lines straight over */
	/* the current block */
	int have_block;
	uint32_t fn;                     /* its reader function */
	struct resolve_fn fn_res;        /* its resolution */
	int plain;                       /* not JIT code, and none of its lines can move */
	uint32_t seq;                    /* blocks of this part so far */
	uint64_t last_home_pos[CG_MAX_POS];   /* the last line that stayed home, ... */
	uint32_t last_home_file;              /* ... its writer file, ... */
	int have_home_pos;                    /* ... if any */
	int64_t cache_sym;               /* the last symbol looked up in the block, and its */
	uint32_t cache_out;              /* ... owner */
	int in_foreign_run;              /* the previous line was foreign code (rule 5) */
	uint32_t foreign_out;            /* ... and the identity its run was given */
	uint64_t home_start, home_last;  /* a JIT function's block: the segment of its own
	                                    symbol that its last line offered lay in, ... */
	int home_contested;              /* ... whether it is contested, ... */
	int have_home_seg;               /* ... if any (jit_home_line()) */
	uint64_t range_line;             /* the reader's range sink (jit_home_run()) is on:
	                                    the source line its lines are written at, ... */
	uint32_t range_file;             /* ... the writer file, ... */
	int range_contested;             /* ... and whether its segment is contested */
	uint64_t span_lo, span_hi;       /* an ELF function's block: the addresses of its cost
	                                    lines (rule 9; lo > hi: none yet) */
};

/* RW with no block, reading S and R, resolving through RES and holding moved pieces in
 * MV (none owned; they outlive RW). */
void rewrite_init(struct rewrite *rw, const struct stream *s, struct resolver *res,
		  struct moves *mv, struct cg_reader *r);

/* The part ends (totals:) or begins (its first header line): no block, and the next one
 * is the part's first. */
void rewrite_end_part(struct rewrite *rw);

/* A fn= line: FN's block begins. Lines of a block that is not JIT code go straight from
 * the reader to the writer (cg_reader_sink_costs()) until the next fn= or part; so do the
 * lines of a JIT function's block that lie in its own code (cg_reader_sink_lines()). */
void rewrite_begin_block(struct rewrite *rw, uint32_t fn);

/* REC's line, written or held (moves.h): a cost line, a call, a jump. */
void rewrite_cost(struct rewrite *rw, const struct cg_record *rec);
void rewrite_call(struct rewrite *rw, const struct cg_record *rec);
void rewrite_jump(struct rewrite *rw, const struct cg_record *rec);

#endif
