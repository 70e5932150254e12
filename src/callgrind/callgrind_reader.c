/* callgrind_reader.c - callgrind text -> typed records, with context and per-part names.
 * Sits between io/linereader and the rewriter (docs/design.md). Owns the line
 * buffer, the per-part name tables, the position base and the per-part self-cost sums. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/magic.h"
#include "core/scan.h"
#include "core/xalloc.h"

enum state {
	ST_START,      /* nothing read yet */
	ST_HEADER,     /* in a part's header, before events: */
	ST_BODY,       /* after events: */
	ST_CLOSED,     /* after totals: */
};

struct cg_reader {
	struct line_reader lr;
	const char *name;
	struct cg_names names;
	enum state state;
	unsigned parts;
	uint64_t pid;
	int body_cost_seen;         /* a cost line in this part (cachegrind detection) */

	unsigned npos;
	enum cg_pos_kind pos_kind[CG_MAX_POS];
	unsigned nevents;
	char *event_names[CG_MAX_EVENTS];

	uint64_t base[CG_MAX_POS], prev[CG_MAX_POS], target[CG_MAX_POS];
	uint64_t costs[CG_MAX_EVENTS];
	uint64_t sums[CG_MAX_EVENTS];

	/* context (kcachegrind's loader state) */
	uint32_t ob, fl, file, fn;
	int have_ob, have_fn;
	uint32_t cob, cfi, jfi, cfn, jfn;
	int have_cob, have_cfi, have_jfi, have_cfn, have_jfn;
	uint32_t unknown_obj, unknown_file;
	struct cg_def *defs;        /* functions defined since the last record; names in def_names */
	size_t ndefs, defs_cap;
	char *def_names;
	size_t def_names_len, def_names_cap;
	int instr;                  /* index of the instr position, or -1 */
	cg_cost_sink *sink;         /* cg_reader_sink_costs() */
	void *sink_ctx;
	uint32_t sink_fn;
	int saw_sign;           /* a line only callgrind writes: marker, creator:, version:, positions: */
	int maybe_cachegrind;   /* events: came without any such line */
	int symbol_file;        /* the input is a perf map or a jitdump */
};

struct cg_reader *cg_reader_new(struct input *in, size_t max_line)
{
	struct cg_reader *r = xcalloc(1, sizeof(*r));
	line_reader_init(&r->lr, in, max_line);
	r->name = input_name(in);
	cg_names_init(&r->names);
	return r;
}

void cg_reader_free(struct cg_reader *r)
{
	if (!r)
		return;
	line_reader_free(&r->lr);
	cg_names_free(&r->names);
	free(r->defs);
	free(r->def_names);
	for (unsigned i = 0; i < r->nevents; i++)
		free(r->event_names[i]);
	free(r);
}

unsigned cg_reader_npos(const struct cg_reader *r) { return r->npos; }
enum cg_pos_kind cg_reader_pos_kind(const struct cg_reader *r, unsigned i) { return r->pos_kind[i]; }
unsigned cg_reader_nevents(const struct cg_reader *r) { return r->nevents; }
const char *cg_reader_event_name(const struct cg_reader *r, unsigned i) { return r->event_names[i]; }
const uint64_t *cg_reader_part_sums(const struct cg_reader *r) { return r->sums; }
uint64_t cg_reader_pid(const struct cg_reader *r) { return r->pid; }
int cg_reader_is_symbol_file(const struct cg_reader *r) { return r->symbol_file; }
unsigned cg_reader_part_count(const struct cg_reader *r) { return r->parts; }
const struct cg_names *cg_reader_names(const struct cg_reader *r) { return &r->names; }
const char *cg_reader_input_name(const struct cg_reader *r) { return r->name; }

void cg_reader_sink_costs(struct cg_reader *r, uint32_t fn, cg_cost_sink *sink, void *ctx)
{
	r->sink = sink;
	r->sink_ctx = ctx;
	r->sink_fn = fn;
}

int cg_reader_pos_index(const struct cg_reader *r, enum cg_pos_kind k)
{
	for (unsigned i = 0; i < r->npos; i++)
		if (r->pos_kind[i] == k)
			return (int)i;
	return -1;
}

static int err(struct cg_reader *r, struct diag *d, const char *what, const char *line, size_t len)
{
	char q[120];
	return diag_at(d, r->name, r->lr.lineno, "%s, got '%s'", what, diag_quote(q, sizeof(q), line, len));
}

/* ---- headers ---- */

static const struct {
	const char *key;
	enum cg_header_key k;
} header_keys[] = {
	{ "version", HK_VERSION }, { "creator", HK_CREATOR }, { "pid", HK_PID },
	{ "cmd", HK_CMD }, { "part", HK_PART }, { "thread", HK_THREAD }, { "desc", HK_DESC },
	{ "positions", HK_POSITIONS }, { "event", HK_EVENT }, { "events", HK_EVENTS },
	{ "summary", HK_SUMMARY },
};

