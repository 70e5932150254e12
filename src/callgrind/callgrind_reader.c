/* callgrind_reader.c - callgrind text -> typed records, with context and per-part names.
 * Sits between io/linereader and the rewriter (docs/design.md). Owns the line
 * buffer, the per-part name tables, the position base and the per-part self-cost sums
 * (struct cg_reader, callgrind_reader_ctx.h). This file reads the lines, tells what each
 * is and hands it to callgrind_costs.c, callgrind_records.c or callgrind_namerefs.c; it
 * also recognises the inputs that are not callgrind profiles. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_reader_ctx.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/magic.h"
#include "core/scan.h"
#include "core/xalloc.h"

struct cg_reader *cg_reader_new(struct input *in, size_t max_line)
{
	struct cg_reader *r = xcalloc(1, sizeof(*r));
	line_reader_init(&r->lr, in, max_line);
	r->lr.before_fill = cg_reader_keep_def_names;
	r->lr.before_fill_ctx = r;
	r->name = input_name(in);
	cg_names_init(&r->names);
	return r;
}

void cg_reader_share_pump(struct cg_reader *r, struct io_pump *pump)
{
	line_reader_share_pump(&r->lr, pump);
}

void cg_reader_free(struct cg_reader *r)
{
	if (!r)
		return;
	line_reader_free(&r->lr);
	cg_names_free(&r->names);
	free(r->defs);
	free(r->def_names);
	free(r->def_parts.at);
	for (unsigned i = 0; i < r->nevents; i++)
		free(r->event_names[i]);
	free(r);
}

unsigned cg_reader_npos(const struct cg_reader *r)
{
	return r->npos;
}

enum cg_pos_kind cg_reader_pos_kind(const struct cg_reader *r, unsigned i)
{
	return r->pos_kind[i];
}

unsigned cg_reader_nevents(const struct cg_reader *r)
{
	return r->nevents;
}

const char *cg_reader_event_name(const struct cg_reader *r, unsigned i)
{
	return r->event_names[i];
}

const uint64_t *cg_reader_part_sums(const struct cg_reader *r)
{
	return r->sums;
}

uint64_t cg_reader_pid(const struct cg_reader *r)
{
	return r->pid;
}

int cg_reader_is_symbol_file(const struct cg_reader *r)
{
	return r->symbol_file;
}

unsigned cg_reader_part_count(const struct cg_reader *r)
{
	return r->parts;
}

const struct cg_names *cg_reader_names(const struct cg_reader *r)
{
	return &r->names;
}

const char *cg_reader_input_name(const struct cg_reader *r)
{
	return r->name;
}

void cg_reader_accept_foreign(struct cg_reader *r)
{
	r->foreign = 1;
}

void cg_reader_sink_costs(struct cg_reader *r, uint32_t fn, cg_cost_sink *sink, void *ctx)
{
	r->sink = sink;
	r->line_sink = NULL;
	r->range_sink = NULL;
	r->call_sink = NULL;
	r->sink_ctx = ctx;
	r->sink_fn = fn;
}

void cg_reader_sink_calls(struct cg_reader *r, cg_call_sink *sink)
{
	r->call_sink = r->sink || r->line_sink ? sink : NULL;
}

void cg_reader_sink_lines(struct cg_reader *r, uint32_t fn, cg_line_sink *sink, void *ctx)
{
	r->sink = NULL;
	r->call_sink = NULL;
	r->line_sink = sink;
	r->range_sink = NULL;
	r->sink_ctx = ctx;
	r->sink_fn = fn;
}

int cg_reader_sink_range(struct cg_reader *r, uint64_t lo, uint64_t hi, cg_cost_sink *sink)
{
	/* the layout of sink_range_run() (callgrind_costs.c) */
	if (!r->line_sink || r->npos != 2 || r->nevents != 1 || r->instr != 0 ||
	    r->pos_kind[1] != POS_LINE)
		return 0;
	r->range_sink = sink;
	r->range_lo = lo;
	r->range_hi = hi;
	return 1;
}

int cg_reader_pos_index(const struct cg_reader *r, enum cg_pos_kind k)
{
	for (unsigned i = 0; i < r->npos; i++)
		if (r->pos_kind[i] == k)
			return (int)i;
	return -1;
}

