/* profile_read.c - profile_load(): a callgrind file through callgrind_reader.c, or a
 * cachegrind file through the small parser below, into a profile builder (profile.c).
 * The input is opened once; its first bytes tell the two formats apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/scan.h"
#include "core/xalloc.h"
#include "report/profile.h"

struct cg_load {
	struct profile *p;
	const struct profile_opts *o;
	struct profile_builder *b;
	uint32_t *map;           /* the part's function index -> profile function */
	size_t map_cap;
	unsigned part;           /* the part being read, from 1 */
	int want;                /* this part is summed */
	char *first_events;      /* the first summed part's events, joined, for comparison */
	int given, summarised;   /* the part being read has a totals: line; a summary: line */
	int summary_missing;     /* a summed part has no summary: line */
};

/* At the end of a part: what callgrind_annotate prints as its total follows from the
 * lines the summed parts give (profile.h, totals_calculated and summary). */
static void part_end(struct cg_load *L)
{
	if (!L->want || !L->b)
		return;
	if (!L->given && !L->summarised)
		L->p->totals_calculated = 1;
	if (!L->summarised)
		L->summary_missing = 1;
	L->given = L->summarised = 0;
}

/* Adds a part's summary: to the profile's. Returns 0, or -1 with D set when the sum over
 * the parts passes 2^64. */
static int part_summary(struct cg_load *L, const struct cg_reader *r, const uint64_t *v, struct diag *d)
{
	struct profile *p = L->p;
	if (!L->want || !L->b || !v)
		return 0;
	if (!p->summary)
		p->summary = xcalloc(cg_reader_nevents(r), sizeof(*p->summary));
	for (unsigned e = 0; e < cg_reader_nevents(r) && e < p->nevents; e++)
		if (__builtin_add_overflow(p->summary[e], v[e], &p->summary[e]))
			return diag_at(d, p->path, 0, "the parts' summary: lines add up past 2^64 for event %s",
				       p->events[e]);
	L->summarised = 1;
	return 0;
}

static char *join_events(const struct cg_reader *r)
{
	size_t n = 1;
	for (unsigned i = 0; i < cg_reader_nevents(r); i++)
		n += strlen(cg_reader_event_name(r, i)) + 1;
	char *s = xmalloc(n), *p = s;
	for (unsigned i = 0; i < cg_reader_nevents(r); i++)
		p += sprintf(p, "%s%s", i ? " " : "", cg_reader_event_name(r, i));
	*p = '\0';
	return s;
}

/* At a part's events: line: the builder is made by the first part summed; every later
 * one must count the same events in the same order. */
static int part_events(struct cg_load *L, struct cg_reader *r, struct diag *d)
{
	char *ev = join_events(r);
	if (!L->b) {
		const char *names[CG_MAX_EVENTS];
		for (unsigned i = 0; i < cg_reader_nevents(r); i++)
			names[i] = cg_reader_event_name(r, i);
		L->b = profile_builder_new(L->p, cg_reader_nevents(r), names);
		profile_builder_fold(L->b, L->o->fold_recursion);
		profile_builder_paths(L->b, L->o->paths);
		L->first_events = ev;
		return 0;
	}
	int same = !strcmp(ev, L->first_events);
	if (!same)
		diag_at(d, L->p->path, 0, "part %u counts the events '%s', but an earlier part "
			"counts '%s': parts with other events cannot be summed (use --part N)",
			L->part, ev, L->first_events);
	free(ev);
	return same ? 0 : -1;
}

/* Two indices defined with one (name, object, file) become one profile function: the
 * builder keys functions by name. */
static void take_defs(struct cg_load *L, const struct cg_reader *r, const struct cg_record *rec)
{
	const struct cg_names *n = cg_reader_names(r);
	for (unsigned i = 0; i < rec->ndefs; i++) {
		const struct cg_def *def = &rec->defs[i];
		const struct strtab_entry *ob = cg_names_get(n, SP_OBJ, def->obj);
		const struct strtab_entry *fl = cg_names_get(n, SP_FILE, def->file);
		XGROW(L->map, L->map_cap, (size_t)def->fn + 1);
		struct prof_fn_key k = { ob->str, ob->len, fl->str, fl->len, def->name, def->len };
		L->map[def->fn] = profile_builder_fn(L->b, &k);
	}
}

