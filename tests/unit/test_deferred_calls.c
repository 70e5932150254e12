/* Unit tests for deferred_calls.c: held calls keep what they were given, and the returns
 * recorded as calls (README rule 6) are found as a direct reading of the rule finds them,
 * on random parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "augment/deferred_calls.h"

static void test_deferred_calls__held_as_given(void **state)
{
	(void)state;
	struct deferred_calls q;
	deferred_calls_init(&q);
	deferred_calls_reset(&q, 2, 3, 0);
	for (uint32_t i = 0; i < 1000; i++) {
		uint64_t pos[3] = { 0x1000 + i, i, 7 }, target[3] = { 0x2000 + i, i + 1, 8 };
		uint64_t costs[2] = { i * 3, i * 5 };
		struct dcall c = { .caller = i, .callee = i + 1, .file = i % 7,
				   .caller_sym = (int32_t)i % 3 - 1, .callee_sym = 5,
				   .interior = i % 2, .count = i + 100, .pos = pos, .target = target,
				   .costs = costs };
		assert_int_equal(deferred_calls_add(&q, &c), i);
	}
	/* rule 9 gives call 500's site to another function */
	deferred_calls_move(&q, 500, 77, 9);
	struct dcall_cursor k;
	deferred_calls_rewind(&k);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_true(deferred_calls_next(&q, &k));
		const struct dcall *d = &k.c;
		assert_int_equal(d->caller, i == 500 ? 77 : i);
		assert_int_equal(d->callee, i + 1);
		assert_int_equal(d->file, i == 500 ? 9 : i % 7);
		assert_int_equal(d->caller_sym, (int32_t)i % 3 - 1);
		assert_int_equal(d->callee_sym, 5);
		assert_int_equal(d->interior, i % 2);
		assert_int_equal(k.flags & DCALL_DROPPED, 0);
		assert_int_equal(d->count, i + 100);
		assert_int_equal(d->costs[0], i * 3);
		assert_int_equal(d->costs[1], i * 5);
		assert_int_equal(d->pos[0], 0x1000 + i);
		assert_int_equal(d->pos[1], i);
		assert_int_equal(d->pos[2], 7);
		assert_int_equal(d->target[0], 0x2000 + i);
		assert_int_equal(d->target[1], i + 1);
		assert_int_equal(d->target[2], 8);
	}
	assert_false(deferred_calls_next(&q, &k));
	deferred_calls_reset(&q, 1, 1, 0);
	assert_int_equal(q.n, 0);
	deferred_calls_free(&q);
}

/* Numbers at the edges of the stream's coding: 0, 2^64 - 1, positions that jump either
 * way by any amount, symbol -1 and the largest, 64 events. */
static void test_deferred_calls__extremes_kept(void **state)
{
	(void)state;
	static const uint64_t v[] = { 0, 1, 127, 128, UINT32_MAX, (uint64_t)1 << 63,
				      UINT64_MAX - 1, UINT64_MAX };
	enum { NV = sizeof(v) / sizeof(v[0]), N = 200 };
	struct deferred_calls q;
	deferred_calls_init(&q);
	deferred_calls_reset(&q, CG_MAX_EVENTS, CG_MAX_POS, 0);
	uint64_t want[N][2 + CG_MAX_EVENTS + 2 * CG_MAX_POS];
	for (size_t i = 0; i < N; i++) {
		uint64_t *w = want[i];
		for (size_t j = 0; j < 2 + CG_MAX_EVENTS + 2 * CG_MAX_POS; j++)
			w[j] = v[(i * 7 + j * 3 + i * j) % NV];
		struct dcall c = { .caller = (uint32_t)w[0], .callee = UINT32_MAX - (uint32_t)i,
				   .caller_sym = i % 2 ? -1 : INT32_MAX, .callee_sym = (int32_t)i,
				   .count = w[1], .costs = w + 2, .pos = w + 2 + CG_MAX_EVENTS,
				   .target = w + 2 + CG_MAX_EVENTS + CG_MAX_POS };
		deferred_calls_add(&q, &c);
	}
	struct dcall_cursor k;
	deferred_calls_rewind(&k);
	for (size_t i = 0; i < N; i++) {
		assert_true(deferred_calls_next(&q, &k));
		const uint64_t *w = want[i];
		assert_int_equal(k.c.caller, (uint32_t)w[0]);
		assert_int_equal(k.c.callee, UINT32_MAX - (uint32_t)i);
		assert_int_equal(k.c.caller_sym, i % 2 ? -1 : INT32_MAX);
		assert_int_equal(k.c.callee_sym, (int32_t)i);
		assert_true(k.c.count == w[1]);
		assert_memory_equal(k.c.costs, w + 2, CG_MAX_EVENTS * sizeof(*w));
		assert_memory_equal(k.c.pos, w + 2 + CG_MAX_EVENTS, CG_MAX_POS * sizeof(*w));
		assert_memory_equal(k.c.target, w + 2 + CG_MAX_EVENTS + CG_MAX_POS, CG_MAX_POS * sizeof(*w));
	}
	assert_false(deferred_calls_next(&q, &k));
	deferred_calls_free(&q);
}

