/* timeline_text.c - `cgjit timeline`'s text: the timeline document (timeline.c) as
 * aligned columns and '#' bars on the log scale, one section per list of the document.
 * Reads only the jansson tree, so the text says nothing the JSON does not; owns nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/doc_out.h"
#include "report/timeline.h"
#include "report/timeline_text.h"

/* A bar of up to WIDTH '#' for V on the log scale up to MAX: start-up's burst and a few
 * late loads both stay visible; any V > 0 gets at least one. */
static void bar(FILE *f, uint64_t v, uint64_t max, int width)
{
	int n = v == 0 ? 0 : 1 + (int)((width - 1) * timeline_log_scale(v, max));
	for (int i = 0; i < n; i++)
		fputc('#', f);
}

static int is_auditlog(const json_t *doc)
{
	return !strcmp(doc_get_str(doc, "source"), "auditlog");
}

static void render_head(const json_t *doc, FILE *f)
{
	char a[48], b[48], c[32], e[32];
	const json_t *late = json_object_get(doc, "late");
	uint64_t loads = doc_get_u64(doc, "loads");
	if (is_auditlog(doc))
		fprintf(f, "%s: RaptorJIT auditlog, %s traces compiled (%s bytes of machine code), %" PRIu64
			" aborted, %" PRIu64 " flushes over %s\n", doc_get_str(doc, "dump"), doc_commas(c, loads),
			doc_commas(e, doc_get_u64(doc, "bytes")), doc_get_u64(json_object_get(doc, "aborts"), "count"),
			doc_get_u64(doc, "closes"), timeline_time(a, doc, doc_get_u64(doc, "span")));
	else
		fprintf(f, "%s: pid %" PRIu64 ", %s code loads (%s bytes), %" PRIu64 " moves over %s\n",
			doc_get_str(doc, "dump"), doc_get_u64(doc, "pid"), doc_commas(c, loads),
			doc_commas(e, doc_get_u64(doc, "bytes")), doc_get_u64(doc, "moves"),
			timeline_time(a, doc, doc_get_u64(doc, "span")));
	if (is_auditlog(doc))
		fputs("clock: CLOCK_MONOTONIC nanoseconds (the events' nanotime); times from the first event; "
		      "a trace's load is its trace_stop\n", f);
	else if (!strcmp(doc_get_str(doc, "clock"), "arch"))
		fputs("clock: CPU counter ticks (header flag JITDUMP_FLAGS_ARCH_TIMESTAMP); times from the first record\n", f);
	else
		fputs("clock: CLOCK_MONOTONIC nanoseconds (no JITDUMP_FLAGS_ARCH_TIMESTAMP); times from the first record\n", f);
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(doc, "notes"), i, v)
		fprintf(f, "note: %s\n", json_string_value(v));
	uint64_t nl = doc_get_u64(late, "loads");
	fprintf(f, "warm-up: %s%s = %s; after it: %s loads (%.1f%%) of %" PRIu64 " functions, %s bytes\n",
		doc_get_str(late, "warmup"), strchr(doc_get_str(late, "warmup"), '%') ? " of the span" : "",
		timeline_time(b, doc, doc_get_u64(late, "after")), doc_commas(c, nl),
		loads ? 100.0 * (double)nl / (double)loads : 0.0, doc_get_u64(late, "functions"),
		doc_commas(e, doc_get_u64(late, "bytes")));
	if (doc_get_u64(doc, "bad_loads") || doc_get_u64(doc, "bad_moves"))
		fprintf(f, "malformed records: %" PRIu64 " loads, %" PRIu64 " moves (counted, without size or name)\n",
			doc_get_u64(doc, "bad_loads"), doc_get_u64(doc, "bad_moves"));
	if (doc_get_u64(doc, "out_of_order"))
		fprintf(f, "note: %" PRIu64 " records have an earlier timestamp than the record before them\n",
			doc_get_u64(doc, "out_of_order"));
	if (doc_get_u64(doc, "truncated_bytes"))
		fprintf(f, "warning: the last %" PRIu64 " bytes are a record cut off (%s)\n",
			doc_get_u64(doc, "truncated_bytes"), is_auditlog(doc)
			? "the process died before the log was flushed?" : "dump copied while the JIT was writing?");
}

static void render_buckets(const json_t *doc, FILE *f)
{
	const json_t *bk = json_object_get(doc, "buckets");
	size_t i;
	const json_t *b;
	uint64_t max = 0;
	json_array_foreach(bk, i, b)
		max = doc_get_u64(b, "loads") > max ? doc_get_u64(b, "loads") : max;
	int al = is_auditlog(doc);   /* aborts instead of moves, which a log has none of */
	const char *what = al ? "aborts" : "moves";
	fprintf(f, "\nCode loaded over time (%zu buckets; bars: loads, log scale)\n", json_array_size(bk));
	fprintf(f, "%14s %14s %9s %13s %7s\n", "from", "to", "loads", "bytes", what);
	json_array_foreach(bk, i, b) {
		char x[48], y[48], l[32], by[32];
		fprintf(f, "%14s %14s %9s %13s %7" PRIu64 "  ", timeline_time(x, doc, doc_get_u64(b, "start")),
			timeline_time(y, doc, doc_get_u64(b, "end")), doc_commas(l, doc_get_u64(b, "loads")),
			doc_commas(by, doc_get_u64(b, "bytes")), doc_get_u64(b, what));
		bar(f, doc_get_u64(b, "loads"), max, 30);
		fputc('\n', f);
	}
}

