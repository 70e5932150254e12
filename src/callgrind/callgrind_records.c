/* callgrind_records.c - the lines of a callgrind profile that become records: header lines
 * (a part's start, positions:, events:), totals: checked against the sums, cost lines,
 * calls= with its cost line and jump=/jcnd= with its source line. Part of the reader
 * (callgrind_reader_ctx.h): keeps its part state, layout and call and jump context; the
 * records point into the reader. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "callgrind/callgrind_reader_ctx.h"
#include "core/diag.h"
#include "core/scan.h"
#include "core/xalloc.h"

static void new_part(struct cg_reader *r)
{
	cg_names_clear(&r->names);
	r->parts++;
	r->state = ST_HEADER;
	r->body_cost_seen = 0;
	r->summary_seen = 0;
	r->npos = 1;
	r->pos_kind[0] = POS_LINE;   /* the default when positions: is absent */
	r->instr = -1;
	for (unsigned i = 0; i < r->nevents; i++)
		free(r->event_names[i]);
	r->nevents = 0;
	memset(r->sums, 0, sizeof(r->sums));
	memset(r->base, 0, sizeof(r->base));
	r->have_ob = r->have_fn = r->have_cob = r->have_cfi = r->have_jfi = 0;
	r->have_cfn = r->have_jfn = 0;
	r->sink = NULL;
	r->line_sink = NULL;
	r->range_sink = NULL;
	r->call_sink = NULL;
	r->call_left = 0;
	r->unknown_obj = cg_names_intern(&r->names, SP_OBJ, "???", 3);
	r->unknown_file = cg_names_intern(&r->names, SP_FILE, "???", 3);
	r->ob = r->unknown_obj;
	r->fl = r->file = r->unknown_file;
}

static int parse_positions(struct cg_reader *r, const char *v, const char *end)
{
	struct diag *d = r->d;
	unsigned n = 0;
	int seen[3] = { 0, 0, 0 };
	while (v < end) {
		const char *w = v;
		while (w < end && *w != ' ' && *w != '\t')
			w++;
		enum cg_pos_kind k;
		if (w - v == 5 && !memcmp(v, "instr", 5))
			k = POS_INSTR;
		else if (w - v == 4 && !memcmp(v, "line", 4))
			k = POS_LINE;
		else if (w - v == 2 && !memcmp(v, "bb", 2))
			k = POS_BB;
		else
			return diag_at(d, r->name, r->lr.lineno,
				       "unknown position kind '%.*s' in 'positions:', expected instr, bb or line",
				       (int)(w - v), v);
		if (seen[k]++)
			return diag_at(d, r->name, r->lr.lineno, "position kind '%.*s' given twice",
				       (int)(w - v), v);
		r->pos_kind[n++] = k;
		scan_blanks(&w, end);
		v = w;
	}
	if (n == 0)
		return diag_at(d, r->name, r->lr.lineno, "'positions:' names no position kind");
	r->npos = n;
	r->instr = cg_reader_pos_index(r, POS_INSTR);
	return 0;
}

static int parse_events(struct cg_reader *r, const char *v, const char *end)
{
	struct diag *d = r->d;
	for (unsigned i = 0; i < r->nevents; i++)
		free(r->event_names[i]);
	r->nevents = 0;
	unsigned n = 0;
	while (v < end) {
		const char *w = v;
		while (w < end && *w != ' ' && *w != '\t')
			w++;
		if (n == CG_MAX_EVENTS)
			return diag_at(d, r->name, r->lr.lineno, "more than %d events", CG_MAX_EVENTS);
		r->event_names[n++] = xstrndup(v, (size_t)(w - v));
		r->nevents = n;   /* owned from here, even if a later name is refused */
		scan_blanks(&w, end);
		v = w;
	}
	if (n == 0)
		return diag_at(d, r->name, r->lr.lineno, "'events:' names no event");
	return 0;
}

/* Reads the line that must follow calls=/jump=: blank and comment lines may come between
 * (both readers allow it). */
