/* deferred_calls.c - call records held until the part ends, in a compact stream; returns
 * recorded as calls (docs/formats.md 2.3). */
#include <stdlib.h>
#include <string.h>

#include "augment/deferred_calls.h"
#include "core/varint.h"
#include "core/xalloc.h"

/* The longest x86-64 instruction: a return address lies at most this far past its call. */
enum { MAX_CALL_LEN = 15 };

/* The most bytes one call takes in the stream: a 64-bit number takes 10 at most. */
#define MAX_RECORD(q) (VARINT_MAX * (3 + 1 + (size_t)(q)->nevents + 2 * (size_t)(q)->npos))

void deferred_calls_init(struct deferred_calls *q)
{
	memset(q, 0, sizeof(*q));
	q->instr = -1;
	idmap_init(&q->returns);
}

void deferred_calls_free(struct deferred_calls *q)
{
	free(q->at);
	free(q->flags);
	free(q->stream);
	free(q->order);
	free(q->interior);
	free(q->pool);
	idmap_free(&q->returns);
	free(q->pool_call);
	memset(q, 0, sizeof(*q));
}

void deferred_calls_reset(struct deferred_calls *q, unsigned nevents, unsigned npos, int instr)
{
	q->n = 0;
	q->len = 0;
	memset(q->last_pos, 0, sizeof(q->last_pos));
	memset(q->last_target, 0, sizeof(q->last_target));
	q->nevents = nevents;
	q->npos = npos;
	q->instr = instr;
}

/* ---- the stream ---- */

/* A symbol index or -1 as a number */
static uint64_t sym_code(int32_t sym)
{
	return (uint64_t)((int64_t)sym + 1);
}

size_t deferred_calls_add(struct deferred_calls *q, const struct dcall *c)
{
	XGROW(q->at, q->at_cap, q->n + 1);
	XGROW(q->flags, q->flags_cap, q->n + 1);
	XGROW(q->stream, q->stream_cap, q->len + MAX_RECORD(q));
	q->at[q->n] = (struct dcall_at){ c->caller, c->file };
	q->flags[q->n] = c->interior ? DCALL_INTERIOR : 0;
	unsigned char *p = q->stream + q->len;
	p = varint_put(p, c->callee);
	p = varint_put(p, sym_code(c->caller_sym));
	p = varint_put(p, sym_code(c->callee_sym));
	p = varint_put(p, c->count);
	for (unsigned e = 0; e < q->nevents; e++)
		p = varint_put(p, c->costs[e]);
	for (unsigned k = 0; k < q->npos; k++) {
		p = varint_put(p, varint_diff(c->pos[k], q->last_pos[k]));
		p = varint_put(p, varint_diff(c->target[k], q->last_target[k]));
		q->last_pos[k] = c->pos[k];
		q->last_target[k] = c->target[k];
	}
	q->len = (size_t)(p - q->stream);
	return q->n++;
}

void deferred_calls_rewind(struct dcall_cursor *k)
{
	memset(k, 0, sizeof(*k));
}

int deferred_calls_next(const struct deferred_calls *q, struct dcall_cursor *k)
{
	if (k->i >= q->n)
		return 0;
	size_t i = k->i++;
	const unsigned char *p = q->stream + k->off;
	uint64_t v;
	p = varint_get(p, &v);
	k->c.callee = (uint32_t)v;
	p = varint_get(p, &v);
	k->c.caller_sym = (int32_t)((int64_t)v - 1);
	p = varint_get(p, &v);
	k->c.callee_sym = (int32_t)((int64_t)v - 1);
	p = varint_get(p, &k->c.count);
	for (unsigned e = 0; e < q->nevents; e++)
		p = varint_get(p, &k->costs[e]);
	for (unsigned j = 0; j < q->npos; j++) {
		p = varint_get(p, &v);
		k->pos[j] = varint_undiff(v, k->pos[j]);
		p = varint_get(p, &v);
		k->target[j] = varint_undiff(v, k->target[j]);
	}
	k->off = (size_t)(p - q->stream);
	k->c.caller = q->at[i].caller;
	k->c.file = q->at[i].file;
	k->flags = q->flags[i];
	k->c.interior = (k->flags & DCALL_INTERIOR) != 0;
	if (k->flags & DCALL_LOWERED) {
		/* the pool is in call order, and so are the cursor's calls */
		while (q->pool_call[k->pooled] < i)
			k->pooled++;
		const uint64_t *x = q->pool + k->pooled * ((size_t)q->nevents + 1);
		memcpy(k->costs, x, q->nevents * sizeof(*x));
	}
	k->c.pos = k->pos;
	k->c.target = k->target;
	k->c.costs = k->costs;
	return 1;
}

/* ---- rule 6 ---- */

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