static void render_late(const json_t *doc, FILE *f)
{
	const json_t *late = json_object_get(doc, "late"), *list = json_object_get(late, "list");
	char a[48];
	size_t i, n = json_array_size(list);
	uint64_t all = doc_get_u64(late, "loads");
	fprintf(f, "\nLate loads (after %s): ", timeline_time(a, doc, doc_get_u64(late, "after")));
	if (all == 0) {
		fputs("none\n", f);
		return;
	}
	if (n < all)
		fprintf(f, "the last %zu of %" PRIu64 " (--top)\n", n, all);
	else
		fprintf(f, "%" PRIu64 "\n", all);
	fprintf(f, "%14s %9s  %s\n", "time", "size", "name");
	const json_t *e;
	json_array_foreach(list, i, e) {
		char s[32];
		fprintf(f, "%14s %9s  %s\n", timeline_time(a, doc, doc_get_u64(e, "time")),
			doc_commas(s, doc_get_u64(e, "size")), doc_get_str(e, "name"));
	}
}

static void render_recompiled(const json_t *doc, FILE *f)
{
	const json_t *r = json_object_get(doc, "recompiled"), *list = json_object_get(r, "list");
	uint64_t all = doc_get_u64(r, "functions");
	fprintf(f, "\nRecompiled (the same name loaded again): ");
	if (all == 0) {
		fputs("none\n", f);
		return;
	}
	uint64_t extra = doc_get_u64(r, "extra_loads");
	fprintf(f, "%" PRIu64 " function%s, %" PRIu64 " extra load%s", all, all == 1 ? "" : "s", extra,
		extra == 1 ? "" : "s");
	if (json_array_size(list) < all)
		fprintf(f, "; the top %zu", json_array_size(list));
	fprintf(f, "\n%7s  %-40s  %s\n", "loads", "at", "name");
	size_t i;
	const json_t *e;
	json_array_foreach(list, i, e) {
		char at[48 * 3 + 8] = "", t[48];
		const json_t *times = json_object_get(e, "times");
		for (size_t k = 0; k < json_array_size(times) && k < 3; k++) {
			timeline_time(t, doc, (uint64_t)json_integer_value(json_array_get(times, k)));
			snprintf(at + strlen(at), sizeof(at) - strlen(at), "%s%s", k ? ", " : "", t);
		}
		if (json_array_size(times) > 3)
			snprintf(at + strlen(at), sizeof(at) - strlen(at), ", ...");
		fprintf(f, "%7" PRIu64 "  %-40s  %s\n", doc_get_u64(e, "loads"), at, doc_get_str(e, "name"));
	}
}

static void render_moved(const json_t *doc, FILE *f)
{
	const json_t *m = json_object_get(doc, "moved"), *list = json_object_get(m, "list");
	uint64_t all = doc_get_u64(m, "functions");
	fprintf(f, "\nMoved (CODE_MOVE): ");
	if (doc_get_u64(doc, "moves") == 0) {
		fputs("none\n", f);
		return;
	}
	fprintf(f, "%" PRIu64 " moves of %" PRIu64 " functions", doc_get_u64(doc, "moves"), all);
	if (json_array_size(list) < all)
		fprintf(f, "; the top %zu", json_array_size(list));
	fprintf(f, "\n%7s  %s\n", "moves", "name");
	size_t i;
	const json_t *e;
	json_array_foreach(list, i, e)
		fprintf(f, "%7" PRIu64 "  %s\n", doc_get_u64(e, "moves"), doc_get_str(e, "name"));
}

/* An auditlog's aborted recordings, where each started and RaptorJIT's error number. */
static void render_aborts(const json_t *doc, FILE *f)
{
	const json_t *ab = json_object_get(doc, "aborts"), *list = json_object_get(ab, "list");
	uint64_t all = doc_get_u64(ab, "count");
	fprintf(f, "\nAborted recordings: ");
	if (all == 0) {
		fputs("none\n", f);
		return;
	}
	if (json_array_size(list) < all)
		fprintf(f, "the last %zu of %" PRIu64 " (--top)\n", json_array_size(list), all);
	else
		fprintf(f, "%" PRIu64 "\n", all);
	fprintf(f, "%14s %10s  %s\n", "time", "TraceError", "where (the number the trace would have had)");
	size_t i;
	const json_t *e;
	json_array_foreach(list, i, e) {
		char a[48], err[24] = "?";
		if (json_is_integer(json_object_get(e, "error")))
			snprintf(err, sizeof(err), "%" PRIu64, doc_get_u64(e, "error"));
		fprintf(f, "%14s %10s  %s\n", timeline_time(a, doc, doc_get_u64(e, "time")), err,
			doc_get_str(e, "name"));
	}
}

void timeline_text_render(const json_t *doc, FILE *f)
{
	render_head(doc, f);
	render_buckets(doc, f);
	render_late(doc, f);
	render_recompiled(doc, f);
	if (is_auditlog(doc))
		render_aborts(doc, f);
	else
		render_moved(doc, f);
}
