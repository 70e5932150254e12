/* callgrind_costs.c - the numbers of a callgrind line: subpositions (absolute, relative or
 * "*") and event counts, for cost lines and the targets of calls and jumps; a fast path for
 * canonical cost lines, and the runs of them handed to a cost sink without records (or
 * offered one by one to a line sink).
 * Part of the reader (callgrind_reader_ctx.h); reads and moves the reader's position base
 * and self-cost sums, owns nothing. */
#include <string.h>

#include "callgrind/callgrind_reader_ctx.h"
#include "core/scan.h"

int cg_costs_list(struct cg_reader *r, const char *p, const char *end, uint64_t *out, int *clean)
{
	unsigned n = 0;
	while (p < end) {
		if (n == r->nevents)
			return cg_reader_err(r, n == 1 ? "expected 1 event count" : "too many event counts");
		const char *s = p;
		if (scan_number(&p, end, &out[n]) < 0)
			return cg_reader_err(r, "expected a decimal event count");
		if (p - s > 1 && (s[1] | 0x20) == 'x')   /* 0x or 0X */
			*clean = 0;
		n++;
		size_t b = scan_blanks(&p, end);
		if (p < end && b == 0)
			return cg_reader_err(r, "expected a space after an event count");
		if (p < end ? b != 1 : b != 0)
			*clean = 0;   /* tabs, double or trailing spaces: re-encode rather than copy */
	}
	for (; n < r->nevents; n++)
		out[n] = 0;
	return 0;
}

int cg_costs_pos(struct cg_reader *r, const char **pp, const char *end, uint64_t *out, int *clean)
{
	const char *p = *pp;
	for (unsigned i = 0; i < r->npos; i++) {
		if (i > 0) {
			size_t b = scan_blanks(&p, end);
			if (b == 0)
				return cg_reader_err(r, "expected a space between subpositions");
			if (b != 1)
				*clean = 0;
		}
		if (p >= end)
			return cg_reader_err(r, r->npos == 1 ? "expected a position"
						: "expected one subposition per 'positions:' kind");
		char c = *p;
		if (c == '*') {
			out[i] = r->base[i];
			p++;
		} else if (c == '+' || c == '-') {
			p++;
			const char *s = p;
			uint64_t v, base = r->base[i];
			if (scan_number(&p, end, &v) < 0)
				return cg_reader_err(r, "expected a number after '+' or '-' in a position");
			if (p - s > 1 && (s[1] | 0x20) == 'x')
				*clean = 0;
			if (c == '+') {
				if (base > UINT64_MAX - v)
					return cg_reader_err(r, "position overflows 64 bits");
				out[i] = base + v;
			} else {
				if (v > base)
					return cg_reader_err(r, "relative position goes below 0");
				out[i] = base - v;
			}
		} else {
			const char *s = p;
			if (scan_number(&p, end, &out[i]) < 0)
				return cg_reader_err(r, "expected a position (number, +N, -N or *)");
			/* hex only in the first position, and only as callgrind writes it: 0x */
			if (p - s > 1 && (s[1] == 'X' || (i > 0 && s[1] == 'x')))
				*clean = 0;
		}
		if (p < end && *p != ' ' && *p != '\t')
			return cg_reader_err(r, "expected a space after a position");
	}
	*pp = p;
	return 0;
}

/* The fast parser below reads lines in the line reader's buffer, which always ends in a
 * NUL (linereader.h): it needs no bounds, as a NUL ends every token. */

/* A decimal number of 1 to 19 digits at P (no overflow): returns its end, or NULL. */
static inline __attribute__((always_inline)) const char *dec19(const char *p, uint64_t *v)
{
	unsigned d = (unsigned)(unsigned char)*p - '0';
	if (d > 9)
		return NULL;
	const char *s = p++;
	uint64_t x = d;
	/* one digit is the common case (callgrind's relative positions, costs of 1) */
	if ((d = (unsigned)(unsigned char)*p - '0') > 9) {
		*v = x;
		return p;
	}
	do {
		x = x * 10 + d;
		p++;
	} while ((d = (unsigned)(unsigned char)*p - '0') <= 9);
	if (p - s > 19)
		return NULL;
	*v = x;
	return p;
}

/* A relative subposition at P ("*", "+D" or "-D") against base B: its end with the value
 * in *V, or NULL (not one, or past 0 or 2^64 - 1; *V may be changed). */
static inline __attribute__((always_inline)) const char *
relative_pos(const char *p, uint64_t b, uint64_t *v)
{
	char c = *p;
	if (c == '+') {
		if (!(p = dec19(p + 1, v)) || b > UINT64_MAX - *v)
			return NULL;
		*v += b;
		return p;
	}
	if (c == '*') {
		*v = b;
		return p + 1;
	}
	if (c == '-') {
		if (!(p = dec19(p + 1, v)) || *v > b)
			return NULL;
		*v = b - *v;
		return p;
	}
	return NULL;
}