int cg_reader_err(struct cg_reader *r, const char *what)
{
	char q[120];
	return diag_at(r->d, r->name, r->lr.lineno, "%s, got '%s'", what,
		       diag_quote(q, sizeof(q), r->cur.text, r->cur.len));
}

static const struct {
	const char *key;
	enum cg_header_key k;
} header_keys[] = {
	{ "version", HK_VERSION }, { "creator", HK_CREATOR }, { "pid", HK_PID },
	{ "cmd", HK_CMD }, { "part", HK_PART }, { "thread", HK_THREAD }, { "desc", HK_DESC },
	{ "positions", HK_POSITIONS }, { "event", HK_EVENT }, { "events", HK_EVENTS },
	{ "summary", HK_SUMMARY },
};

/* The tag of a body line's KLEN letters at S, or -1: a switch on the letters packed in a
 * word, not a search with memcmp (2.6 M name and call lines on the big profile). */
static int tag_of(const char *s, size_t klen)
{
	if (klen < 2 || klen > 5)
		return -1;
	uint64_t k = 0;
	for (size_t i = 0; i < klen; i++)
		k = k << 8 | (unsigned char)s[i];
#define TAG2(a, b) ((uint64_t)(a) << 8 | (b))
#define TAG3(a, b, c) (TAG2(a, b) << 8 | (c))
#define TAG4(a, b, c, d) (TAG3(a, b, c) << 8 | (d))
	switch (k) {
	case TAG2('o', 'b'): return T_OB;
	case TAG2('f', 'l'): return T_FL;
	case TAG2('f', 'i'): return T_FI;
	case TAG2('f', 'e'): return T_FE;
	case TAG2('f', 'n'): return T_FN;
	case TAG3('c', 'o', 'b'): return T_COB;
	case TAG3('c', 'f', 'i'): return T_CFI;
	case TAG3('c', 'f', 'l'): return T_CFL;
	case TAG3('c', 'f', 'n'): return T_CFN;
	case TAG3('j', 'f', 'i'): return T_JFI;
	case TAG3('j', 'f', 'n'): return T_JFN;
	case TAG4('j', 'u', 'm', 'p'): return T_JUMP;
	case TAG4('j', 'c', 'n', 'd'): return T_JCND;
	case TAG4('c', 'a', 'l', 'l') << 8 | 's': return T_CALLS;
	}
#undef TAG2
#undef TAG3
#undef TAG4
	return -1;
}

static int cachegrind_error(struct cg_reader *r)
{
	r->d->set = 0;
	return diag_at(r->d, r->name, 0,
		       "this is cachegrind output: cachegrind keeps no addresses for code without "
		       "symbols, so its JIT costs cannot be named; run valgrind --tool=callgrind "
		       "--dump-instr=yes --cache-sim=yes instead");
}

static int at_end(struct cg_reader *r)
{
	switch (r->state) {
	case ST_START:
		return diag_at(r->d, r->name, 0,
			       "no callgrind data (an empty file? with --separate-threads=yes the base "
			       "file stays empty and the data is in the files ending in -01, -02, ...)");
	case ST_HEADER:
		return diag_at(r->d, r->name, r->lr.lineno,
			       "the file ends in a part header: expected 'events:' (file truncated?)");
	case ST_BODY:
		if (r->foreign && !r->by_callgrind && r->by_xdebug && !r->summary_seen)
			return diag_at(r->d, r->name, r->lr.lineno, "the file ends inside part %u without "
				       "'summary:', which Xdebug writes last (file truncated?)", r->parts);
		if (r->foreign && !r->by_callgrind)   /* pprof's: the costs are added up */
			return 0;
		return diag_at(r->d, r->name, r->lr.lineno,
			       "the file ends inside part %u: expected 'totals:' (file truncated?)", r->parts);
	case ST_CLOSED:
		break;
	}
	return 0;
}

/* "tag=value" (the tag's KLEN letters, then P at "="): a body line; T is the tag's
 * tag_of(). */
