/* flamegraph.c - the stacks of a flame graph, built from struct profile's call arcs
 * (docs/flamegraph.md section 1) and walked depth first for the writers (folded stacks
 * here, SVG in flamegraph_svg.c). Owns the consistent arcs in callee-name order, each
 * component's activity, the spanning tree of the components being drawn and the walk's
 * stack; never the tree of frames itself. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "report/flamegraph.h"
#include "report/profile.h"

#define NONE UINT32_MAX

/* An edge out of a function (or the root) in the order of the callees' names. */
struct edge {
	uint32_t to;
	uint32_t internal;    /* TO is in the caller's component: a spanning-tree edge */
	uint64_t mass;        /* external: the consistent arc cost; the root's: an entry */
};

/* A frame on the walk's stack: its real interval and where it is among its children.
 * Children are packed from the left in edge order, the elision frame after them, the
 * frame's own cost last, each piece as wide as its share of MASS. */
struct level {
	long double a, b;     /* the frame's interval in cost units, before rounding */
	uint64_t mass;        /* what the interval stands for */
	uint64_t kids;        /* the children's part of MASS (all of it but the self cost) */
	uint64_t vis;         /* the part given to children drawn so far */
	size_t next, end;     /* edges still to look at */
	int tail;             /* the elision frame has been considered */
};

struct flamegraph {
	const struct profile *p;
	struct profile *own;  /* --jit-only: the derived profile P is, owned here */
	unsigned ev, max_depth;
	uint64_t total;
	size_t n;             /* functions; node N is the root */
	/* the arcs the model uses: the profile's, or a copy without the arcs into a focus */
	const struct prof_arc *arcs;
	struct prof_arc *arcs_copy;
	size_t narcs;
	uint64_t *cost;       /* narcs: each arc's cost of the event */
	uint32_t ncomp;
	uint32_t *comp;       /* N: each function's strongly connected component */
	uint32_t *comp_size;  /* per component: its members */
	uint64_t *arcp;       /* narcs: the consistent arcs (0 inside a component) */
	const unsigned char *prio;   /* N: functions whose arcs out are made consistent first
	                                (a focus, the JIT code of --jit-only), or NULL */
	uint64_t *activity;   /* per component: I'(C), self plus consistent arcs out */
	uint64_t *out;        /* N: a function's consistent arcs out of its component */
	size_t *first;        /* N + 2: the edges of node V are first[V] .. first[V + 1] */
	struct edge *edges;
	/* the spanning tree of each component being drawn (one per component: a component is
	 * on a stack at most once, the graph of components having no cycle) */
	uint32_t *parent;     /* N: a member's parent in its component's tree */
	uint64_t *sub;        /* N: the mass of a member's subtree */
	uint32_t *root_of;    /* per component: the member its tree is rooted at, or NONE */
	uint32_t *queue, *seen, epoch;
	/* limits */
	long double min_units, asked_units;
	size_t max_frames, frames;
	int capped;
	struct level *levels;
	struct flamegraph_frame *frames_at;
};

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

struct rank_item {
	const char *name, *file, *obj;
	uint32_t fn;
};

