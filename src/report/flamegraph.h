/* flamegraph.h - flame graph stacks built from a profile's call arcs (docs/flamegraph.md),
 * walked depth first without storing the tree, and the folded-stacks writer; the SVG
 * writer is flamegraph_svg.h. callgrind records arcs, not stacks. The arcs are first made
 * consistent (no function receives more than it spends) and cycles are collapsed; a frame
 * of f then gives its own self cost and each callee its arc's share of f's activity, so
 * that the frames of every function carry its self cost, within the rounding of one unit
 * per frame, minus what went to elision frames. Frames narrower than the minimum width,
 * below the depth limit or cut by the frame cap go to one elision frame per parent, never
 * into the parent. Memory grows with functions, arcs and the depth. */
#ifndef CGJIT_FLAMEGRAPH_H
#define CGJIT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct output;
struct profile;

/* The frame of the whole run (depth 0), parent of the entry functions. */
#define FLAMEGRAPH_ROOT SIZE_MAX
/* An elision frame: the frames cut below one parent (narrow, too deep, over the cap), a
 * leaf drawn in a neutral colour and named FLAMEGRAPH_ELIDED_NAME. */
#define FLAMEGRAPH_ELIDED (SIZE_MAX - 1)
#define FLAMEGRAPH_ELIDED_NAME "[elided]"
/* --jit-only: the one function that stands for the code JIT functions call that is not
 * JIT (its object and file are ""). */
#define FLAMEGRAPH_NOT_JIT_NAME "[not JIT]"
/* The default cap on the number of frames (flamegraph_opts.max_frames 0). */
#define FLAMEGRAPH_MAX_FRAMES 200000

struct flamegraph_opts {
	unsigned event;       /* index into the profile's events */
	double min_width;     /* a fraction of the total (0.0001 = 0.01%): narrower frames go to
	                         their parent's elision frame; at least 1 cost unit */
	unsigned max_depth;   /* function frames below the root (0 is taken as 1); an elision
	                         frame can sit one below */
	size_t max_frames;    /* the cap on frames drawn (0: FLAMEGRAPH_MAX_FRAMES; at least 2):
	                         where more frames are at least min_width wide, the minimum
	                         width is raised until they fit (flamegraph_limits()) */
	const unsigned char *focus;   /* per function of the profile: 1 for a focus function, or
	                                 NULL: draw only what runs under the focus, each focus
	                                 function a root of its own (docs/flamegraph.md 1.7) */
	int jit_only;         /* draw JIT functions (and the focus) only: the rest is collapsed
	                         out of the stacks, its cost in FLAMEGRAPH_NOT_JIT_NAME (1.8) */
};

struct flamegraph_frame {
	size_t fn;            /* index into the profile's fns, FLAMEGRAPH_ROOT or FLAMEGRAPH_ELIDED */
	unsigned depth;       /* 0 for the root */
	uint64_t x;           /* left edge, in cost units from the root's left edge */
	uint64_t width;       /* cost; children's widths add up to at most this */
	uint64_t self;        /* width minus the children's widths */
};

/* The limits the graph was drawn with. */
struct flamegraph_limits {
	size_t max_frames;    /* the cap */
	int capped;           /* 1: more than max_frames frames were at least the minimum width
	                         asked for: min_units was raised */
	double min_units;     /* the minimum width used, in cost units (at least 1) */
	double asked_units;   /* the minimum width asked for, in cost units (at least 1) */
	size_t frames;        /* frames in the graph, the root and elision frames included */
};

struct flamegraph;

/* Makes P's arcs consistent, collapses its cycles and applies the frame cap (which may walk
 * the graph a few times, each walk stopped after max_frames frames). P (and O->focus) must
 * outlive the result. Returns the graph (never NULL). */
struct flamegraph *flamegraph_new(const struct profile *p, const struct flamegraph_opts *o);
void flamegraph_free(struct flamegraph *g);   /* NULL is a no-op */
/* The profile whose functions the frames index: P, or with jit_only the profile of the
 * JIT functions made from it (valid until flamegraph_free()). */
const struct profile *flamegraph_profile(const struct flamegraph *g);
/* The total of the event: the root frame's width (under a focus, the focus's cost; with
 * jit_only, the cost under JIT frames). */
uint64_t flamegraph_total(const struct flamegraph *g);
unsigned flamegraph_event(const struct flamegraph *g);
/* Fills L with the limits G is drawn with. */
void flamegraph_limits(const struct flamegraph *g, struct flamegraph_limits *l);

/* Called entering a frame (LEAVE 0, before its children) and leaving it (LEAVE 1). STACK[0..DEPTH] are the frames from the root down to this one,
 * valid during the call. Returns 0 to go on, -1 to stop the walk. */
typedef int (*flamegraph_visit_fn)(void *ctx, const struct flamegraph_frame *stack,
				   unsigned depth, int leave);
/* Visits every frame depth first, children in the order of their names (then file,
 * object) and a parent's elision frame after them, the same order every time. Returns 0,
 * or -1 if VISIT stopped it. */
int flamegraph_walk(struct flamegraph *g, flamegraph_visit_fn visit, void *ctx);

/* Costs of one event under a focus, in the flame graph's model (docs/reports.md 2.1): the
 * arcs into the focus functions are cut, each is a root entered with its activity, and
 * what they call gets their mass in the proportions of the consistent arcs. */
struct flamegraph_scope {
	uint64_t total;           /* the focus's cost: its functions' activity (100%) */
	uint64_t *self;           /* per function of the profile: its own cost under the focus */
	uint64_t *incl;           /* ... the width of its frames under the focus */
	uint64_t *calls;          /* ... the calls into it made under the focus (estimated in
	                             proportion); a focus function's: from outside the focus */
	unsigned char *in_cycle;  /* ... on a cycle once the arcs into the focus are cut */
};
/* Fills S for event EV of P and the functions FOCUS flags (NFNS entries, not all 0).
 * Free S with flamegraph_scope_free(). */
void flamegraph_scope(const struct profile *p, unsigned ev, const unsigned char *focus,
		      struct flamegraph_scope *s);
void flamegraph_scope_free(struct flamegraph_scope *s);

/* Writes Brendan Gregg's folded stacks to OUT: one line "entry;...;f SELF" per frame with a
 * self cost above 0, a frame before its children, so that the values add up to the total.
 * In names ';' becomes ':', and control characters (bytes below 0x20, and 0x7f) become
 * spaces, as in the SVG. An elision frame is FLAMEGRAPH_ELIDED_NAME.
 * Returns 0, or -1 with D set (a failed write; OUT is not finished or aborted here). */
int flamegraph_write_folded(struct flamegraph *g, struct output *out, struct diag *d);

/* A buffer in front of struct output for the writers: output_write() is unbuffered. */
struct flamegraph_sink {
	struct output *out;
	struct diag *d;
	int failed;           /* a write failed: D is set, later writes do nothing */
	size_t n;
	char buf[1 << 16];
};
void flamegraph_sink_put(struct flamegraph_sink *s, const char *p, size_t n);
void flamegraph_sink_printf(struct flamegraph_sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes what is buffered. Returns 0, or -1 if this or an earlier write failed. */
int flamegraph_sink_flush(struct flamegraph_sink *s);

#endif
