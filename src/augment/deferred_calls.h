/* deferred_calls.h - call records held until the end of a part, and the one rule that
 * needs both ends of an arc: a return recorded as a call (README "What augment does",
 * rule 6).
 *
 * V8's baseline code calls a builtin that pushes the frame and returns with a lower stack
 * pointer; callgrind records that return as a call from the builtin P to the return
 * address B inside the JIT function F. The record P -> B and F's call to P at the call
 * site s just before B may come in either order in a part, so every call made from JIT
 * code and every call into the interior of a JIT function is held here, and the part's
 * calls are matched when the part ends. Memory: per such call record of the part (the
 * part's distinct arcs, never more than its call records), 9 bytes and its record in a
 * compact stream. */
#ifndef CGJIT_DEFERRED_CALLS_H
#define CGJIT_DEFERRED_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_reader.h"
#include "core/idmap.h"

/* A call from JIT code in the order of matching (no comparator context). */
struct dcall_site {
	int32_t caller_sym;
	uint32_t callee;
	uint64_t site;
	size_t i;                   /* index of the call */
	size_t k;                   /* its costs and count in the scratch pool */
};

/* A call to hold: the writer's caller and callee, the symbols and positions the rule
 * matches on. */
struct dcall {
	uint32_t caller, callee;    /* writer functions (output identities) */
	uint32_t file;              /* writer file of the call site */
	int32_t caller_sym;         /* JIT symbol owning the call site, or -1 */
	int32_t callee_sym;         /* JIT symbol owning the target, or -1 */
	int interior;               /* the target is inside callee_sym, not its start, and
	                               the site outside it: maybe a return */
	uint64_t count;
	const uint64_t *pos, *target;   /* as written (npos each); the instruction addresses
	                                   of the site and the target are at the instr index */
	const uint64_t *costs;      /* inclusive, nevents */
};

/* Per held call, in memory: its caller and file (rule 9 may give it another) and flags.
 * The rest is in the stream: callee, symbols, count, costs, site and target, as
 * variable-length numbers, positions as differences from the previous call's (on the big
 * node profile 1 to 3 bytes where 8 were kept). The calls are read back in order
 * (struct dcall_cursor): matching reads them twice and writing once. */
struct dcall_at {
	uint32_t caller, file;
};
enum {
	DCALL_INTERIOR = 1,         /* struct dcall's interior */
	DCALL_DROPPED = 2,          /* a return recorded as a call: not written */
	DCALL_LOWERED = 4,          /* its costs are in the scratch pool (matching lowered them) */
};

struct deferred_calls {
	struct dcall_at *at;
	uint8_t *flags;             /* DCALL_* */
	size_t n, at_cap, flags_cap;
	unsigned char *stream;
	size_t len, stream_cap;
	uint64_t last_pos[CG_MAX_POS], last_target[CG_MAX_POS];   /* of the call added last */
	unsigned nevents, npos;
	int instr;                  /* index of the instruction address in a position, or -1 */
	/* scratch for matching */
	struct idmap returns;       /* (symbol, caller) of each maybe-return */
	struct dcall_site *order;
	size_t order_cap;
	struct dcall_site *interior;   /* the maybe-returns, in order (site: their target) */
	size_t interior_cap;
	uint64_t *pool;             /* per call taking part, in call order: costs (nevents),
	                               count */
	size_t *pool_call;          /* ... and that call's index */
	size_t npool, pool_cap, pool_call_cap;
};

/* Reads the held calls in order: deferred_calls_rewind(), then each deferred_calls_next()
 * fills C (its pointers into the cursor, valid until the next call) and FLAGS; I is the
 * index of the next call. */
struct dcall_cursor {
	size_t i, off;
	size_t pooled;              /* pool entries of the calls before I */
	struct dcall c;
	unsigned flags;             /* DCALL_* */
	uint64_t pos[CG_MAX_POS], target[CG_MAX_POS], costs[CG_MAX_EVENTS];
};

void deferred_calls_init(struct deferred_calls *q);
void deferred_calls_free(struct deferred_calls *q);
/* Forgets every call; the next ones have NEVENTS events and NPOS positions, the
 * instruction address at INSTR (-1: none, and no call is matched). */
void deferred_calls_reset(struct deferred_calls *q, unsigned nevents, unsigned npos, int instr);
/* Holds C; returns its index. */
size_t deferred_calls_add(struct deferred_calls *q, const struct dcall *c);
/* Call I is made from CALLER, in FILE (rule 9 gave its site to an ELF function). */
static inline void deferred_calls_move(struct deferred_calls *q, size_t i, uint32_t caller,
				       uint32_t file)
{
	q->at[i] = (struct dcall_at){ caller, file };
}
static inline int deferred_calls_dropped(const struct deferred_calls *q, size_t i)
{
	return (q->flags[i] & DCALL_DROPPED) != 0;
}

void deferred_calls_rewind(struct dcall_cursor *k);
/* The next call into K (with its costs as matching left them): 1, or 0 after the last. */
int deferred_calls_next(const struct deferred_calls *q, struct dcall_cursor *k);

/* Finds the returns recorded as calls: a call R from P into JIT function F at an address
 * B that is not F's start, from a call site outside F, is one when F's code calls P at a
 * site s with 0 < B - s <= 15 (B is that call's return address) and the calls at s
 * (all records from F's code at s to P together, whatever identity ran it) have at least R's count and, per event, at
 * least the cost left after earlier matches. R is marked dropped and its inclusive cost
 * is subtracted from the calls at s (their count is kept). Returns the number dropped. */
size_t deferred_calls_match_returns(struct deferred_calls *q);   /* once per part */

#endif
