/* timeline.c - `cgjit timeline`: jitdump records (jitdump_walk.c) -> per-load arrays ->
 * buckets, late loads, recompilations and moves as one jansson document, which
 * timeline_text.c and timeline_svg.c render; and the units they show it in. The time span is known only at the end, so the file is read once and each
 * load kept compactly (time, code size, name id: 20 bytes; a move 12) instead of reading
 * it twice: a dump may be stdin or zstd. Every load record is at least 57 bytes, so this
 * stays below the dump's own size (about 40 bytes a load with the name table). Names are
 * interned once (strtab.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/auditlog.h"
#include "jit/jitdump_walk.h"
#include "report/doc_out.h"
#include "report/timeline.h"

enum { NO_NAME = UINT32_MAX };

struct tl {
	struct jitdump_walk *w;
	struct jitdump_header h;
	struct strtab names;      /* raw names; id = order of first appearance */
	struct idmap by_index;    /* code_index -> name id of the last load with it */
	uint64_t *load_ts, *load_size;
	uint32_t *load_name;
	size_t nloads, cap_ts, cap_size, cap_name;
	uint64_t *move_ts;
	uint32_t *move_name;
	size_t nmoves, cap_mts, cap_mname;
	uint64_t *abort_ts, *abort_err;
	uint32_t *abort_where;    /* name id of "TRACE_N::CHUNK:LINE" */
	size_t naborts, cap_ats, cap_aerr, cap_awhere;
	uint64_t first, last, prev;   /* smallest, largest, previous timestamp */
	uint64_t records, bytes, closes, bad_loads, bad_moves, out_of_order, other;
	int auditlog;             /* the input is a RaptorJIT auditlog, not a jitdump */
	uint64_t truncated;       /* bytes of a record cut off at the end */
};

void timeline_opts_init(struct timeline_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->warmup_is_pct = 1;
	o->warmup_pct = TIMELINE_DEFAULT_WARMUP_PCT;
	o->buckets = TIMELINE_DEFAULT_BUCKETS;
	o->top = 20;
}

/* floor(A * B / C) and its ceiling, C > 0; exact (128-bit product), and below 2^64 where
 * used here (B / C <= 1, or A / C <= 1). */
__extension__ typedef unsigned __int128 u128;
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((u128)a * b / c);
}

static uint64_t muldiv_ceil(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)(((u128)a * b + c - 1) / c);
}

static void add_load(struct tl *t, uint64_t ts, uint64_t size, uint32_t name)
{
	XGROW(t->load_ts, t->cap_ts, t->nloads + 1);
	XGROW(t->load_size, t->cap_size, t->nloads + 1);
	XGROW(t->load_name, t->cap_name, t->nloads + 1);
	t->load_ts[t->nloads] = ts;
	t->load_size[t->nloads] = size;
	t->load_name[t->nloads] = name;
	t->nloads++;
	t->bytes += size;
}

/* A malformed CODE_LOAD still happened at its time: counted, without bytes or name. */
static void on_load(struct tl *t, const struct jitdump_record *r)
{
	struct jitdump_load l;
	if (jitdump_walk_load(t->w, r, &l) < 0) {
		t->bad_loads++;
		add_load(t, r->timestamp, 0, NO_NAME);
		return;
	}
	uint32_t id = strtab_intern(&t->names, l.name, l.name_len, NULL);
	idmap_put(&t->by_index, l.index, id);
	add_load(t, r->timestamp, l.size, id);
}

/* The moved function is the last load with the move's code_index; a move of an index no
 * load had is named by the index. */
static void on_move(struct tl *t, const struct jitdump_record *r)
{
	struct jitdump_move m;
	uint32_t id = NO_NAME;
	if (jitdump_walk_move(t->w, r, &m) < 0) {
		t->bad_moves++;
	} else {
		id = idmap_get(&t->by_index, m.index);
		if (id == UINT32_MAX) {
			char buf[48];
			int n = snprintf(buf, sizeof(buf), "(code_index %" PRIu64 ")", m.index);
			id = strtab_intern(&t->names, buf, (size_t)n, NULL);
		}
	}
	XGROW(t->move_ts, t->cap_mts, t->nmoves + 1);
	XGROW(t->move_name, t->cap_mname, t->nmoves + 1);
	t->move_ts[t->nmoves] = r->timestamp;
	t->move_name[t->nmoves] = id;
	t->nmoves++;
}