static int next_body_line(struct cg_reader *r, const char *after)
{
	struct diag *d = r->d;
	const char **line = &r->cur.text;
	size_t *len = &r->cur.len;
	r->cur.val = r->cur.val_end = NULL;
	for (;;) {
		int rc = line_reader_next(&r->lr, line, len, d);
		if (rc < 0)
			return -1;
		if (rc == 0 || r->lr.missing_newline)
			return diag_at(d, r->name, r->lr.lineno,
				       "the file ends after '%s': expected its cost line (file truncated?)", after);
		if (r->lr.nul)
			return diag_at(d, r->name, r->lr.lineno, "NUL byte in the line");
		if (*len == 0 || **line == '#')
			continue;
		return 0;
	}
}

/* The first bytes of LINE as a string, for a message about the line after it (which may
 * replace LINE in the buffer). */
static void keep_start(char *what, size_t n, const char *line, size_t len)
{
	size_t k = len < n - 1 ? len : n - 1;
	memcpy(what, line, k);
	what[k] = '\0';
}

/* The current line, a calls=/jump=/jcnd= line whose numbers read as canonical (CLEAN:
 * decimal counts, subpositions as callgrind writes them, one blank between them), kept in
 * the reader for a copy when the rest of it is canonical too: one space after the counts,
 * at most one at the end (callgrind ends its calls= lines with one), no tab, and short.
 * Returns the copy, or NULL (then the writer encodes the line anew). */
static const char *keep_line(struct cg_reader *r, int clean, const char *after_counts,
			     const char *after_target)
{
	const char *t = r->cur.text, *end = t + r->cur.len;
	if (!clean || r->cur.len > sizeof(r->line_copy) || after_counts >= end ||
	    *after_counts != ' ' || after_counts[1] == ' ' || end - after_target > 1 ||
	    memchr(t, '\t', r->cur.len) || (unsigned)(*r->cur.val - '0') > 9)
		return NULL;
	memcpy(r->line_copy, t, r->cur.len);
	return r->line_copy;
}

/* A count that scan_number() read from S to P: hexadecimal (0x or 0X) is not canonical. */
static int is_dec(const char *s, const char *p)
{
	return !(p - s > 1 && (s[1] | 0x20) == 'x');
}

