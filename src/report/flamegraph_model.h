/* flamegraph_model.h - inside the flame graph, for report/flamegraph*.c only: the model of
 * docs/flamegraph.md section 1 (components, consistent arcs, activities, entries, the edges
 * in callee-name order, one spanning tree per component being drawn) that the walk
 * (flamegraph.c) draws and the scopes (flamegraph_scope.c) measure, and --jit-only's
 * profile of JIT functions. Memory grows with functions and arcs. */
#ifndef CGJIT_FLAMEGRAPH_MODEL_H
#define CGJIT_FLAMEGRAPH_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct prof_arc;
struct profile;

#define FLAMEGRAPH_MODEL_NONE UINT32_MAX

/* An edge out of a function (or the root) in the order of the callees' names. */
struct flamegraph_edge {
	uint32_t to;
	uint32_t internal;    /* TO is in the caller's component: a spanning-tree edge */
	uint64_t mass;        /* external: the consistent arc cost; the root's: an entry */
};

struct flamegraph_model {
	const struct profile *p;
	unsigned ev;
	uint64_t total;       /* the root's mass: the event's total, or the focus's activity */
	size_t n;             /* functions; node N is the root */
	/* the arcs the model uses: the profile's, or a copy without the arcs it cuts */
	const struct prof_arc *arcs;
	struct prof_arc *arcs_copy;
	size_t narcs;
	uint64_t *cost;       /* narcs: each arc's cost of the event */
	uint32_t ncomp;
	uint32_t *comp;       /* N: each function's strongly connected component, numbered
	                         after every component it calls (Tarjan) */
	uint32_t *comp_size;  /* per component: its members */
	uint64_t *arcp;       /* narcs: the consistent arcs (0 inside a component) */
	const unsigned char *prio;   /* N: functions whose arcs out are made consistent first
	                                (a focus, the JIT code of --jit-only), or NULL; only
	                                while the model is made */
	uint64_t *activity;   /* per component: I'(C), self plus consistent arcs out */
	uint64_t *out;        /* N: a function's consistent arcs out of its component */
	size_t *first;        /* N + 2: the edges of node V are first[V] .. first[V + 1] */
	struct flamegraph_edge *edges;
	/* the spanning tree of each component being drawn (one per component: a component is
	 * on a stack at most once, the graph of components having no cycle) */
	uint32_t *parent;     /* N: a member's parent in its component's tree */
	uint64_t *sub;        /* N: the mass of a member's subtree */
	uint32_t *root_of;    /* per component: the member its tree is rooted at, or NONE */
	uint32_t *queue, *seen, epoch;
};

/* The model for event EV of P into M, with the arcs into the functions FOCUS flags cut
 * (NULL: none), so that each focus function is a root of its own and the only entries are
 * theirs (section 1.7), and the arcs into the functions CYCLE_CUT flags from inside their
 * cycle cut (NULL: none; --jit-only, section 1.8). P must outlive M; FOCUS and CYCLE_CUT
 * are read during the call only. Free M with flamegraph_model_release(). */
void flamegraph_model_init(struct flamegraph_model *m, const struct profile *p, unsigned ev,
			   const unsigned char *focus, const unsigned char *cycle_cut);
void flamegraph_model_release(struct flamegraph_model *m);

/* Roots MEMBER's component at MEMBER (for an entry into it there): fills parent and sub
 * for its members, unless the tree is rooted there already. */
void flamegraph_model_tree(struct flamegraph_model *m, uint32_t member);

/* The arcs between two components with a cost, by the callee's component (IN) and by the
 * caller's (OUT): component C's are IN[IN_FIRST[C] .. IN_FIRST[C + 1]). */
struct flamegraph_comp_arcs {
	size_t *in_first, *out_first;
	uint32_t *in, *out;
};
/* Fills CA for M's components; free it with flamegraph_model_comp_arcs_free(). */
void flamegraph_model_comp_arcs(struct flamegraph_comp_arcs *ca, const struct flamegraph_model *m);
void flamegraph_model_comp_arcs_free(struct flamegraph_comp_arcs *ca);

/* The members of each component: (*MEMBERS)[(*FIRST)[C] .. (*FIRST)[C + 1]), in function
 * order; both arrays are the caller's to free. */
void flamegraph_model_members(const struct flamegraph_model *m, size_t **first, uint32_t **members);

/* V rounded to the nearest whole cost unit, 0 below 0 and UINT64_MAX past it. */
uint64_t flamegraph_model_round(long double v);

/* --jit-only (section 1.8, flamegraph_scope.c): a profile of event EV with the JIT
 * functions of P (and the FOCUS functions, NULL: none) and one function
 * FLAMEGRAPH_NOT_JIT_NAME for the code they call that is not JIT; every other function is
 * collapsed out of the stacks, and each kept function keeps its self cost. *FOCUS_OUT gets
 * the focus flags over the new profile's functions (NULL without a focus; the caller
 * frees them). Returns the profile, the caller's to free (profile_free(), then free()). */
struct profile *flamegraph_scope_jit(const struct profile *p, unsigned ev, const unsigned char *focus,
				     unsigned char **focus_out);

#endif
