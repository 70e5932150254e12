/* prof_arcs.h - the call arcs of a profile being read, summed by (caller, callee): each
 * arc's count and inclusive cost per event, in the order of their first call line. The
 * index that finds an arc holds only arc numbers, 4 bytes a slot, and reads the key from
 * the arc itself; it is dropped as soon as reading ends, before the arcs are used
 * (docs/design.md, "Memory": a report's peak is where the inclusive costs are made). */
#ifndef CGJIT_PROF_ARCS_H
#define CGJIT_PROF_ARCS_H

#include <stddef.h>
#include <stdint.h>

#include "core/slot_index.h"
#include "report/profile.h"

struct prof_arc_table {
	unsigned nev;
	struct prof_arc *arcs;
	uint64_t *costs;        /* n * nev */
	size_t n, arcs_cap, costs_cap;
	struct slot_index index;   /* arcs by (caller, callee) */
};

void prof_arc_table_init(struct prof_arc_table *t, unsigned nev);
/* CALLER called CALLEE COUNT times with inclusive cost COSTS (nev numbers): added to
 * their arc, which is new if they had none. Not after prof_arc_table_drop_index(). */
void prof_arc_table_add(struct prof_arc_table *t, uint32_t caller, uint32_t callee,
			uint64_t count, const uint64_t *costs);
/* Frees the index: the arcs stay, and no more can be added. */
void prof_arc_table_drop_index(struct prof_arc_table *t);
void prof_arc_table_free(struct prof_arc_table *t);

#endif