/* The first subposition at P as callgrind writes it ("*", "+D", "-D", "0xH" or "D"), against
 * base B: its end with the value in *V, or NULL (*V may be changed). */
static inline __attribute__((always_inline)) const char *
simple_pos1(const char *p, uint64_t b, uint64_t *v)
{
	char c = *p;
	if ((unsigned)(c - '0') > 9)
		return relative_pos(p, b, v);
	if (c == '0' && p[1] == 'x') {
		const char *s = p += 2;
		uint64_t x = 0;
		int h;
		while ((h = hexval(*p)) >= 0 && p - s < 16) {
			x = x << 4 | (uint64_t)h;
			p++;
		}
		if (p == s || hexval(*p) >= 0)
			return NULL;
		*v = x;
		return p;
	}
	return dec19(p, v);
}

/* A later subposition at P, as simple_pos1() reads the first but with no hex, which
 * canonical text has only in the first: "0x..." reads as 0 and ends at the "x", which no
 * caller takes as the end of a subposition. A digit comes first: a line number ("0" when
 * there is no debug information) is the common case. */
static inline __attribute__((always_inline)) const char *
simple_pos_later(const char *p, uint64_t b, uint64_t *v)
{
	if ((unsigned)(*p - '0') <= 9)
		return dec19(p, v);
	return relative_pos(p, b, v);
}

/* The NPOS subpositions at P, one space between them, as simple_pos1() and
 * simple_pos_later() read them: their end with POS filled from BASE, or NULL. */
static inline __attribute__((always_inline)) const char *
parse_simple_pos(unsigned npos, const uint64_t *base, const char *p, uint64_t *pos)
{
	if (!(p = simple_pos1(p, base[0], &pos[0])))
		return NULL;
	for (unsigned i = 1; i < npos; i++)
		if (*p++ != ' ' || !(p = simple_pos_later(p, base[i], &pos[i])))
			return NULL;
	return p;
}

/* The common case of a cost line, as callgrind writes it: one space between fields, each
 * subposition "*", "+D", "-D", "0xH" (first only) or "D", decimal costs of at most 19
 * digits, then "\n". Fills POS (from BASE) and COSTS and returns where the line's "\n"
 * is; returns NULL on anything else, which cg_costs_line() then reads (and explains, if
 * it is wrong). Most of a profile's lines are such lines: this is written for speed. */
