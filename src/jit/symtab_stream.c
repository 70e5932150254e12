/* symtab_stream.c - the symbol table's entries as one compact byte stream. An entry is
 * varints (start as a difference to the entry before, size, source line as a difference)
 * and the cleaned name: its head, then the number of its location word (a source path,
 * mostly, kept once for all the names that share it) and the ":LINE:COL" (V8) or
 * ":LINE)" (MoarVM) as numbers. That is 27 bytes a line of a node map whose names average
 * 55, where a struct symbol and an interned name took some 200 (a map of a million lines:
 * README "Performance"), and 26 of the MoarVM map of scripts/bench (58 with its names
 * whole). Owns the stream's bytes, its checkpoints and the location words. */
#include <stdlib.h>
#include <string.h>

#include "core/scan.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "jit/symtab.h"
#include "jit/symtab_stream.h"

/* A checkpoint every STRIDE entries bounds the decoding that random access needs. */
enum { STRIDE = 16 };

/* The last word of a name, less its ":LINE:COL", is often a source path that thousands of
 * names share (V8: "JS:*f /app/lib/x.js:12:5"; MoarVM: "f(gen/x.nqp:12)", the word in
 * the last parentheses): such a word of LOC_MIN bytes or more is kept once and named by
 * its number, which halves the stream of a node map. At most LOC_MAX of them, so that a
 * map of a million distinct paths costs no more than inline. */
enum { LOC_MIN = 8, LOC_MAX = 1 << 16, NO_LOC = UINT32_MAX };

struct symtab_stream_loc {
	const char *str;               /* in the stream's arena */
	uint32_t len;
	uint32_t hash;
};

struct symtab_stream_ck {
	size_t off;                    /* where entry k * STRIDE begins in the stream */
	uint64_t start, line;          /* of the entry before it: the bases of its differences */
};

/* How an entry's name is stored: whole; or as its head, a location word by number and
 * then the rest as text, as ":LINE" or as ":LINE:COL" (numbers as varints), in the low
 * KIND_BITS of the head's length word. NAME_LINE_PAREN, ":LINE)", is stored as NAME_LINE
 * with the low bit of the line's number set (LINE < 2^63), so that the length words of
 * node's heads of 16 to 31 bytes stay one byte. */
enum { NAME_WHOLE, NAME_TEXT, NAME_LINE, NAME_LINE_COL, NAME_LINE_PAREN, KIND_BITS = 2 };

/* How many numbers follow the location word of a name of KIND. */
static unsigned kind_numbers(unsigned kind)
{
	return kind == NAME_LINE_COL ? 2 : kind == NAME_LINE || kind == NAME_LINE_PAREN;
}

void symtab_stream_init(struct symtab_stream *sm)
{
	memset(sm, 0, sizeof(*sm));
}

void symtab_stream_free(struct symtab_stream *sm)
{
	free(sm->data);
	free(sm->ck);
	free(sm->locs);
	free(sm->loc_slots);
	arena_free(&sm->arena);
}

/* Decodes the entry at P, whose differences are to *START and *LINE (updated). An entry:
 * start, size, line, then HEAD_LEN << 2 | kind and the head's bytes, then unless the
 * name is whole the location's number, and TAIL_LEN and the tail's bytes or the numbers
 * of ":LINE" or ":LINE:COL". */
static const unsigned char *decode(const unsigned char *p, uint64_t *start, uint64_t *line,
				   struct symtab_stream_entry *e)
{
	uint64_t v;
	p = varint_get(p, &v);
	e->start = *start = varint_undiff(v, *start);
	p = varint_get(p, &e->size);
	p = varint_get(p, &v);
	e->line = *line = varint_undiff(v, *line);
	p = varint_get(p, &v);
	e->kind = (unsigned)(v & ((1u << KIND_BITS) - 1));
	e->head = (const char *)p;
	e->head_len = (size_t)(v >> KIND_BITS);
	p += e->head_len;
	if (e->kind == NAME_WHOLE)
		return p;
	p = varint_get(p, &v);
	e->loc = (uint32_t)v;
	if (e->kind == NAME_TEXT) {
		p = varint_get(p, &v);
		e->tail = (const char *)p;
		e->tail_len = (size_t)v;
		return p + e->tail_len;
	}
	for (unsigned k = 0; k < kind_numbers(e->kind); k++)
		p = varint_get(p, &e->num[k]);
	if (e->kind == NAME_LINE) {
		e->kind = e->num[0] & 1 ? NAME_LINE_PAREN : NAME_LINE;
		e->num[0] >>= 1;
	}
	return p;
}

