/* flamegraph_scope.c - the flame graph's model cut to part of the program: the costs
 * under a focus (flamegraph_scope(), which every report command's --focus reads; docs/
 * reports.md 2.1, docs/flamegraph.md 1.7) and the profile of JIT code alone that
 * --jit-only draws (flamegraph_scope_jit(), docs/flamegraph.md 1.8). Both run on a
 * struct flamegraph_model (flamegraph_model.c) and own only their passes' arrays, per
 * function and per component. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/flamegraph.h"
#include "report/flamegraph_model.h"
#include "report/profile.h"

/* The members times the entries of a cycle under a focus past which one spanning tree
 * stands for all (flamegraph_scope()): some 10^8 steps, a second or two. */
#define SCOPE_TREE_WORK 1e8L

/* ---- costs under a focus ---- */

/* flamegraph_scope()'s pass: the focus's mass flowing from the focus down, callers first. */
struct scope_pass {
	struct flamegraph_model g;   /* with the arcs into the focus cut */
	size_t *mfirst;
	uint32_t *members;
	struct flamegraph_comp_arcs ca;
	long double *u;       /* per component: the mass under the focus entering it */
	long double *rho;     /* per component: U over its activity, at most 1 */
	long double *um;      /* per function: the mass entering its component at it */
	long double *own;     /* per function: its self cost under the focus */
	long double *incl;    /* per function: the width of its frames under the focus */
};

/* A member's frames are as wide as its subtree in the spanning tree of the member the
 * cycle C was entered at: a tree per entry member, which costs the members times the
 * entries; past SCOPE_TREE_WORK the tree of the member entered most stands for all (only
 * the inclusive costs of the members change). */
static void scope_cycle(struct scope_pass *sp, uint32_t c, uint64_t act)
{
	const size_t *mfirst = sp->mfirst;
	const uint32_t *members = sp->members;
	size_t size = mfirst[c + 1] - mfirst[c], entries = 0, most = mfirst[c];
	for (size_t i = mfirst[c]; i < mfirst[c + 1]; i++)
		if (sp->um[members[i]] > 0) {
			entries++;
			if (sp->um[members[i]] > sp->um[members[most]])
				most = i;
		}
	int one = (long double)size * (long double)entries > SCOPE_TREE_WORK;
	for (size_t i = mfirst[c]; i < mfirst[c + 1]; i++) {
		uint32_t m = members[i];
		if (!(sp->um[m] > 0) || (one && i != most))
			continue;
		long double mass = one ? sp->u[c] : sp->um[m];
		flamegraph_model_tree(&sp->g, m);
		for (size_t k = mfirst[c]; k < mfirst[c + 1]; k++)
			sp->incl[members[k]] += mass * (long double)sp->g.sub[members[k]] / (long double)act;
	}
}

/* Component C's share of the focus's mass: its members' self costs, what it passes on by
 * its arcs out, and its members' frames. */
static void scope_component(struct scope_pass *sp, uint32_t c)
{
	const struct flamegraph_model *g = &sp->g;
	uint64_t act = g->activity[c];
	if (!(sp->u[c] > 0) || !act)
		return;
	long double r = sp->u[c] / (long double)act;
	sp->rho[c] = r = r > 1 ? 1 : r;
	for (size_t i = sp->mfirst[c]; i < sp->mfirst[c + 1]; i++)
		sp->own[sp->members[i]] += r * (long double)profile_self(g->p, sp->members[i])[g->ev];
	/* each unit entering C leaves by its arcs out in the same proportions, wherever
	 * it entered (docs/flamegraph.md 1.3) */
	for (size_t i = sp->ca.out_first[c]; i < sp->ca.out_first[c + 1]; i++) {
		size_t a = sp->ca.out[i];
		long double flow = r * (long double)g->arcp[a];
		sp->u[g->comp[g->arcs[a].callee]] += flow;
		sp->um[g->arcs[a].callee] += flow;
	}
	if (g->comp_size[c] == 1) {
		sp->incl[sp->members[sp->mfirst[c]]] += sp->u[c];
		return;
	}
	scope_cycle(sp, c, act);
}

/* S from the pass: costs rounded, and the calls made under the focus, in proportion to
 * the caller's activity there; a focus function's are those from outside the focus (the
 * arcs the model cut, still in P). */
