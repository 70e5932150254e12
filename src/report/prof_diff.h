/* prof_diff.h - `cgjit diff`: the change of every function's self and inclusive cost
 * between two profiles, as one document ("cgjit.diff/2", docs/reports.md). */
#ifndef CGJIT_PROF_DIFF_H
#define CGJIT_PROF_DIFF_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

struct diag;
struct profile;

/* Compares event EVENT (NULL: BASE's first, and then both must count the same events) of
 * BASE and NEW. Functions match by (object file name without its directory, file, name).
 * Lists the TOP largest changes of self cost (then of inclusive cost) among those that
 * changed by at least THRESHOLD percent of BASE's total. Returns a new reference, or NULL
 * with D set (events that differ, an event one of them does not count). */
json_t *prof_diff_build(const struct profile *base, const struct profile *new_,
			const char *event, size_t top, double threshold, struct diag *d);
void prof_diff_render(const json_t *doc, FILE *f, int markdown);

/* What a comparison of P with BASE should be told (a JSON array of strings, new
 * reference): that they ran different commands (their cmd: lines differ). */
json_t *prof_diff_warnings(const struct profile *base, const struct profile *p);
/* DOC's "warnings", one line each (MARKDOWN: a quoted paragraph each). */
void prof_diff_render_warnings(const json_t *doc, FILE *f, int markdown);

#endif