static void new_part(struct cg_reader *r)
{
	cg_names_clear(&r->names);
	r->parts++;
	r->state = ST_HEADER;
	r->body_cost_seen = 0;
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
	r->unknown_obj = cg_names_intern(&r->names, SP_OBJ, "???", 3);
	r->unknown_file = cg_names_intern(&r->names, SP_FILE, "???", 3);
	r->ob = r->unknown_obj;
	r->fl = r->file = r->unknown_file;
}

static int parse_positions(struct cg_reader *r, const char *v, const char *end, struct diag *d)
{
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

static int parse_events(struct cg_reader *r, const char *v, const char *end, struct diag *d)
{
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

/* Parses "N N N" into OUT (missing trailing values are 0, as the spec says). */
static int parse_cost_list(struct cg_reader *r, const char *p, const char *end, uint64_t *out,
			   int *clean, struct diag *d, const char *line, size_t len)
{
	unsigned n = 0;
	while (p < end) {
		if (n == r->nevents)
			return err(r, d, n == 1 ? "expected 1 event count" : "too many event counts", line, len);
		const char *s = p;
		if (scan_number(&p, end, &out[n]) < 0)
			return err(r, d, "expected a decimal event count", line, len);
		if (p - s > 1 && s[1] == 'x')
			*clean = 0;
		n++;
		size_t b = scan_blanks(&p, end);
		if (p < end && b == 0)
			return err(r, d, "expected a space after an event count", line, len);
		if (p < end ? b != 1 : b != 0)
			*clean = 0;   /* tabs, double or trailing spaces: re-encode rather than copy */
	}
	for (; n < r->nevents; n++)
		out[n] = 0;
	return 0;
}

/* Parses the subpositions at *P relative to BASE into OUT. */
static int parse_pos(struct cg_reader *r, const char **pp, const char *end, const uint64_t *base,
		     uint64_t *out, int *clean, struct diag *d, const char *line, size_t len)
{
	const char *p = *pp;
	for (unsigned i = 0; i < r->npos; i++) {
		if (i > 0) {
			size_t b = scan_blanks(&p, end);
			if (b == 0)
				return err(r, d, "expected a space between subpositions", line, len);
			if (b != 1)
				*clean = 0;
		}
		if (p >= end)
			return err(r, d, r->npos == 1 ? "expected a position" : "expected one subposition per 'positions:' kind", line, len);
		uint64_t v;
		char c = *p;
		if (c == '*') {
			out[i] = base[i];
			p++;
		} else if (c == '+' || c == '-') {
			p++;
			const char *s = p;
			if (scan_number(&p, end, &v) < 0)
				return err(r, d, "expected a number after '+' or '-' in a position", line, len);
			if (p - s > 1 && s[1] == 'x')
				*clean = 0;
			if (c == '+') {
				if (base[i] > UINT64_MAX - v)
					return err(r, d, "position overflows 64 bits", line, len);
				out[i] = base[i] + v;
			} else {
				if (v > base[i])
					return err(r, d, "relative position goes below 0", line, len);
				out[i] = base[i] - v;
			}
		} else {
			const char *s = p;
			if (scan_number(&p, end, &v) < 0)
				return err(r, d, "expected a position (number, +N, -N or *)", line, len);
			if (i > 0 && p - s > 1 && s[1] == 'x')
				*clean = 0;
			out[i] = v;
		}
		if (p < end && *p != ' ' && *p != '\t')
			return err(r, d, "expected a space after a position", line, len);
	}
	*pp = p;
	return 0;
}

/* The fast parser below reads lines in the line reader's buffer, which always ends in a
 * NUL (line_reader.h): it needs no bounds, as a NUL ends every token. */

/* A decimal number of 1 to 19 digits at P (no overflow): returns its end, or NULL. */
static inline const char *dec19(const char *p, uint64_t *v)
{
	const char *s = p;
	uint64_t x = 0;
	unsigned d;
	while ((d = (unsigned)(unsigned char)*p - '0') <= 9) {
		x = x * 10 + d;
		p++;
	}
	if (p == s || p - s > 19)
		return NULL;
	*v = x;
	return p;
}

/* The common case of a cost line, as callgrind writes it: one space between fields, each
 * subposition "*", "+D", "-D", "0xH" (first only) or "D", decimal costs of at most 19
 * digits, then "\n". Fills POS (from BASE) and COSTS and returns where the line's "\n"
 * is; returns NULL on anything else, which parse_cost_line() then reads (and explains, if
 * it is wrong). Most of a profile's lines are such lines: this is written for speed. */
static inline __attribute__((always_inline)) const char *
parse_simple_cost_line(unsigned npos, unsigned nevents, const uint64_t *base, const char *p,
		       uint64_t *pos, uint64_t *costs)
{
	for (unsigned i = 0; i < npos; i++) {
		if (i && *p++ != ' ')
			return NULL;
		char c = *p;
		uint64_t v, b = base[i];
		if (c == '*') {
			v = b;
			p++;
		} else if (c == '+') {
			if (!(p = dec19(p + 1, &v)) || b > UINT64_MAX - v)
				return NULL;
			v += b;
		} else if (c == '-') {
			if (!(p = dec19(p + 1, &v)) || v > b)
				return NULL;
			v = b - v;
		} else if (c == '0' && p[1] == 'x') {
			if (i > 0)
				return NULL;   /* canonical text has hex only in the first subposition */
			const char *s = p += 2;
			int h;
			v = 0;
			while ((h = hexval(*p)) >= 0 && p - s < 16) {
				v = v << 4 | (uint64_t)h;
				p++;
			}
			if (p == s || hexval(*p) >= 0)
				return NULL;
		} else if (!(p = dec19(p, &v))) {
			return NULL;
		}
		pos[i] = v;
	}
	unsigned n = 0;
	while (*p == ' ') {
		if (n == nevents || !(p = dec19(p + 1, &costs[n])))
			return NULL;
		n++;
	}
	if (*p != '\n')
		return NULL;
	for (; n < nevents; n++)
		costs[n] = 0;
	return p;
}

/* A cost line: positions then costs. Moves the base (as both readers do, also on a
 * call's cost line: docs/formats.md 1.3). */
static int parse_cost_line(struct cg_reader *r, const char *line, size_t len, struct diag *d,
			   int *clean)
{
	const char *p = line, *end = line + len;
	*clean = 1;
	memcpy(r->prev, r->base, sizeof(r->base));
	uint64_t pos[CG_MAX_POS];
	if (parse_simple_cost_line(r->npos, r->nevents, r->base, p, pos, r->costs) == end) {
		memcpy(r->base, pos, sizeof(pos));
		return 0;
	}
	if (parse_pos(r, &p, end, r->base, pos, clean, d, line, len) < 0)
		return -1;
	size_t b = scan_blanks(&p, end);
	if (b != 1 || p == end)
		*clean = b == 0 && p == end ? *clean : 0;
	if (parse_cost_list(r, p, end, r->costs, clean, d, line, len) < 0)
		return -1;
	memcpy(r->base, pos, sizeof(pos));
	return 0;
}

/* ---- name lines ---- */

enum tag {
	T_OB, T_FL, T_FI, T_FE, T_FN, T_COB, T_CFI, T_CFL, T_CFN, T_JFI, T_JFN,
	T_CALLS, T_JUMP, T_JCND, T_NONE,
};

static const struct {
	const char *s;
	size_t n;
	enum tag t;
} tags[] = {
	{ "ob", 2, T_OB }, { "fl", 2, T_FL }, { "fi", 2, T_FI }, { "fe", 2, T_FE },
	{ "fn", 2, T_FN }, { "cob", 3, T_COB }, { "cfi", 3, T_CFI }, { "cfl", 3, T_CFL },
	{ "cfn", 3, T_CFN }, { "jfi", 3, T_JFI }, { "jfn", 3, T_JFN }, { "calls", 5, T_CALLS },
	{ "jump", 4, T_JUMP }, { "jcnd", 4, T_JCND },
};

static void add_def(struct cg_reader *r, uint32_t fn, const char *name, size_t len)
{
	XGROW(r->defs, r->defs_cap, r->ndefs + 1);
	XGROW(r->def_names, r->def_names_cap, r->def_names_len + len + 1);
	memcpy(r->def_names + r->def_names_len, name, len);
	r->def_names[r->def_names_len + len] = '\0';
	/* an offset until cg_reader_next() returns: def_names may move as it grows */
	r->defs[r->ndefs++] = (struct cg_def){ fn, (const char *)(uintptr_t)r->def_names_len, len };
	r->def_names_len += len + 1;
}

/* Resolves "(id) name", "(id)" or "name" in SPACE. For functions, OBJ and FILE are the
 * context that binds a definition (or an uncompressed name). */
static int name_ref(struct cg_reader *r, enum cg_space sp, const char *v, const char *end,
		    uint32_t obj, uint32_t file, uint32_t *out, struct diag *d,
		    const char *line, size_t len)
{
	uint64_t id = 0;
	int compressed = 0;
	if (v + 1 < end && *v == '(' && (unsigned)(v[1] - '0') <= 9) {
		const char *p = v + 1;
		if (scan_number(&p, end, &id) < 0 || p >= end || *p != ')')
			return err(r, d, "expected '(id)' with a decimal id", line, len);
		v = p + 1;
		scan_blanks(&v, end);
		compressed = 1;
	}
	uint32_t known = compressed ? cg_names_id_get(&r->names, sp, id) : UINT32_MAX;
	if (compressed && v == end) {
		if (known == UINT32_MAX) {
			static const char *what[] = { "object", "file", "function" };
			return diag_at(d, r->name, r->lr.lineno,
				       "%s id (%llu) is used before it is defined", what[sp],
				       (unsigned long long)id);
		}
		*out = known;
		return 0;
	}
	size_t n = (size_t)(end - v);
	uint32_t idx;
	if (sp == SP_FN) {
		uint64_t key = cg_names_fn_key(v, n, obj, file);
		int added = 1;
		/* Two ids may name one identity: --separate-callers=N cuts deeper contexts to
		 * the same name. kcachegrind keys functions by name, so they are one. */
		if (known != UINT32_MAX)
			idx = cg_names_get_fn(&r->names, known)->key == key ? known : UINT32_MAX;
		else
			idx = cg_names_intern_fn(&r->names, key, n, obj, file, &added);
		if (idx != UINT32_MAX && known == UINT32_MAX && added)
			add_def(r, idx, v, n);
	} else {
		idx = cg_names_intern(&r->names, sp, v, n);
	}
	if (compressed && known != UINT32_MAX && known != idx) {
		/* kcachegrind rebinds, callgrind_annotate overwrites: the two disagree, so refuse. */
		char q1[100], q2[100];
		if (sp == SP_FN)
			return diag_at(d, r->name, r->lr.lineno, "id (%llu) redefined as '%s', which is not "
				       "the name (or the object and file) it was defined with",
				       (unsigned long long)id, diag_quote(q1, sizeof(q1), v, n));
		const char *old = cg_names_get(&r->names, sp, known)->str;
		return diag_at(d, r->name, r->lr.lineno, "id (%llu) redefined as '%s', it was '%s'",
			       (unsigned long long)id, diag_quote(q1, sizeof(q1), v, n),
			       diag_quote(q2, sizeof(q2), old, strlen(old)));
	}
	if (compressed && known == UINT32_MAX) {
		if (r->names.nids[sp] >= (size_t)1 << 30)
			return diag_at(d, r->name, r->lr.lineno, "more than 2^30 ids");
		cg_names_id_put(&r->names, sp, id, idx);
	}
	*out = idx;
	return 0;
}

static int do_name(struct cg_reader *r, enum tag t, const char *v, const char *end,
		   struct cg_record *rec, struct diag *d, const char *line, size_t len)
{
	uint32_t x;
	switch (t) {
	case T_OB:
		if (name_ref(r, SP_OBJ, v, end, 0, 0, &x, d, line, len) < 0)
			return -1;
		r->ob = x;
		r->have_fn = 0;   /* kcachegrind: ob= resets the current function */
		return 0;
	case T_FL:
		if (name_ref(r, SP_FILE, v, end, 0, 0, &x, d, line, len) < 0)
			return -1;
		r->fl = r->file = x;
		return 0;
	case T_FI:
	case T_FE:
		if (name_ref(r, SP_FILE, v, end, 0, 0, &x, d, line, len) < 0)
			return -1;
		r->file = x;
		return 0;
	case T_FN:
		if (name_ref(r, SP_FN, v, end, r->ob, r->fl, &x, d, line, len) < 0)
			return -1;
		r->sink = NULL;
		r->fn = x;
		r->file = r->fl;
		r->have_fn = 1;
		rec->kind = CG_FN;
		rec->fn = x;
		return 1;
	case T_COB:
		if (name_ref(r, SP_OBJ, v, end, 0, 0, &r->cob, d, line, len) < 0)
			return -1;
		r->have_cob = 1;
		return 0;
	case T_CFI:
	case T_CFL:
		if (name_ref(r, SP_FILE, v, end, 0, 0, &r->cfi, d, line, len) < 0)
			return -1;
		r->have_cfi = 1;
		return 0;
	case T_CFN:
		if (name_ref(r, SP_FN, v, end, r->have_cob ? r->cob : r->ob,
			     r->have_cfi ? r->cfi : r->file, &r->cfn, d, line, len) < 0)
			return -1;
		r->have_cfn = 1;
		return 0;
	case T_JFI:
		if (name_ref(r, SP_FILE, v, end, 0, 0, &r->jfi, d, line, len) < 0)
			return -1;
		r->have_jfi = 1;
		return 0;
	case T_JFN:
		if (name_ref(r, SP_FN, v, end, r->ob, r->have_jfi ? r->jfi : r->file, &r->jfn,
			     d, line, len) < 0)
			return -1;
		r->have_jfn = 1;
		return 0;
	default:
		return 0;
	}
}

/* Reads the line that must follow calls=/jump=: blank and comment lines may come between
 * (both readers allow it). */
static int next_body_line(struct cg_reader *r, const char **line, size_t *len,
			  const char *after, struct diag *d)
{
	for (;;) {
		int rc = line_reader_next(&r->lr, line, len, d);
		if (rc < 0)
			return -1;
		if (rc == 0 || r->lr.missing_newline)
			return diag_at(d, r->name, r->lr.lineno,
				       "the file ends after '%s': expected its cost line (file truncated?)", after);
		if (memchr(*line, '\0', *len))
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

static int do_calls(struct cg_reader *r, const char *v, const char *end, struct cg_record *rec,
		    struct diag *d, const char *line, size_t len)
{
	char what[41];
	keep_start(what, sizeof(what), line, len);
	if (!r->have_cfn)
		return err(r, d, "'calls=' without a 'cfn=' before it", line, len);
	if (!r->have_fn)
		return err(r, d, "'calls=' before any 'fn='", line, len);
	const char *p = v;
	if (scan_number(&p, end, &rec->count) < 0 || (p < end && *p != ' ' && *p != '\t'))
		return err(r, d, "expected 'calls=COUNT TARGET-POSITION'", line, len);
	scan_blanks(&p, end);
	int clean = 1;
	/* The target is relative to the current base, which it does not move. */
	if (parse_pos(r, &p, end, r->base, r->target, &clean, d, line, len) < 0)
		return -1;
	scan_blanks(&p, end);
	if (p != end)
		return err(r, d, "unexpected text after the call target position", line, len);
	const char *cl;
	size_t cn;
	if (next_body_line(r, &cl, &cn, what, d) < 0)
		return -1;
	char c = *cl;
	if (!((unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*'))
		return err(r, d, "expected the cost line of the call before it", cl, cn);
	if (parse_cost_line(r, cl, cn, d, &clean) < 0)
		return -1;
	rec->kind = CG_CALL;
	rec->fn = r->fn;
	rec->file = r->file;
	rec->callee = r->cfn;
	rec->pos = r->base;
	rec->prev_pos = r->prev;
	rec->target = r->target;
	rec->costs = r->costs;
	rec->text = cl;
	rec->len = cn;
	rec->line = r->lr.lineno;
	r->have_cob = r->have_cfi = 0;
	return 1;
}

static int do_jump(struct cg_reader *r, enum tag t, const char *v, const char *end,
		   struct cg_record *rec, struct diag *d, const char *line, size_t len)
{
	if (!r->have_fn)
		return err(r, d, "jump before any 'fn='", line, len);
	const char *p = v;
	rec->conditional = t == T_JCND;
	rec->followed = 0;
	if (scan_number(&p, end, &rec->count) < 0)
		return err(r, d, "expected a jump count", line, len);
	if (t == T_JCND) {
		/* The writer prints followed/executed (docs/formats.md 1.7). */
		rec->followed = rec->count;
		if (p >= end || *p != '/')
			return err(r, d, "expected 'jcnd=FOLLOWED/EXECUTED TARGET'", line, len);
		p++;
		if (scan_number(&p, end, &rec->count) < 0)
			return err(r, d, "expected 'jcnd=FOLLOWED/EXECUTED TARGET'", line, len);
	}
	if (p >= end || (*p != ' ' && *p != '\t'))
		return err(r, d, "expected a target position after the jump count", line, len);
	scan_blanks(&p, end);
	int clean = 1;
	if (parse_pos(r, &p, end, r->base, r->target, &clean, d, line, len) < 0)
		return -1;
	scan_blanks(&p, end);
	if (p != end)
		return err(r, d, "unexpected text after the jump target position", line, len);
	char what[41];
	keep_start(what, sizeof(what), line, len);
	const char *sl;
	size_t sn;
	if (next_body_line(r, &sl, &sn, what, d) < 0)
		return -1;
	const char *q = sl, *qend = sl + sn;
	memcpy(r->prev, r->base, sizeof(r->base));
	uint64_t pos[CG_MAX_POS];
	if (parse_pos(r, &q, qend, r->base, pos, &clean, d, sl, sn) < 0)
		return -1;
	scan_blanks(&q, qend);
	if (q != qend)
		return err(r, d, "a jump's source line holds only a position, no costs", sl, sn);
	memcpy(r->base, pos, sizeof(pos));
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

/* ---- headers, totals, main loop ---- */

static int is_part_start(enum cg_header_key k)
{
	/* kcachegrind starts a new part on these once events: was seen (docs/formats.md 1.8). */
	return k == HK_PART || k == HK_EVENTS || k == HK_PID || k == HK_THREAD || k == HK_POSITIONS;
}

static int cachegrind_error(struct cg_reader *r, struct diag *d)
{
	d->set = 0;
	return diag_at(d, r->name, 0,
		       "this is cachegrind output: cachegrind keeps no addresses for code without "
		       "symbols, so its JIT costs cannot be named; run valgrind --tool=callgrind "
		       "--dump-instr=yes --cache-sim=yes instead");
}

static int do_header(struct cg_reader *r, enum cg_header_key k, const char *v, const char *end,
		     struct cg_record *rec, struct diag *d, const char *line, size_t len)
{
	rec->new_part = 0;
	if (r->state == ST_BODY) {
		if (k == HK_SUMMARY && !r->body_cost_seen)
			goto process;
		if (k == HK_SUMMARY || is_part_start(k))
			return diag_at(d, r->name, r->lr.lineno,
				       "'%.*s' starts a new part, but part %u has no 'totals:' line "
				       "(file truncated, or several files joined?)",
				       (int)(len < 20 ? len : 20), line, r->parts);
		return err(r, d, "expected a body line (the header of this part ended at 'events:')", line, len);
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
			return err(r, d, "expected 'pid: NUMBER'", line, len);
		break;
	}
	case HK_POSITIONS:
		if (parse_positions(r, v, end, d) < 0)
			return -1;
		break;
	case HK_EVENTS:
		if (parse_events(r, v, end, d) < 0)
			return -1;
		r->state = ST_BODY;
		break;
	case HK_SUMMARY:
		if (r->state != ST_BODY)
			return diag_at(d, r->name, r->lr.lineno, "'summary:' before 'events:'");
		break;
	default:
		break;
	}
	rec->kind = CG_HEADER;
	rec->key = k;
	return 1;
}

static int do_totals(struct cg_reader *r, const char *v, const char *end, struct cg_record *rec,
		     struct diag *d, const char *line, size_t len)
{
	if (r->state != ST_BODY)
		return err(r, d, "'totals:' outside the body of a part", line, len);
	int clean = 1;
	uint64_t tot[CG_MAX_EVENTS];
	if (parse_cost_list(r, v, end, tot, &clean, d, line, len) < 0)
		return -1;
	for (unsigned i = 0; i < r->nevents; i++)
		if (tot[i] != r->sums[i])
			return diag_at(d, r->name, r->lr.lineno,
				       "'totals:' gives %llu for event %s, but the cost lines of part %u add up "
				       "to %llu (file truncated or edited?)",
				       (unsigned long long)tot[i], r->event_names[i], r->parts,
				       (unsigned long long)r->sums[i]);
	r->state = ST_CLOSED;
	rec->kind = CG_TOTALS;
	return 1;
}

static int at_end(struct cg_reader *r, struct diag *d)
{
	switch (r->state) {
	case ST_START:
		return diag_at(d, r->name, 0,
			       "no callgrind data (an empty file? with --separate-threads=yes the base "
			       "file stays empty and the data is in the files ending in -01, -02, ...)");
	case ST_HEADER:
		return diag_at(d, r->name, r->lr.lineno,
			       "the file ends in a part header: expected 'events:' (file truncated?)");
	case ST_BODY:
		return diag_at(d, r->name, r->lr.lineno,
			       "the file ends inside part %u: expected 'totals:' (file truncated?)", r->parts);
	case ST_CLOSED:
		break;
	}
	return 0;
}

static int do_cost(struct cg_reader *r, struct cg_record *rec, struct diag *d, const char *line,
		   size_t len)
{
	if (r->state != ST_BODY)
		return err(r, d, r->state == ST_CLOSED ? "cost line after 'totals:'"
						       : "cost line before 'events:'", line, len);
	if (!r->have_fn)
		return err(r, d, "cost line before any 'fn=' (after 'ob=', a 'fn=' must follow)", line, len);
	if (parse_cost_line(r, line, len, d, &rec->clean) < 0)
		return -1;
	for (unsigned i = 0; i < r->nevents; i++)
		if (__builtin_add_overflow(r->sums[i], r->costs[i], &r->sums[i]))
			return err(r, d, "the sum of self costs overflows 64 bits", line, len);
	r->body_cost_seen = 1;
	rec->kind = CG_COST;
	rec->fn = r->fn;
	rec->file = r->file;
	rec->pos = r->base;
	rec->prev_pos = r->prev;
	rec->costs = r->costs;
	return 1;
}

static int classify(struct cg_reader *r, const char *line, size_t len, struct cg_record *rec,
		    struct diag *d)
{
	const char *end = line + len, *p = line;
	while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		p++;
	size_t klen = (size_t)(p - line);
	if (p < end && *p == '=') {
		for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
			if (tags[i].n != klen || memcmp(tags[i].s, line, klen))
				continue;
			const char *v = p + 1;
			if (r->state != ST_BODY)
				return err(r, d, "body line outside a part's body (expected a header line or 'events:' first)", line, len);
			if (tags[i].t == T_CALLS)
				return do_calls(r, v, end, rec, d, line, len);
			if (tags[i].t == T_JUMP || tags[i].t == T_JCND)
				return do_jump(r, tags[i].t, v, end, rec, d, line, len);
			return do_name(r, tags[i].t, v, end, rec, d, line, len);
		}
		if ((klen == 4 && !memcmp(line, "frfn", 4)) || (klen == 3 && !memcmp(line, "rec", 3)))
			return err(r, d, "unsupported line from --mangle-names=no; record with the default --mangle-names=yes", line, len);
		if ((klen == 2 && !memcmp(line, "bb", 2)) || (klen == 2 && !memcmp(line, "ln", 2)))
			return err(r, d, "unsupported line from --dump-bbs=yes; record without it", line, len);
		return err(r, d, "unknown position spec, expected ob=, fl=, fi=, fe=, fn=, cob=, cfi=, cfl=, cfn=, jfi=, jfn=, calls=, jump= or jcnd=", line, len);
	}
	if (p < end && *p == ':') {
		const char *v = p + 1;
		scan_blanks(&v, end);
		const char *vend = end;
		while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
			vend--;
		if (klen == 6 && !memcmp(line, "totals", 6))
			return do_totals(r, v, vend, rec, d, line, len);
		for (size_t i = 0; i < sizeof(header_keys) / sizeof(header_keys[0]); i++)
			if (strlen(header_keys[i].key) == klen && !memcmp(header_keys[i].key, line, klen))
				return do_header(r, header_keys[i].k, v, vend, rec, d, line, len);
	}
	return err(r, d, "expected a callgrind line (header 'key: value', 'spec=name', or a cost line)", line, len);
}

static int next_line(struct cg_reader *r, struct cg_record *rec, struct diag *d);

/* The sink's conditions: a function is current in a part's body (ob= and totals: end
 * that), and it is the sink's function. */
static int sinking(const struct cg_reader *r)
{
	return r->sink && r->fn == r->sink_fn && r->have_fn && r->state == ST_BODY;
}

/* Adds the costs of a line to the part's SUMS: 0 (and SUMS unchanged) if they would
 * overflow; the line is then left to the general path, which says so. */
static inline int add_sums(uint64_t *sums, const uint64_t *costs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t t;
		if (__builtin_add_overflow(sums[i], costs[i], &t)) {
			while (i-- > 0)
				sums[i] -= costs[i];
			return 0;
		}
		sums[i] = t;
	}
	return 1;
}

/* A canonical cost line of the sink's function (read by the line reader: at a buffer's
 * end), handed to the sink: 1; 0 if LINE is anything else (it then takes the general
 * path, which also explains errors). A NUL byte makes the line not canonical. */
static int sink_cost_line(struct cg_reader *r, const char *line, size_t len)
{
	uint64_t pos[CG_MAX_POS], costs[CG_MAX_EVENTS];
	if (parse_simple_cost_line(r->npos, r->nevents, r->base, line, pos, costs) != line + len ||
	    !add_sums(r->sums, costs, r->nevents))
		return 0;
	memcpy(r->prev, r->base, sizeof(r->base));
	memcpy(r->base, pos, sizeof(pos));
	r->body_cost_seen = 1;
	uint64_t a = r->instr >= 0 ? pos[r->instr] : 0;
	struct cg_cost_run run = {
		.text = line, .len = len, .first_len = len, .lines = 1, .prev = r->prev,
		.first_pos = pos, .first_costs = costs, .last_pos = pos, .sums = costs,
		.lo = r->instr >= 0 ? a : UINT64_MAX, .hi = a,
	};
	r->sink(r->sink_ctx, r->fn, r->file, &run);
	return 1;
}

/* The canonical cost lines of the sink's function that the buffer holds, whole, from the
 * next line on, handed to the sink as one run: the lines are parsed in one tight loop,
 * on locals, and copied with one memcpy. Returns 1, or 0 if the next line is not such a
 * line. */
static int sink_run(struct cg_reader *r)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text;
	const unsigned npos = r->npos, nev = r->nevents;
	const int instr = r->instr;
	uint64_t base[CG_MAX_POS], prev[CG_MAX_POS], first_pos[CG_MAX_POS], pos[CG_MAX_POS] = { 0 };
	uint64_t costs[CG_MAX_EVENTS], first_costs[CG_MAX_EVENTS], run_sums[CG_MAX_EVENTS];
	uint64_t lines = 0, lo = UINT64_MAX, hi = 0;
	size_t first_len = 0;
	memcpy(base, r->base, sizeof(base));
	memset(run_sums, 0, nev * sizeof(*run_sums));
	for (;;) {
		char c = *p;
		const char *eol;
		if (!((unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*') ||
		    !(eol = parse_simple_cost_line(npos, nev, base, p, pos, costs)) ||
		    (size_t)(eol - p) > lr->max_line || !add_sums(r->sums, costs, nev))
			break;
		for (unsigned i = 0; i < nev; i++)
			run_sums[i] += costs[i];   /* at most the part's sum: no overflow */
		if (lines++ == 0) {
			memcpy(prev, base, sizeof(base));
			memcpy(first_pos, pos, sizeof(pos));
			memcpy(first_costs, costs, nev * sizeof(*costs));
			first_len = (size_t)(eol - p);
		}
		memcpy(base, pos, sizeof(pos));
		if (instr >= 0) {
			uint64_t a = pos[instr];
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		p = eol + 1;
	}
	if (!lines)
		return 0;
	memcpy(r->prev, prev, sizeof(prev));
	memcpy(r->base, base, sizeof(base));
	r->body_cost_seen = 1;
	line_reader_skip(lr, (size_t)(p - text), lines);
	struct cg_cost_run run = {
		.text = text, .len = (size_t)(p - text) - 1 /* without the last "\n" */,
		.first_len = first_len, .lines = lines, .prev = prev, .first_pos = first_pos,
		.first_costs = first_costs, .last_pos = base, .sums = run_sums, .lo = lo, .hi = hi,
	};
	r->sink(r->sink_ctx, r->fn, r->file, &run);
	return 1;
}

int cg_reader_next(struct cg_reader *r, struct cg_record *rec, struct diag *d)
{
	int rc;
	r->ndefs = 0;
	r->def_names_len = 0;
	/* Name lines (ob=, cfn=, ...) update the context and produce no record. */
	while ((rc = next_line(r, rec, d)) == 2)
		;
	for (size_t i = 0; i < r->ndefs; i++)
		r->defs[i].name = r->def_names + (uintptr_t)r->defs[i].name;
	rec->defs = r->defs;
	rec->ndefs = (unsigned)r->ndefs;
	return rc;
}

/* A perf map line: hex START, hex SIZE, a name (docs/formats.md section 2). */
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
static int symbol_file_error(struct cg_reader *r, const char *line, size_t len, struct diag *d)
{
	int dump = len >= 4 && magic_is_jitdump((const unsigned char *)line);
	if (!dump && !is_perf_map_line(line, len))
		return 0;
	r->symbol_file = 1;
	return diag_at(d, r->name, 0, dump ? "this is a jitdump, not a callgrind profile"
		       : "this is a perf map (lines 'START SIZE NAME'), not a callgrind profile");
}

/* Returns 1 (record), 2 (line consumed, no record), 0 (end) or -1. */
static int next_line(struct cg_reader *r, struct cg_record *rec, struct diag *d)
{
	const char *line;
	size_t len;
	if (sinking(r) && sink_run(r))
		return 2;
	int rc = line_reader_next(&r->lr, &line, &len, d);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return at_end(r, d) < 0 ? -1 : 0;
	if (sinking(r) && len && !r->lr.missing_newline && sink_cost_line(r, line, len))
		return 2;
	rec->line = r->lr.lineno;
	rec->text = line;
	rec->len = len;
	if (r->lr.lineno == 1 && symbol_file_error(r, line, len, d) < 0)
		return -1;
	if (r->lr.missing_newline)
		return diag_at(d, r->name, r->lr.lineno,
			       "the last line has no newline: the file was cut off while being written");
	if (memchr(line, '\0', len))
		return diag_at(d, r->name, r->lr.lineno,
			       "NUL byte in the line (kcachegrind hangs on these): not a text profile");
	if (len == 0 || line[0] == '#') {
		if (r->lr.lineno == 1 && len == 18 && !memcmp(line, "# callgrind format", 18)) {
			rec->kind = CG_HEADER;
			rec->key = HK_MARKER;
			rec->new_part = 0;
			r->saw_sign = 1;
			return 1;
		}
		rec->kind = CG_COMMENT;
		return 1;
	}
	char c = line[0];
	if ((unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*')
		rc = do_cost(r, rec, d, line, len);
	else if (c == ' ' || c == '\t')
		rc = err(r, d, "unexpected leading whitespace (kcachegrind and callgrind_annotate drop such lines)", line, len);
	else
		rc = classify(r, line, len, rec, d);
	if (rc == 0)
		return 2;
	if (rc < 0 && r->maybe_cachegrind)
		return cachegrind_error(r, d);
	if (rc == 1 && rec->kind == CG_HEADER) {
		if (rec->key == HK_CREATOR || rec->key == HK_VERSION || rec->key == HK_POSITIONS)
			r->saw_sign = 1;
		if (rec->key == HK_EVENTS)
			r->maybe_cachegrind = !r->saw_sign;
		if (rec->key == HK_SUMMARY && r->maybe_cachegrind && r->body_cost_seen)
			return cachegrind_error(r, d);
	}
	if (rc == 1 && rec->kind == CG_TOTALS)
		r->maybe_cachegrind = 0;
	return rc;
}
