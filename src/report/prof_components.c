/* prof_components.c - the strongly connected components of a profile's call graph, by
 * Tarjan's algorithm without recursion. Its memory is part of every report's peak (the
 * inclusive costs are made from it while the arcs are held), so the graph is a list of
 * callees per caller, 4 bytes an arc, and the depth-first stack grows only as deep as the
 * walk goes (docs/design.md, "Memory"). */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/profile.h"

struct frame {
	uint32_t v;
	size_t next;   /* the next of v's callees to visit: an index into the callee list */
};

struct walk {
	size_t *first;       /* n + 1: where each caller's callees start */
	uint32_t *callee;    /* narcs */
	uint32_t *index, *low, *stack;
	unsigned char *on_stack;
	struct frame *call;
	size_t call_cap, sp;
	uint32_t counter, ncomp;
};

/* The callees of each caller, in the arcs' order (a counting sort by caller). */
static void callee_lists(struct walk *w, size_t n, const struct prof_arc *arcs, size_t narcs)
{
	w->first = xcalloc(n + 2, sizeof(*w->first));
	w->callee = xmalloc((narcs ? narcs : 1) * sizeof(*w->callee));
	for (size_t a = 0; a < narcs; a++)
		w->first[arcs[a].caller + 2]++;
	for (size_t i = 0; i < n; i++)
		w->first[i + 2] += w->first[i + 1];
	for (size_t a = 0; a < narcs; a++)
		w->callee[w->first[arcs[a].caller + 1]++] = arcs[a].callee;
}

static void enter(struct walk *w, uint32_t v, size_t depth)
{
	XGROW(w->call, w->call_cap, depth + 1);
	w->call[depth] = (struct frame){ v, w->first[v] };
	w->index[v] = w->low[v] = w->counter++;
	w->stack[w->sp++] = v;
	w->on_stack[v] = 1;
}

/* V is done: if it is the root of a component, the component is popped off the stack. */
static void leave(struct walk *w, uint32_t v, uint32_t *comp, uint32_t *size)
{
	if (w->low[v] != w->index[v])
		return;
	uint32_t u, k = 0;
	do {
		u = w->stack[--w->sp];
		w->on_stack[u] = 0;
		comp[u] = w->ncomp;
		k++;
	} while (u != v);
	if (size)
		size[w->ncomp] = k;
	w->ncomp++;
}

static void from_root(struct walk *w, uint32_t root, uint32_t *comp, uint32_t *size)
{
	size_t depth = 0;
	enter(w, root, depth++);
	while (depth) {
		struct frame *fr = &w->call[depth - 1];
		uint32_t v = fr->v;
		if (fr->next < w->first[v + 1]) {
			uint32_t u = w->callee[fr->next++];
			if (u == v)
				continue;
			if (w->index[u] == UINT32_MAX)
				enter(w, u, depth++);
			else if (w->on_stack[u] && w->index[u] < w->low[v])
				w->low[v] = w->index[u];
			continue;
		}
		leave(w, v, comp, size);
		depth--;
		if (depth && w->low[v] < w->low[w->call[depth - 1].v])
			w->low[w->call[depth - 1].v] = w->low[v];
	}
}

uint32_t prof_components(size_t n, const struct prof_arc *arcs, size_t narcs, uint32_t *comp,
			 uint32_t *size)
{
	struct walk w;
	memset(&w, 0, sizeof(w));
	callee_lists(&w, n, arcs, narcs);
	w.index = xmalloc((n ? n : 1) * sizeof(*w.index));
	w.low = xmalloc((n ? n : 1) * sizeof(*w.low));
	w.stack = xmalloc((n ? n : 1) * sizeof(*w.stack));
	w.on_stack = xcalloc(n ? n : 1, 1);
	memset(w.index, 0xff, (n ? n : 1) * sizeof(*w.index));
	for (size_t root = 0; root < n; root++)
		if (w.index[root] == UINT32_MAX)
			from_root(&w, (uint32_t)root, comp, size);
	free(w.first);
	free(w.callee);
	free(w.index);
	free(w.low);
	free(w.stack);
	free(w.on_stack);
	free(w.call);
	return w.ncomp;
}
