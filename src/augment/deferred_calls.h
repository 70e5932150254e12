/* deferred_calls.h - call records held until the end of a part, and the one rule that
 * needs both ends of an arc: a return recorded as a call (README "What augment does",
 * rule 6).
 *
 * V8's baseline code calls a builtin that pushes the frame and returns with a lower stack
 * pointer; callgrind records that return as a call from the builtin P to the return
 * address B inside the JIT function F. The record P -> B and F's call to P at the call
 * site s just before B may come in either order in a part, so every call made from JIT
 * code and every call into the interior of a JIT function is held here, and the part's
 * calls are matched when the part ends. Memory: one entry per such call record of the
 * part (the part's distinct arcs), never more than the part's call records. */
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
	size_t i;                   /* index in v */
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

/* A held call: 24 bytes, and its costs, count and positions in the pool (one stride a
 * call, by its index). */
struct dcall_held {
	uint32_t caller, callee, file;
	int32_t caller_sym, callee_sym;
	unsigned interior : 1;
	unsigned dropped : 1;       /* a return recorded as a call */
};

struct deferred_calls {
	struct dcall_held *v;
	size_t n, cap;
	uint64_t *pool;             /* per call: costs (nevents), count, pos (npos), target (npos) */
	size_t pool_cap;
	unsigned nevents, npos;
	int instr;                  /* index of the instruction address in a position, or -1 */
	struct idmap returns;       /* scratch: (symbol, caller) of each maybe-return */
	struct dcall_site *order;   /* scratch for matching */
	size_t order_cap;
};

void deferred_calls_init(struct deferred_calls *q);
void deferred_calls_free(struct deferred_calls *q);
/* Forgets every call; the next ones have NEVENTS events and NPOS positions, the
 * instruction address at INSTR (-1: none, and no call is matched). */
void deferred_calls_reset(struct deferred_calls *q, unsigned nevents, unsigned npos, int instr);
/* Holds C; returns its index. */
size_t deferred_calls_add(struct deferred_calls *q, const struct dcall *c);

static inline uint64_t *deferred_calls_costs(const struct deferred_calls *q, size_t i)
{
	return q->pool + i * (q->nevents + 1 + 2 * (size_t)q->npos);
}
static inline uint64_t deferred_calls_count(const struct deferred_calls *q, size_t i)
{
	return deferred_calls_costs(q, i)[q->nevents];
}
static inline const uint64_t *deferred_calls_pos(const struct deferred_calls *q, size_t i)
{
	return deferred_calls_costs(q, i) + q->nevents + 1;
}
static inline const uint64_t *deferred_calls_target(const struct deferred_calls *q, size_t i)
{
	return deferred_calls_pos(q, i) + q->npos;
}

/* Finds the returns recorded as calls: a call R from P into JIT function F at an address
 * B that is not F's start, from a call site outside F, is one when F's code calls P at a
 * site s with 0 < B - s <= 15 (B is that call's return address) and the calls at s
 * (all records from F's code at s to P together, whatever identity ran it) have at least R's count and, per event, at
 * least the cost left after earlier matches. R is marked dropped and its inclusive cost
 * is subtracted from the calls at s (their count is kept). Returns the number dropped. */
size_t deferred_calls_match_returns(struct deferred_calls *q);

#endif
