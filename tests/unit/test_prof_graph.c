/* Unit tests for prof_arcs.c (call arcs summed by caller and callee, in the order of first
 * sight, through an index of arc numbers) and prof_components.c (Tarjan's components over
 * callee lists), each against a brute-force answer on random graphs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "report/prof_arcs.h"
#include "report/profile.h"

static uint32_t next_random(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* 20,000 calls among 300 functions (so most pairs come again), two events: every arc's
 * count and costs are the sums, arcs appear once each in the order of their first call,
 * and dropping the index keeps them. */
static void test_arcs__sums_and_first_sight_order(void **state)
{
	(void)state;
	enum { N = 300, CALLS = 20000 };
	struct prof_arc_table t;
	prof_arc_table_init(&t, 2);
	uint32_t *first = calloc((size_t)N * N, sizeof(*first));   /* arc + 1, brute force */
	uint64_t *count = calloc((size_t)N * N, sizeof(*count)), *cost = calloc((size_t)N * N * 2, sizeof(*cost));
	size_t narcs = 0;
	uint64_t seed = 7;
	for (int i = 0; i < CALLS; i++) {
		uint32_t a = next_random(&seed) % N, b = next_random(&seed) % (i < CALLS / 2 ? 40 : N);
		uint64_t c[2] = { next_random(&seed), (uint64_t)i };
		size_t k = (size_t)a * N + b;
		if (!first[k])
			first[k] = (uint32_t)++narcs;
		count[k] += (uint64_t)i + 1;
		cost[2 * k] += c[0];
		cost[2 * k + 1] += c[1];
		prof_arc_table_add(&t, a, b, (uint64_t)i + 1, c);
	}
	prof_arc_table_drop_index(&t);
	assert_int_equal(t.n, narcs);
	assert_null(t.index.slots);
	for (size_t k = 0; k < (size_t)N * N; k++) {
		if (!first[k])
			continue;
		const struct prof_arc *r = &t.arcs[first[k] - 1];
		assert_int_equal(r->caller, k / N);
		assert_int_equal(r->callee, k % N);
		assert_int_equal(r->count, count[k]);
		assert_int_equal(t.costs[2 * (first[k] - 1)], cost[2 * k]);
		assert_int_equal(t.costs[2 * (first[k] - 1) + 1], cost[2 * k + 1]);
	}
	prof_arc_table_free(&t);
	free(first);
	free(count);
	free(cost);
}

/* Reachability by repeated relaxation: R[a * n + b] is 1 when a reaches b. */
static unsigned char *reach(size_t n, const struct prof_arc *arcs, size_t narcs)
{
	unsigned char *r = calloc(n * n, 1);
	for (size_t i = 0; i < n; i++)
		r[i * n + i] = 1;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t a = 0; a < narcs; a++)
			for (size_t s = 0; s < n; s++)
				if (r[s * n + arcs[a].caller] && !r[s * n + arcs[a].callee])
					r[s * n + arcs[a].callee] = 1, changed = 1;
	}
	return r;
}

/* Random graphs, sparse to dense, with self-calls: two functions share a component exactly
 * when each reaches the other, the sizes count the members, and the numbers are dense. */
static void test_components__random_graphs_against_reachability(void **state)
{
	(void)state;
	uint64_t seed = 11;
	for (int round = 0; round < 40; round++) {
		size_t n = 1 + next_random(&seed) % 60, narcs = next_random(&seed) % (3 * n + 1);
		struct prof_arc *arcs = calloc(narcs + 1, sizeof(*arcs));
		for (size_t a = 0; a < narcs; a++)
			arcs[a] = (struct prof_arc){ next_random(&seed) % n, next_random(&seed) % n, 1 };
		uint32_t *comp = malloc(n * sizeof(*comp)), *size = calloc(n, sizeof(*size));
		uint32_t ncomp = prof_components(n, arcs, narcs, comp, size);
		unsigned char *r = reach(n, arcs, narcs);
		uint32_t *members = calloc(n, sizeof(*members));
		for (size_t a = 0; a < n; a++) {
			assert_true(comp[a] < ncomp);
			members[comp[a]]++;
			for (size_t b = 0; b < n; b++)
				assert_int_equal(comp[a] == comp[b], r[a * n + b] && r[b * n + a]);
		}
		for (uint32_t c = 0; c < ncomp; c++) {
			assert_true(members[c] > 0);
			assert_int_equal(size[c], members[c]);
		}
		uint32_t *again = malloc(n * sizeof(*again));
		assert_int_equal(profile_components_of(n, arcs, narcs, again), ncomp);
		assert_memory_equal(again, comp, n * sizeof(*comp));
		free(again);
		free(members);
		free(r);
		free(comp);
		free(size);
		free(arcs);
	}
}

/* A chain of 200,000 calls closed into one cycle, and the same chain open: the walk goes
 * as deep as the chain without recursion. */
static void test_components__deep_chain(void **state)
{
	(void)state;
	enum { N = 200000 };
	struct prof_arc *arcs = malloc(N * sizeof(*arcs));
	for (uint32_t i = 0; i < N; i++)
		arcs[i] = (struct prof_arc){ i, (i + 1) % N, 1 };
	uint32_t *comp = malloc(N * sizeof(*comp)), *size = malloc(N * sizeof(*size));
	assert_int_equal(prof_components(N, arcs, N, comp, size), 1);
	assert_int_equal(size[0], N);
	assert_int_equal(prof_components(N, arcs, N - 1, comp, size), N);
	for (uint32_t i = 0; i + 1 < N; i++)
		assert_true(comp[i] > comp[i + 1]);   /* Tarjan's order: callees' components first */
	free(arcs);
	free(comp);
	free(size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arcs__sums_and_first_sight_order),
		cmocka_unit_test(test_components__random_graphs_against_reachability),
		cmocka_unit_test(test_components__deep_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
