/* prof_report.h - `cgjit report`: a profile's totals and top functions as one document
 * (docs/reports.md gives its JSON schema, "cgjit.report/1"), rendered as text or Markdown
 * here and as JSON or YAML by doc_out.c. */
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

/* One function's entry as the report, the diff and the check write it: name, object (the
 * file name without its directory), file, flags. */
json_t *prof_report_fn_ident(const struct profile *p, size_t fn);

#endif