/* ---- rule 6, read directly ---- */

enum { NEV = 2, MAXC = 400 };

struct model_call {
	uint32_t caller, callee;
	int32_t caller_sym, callee_sym;
	int interior, dropped;
	uint64_t site, dest, count, costs[NEV];
};

/* For each maybe-return R in order: the calls at the highest site s below R's target from
 * R's symbol to R's caller, if s is at most 15 bytes before it, together have R's count
 * and, per event, its cost left; then R is dropped and its cost taken from them in order. */
static size_t model_match(struct model_call *m, size_t n)
{
	size_t dropped = 0;
	for (size_t i = 0; i < n; i++) {
		struct model_call *r = &m[i];
		if (!r->interior)
			continue;
		int found = 0;
		uint64_t s = 0;
		for (size_t k = 0; k < n; k++)
			if (m[k].caller_sym >= 0 && m[k].caller_sym == r->callee_sym &&
			    m[k].callee == r->caller && m[k].site < r->dest && (!found || m[k].site > s)) {
				s = m[k].site;
				found = 1;
			}
		if (!found || r->dest - s > 15)
			continue;
		uint64_t count = 0, left[NEV] = { 0 };
		for (size_t k = 0; k < n; k++)
			if (m[k].caller_sym == r->callee_sym && m[k].callee == r->caller && m[k].site == s) {
				count += m[k].count;
				for (int e = 0; e < NEV; e++)
					left[e] += m[k].costs[e];
			}
		int fits = r->count <= count;
		for (int e = 0; e < NEV; e++)
			fits = fits && r->costs[e] <= left[e];
		if (!fits)
			continue;
		r->dropped = 1;
		dropped++;
		for (int e = 0; e < NEV; e++) {
			uint64_t take = r->costs[e];
			for (size_t k = 0; k < n && take; k++)
				if (m[k].caller_sym == r->callee_sym && m[k].callee == r->caller &&
				    m[k].site == s) {
					uint64_t t = m[k].costs[e] < take ? m[k].costs[e] : take;
					m[k].costs[e] -= t;
					take -= t;
				}
		}
	}
	return dropped;
}