/* Past the entry at P, as decode() but keeping only the bases of the next one's
 * differences: symtab_stream_get() walks up to STRIDE - 1 entries to the one it wants,
 * for every member of an overlap cluster (symtab_index.c), and the shuffled 1M-entry
 * MoarVM map has 19,000 clusters all over the stream. */
static const unsigned char *skip(const unsigned char *p, uint64_t *start, uint64_t *line)
{
	uint64_t v;
	p = varint_get(p, &v);
	*start = varint_undiff(v, *start);
	p = varint_skip(p);
	p = varint_get(p, &v);
	*line = varint_undiff(v, *line);
	p = varint_get(p, &v);
	unsigned kind = (unsigned)(v & ((1u << KIND_BITS) - 1));
	p += v >> KIND_BITS;
	if (kind == NAME_WHOLE)
		return p;
	p = varint_skip(p);
	if (kind == NAME_TEXT) {
		p = varint_get(p, &v);
		return p + v;
	}
	for (unsigned k = 0; k < kind_numbers(kind); k++)
		p = varint_skip(p);
	return p;
}

const char *symtab_stream_name(const struct symtab_stream *sm, const struct symtab_stream_entry *e,
			       struct symtab_namebuf *b, size_t *len)
{
	if (e->kind == NAME_WHOLE) {
		*len = e->head_len;
		return e->head;
	}
	const struct symtab_stream_loc *l = &sm->locs[e->loc];
	XGROW(b->p, b->cap, e->head_len + l->len + (e->kind == NAME_TEXT ? e->tail_len : 42) + 1);
	char *q = b->p;
	memcpy(q, e->head, e->head_len);
	q += e->head_len;
	memcpy(q, l->str, l->len);
	q += l->len;
	if (e->kind == NAME_TEXT) {
		if (e->tail_len)
			memcpy(q, e->tail, e->tail_len);
		q += e->tail_len;
	}
	for (unsigned k = 0; k < kind_numbers(e->kind); k++) {
		*q++ = ':';
		q += fmt_dec(q, e->num[k]);
	}
	if (e->kind == NAME_LINE_PAREN)
		*q++ = ')';
	*len = (size_t)(q - b->p);
	return b->p;
}

void symtab_stream_get(const struct symtab_stream *sm, size_t i, struct symtab_stream_entry *e)
{
	const struct symtab_stream_ck *c = &sm->ck[i / STRIDE];
	const unsigned char *p = sm->data + c->off;
	uint64_t start = c->start, line = c->line;
	for (size_t k = i / STRIDE * STRIDE; k < i; k++)
		p = skip(p, &start, &line);
	decode(p, &start, &line, e);
}

/* The index after the last byte C in S, or 0 when there is none; eight bytes at a time
 * from the end (every name of a map passes here: the last space of a V8 name, the last
 * '(' of a MoarVM name). */
static inline size_t after_last(const char *s, size_t len, unsigned char c)
{
	const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
	size_t i = len;
	for (; i >= 8; i -= 8) {
		uint64_t x;
		memcpy(&x, s + i - 8, 8);
		x ^= c * ones;
		/* 0x80 in each byte of X that is 0 (exact, no borrow between bytes) */
		uint64_t m = ~(((x & low7) + low7) | x | low7);
		if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			return i - 8 + 8 - (size_t)__builtin_ctzll(m) / 8;
#else
			return i - 8 + (size_t)(63 - __builtin_clzll(m)) / 8 + 1;
#endif
		}
	}
	while (i > 0 && (unsigned char)s[i - 1] != c)
		i--;
	return i;
}