static int load_callgrind(struct cg_load *L, struct input *in, struct diag *d)
{
	size_t max_line = L->o->max_line ? L->o->max_line : (size_t)64 << 20;
	struct cg_reader *r = cg_reader_new(in, max_line);
	cg_reader_accept_foreign(r);
	struct cg_record rec;
	int rc;
	while ((rc = cg_reader_next(r, &rec, d)) > 0) {
		if (rec.kind == CG_TOTALS)
			L->given = 1;
		if (rec.kind == CG_HEADER) {
			if (rec.key == HK_SUMMARY && part_summary(L, r, rec.costs, d) < 0) {
				rc = -1;
				break;
			}
			if (rec.new_part) {
				if (L->part)
					part_end(L);
				L->part++;
				L->want = !L->o->part || L->o->part == L->part;
			}
			if (rec.key == HK_CMD && rec.len > 4)   /* "cmd: ..." */
				profile_set_cmd(L->p, rec.text + 4, rec.len - 4);
			if (rec.key == HK_EVENTS && L->want && part_events(L, r, d) < 0) {
				rc = -1;
				break;
			}
			continue;
		}
		if (!L->want)
			continue;
		if (rec.ndefs)
			take_defs(L, r, &rec);
		if (rec.kind == CG_COST)
			profile_builder_self(L->b, L->map[rec.fn], rec.costs);
		else if (rec.kind == CG_CALL)
			profile_builder_call(L->b, L->map[rec.fn], L->map[rec.callee], rec.count,
					     rec.costs);
	}
	if (rc == 0 && L->part)
		part_end(L);
	if (L->summary_missing) {
		free(L->p->summary);
		L->p->summary = NULL;
	}
	cg_reader_free(r);
	L->p->parts = L->part;
	return rc;
}

/* ---- cachegrind ---- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Numbers separated by blanks (cg_annotate splits on any whitespace); a negative one, as
 * cg_diff writes, in two's complement, and *NEGATIVE set. */
static int parse_costs(const char *p, const char *end, unsigned nev, uint64_t *out, int *negative)
{
	unsigned k = 0;
	memset(out, 0, nev * sizeof(*out));
	while (p < end) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			break;
		int minus = *p == '-';
		p += minus;
		/* more values than events is an error; fewer means the rest are 0 */
		if (k == nev || scan_dec(&p, end, &out[k]) < 0 || (p < end && !is_blank(*p)) ||
		    (minus && out[k] > (uint64_t)INT64_MAX))
			return -1;
		if (minus) {
			out[k] = (uint64_t)0 - out[k];
			*negative = 1;
		}
		k++;
	}
	return 0;
}

/* The cachegrind parser's context: the file's state between lines. */
struct cachegrind {
	struct profile *p;
	const struct profile_opts *o;
	struct profile_builder *b;   /* made at the events: line; NULL before it */
	struct diag *d;
	uint64_t lineno;
	char *fl;                    /* the current fl= file (owned), or NULL */
	size_t fl_len;
	uint32_t fn;                 /* the current fn= function, or UINT32_MAX */
	int summary;                 /* summary: was read (and matched the totals) */
};

/* "FILE:LINE: WHAT, got 'LINE'". Returns -1. */
static int cg_line_error(const struct cachegrind *cg, const char *what, const char *line, size_t len)
{
	char q[120];
	return diag_at(cg->d, cg->p->path, cg->lineno, "%s, got '%s'", what, diag_quote(q, sizeof(q), line, len));
}

/* "events: NAME...": the builder, with one event per name. */
static int cachegrind_events(struct cachegrind *cg, const char *line, size_t len)
{
	if (cg->b)
		return cg_line_error(cg, "a second 'events:' line", line, len);
	const char *names[CG_MAX_EVENTS];
	char *copy = xstrndup(line + 7, len - 7), *save = NULL;
	unsigned n = 0;
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == CG_MAX_EVENTS) {
			free(copy);
			return diag_at(cg->d, cg->p->path, cg->lineno, "more than %d events", CG_MAX_EVENTS);
		}
		names[n++] = t;
	}
	if (!n) {
		free(copy);
		return cg_line_error(cg, "expected 'events: NAME...'", line, len);
	}
	cg->b = profile_builder_new(cg->p, n, names);
	profile_builder_paths(cg->b, cg->o->paths);
	free(copy);
	return 0;
}

/* "summary: COST...": must equal the cost lines' sums. */
static int cachegrind_summary(struct cachegrind *cg, const char *line, size_t len)
{
	const struct profile *p = cg->p;
	uint64_t sum[CG_MAX_EVENTS];
	if (parse_costs(line + 8, line + len, p->nevents, sum, &cg->p->negative) < 0)
		return cg_line_error(cg, "expected 'summary:' with one number per event", line, len);
	for (unsigned e = 0; e < p->nevents; e++)
		if (sum[e] != p->totals[e])
			return diag_at(cg->d, p->path, cg->lineno, "'summary:' gives %lld for event %s, but "
				       "the cost lines add up to %lld (file truncated or edited?)",
				       (long long)(int64_t)sum[e], p->events[e], (long long)(int64_t)p->totals[e]);
	cg->summary = 1;
	return 0;
}

