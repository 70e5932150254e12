/* flamegraph_model.c - the model a flame graph is drawn from (docs/flamegraph.md section
 * 1): callgrind's arcs made consistent (no component receives more than it spends), the
 * entries, the edges in callee-name order and a spanning tree per component being drawn.
 * The walk (flamegraph.c) and the scopes (flamegraph_scope.c) read it. Owns every array of
 * struct flamegraph_model; never a tree of frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/flamegraph_model.h"
#include "report/profile.h"

#define NONE FLAMEGRAPH_MODEL_NONE

/* floor(C * NUM / DEN) for NUM <= DEN, without overflow. */
static uint64_t scale(uint64_t c, uint64_t num, uint64_t den)
{
	if (num >= den)
		return c;
#ifdef __SIZEOF_INT128__
	return (uint64_t)((unsigned __int128)c * num / den);
#else
	long double v = (long double)c * (long double)num / (long double)den;
	return v >= (long double)c ? c : (uint64_t)v;
#endif
}

/* the profile in every item, so that the comparator needs no context (qsort has none);
 * the name's node too, so that comparing names reads no function table (16 bytes an item) */
struct rank_item {
	const struct profile *p;
	uint32_t node, fn;
};

static int cmp_rank(const void *x, const void *y)
{
	const struct rank_item *a = x, *b = y;
	struct prof_name_key ka = { a->node }, kb = { b->node };
	int c = profile_name_key_cmp(a->p, &ka, b->p, &kb);
	if (!c)
		c = strcmp(profile_file(a->p, a->fn), profile_file(b->p, b->fn));
	if (!c)
		c = strcmp(profile_obj(a->p, a->fn), profile_obj(b->p, b->fn));
	return c ? c : a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* RANK[f]: f's place among all functions sorted by name, so that callees come in an order
 * that does not depend on the file's order (flamegraph.pl sorts by name too). */
static uint32_t *name_ranks(const struct profile *p)
{
	struct rank_item *items = xmalloc((p->nfns + 1) * sizeof(*items));
	for (size_t i = 0; i < p->nfns; i++) {
		struct prof_name_key k = profile_name_key(p, i);
		items[i] = (struct rank_item){ p, k.node, (uint32_t)i };
	}
	qsort(items, p->nfns, sizeof(*items), cmp_rank);
	uint32_t *rank = xmalloc((p->nfns + 1) * sizeof(*rank));
	for (size_t i = 0; i < p->nfns; i++)
		rank[items[i].fn] = (uint32_t)i;
	free(items);
	return rank;
}

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 wide_t;
#else
typedef long double wide_t;
#endif

/* floor(C * NUM / DEN) for NUM <= DEN, where DEN is a sum of arcs and may pass 64 bits:
 * exact below that, above it with the low bits of both dropped. It stays monotone in NUM
 * and is C at NUM = DEN, which is what cumulative rounding needs. */
static uint64_t part_of(uint64_t c, wide_t num, wide_t den)
{
	if (num >= den)
		return c;
#ifdef __SIZEOF_INT128__
	while (den > UINT64_MAX) {
		num >>= 1;
		den >>= 1;
	}
	return scale(c, (uint64_t)num, (uint64_t)den);
#else
	long double v = (long double)c * (num / den);
	return v >= (long double)c ? c : (uint64_t)v;
#endif
}

void flamegraph_model_comp_arcs(struct flamegraph_comp_arcs *ca, const struct flamegraph_model *g)
{
	uint32_t ncomp = g->ncomp;
	ca->in_first = xcalloc((size_t)ncomp + 2, sizeof(size_t));
	ca->out_first = xcalloc((size_t)ncomp + 2, sizeof(size_t));
	ca->in = xmalloc((g->narcs + 1) * sizeof(uint32_t));
	ca->out = xmalloc((g->narcs + 1) * sizeof(uint32_t));
	for (size_t a = 0; a < g->narcs; a++) {
		uint32_t from = g->comp[g->arcs[a].caller], to = g->comp[g->arcs[a].callee];
		if (from != to && g->cost[a]) {
			ca->in_first[to + 2]++;
			ca->out_first[from + 2]++;
		}
	}
	for (uint32_t c = 0; c <= ncomp; c++) {
		ca->in_first[c + 1] += ca->in_first[c];
		ca->out_first[c + 1] += ca->out_first[c];
	}
	/* each list is filled at its start + 1's cursor, which ends at the next list's start */
	for (size_t a = 0; a < g->narcs; a++) {
		uint32_t from = g->comp[g->arcs[a].caller], to = g->comp[g->arcs[a].callee];
		if (from != to && g->cost[a]) {
			ca->in[ca->in_first[to + 1]++] = (uint32_t)a;
			ca->out[ca->out_first[from + 1]++] = (uint32_t)a;
		}
	}
}

void flamegraph_model_comp_arcs_free(struct flamegraph_comp_arcs *ca)
{
	free(ca->in_first);
	free(ca->out_first);
	free(ca->in);
	free(ca->out);
}

/* 1 if arc A is one of the arcs whose cost is taken first (consistent_arcs()). */
static int is_prio(const struct flamegraph_model *g, size_t a)
{
	return g->prio && g->prio[g->arcs[a].caller];
}

/* The consistent arcs (docs/flamegraph.md, "Consistent arcs"): callgrind's arcs into a
 * component can add up to more than it spends (recursion counted again, the arcs of a
 * cycle); each component's activity I'(C), its self cost plus its consistent arcs out, is
 * computed callees first (Tarjan numbers a component after every component it calls), and
 * its arcs in are scaled down to I'(C) where they exceed it, cut by cumulative rounding
 * so that they add up to exactly I'(C). Returns the consistent cost of every arc between
 * components (0 for the others) and fills g->activity and g->out. */
static uint64_t *consistent_arcs(struct flamegraph_model *g, uint32_t ncomp,
				 const struct flamegraph_comp_arcs *ca)
{
	const struct profile *p = g->p;
	uint64_t *arcp = xcalloc(g->narcs + 1, sizeof(*arcp));
	for (size_t f = 0; f < g->n; f++)
		g->activity[g->comp[f]] += profile_self(p, f)[g->ev];
	for (uint32_t c = 0; c < ncomp; c++) {
		uint64_t act = g->activity[c];
		for (size_t i = ca->out_first[c]; i < ca->out_first[c + 1]; i++)
			act += arcp[ca->out[i]];   /* into components numbered lower: done */
		g->activity[c] = act;
		/* the arcs out of the functions the graph is cut to (a focus, JIT code) first:
		 * each records what ran under those calls, and that is the question asked */
		wide_t in[2] = { 0, 0 }, cum[2] = { 0, 0 };
		for (size_t i = ca->in_first[c]; i < ca->in_first[c + 1]; i++)
			in[is_prio(g, ca->in[i])] += g->cost[ca->in[i]];
		uint64_t share[2];
		share[1] = in[1] <= act ? (uint64_t)in[1] : act;
		share[0] = act - share[1];
		for (size_t i = ca->in_first[c]; i < ca->in_first[c + 1]; i++) {
			uint64_t cost = g->cost[ca->in[i]];
			int k = is_prio(g, ca->in[i]);
			if (in[k] <= share[k]) {
				arcp[ca->in[i]] = cost;
				continue;
			}
			uint64_t lo = part_of(share[k], cum[k], in[k]);
			cum[k] += cost;
			arcp[ca->in[i]] = part_of(share[k], cum[k], in[k]) - lo;
		}
	}
	for (size_t a = 0; a < g->narcs; a++)
		g->out[g->arcs[a].caller] += arcp[a];
	return arcp;
}

/* How much of each function's activity no arc into it explains: the entries, children
 * of the root. A component C enters I'(C) minus its consistent arcs in (0 or more, since
 * those never exceed I'(C)); over all components these add up to the total exactly, each
 * arc between components leaving one and entering another. A cycle's entry is shared
 * among its members by their own excess (self + arcs out - arcs in, inside arcs included,
 * which cancel over the cycle), so that a thread that starts inside a cycle is entered
 * where it starts. */
static uint64_t *entry_costs(struct flamegraph_model *g, uint32_t ncomp, const uint64_t *arcp)
{
	const struct profile *p = g->p;
	size_t n = g->n;
	uint64_t *entry = xcalloc(n + 1, sizeof(*entry));
	uint64_t *left = xcalloc((size_t)ncomp + 1, sizeof(*left));
	long double *excess = xcalloc(n + 1, sizeof(*excess));
	long double *wsum = xcalloc((size_t)ncomp + 1, sizeof(*wsum)), *wcum = xcalloc((size_t)ncomp + 1, sizeof(*wcum));
	memcpy(left, g->activity, ncomp * sizeof(*left));
	for (size_t f = 0; f < n; f++)
		excess[f] = (long double)profile_self(p, f)[g->ev];
	for (size_t a = 0; a < g->narcs; a++) {
		const struct prof_arc *r = &g->arcs[a];
		uint32_t from = g->comp[r->caller], to = g->comp[r->callee];
		if (r->caller == r->callee)
			continue;
		long double c = (long double)(from == to ? g->cost[a] : arcp[a]);
		excess[r->caller] += c;
		excess[r->callee] -= c;
		if (from != to)
			left[to] -= arcp[a];
	}
	/* the weights are summed in function order twice, so that the last member's
	 * cumulative weight equals the sum exactly and the shares add up to the entry */
	for (size_t f = 0; f < n; f++)
		if (excess[f] > 0)
			wsum[g->comp[f]] += excess[f];
	for (size_t f = 0; f < n; f++) {
		uint32_t c = g->comp[f];
		if (!left[c] || excess[f] <= 0)
			continue;
		long double before = wcum[c];
		wcum[c] += excess[f];
		uint64_t lo = before >= wsum[c] ? left[c] : (uint64_t)((long double)left[c] * (before / wsum[c]));
		uint64_t hi = wcum[c] >= wsum[c] ? left[c] : (uint64_t)((long double)left[c] * (wcum[c] / wsum[c]));
		entry[f] = hi > lo ? hi - lo : 0;
	}
	/* a component whose members all show no excess (rounding of contradictory arcs) is
	 * entered at its first member */
	for (size_t f = 0; f < n; f++) {
		uint32_t c = g->comp[f];
		if (left[c] && !(wsum[c] > 0)) {
			entry[f] = left[c];
			wsum[c] = 1;
		}
	}
	free(left);
	free(excess);
	free(wsum);
	free(wcum);
	return entry;
}

/* Edges of one caller by their callee's name rank, which build_edges() keeps in TO while
 * it sorts: the ranks of one caller's callees are all different. */
static int cmp_edge_rank(const void *x, const void *y)
{
	const struct flamegraph_edge *a = x, *b = y;
	return a->to < b->to ? -1 : a->to > b->to;
}

/* Whether arc A is an edge (build_edges()). */
static int is_edge(const struct flamegraph_model *g, const uint64_t *arcp, size_t a)
{
	const struct prof_arc *r = &g->arcs[a];
	return r->caller != r->callee && (g->comp[r->caller] == g->comp[r->callee] || arcp[a]);
}

/* The edges, in callee-name order: every arc between components with a consistent cost,
 * every arc inside a component (cost or not: the spanning trees follow them), and from
 * the root to every function that enters cost. Self-calls are not edges: their cost is
 * inside the caller's activity already. They are placed by caller straight into their
 * array (a counting sort), then each caller's are sorted by name: the flame graph's peak
 * is here, and no second copy of the edges is made (docs/design.md, "Memory"). */
static void build_edges(struct flamegraph_model *g, const uint64_t *arcp, const uint64_t *entry)
{
	const struct profile *p = g->p;
	size_t n = g->n;
	uint32_t *rank = name_ranks(p);
	g->first = xcalloc(n + 2, sizeof(*g->first));
	for (size_t a = 0; a < g->narcs; a++)
		if (is_edge(g, arcp, a))
			g->first[g->arcs[a].caller + 1]++;
	for (size_t f = 0; f < n; f++)
		g->first[n + 1] += entry[f] != 0;
	for (size_t v = 0; v <= n; v++)
		g->first[v + 1] += g->first[v];
	g->edges = xmalloc((g->first[n + 1] + 1) * sizeof(*g->edges));
	size_t *at = xmalloc((n + 1) * sizeof(*at));
	memcpy(at, g->first, (n + 1) * sizeof(*at));
	for (size_t a = 0; a < g->narcs; a++) {
		if (!is_edge(g, arcp, a))
			continue;
		const struct prof_arc *r = &g->arcs[a];
		int internal = g->comp[r->caller] == g->comp[r->callee];
		g->edges[at[r->caller]++] = (struct flamegraph_edge){ rank[r->callee], (uint32_t)internal,
								      internal ? 0 : arcp[a] };
	}
	for (size_t f = 0; f < n; f++)
		if (entry[f])
			g->edges[at[n]++] = (struct flamegraph_edge){ rank[f], 0, entry[f] };
	free(at);
	/* TO holds the callee's rank while its caller's edges are sorted; then the callee */
	uint32_t *of_rank = xmalloc((n + 1) * sizeof(*of_rank));
	for (size_t f = 0; f < n; f++)
		of_rank[rank[f]] = (uint32_t)f;
	free(rank);
	for (size_t v = 0; v <= n; v++) {
		struct flamegraph_edge *e = g->edges + g->first[v];
		size_t k = g->first[v + 1] - g->first[v];
		if (k > 1)
			qsort(e, k, sizeof(*e), cmp_edge_rank);
		for (size_t i = 0; i < k; i++)
			e[i].to = of_rank[e[i].to];
	}
	free(of_rank);
}

/* A spanning tree found breadth first over the inside edges in name order, so that every
 * member is drawn once per entry, under a member that calls it, and a member's subtree mass
 * (its self cost and arcs out of the component, with its subtree's) is its frame's share of
 * the component's activity. */
void flamegraph_model_tree(struct flamegraph_model *g, uint32_t m)
{
	uint32_t c = g->comp[m];
	if (g->root_of[c] == m)
		return;
	if (++g->epoch == 0) {
		memset(g->seen, 0, g->n * sizeof(*g->seen));
		g->epoch = 1;
	}
	size_t head = 0, tail = 0;
	g->queue[tail++] = m;
	g->seen[m] = g->epoch;
	g->parent[m] = NONE;
	while (head < tail) {
		uint32_t x = g->queue[head++];
		g->sub[x] = profile_self(g->p, x)[g->ev] + g->out[x];
		for (size_t i = g->first[x]; i < g->first[x + 1]; i++) {
			const struct flamegraph_edge *e = &g->edges[i];
			if (e->internal && g->seen[e->to] != g->epoch) {
				g->seen[e->to] = g->epoch;
				g->parent[e->to] = x;
				g->queue[tail++] = e->to;
			}
		}
	}
	while (--tail > 0)
		g->sub[g->parent[g->queue[tail]]] += g->sub[g->queue[tail]];
	g->root_of[c] = m;
}

/* The arcs a model leaves out: into a focus function, and into a function CYCLE_CUT flags
 * from a function of its own cycle (COMP0: P's components). */
static int cut_arc(const struct prof_arc *r, const unsigned char *focus, const unsigned char *cycle_cut,
		   const uint32_t *comp0)
{
	if (r->caller == r->callee)
		return 0;
	return (focus && focus[r->callee]) ||
	       (cycle_cut && cycle_cut[r->callee] && comp0[r->caller] == comp0[r->callee]);
}

/* Components, consistent arcs, activities, entries and the edges; the trees are rooted
 * as the walk enters components. */
void flamegraph_model_init(struct flamegraph_model *g, const struct profile *p, unsigned ev,
			   const unsigned char *focus, const unsigned char *cycle_cut)
{
	/* a loader told to drop them (profile_opts.drop_arcs) was told wrong: a caller's bug */
	if (p->arcs_dropped) {
		fputs("cgjit: internal error: a flame graph or focus of a profile read without its call arcs\n", stderr);
		abort();
	}
	memset(g, 0, sizeof(*g));
	g->p = p;
	g->ev = ev;
	g->n = p->nfns;
	g->total = p->totals[ev];
	size_t n = g->n;
	g->arcs = p->arcs;
	g->narcs = p->narcs;
	uint32_t *comp0 = NULL;
	if (cycle_cut) {
		comp0 = xmalloc((n + 1) * sizeof(*comp0));
		profile_components(p, comp0);
	}
	if (focus || cycle_cut) {
		g->arcs_copy = xmalloc((p->narcs + 1) * sizeof(*g->arcs_copy));
		g->narcs = 0;
		for (size_t a = 0; a < p->narcs; a++)
			if (!cut_arc(&p->arcs[a], focus, cycle_cut, comp0))
				g->arcs_copy[g->narcs++] = p->arcs[a];
		g->arcs = g->arcs_copy;
	}
	g->cost = xmalloc((g->narcs + 1) * sizeof(*g->cost));
	for (size_t a = 0, k = 0; a < p->narcs; a++)
		if (!cut_arc(&p->arcs[a], focus, cycle_cut, comp0))
			g->cost[k++] = p->arc_costs[a * p->nevents + ev];
	free(comp0);
	g->prio = focus ? focus : cycle_cut;
	g->comp = xmalloc((n + 1) * sizeof(*g->comp));
	g->ncomp = profile_components_of(n, g->arcs, g->narcs, g->comp);
	g->comp_size = xcalloc((size_t)g->ncomp + 1, sizeof(*g->comp_size));
	for (size_t f = 0; f < n; f++)
		g->comp_size[g->comp[f]]++;
	g->activity = xcalloc((size_t)g->ncomp + 1, sizeof(*g->activity));
	g->out = xcalloc(n + 1, sizeof(*g->out));
	struct flamegraph_comp_arcs ca;
	flamegraph_model_comp_arcs(&ca, g);
	g->arcp = consistent_arcs(g, g->ncomp, &ca);
	uint64_t *entry = entry_costs(g, g->ncomp, g->arcp);
	if (focus) {
		/* a focus function has no arcs in: it is a component of its own, entered with
		 * all of its activity; nothing else is entered */
		g->total = 0;
		for (size_t f = 0; f < n; f++) {
			entry[f] = focus[f] ? g->activity[g->comp[f]] : 0;
			g->total += entry[f];
		}
	}
	build_edges(g, g->arcp, entry);
	flamegraph_model_comp_arcs_free(&ca);
	free(entry);
	g->prio = NULL;   /* the caller's, needed no more */
	g->parent = xmalloc((n + 1) * sizeof(*g->parent));
	g->sub = xcalloc(n + 1, sizeof(*g->sub));
	g->queue = xmalloc((n + 1) * sizeof(*g->queue));
	g->seen = xcalloc(n + 1, sizeof(*g->seen));
	g->root_of = xmalloc(((size_t)g->ncomp + 1) * sizeof(*g->root_of));
	for (uint32_t c = 0; c <= g->ncomp; c++)
		g->root_of[c] = NONE;
}

void flamegraph_model_release(struct flamegraph_model *g)
{
	free(g->arcs_copy);
	free(g->cost);
	free(g->comp_size);
	free(g->arcp);
	free(g->comp);
	free(g->activity);
	free(g->out);
	free(g->first);
	free(g->edges);
	free(g->parent);
	free(g->sub);
	free(g->queue);
	free(g->seen);
	free(g->root_of);
	memset(g, 0, sizeof(*g));
}

void flamegraph_model_members(const struct flamegraph_model *g, size_t **first, uint32_t **members)
{
	*first = xcalloc((size_t)g->ncomp + 2, sizeof(**first));
	*members = xmalloc((g->n + 1) * sizeof(**members));
	for (size_t f = 0; f < g->n; f++)
		(*first)[g->comp[f] + 2]++;
	for (uint32_t c = 0; c <= g->ncomp; c++)
		(*first)[c + 1] += (*first)[c];
	for (size_t f = 0; f < g->n; f++)
		(*members)[(*first)[g->comp[f] + 1]++] = (uint32_t)f;
}

uint64_t flamegraph_model_round(long double v)
{
	return v <= 0 ? 0 : v >= 0x1p64L ? UINT64_MAX : (uint64_t)(v + 0.5L);
}
