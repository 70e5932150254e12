/* flamegraph_svg.h - a flame graph as one self-contained interactive SVG file: frames as
 * nested groups with their cost in data attributes, a tooltip per frame, and a small inline
 * script for details on hover and zoom on click (docs/flamegraph.md). */
#ifndef CGJIT_FLAMEGRAPH_SVG_H
#define CGJIT_FLAMEGRAPH_SVG_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct flamegraph;
struct output;
struct profile;

/* --diff's base profile as the drawing reads it: the self cost in BASE of each function of
 * NOW (the profile whose costs are compared), so that BASE itself can be freed before the
 * graph is built (docs/design.md, "Memory"). */
struct flamegraph_base {
	char *path;
	size_t n;                 /* NOW's functions */
	uint64_t *self;           /* per function of NOW: its self cost in BASE */
	unsigned char *in_base;   /* per function of NOW: 0 when BASE has no such function */
};
/* Matches NOW's functions with BASE's (prof_match()) and keeps their self cost of event EV. */
void flamegraph_base_make(struct flamegraph_base *fb, const struct profile *base, unsigned ev,
			  const struct profile *now);
void flamegraph_base_free(struct flamegraph_base *fb);

struct flamegraph_svg_opts {
	const char *title;           /* the heading, e.g. "callgrind.out.123"; NULL: the profile's path */
	const struct flamegraph_base *base;   /* --diff: colour each function by the change of
	                                its self cost from BASE (red more, blue less); NULL: by kind */
	const struct profile *now;   /* --diff: the self costs compared with BASE's, matched to
	                                the frames' functions by name (a scoped profile: the
	                                costs under a focus); NULL: the profile drawn */
	unsigned now_event;          /* the event in NOW */
	const char *scope;           /* a line on what the graph is cut to (a focus, JIT code
	                                only), or NULL */
};

/* Writes G's frames as SVG to OUT (UTF-8; bytes of names that are not UTF-8 are written
 * as U+FFFD). Returns 0, or -1 with D set (a failed write; OUT is not finished or
 * aborted here). */
int flamegraph_svg_write(struct flamegraph *g, const struct flamegraph_svg_opts *o,
			 struct output *out, struct diag *d);

#endif
