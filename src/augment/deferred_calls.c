/* deferred_calls.c - call records held until the part ends; returns recorded as calls
 * (docs/formats.md 2.3). */
#include <stdlib.h>
#include <string.h>

#include "augment/deferred_calls.h"
#include "core/xalloc.h"

/* The longest x86-64 instruction: a return address lies at most this far past its call. */
enum { MAX_CALL_LEN = 15 };

void deferred_calls_init(struct deferred_calls *q)
{
	memset(q, 0, sizeof(*q));
	q->instr = -1;
	idmap_init(&q->returns);
}

void deferred_calls_free(struct deferred_calls *q)
{
	free(q->v);
	free(q->pool);
	free(q->order);
	idmap_free(&q->returns);
	memset(q, 0, sizeof(*q));
}

void deferred_calls_reset(struct deferred_calls *q, unsigned nevents, unsigned npos, int instr)
{
	q->n = 0;
	q->nevents = nevents;
	q->npos = npos;
	q->instr = instr;
}

size_t deferred_calls_add(struct deferred_calls *q, const struct dcall *c)
{
	size_t stride = q->nevents + 1 + 2 * (size_t)q->npos;
	XGROW(q->v, q->cap, q->n + 1);
	XGROW(q->pool, q->pool_cap, (q->n + 1) * stride);
	q->v[q->n] = (struct dcall_held){
		.caller = c->caller, .callee = c->callee, .file = c->file,
		.caller_sym = c->caller_sym, .callee_sym = c->callee_sym,
		.interior = c->interior != 0,
	};
	uint64_t *p = q->pool + q->n * stride;
	memcpy(p, c->costs, q->nevents * sizeof(*p));
	p[q->nevents] = c->count;
	memcpy(p + q->nevents + 1, c->pos, q->npos * sizeof(*p));
	memcpy(p + q->nevents + 1 + q->npos, c->target, q->npos * sizeof(*p));
	return q->n++;
}

/* Calls from JIT code ordered by (symbol of the call site, callee, site). All records of
 * one site count together: F's code at s may run in several identities (F, F'2, a
 * fragment of another symbol that jumped there). */
static int cmp_site(const void *a, const void *b)
{
	const struct dcall_site *x = a, *y = b;
	if (x->caller_sym != y->caller_sym)
		return x->caller_sym < y->caller_sym ? -1 : 1;
	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

/* Index in ORDER[0..N) of the last call from symbol SYM's code to CALLEE at a site below
 * DEST, or N. */
static size_t last_site_below(const struct deferred_calls *q, size_t n, int32_t sym,
			      uint32_t callee, uint64_t dest)
{
	size_t lo = 0, hi = n;   /* first entry not below (caller, callee, dest) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dcall_site *m = &q->order[mid];
		int below = m->caller_sym != sym ? m->caller_sym < sym
			  : m->callee != callee ? m->callee < callee
			  : m->site < dest;
		if (below)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return n;
	const struct dcall_site *s = &q->order[lo - 1];
	return s->caller_sym == sym && s->callee == callee ? lo - 1 : n;
}

/* The key of the arc from symbol SYM's code to writer function FN. */
static uint64_t arc_key(int32_t sym, uint32_t fn)
{
	return (uint64_t)(uint32_t)sym << 32 | fn;
}

/* The calls from JIT code that a maybe-return can match, sorted (cmp_site): those from
 * a return's symbol to its caller. Held calls are mostly calls from JIT code; few of
 * them are on such an arc. Returns their number. */
static size_t order_sites(struct deferred_calls *q)
{
	idmap_clear(&q->returns);
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i].interior)
			idmap_put(&q->returns, arc_key(q->v[i].callee_sym, q->v[i].caller), 0);
	if (q->returns.count == 0)
		return 0;
	size_t ns = 0;
	for (size_t i = 0; i < q->n; i++) {
		const struct dcall_held *c = &q->v[i];
		if (c->caller_sym < 0 || idmap_get(&q->returns, arc_key(c->caller_sym, c->callee)) == UINT32_MAX)
			continue;
		XGROW(q->order, q->order_cap, ns + 1);
		q->order[ns++] = (struct dcall_site){ c->caller_sym, c->callee,
						      deferred_calls_pos(q, i)[q->instr], i };
	}
	if (ns)   /* ORDER may still be NULL, which qsort() must not get */
		qsort(q->order, ns, sizeof(*q->order), cmp_site);
	return ns;
}

size_t deferred_calls_match_returns(struct deferred_calls *q)
{
	if (q->instr < 0)
		return 0;
	size_t ns = order_sites(q);
	if (ns == 0)
		return 0;
	size_t dropped = 0;
	unsigned ne = q->nevents;
	for (size_t i = 0; i < q->n; i++) {
		struct dcall_held *r = &q->v[i];
		if (!r->interior)
			continue;
		uint64_t dest = deferred_calls_target(q, i)[q->instr];
		size_t last = last_site_below(q, ns, r->callee_sym, r->caller, dest);
		if (last == ns)
			continue;
		uint64_t site = q->order[last].site;
		if (dest - site > MAX_CALL_LEN)
			continue;
		size_t first = last;
		while (first > 0 && q->order[first - 1].site == site &&
		       q->order[first - 1].caller_sym == r->callee_sym &&
		       q->order[first - 1].callee == r->caller)
			first--;
		/* The calls at s must contain the return's arc: no more calls, no more cost. */
		uint64_t count = 0;
		uint64_t left[CG_MAX_EVENTS] = { 0 };
		for (size_t k = first; k <= last; k++) {
			size_t s = q->order[k].i;
			count += deferred_calls_count(q, s);
			const uint64_t *sc = deferred_calls_costs(q, s);
			for (unsigned e = 0; e < ne; e++)
				left[e] += sc[e];
		}
		const uint64_t *rc = deferred_calls_costs(q, i);
		int fits = deferred_calls_count(q, i) <= count;
		for (unsigned e = 0; fits && e < ne; e++)
			fits = rc[e] <= left[e];
		if (!fits)
			continue;
		r->dropped = 1;
		dropped++;
		for (unsigned e = 0; e < ne; e++) {
			uint64_t take = rc[e];
			for (size_t k = first; take && k <= last; k++) {
				uint64_t *sc = deferred_calls_costs(q, q->order[k].i) + e;
				uint64_t t = *sc < take ? *sc : take;
				*sc -= t;
				take -= t;
			}
		}
	}
	return dropped;
}