/* Call I's costs and count (the cursor's) into the pool: returns its index there. Calls
 * come in order, each once. */
static size_t pool_put(struct deferred_calls *q, const struct dcall_cursor *k, size_t i)
{
	size_t stride = (size_t)q->nevents + 1, np = q->npool++;
	XGROW(q->pool, q->pool_cap, (np + 1) * stride);
	XGROW(q->pool_call, q->pool_call_cap, np + 1);
	memcpy(q->pool + np * stride, k->costs, q->nevents * sizeof(*q->pool));
	q->pool[np * stride + q->nevents] = k->c.count;
	q->pool_call[np] = i;
	return np;
}

/* The calls that take part in matching, from the stream: the maybe-returns in order
 * (*NI of them) and the calls from JIT code that they can match, sorted (cmp_site): those
 * from a return's symbol to its caller (*NS). Held calls are mostly calls from JIT code;
 * few of them are on such an arc. Both keep their costs and count in the pool. */
static void collect(struct deferred_calls *q, size_t *ni, size_t *ns)
{
	struct dcall_cursor k;
	idmap_clear(&q->returns);
	q->npool = 0;
	*ni = *ns = 0;
	size_t first = 0;
	while (first < q->n && !(q->flags[first] & DCALL_INTERIOR))
		first++;
	if (first == q->n)
		return;   /* no maybe-return: nothing to read */
	deferred_calls_rewind(&k);
	while (deferred_calls_next(q, &k))
		if (k.c.interior)
			idmap_put(&q->returns, arc_key(k.c.callee_sym, k.c.caller), 0);
	deferred_calls_rewind(&k);
	while (deferred_calls_next(q, &k)) {
		size_t i = k.i - 1, at = SIZE_MAX;
		const struct dcall *c = &k.c;
		if (c->interior) {
			at = pool_put(q, &k, i);
			XGROW(q->interior, q->interior_cap, *ni + 1);
			q->interior[(*ni)++] = (struct dcall_site){ c->callee_sym, c->caller,
								    c->target[q->instr], i, at };
		}
		if (c->caller_sym < 0 || idmap_get(&q->returns, arc_key(c->caller_sym, c->callee)) == UINT32_MAX)
			continue;
		if (at == SIZE_MAX)   /* one entry for a call that is both */
			at = pool_put(q, &k, i);
		XGROW(q->order, q->order_cap, *ns + 1);
		q->order[(*ns)++] = (struct dcall_site){ c->caller_sym, c->callee, c->pos[q->instr],
							 i, at };
	}
	if (*ns)   /* ORDER may still be NULL, which qsort() must not get */
		qsort(q->order, *ns, sizeof(*q->order), cmp_site);
}

size_t deferred_calls_match_returns(struct deferred_calls *q)
{
	if (q->instr < 0)
		return 0;
	size_t ni, ns;
	collect(q, &ni, &ns);
	if (ns == 0)
		return 0;
	size_t dropped = 0, stride = (size_t)q->nevents + 1;
	unsigned ne = q->nevents;
	for (size_t j = 0; j < ni; j++) {
		const struct dcall_site *r = &q->interior[j];
		/* here caller_sym is the return's callee symbol F, callee its caller P, site B */
		uint64_t dest = r->site;
		size_t last = last_site_below(q, ns, r->caller_sym, r->callee, dest);
		if (last == ns)
			continue;
		uint64_t site = q->order[last].site;
		if (dest - site > MAX_CALL_LEN)
			continue;
		size_t first = last;
		while (first > 0 && q->order[first - 1].site == site &&
		       q->order[first - 1].caller_sym == r->caller_sym &&
		       q->order[first - 1].callee == r->callee)
			first--;
		/* The calls at s must contain the return's arc: no more calls, no more cost. */
		uint64_t count = 0;
		uint64_t left[CG_MAX_EVENTS] = { 0 };
		for (size_t k = first; k <= last; k++) {
			const uint64_t *sc = q->pool + q->order[k].k * stride;
			count += sc[ne];
			for (unsigned e = 0; e < ne; e++)
				left[e] += sc[e];
		}
		const uint64_t *rc = q->pool + r->k * stride;
		int fits = rc[ne] <= count;
		for (unsigned e = 0; fits && e < ne; e++)
			fits = rc[e] <= left[e];
		if (!fits)
			continue;
		q->flags[r->i] |= DCALL_DROPPED;
		dropped++;
		for (unsigned e = 0; e < ne; e++) {
			uint64_t take = rc[e];
			for (size_t k = first; take && k <= last; k++) {
				uint64_t *sc = q->pool + q->order[k].k * stride + e;
				uint64_t t = *sc < take ? *sc : take;
				*sc -= t;
				take -= t;
				q->flags[q->order[k].i] |= DCALL_LOWERED;
			}
		}
	}
	return dropped;
}