/* One line of the body or header. Returns 0, or -1 with the context's diag set. */
static int cachegrind_line(struct cachegrind *cg, const char *line, size_t len)
{
	const char *end = line + len;
	if (!strncmp(line, "cmd:", 4)) {
		profile_set_cmd(cg->p, line + 4, len - 4);
		return 0;
	}
	if (!len || line[0] == '#' || !strncmp(line, "desc:", 5))
		return 0;
	if (!strncmp(line, "events:", 7))
		return cachegrind_events(cg, line, len);
	if (!cg->b)
		return cg_line_error(cg, "expected 'events:' before the body", line, len);
	if (!strncmp(line, "fl=", 3)) {
		free(cg->fl);
		cg->fl = xstrndup(line + 3, len - 3);
		cg->fl_len = len - 3;
		cg->fn = UINT32_MAX;
		return 0;
	}
	static const char unspecified[] = "<unspecified>";
	if (!strncmp(line, "fn=", 3)) {
		if (!cg->fl)
			return cg_line_error(cg, "expected 'fl=' before 'fn='", line, len);
		struct prof_fn_key k = { "", 0, cg->fl, cg->fl_len, line + 3, len - 3 };
		cg->fn = profile_builder_fn(cg->b, &k);
		return 0;
	}
	if (!strncmp(line, "summary:", 8))
		return cachegrind_summary(cg, line, len);
	uint64_t costs[CG_MAX_EVENTS];
	const char *q = line;
	uint64_t lnum;
	/* "LINE" alone: every count 0 (cg_annotate's implicit zeros) */
	if (scan_dec(&q, end, &lnum) < 0 || (q < end && !is_blank(*q)) ||
	    parse_costs(q, end, cg->p->nevents, costs, &cg->p->negative) < 0)
		return cg_line_error(cg, "expected a cost line 'LINE COST...', 'fl=', 'fn=' or 'summary:'", line, len);
	if (cg->fn == UINT32_MAX && !cg->fl)
		return cg_line_error(cg, "expected 'fl=' before the first cost line", line, len);
	if (cg->fn == UINT32_MAX) {
		/* cost after fl= and before any fn=: cg_annotate (valgrind 3.21 on) counts it to
		 * "<unspecified>" in that file */
		struct prof_fn_key k = { "", 0, cg->fl, cg->fl_len, unspecified, sizeof(unspecified) - 1 };
		cg->fn = profile_builder_fn(cg->b, &k);
	}
	profile_builder_self(cg->b, cg->fn, costs);
	return 0;
}

/* The builder made (or NULL) goes to *BP, whatever the result. */
static int load_cachegrind(struct profile *p, const struct profile_opts *o,
			   struct profile_builder **bp, struct input *in, struct diag *d)
{
	struct line_reader lr;
	line_reader_init(&lr, in, o->max_line ? o->max_line : (size_t)64 << 20);
	struct cachegrind cg = { .p = p, .o = o, .d = d, .fn = UINT32_MAX };
	const char *line;
	size_t len;
	int rc;
	while ((rc = line_reader_next(&lr, &line, &len, d)) > 0) {
		cg.lineno = lr.lineno;
		if (cg.summary && len && line[0] != '#')
			rc = cg_line_error(&cg, "expected the end of the file after 'summary:'", line, len);
		else
			rc = cachegrind_line(&cg, line, len);
		if (rc < 0)
			break;
	}
	if (rc == 0 && !cg.summary)
		rc = diag_at(d, p->path, lr.lineno, "the file ends without 'summary:' (file truncated?)");
	if (rc == 0) {   /* checked equal to the cost lines' sums */
		p->summary = xmalloc(p->nevents * sizeof(*p->summary));
		memcpy(p->summary, p->totals, p->nevents * sizeof(*p->summary));
	}
	*bp = cg.b;
	free(cg.fl);
	line_reader_free(&lr);
	p->parts = 1;
	return rc;
}

int profile_load(struct profile *p, const char *path, const struct profile_opts *o,
		 struct diag *d)
{
	struct input *in = input_open(path, d);
	if (!in) {
		memset(p, 0, sizeof(*p));
		return -1;
	}
	int rc = profile_load_input(p, in, o, d);
	input_close(in);
	return rc;
}

int profile_load_input(struct profile *p, struct input *in, const struct profile_opts *o,
		       struct diag *d)
{
	const char *path = input_name(in);
	memset(p, 0, sizeof(*p));
	p->path = xstrndup(path, strlen(path));
	p->part = o->part;
	p->folded = o->fold_recursion;
	char head[INPUT_PEEK_MAX];
	ssize_t n = input_peek(in, head, sizeof(head), d);
	int rc = n < 0 ? -1 : 0;
	struct cg_load L = { .p = p, .o = o };
	/* valgrind's cachegrind starts with desc: (or cmd: without cache simulation);
	 * callgrind with "# callgrind format", version: or creator: */
	if (rc == 0 && n == 4 && (!memcmp(head, "desc", 4) || !memcmp(head, "cmd:", 4))) {
		p->cachegrind = 1;
		if (o->part > 1)
			rc = diag_at(d, path, 0, "a cachegrind file has one part, not part %u", o->part);
		else
			rc = load_cachegrind(p, o, &L.b, in, d);
	} else if (rc == 0) {
		rc = load_callgrind(&L, in, d);
		if (rc == 0 && o->part > L.part)
			rc = diag_at(d, path, 0, "there is no part %u: the file has %u", o->part, L.part);
	}
	free(L.map);
	free(L.first_events);
	if (rc == 0 && !L.b)
		rc = diag_at(d, path, 0, "no 'events:' line: not a callgrind or cachegrind profile");
	if (rc < 0) {
		profile_builder_abort(L.b);
		profile_free(p);
		return -1;
	}
	profile_builder_finish(L.b);
	if (o->drop_arcs)
		profile_drop_arcs(p);
	return 0;
}
