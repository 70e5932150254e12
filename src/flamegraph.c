/* flamegraph.c - the stacks of a flame graph, built from struct profile's call arcs down
 * from the entry functions (docs/flamegraph.md), walked depth first for the writers
 * (folded stacks here, SVG in flamegraph_svg.c). Owns the arcs re-sorted by caller and
 * callee name, one event's costs, and the walk's stack; never the tree itself. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "flamegraph.h"
#include "io.h"
#include "profile.h"
#include "xalloc.h"

struct edge {
	uint32_t to;
	uint64_t cost;
};

/* Where a frame is in its list of callees. */
struct level {
	size_t next, end;     /* edges still to look at */
	uint64_t cum;         /* cost of the edges looked at */
	uint64_t drawn;       /* width of the children entered */
};

struct flamegraph {
	const struct profile *p;
	unsigned ev, max_depth;
	uint64_t total, min_units;
	size_t n;             /* functions; node N is the root */
	size_t *first;        /* N + 2: the edges of node V are first[V] .. first[V + 1] */
	struct edge *edges;
	uint64_t *denom;      /* N + 1: what a frame's width stands for, see flamegraph_new() */
	char *on_stack;
	struct level *levels;
	struct flamegraph_frame *frames;
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

struct sort_edge {
	uint32_t from, rank, to;
	uint64_t cost;
};

static int cmp_edge(const void *x, const void *y)
{
	const struct sort_edge *a = x, *b = y;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
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

/* How much cost each function starts, as an entry: the cost of its component of the call
 * graph (a function, or functions calling each other in a cycle) that the calls into it do
 * not explain: self cost plus calls out of the component minus calls into it. That is the
 * inclusive cost of a function nobody calls (main, _start), and the run of a thread, which
 * callgrind shows as an arc from clone (its second return) to start_thread that is far
 * wider than the calls into clone. Over all components these add up to the total (each
 * arc between components leaves one and enters another) unless arcs contradict each other
 * (a component gets more than it spends): the root's denominator then scales them down. A component's excess is shared
 * among its members by their own excess (self + out - in); arcs inside it cancel out. */
static uint64_t *entry_costs(const struct profile *p, unsigned ev)
{
	size_t n = p->nfns;
	uint32_t *comp = xmalloc((n + 1) * sizeof(*comp));
	uint32_t ncomp = profile_components(p, comp);
	/* plus: self + out, minus: in; per function [0, n) and per component [n, n + ncomp) */
	uint64_t *plus = xcalloc(n + ncomp + 1, sizeof(*plus)), *minus = xcalloc(n + ncomp + 1, sizeof(*minus));
	for (size_t f = 0; f < n; f++) {
		plus[f] += p->fns[f].self[ev];
		plus[n + comp[f]] += p->fns[f].self[ev];
	}
	for (size_t a = 0; a < p->narcs; a++) {
		const struct prof_arc *r = &p->arcs[a];
		uint64_t c = p->arc_costs[a * p->nevents + ev];
		if (r->caller == r->callee)
			continue;
		plus[r->caller] += c;
		minus[r->callee] += c;
		if (comp[r->caller] != comp[r->callee]) {
			plus[n + comp[r->caller]] += c;
			minus[n + comp[r->callee]] += c;
		}
	}
	/* weight: a member's own excess; WSUM and WCUM per component, to cut its excess exactly */
	uint64_t *wsum = xcalloc(ncomp + 1, sizeof(*wsum)), *wcum = xcalloc(ncomp + 1, sizeof(*wcum));
	for (size_t f = 0; f < n; f++)
		if (plus[f] > minus[f])
			wsum[comp[f]] += plus[f] - minus[f];
	uint64_t *cost = xcalloc(n + 1, sizeof(*cost));
	for (size_t f = 0; f < n; f++) {
		uint32_t k = comp[f];
		if (plus[f] <= minus[f] || plus[n + k] <= minus[n + k])
			continue;
		uint64_t excess = plus[n + k] - minus[n + k], lo = scale(excess, wcum[k], wsum[k]);
		wcum[k] += plus[f] - minus[f];
		cost[f] = scale(excess, wcum[k], wsum[k]) - lo;
	}
	free(comp);
	free(plus);
	free(minus);
	free(wsum);
	free(wcum);
	return cost;
}

/* The edges: every arc between two functions with a cost, and from the root to every
 * function that starts cost (entry_costs()). Self-calls are not edges: their cost is
 * inside the caller's inclusive cost already. */
static void build_edges(struct flamegraph *g)
{
	const struct profile *p = g->p;
	size_t n = g->n, m = 0;
	uint64_t *entry = entry_costs(p, g->ev);
	uint32_t *rank = name_ranks(p);
	struct sort_edge *se = xmalloc((p->narcs + n + 1) * sizeof(*se));
	for (size_t a = 0; a < p->narcs; a++) {
		const struct prof_arc *r = &p->arcs[a];
		uint64_t cost = p->arc_costs[a * p->nevents + g->ev];
		if (r->caller != r->callee && cost)
			se[m++] = (struct sort_edge){ r->caller, rank[r->callee], r->callee, cost };
	}
	for (size_t f = 0; f < n; f++)
		if (entry[f])
			se[m++] = (struct sort_edge){ (uint32_t)n, rank[f], (uint32_t)f, entry[f] };
	qsort(se, m, sizeof(*se), cmp_edge);
	g->first = xcalloc(n + 2, sizeof(*g->first));
	g->edges = xmalloc((m + 1) * sizeof(*g->edges));
	for (size_t i = 0; i < m; i++) {
		g->first[se[i].from + 1]++;
		g->edges[i] = (struct edge){ se[i].to, se[i].cost };
	}
	for (size_t v = 0; v <= n; v++)
		g->first[v + 1] += g->first[v];
	free(se);
	free(rank);
	free(entry);
}

struct flamegraph *flamegraph_new(const struct profile *p, const struct flamegraph_opts *o)
{
	struct flamegraph *g = xcalloc(1, sizeof(*g));
	g->p = p;
	g->ev = o->event;
	g->n = p->nfns;
	g->total = p->totals[o->event];
	g->max_depth = o->max_depth ? o->max_depth : 1;
	double min = o->min_width * (double)g->total;
	g->min_units = min > 1.0 ? (uint64_t)min : 1;
	if ((double)g->min_units < min)
		g->min_units++;
	build_edges(g);
	/* A frame of f stands for f's inclusive cost: its callees get their arcs' shares of
	 * it. Where the arcs add up to more (a cycle's members are capped, docs/reports.md),
	 * their sum is used, so that children never outgrow their parent. */
	g->denom = xmalloc((g->n + 1) * sizeof(*g->denom));
	for (size_t v = 0; v <= g->n; v++) {
		uint64_t sum = 0;
		for (size_t i = g->first[v]; i < g->first[v + 1]; i++)
			sum += g->edges[i].cost;
		uint64_t own = v == g->n ? g->total : p->fns[v].incl[g->ev];
		g->denom[v] = sum > own ? sum : own;
	}
	g->on_stack = xcalloc(g->n + 1, 1);
	g->levels = xmalloc(((size_t)g->max_depth + 1) * sizeof(*g->levels));
	g->frames = xmalloc(((size_t)g->max_depth + 1) * sizeof(*g->frames));
	return g;
}

void flamegraph_free(struct flamegraph *g)
{
	if (!g)
		return;
	free(g->first);
	free(g->edges);
	free(g->denom);
	free(g->on_stack);
	free(g->levels);
	free(g->frames);
	free(g);
}

const struct profile *flamegraph_profile(const struct flamegraph *g)
{
	return g->p;
}

uint64_t flamegraph_total(const struct flamegraph *g)
{
	return g->total;
}

unsigned flamegraph_event(const struct flamegraph *g)
{
	return g->ev;
}

static void enter(struct flamegraph *g, unsigned depth, size_t node, uint64_t x, uint64_t width)
{
	g->frames[depth] = (struct flamegraph_frame){ node == g->n ? FLAMEGRAPH_ROOT : node, depth, x, width, 0 };
	g->levels[depth] = (struct level){ g->first[node], g->first[node + 1], 0, 0 };
	if (node != g->n)
		g->on_stack[node] = 1;
}

/* The next callee of the frame at DEPTH to enter: its node and width, or 0 when none is
 * left. Edges are cut from the frame's width in order, each by the cumulative share of
 * all edges so far, so that rounding never makes the children wider than the frame. */
static int next_child(struct flamegraph *g, unsigned depth, size_t *node, uint64_t *width)
{
	struct level *L = &g->levels[depth];
	const struct flamegraph_frame *F = &g->frames[depth];
	uint64_t den = g->denom[F->fn == FLAMEGRAPH_ROOT ? g->n : F->fn];
	if (depth >= g->max_depth)
		return 0;
	while (L->next < L->end) {
		const struct edge *e = &g->edges[L->next++];
		uint64_t lo = scale(F->width, L->cum, den);
		L->cum += e->cost;
		uint64_t w = scale(F->width, L->cum, den) - lo;
		/* a function on the stack is recursion through others: not entered again */
		if (w < g->min_units || g->on_stack[e->to])
			continue;
		*node = e->to;
		*width = w;
		return 1;
	}
	return 0;
}

/* The self cost of the frame just entered at DEPTH: its width minus the children that
 * next_child() will give. The stack does not change while they are walked (each child
 * leaves it again), so a dry run over the edges gives the same children. */
static uint64_t frame_self(struct flamegraph *g, unsigned depth)
{
	struct level saved = g->levels[depth];
	size_t node;
	uint64_t w, drawn = 0;
	while (next_child(g, depth, &node, &w))
		drawn += w;
	g->levels[depth] = saved;
	return g->frames[depth].width - drawn;
}

int flamegraph_walk(struct flamegraph *g, flamegraph_visit_fn visit, void *ctx)
{
	unsigned depth = 0;
	enter(g, 0, g->n, 0, g->total);
	g->frames[0].self = frame_self(g, 0);
	if (visit(ctx, g->frames, 0, 0) < 0)
		return -1;
	for (;;) {
		size_t node;
		uint64_t w;
		if (next_child(g, depth, &node, &w)) {
			struct level *L = &g->levels[depth];
			uint64_t x = g->frames[depth].x + L->drawn;
			L->drawn += w;
			enter(g, ++depth, node, x, w);
			g->frames[depth].self = frame_self(g, depth);
			if (visit(ctx, g->frames, depth, 0) < 0)
				goto stop;
			continue;
		}
		const struct flamegraph_frame *F = &g->frames[depth];
		if (visit(ctx, g->frames, depth, 1) < 0)
			goto stop;
		if (F->fn != FLAMEGRAPH_ROOT)
			g->on_stack[F->fn] = 0;
		if (!depth)
			return 0;
		depth--;
	}
stop:
	for (unsigned i = 1; i <= depth; i++)
		g->on_stack[g->frames[i].fn] = 0;
	return -1;
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

/* A name as one folded-stack frame: ';' separates frames, a line break ends the line. */
static void put_folded_name(struct flamegraph_sink *s, const char *name)
{
	if (!*name) {
		flamegraph_sink_put(s, "?", 1);
		return;
	}
	for (const char *p = name; *p;) {
		size_t k = strcspn(p, ";\n\r");
		flamegraph_sink_put(s, p, k);
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
	const struct profile *p = f->p;
	if (leave || !stack[depth].self)
		return 0;
	if (!depth)
		flamegraph_sink_put(s, "[other]", 7);
	for (unsigned i = 1; i <= depth; i++) {
		if (i > 1)
			flamegraph_sink_put(s, ";", 1);
		put_folded_name(s, p->fns[stack[i].fn].name);
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