static inline __attribute__((always_inline)) const char *
parse_simple_cost_line(unsigned npos, unsigned nevents, const uint64_t *base, const char *p,
		       uint64_t *pos, uint64_t *costs)
{
	if (!(p = parse_simple_pos(npos, base, p, pos)))
		return NULL;
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

/* parse_simple_cost_line() and parse_simple_pos() in R's layout, compiled for one event
 * and one or two subpositions (nearly every profile's: the constants take the loops
 * away) and for any other. */
static inline __attribute__((always_inline)) const char *
simple_cost_line(const struct cg_reader *r, const char *p, uint64_t *pos, uint64_t *costs)
{
	if (r->nevents == 1 && r->npos == 2)
		return parse_simple_cost_line(2, 1, r->base, p, pos, costs);
	if (r->nevents == 1 && r->npos == 1)
		return parse_simple_cost_line(1, 1, r->base, p, pos, costs);
	return parse_simple_cost_line(r->npos, r->nevents, r->base, p, pos, costs);
}

static inline __attribute__((always_inline)) const char *
simple_pos(const struct cg_reader *r, const char *p, uint64_t *pos)
{
	if (r->npos == 2)
		return parse_simple_pos(2, r->base, p, pos);
	if (r->npos == 1)
		return parse_simple_pos(1, r->base, p, pos);
	return parse_simple_pos(r->npos, r->base, p, pos);
}

int cg_costs_positions(struct cg_reader *r, const char **pp, const char *end, uint64_t *out,
		    int *clean)
{
	/* most: "0xADDR LINE " or "+3 *" as callgrind writes them (the buffer goes on past
	 * END with the line's "\n", "\r" or NUL, so the fast parser stops there) */
	const char *q = simple_pos(r, *pp, out);
	if (q && (q == end || (*q == ' ' && (q + 1 == end || q[1] == ' ' || q[1] == '\t')))) {
		*pp = q;
		return 0;
	}
	return cg_costs_pos(r, pp, end, out, clean);
}

/* A cost line: positions then costs. Moves the base (as both readers do, also on a
 * call's cost line: docs/formats.md 1.3). */
int cg_costs_line(struct cg_reader *r, int *clean)
{
	const char *p = r->cur.text, *end = r->cur.text + r->cur.len;
	*clean = 1;
	memcpy(r->prev, r->base, sizeof(r->base));
	uint64_t pos[CG_MAX_POS];
	if (simple_cost_line(r, p, pos, r->costs) == end) {
		memcpy(r->base, pos, sizeof(pos));
		return 0;
	}
	if (cg_costs_pos(r, &p, end, pos, clean) < 0)
		return -1;
	size_t b = scan_blanks(&p, end);
	if (b != 1 || p == end)
		*clean = b == 0 && p == end ? *clean : 0;
	if (cg_costs_list(r, p, end, r->costs, clean) < 0)
		return -1;
	memcpy(r->base, pos, sizeof(pos));
	return 0;
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

/* Offers the cost line LINE (LEN bytes; POS, COSTS read against the base) to the line
 * sink: 1 if it takes it, which consumes it (its costs added to the part's sums, the base
 * moved); 0 leaves everything as it was. */
static int offer_line(struct cg_reader *r, const char *line, size_t len, const uint64_t *pos,
		      const uint64_t *costs)
{
	/* a function defined since the last record comes with the line's record, as it would
	 * without the sink (callgrind writes none there: after jfn= comes its jump) */
	if (r->ndefs || !add_sums(r->sums, costs, r->nevents))
		return 0;
	struct cg_cost_line l = { line, len, r->base, pos, costs };
	if (!r->line_sink(r->sink_ctx, r->fn, r->file, &l)) {
		for (unsigned i = 0; i < r->nevents; i++)
			r->sums[i] -= costs[i];
		return 0;
	}
	/* (r->prev is the record's: the next line that needs it sets it) */
	memcpy(r->base, pos, sizeof(r->base));
	r->body_cost_seen = 1;
	return 1;
}

/* The canonical cost lines of the line sink's function that the buffer holds, whole, from
 * the next line on, offered one by one until one is not taken: 1 if one was, else 0. */
static int sink_lines(struct cg_reader *r)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text, *eol;
	const int long_lines = lr->end - lr->start > lr->max_line;
	uint64_t pos[CG_MAX_POS], costs[CG_MAX_EVENTS], lines = 0;
	while ((eol = simple_cost_line(r, p, pos, costs)) &&
	       !(long_lines && (size_t)(eol - p) > lr->max_line) &&
	       offer_line(r, p, (size_t)(eol - p), pos, costs)) {
		lines++;
		p = eol + 1;
		if (r->range_sink)   /* set or kept by the line sink: the next line may be its */
			break;
	}
	if (!lines)
		return 0;
	line_reader_skip(lr, (size_t)(p - text), lines);
	return 1;
}

/* A canonical cost line of the sink's function (read by the line reader: at a buffer's
 * end), handed to the sink: 1; 0 if LINE is anything else (it then takes the general
 * path, which also explains errors) or the line sink leaves it. A NUL byte makes the line
 * not canonical. */
int cg_costs_sink_line(struct cg_reader *r, const char *line, size_t len)
{
	uint64_t pos[CG_MAX_POS], costs[CG_MAX_EVENTS];
	if (simple_cost_line(r, line, pos, costs) != line + len)
		return 0;
	if (r->line_sink)
		return offer_line(r, line, len, pos, costs);
	if (!add_sums(r->sums, costs, r->nevents))
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

/* The end of the subpositions at P as callgrind ends a calls=/jump= line or a jump's
 * source line: "\n", or one space and "\n". Returns where the "\n" is, or NULL. */
static inline const char *line_end(const char *p)
{
	if (!p)
		return NULL;
	p += *p == ' ';
	return *p == '\n' ? p : NULL;
}

/* A reference line "XYZ=(ID)\n" at *PP whose tag is T0 T1 and T2 or T2B (cfi= and cfl=
 * are one): the index of ID in space SP, with *PP past the line; UINT32_MAX, *PP
 * unchanged, for any other line or an id not defined yet (the general path explains). */
static inline uint32_t ref_line(const struct cg_reader *r, const char **pp, char t0, char t1,
				char t2, char t2b, enum cg_space sp)
{
	const char *p = *pp;
	uint64_t id;
	if (p[0] != t0 || p[1] != t1 || (p[2] != t2 && p[2] != t2b) || p[3] != '=' ||
	    p[4] != '(' || !(p = dec19(p + 5, &id)) || p[0] != ')' || p[1] != '\n')
		return UINT32_MAX;
	uint32_t i = cg_names_id_get(&r->names, sp, id);
	if (i != UINT32_MAX)
		*pp = p + 2;
	return i;
}

/* A definition line "cfn=(ID) NAME\n" at P of a function whose ID is not defined yet, as
 * the general path reads it (blanks before NAME skipped, none of them a NUL, "\r" or all
 * of the rest): the line's "\n" with the id and name set, SUM and the reader's parts
 * the name's (name_scan_line()), or NULL (no parts added). */
static inline const char *def_line(struct cg_reader *r, const char *p, uint64_t *id,
				   const char **name, size_t *len, struct name_sum *sum,
				   size_t *part0)
{
	if (p[0] != 'c' || p[1] != 'f' || p[2] != 'n' || p[3] != '=' || p[4] != '(' ||
	    !(p = dec19(p + 5, id)) || *p++ != ')' ||
	    cg_names_id_get(&r->names, SP_FN, *id) != UINT32_MAX ||
	    r->names.nids[SP_FN] >= (size_t)1 << 30)
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	*part0 = r->def_parts.n;
	const char *e = name_scan_line(p, r->lr.buf + r->lr.end, sum, &r->def_parts);
	if (*e != '\n' || e == p || e[-1] == '\r') {
		r->def_parts.n = *part0;
		return NULL;
	}
	*name = p;
	*len = (size_t)(e - p);
	return e;
}

int cg_costs_sink_call(struct cg_reader *r)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text, *line = p;
	/* lines longer than the limit are the general path's to report */
	const int long_lines = lr->end - lr->start > lr->max_line;
#define FITS(e) (!long_lines || (size_t)((e) - line) <= lr->max_line)
	uint64_t lines = 3, def_id = 0;
	uint32_t cfn, cob = UINT32_MAX, cfi = UINT32_MAX;
	const char *def_name = NULL;
	size_t def_len = 0, part0 = r->def_parts.n;
	struct name_sum def_sum;
	/* a function defined since the last record comes with the call's record, before
	 * anything can name it (the callee, say: "jfn=(7) f" ... "cfn=(7)") */
	if (r->ndefs)
		return 0;
	if (p[1] == 'o') {   /* p[0] is a 'c' (next_line()) */
		if ((cob = ref_line(r, &p, 'c', 'o', 'b', 'b', SP_OBJ)) == UINT32_MAX || !FITS(p - 1))
			return 0;
		lines++;
		line = p;
	}
	/* p[0] first: after a line that ends the buffer's bytes P is at the NUL after them */
	if (p[0] == 'c' && p[1] == 'f' && p[2] != 'n') {
		if ((cfi = ref_line(r, &p, 'c', 'f', 'i', 'l', SP_FILE)) == UINT32_MAX || !FITS(p - 1))
			return 0;
		lines++;
		line = p;
	}
	if ((cfn = ref_line(r, &p, 'c', 'f', 'n', 'n', SP_FN)) == UINT32_MAX) {
		/* the callee defined here: bound once the call has read as canonical */
		const char *e = def_line(r, p, &def_id, &def_name, &def_len, &def_sum, &part0);
		if (!e)
			return 0;
		if (!FITS(e))
			goto not_canonical;
		p = e + 1;
	} else if (!FITS(p - 1)) {
		return 0;
	}
	/* "calls=COUNT TARGET" and at most one space, as the record's line_text takes it
	 * (callgrind_records.c, keep_line(), which copies at most CG_LINE_COPY_MAX bytes: no
	 * such line is longer) */
	_Static_assert(CG_LINE_COPY_MAX >= 6 + 19 + CG_MAX_POS * (1 + 20) + 1,
		       "a canonical calls= line fits the record's copy");
	const char *calls = p;
	uint64_t count, target[CG_MAX_POS], pos[CG_MAX_POS], costs[CG_MAX_EVENTS];
	if (p[0] != 'c' || p[1] != 'a' || p[2] != 'l' || p[3] != 'l' || p[4] != 's' ||
	    p[5] != '=' || !(p = dec19(p + 6, &count)) || *p != ' ' ||
	    !(p = line_end(simple_pos(r, p + 1, target))))
		goto not_canonical;
	line = calls;
	if (!FITS(p))
		goto not_canonical;
	const char *cost = ++p, *eol = simple_cost_line(r, p, pos, costs);
	line = cost;
	if (!eol || !FITS(eol))
		goto not_canonical;
#undef FITS
	if (def_name) {   /* bound as the general path binds it (callgrind_namerefs.c, T_CFN) */
		cfn = cg_namerefs_new_fn(r, def_id, def_name, def_len,
					 cob != UINT32_MAX ? cob : r->have_cob ? r->cob : r->ob,
					 cfi != UINT32_MAX ? cfi : r->have_cfi ? r->cfi : r->file,
					 &def_sum, part0);
		cg_reader_hand_out_parts(r);
	}
	struct cg_call_line c = {
		.defs = r->defs, .ndefs = (unsigned)r->ndefs, .callee = cfn, .count = count,
		.target = target, .pos = pos, .prev = r->base, .costs = costs, .line_text = calls,
		.line_len = (size_t)(cost - 1 - calls),
		.text = cost, .len = (size_t)(eol - cost),
	};
	r->call_sink(r->sink_ctx, r->fn, r->file, &c);
	r->ndefs = 0;   /* handed out, with their parts */
	r->def_parts.n = 0;
	/* the state the lines leave, as the general path leaves it (callgrind_namerefs.c,
	 * cg_records_calls(); r->cob and r->cfi are read only while set, and the call unsets
	 * them) */
	r->cfn = cfn;
	r->have_cfn = 1;
	r->have_cob = r->have_cfi = 0;
	memcpy(r->target, target, sizeof(target));
	memcpy(r->base, pos, sizeof(pos));
	line_reader_skip(lr, (size_t)(eol + 1 - text), lines);
	return 1;
not_canonical:
	r->def_parts.n = part0;   /* the definition's, if any: the general path reads it again */
	return 0;
}

/* A jump inside the sink's function at P ("jump=COUNT TARGET" or "jcnd=F/E TARGET", no
 * jfi=/jfn= before it) and its source line, both as callgrind writes them: returns where
 * the source line's "\n" is, with its position in POS, or NULL. The target is read
 * against BASE, which it does not move; so is the source line (docs/formats.md 1.3). Such a
 * jump carries no cost, and a block that stays copies it as it is (rewrite.c, plain_jump),
 * so it may stay in the run. */
static __attribute__((noinline)) const char *sink_jump(unsigned npos, const uint64_t *base,
							const char *p, uint64_t *pos)
{
	uint64_t v, target[CG_MAX_POS];
	/* byte by byte: the NUL after the buffer stops it, where memcmp() might read on */
	int cnd = p[1] == 'c' && p[2] == 'n' && p[3] == 'd';
	if (!(cnd || (p[1] == 'u' && p[2] == 'm' && p[3] == 'p')) || p[4] != '=' ||
	    !(p = dec19(p + 5, &v)) ||
	    (cnd && (*p != '/' || !(p = dec19(p + 1, &v)))) || *p != ' ' ||
	    !(p = line_end(parse_simple_pos(npos, base, p + 1, target))))
		return NULL;
	return line_end(parse_simple_pos(npos, base, p + 1, pos));
}

/* The canonical cost lines of the sink's function that the buffer holds, whole, from the
 * next line on, handed to the sink as one run with the jumps inside the function between
 * them (sink_jump): the lines are parsed in one tight loop, on locals, and copied with one
 * memcpy. Returns 1, or 0 if the next line is not such a line. */
static inline __attribute__((always_inline)) int sink_run(struct cg_reader *r,
								const unsigned npos,
								const unsigned nev)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text;
	const int instr = r->instr;
	/* BASE and POS swap places after each line rather than being copied: a copy of both
	 * at once waited for the stores of the parse (a store forwarding stall; 42% of this
	 * loop's perf samples on the bench profile were on that one load) */
	uint64_t pos_a[CG_MAX_POS], pos_b[CG_MAX_POS], *base = pos_a, *pos = pos_b, *t;
	uint64_t prev[CG_MAX_POS], first_pos[CG_MAX_POS];
	uint64_t costs[CG_MAX_EVENTS], first_costs[CG_MAX_EVENTS], run_sums[CG_MAX_EVENTS];
	uint64_t lines = 0, jump_lines = 0, lo = UINT64_MAX, hi = 0;
	size_t first_len = 0;
	/* a jfi=/jfn= before the jump names another target: the general path reads it */
	const int jumps = !r->have_jfi && !r->have_jfn;
	/* a line longer than the limit is the general path's to report; none can be when
	 * the buffer holds fewer bytes */
	const int long_lines = lr->end - lr->start > lr->max_line;
	memcpy(pos_a, r->base, sizeof(pos_a));
	memcpy(pos_b, r->base, sizeof(pos_b));
	memset(run_sums, 0, nev * sizeof(*run_sums));
	for (;;) {
		const char *eol;
		/* any line but a cost line fails here (it starts with a letter) */
		if (!(eol = parse_simple_cost_line(npos, nev, base, p, pos, costs)) ||
		    (long_lines && (size_t)(eol - p) > lr->max_line) ||
		    !add_sums(r->sums, costs, nev)) {
			/* not first: the writer may re-encode a run's first line, a cost line */
			if (*p == '\n' && lines) {   /* an empty line: copied with the run */
				jump_lines++;
				p++;
				continue;
			}
			if (*p != 'j' || !lines || !jumps || !(eol = sink_jump(npos, base, p, pos)) ||
			    (long_lines && (size_t)(eol - p) > lr->max_line))
				break;
			t = base, base = pos, pos = t;
			jump_lines += 2;
			p = eol + 1;
			continue;
		}
		for (unsigned i = 0; i < nev; i++)
			run_sums[i] += costs[i];   /* at most the part's sum: no overflow */
		if (__builtin_expect(lines++ == 0, 0)) {
			memcpy(prev, base, sizeof(prev));
			memcpy(first_pos, pos, sizeof(first_pos));
			memcpy(first_costs, costs, nev * sizeof(*costs));
			first_len = (size_t)(eol - p);
		}
		if (instr >= 0) {
			uint64_t a = pos[instr];
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		t = base, base = pos, pos = t;
		p = eol + 1;
	}
	if (!lines)
		return 0;
	memcpy(r->prev, prev, sizeof(prev));
	memcpy(r->base, base, sizeof(r->base));
	r->body_cost_seen = 1;
	line_reader_skip(lr, (size_t)(p - text), lines + jump_lines);
	struct cg_cost_run run = {
		.text = text, .len = (size_t)(p - text) - 1 /* without the last "\n" */,
		.first_len = first_len, .lines = lines + jump_lines, .prev = prev, .first_pos = first_pos,
		.first_costs = first_costs, .last_pos = base, .sums = run_sums, .lo = lo, .hi = hi,
	};
	r->sink(r->sink_ctx, r->fn, r->file, &run);
	return 1;
}

/* The longest line sink_line_1ev() takes: a first subposition of 20 bytes ("+" or "-" and
 * 19 digits), a space, a second one of 20, a space, a cost of 19 digits. */
enum { SINK_1EV_LONGEST = 61 };

/* One cost line of sink_run_1ev() at P against base B0, B1: its "\n" with the positions
 * in *V0, *V1 and the cost in *C, or NULL if it is not such a line or has a cost above
 * ROOM. */
static inline __attribute__((always_inline)) const char *
sink_line_1ev(const char *p, const unsigned npos, uint64_t b0, uint64_t b1, uint64_t *v0,
	      uint64_t *v1, uint64_t *c, uint64_t room)
{
	const char *q;
	*v1 = 0;
	*c = 0;
	if (!(q = simple_pos1(p, b0, v0)) ||
	    (npos > 1 && (*q++ != ' ' || !(q = simple_pos_later(q, b1, v1)))) ||
	    (*q == ' ' && !(q = dec19(q + 1, c))) || *q != '\n' || *c > room)
		return NULL;
	return q;
}

/* The commonest cost lines of all, "+D D C" (NPOS 2: 88% of the bench profile's lines)
 * or "+D C" (NPOS 1), each D one digit, C a cost: the positions read from one word, and
 * the cost too if it is one digit (74%), else as sink_line_1ev() reads it (dec19()).
 * Returns the line's "\n" with the positions in *V0, *V1 and the cost in *C, or NULL for
 * any other line (sink_line_1ev() then reads it), a cost above ROOM or a position past
 * 2^64 - 1. Only P at most LAST_WORD is read, 8 bytes, all in the buffer. Each byte is
 * tested exactly (the fixed bytes by xor, the digits as simple_pos1() takes them); a
 * carry between bytes can only refuse a line. Big-endian hosts and -DCGJIT_NO_SWAR (to
 * test the loop without it on this host) leave every line to sink_line_1ev(). */
static inline __attribute__((always_inline)) const char *
short_line(const char *p, uintptr_t last_word, const unsigned npos, uint64_t b0, uint64_t *v0,
	   uint64_t *v1, uint64_t *c, uint64_t room)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(CGJIT_NO_SWAR)
	/* the first byte lowest: "+D D D\n" and "+D D\n", digits as "0"; the prefix is all
	 * but the cost and "\n" */
	const uint64_t pat = npos > 1 ? 0x000a30203020302bULL : 0x0000000a3020302bULL;
	const uint64_t fixed = npos > 1 ? 0x000000ff00ff00ffULL : 0x0000000000ff00ffULL;
	const uint64_t digits = npos > 1 ? 0x00000000ff00ff00ULL : 0x000000000000ff00ULL;
	const unsigned prefix = npos > 1 ? 5 : 3;
	if ((uintptr_t)p > last_word)
		return NULL;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t u = w ^ pat;
	/* a digit's byte is then 0 to 9: below 0x80, x + 0x76 has its high bit set from 10 */
	if ((u & fixed) | ((u | (u + (digits & 0x7676767676767676ULL))) & digits & 0x8080808080808080ULL))
		return NULL;
	uint64_t v = b0 + (u >> 8 & 0xff);
	/* a one-digit cost and "\n": the next two bytes, as a number below 10 */
	uint64_t tail = u >> (8 * prefix) & 0xffff;
	const char *q = p + prefix + 1;
	if (tail < 10)
		*c = tail;
	else if (!(q = dec19(p + prefix, c)) || *q != '\n')
		return NULL;
	if (v < b0 || *c > room)
		return NULL;
	*v0 = v;
	*v1 = npos > 1 ? u >> 24 & 0xff : 0;
	return q;
#else
	(void)p, (void)last_word, (void)npos, (void)b0, (void)v0, (void)v1, (void)c, (void)room;
	return NULL;
#endif
}