static void scope_results(const struct scope_pass *sp, const unsigned char *focus, struct flamegraph_scope *s)
{
	const struct flamegraph_model *g = &sp->g;
	const struct profile *p = g->p;
	size_t n = g->n;
	s->total = g->total;
	s->self = xcalloc(n + 1, sizeof(*s->self));
	s->incl = xcalloc(n + 1, sizeof(*s->incl));
	s->calls = xcalloc(n + 1, sizeof(*s->calls));
	s->in_cycle = xcalloc(n + 1, 1);
	long double *calls = xcalloc(n + 1, sizeof(*calls));
	for (size_t a = 0; a < g->narcs; a++)
		if (g->arcs[a].caller != g->arcs[a].callee)
			calls[g->arcs[a].callee] += (long double)g->arcs[a].count * sp->rho[g->comp[g->arcs[a].caller]];
	for (size_t a = 0; a < p->narcs; a++)
		if (focus[p->arcs[a].callee] && !focus[p->arcs[a].caller])
			s->calls[p->arcs[a].callee] += p->arcs[a].count;
	for (size_t f = 0; f < n; f++) {
		s->self[f] = flamegraph_model_round(sp->own[f]);
		s->incl[f] = flamegraph_model_round(sp->incl[f]);
		if (!focus[f])
			s->calls[f] = flamegraph_model_round(calls[f]);
		s->in_cycle[f] = g->comp_size[g->comp[f]] > 1;
	}
	free(calls);
}

void flamegraph_scope(const struct profile *p, unsigned ev, const unsigned char *focus,
		      struct flamegraph_scope *s)
{
	struct scope_pass sp;
	flamegraph_model_init(&sp.g, p, ev, focus, NULL);
	size_t n = sp.g.n;
	uint32_t nc = sp.g.ncomp;
	flamegraph_model_members(&sp.g, &sp.mfirst, &sp.members);
	flamegraph_model_comp_arcs(&sp.ca, &sp.g);
	sp.u = xcalloc((size_t)nc + 1, sizeof(*sp.u));
	sp.rho = xcalloc((size_t)nc + 1, sizeof(*sp.rho));
	sp.um = xcalloc(n + 1, sizeof(*sp.um));
	sp.own = xcalloc(n + 1, sizeof(*sp.own));
	sp.incl = xcalloc(n + 1, sizeof(*sp.incl));
	for (size_t f = 0; f < n; f++)
		if (focus[f])
			sp.u[sp.g.comp[f]] = sp.um[f] = (long double)sp.g.activity[sp.g.comp[f]];
	/* callers first: Tarjan numbers a component after every component it calls */
	for (uint32_t c = nc; c-- > 0;)
		scope_component(&sp, c);
	scope_results(&sp, focus, s);
	free(sp.u);
	free(sp.rho);
	free(sp.um);
	free(sp.own);
	free(sp.incl);
	free(sp.mfirst);
	free(sp.members);
	flamegraph_model_comp_arcs_free(&sp.ca);
	flamegraph_model_release(&sp.g);
}

void flamegraph_scope_free(struct flamegraph_scope *s)
{
	free(s->self);
	free(s->incl);
	free(s->calls);
	free(s->in_cycle);
	memset(s, 0, sizeof(*s));
}

/* ---- the profile of JIT code alone ---- */

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

/* flamegraph_scope_jit()'s pass: the activity of one kept function at a time (the
 * source) followed down through the code that is not kept. */
struct jit_pass {
	struct flamegraph_model g;   /* with the arcs into the kept functions from their cycle cut */
	const unsigned char *keep;   /* per function: 1 for JIT code (or a focus function) */
	size_t *mfirst;
	uint32_t *members;
	struct flamegraph_comp_arcs ca;
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
	const struct flamegraph_model *g = &j->g;
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
				j->to[z] += m * ((long double)(profile_self(p, z)[g->ev] + g->out[z]) / act);
				continue;
			}
			j->not_jit += m * ((long double)profile_self(p, z)[g->ev] / act);
		}
		for (size_t i = j->ca.out_first[c]; i < j->ca.out_first[c + 1]; i++) {
			size_t a = j->ca.out[i];
			if (!j->keep[g->arcs[a].caller])
				jit_deliver(j, g->comp[g->arcs[a].callee], m * ((long double)g->arcp[a] / act));
		}
	}
}