int cg_records_calls(struct cg_reader *r, struct cg_record *rec)
{
	const char *v = r->cur.val, *end = r->cur.val_end;
	char what[41];
	keep_start(what, sizeof(what), r->cur.text, r->cur.len);
	if (!r->have_cfn)
		return cg_reader_err(r, "'calls=' without a 'cfn=' before it");
	if (!r->have_fn)
		return cg_reader_err(r, "'calls=' before any 'fn='");
	const char *p = v;
	if (scan_number(&p, end, &rec->count) < 0 || (p < end && *p != ' ' && *p != '\t'))
		return cg_reader_err(r, "expected 'calls=COUNT TARGET-POSITION'");
	int clean = is_dec(v, p);
	const char *counts = p;
	scan_blanks(&p, end);
	/* The target is relative to the current base, which it does not move. */
	if (cg_costs_positions(r, &p, end, r->target, &clean) < 0)
		return -1;
	const char *target = p;
	scan_blanks(&p, end);
	/* Xdebug writes "calls=COUNT TARGET 0"; callgrind_annotate reads only the count and
	 * kcachegrind stops after the target: both ignore the rest */
	if (p != end && !(r->foreign && !r->by_callgrind))
		return cg_reader_err(r, "unexpected text after the call target position");
	rec->line_text = keep_line(r, clean && p == end, counts, target);
	rec->line_len = r->cur.len;
	if (next_body_line(r, what) < 0)
		return -1;
	char c = *r->cur.text;
	if (!((unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*'))
		return cg_reader_err(r, "expected the cost line of the call before it");
	if (cg_costs_line(r, &clean) < 0)
		return -1;
	rec->clean = clean && rec->line_text;
	rec->kind = CG_CALL;
	rec->fn = r->fn;
	rec->file = r->file;
	rec->callee = r->cfn;
	rec->pos = r->base;
	rec->prev_pos = r->prev;
	rec->target = r->target;
	rec->costs = r->costs;
	rec->text = r->cur.text;
	rec->len = r->cur.len;
	rec->line = r->lr.lineno;
	r->have_cob = r->have_cfi = 0;
	r->call_left = 0;
	return 1;
}

int cg_records_jump(struct cg_reader *r, enum cg_tag t, struct cg_record *rec)
{
	const char *v = r->cur.val, *end = r->cur.val_end;
	if (!r->have_fn)
		return cg_reader_err(r, "jump before any 'fn='");
	const char *p = v;
	rec->conditional = t == T_JCND;
	rec->followed = 0;
	if (scan_number(&p, end, &rec->count) < 0)
		return cg_reader_err(r, "expected a jump count");
	int clean = is_dec(v, p);
	if (t == T_JCND) {
		/* The writer prints followed/executed (docs/formats.md 1.7). */
		rec->followed = rec->count;
		if (p >= end || *p != '/')
			return cg_reader_err(r, "expected 'jcnd=FOLLOWED/EXECUTED TARGET'");
		const char *s = ++p;
		if (scan_number(&p, end, &rec->count) < 0)
			return cg_reader_err(r, "expected 'jcnd=FOLLOWED/EXECUTED TARGET'");
		clean = clean && is_dec(s, p);
	}
	if (p >= end || (*p != ' ' && *p != '\t'))
		return cg_reader_err(r, "expected a target position after the jump count");
	const char *counts = p;
	scan_blanks(&p, end);
	if (cg_costs_positions(r, &p, end, r->target, &clean) < 0)
		return -1;
	const char *target = p;
	scan_blanks(&p, end);
	if (p != end)
		return cg_reader_err(r, "unexpected text after the jump target position");
	rec->line_text = keep_line(r, clean, counts, target);
	rec->line_len = r->cur.len;
	char what[41];
	keep_start(what, sizeof(what), r->cur.text, r->cur.len);
	if (next_body_line(r, what) < 0)
		return -1;
	const char *q = r->cur.text, *qend = r->cur.text + r->cur.len;
	memcpy(r->prev, r->base, sizeof(r->base));
	uint64_t pos[CG_MAX_POS];
	if (cg_costs_positions(r, &q, qend, pos, &clean) < 0)
		return -1;
	/* copied only as callgrind writes it: no tab, no blank before, at most one space after
	 * (callgrind ends the line with one) */
	clean = clean && qend - q <= 1 && *r->cur.text != ' ' && !memchr(r->cur.text, '\t', r->cur.len);
	scan_blanks(&q, qend);
	if (q != qend)
		return cg_reader_err(r, "a jump's source line holds only a position, no costs");
	memcpy(r->base, pos, sizeof(pos));
	rec->clean = clean && rec->line_text;
	rec->text = r->cur.text;
	rec->len = r->cur.len;
	rec->kind = CG_JUMP;
	rec->fn = r->fn;
	rec->file = r->file;
	rec->callee = r->have_jfn ? r->jfn : r->fn;
	rec->callee_file = r->have_jfi ? r->jfi : r->file;
	rec->pos = r->base;
	rec->prev_pos = r->prev;
	rec->target = r->target;
	rec->line = r->lr.lineno;
	r->have_jfi = r->have_jfn = 0;
	return 1;
}

static int is_part_start(enum cg_header_key k)
{
	/* kcachegrind starts a new part on these once events: was seen (docs/formats.md 1.8). */
	return k == HK_PART || k == HK_EVENTS || k == HK_PID || k == HK_THREAD || k == HK_POSITIONS;
}

int cg_records_header(struct cg_reader *r, enum cg_header_key k, struct cg_record *rec)
{
	const char *v = r->cur.val, *end = r->cur.val_end;
	const char *line = r->cur.text;
	size_t len = r->cur.len;
	struct diag *d = r->d;
	rec->new_part = 0;
	if (r->state == ST_BODY) {
		/* Xdebug writes summary: after the body, pprof no totals: before a new part */
		int lenient = r->foreign && !r->by_callgrind;
		if (k == HK_SUMMARY && (!r->body_cost_seen || lenient))
			goto process;
		if (lenient && is_part_start(k))
			r->state = ST_CLOSED;
	}
	if (r->state == ST_BODY) {
		if (k == HK_SUMMARY || is_part_start(k))
			return diag_at(d, r->name, r->lr.lineno,
				       "'%.*s' starts a new part, but part %u has no 'totals:' line "
				       "(file truncated, or several files joined?)",
				       (int)(len < 20 ? len : 20), line, r->parts);
		return cg_reader_err(r, "expected a body line (the header of this part ended at 'events:')");
	}
	if (r->state == ST_START || r->state == ST_CLOSED) {
		new_part(r);
		rec->new_part = 1;
	}
process:
	switch (k) {
	case HK_PID: {
		const char *p = v;
		if (scan_dec(&p, end, &r->pid) < 0 || p != end)
			return cg_reader_err(r, "expected 'pid: NUMBER'");
		break;
	}
	case HK_CREATOR:
		if (end - v >= 9 && !memcmp(v, "callgrind", 9))
			r->by_callgrind = 1;
		if (end - v >= 6 && !strncasecmp(v, "xdebug", 6))
			r->by_xdebug = 1;
		break;
	case HK_POSITIONS:
		if (parse_positions(r, v, end) < 0)
			return -1;
		break;
	case HK_EVENTS:
		if (parse_events(r, v, end) < 0)
			return -1;
		r->state = ST_BODY;
		break;
	case HK_SUMMARY: {
		if (r->state != ST_BODY)
			return diag_at(d, r->name, r->lr.lineno, "'summary:' before 'events:'");
		if (r->summary_seen)
			return diag_at(d, r->name, r->lr.lineno, "a second 'summary:' line in part %u", r->parts);
		r->summary_seen = 1;
		int clean = 1;
		if (r->foreign && cg_costs_list(r, v, end, r->summary, &clean) < 0)
			return -1;
		break;
	}
	default:
		break;
	}
	rec->kind = CG_HEADER;
	rec->key = k;
	rec->costs = k == HK_SUMMARY && r->foreign ? r->summary : NULL;
	return 1;
}

int cg_records_totals(struct cg_reader *r, struct cg_record *rec)
{
	if (r->state != ST_BODY)
		return cg_reader_err(r, "'totals:' outside the body of a part");
	int clean = 1;
	uint64_t tot[CG_MAX_EVENTS];
	if (cg_costs_list(r, r->cur.val, r->cur.val_end, tot, &clean) < 0)
		return -1;
	for (unsigned i = 0; i < r->nevents; i++)
		if (tot[i] != r->sums[i])
			return diag_at(r->d, r->name, r->lr.lineno,
				       "'totals:' gives %llu for event %s, but the cost lines of part %u add up "
				       "to %llu (file truncated or edited?)",
				       (unsigned long long)tot[i], r->event_names[i], r->parts,
				       (unsigned long long)r->sums[i]);
	r->state = ST_CLOSED;
	rec->kind = CG_TOTALS;
	return 1;
}

int cg_records_cost(struct cg_reader *r, struct cg_record *rec)
{
	if (r->state != ST_BODY)
		return cg_reader_err(r, r->state == ST_CLOSED ? "cost line after 'totals:'"
						       : "cost line before 'events:'");
	if (!r->have_fn)
		return cg_reader_err(r, "cost line before any 'fn=' (after 'ob=', a 'fn=' must follow)");
	if (cg_costs_line(r, &rec->clean) < 0)
		return -1;
	for (unsigned i = 0; i < r->nevents; i++)
		if (__builtin_add_overflow(r->sums[i], r->costs[i], &r->sums[i]))
			return cg_reader_err(r, "the sum of self costs overflows 64 bits");
	r->body_cost_seen = 1;
	rec->kind = CG_COST;
	rec->fn = r->fn;
	rec->file = r->file;
	rec->pos = r->base;
	rec->prev_pos = r->prev;
	rec->costs = r->costs;
	return 1;
}
