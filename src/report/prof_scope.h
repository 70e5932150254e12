/* prof_scope.h - the part of a profile a report command looks at (docs/reports.md
 * section 2.1): the functions a selector names (matched as budget files match them), the
 * costs under a focus (the flame graph's model, flamegraph_scope()), JIT code only; and
 * the names close to a selector that matches nothing. A scoped profile is a struct profile
 * whose costs and totals are those of the scope, so report, diff and check read it as
 * they read a whole profile. */
#ifndef CGJIT_PROF_SCOPE_H
#define CGJIT_PROF_SCOPE_H

#include <stddef.h>
#include <jansson.h>

struct diag;
struct prof_fn;
struct profile;

/* Functions by name: exactly one of NAME and GLOB, the others optional. The strings are
 * the caller's. */
struct prof_select {
	const char *name;     /* the exact name */
	const char *glob;     /* an fnmatch(3) pattern on the name ('*' also matches '/') */
	const char *object;   /* a pattern on the object file's name, without its directory */
	const char *file;     /* a pattern on the function's file */
};

/* 1 if function FN of P is one of the functions S names, else 0. */
int prof_select_match(const struct prof_select *s, const struct profile *p, size_t fn);
/* How many functions of P S names. */
size_t prof_select_count(const struct profile *p, const struct prof_select *s);
/* The names in P closest to S's name, or to the longest literal run of its pattern, for a
 * selector that matches nothing (a budget's `name: bubbleSort` against V8's
 * `JS:*bubbleSort /x.js:3:20`): contained in the name, ignoring case, or within a few
 * edits of a part of it. Writes at most MAX function indices to OUT, the closest first (then
 * JIT functions, then the larger self cost of the first event). Returns how many. */
size_t prof_select_suggest(const struct profile *p, const struct prof_select *s, size_t *out,
			   size_t max);
/* "did you mean 'A' or 'B'?" for the suggestions, in a malloc'd string, or NULL if there
 * are none. */
char *prof_select_hint(const struct profile *p, const struct prof_select *s);
/* S as the documents write a selector: {"match", "pattern", "object", "file"}. New
 * reference. */
json_t *prof_select_json(const struct prof_select *s);

struct prof_scope_opts {
	const struct prof_select *focus;   /* NULL: the whole profile */
	int jit_only;                      /* list and match JIT functions only */
};

/* Makes OUT, P seen through O. Under a focus every function of every event gets its cost
 * under the focus (self and inclusive; calls estimated with event EV), the functions with
 * none are left out, and the totals are the focus's; P's totals are kept in
 * OUT->scope->profile_totals. Returns 0, or -1 with D set: the focus names no function of
 * P (the message names P, the selector and the closest names), or P is a cachegrind file
 * (no calls, so no focus). OUT must be freed (profile_free) either way. */
int prof_scope_make(const struct profile *p, const struct prof_scope_opts *o, unsigned ev,
		    struct profile *out, struct diag *d);

#endif