/* sink_run() for one event, NPOS (1 or 2) subpositions and the instr subposition at INSTR
 * (or none: -1), the shape of nearly every profile, each a constant: the base, costs and
 * sums stay in locals rather than arrays (the array version stored each line's positions
 * and loaded them back as the next line's base, on the chain from line to line), and the
 * first line is read before the loop, which then has nothing to remember of it. Only for
 * a line limit of SINK_1EV_LONGEST bytes or more: no line it takes is then too long. Same
 * lines taken, same run handed out. */
static inline __attribute__((always_inline)) int sink_run_1ev(struct cg_reader *r,
								const unsigned npos,
								const int instr)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text, *q;
	uint64_t b0 = r->base[0], b1 = npos > 1 ? r->base[1] : 0;
	uint64_t prev[CG_MAX_POS] = { b0, b1 }, first_pos[CG_MAX_POS], last_pos[CG_MAX_POS];
	uint64_t v0, v1, c, first_cost;
	const uint64_t room = UINT64_MAX - r->sums[0];
	const int jumps = !r->have_jfi && !r->have_jfn;
	/* a jump's lines may be longer: the general path reports them */
	const int long_lines = lr->end - lr->start > lr->max_line;
	/* the first line: a cost line (the writer may re-encode it), never a jump */
	if (!(q = sink_line_1ev(p, npos, b0, b1, &v0, &v1, &c, room)))
		return 0;
	first_pos[0] = v0, first_pos[1] = v1;
	first_cost = c;
	const size_t first_len = (size_t)(q - p);
	uint64_t left = room - c, lines = 1, jump_lines = 0;
	uint64_t lo = instr >= 0 ? (instr == 0 ? v0 : v1) : UINT64_MAX, hi = instr >= 0 ? lo : 0;
	b0 = v0, b1 = v1;
	p = q + 1;
	/* the last address a word can be read from: 8 bytes up to the NUL after the buffer's
	 * bytes (0, below every line, if it holds fewer; an address as a number, as no pointer
	 * may point before the buffer) */
	const uintptr_t last_word = lr->end + 1 >= 8 ? (uintptr_t)(lr->buf + lr->end + 1 - 8) : 0;
	for (;;) {
		if (!(q = short_line(p, last_word, npos, b0, &v0, &v1, &c, left)) &&
		    !(q = sink_line_1ev(p, npos, b0, b1, &v0, &v1, &c, left))) {
			if (*p == '\n') {   /* an empty line (callgrind ends each block with one) */
				jump_lines++;
				p++;
				continue;
			}
			uint64_t base[CG_MAX_POS] = { b0, b1 }, pos[CG_MAX_POS];
			if (*p != 'j' || !jumps || !(q = sink_jump(npos, base, p, pos)) ||
			    (long_lines && (size_t)(q - p) > lr->max_line))
				break;
			b0 = pos[0];
			b1 = npos > 1 ? pos[1] : 0;
			jump_lines += 2;
			p = q + 1;
			continue;
		}
		left -= c;
		lines++;
		if (instr >= 0) {
			uint64_t a = instr == 0 ? v0 : v1;
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		b0 = v0, b1 = v1;
		p = q + 1;
	}
	uint64_t sum = room - left;
	r->sums[0] += sum;
	last_pos[0] = b0, last_pos[1] = b1;
	/* from the registers, not the arrays: a 16-byte copy of two 8-byte stores waited for
	 * them (a store forwarding stall, 9% of this function's perf samples) */
	r->prev[0] = prev[0], r->base[0] = b0;
	if (npos > 1)
		r->prev[1] = prev[1], r->base[1] = b1;
	r->body_cost_seen = 1;
	line_reader_skip(lr, (size_t)(p - text), lines + jump_lines);
	struct cg_cost_run run = {
		.text = text, .len = (size_t)(p - text) - 1 /* without the last "\n" */,
		.first_len = first_len, .lines = lines + jump_lines, .prev = prev, .first_pos = first_pos,
		.first_costs = &first_cost, .last_pos = last_pos, .sums = &sum, .lo = lo, .hi = hi,
	};
	r->sink(r->sink_ctx, r->fn, r->file, &run);
	return 1;
}