static void random_part(struct model_call *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct model_call *c = &m[i];
		memset(c, 0, sizeof(*c));
		c->count = 1 + (uint64_t)(rand() % 4);
		for (int e = 0; e < NEV; e++)
			c->costs[e] = (uint64_t)(rand() % 50);
		if (rand() % 3) {   /* a call from JIT code */
			c->caller_sym = rand() % 4;
			c->caller = 100 + (uint32_t)(rand() % 4);
			c->callee = (uint32_t)(rand() % 4);
			c->site = 0x1000u * (uint64_t)(c->caller_sym + 1) + (uint64_t)(rand() % 64);
			c->callee_sym = -1;
		} else {            /* maybe a return: P into symbol F's interior */
			c->callee_sym = rand() % 4;
			/* from outside F: no symbol, or another one, whose call may itself be
			 * on a return's arc */
			c->caller_sym = rand() % 2 ? -1 : (c->callee_sym + 1 + rand() % 3) % 4;
			c->caller = (uint32_t)(rand() % 4) + (rand() % 4 ? 0 : 100);
			c->callee = 100 + (uint32_t)(rand() % 4);
			c->site = 0x1000u * (uint64_t)(c->caller_sym + 1) + (uint64_t)(rand() % 64);
			c->dest = 0x1000u * (uint64_t)(c->callee_sym + 1) + (uint64_t)(rand() % 80);
			c->interior = 1;
		}
	}
}

static void test_deferred_calls__returns_match_the_rule(void **state)
{
	(void)state;
	srand(6);
	struct deferred_calls q;
	deferred_calls_init(&q);
	static struct model_call m[MAXC];
	size_t total = 0;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(rand() % MAXC);
		random_part(m, n);
		/* positions "line instr": the addresses are not the first number */
		deferred_calls_reset(&q, NEV, 2, 1);
		for (size_t i = 0; i < n; i++) {
			uint64_t pos[2] = { 1, m[i].site }, target[2] = { 2, m[i].dest };
			struct dcall c = { .caller = m[i].caller, .callee = m[i].callee,
					   .caller_sym = m[i].caller_sym, .callee_sym = m[i].callee_sym,
					   .interior = m[i].interior, .count = m[i].count, .pos = pos,
					   .target = target, .costs = m[i].costs };
			deferred_calls_add(&q, &c);
		}
		size_t want = model_match(m, n);
		assert_int_equal(deferred_calls_match_returns(&q), want);
		total += want;
		struct dcall_cursor k;
		deferred_calls_rewind(&k);
		for (size_t i = 0; i < n; i++) {
			assert_true(deferred_calls_next(&q, &k));
			assert_int_equal(deferred_calls_dropped(&q, i), m[i].dropped);
			assert_int_equal((k.flags & DCALL_DROPPED) != 0, m[i].dropped);
			assert_int_equal(k.c.count, m[i].count);
			for (int e = 0; e < NEV; e++)
				assert_int_equal(k.c.costs[e], m[i].costs[e]);
		}
	}
	assert_true(total > 100);   /* the parts had returns to find */
	/* a maybe-return but no call on its arc, in a fresh part: nothing to sort (no
	 * scratch yet), nothing dropped */
	struct deferred_calls fresh;
	deferred_calls_init(&fresh);
	deferred_calls_reset(&fresh, NEV, 2, 1);
	uint64_t p2[2] = { 1, 0x1005 }, c2[NEV] = { 1, 1 };
	deferred_calls_add(&fresh, &(struct dcall){ .caller = 1, .callee = 100, .caller_sym = -1,
						    .callee_sym = 0, .interior = 1, .count = 1,
						    .pos = p2, .target = p2, .costs = c2 });
	assert_int_equal(deferred_calls_match_returns(&fresh), 0);
	assert_int_equal(deferred_calls_dropped(&fresh, 0), 0);
	deferred_calls_free(&fresh);
	/* no instruction addresses: nothing is matched */
	deferred_calls_reset(&q, NEV, 1, -1);
	uint64_t pos[1] = { 1 }, costs[NEV] = { 1, 1 };
	deferred_calls_add(&q, &(struct dcall){ .callee_sym = 0, .interior = 1, .count = 1,
						.pos = pos, .target = pos, .costs = costs });
	assert_int_equal(deferred_calls_match_returns(&q), 0);
	deferred_calls_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deferred_calls__held_as_given),
		cmocka_unit_test(test_deferred_calls__extremes_kept),
		cmocka_unit_test(test_deferred_calls__returns_match_the_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
