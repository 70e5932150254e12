/* flamegraph.c - the stacks of a flame graph, walked depth first over the model of
 * flamegraph_model.c (docs/flamegraph.md section 1) for the writers: folded stacks here,
 * SVG in flamegraph_svg.c. Applies the limits (minimum width, depth, the frame cap) as it
 * walks. Owns the model, --jit-only's derived profile and the walk's stack, one level per
 * depth; never the tree of frames itself. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "report/flamegraph.h"
#include "report/flamegraph_model.h"
#include "report/profile.h"

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
	struct flamegraph_model m;
	struct profile *own;  /* --jit-only: the derived profile M.p is, owned here */
	unsigned max_depth;
	/* limits */
	long double min_units, asked_units;
	size_t max_frames, frames;
	int capped;
	struct level *levels;
	struct flamegraph_frame *frames_at;
};

static void apply_cap(struct flamegraph *g);

struct flamegraph *flamegraph_new(const struct profile *p, const struct flamegraph_opts *o)
{
	struct flamegraph *g = xcalloc(1, sizeof(*g));
	if (o->jit_only) {
		unsigned char *focus = NULL;
		g->own = flamegraph_scope_jit(p, o->event, o->focus, &focus);
		flamegraph_model_init(&g->m, g->own, 0, focus, NULL);
		free(focus);
	} else {
		flamegraph_model_init(&g->m, p, o->event, o->focus, NULL);
	}
	g->max_depth = o->max_depth ? o->max_depth : 1;
	g->max_frames = o->max_frames ? o->max_frames : FLAMEGRAPH_MAX_FRAMES;
	if (g->max_frames < 2)
		g->max_frames = 2;   /* the root and its elision frame always fit */
	long double min = (long double)o->min_width * (long double)g->m.total;
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
	flamegraph_model_release(&g->m);
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
	return g->m.p;   /* with --jit-only, the derived profile */
}

uint64_t flamegraph_total(const struct flamegraph *g)
{
	return g->m.total;
}

unsigned flamegraph_event(const struct flamegraph *g)
{
	return g->m.ev;
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

/* A frame to enter: its function, its real interval and the mass it stands for. */
struct child {
	size_t fn;
	long double a, b;
	uint64_t mass;
	int entry;            /* entered from outside its component: its tree is rooted here */
};

static void enter(struct flamegraph *g, unsigned depth, const struct child *c)
{
	const struct flamegraph_model *m = &g->m;
	struct level *L = &g->levels[depth];
	size_t fn = c->fn, node = fn == FLAMEGRAPH_ROOT ? m->n : fn;
	uint64_t mass = c->mass;
	uint64_t own = fn == FLAMEGRAPH_ROOT ? 0 : fn == FLAMEGRAPH_ELIDED ? mass : profile_self(m->p, fn)[m->ev];
	*L = (struct level){ c->a, c->b, mass, mass > own ? mass - own : 0, 0, 0, 0, fn == FLAMEGRAPH_ELIDED };
	if (fn != FLAMEGRAPH_ELIDED) {
		L->next = m->first[node];
		L->end = m->first[node + 1];
	}
	uint64_t x0 = snap(c->a), x1 = snap(c->b);
	g->frames_at[depth] = (struct flamegraph_frame){ fn, depth, x0, x1 - x0, x1 - snap(at(L, L->kids)) };
}

/* The next child of the frame at DEPTH into C: 1, or 0 when none is left. Children at
 * least min_units wide come first, in edge order; the rest of the children's mass (narrow
 * ones, and all of them below max_depth) is one elision frame after them. */
static int next_child(struct flamegraph *g, unsigned depth, struct child *c)
{
	const struct flamegraph_model *gm = &g->m;
	struct level *L = &g->levels[depth];
	size_t from = g->frames_at[depth].fn;
	long double per_unit = L->mass ? (L->b - L->a) / (long double)L->mass : 0;
	while (depth < g->max_depth && L->next < L->end) {
		const struct flamegraph_edge *e = &gm->edges[L->next++];
		uint64_t m = e->mass;
		if (e->internal)   /* a member below FROM in the tree, or drawn elsewhere in it */
			m = gm->parent[e->to] == from ? gm->sub[e->to] : 0;
		if (!m || (long double)m * per_unit < g->min_units)
			continue;
		c->a = at(L, L->vis);
		c->b = at(L, L->vis + m);
		L->vis += m;
		c->fn = e->to;
		c->entry = !e->internal;
		c->mass = e->internal ? m : gm->activity[gm->comp[e->to]];
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
	struct child root = { FLAMEGRAPH_ROOT, 0, (long double)g->m.total, g->m.total, 0 };
	enter(g, 0, &root);
	if (visit(ctx, g->frames_at, 0, 0) < 0)
		return -1;
	for (;;) {
		struct child c;
		if (next_child(g, depth, &c)) {
			if (c.entry)
				flamegraph_model_tree(&g->m, (uint32_t)c.fn);
			enter(g, ++depth, &c);
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
	struct prof_name name;         /* the frame's name being written */
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
			put_folded_name(s, profile_name(f->p, stack[i].fn, &f->name));
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
	c->p = g->m.p;
	c->name = (struct prof_name){ 0 };
	flamegraph_walk(g, folded_visit, c);
	int rc = flamegraph_sink_flush(&c->sink);
	prof_name_free(&c->name);
	free(c);
	return rc;
}