/* A line "+N L C" at P against instr base B0 as the range sink takes it: N 1 to 2^20 - 1
 * and C above 0, both without a leading zero, L one digit. Returns its "\n" with the
 * positions in *V0, *V1 and the cost in *C, or NULL for any other line, a cost above ROOM
 * or a position past 2^64 - 1. For the lines short_line() leaves. */
static inline __attribute__((always_inline)) const char *
range_line(const char *p, uint64_t b0, uint64_t *v0, uint64_t *v1, uint64_t *c, uint64_t room)
{
	uint64_t d;
	const char *q;
	if (p[0] != '+' || (unsigned)(p[1] - '1') > 8 || !(q = dec19(p + 1, &d)) ||
	    d >= (1u << 20) || b0 > UINT64_MAX - d || q[0] != ' ' ||
	    (unsigned)(q[1] - '0') > 9 || q[2] != ' ' || (unsigned)(q[3] - '1') > 8)
		return NULL;
	*v1 = (uint64_t)(q[1] - '0');
	if (!(q = dec19(q + 3, c)) || *q != '\n' || *c > room)
		return NULL;
	*v0 = b0 + d;
	return q;
}

/* The lines of the line sink's function from the next on that the range sink takes
 * (cg_reader_sink_range()): range_line()'s, at an instr position in the range, handed to
 * it as one run (most read by short_line()).
 * Only in the layout cg_reader_sink_range() arms it for ("instr line", one event) and for
 * a line limit of SINK_1EV_LONGEST bytes or more (no such line is longer). Returns 1, or
 * 0 if the next line is no such line. */
