/* prof_arcs.c - the call arcs of a profile being read, summed by (caller, callee), with an
 * index of arc numbers only (prof_arcs.h says why). */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/prof_arcs.h"

void prof_arc_table_init(struct prof_arc_table *t, unsigned nev)
{
	memset(t, 0, sizeof(*t));
	t->nev = nev;
}

void prof_arc_table_free(struct prof_arc_table *t)
{
	free(t->arcs);
	free(t->costs);
	slot_index_free(&t->index);
	memset(t, 0, sizeof(*t));
}

void prof_arc_table_drop_index(struct prof_arc_table *t)
{
	slot_index_free(&t->index);
}

static uint64_t arc_key(uint32_t caller, uint32_t callee)
{
	return (uint64_t)caller << 32 | callee;
}

static uint64_t key_of_arc(const void *ctx, size_t a)
{
	const struct prof_arc_table *t = ctx;
	return arc_key(t->arcs[a].caller, t->arcs[a].callee);
}

void prof_arc_table_add(struct prof_arc_table *t, uint32_t caller, uint32_t callee,
			uint64_t count, const uint64_t *costs)
{
	struct slot_index *x = &t->index;
	slot_index_reserve(x, 0, t->n, key_of_arc, t);
	uint32_t a;
	for (size_t i = slot_index_home(x, arc_key(caller, callee));; i = slot_index_next(x, i)) {
		if (!x->slots[i]) {
			a = (uint32_t)t->n++;
			XGROW(t->arcs, t->arcs_cap, t->n);
			XGROW(t->costs, t->costs_cap, t->n * t->nev);
			t->arcs[a] = (struct prof_arc){ caller, callee, 0 };
			memset(t->costs + (size_t)a * t->nev, 0, t->nev * sizeof(*t->costs));
			x->slots[i] = a + 1;
			break;
		}
		a = x->slots[i] - 1;
		if (t->arcs[a].caller == caller && t->arcs[a].callee == callee)
			break;
	}
	t->arcs[a].count += count;
	uint64_t *c = t->costs + (size_t)a * t->nev;
	for (unsigned e = 0; e < t->nev; e++)
		c[e] += costs[e];
}