static void note_time(struct tl *t, uint64_t ts)
{
	if (t->records == 0) {
		t->first = t->last = ts;
	} else {
		t->first = ts < t->first ? ts : t->first;
		t->last = ts > t->last ? ts : t->last;
		t->out_of_order += ts < t->prev;
	}
	t->prev = ts;
	t->records++;
}

/* --- a RaptorJIT auditlog (jit/auditlog.h): traces are the loads, flushes the closes --- */

static void al_event(void *ctx, uint64_t time)
{
	note_time(ctx, time);
}

static void al_trace(void *ctx, const struct auditlog_trace *tr)
{
	struct tl *t = ctx;
	add_load(t, tr->time, tr->size, strtab_intern(&t->names, tr->name, tr->name_len, NULL));
}

static void al_abort(void *ctx, const struct auditlog_abort *a)
{
	struct tl *t = ctx;
	char buf[1100];
	int n = snprintf(buf, sizeof(buf), "TRACE_%u::%s", a->traceno, a->where);
	XGROW(t->abort_ts, t->cap_ats, t->naborts + 1);
	XGROW(t->abort_err, t->cap_aerr, t->naborts + 1);
	XGROW(t->abort_where, t->cap_awhere, t->naborts + 1);
	t->abort_ts[t->naborts] = a->time;
	t->abort_err[t->naborts] = a->error;
	t->abort_where[t->naborts] = strtab_intern(&t->names, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, NULL);
	t->naborts++;
}

static void al_flush(void *ctx, uint64_t time)
{
	(void)time;
	((struct tl *)ctx)->closes++;
}

static int read_auditlog(struct tl *t, struct input *in, struct diag *d)
{
	struct auditlog_visitor v = { t, al_event, al_trace, al_abort, al_flush };
	struct auditlog_stats st;
	t->auditlog = 1;
	int rc = auditlog_read(in, &v, &st, d);
	t->truncated = st.truncated_bytes;
	return rc;
}

static int read_dump(struct tl *t, struct input *in, struct diag *d)
{
	unsigned char m[4];
	ssize_t got = input_peek(in, m, sizeof(m), d);
	if (got < 0)
		return -1;
	if (auditlog_is_log(m, (size_t)got))
		return read_auditlog(t, in, d);
	t->w = jitdump_walk_new(in, &t->h, d);
	if (!t->w)
		return -1;
	struct jitdump_record r;
	int rc;
	while ((rc = jitdump_walk_next(t->w, &r, d)) == 1) {
		note_time(t, r.timestamp);
		switch (r.id) {
		case JITDUMP_CODE_LOAD: on_load(t, &r); break;
		case JITDUMP_CODE_MOVE: on_move(t, &r); break;
		case JITDUMP_CODE_CLOSE: t->closes++; break;
		default: t->other++; break;   /* DEBUG_INFO, UNWINDING_INFO, unknown: times only */
		}
	}
	t->truncated = jitdump_walk_truncated(t->w);
	return rc;
}

static json_t *name_json(const struct tl *t, uint32_t id)
{
	if (id == NO_NAME)
		return json_string("(malformed record)");
	const struct strtab_entry *e = strtab_get(&t->names, id);
	char *clean = doc_clean_utf8(e->str, e->len);
	json_t *j = json_string(clean);
	free(clean);
	return j;
}

struct ctx {
	const struct tl *t;
	const struct timeline_opts *o;
	uint64_t span, after;
	unsigned nb;
};

static unsigned bucket_of(const struct ctx *c, uint64_t ts)
{
	if (c->span == 0)
		return 0;
	uint64_t b = muldiv(ts - c->t->first, c->nb, c->span);
	return b >= c->nb ? c->nb - 1 : (unsigned)b;
}

static json_t *buckets_json(const struct ctx *c)
{
	const struct tl *t = c->t;
	uint64_t *v = xcalloc(4 * (size_t)c->nb, sizeof(*v));   /* loads, bytes, moves, aborts */
	for (size_t i = 0; i < t->nloads; i++) {
		unsigned b = bucket_of(c, t->load_ts[i]);
		v[4 * b]++;
		v[4 * b + 1] += t->load_size[i];
	}
	for (size_t i = 0; i < t->nmoves; i++)
		v[4 * bucket_of(c, t->move_ts[i]) + 2]++;
	for (size_t i = 0; i < t->naborts; i++)
		v[4 * bucket_of(c, t->abort_ts[i]) + 3]++;
	json_t *a = json_array();
	for (unsigned b = 0; b < c->nb; b++) {
		json_t *o = json_object();
		/* bucket b holds start <= t < end, the last one also t = span */
		json_object_set_new(o, "start", doc_u64(muldiv_ceil(b, c->span, c->nb)));
		json_object_set_new(o, "end", doc_u64(b + 1 == c->nb ? c->span : muldiv_ceil(b + 1, c->span, c->nb)));
		json_object_set_new(o, "loads", doc_u64(v[4 * b]));
		json_object_set_new(o, "bytes", doc_u64(v[4 * b + 1]));
		json_object_set_new(o, "moves", doc_u64(v[4 * b + 2]));
		json_object_set_new(o, "aborts", doc_u64(v[4 * b + 3]));
		json_array_append_new(a, o);
	}
	free(v);
	return a;
}