/* Whether the decimal digits [D, E) of a name read back the same from their number
 * (fmt_dec()): no leading zeros, at most 19 digits (the number has not wrapped). */
static int plain_decimal(const char *name, size_t d, size_t e)
{
	return e - d <= 19 && (e - d == 1 || name[d] != '0');
}

/* MoarVM's "HEAD(FILE:LINE)": FILE (of LOC_MIN bytes or more, after the last '(') as
 * *FROM, *TO and LINE in NUM[0]; returns NAME_LINE_PAREN, or 0 when NAME has not that
 * form. */
static unsigned find_paren_loc(const char *name, size_t len, size_t *from, size_t *to,
			       uint64_t num[2])
{
	if (len < LOC_MIN + 4 || name[len - 1] != ')')
		return 0;
	size_t d = len - 1;
	uint64_t v = 0, scale = 1;   /* wraps past 19 digits: plain_decimal() refuses those */
	for (; d > 0 && (unsigned)(name[d - 1] - '0') <= 9; d--, scale *= 10)
		v += (uint64_t)(name[d - 1] - '0') * scale;
	if (d == len - 1 || d == 0 || name[d - 1] != ':' || !plain_decimal(name, d, len - 1) ||
	    v >> 63)
		return 0;
	size_t q = d - 1, o = after_last(name, q, '(');
	if (o == 0 || q - o < LOC_MIN)
		return 0;
	*from = o;
	*to = q;
	num[0] = v;
	return NAME_LINE_PAREN;
}

/* NAME's location word (see LOC_MIN), [*FROM, *TO); returns 0 when it has none, else the
 * kind of the rest: NAME_LINE_PAREN, NAME_LINE or NAME_LINE_COL with the numbers in NUM
 * when it is ":LINE)" (find_paren_loc()), ":LINE" or ":LINE:COL" in plain decimal (no
 * leading zeros: it must read back the same), else NAME_TEXT. */
static unsigned find_loc(const char *name, size_t len, size_t *from, size_t *to, uint64_t num[2])
{
	unsigned paren = find_paren_loc(name, len, from, to, num);
	if (paren)
		return paren;
	size_t sp = after_last(name, len, ' ');
	if (sp == 0)
		return 0;
	size_t q = len, digits[2];
	uint64_t val[2];
	unsigned n = 0;
	for (; n < 2; n++) {   /* from the end: COL or LINE, then LINE */
		size_t d = q;
		uint64_t v = 0, scale = 1;   /* wraps past 19 digits; such numbers stay text */
		for (; d > sp && (unsigned)(name[d - 1] - '0') <= 9; d--, scale *= 10)
			v += (uint64_t)(name[d - 1] - '0') * scale;
		if (d == q || d == sp || name[d - 1] != ':')
			break;
		digits[n] = d;
		val[n] = v;
		q = d - 1;
	}
	if (q - sp < LOC_MIN)
		return 0;
	*from = sp;
	*to = q;
	for (unsigned k = 0; k < n; k++) {
		size_t d = digits[k], e = k ? digits[k - 1] - 1 : len;
		if (!plain_decimal(name, d, e))
			return NAME_TEXT;
		num[n - 1 - k] = val[k];
	}
	if (n == 1 && num[0] >> 63)   /* too big to be doubled (NAME_LINE_PAREN) */
		return NAME_TEXT;
	return n == 0 ? NAME_TEXT : n == 1 ? NAME_LINE : NAME_LINE_COL;
}

/* A hash of a location word from its first and last eight bytes (LOC_MIN = 8) and its
 * length: cheaper than hashing every byte, and paths differ at their ends. */
static uint32_t loc_hash(const char *s, size_t len)
{
	uint64_t a, b;
	memcpy(&a, s, 8);
	memcpy(&b, s + len - 8, 8);
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL) ^ len) * 0xff51afd7ed558ccdULL;
	return (uint32_t)(h >> 32);
}