/* The pass over event EV of P keeping the functions KEEP flags (which must outlive it). */
static void jit_pass_init(struct jit_pass *j, const struct profile *p, unsigned ev, const unsigned char *focus,
			  const unsigned char *keep)
{
	size_t n = p->nfns;
	memset(j, 0, sizeof(*j));
	/* a cycle of JIT code and other code (V8's builtins calling back into JS, CPython's
	 * interpreter between its trampolines) is cut at its JIT functions, as a focus is
	 * cut: each then holds what it calls */
	flamegraph_model_init(&j->g, p, ev, focus, keep);
	j->keep = keep;
	flamegraph_model_members(&j->g, &j->mfirst, &j->members);
	flamegraph_model_comp_arcs(&j->ca, &j->g);
	j->in = xcalloc((size_t)j->g.ncomp + 1, sizeof(*j->in));
	j->heap.v = xmalloc(((size_t)j->g.ncomp + 1) * sizeof(*j->heap.v));
	j->to = xcalloc(n + 1, sizeof(*j->to));
	j->touched = xmalloc((n + 1) * sizeof(*j->touched));
}

static void jit_pass_release(struct jit_pass *j)
{
	free(j->mfirst);
	free(j->members);
	flamegraph_model_comp_arcs_free(&j->ca);
	free(j->in);
	free(j->heap.v);
	free(j->to);
	free(j->touched);
	flamegraph_model_release(&j->g);
}

/* A profile D of P's event EV with P's path, command and parts; its builder. */
static struct profile_builder *jit_profile_new(struct profile **d, const struct profile *p, unsigned ev)
{
	*d = xcalloc(1, sizeof(**d));
	const char *evn[1] = { p->events[ev] };
	struct profile_builder *b = profile_builder_new(*d, 1, evn);
	(*d)->path = p->path ? xstrndup(p->path, strlen(p->path)) : NULL;
	if (p->cmd)
		profile_set_cmd(*d, p->cmd, strlen(p->cmd));
	(*d)->parts = p->parts;
	(*d)->part = p->part;
	(*d)->folded = p->folded;
	return b;
}

/* The calls of kept function X (IDX[X] in B) to the kept functions its activity reaches,
 * and to OTHER for the code that is not kept. Returns the cost that went to OTHER. */
static uint64_t jit_calls(struct jit_pass *j, struct profile_builder *b, const uint32_t *idx, uint32_t other,
			  uint32_t x)
{
	jit_source(j, x);
	for (size_t i = 0; i < j->ntouched; i++) {
		uint32_t z = j->touched[i];
		uint64_t c = flamegraph_model_round(j->to[z]);
		j->to[z] = 0;
		if (c && z != x)
			profile_builder_call(b, idx[x], idx[z], 1, &c);
	}
	j->ntouched = 0;
	uint64_t c = flamegraph_model_round(j->not_jit);
	if (c)
		profile_builder_call(b, idx[x], other, 1, &c);
	return c;
}

struct profile *flamegraph_scope_jit(const struct profile *p, unsigned ev, const unsigned char *focus,
				     unsigned char **focus_out)
{
	size_t n = p->nfns;
	unsigned char *keep = xcalloc(n + 1, 1);
	for (size_t f = 0; f < n; f++)
		keep[f] = p->fns[f].jit || (focus && focus[f]);
	struct jit_pass j;
	jit_pass_init(&j, p, ev, focus, keep);
	struct profile *d;
	struct profile_builder *b = jit_profile_new(&d, p, ev);
	uint32_t *idx = xmalloc((n + 1) * sizeof(*idx));
	for (size_t f = 0; f < n; f++) {
		if (!keep[f])
			continue;
		idx[f] = profile_builder_copy_fn(b, p, f);
		profile_builder_self(b, idx[f], &profile_self(p, f)[ev]);
	}
	struct prof_fn_key not_jit = { "", 0, "", 0, FLAMEGRAPH_NOT_JIT_NAME, sizeof(FLAMEGRAPH_NOT_JIT_NAME) - 1 };
	uint32_t other = profile_builder_fn(b, &not_jit);
	uint64_t other_self = 0;
	for (size_t x = 0; x < n; x++)
		if (keep[x])
			other_self += jit_calls(&j, b, idx, other, (uint32_t)x);
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
	jit_pass_release(&j);
	return d;
}
