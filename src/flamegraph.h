/* flamegraph.h - flame graph stacks built from a profile's call arcs (docs/flamegraph.md),
 * walked depth first without storing the tree, and the folded-stacks writer; the SVG
 * writer is flamegraph_svg.h. callgrind records arcs, not stacks: a frame of f that is
 * CW wide gives each callee g the width CW * arc(f->g) / inclusive(f). A function already on
 * the current stack is not entered again; narrow frames, calls past the depth limit and
 * arcs back into the stack stay in their parent as self cost, so that the self costs of all
 * frames add up to the event's total. Memory grows with functions, arcs and the depth. */
#ifndef CGJIT_FLAMEGRAPH_H
#define CGJIT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct output;
struct profile;

/* The frame of the whole run (depth 0), parent of the entry functions. */
#define FLAMEGRAPH_ROOT SIZE_MAX

struct flamegraph_opts {
	unsigned event;       /* index into the profile's events */
	double min_width;     /* a fraction of the total (0.001 = 0.1%): narrower frames are left
	                         out (their cost stays in the parent); at least 1 cost unit */
	unsigned max_depth;   /* frames below the root; 0 is taken as 1 */
};

struct flamegraph_frame {
	size_t fn;            /* index into the profile's fns, or FLAMEGRAPH_ROOT */
	unsigned depth;       /* 0 for the root */
	uint64_t x;           /* left edge, in cost units from the root's left edge */
	uint64_t width;       /* cost; children's widths add up to at most this */
	uint64_t self;        /* width minus the children's widths */
};

struct flamegraph;

/* Prepares P's arcs (P must outlive the result). Returns the graph (never NULL). */
struct flamegraph *flamegraph_new(const struct profile *p, const struct flamegraph_opts *o);
void flamegraph_free(struct flamegraph *g);   /* NULL is a no-op */
const struct profile *flamegraph_profile(const struct flamegraph *g);
/* The total of the event: the root frame's width. */
uint64_t flamegraph_total(const struct flamegraph *g);
unsigned flamegraph_event(const struct flamegraph *g);

/* Called entering a frame (LEAVE 0, before its children) and leaving it (LEAVE 1). STACK[0..DEPTH] are the frames from the root down to this one,
 * valid during the call. Returns 0 to go on, -1 to stop the walk. */
typedef int (*flamegraph_visit_fn)(void *ctx, const struct flamegraph_frame *stack,
				   unsigned depth, int leave);
/* Visits every frame depth first, children in the order of their names (then file,
 * object), the same order every time. Returns 0, or -1 if VISIT stopped it. */
int flamegraph_walk(struct flamegraph *g, flamegraph_visit_fn visit, void *ctx);

/* Writes Brendan Gregg's folded stacks to OUT: one line "entry;...;f SELF" per frame with a
 * self cost above 0, a frame before its children, so that the values add up to the total.
 * In names ';' becomes ':' and line breaks become spaces. The root's self cost (entry
 * functions narrower than the minimum width) is the stack "[other]".
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
