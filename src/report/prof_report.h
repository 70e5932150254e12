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
 * one function's identity (name, object: the file name without its directory, file, kind,
 * jit), ... */
json_t *prof_report_fn_ident(const struct profile *p, size_t fn);
/* ... P's totals, {"EVENT": cost, ...}, ... */
json_t *prof_report_totals(const struct profile *p);
/* ... a cost of P as a JSON integer: signed where P has negative counts (struct profile
 * negative), else unsigned (doc_u64()), ... */
json_t *prof_report_cost(const struct profile *p, uint64_t v);
/* ... the unit each event names in parentheses at its end, {"Time_(10ns)": "10ns",
 * "cpu(ms)": "ms"} (Xdebug's and pprof's; callgrind's events name none: {}), ... */
json_t *prof_report_units(const struct profile *p);
/* ... and the scope P's costs are taken in ("focus", "jit_only", "fold_recursion"). */
json_t *prof_report_scope(const struct profile *p);
/* Appends to NOTES what a scoped P's numbers mean (an estimate from arcs, several focus
 * functions added up). */
void prof_report_scope_notes(const struct profile *p, json_t *notes);
/* The "focus" and "scope" lines of DOC's header (text, or MARKDOWN), when it has a scope. */
void prof_report_render_scope(const json_t *doc, FILE *f, int markdown);

/* The note of every document about costs under a focus. */
/* The note of every document about a profile without totals: or summary: lines. */
#define PROF_REPORT_NOTE_CALCULATED "the file gives no totals: or summary: line (go tool pprof " \
	"writes none): its totals are the sum of its cost lines, calculated, as callgrind_annotate's " \
	"\"PROGRAM TOTALS (calculated)\""

#define PROF_REPORT_NOTE_FOCUS "costs under a focus are estimated from call arcs: callgrind " \
	"records who called whom and at what cost, not whole stacks, so a function called from " \
	"inside and outside the focus is shared in proportion to those calls' cost " \
	"(docs/reports.md section 2.1); recorded with --separate-callers=N, exact to N callers"

#endif