static int tag_line(struct cg_reader *r, size_t klen, int t, const char *p, struct cg_record *rec)
{
	const char *line = r->cur.text;
	if (t >= 0) {
		r->cur.val = p + 1;
		r->cur.val_end = line + r->cur.len;
		if (r->state != ST_BODY)
			return cg_reader_err(r, "body line outside a part's body (expected a header line or 'events:' first)");
		if (t == T_CALLS)
			return cg_records_calls(r, rec);
		if (t == T_JUMP || t == T_JCND)
			return cg_records_jump(r, (enum cg_tag)t, rec);
		return cg_namerefs_line(r, (enum cg_tag)t, rec);
	}
	if ((klen == 4 && !memcmp(line, "frfn", 4)) || (klen == 3 && !memcmp(line, "rec", 3)))
		return cg_reader_err(r, "unsupported line from --mangle-names=no; record with the default --mangle-names=yes");
	if ((klen == 2 && !memcmp(line, "bb", 2)) || (klen == 2 && !memcmp(line, "ln", 2)))
		return cg_reader_err(r, "unsupported line from --dump-bbs=yes; record without it");
	return cg_reader_err(r, "unknown position spec, expected ob=, fl=, fi=, fe=, fn=, cob=, cfi=, cfl=, cfn=, jfi=, jfn=, calls=, jump= or jcnd=");
}

/* A line that is neither a cost line nor a comment: "tag=value" or "key: value". */
static int classify(struct cg_reader *r, struct cg_record *rec)
{
	const char *line = r->cur.text, *end = line + r->cur.len, *p = line;
	/* Most lines: a tag of 2 to 5 letters and "=" ("cfn=", "calls="). A known tag is all
	 * letters, so the loop below would stop at that "=" too. */
	for (size_t k = 2; k <= 5 && k < r->cur.len; k++) {
		int t;
		if (line[k] == '=' && (t = tag_of(line, k)) >= 0)
			return tag_line(r, k, t, line + k, rec);
	}
	while (p < end && (unsigned)((*p | 0x20) - 'a') < 26)   /* a letter, either case */
		p++;
	size_t klen = (size_t)(p - line);
	if (p < end && *p == '=')
		return tag_line(r, klen, tag_of(line, klen), p, rec);
	if (p < end && *p == ':') {
		const char *v = p + 1;
		scan_blanks(&v, end);
		const char *vend = end;
		while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
			vend--;
		r->cur.val = v;
		r->cur.val_end = vend;
		if (klen == 6 && !memcmp(line, "totals", 6))
			return cg_records_totals(r, rec);
		for (size_t i = 0; i < sizeof(header_keys) / sizeof(header_keys[0]); i++)
			if (strlen(header_keys[i].key) == klen && !memcmp(header_keys[i].key, line, klen))
				return cg_records_header(r, header_keys[i].k, rec);
	}
	return cg_reader_err(r, "expected a callgrind line (header 'key: value', 'spec=name', or a cost line)");
}

static int next_line(struct cg_reader *r, struct cg_record *rec);

/* The sink's conditions: a function is current in a part's body (ob= and totals: end
 * that), and it is the sink's function. */
static int sinking(const struct cg_reader *r)
{
	return (r->sink || r->line_sink) && r->fn == r->sink_fn && r->have_fn && r->state == ST_BODY;
}

int cg_reader_next(struct cg_reader *r, struct cg_record *rec, struct diag *d)
{
	int rc;
	r->d = d;
	r->ndefs = 0;
	r->ndefs_kept = 0;
	r->def_names_len = 0;
	r->def_parts.n = 0;
	/* Name lines (ob=, cfn=, ...) update the context and produce no record. */
	while ((rc = next_line(r, rec)) == 2)
		;
	for (size_t i = 0; i < r->ndefs_kept; i++)
		r->defs[i].name = r->def_names + (uintptr_t)r->defs[i].name;
	cg_reader_hand_out_parts(r);
	rec->defs = r->defs;
	rec->ndefs = (unsigned)r->ndefs;
	return rc;
}

void cg_reader_hand_out_parts(struct cg_reader *r)
{
	for (size_t i = 0; i < r->ndefs; i++) {
		struct cg_def *def = &r->defs[i];
		def->parts = def->nparts ? r->def_parts.at + (uintptr_t)def->parts : NULL;
	}
}

/* A perf map line: hex START, hex SIZE, a name (docs/formats.md section 4). */
static int is_perf_map_line(const char *p, size_t len)
{
	const char *end = p + len;
	for (int field = 0; field < 2; field++) {
		if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		const char *digits = p;
		while (p < end && isxdigit((unsigned char)*p))
			p++;
		if (p == digits || p == end || *p != ' ')
			return 0;
		p++;
	}
	return p < end;
}