static uint32_t loc_number(struct symtab_stream *sm, const char *s, size_t len)
{
	uint32_t h = loc_hash(s, len);
	size_t mask = sm->loc_nslots - 1, j = sm->loc_nslots ? h & mask : 0;
	if (sm->loc_nslots)
		for (; sm->loc_slots[j]; j = (j + 1) & mask) {
			const struct symtab_stream_loc *l = &sm->locs[sm->loc_slots[j] - 1];
			if (l->hash == h && l->len == len && memcmp(l->str, s, len) == 0)
				return sm->loc_slots[j] - 1;
		}
	if (sm->nlocs == LOC_MAX)
		return NO_LOC;
	XGROW(sm->locs, sm->locs_cap, sm->nlocs + 1);
	sm->locs[sm->nlocs] = (struct symtab_stream_loc){ arena_strndup(&sm->arena, s, len), (uint32_t)len, h };
	if ((sm->nlocs + 1) * 2 > sm->loc_nslots) {
		free(sm->loc_slots);
		sm->loc_nslots = sm->loc_nslots ? 2 * sm->loc_nslots : 256;
		sm->loc_slots = xcalloc(sm->loc_nslots, sizeof(*sm->loc_slots));
		mask = sm->loc_nslots - 1;
		for (size_t k = 0; k < sm->nlocs; k++) {
			for (j = sm->locs[k].hash & mask; sm->loc_slots[j]; j = (j + 1) & mask)
				;
			sm->loc_slots[j] = (uint32_t)k + 1;
		}
		for (j = h & mask; sm->loc_slots[j]; j = (j + 1) & mask)
			;
	}
	sm->loc_slots[j] = (uint32_t)sm->nlocs + 1;
	return (uint32_t)sm->nlocs++;
}

/* Appends NAME to the stream, its location word by number when it has one. */
static void put_name(struct symtab_stream *sm, unsigned char *p, const char *name, size_t len)
{
	size_t from, to;
	uint64_t num[2];
	uint32_t loc = NO_LOC;
	unsigned kind = find_loc(name, len, &from, &to, num);
	if (kind != NAME_WHOLE)
		loc = loc_number(sm, name + from, to - from);
	if (loc == NO_LOC) {
		p = varint_put(p, (uint64_t)len << KIND_BITS | NAME_WHOLE);
		memcpy(p, name, len);
		sm->len = (size_t)(p + len - sm->data);
		return;
	}
	unsigned stored = kind == NAME_LINE_PAREN ? NAME_LINE : kind;
	if (stored == NAME_LINE)
		num[0] = num[0] << 1 | (kind == NAME_LINE_PAREN);
	p = varint_put(p, (uint64_t)from << KIND_BITS | stored);
	memcpy(p, name, from);
	p = varint_put(p + from, loc);
	if (kind == NAME_TEXT) {
		p = varint_put(p, len - to);
		memcpy(p, name + to, len - to);
		p += len - to;
	}
	for (unsigned k = 0; k < kind_numbers(stored); k++)
		p = varint_put(p, num[k]);
	sm->len = (size_t)(p - sm->data);
}

void symtab_stream_put(struct symtab_stream *sm, const struct symtab_entry *e)
{
	if (sm->n % STRIDE == 0) {
		XGROW(sm->ck, sm->ck_cap, sm->nck + 1);
		sm->ck[sm->nck++] = (struct symtab_stream_ck){ sm->len, sm->prev_start, sm->prev_line };
	}
	XGROW(sm->data, sm->cap, sm->len + 8 * VARINT_MAX + e->name_len);
	unsigned char *p = sm->data + sm->len;
	p = varint_put(p, varint_diff(e->start, sm->prev_start));
	p = varint_put(p, e->size);
	p = varint_put(p, varint_diff(e->source_line, sm->prev_line));
	put_name(sm, p, e->name, e->name_len);
	sm->prev_start = e->start;
	sm->prev_line = e->source_line;
	sm->n++;
}
