/* prof_report.h - `cgjit report`: a profile's totals and top functions as one document
 * (docs/reports.md gives its JSON schema, "cgjit.report/2", one of the family that diff and
 * check share), rendered as text or Markdown here and as JSON or YAML by doc_out.c. */
#ifndef CGJIT_PROF_REPORT_H
#define CGJIT_PROF_REPORT_H

#include <stdio.h>
#include <jansson.h>

struct profile;

/* The document for P: totals of every event, the JIT and unknown shares, and the TOP
 * functions by self and by inclusive cost of event EVENT (an index). New reference. */
json_t *prof_report_build(const struct profile *p, unsigned event, size_t top);
/* DOC as an aligned text report (MARKDOWN 0) or GitHub Markdown (1). */
void prof_report_render(const json_t *doc, FILE *f, int markdown);

/* The pieces every document of the family writes alike (new references):
 * one function's identity (name, object, file, kind, jit), ... */
json_t *prof_report_fn_ident(const struct profile *p, size_t fn);
/* ... P's totals, {"EVENT": cost, ...}, ... */
json_t *prof_report_totals(const struct profile *p);
/* ... and the scope P's costs are taken in ("focus", "jit_only"). */
json_t *prof_report_scope(const struct profile *p);

#endif