/* A symbol file given where the profile belongs (the arguments swapped): the first line
 * says which, before the parser's message about it would mislead. */
static int symbol_file_error(struct cg_reader *r)
{
	const char *line = r->cur.text;
	size_t len = r->cur.len;
	int dump = len >= 4 && magic_is_jitdump((const unsigned char *)line);
	if (!dump && !is_perf_map_line(line, len))
		return 0;
	r->symbol_file = 1;
	return diag_at(r->d, r->name, 0, dump ? "this is a jitdump, not a callgrind profile"
		       : "this is a perf map (lines 'START SIZE NAME'), not a callgrind profile");
}

/* A comment or empty line; the format marker if it is the first line. */
static int comment_line(struct cg_reader *r, struct cg_record *rec)
{
	if (r->lr.lineno == 1 && r->cur.len == 18 && !memcmp(r->cur.text, "# callgrind format", 18)) {
		rec->kind = CG_HEADER;
		rec->key = HK_MARKER;
		rec->new_part = 0;
		r->saw_sign = 1;
		r->by_callgrind = 1;
		return 1;
	}
	rec->kind = CG_COMMENT;
	return 1;
}

/* Cachegrind's output looks like callgrind's without the lines only callgrind writes:
 * after a line read (RC), says so rather than what the line broke. */
static int watch_cachegrind(struct cg_reader *r, int rc, const struct cg_record *rec)
{
	if (rc < 0 && r->maybe_cachegrind)
		return cachegrind_error(r);
	if (rc == 1 && rec->kind == CG_HEADER) {
		if (rec->key == HK_CREATOR || rec->key == HK_VERSION || rec->key == HK_POSITIONS)
			r->saw_sign = 1;
		if (rec->key == HK_EVENTS)
			r->maybe_cachegrind = !r->saw_sign;
		if (rec->key == HK_SUMMARY && r->maybe_cachegrind && r->body_cost_seen)
			return cachegrind_error(r);
	}
	if (rc == 1 && rec->kind == CG_TOTALS)
		r->maybe_cachegrind = 0;
	return rc;
}

/* C starts a cost line: a digit, "+", "-" or "*". */
static inline int cost_line_start(char c)
{
	return (unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*';
}

/* Returns 1 (record), 2 (line consumed, no record), 0 (end) or -1. */
static int next_line(struct cg_reader *r, struct cg_record *rec)
{
	const char *line;
	size_t len;
	/* After a call or a name line the next line is most often not a cost line (on the
	 * bench profile 1.23 M of 1.75 M times): its first byte (the NUL after the buffer,
	 * if it is all read) says so without the call. */
	char first = r->lr.buf[r->lr.start];
	if (cost_line_start(first) && sinking(r) && cg_costs_sink_run(r))
		return 2;
	if (first == 'c' && r->call_sink && !r->call_left && sinking(r)) {
		if (cg_costs_sink_call(r))
			return 2;
		r->call_left = 1;
	}
	if (first == 'f' && r->state == ST_BODY && cg_namerefs_fast_fn(r, rec))
		return 1;
	int rc = line_reader_next(&r->lr, &line, &len, r->d);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return at_end(r) < 0 ? -1 : 0;
	if (len && cost_line_start(line[0]) && sinking(r) && !r->lr.missing_newline &&
	    cg_costs_sink_line(r, line, len))
		return 2;
	r->cur = (struct cg_reader_line){ line, len, NULL, NULL };
	rec->line = r->lr.lineno;
	rec->text = line;
	rec->len = len;
	if (r->lr.lineno == 1 && symbol_file_error(r) < 0)
		return -1;
	if (r->lr.missing_newline)
		return diag_at(r->d, r->name, r->lr.lineno,
			       "the last line has no newline: the file was cut off while being written");
	if (r->lr.nul)
		return diag_at(r->d, r->name, r->lr.lineno,
			       "NUL byte in the line (kcachegrind hangs on these): not a text profile");
	if (len == 0 || line[0] == '#')
		return comment_line(r, rec);
	char c = line[0];
	if (cost_line_start(c))
		rc = cg_records_cost(r, rec);
	else if (c == ' ' || c == '\t')
		rc = cg_reader_err(r, "unexpected leading whitespace (kcachegrind and callgrind_annotate drop such lines)");
	else
		rc = classify(r, rec);
	if (rc == 0)
		return 2;
	return watch_cachegrind(r, rc, rec);
}
