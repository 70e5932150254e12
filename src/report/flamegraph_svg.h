/* flamegraph_svg.h - a flame graph as one self-contained interactive SVG file: frames as
 * nested groups with their cost in data attributes, a tooltip per frame, and a small inline
 * script for details on hover and zoom on click (docs/flamegraph.md). */
#ifndef CGJIT_FLAMEGRAPH_SVG_H
#define CGJIT_FLAMEGRAPH_SVG_H

struct diag;
struct flamegraph;
struct output;
struct profile;

struct flamegraph_svg_opts {
	const char *title;           /* the heading, e.g. "callgrind.out.123"; NULL: the profile's path */
	const struct profile *base;  /* --diff: colour each function by the change of its self
	                                cost from BASE (red more, blue less); NULL: by kind */
	unsigned base_event;         /* the same event in BASE */
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
