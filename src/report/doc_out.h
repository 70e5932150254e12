/* doc_out.h - the report commands' results are one JSON tree each (jansson); this module
 * writes such a tree as JSON or YAML, and gives the text and Markdown renderers their
 * shared pieces. One tree for every format, so that every format shows the same numbers. */
#ifndef CGJIT_DOC_OUT_H
#define CGJIT_DOC_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

enum doc_format { DOC_TEXT, DOC_JSON, DOC_MARKDOWN, DOC_YAML };

/* "text", "json", "markdown" (or "md"), "yaml". Returns 0, or -1 for another name. */
int doc_format_parse(const char *s, enum doc_format *out);

/* DOC as indented JSON, or as a YAML document with the same structure (block style,
 * keys in the tree's order). Returns 0, or -1 if writing failed. */
int doc_write_json(const json_t *doc, FILE *f);
int doc_write_yaml(const json_t *doc, FILE *f);

/* LEN bytes of S as valid UTF-8 without control characters: each byte that is not part of
 * a well-formed UTF-8 character, and each control character, becomes the four characters
 * \xNN. jansson refuses strings that are not UTF-8 (json_string returns NULL), and names
 * from profiles, dumps and argv are any bytes. Returns a malloc'd string. */
char *doc_clean_utf8(const char *s, size_t len);
/* A JSON string of S through doc_clean_utf8(). New reference. */
json_t *doc_string(const char *s);

/* json_object_set_new with KEY through doc_clean_utf8() (event names are any bytes). */
void doc_set_key(json_t *obj, const char *key, json_t *v);

/* json_integer for a cost (callgrind costs fit in 63 bits: the readers check sums). */
json_t *doc_u64(uint64_t v);
uint64_t doc_get_u64(const json_t *obj, const char *key);
double doc_get_real(const json_t *obj, const char *key);
const char *doc_get_str(const json_t *obj, const char *key);

/* V with thousands separators ("1,234,567") into BUF (at least 32 bytes). */
const char *doc_commas(char *buf, uint64_t v);
/* Signed: "+1,234" / "-1,234" / "0". */
const char *doc_commas_signed(char *buf, int64_t v);
/* A cost of an event whose unit DOC names (its "units" object, as prof_report_units()
 * makes it: Xdebug's Time_(10ns), Memory_(bytes); pprof's cpu(ms)), for people: a time in
 * the unit that suits it ("4.838 ms", "1.460 s"), bytes as "58,016 B"; any other event, or
 * an unknown unit, with thousands separators as doc_commas(). Into BUF (at least 48 bytes). */
const char *doc_cost(char *buf, uint64_t v, const json_t *doc, const char *event);
/* A cost that a document holds as the JSON integer V (negative in a profile of cg_diff's:
 * "-1,000"), as doc_cost() shows it. */
const char *doc_cost_json(char *buf, const json_t *v, const json_t *doc, const char *event);
/* The same, signed ("+1.200 ms", "-58,016 B", "0"), for changes. */
const char *doc_cost_signed(char *buf, int64_t v, const json_t *doc, const char *event);
/* SHARE (a fraction) in percent with two decimals: 0.1234 -> "12.34%". */
const char *doc_percent(char *buf, double share);

/* A name for a Markdown table cell: "|" escaped, backquotes kept apart, newlines as spaces. */
void doc_md_cell(FILE *f, const char *s);
/* S as Markdown text (a sentence, not code): the characters that GitHub's Markdown would
 * take for markup backslash-escaped, newlines as spaces. */
void doc_md_text(FILE *f, const char *s);

#endif
