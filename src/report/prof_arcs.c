/* prof_arcs.c - the call arcs of a profile being read, summed by (caller, callee), with an
 * index of arc numbers only (prof_arcs.h says why). */
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
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
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

void prof_arc_table_drop_index(struct prof_arc_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
}

/* The arcs' (caller, callee) are the profile's own function numbers, but which pairs occur
 * is the input's choice: the slot is placed by the run's seeded mix, as idmap's are. */
static size_t home(uint32_t caller, uint32_t callee, size_t mask)
{
	return (size_t)idmap_mix((uint64_t)caller << 32 | callee) & mask;
}

/* Three quarters full at most: linear probing stays short, and at 4 bytes a slot the
 * index costs 5.3 to 10.7 bytes an arc. */
static void grow_index(struct prof_arc_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = xcalloc(n, sizeof(*slots));
	for (size_t a = 0; a < t->n; a++) {
		size_t i = home(t->arcs[a].caller, t->arcs[a].callee, n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)a + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

void prof_arc_table_add(struct prof_arc_table *t, uint32_t caller, uint32_t callee,
			uint64_t count, const uint64_t *costs)
{
	if ((t->n + 1) * 4 > t->nslots * 3)
		grow_index(t);
	size_t mask = t->nslots - 1, i = home(caller, callee, mask);
	uint32_t a;
	for (;; i = (i + 1) & mask) {
		if (!t->slots[i]) {
			a = (uint32_t)t->n++;
			XGROW(t->arcs, t->arcs_cap, t->n);
			XGROW(t->costs, t->costs_cap, t->n * t->nev);
			t->arcs[a] = (struct prof_arc){ caller, callee, 0 };
			memset(t->costs + (size_t)a * t->nev, 0, t->nev * sizeof(*t->costs));
			t->slots[i] = a + 1;
			break;
		}
		a = t->slots[i] - 1;
		if (t->arcs[a].caller == caller && t->arcs[a].callee == callee)
			break;
	}
	t->arcs[a].count += count;
	uint64_t *c = t->costs + (size_t)a * t->nev;
	for (unsigned e = 0; e < t->nev; e++)
		c[e] += costs[e];
}