struct late {
	uint64_t ts;
	size_t i;
};

static int cmp_late(const void *x, const void *y)
{
	const struct late *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The loads after the warm-up: counts, distinct names, and the last TOP in time order. */
static json_t *late_json(const struct ctx *c, const char *given)
{
	const struct tl *t = c->t;
	struct late *l = NULL;
	size_t n = 0, cap = 0, names = 0;
	uint64_t bytes = 0;
	unsigned char *seen = xcalloc(t->names.count + 1, 1);
	for (size_t i = 0; i < t->nloads; i++) {
		if (t->load_ts[i] - t->first <= c->after)
			continue;
		XGROW(l, cap, n + 1);
		l[n++] = (struct late){ t->load_ts[i], i };
		bytes += t->load_size[i];
		uint32_t id = t->load_name[i];
		if (id != NO_NAME && !seen[id]) {
			seen[id] = 1;
			names++;
		}
	}
	free(seen);
	if (n)   /* qsort(NULL, 0, ...) is undefined */
		qsort(l, n, sizeof(*l), cmp_late);
	json_t *o = json_object();
	json_object_set_new(o, "warmup", json_string(given));
	json_object_set_new(o, "after", doc_u64(c->after));
	json_object_set_new(o, "loads", doc_u64(n));
	json_object_set_new(o, "bytes", doc_u64(bytes));
	json_object_set_new(o, "functions", doc_u64(names));
	json_t *a = json_array();
	for (size_t k = n > c->o->top ? n - c->o->top : 0; k < n; k++) {
		json_t *e = json_object();
		json_object_set_new(e, "time", doc_u64(l[k].ts - t->first));
		json_object_set_new(e, "size", doc_u64(t->load_size[l[k].i]));
		json_object_set_new(e, "name", name_json(t, t->load_name[l[k].i]));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "list", a);
	free(l);
	return o;
}

/* a name id with its count: the sort key travels with it (no comparator context) */
struct counted {
	uint32_t count, id;
};

/* More first; ties by first appearance (the name id). */
static int cmp_count(const void *x, const void *y)
{
	const struct counted *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The ids with COUNT[id] >= MIN, most first, at most TOP of them into *OUT (malloc'd).
 * Returns how many ids qualify in all. */
static size_t top_ids(const uint32_t *count, size_t nnames, uint32_t min, size_t top, uint32_t **out,
		      size_t *nout)
{
	struct counted *v = xmalloc((nnames + 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < nnames; i++)
		if (count[i] >= min)
			v[n++] = (struct counted){ count[i], (uint32_t)i };
	qsort(v, n, sizeof(*v), cmp_count);
	uint32_t *ids = xmalloc((nnames + 1) * sizeof(*ids));
	for (size_t i = 0; i < n; i++)
		ids[i] = v[i].id;
	free(v);
	*out = ids;
	*nout = n < top ? n : top;
	return n;
}

static json_t *recompiled_json(const struct ctx *c)
{
	const struct tl *t = c->t;
	size_t nn = t->names.count;
	uint32_t *count = xcalloc(nn + 1, sizeof(*count));
	uint64_t extra = 0;
	for (size_t i = 0; i < t->nloads; i++)
		if (t->load_name[i] != NO_NAME && count[t->load_name[i]]++ > 0)
			extra++;
	uint32_t *ids;
	size_t shown, all = top_ids(count, nn, 2, c->o->top, &ids, &shown);
	json_t *o = json_object();
	json_object_set_new(o, "functions", doc_u64(all));
	json_object_set_new(o, "extra_loads", doc_u64(extra));
	/* slot[id]: the entry of a listed function, filled in one pass over the loads */
	uint32_t *slot = xmalloc((nn + 1) * sizeof(*slot));
	memset(slot, 0xff, (nn + 1) * sizeof(*slot));
	json_t *a = json_array(), **times = xcalloc(shown + 1, sizeof(*times));
	uint64_t *bytes = xcalloc(shown + 1, sizeof(*bytes));
	for (size_t k = 0; k < shown; k++) {
		slot[ids[k]] = (uint32_t)k;
		times[k] = json_array();
	}
	for (size_t i = 0; i < t->nloads; i++) {
		uint32_t id = t->load_name[i];
		if (id == NO_NAME || slot[id] == UINT32_MAX)
			continue;
		bytes[slot[id]] += t->load_size[i];
		if (json_array_size(times[slot[id]]) < TIMELINE_MAX_TIMES)
			json_array_append_new(times[slot[id]], doc_u64(t->load_ts[i] - t->first));
	}
	for (size_t k = 0; k < shown; k++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", name_json(t, ids[k]));
		json_object_set_new(e, "loads", doc_u64(count[ids[k]]));
		json_object_set_new(e, "bytes", doc_u64(bytes[k]));
		json_object_set_new(e, "times", times[k]);
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "list", a);
	free(times);
	free(bytes);
	free(slot);
	free(ids);
	free(count);
	return o;
}

static json_t *moved_json(const struct ctx *c)
{
	const struct tl *t = c->t;
	size_t nn = t->names.count;
	uint32_t *count = xcalloc(nn + 1, sizeof(*count));
	for (size_t i = 0; i < t->nmoves; i++)
		if (t->move_name[i] != NO_NAME && count[t->move_name[i]] < UINT32_MAX)
			count[t->move_name[i]]++;
	uint32_t *ids;
	size_t shown, all = top_ids(count, nn, 1, c->o->top, &ids, &shown);
	json_t *o = json_object();
	json_object_set_new(o, "functions", doc_u64(all));
	json_t *a = json_array();
	for (size_t k = 0; k < shown; k++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", name_json(t, ids[k]));
		json_object_set_new(e, "moves", doc_u64(count[ids[k]]));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "list", a);
	free(ids);
	free(count);
	return o;
}

/* The aborted recordings (an auditlog's; none in a jitdump), the last TOP in log order,
 * which is time order. */
static json_t *aborts_json(const struct ctx *c)
{
	const struct tl *t = c->t;
	json_t *o = json_object(), *a = json_array();
	json_object_set_new(o, "count", doc_u64(t->naborts));
	for (size_t k = t->naborts > c->o->top ? t->naborts - c->o->top : 0; k < t->naborts; k++) {
		json_t *e = json_object();
		json_object_set_new(e, "time", doc_u64(t->abort_ts[k] - t->first));
		json_object_set_new(e, "name", name_json(t, t->abort_where[k]));
		json_object_set_new(e, "error", t->abort_err[k] == UINT64_MAX ? json_null() : doc_u64(t->abort_err[k]));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "list", a);
	return o;
}

/* The warm-up point from the start, or -1 with D set: seconds need nanoseconds. */
static int warmup_after(struct ctx *c, const char *path, char *given, size_t gn, struct diag *d)
{
	const struct timeline_opts *o = c->o;
	if (o->warmup_is_pct) {
		c->after = (uint64_t)((long double)c->span * o->warmup_pct / 100.0L);   /* rounded down */
		c->after = c->after > c->span ? c->span : c->after;
		snprintf(given, gn, "%g%%", o->warmup_pct);
		return 0;
	}
	if (c->t->h.flags & JITDUMP_FLAGS_ARCH_TIMESTAMP)
		return diag_at(d, path, 0, "the timestamps are CPU counter ticks (header flag "
			       "JITDUMP_FLAGS_ARCH_TIMESTAMP), not nanoseconds: give --warmup as a "
			       "percentage of the span, e.g. --warmup 10%%");
	c->after = o->warmup_ns;
	snprintf(given, gn, "%.9g s", (double)o->warmup_ns / 1e9);
	return 0;
}

static json_t *build_doc(const struct tl *t, const struct timeline_opts *o, const char *path,
			 struct diag *d)
{
	struct ctx c = { .t = t, .o = o, .nb = o->buckets };
	c.span = t->records ? t->last - t->first : 0;
	char given[64];
	if (warmup_after(&c, path, given, sizeof(given), d) < 0)
		return NULL;
	int arch = (t->h.flags & JITDUMP_FLAGS_ARCH_TIMESTAMP) != 0;
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string("cgjit.timeline/1"));
	json_object_set_new(doc, "source", json_string(t->auditlog ? "auditlog" : "jitdump"));
	char *clean = doc_clean_utf8(path, strlen(path));   /* argv: any bytes */
	json_object_set_new(doc, "dump", json_string(clean));
	free(clean);
	json_object_set_new(doc, "pid", doc_u64(t->h.pid));
	json_object_set_new(doc, "clock", json_string(arch ? "arch" : "monotonic"));
	json_object_set_new(doc, "unit", json_string(arch ? "ticks" : "ns"));
	json_object_set_new(doc, "start", doc_u64(t->records ? t->first : 0));
	json_object_set_new(doc, "span", doc_u64(c.span));
	json_object_set_new(doc, "records", doc_u64(t->records));
	json_object_set_new(doc, "loads", doc_u64(t->nloads));
	json_object_set_new(doc, "bytes", doc_u64(t->bytes));
	json_object_set_new(doc, "moves", doc_u64(t->nmoves));
	json_object_set_new(doc, "closes", doc_u64(t->closes));
	json_object_set_new(doc, "bad_loads", doc_u64(t->bad_loads));
	json_object_set_new(doc, "bad_moves", doc_u64(t->bad_moves));
	json_object_set_new(doc, "out_of_order", doc_u64(t->out_of_order));
	json_object_set_new(doc, "truncated_bytes", doc_u64(t->truncated));
	/* the dump does not say whether its run was under valgrind, and a timeline read
	 * without that in mind takes valgrind's slowdown for the JIT's (docs/timeline.md) */
	json_object_set_new(doc, "valgrind_profile", json_null());
	json_t *notes = json_array();
	json_array_append_new(notes, json_string(TIMELINE_NOTE_VALGRIND));
	json_object_set_new(doc, "notes", notes);
	json_object_set_new(doc, "buckets", buckets_json(&c));
	json_object_set_new(doc, "late", late_json(&c, given));
	json_object_set_new(doc, "recompiled", recompiled_json(&c));
	json_object_set_new(doc, "moved", moved_json(&c));
	json_object_set_new(doc, "aborts", aborts_json(&c));
	return doc;
}

json_t *timeline_build(struct input *in, const struct timeline_opts *o, struct diag *d)
{
	struct tl t;
	memset(&t, 0, sizeof(t));
	strtab_init(&t.names);
	idmap_init(&t.by_index);
	json_t *doc = NULL;
	if (read_dump(&t, in, d) == 0)
		doc = build_doc(&t, o, input_name(in), d);
	jitdump_walk_free(t.w);
	strtab_free(&t.names);
	idmap_free(&t.by_index);
	free(t.load_ts);
	free(t.load_size);
	free(t.load_name);
	free(t.move_ts);
	free(t.move_name);
	free(t.abort_ts);
	free(t.abort_err);
	free(t.abort_where);
	return doc;
}

void timeline_set_valgrind_profile(json_t *doc, const char *path)
{
	char *clean = doc_clean_utf8(path, strlen(path));
	json_object_set_new(doc, "valgrind_profile", json_string(clean));
	json_array_append_new(json_object_get(doc, "notes"),
			      json_pack("s++", "this run was under valgrind: its callgrind profile ", clean,
					" is beside the dump"));
	free(clean);
}

/* --- the document's units, shared by the text and the SVG --- */

const char *timeline_time(char *buf, const json_t *doc, uint64_t t)
{
	if (strcmp(doc_get_str(doc, "unit"), "ns") != 0) {
		char n[32];
		snprintf(buf, 48, "%s ticks", doc_commas(n, t));
		return buf;
	}
	/* one scale per document, chosen by its span, so that columns line up */
	uint64_t span = doc_get_u64(doc, "span");
	if (span >= 1000000000u)
		snprintf(buf, 48, "%.3f s", (double)t / 1e9);
	else if (span >= 1000000u)
		snprintf(buf, 48, "%.3f ms", (double)t / 1e6);
	else
		snprintf(buf, 48, "%.3f us", (double)t / 1e3);
	return buf;
}

/* log2(1 + V), piecewise linear between powers of two (no libm needed; exact at them). */
static double log2_1p(uint64_t v)
{
	uint64_t x = v + (v < UINT64_MAX);
	int e = 63 - __builtin_clzll(x);
	return e + ((double)x / (double)(1ull << e) - 1.0);
}

double timeline_log_scale(uint64_t v, uint64_t max)
{
	if (v == 0 || max == 0)
		return 0.0;
	double r = log2_1p(v) / log2_1p(max);
	return r > 1.0 ? 1.0 : r;
}
