/* prof_check.h - `cgjit check`: a budget file's limits applied to a profile (and a baseline
 * profile for soft limits), as one document ("cgjit.check/1", docs/reports.md section 4). */
#ifndef CGJIT_PROF_CHECK_H
#define CGJIT_PROF_CHECK_H

#include <stdio.h>
#include <jansson.h>

struct budget;
struct diag;
struct prof_scope_opts;
struct profile;

/* Every limit of B measured on P, with its verdict; soft limits against BASE (NULL: they are
 * skipped). A limit on a glob gives one result per function it matches. A limit is measured
 * under its focus (its own, else SCOPE's, else the file's: docs/reports.md section 4), and
 * with SCOPE->jit_only on JIT functions only (SCOPE may be NULL). Returns a new reference,
 * or NULL with D set: *BAD_BUDGET is 1 when the budget does not fit P (an event P does not
 * count, inclusive cost or a focus on a cachegrind file; the message points into the
 * budget file), 0 when BASE does not count an event the budget uses. */
json_t *prof_check_build(const struct budget *b, const struct profile *p, const struct profile *base,
			 const struct prof_scope_opts *scope, int *bad_budget, struct diag *d);
/* 1 if DOC says every limit held (nothing exceeded, no required function missing). */
int prof_check_passed(const json_t *doc);
/* DOC as aligned text (MARKDOWN 0) or a GitHub Markdown table (1). */
void prof_check_render(const json_t *doc, FILE *f, int markdown);

#endif