static int sink_range_run(struct cg_reader *r)
{
	struct line_reader *lr = &r->lr;
	const char *text = lr->buf + lr->start, *p = text, *q;
	const uintptr_t last_word = lr->end + 1 >= 8 ? (uintptr_t)(lr->buf + lr->end + 1 - 8) : 0;
	const uint64_t room = UINT64_MAX - r->sums[0], lo = r->range_lo, hi = r->range_hi;
	uint64_t b0 = r->base[0], b1 = r->base[1], v0, v1, c, left = room, lines = 0;
	uint64_t prev[CG_MAX_POS] = { b0, b1 }, first_pos[CG_MAX_POS], last_pos[CG_MAX_POS];
	uint64_t first_cost = 0;
	size_t first_len = 0;
	/* a function defined since the last record comes with the line's record; a line
	 * longer than a short limit is the general path's to report */
	if (r->ndefs || lr->max_line < SINK_1EV_LONGEST)
		return 0;
	/* short_line() reads "+D L C" only: D and C not 0 and C without a leading zero are
	 * tested here, so that the consumer may copy the text */
	for (;;) {
		if ((!(q = short_line(p, last_word, 2, b0, &v0, &v1, &c, left)) || v0 == b0 || !c ||
		     p[5] == '0') &&
		    !(q = range_line(p, b0, &v0, &v1, &c, left)))
			break;
		if (v0 < lo || v0 > hi)
			break;
		if (lines++ == 0) {
			first_pos[0] = v0, first_pos[1] = v1;
			first_cost = c;
			first_len = (size_t)(q - p);
		}
		left -= c;
		b0 = v0, b1 = v1;
		p = q + 1;
	}
	if (!lines)
		return 0;
	uint64_t sum = room - left;
	r->sums[0] += sum;
	last_pos[0] = b0, last_pos[1] = b1;
	r->prev[0] = prev[0], r->prev[1] = prev[1];   /* (as sink_run_1ev(): no 16-byte copy) */
	r->base[0] = b0, r->base[1] = b1;
	r->body_cost_seen = 1;
	line_reader_skip(lr, (size_t)(p - text), lines);
	struct cg_cost_run run = {
		.text = text, .len = (size_t)(p - text) - 1 /* without the last "\n" */,
		.first_len = first_len, .lines = lines, .prev = prev, .first_pos = first_pos,
		.first_costs = &first_cost, .last_pos = last_pos, .sums = &sum,
		.lo = first_pos[0], .hi = b0,
	};
	r->range_sink(r->sink_ctx, r->fn, r->file, &run);
	return 1;
}

int cg_costs_sink_run(struct cg_reader *r)
{
	if (r->line_sink)
		return (r->range_sink && sink_range_run(r)) || sink_lines(r);
	/* Most profiles have one event and "instr line" or "line" positions: a loop of
	 * their own (on the bench profile the general loop went from 1.91 to 1.53 G
	 * instructions when compiled for these constants, to 1.21 G with dec19()'s
	 * one-digit path; sink_run_1ev() took 1.16 G with locals, 0.66 G with short_line()
	 * and the rest of docs/design.md's steps). */
	if (r->lr.max_line < SINK_1EV_LONGEST)
		return sink_run(r, r->npos, r->nevents);
	if (r->nevents == 1 && r->npos == 2)
		return r->instr == 0 ? sink_run_1ev(r, 2, 0)
		       : r->instr == 1 ? sink_run_1ev(r, 2, 1) : sink_run_1ev(r, 2, -1);
	if (r->nevents == 1 && r->npos == 1)
		return r->instr == 0 ? sink_run_1ev(r, 1, 0) : sink_run_1ev(r, 1, -1);
	return sink_run(r, r->npos, r->nevents);
}
