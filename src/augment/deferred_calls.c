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
}

void deferred_calls_free(struct deferred_calls *q)
{
	free(q->v);
	free(q->pool);
	free(q->order);
	memset(q, 0, sizeof(*q));
}

void deferred_calls_reset(struct deferred_calls *q, unsigned nevents)
{
	q->n = 0;
	q->nevents = nevents;
}

void deferred_calls_add(struct deferred_calls *q, const struct dcall *c, const uint64_t *costs)
{
	XGROW(q->v, q->cap, q->n + 1);
	XGROW(q->pool, q->pool_cap, (q->n + 1) * q->nevents + 1);
	struct dcall *d = &q->v[q->n];
	*d = *c;
	d->dropped = 0;
	d->costs = q->n * q->nevents;
	memcpy(q->pool + d->costs, costs, q->nevents * sizeof(*costs));
	q->n++;
}

uint64_t *deferred_calls_costs(struct deferred_calls *q, const struct dcall *c)
{
	return q->pool + c->costs;
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
static size_t last_site_below(const struct deferred_calls *q, size_t n, int64_t sym,
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

static int is_return_candidate(const struct dcall *r)
{
	return r->callee_sym >= 0 && r->dest != r->callee_start && r->caller_sym != r->callee_sym;
}

size_t deferred_calls_match_returns(struct deferred_calls *q)
{
	XGROW(q->order, q->order_cap, q->n + 1);
	size_t ns = 0;
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i].caller_sym >= 0)
			q->order[ns++] = (struct dcall_site){ q->v[i].caller_sym, q->v[i].callee,
							      q->v[i].site, i };
	if (ns == 0)
		return 0;
	qsort(q->order, ns, sizeof(*q->order), cmp_site);
	size_t dropped = 0;
	unsigned ne = q->nevents;
	for (size_t i = 0; i < q->n; i++) {
		struct dcall *r = &q->v[i];
		if (!is_return_candidate(r))
			continue;
		size_t last = last_site_below(q, ns, r->callee_sym, r->caller, r->dest);
		if (last == ns)
			continue;
		uint64_t site = q->order[last].site;
		if (r->dest - site > MAX_CALL_LEN)
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
			const struct dcall *s = &q->v[q->order[k].i];
			count += s->count;
			for (unsigned e = 0; e < ne; e++)
				left[e] += q->pool[s->costs + e];
		}
		const uint64_t *rc = q->pool + r->costs;
		int fits = r->count <= count;
		for (unsigned e = 0; fits && e < ne; e++)
			fits = rc[e] <= left[e];
		if (!fits)
			continue;
		r->dropped = 1;
		dropped++;
		for (unsigned e = 0; e < ne; e++) {
			uint64_t take = rc[e];
			for (size_t k = first; take && k <= last; k++) {
				uint64_t *sc = q->pool + q->v[q->order[k].i].costs + e;
				uint64_t t = *sc < take ? *sc : take;
				*sc -= t;
				take -= t;
			}
		}
	}
	return dropped;
}
