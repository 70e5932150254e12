/* moves.h - the pieces of blocks that belong to another function, held until the end of
 * their part (README "What augment does", rules 5 and 9): a cost line, a call made there,
 * or the cost of a call folded there. Only when the part ends is each piece's final owner
 * known: code of a symbol that lies inside a function of an ELF object of the input (V8's
 * builtins) goes to that function. Then the moved lines are written, the held calls
 * (deferred_calls.h) less the returns recorded as calls, and one synthetic call per block
 * and owner with everything that moved there. Memory: the part's moved pieces and held
 * calls. */
#ifndef CGJIT_MOVES_H
#define CGJIT_MOVES_H

#include <stddef.h>
#include <stdint.h>

#include "augment/deferred_calls.h"
#include "callgrind/callgrind_reader.h"
#include "core/idmap.h"

struct resolver;
struct stream;

enum move_kind { MOVE_LINE, MOVE_CALL, MOVE_COST };

struct move {
	enum move_kind kind;
	uint32_t block;            /* sequence number of the block it moved out of */
	uint32_t home;             /* writer function of that block */
	uint32_t owner;            /* writer function it moves to */
	int64_t sym;               /* the symbol owning it, or -1 (foreign code) */
	int foreign;               /* code that no symbol covers (resolve_foreign_identity()) */
	int contested;             /* its address was claimed by several symbol names */
	uint64_t addr;
	uint64_t pos[CG_MAX_POS];  /* position as written */
	uint32_t file;             /* writer file of that position: pos and file come from one
	                              row of the owner's line table (resolve_place()) */
	uint64_t src[CG_MAX_POS];  /* the home code that ran last before it (or pos) */
	uint32_t src_file;         /* ... its writer file */
	uint64_t count;            /* executions of its instruction */
	size_t ref;                /* index of its costs (moves.c's) */
	size_t call;               /* CALL: its index among the held calls (moves_hold_call()) */
};

struct moves_synth;

struct moves {
	const struct stream *s;
	const struct resolver *res;      /* the part's functions, for rule 9 */
	struct move *v;
	size_t n, cap;
	uint64_t *costs;                 /* nevents per move */
	size_t ncosts, costs_cap;
	struct moves_synth *synth;       /* the synthetic calls of the part */
	size_t nsynth, synth_cap;
	uint64_t *synth_costs;
	size_t synth_costs_cap;
	struct idmap synth_ids;          /* (block, owner) -> index in synth */
	struct deferred_calls calls;
	uint32_t *elf_owner;             /* scratch: per move, the ELF function found, + 1 */
	uint64_t *elf_width;
	size_t elf_owner_cap;
};

/* MV empty, reading S and RES (not owned; they outlive MV). */
void moves_init(struct moves *mv, const struct stream *s, const struct resolver *res);
void moves_free(struct moves *mv);

/* Forgets the part's moves and held calls; the next ones have S's current events. */
void moves_reset(struct moves *mv);

/* Holds M (copied; its ref is set here) with costs COSTS (nevents of them: a line's self
 * costs, a call's inclusive costs as the input gave them). Returns the copy, valid until
 * the next moves_add(). */
struct move *moves_add(struct moves *mv, const struct move *m, const uint64_t *costs);

/* Holds call C (deferred_calls_add()). Returns its index, for the call field of a
 * MOVE_CALL. */
size_t moves_hold_call(struct moves *mv, const struct dcall *c);

/* The end of a part: assigns the final owners (rule 9), drops the returns recorded as
 * calls (rule 6), writes the moved lines, the held calls and the synthetic calls, and
 * forgets them all. Returns 0, or -1 when the calls that moved out of one block add up to
 * more than 2^64 (a synthetic call's cost cannot be written; the part is then half
 * written and the run must fail). */
int moves_end_part(struct moves *mv);

#endif
