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

struct dcall {
	uint32_t caller, callee;    /* writer functions (output identities) */
	uint32_t file;              /* writer file of the call site */
	int64_t caller_sym;         /* JIT symbol owning the call site, or -1 */
	int64_t callee_sym;         /* JIT symbol owning the target, or -1 */
	uint64_t site, dest;        /* instruction addresses of the call site and the target */
	uint64_t callee_start;      /* start of callee_sym */
	uint64_t count;
	uint64_t pos[CG_MAX_POS], target[CG_MAX_POS];   /* as written */
	int dropped;                /* a return recorded as a call */
	size_t costs;               /* index of its inclusive costs in the cost pool */
};

/* A call from JIT code in the order of matching, with its sort key (no comparator context). */
struct dcall_site {
	int64_t caller_sym;
	uint32_t callee;
	uint64_t site;
	size_t i;                   /* index in v */
};

struct deferred_calls {
	struct dcall *v;
	size_t n, cap;
	uint64_t *pool;             /* nevents costs per call */
	size_t pool_cap;
	unsigned nevents;
	struct dcall_site *order;   /* scratch for matching */
	size_t order_cap;
};

void deferred_calls_init(struct deferred_calls *q);
void deferred_calls_free(struct deferred_calls *q);
/* Forgets every call; the next ones have NEVENTS events. */
void deferred_calls_reset(struct deferred_calls *q, unsigned nevents);
/* Holds C (its costs and dropped fields are set here) with inclusive COSTS. */
void deferred_calls_add(struct deferred_calls *q, const struct dcall *c, const uint64_t *costs);
uint64_t *deferred_calls_costs(struct deferred_calls *q, const struct dcall *c);

/* Finds the returns recorded as calls: a call R from P into JIT function F at an address
 * B that is not F's start, from a call site outside F, is one when F's code calls P at a
 * site s with 0 < B - s <= 15 (B is that call's return address) and the calls at s
 * (all records from F's code at s to P together, whatever identity ran it) have at least R's count and, per event, at
 * least the cost left after earlier matches. R is marked dropped and its inclusive cost
 * is subtracted from the calls at s (their count is kept). Returns the number dropped. */
size_t deferred_calls_match_returns(struct deferred_calls *q);

#endif