static int cmp_rank(const void *x, const void *y)
{
	const struct rank_item *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (!c)
		c = strcmp(a->file, b->file);
	if (!c)
		c = strcmp(a->obj, b->obj);
	return c ? c : a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* RANK[f]: f's place among all functions sorted by name, so that callees come in an order
 * that does not depend on the file's order (flamegraph.pl sorts by name too). */
static uint32_t *name_ranks(const struct profile *p)
{
	struct rank_item *items = xmalloc((p->nfns + 1) * sizeof(*items));
	for (size_t i = 0; i < p->nfns; i++)
		items[i] = (struct rank_item){ p->fns[i].name, p->fns[i].file, p->fns[i].obj, (uint32_t)i };
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

/* The arcs between two components with a cost, by the callee's component (IN) and by the
 * caller's (OUT): component C's are IN[IN_FIRST[C] .. IN_FIRST[C + 1]). */
struct comp_arcs {
	size_t *in_first, *out_first;
	uint32_t *in, *out;
};

static void comp_arcs_build(struct comp_arcs *ca, const struct flamegraph *g, uint32_t ncomp)
{
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

static void comp_arcs_free(struct comp_arcs *ca)
{
	free(ca->in_first);
	free(ca->out_first);
	free(ca->in);
	free(ca->out);
}

/* 1 if arc A is one of the arcs whose cost is taken first (consistent_arcs()). */
static int is_prio(const struct flamegraph *g, size_t a)
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
static uint64_t *consistent_arcs(struct flamegraph *g, uint32_t ncomp, const struct comp_arcs *ca)
{
	const struct profile *p = g->p;
	uint64_t *arcp = xcalloc(g->narcs + 1, sizeof(*arcp));
	for (size_t f = 0; f < g->n; f++)
		g->activity[g->comp[f]] += p->fns[f].self[g->ev];
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
static uint64_t *entry_costs(struct flamegraph *g, uint32_t ncomp, const uint64_t *arcp)
{
	const struct profile *p = g->p;
	size_t n = g->n;
	uint64_t *entry = xcalloc(n + 1, sizeof(*entry));
	uint64_t *left = xcalloc((size_t)ncomp + 1, sizeof(*left));
	long double *excess = xcalloc(n + 1, sizeof(*excess));
	long double *wsum = xcalloc((size_t)ncomp + 1, sizeof(*wsum)), *wcum = xcalloc((size_t)ncomp + 1, sizeof(*wcum));
	memcpy(left, g->activity, ncomp * sizeof(*left));
	for (size_t f = 0; f < n; f++)
		excess[f] = (long double)p->fns[f].self[g->ev];
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

struct sort_edge {
	uint32_t from, rank;
	struct edge e;
};

static int cmp_edge(const void *x, const void *y)
{
	const struct sort_edge *a = x, *b = y;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The edges, in callee-name order: every arc between components with a consistent cost,
 * every arc inside a component (cost or not: the spanning trees follow them), and from
 * the root to every function that enters cost. Self-calls are not edges: their cost is
 * inside the caller's activity already. */
static void build_edges(struct flamegraph *g, const uint64_t *arcp, const uint64_t *entry)
{
	const struct profile *p = g->p;
	size_t n = g->n, m = 0;
	uint32_t *rank = name_ranks(p);
	struct sort_edge *se = xmalloc((g->narcs + n + 1) * sizeof(*se));
	for (size_t a = 0; a < g->narcs; a++) {
		const struct prof_arc *r = &g->arcs[a];
		int internal = g->comp[r->caller] == g->comp[r->callee];
		if (r->caller != r->callee && (internal || arcp[a]))
			se[m++] = (struct sort_edge){ r->caller, rank[r->callee],
						      { r->callee, (uint32_t)internal, internal ? 0 : arcp[a] } };
	}
	for (size_t f = 0; f < n; f++)
		if (entry[f])
			se[m++] = (struct sort_edge){ (uint32_t)n, rank[f], { (uint32_t)f, 0, entry[f] } };
	qsort(se, m, sizeof(*se), cmp_edge);
	g->first = xcalloc(n + 2, sizeof(*g->first));
	g->edges = xmalloc((m + 1) * sizeof(*g->edges));
	for (size_t i = 0; i < m; i++) {
		g->first[se[i].from + 1]++;
		g->edges[i] = se[i].e;
	}
	for (size_t v = 0; v <= n; v++)
		g->first[v + 1] += g->first[v];
	free(se);
	free(rank);
}

/* Roots M's component at M, for an entry into it there: a spanning tree found breadth
 * first over the inside edges in name order, so that every member is drawn once per entry,
 * under a member that calls it, and a member's subtree mass (its self cost and arcs out of
 * the component, with its subtree's) is its frame's share of the component's activity. */
static void build_tree(struct flamegraph *g, uint32_t m)
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
		g->sub[x] = g->p->fns[x].self[g->ev] + g->out[x];
		for (size_t i = g->first[x]; i < g->first[x + 1]; i++) {
			const struct edge *e = &g->edges[i];
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

static void apply_cap(struct flamegraph *g);

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

/* The model of docs/flamegraph.md section 1 for event EV of P: components, consistent
 * arcs, activities, entries and the edges, with the arcs into the functions FOCUS flags
 * cut (NULL: none), so that each focus function is a root of its own and the only
 * entries are theirs (section 1.7), and the arcs into the functions CYCLE_CUT flags from
 * inside their cycle cut (NULL: none; --jit-only, section 1.8). No limits and no walk
 * yet. */
static struct flamegraph *model_new(const struct profile *p, unsigned ev, const unsigned char *focus,
				    const unsigned char *cycle_cut)
{
	struct flamegraph *g = xcalloc(1, sizeof(*g));
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
	struct comp_arcs ca;
	comp_arcs_build(&ca, g, g->ncomp);
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
	comp_arcs_free(&ca);
	free(entry);
	g->prio = NULL;   /* the caller's, needed no more */
	g->parent = xmalloc((n + 1) * sizeof(*g->parent));
	g->sub = xcalloc(n + 1, sizeof(*g->sub));
	g->queue = xmalloc((n + 1) * sizeof(*g->queue));
	g->seen = xcalloc(n + 1, sizeof(*g->seen));
	g->root_of = xmalloc(((size_t)g->ncomp + 1) * sizeof(*g->root_of));
	for (uint32_t c = 0; c <= g->ncomp; c++)
		g->root_of[c] = NONE;
	return g;
}

/* ---- scopes: costs under a focus, and the graph of JIT code alone ---- */

/* The members of each component: MEMBERS[FIRST[C] .. FIRST[C + 1]), in function order. */
static void comp_members(const struct flamegraph *g, size_t **first, uint32_t **members)
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

/* The members times the entries of a cycle under a focus past which one spanning tree
 * stands for all (flamegraph_scope()): some 10^8 steps, a second or two. */
#define SCOPE_TREE_WORK 1e8L

static uint64_t round_cost(long double v)
{
	return v <= 0 ? 0 : v >= 0x1p64L ? UINT64_MAX : (uint64_t)(v + 0.5L);
}

void flamegraph_scope(const struct profile *p, unsigned ev, const unsigned char *focus,
		      struct flamegraph_scope *s)
{
	struct flamegraph *g = model_new(p, ev, focus, NULL);
	size_t n = g->n, *mfirst;
	uint32_t nc = g->ncomp, *members;
	comp_members(g, &mfirst, &members);
	struct comp_arcs ca;
	comp_arcs_build(&ca, g, nc);
	/* U: the mass under the focus entering each component; UM: entering at each member */
	long double *U = xcalloc((size_t)nc + 1, sizeof(*U)), *rho = xcalloc((size_t)nc + 1, sizeof(*rho));
	long double *UM = xcalloc(n + 1, sizeof(*UM)), *own = xcalloc(n + 1, sizeof(*own));
	long double *incl = xcalloc(n + 1, sizeof(*incl));
	for (size_t f = 0; f < n; f++)
		if (focus[f])
			U[g->comp[f]] = UM[f] = (long double)g->activity[g->comp[f]];
	/* callers first: Tarjan numbers a component after every component it calls */
	for (uint32_t c = nc; c-- > 0;) {
		uint64_t act = g->activity[c];
		if (!(U[c] > 0) || !act)
			continue;
		long double r = U[c] / (long double)act;
		rho[c] = r = r > 1 ? 1 : r;
		for (size_t i = mfirst[c]; i < mfirst[c + 1]; i++)
			own[members[i]] += r * (long double)p->fns[members[i]].self[ev];
		/* each unit entering C leaves by its arcs out in the same proportions, wherever
		 * it entered (docs/flamegraph.md 1.3) */
		for (size_t i = ca.out_first[c]; i < ca.out_first[c + 1]; i++) {
			size_t a = ca.out[i];
			long double flow = r * (long double)g->arcp[a];
			U[g->comp[g->arcs[a].callee]] += flow;
			UM[g->arcs[a].callee] += flow;
		}
		if (g->comp_size[c] == 1) {
			incl[members[mfirst[c]]] += U[c];
			continue;
		}
		/* a member's frames are as wide as its subtree in the spanning tree of the
		 * member the cycle was entered at: a tree per entry member, which costs the
		 * members times the entries; past SCOPE_TREE_WORK the tree of the member entered
		 * most stands for all (only the inclusive costs of the members change) */
		size_t size = mfirst[c + 1] - mfirst[c], entries = 0, most = mfirst[c];
		for (size_t i = mfirst[c]; i < mfirst[c + 1]; i++)
			if (UM[members[i]] > 0) {
				entries++;
				if (UM[members[i]] > UM[members[most]])
					most = i;
			}
		int one = (long double)size * (long double)entries > SCOPE_TREE_WORK;
		for (size_t i = mfirst[c]; i < mfirst[c + 1]; i++) {
			uint32_t m = members[i];
			if (!(UM[m] > 0) || (one && i != most))
				continue;
			long double mass = one ? U[c] : UM[m];
			build_tree(g, m);
			for (size_t k = mfirst[c]; k < mfirst[c + 1]; k++)
				incl[members[k]] += mass * (long double)g->sub[members[k]] / (long double)act;
		}
	}
	s->total = g->total;
	s->self = xcalloc(n + 1, sizeof(*s->self));
	s->incl = xcalloc(n + 1, sizeof(*s->incl));
	s->calls = xcalloc(n + 1, sizeof(*s->calls));
	s->in_cycle = xcalloc(n + 1, 1);
	long double *calls = xcalloc(n + 1, sizeof(*calls));
	/* the calls made under the focus, in proportion to the caller's activity there; a
	 * focus function's are those from outside the focus (the arcs the model cut) */
	for (size_t a = 0; a < g->narcs; a++)
		if (g->arcs[a].caller != g->arcs[a].callee)
			calls[g->arcs[a].callee] += (long double)g->arcs[a].count * rho[g->comp[g->arcs[a].caller]];
	for (size_t a = 0; a < p->narcs; a++)
		if (focus[p->arcs[a].callee] && !focus[p->arcs[a].caller])
			s->calls[p->arcs[a].callee] += p->arcs[a].count;
	for (size_t f = 0; f < n; f++) {
		s->self[f] = round_cost(own[f]);
		s->incl[f] = round_cost(incl[f]);
		if (!focus[f])
			s->calls[f] = round_cost(calls[f]);
		s->in_cycle[f] = g->comp_size[g->comp[f]] > 1;
	}
	free(calls);
	free(U);
	free(rho);
	free(UM);
	free(own);
	free(incl);
	free(mfirst);
	free(members);
	comp_arcs_free(&ca);
	flamegraph_free(g);
}

void flamegraph_scope_free(struct flamegraph_scope *s)
{
	free(s->self);
	free(s->incl);
	free(s->calls);
	free(s->in_cycle);
	memset(s, 0, sizeof(*s));
}

/* A max-heap of component numbers: the components a JIT function's calls reach, taken
 * callers first. */
struct comp_heap {
	uint32_t *v;
	size_t n;
};

static void heap_push(struct comp_heap *h, uint32_t c)
{
	size_t i = h->n++;
	while (i && h->v[(i - 1) / 2] < c) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = c;
}

static uint32_t heap_pop(struct comp_heap *h)
{
	uint32_t top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= h->n)
			break;
		if (k + 1 < h->n && h->v[k + 1] > h->v[k])
			k++;
		if (h->v[k] <= last)
			break;
		h->v[i] = h->v[k];
		i = k;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

struct jit_pass {
	const struct flamegraph *g;
	const unsigned char *keep;
	size_t *mfirst;
	uint32_t *members;
	struct comp_arcs ca;
	long double *in;          /* per component: the source's mass entering it */
	struct comp_heap heap;
	long double *to;          /* per kept function: the source's mass reaching it */
	uint32_t *touched;
	size_t ntouched;
	long double not_jit;      /* the source's mass spent in code that is not kept */
};

static void jit_deliver(struct jit_pass *j, uint32_t c, long double m)
{
	if (!(m > 0))
		return;   /* nothing arrives: and an empty component is never queued twice */
	if (!(j->in[c] > 0))
		heap_push(&j->heap, c);
	j->in[c] += m;
}

/* Where the activity of kept function X goes once the functions that are not kept are
 * collapsed out: mass entering a component is shared among its members by their own
 * activity (self cost plus arcs out of it, which add up to the component's); a kept
 * member takes its share as a call from X, another spends its self cost as code that is
 * not JIT and passes its arcs out on, callees after callers. */
static void jit_source(struct jit_pass *j, uint32_t x)
{
	const struct flamegraph *g = j->g;
	const struct profile *p = g->p;
	uint32_t cx = g->comp[x];
	j->not_jit = 0;
	for (size_t i = j->ca.out_first[cx]; i < j->ca.out_first[cx + 1]; i++)
		if (g->arcs[j->ca.out[i]].caller == x)
			jit_deliver(j, g->comp[g->arcs[j->ca.out[i]].callee], (long double)g->arcp[j->ca.out[i]]);
	while (j->heap.n) {
		uint32_t c = heap_pop(&j->heap);
		long double m = j->in[c], act = (long double)g->activity[c];
		j->in[c] = 0;
		if (!(act > 0))
			continue;
		for (size_t i = j->mfirst[c]; i < j->mfirst[c + 1]; i++) {
			uint32_t z = j->members[i];
			if (j->keep[z]) {
				if (!(j->to[z] > 0))
					j->touched[j->ntouched++] = z;
				j->to[z] += m * ((long double)(p->fns[z].self[g->ev] + g->out[z]) / act);
				continue;
			}
			j->not_jit += m * ((long double)p->fns[z].self[g->ev] / act);
		}
		for (size_t i = j->ca.out_first[c]; i < j->ca.out_first[c + 1]; i++) {
			size_t a = j->ca.out[i];
			if (!j->keep[g->arcs[a].caller])
				jit_deliver(j, g->comp[g->arcs[a].callee], m * ((long double)g->arcp[a] / act));
		}
	}
}

/* --jit-only (docs/flamegraph.md section 1.8): a profile of event EV with the JIT functions
 * of P (and the FOCUS functions, NULL: none) and one function FLAMEGRAPH_NOT_JIT_NAME for
 * the code they call that is not JIT; every other function is collapsed out of the stacks.
 * Each kept function keeps its self cost. *FOCUS_OUT gets the focus flags over the new
 * profile's functions (NULL without a focus). The caller owns the profile. */
static struct profile *jit_profile(const struct profile *p, unsigned ev, const unsigned char *focus,
				   unsigned char **focus_out)
{
	size_t n = p->nfns;
	unsigned char *keep = xcalloc(n + 1, 1);
	for (size_t f = 0; f < n; f++)
		keep[f] = p->fns[f].jit || (focus && focus[f]);
	/* a cycle of JIT code and other code (V8's builtins calling back into JS, CPython's
	 * interpreter between its trampolines) is cut at its JIT functions, as a focus is
	 * cut: each then holds what it calls */
	struct flamegraph *g = model_new(p, ev, focus, keep);
	struct jit_pass j = { .g = g };
	j.keep = keep;
	comp_members(g, &j.mfirst, &j.members);
	comp_arcs_build(&j.ca, g, g->ncomp);
	j.in = xcalloc((size_t)g->ncomp + 1, sizeof(*j.in));
	j.heap.v = xmalloc(((size_t)g->ncomp + 1) * sizeof(*j.heap.v));
	j.to = xcalloc(n + 1, sizeof(*j.to));
	j.touched = xmalloc((n + 1) * sizeof(*j.touched));

	struct profile *d = xcalloc(1, sizeof(*d));
	const char *evn[1] = { p->events[ev] };
	struct profile_builder *b = profile_builder_new(d, 1, evn);
	d->path = p->path ? xstrndup(p->path, strlen(p->path)) : NULL;
	if (p->cmd)
		profile_set_cmd(d, p->cmd, strlen(p->cmd));
	d->parts = p->parts;
	d->part = p->part;
	d->folded = p->folded;
	uint32_t *idx = xmalloc((n + 1) * sizeof(*idx));
	for (size_t f = 0; f < n; f++) {
		if (!keep[f])
			continue;
		const struct prof_fn *fn = &p->fns[f];
		idx[f] = profile_builder_fn(b, fn->obj, strlen(fn->obj), fn->file, strlen(fn->file), fn->name,
					    strlen(fn->name));
		profile_builder_self(b, idx[f], &fn->self[ev]);
	}
	uint32_t other = profile_builder_fn(b, "", 0, "", 0, FLAMEGRAPH_NOT_JIT_NAME,
					    sizeof(FLAMEGRAPH_NOT_JIT_NAME) - 1);
	uint64_t other_self = 0;
	for (size_t x = 0; x < n; x++) {
		if (!keep[x])
			continue;
		jit_source(&j, (uint32_t)x);
		for (size_t i = 0; i < j.ntouched; i++) {
			uint32_t z = j.touched[i];
			uint64_t c = round_cost(j.to[z]);
			j.to[z] = 0;
			if (c && z != x)
				profile_builder_call(b, idx[x], idx[z], 1, &c);
		}
		j.ntouched = 0;
		uint64_t c = round_cost(j.not_jit);
		if (c) {
			profile_builder_call(b, idx[x], other, 1, &c);
			other_self += c;
		}
	}
	profile_builder_self(b, other, &other_self);
	profile_builder_finish(b);
	if (focus) {
		*focus_out = xcalloc(d->nfns + 1, 1);
		for (size_t f = 0; f < n; f++)
			if (focus[f])
				(*focus_out)[idx[f]] = 1;
	}
	free(idx);
	free(keep);
	free(j.mfirst);
	free(j.members);
	comp_arcs_free(&j.ca);
	free(j.in);
	free(j.heap.v);
	free(j.to);
	free(j.touched);
	flamegraph_free(g);
	return d;
}

struct flamegraph *flamegraph_new(const struct profile *p, const struct flamegraph_opts *o)
{
	struct flamegraph *g;
	if (o->jit_only) {
		unsigned char *focus = NULL;
		struct profile *derived = jit_profile(p, o->event, o->focus, &focus);
		g = model_new(derived, 0, focus, NULL);
		g->own = derived;
		free(focus);
	} else {
		g = model_new(p, o->event, o->focus, NULL);
	}
	g->max_depth = o->max_depth ? o->max_depth : 1;
	g->max_frames = o->max_frames ? o->max_frames : FLAMEGRAPH_MAX_FRAMES;
	if (g->max_frames < 2)
		g->max_frames = 2;   /* the root and its elision frame always fit */
	long double min = (long double)o->min_width * (long double)g->total;
	g->asked_units = min > 1 ? min : 1;
	/* function frames down to max_depth, an elision frame one below */
	g->levels = xmalloc(((size_t)g->max_depth + 2) * sizeof(*g->levels));
	g->frames_at = xmalloc(((size_t)g->max_depth + 2) * sizeof(*g->frames_at));
	apply_cap(g);
	return g;
}

void flamegraph_free(struct flamegraph *g)
{
	if (!g)
		return;
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
	free(g->levels);
	free(g->frames_at);
	if (g->own) {
		profile_free(g->own);
		free(g->own);
	}
	free(g);
}

const struct profile *flamegraph_profile(const struct flamegraph *g)
{
	return g->p;   /* with --jit-only, the derived profile */
}

uint64_t flamegraph_total(const struct flamegraph *g)
{
	return g->total;
}

unsigned flamegraph_event(const struct flamegraph *g)
{
	return g->ev;
}

void flamegraph_limits(const struct flamegraph *g, struct flamegraph_limits *l)
{
	*l = (struct flamegraph_limits){ g->max_frames, g->capped, (double)g->min_units,
					 (double)g->asked_units, g->frames };
}

/* The whole cost unit nearest to V: frames are cut at the rounded ends of their real
 * intervals, so that a frame's rounding never passes to its children (a frame's self
 * cost is off by less than one unit, whatever its depth) and rounding is monotone (a
 * child never sticks out of its parent). */
static uint64_t snap(long double v)
{
	return v <= 0 ? 0 : (uint64_t)(v + 0.5L);
}

/* Where the first C of L's mass ends: monotone in C, and exactly L->b at the whole mass. */
static long double at(const struct level *L, uint64_t c)
{
	if (c >= L->mass)
		return L->b;
	long double v = L->a + (L->b - L->a) * ((long double)c / (long double)L->mass);
	return v < L->b ? v : L->b;
}

static void enter(struct flamegraph *g, unsigned depth, size_t fn, long double a, long double b,
		  uint64_t mass)
{
	struct level *L = &g->levels[depth];
	size_t node = fn == FLAMEGRAPH_ROOT ? g->n : fn;
	uint64_t own = fn == FLAMEGRAPH_ROOT ? 0 : fn == FLAMEGRAPH_ELIDED ? mass : g->p->fns[fn].self[g->ev];
	*L = (struct level){ a, b, mass, mass > own ? mass - own : 0, 0, 0, 0, fn == FLAMEGRAPH_ELIDED };
	if (fn != FLAMEGRAPH_ELIDED) {
		L->next = g->first[node];
		L->end = g->first[node + 1];
	}
	uint64_t x0 = snap(a), x1 = snap(b);
	g->frames_at[depth] = (struct flamegraph_frame){ fn, depth, x0, x1 - x0, x1 - snap(at(L, L->kids)) };
}

struct child {
	size_t fn;
	long double a, b;
	uint64_t mass;
	int entry;            /* entered from outside its component: its tree is rooted here */
};

/* The next child of the frame at DEPTH into C: 1, or 0 when none is left. Children at
 * least min_units wide come first, in edge order; the rest of the children's mass (narrow
 * ones, and all of them below max_depth) is one elision frame after them. */
static int next_child(struct flamegraph *g, unsigned depth, struct child *c)
{
	struct level *L = &g->levels[depth];
	size_t from = g->frames_at[depth].fn;
	long double per_unit = L->mass ? (L->b - L->a) / (long double)L->mass : 0;
	while (depth < g->max_depth && L->next < L->end) {
		const struct edge *e = &g->edges[L->next++];
		uint64_t m = e->mass;
		if (e->internal)   /* a member below FROM in the tree, or drawn elsewhere in it */
			m = g->parent[e->to] == from ? g->sub[e->to] : 0;
		if (!m || (long double)m * per_unit < g->min_units)
			continue;
		c->a = at(L, L->vis);
		c->b = at(L, L->vis + m);
		L->vis += m;
		c->fn = e->to;
		c->entry = !e->internal;
		c->mass = e->internal ? m : g->activity[g->comp[e->to]];
		return 1;
	}
	if (L->tail)
		return 0;
	L->tail = 1;
	c->a = at(L, L->vis);
	c->b = at(L, L->kids);
	c->fn = FLAMEGRAPH_ELIDED;
	c->entry = 0;
	c->mass = L->kids - L->vis;
	return snap(c->b) > snap(c->a);
}

int flamegraph_walk(struct flamegraph *g, flamegraph_visit_fn visit, void *ctx)
{
	unsigned depth = 0;
	enter(g, 0, FLAMEGRAPH_ROOT, 0, (long double)g->total, g->total);
	if (visit(ctx, g->frames_at, 0, 0) < 0)
		return -1;
	for (;;) {
		struct child c;
		if (next_child(g, depth, &c)) {
			if (c.entry)
				build_tree(g, (uint32_t)c.fn);
			enter(g, ++depth, c.fn, c.a, c.b, c.mass);
			if (visit(ctx, g->frames_at, depth, 0) < 0)
				return -1;
			continue;
		}
		if (visit(ctx, g->frames_at, depth, 1) < 0)
			return -1;
		if (!depth)
			return 0;
		depth--;
	}
}

struct counter {
	size_t n, max;
};

static int count_visit(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct counter *c = ctx;
	(void)stack;
	(void)depth;
	if (leave)
		return 0;
	return ++c->n > c->max ? -1 : 0;
}

/* The frames drawn at the minimum width UNITS, counted up to max_frames + 1. */
static size_t count_frames(struct flamegraph *g, long double units)
{
	struct counter c = { 0, g->max_frames };
	g->min_units = units;
	flamegraph_walk(g, count_visit, &c);
	return c.n;
}

/* The frame cap. Cutting the walk after max_frames frames would drop whatever comes last
 * in name order; raising the minimum width drops the narrowest frames instead, into
 * elision frames, and a frame wide enough at a higher minimum is wide enough at a lower
 * one, so the count falls as the minimum rises. Search: up by factors of 16 until the
 * frames fit (at a minimum above the total only the root and its elision frame are
 * left), then bisect between the last miss and the first fit down to 5%. Each count stops
 * after max_frames + 1 frames, so the search costs at most some 25 walks of max_frames
 * frames (16 steps up reach 2^64, 9 halvings a 5% interval). */
static void apply_cap(struct flamegraph *g)
{
	long double lo = g->asked_units, hi;
	size_t n = count_frames(g, lo);
	if (n <= g->max_frames) {
		g->frames = n;
		return;
	}
	g->capped = 1;
	for (hi = lo * 16; (n = count_frames(g, hi)) > g->max_frames; hi *= 16)
		lo = hi;
	size_t fit = n;
	while (hi > lo * 1.05L) {
		long double mid = (lo + hi) / 2;
		n = count_frames(g, mid);
		if (n > g->max_frames) {
			lo = mid;
		} else {
			hi = mid;
			fit = n;
		}
	}
	g->min_units = hi;
	g->frames = fit;
}

void flamegraph_sink_put(struct flamegraph_sink *s, const char *p, size_t n)
{
	if (s->failed)
		return;
	if (s->n + n > sizeof(s->buf)) {
		if (flamegraph_sink_flush(s) < 0)
			return;
		if (n > sizeof(s->buf)) {
			if (output_write(s->out, p, n, s->d) < 0)
				s->failed = 1;
			return;
		}
	}
	memcpy(s->buf + s->n, p, n);
	s->n += n;
}

void flamegraph_sink_printf(struct flamegraph_sink *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k < sizeof(tmp)) {
		flamegraph_sink_put(s, tmp, (size_t)k);
		return;
	}
	char *big = xmalloc((size_t)k + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)k + 1, fmt, ap);
	va_end(ap);
	flamegraph_sink_put(s, big, (size_t)k);
	free(big);
}

int flamegraph_sink_flush(struct flamegraph_sink *s)
{
	if (!s->failed && s->n && output_write(s->out, s->buf, s->n, s->d) < 0)
		s->failed = 1;
	s->n = 0;
	return s->failed ? -1 : 0;
}

/* A name as one folded-stack frame: ';' separates frames and a line break ends the line;
 * the other control characters are made spaces as in the SVG, so that a line is text. */
static void put_folded_name(struct flamegraph_sink *s, const char *name)
{
	if (!*name) {
		flamegraph_sink_put(s, "?", 1);
		return;
	}
	const unsigned char *p = (const unsigned char *)name;
	while (*p) {
		size_t k = 0;
		while (p[k] && p[k] != ';' && p[k] >= 0x20 && p[k] != 0x7f)
			k++;
		flamegraph_sink_put(s, (const char *)p, k);
		p += k;
		if (*p) {
			flamegraph_sink_put(s, *p == ';' ? ":" : " ", 1);
			p++;
		}
	}
}

struct folded {
	struct flamegraph_sink sink;   /* large: the context is allocated */
	const struct profile *p;
};

static int folded_visit(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct folded *f = ctx;
	struct flamegraph_sink *s = &f->sink;
	/* the root has no cost of its own: the entries add up to the total */
	if (leave || !depth || !stack[depth].self)
		return 0;
	for (unsigned i = 1; i <= depth; i++) {
		if (i > 1)
			flamegraph_sink_put(s, ";", 1);
		if (stack[i].fn == FLAMEGRAPH_ELIDED)
			flamegraph_sink_put(s, FLAMEGRAPH_ELIDED_NAME, sizeof(FLAMEGRAPH_ELIDED_NAME) - 1);
		else
			put_folded_name(s, f->p->fns[stack[i].fn].name);
	}
	flamegraph_sink_printf(s, " %llu\n", (unsigned long long)stack[depth].self);
	return s->failed ? -1 : 0;
}

int flamegraph_write_folded(struct flamegraph *g, struct output *out, struct diag *d)
{
	struct folded *c = xmalloc(sizeof(*c));
	c->sink.out = out;
	c->sink.d = d;
	c->sink.failed = 0;
	c->sink.n = 0;
	c->p = g->p;
	flamegraph_walk(g, folded_visit, c);
	int rc = flamegraph_sink_flush(&c->sink);
	free(c);
	return rc;
}
