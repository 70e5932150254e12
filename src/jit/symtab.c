/* symtab.c - symbols as one compact byte stream, and a sorted array of disjoint segments.
 * An entry of the stream is varints (start as a difference to the entry before, size,
 * source line as a difference) and the cleaned name: its head, then the number of its
 * last word (a source path, mostly, kept once for all the names that share it) and the
 * ":LINE:COL" as numbers. That is 27 bytes a line of a node map whose names average 55,
 * where a struct symbol and an interned name took some 200 (a map of a million lines:
 * issue 9). A struct symbol is built on the first request for it and kept: most symbols
 * of a big map are never asked for. symtab_finish() sorts one segment per entry by start
 * (in place, one radix sort), keeps the entries that overlap no other as they are, and
 * hands each cluster of overlapping entries to a sweep over its start and end points that
 * keeps the live entries in a max-heap ordered by (priority class, insertion order) and
 * gives each elementary range to the heap's top: O(n log n), whatever the overlaps. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/scan.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/jitname.h"
#include "jit/pathmap.h"
#include "jit/symtab.h"

/* A checkpoint every STRIDE entries bounds the decoding that random access needs. */
enum { STRIDE = 16, VARINT_MAX = 10 };

/* The last word of a name, less its ":LINE:COL", is often a source path that thousands of
 * names share (V8: "JS:*f /app/lib/x.js:12:5"): such a word of LOC_MIN bytes or more is
 * kept once and named by its number, which halves the stream of a node map. At most
 * LOC_MAX of them, so that a map of a million distinct paths costs no more than inline. */
enum { LOC_MIN = 8, LOC_MAX = 1 << 16, NO_LOC = UINT32_MAX };

struct loc {
	const char *str;               /* in the symtab's arena */
	uint32_t len;
	uint32_t hash;
};

/* A growing scratch buffer for a name put together from its parts. */
struct namebuf {
	char *p;
	size_t cap;
};

struct checkpoint {
	size_t off;                    /* where entry k * STRIDE begins in the stream */
	uint64_t start, line;          /* of the entry before it: the bases of its differences */
};

struct run {                           /* entries from FIRST on come from SOURCE */
	uint32_t first, source;
};

/* The struct symbols built so far, by entry index in blocks of BUILT_BLOCK pointers,
 * each allocated when the first of its symbols is built (a profile that hits a few
 * symbols of a big map pays little). Behind a pointer, so that the const accessors can
 * fill it: building is invisible to callers but for the memory it takes. */
enum { BUILT_BLOCK = 512 };

/* The file and first line that every symbol of one name gets (settle_places()). */
struct place {
	const char *file;              /* NULL: the name has none */
	size_t file_len;
	uint64_t line;
};

struct built {
	struct strtab names;           /* equal names share an id */
	struct namebuf buf;
	struct arena arena;            /* the struct symbols: their addresses never change */
	struct symbol ***block;
	size_t nblocks;
	struct place *places;          /* by name id, for the names known at symtab_finish() */
	size_t nplaces;
};

struct symtab {
	unsigned char *data;           /* the entry stream */
	size_t len, cap;
	struct checkpoint *ck;
	size_t nck, ck_cap;
	uint64_t prev_start, prev_line;
	size_t nsyms;
	struct loc *locs;              /* the shared last words of names (LOC_MIN) */
	size_t nlocs, locs_cap;
	uint32_t *loc_slots;           /* open addressing: number + 1, 0 = empty */
	size_t loc_nslots;
	struct namebuf clean;
	struct run *runs;
	size_t nruns, runs_cap;
	struct symtab_source *sources;
	size_t nsources, sources_cap;
	struct strtab files;
	struct arena arena;
	struct built *built;
	struct symtab_segment *segs;   /* before symtab_finish(): one per entry, in order */
	size_t nsegs, segs_cap;
	struct symtab_stats stats;
	const struct pathmap *paths;   /* --root, --path-map (borrowed), or NULL */
	struct pathmap_buf mapped;     /* a name with its path mapped */
	struct strtab raw_files;       /* symtab_intern_path(): each file name as read ... */
	const char **file_as;          /* ... -> its interned mapped form, by raw index */
	size_t file_as_cap;
};

/* How an entry's name is stored: whole; or as its head, a location word by number and
 * then the rest as text, as ":LINE" or as ":LINE:COL" (numbers as varints). */
enum { NAME_WHOLE, NAME_TEXT, NAME_LINE, NAME_LINE_COL };

/* One decoded entry. HEAD and TAIL point into the stream (which moves when it grows). */
struct entry {
	uint64_t start, size, line;
	const char *head, *tail;
	size_t head_len, tail_len;
	unsigned kind;                 /* NAME_* */
	uint32_t loc;
	uint64_t num[2];               /* NAME_LINE, NAME_LINE_COL */
};

struct symtab *symtab_new(void)
{
	struct symtab *st = xcalloc(1, sizeof(*st));
	strtab_init(&st->files);
	strtab_init(&st->raw_files);
	st->built = xcalloc(1, sizeof(*st->built));
	strtab_init(&st->built->names);
	return st;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	free(st->data);
	free(st->ck);
	free(st->runs);
	free(st->sources);
	free(st->segs);
	strtab_free(&st->files);
	strtab_free(&st->raw_files);
	free(st->file_as);
	pathmap_buf_free(&st->mapped);
	free(st->locs);
	free(st->loc_slots);
	free(st->clean.p);
	arena_free(&st->arena);
	strtab_free(&st->built->names);
	free(st->built->buf.p);
	arena_free(&st->built->arena);
	for (size_t k = 0; k < st->built->nblocks; k++)
		free(st->built->block[k]);
	free(st->built->block);
	free(st->built->places);
	free(st->built);
	free(st);
}

uint32_t symtab_add_source(struct symtab *st, const char *path, const char *object, unsigned prio)
{
	XGROW(st->sources, st->sources_cap, st->nsources + 1);
	struct symtab_source *s = &st->sources[st->nsources];
	memset(s, 0, sizeof(*s));
	s->path = arena_strndup(&st->arena, path, strlen(path));
	s->object = arena_strndup(&st->arena, object, strlen(object));
	s->prio = prio;
	return (uint32_t)st->nsources++;
}

/* A map entry is located by its line, a jitdump record by its byte offset. */
__attribute__((format(printf, 4, 5)))
static int entry_error(const struct symtab_source *src, uint64_t where, struct diag *d,
		       const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return src->prio == SYMTAB_PRIO_JITDUMP ? diag_byte(d, src->path, where, "%s", msg)
						 : diag_at(d, src->path, where, "%s", msg);
}

/* ---- the entry stream ---- */

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* The stream is written only here, so a varint in it ends within VARINT_MAX bytes. */
static const unsigned char *get_varint(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0;; shift += 7) {
		unsigned char b = *p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*v = x;
	return p;
}

/* Differences mod 2^64, signed, so that a small step down costs a byte as a step up does. */
static uint64_t zigzag(uint64_t now, uint64_t before)
{
	uint64_t d = now - before;
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z, uint64_t before)
{
	return before + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

/* Decodes the entry at P, whose differences are to *START and *LINE (updated). An entry:
 * start, size, line, then HEAD_LEN << 2 | kind and the head's bytes, then unless the
 * name is whole the location's number, and TAIL_LEN and the tail's bytes or the numbers
 * of ":LINE" or ":LINE:COL". */
static const unsigned char *decode(const unsigned char *p, uint64_t *start, uint64_t *line,
				   struct entry *e)
{
	uint64_t v;
	p = get_varint(p, &v);
	e->start = *start = unzigzag(v, *start);
	p = get_varint(p, &e->size);
	p = get_varint(p, &v);
	e->line = *line = unzigzag(v, *line);
	p = get_varint(p, &v);
	e->kind = (unsigned)(v & 3);
	e->head = (const char *)p;
	e->head_len = (size_t)(v >> 2);
	p += e->head_len;
	if (e->kind == NAME_WHOLE)
		return p;
	p = get_varint(p, &v);
	e->loc = (uint32_t)v;
	if (e->kind == NAME_TEXT) {
		p = get_varint(p, &v);
		e->tail = (const char *)p;
		e->tail_len = (size_t)v;
		return p + e->tail_len;
	}
	p = get_varint(p, &e->num[0]);
	if (e->kind == NAME_LINE_COL)
		p = get_varint(p, &e->num[1]);
	return p;
}

/* The entry's name: in the stream when it is whole, else put together in B. */
static const char *entry_name(const struct symtab *st, const struct entry *e,
			      struct namebuf *b, size_t *len)
{
	if (e->kind == NAME_WHOLE) {
		*len = e->head_len;
		return e->head;
	}
	const struct loc *l = &st->locs[e->loc];
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
	for (unsigned k = 0; k < e->kind - NAME_TEXT; k++) {
		*q++ = ':';
		q += fmt_dec(q, e->num[k]);
	}
	*len = (size_t)(q - b->p);
	return b->p;
}

static void entry_at(const struct symtab *st, size_t i, struct entry *e)
{
	const struct checkpoint *c = &st->ck[i / STRIDE];
	const unsigned char *p = st->data + c->off;
	uint64_t start = c->start, line = c->line;
	for (size_t k = i / STRIDE * STRIDE; k <= i; k++)
		p = decode(p, &start, &line, e);
}

static uint32_t source_of(const struct symtab *st, size_t i)
{
	size_t lo = 0, hi = st->nruns;   /* the last run with first <= I */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->runs[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return st->runs[lo].source;
}

/* Whether S holds a byte below 0x20 or 0x7f, eight bytes at a time (the words test for a
 * byte below 0x20 and for a zero byte in S ^ 0x7f..., exact as yes/no answers): every
 * name of a map passes here. */
static int has_control(const unsigned char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, s + i, 8);
		y = x ^ 0x7f * ones;
		if (((x - 0x20 * ones) & ~x & highs) | ((y - ones) & ~y & highs))
			return 1;
	}
	if (i < len && len >= 8) {   /* the last bytes, in a word that overlaps the one before */
		uint64_t x, y;
		memcpy(&x, s + len - 8, 8);
		y = x ^ 0x7f * ones;
		return (((x - 0x20 * ones) & ~x & highs) | ((y - ones) & ~y & highs)) != 0;
	}
	for (; i < len; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 1;
	return 0;
}

/* A name becomes part of a text line: control bytes (a jitdump name may hold any byte but
 * NUL) are written as '_', as wasmtime does for its perf maps. */
static void clean_name(unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '_';
}

/* The index after the last space in S, or 0 when there is none; eight bytes at a time
 * from the end (every name of a map passes here). */
static size_t after_last_space(const char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
	size_t i = len;
	for (; i >= 8; i -= 8) {
		uint64_t x;
		memcpy(&x, s + i - 8, 8);
		x ^= 0x20 * ones;
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
	while (i > 0 && s[i - 1] != ' ')
		i--;
	return i;
}

/* NAME's location word (see LOC_MIN), [*FROM, *TO); returns 0 when it has none, else the
 * kind of the rest: NAME_LINE or NAME_LINE_COL with the numbers in NUM when it is
 * ":LINE" or ":LINE:COL" in plain decimal (no leading zeros: it must read back the
 * same), else NAME_TEXT. */
static unsigned find_loc(const char *name, size_t len, size_t *from, size_t *to, uint64_t num[2])
{
	size_t sp = after_last_space(name, len);
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
		if (e - d > 19 || (e - d > 1 && name[d] == '0'))
			return NAME_TEXT;
		num[n - 1 - k] = val[k];
	}
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

static uint32_t loc_number(struct symtab *st, const char *s, size_t len)
{
	uint32_t h = loc_hash(s, len);
	size_t mask = st->loc_nslots - 1, j = st->loc_nslots ? h & mask : 0;
	if (st->loc_nslots)
		for (; st->loc_slots[j]; j = (j + 1) & mask) {
			const struct loc *l = &st->locs[st->loc_slots[j] - 1];
			if (l->hash == h && l->len == len && memcmp(l->str, s, len) == 0)
				return st->loc_slots[j] - 1;
		}
	if (st->nlocs == LOC_MAX)
		return NO_LOC;
	XGROW(st->locs, st->locs_cap, st->nlocs + 1);
	st->locs[st->nlocs] = (struct loc){ arena_strndup(&st->arena, s, len), (uint32_t)len, h };
	if ((st->nlocs + 1) * 2 > st->loc_nslots) {
		free(st->loc_slots);
		st->loc_nslots = st->loc_nslots ? 2 * st->loc_nslots : 256;
		st->loc_slots = xcalloc(st->loc_nslots, sizeof(*st->loc_slots));
		mask = st->loc_nslots - 1;
		for (size_t k = 0; k < st->nlocs; k++) {
			for (j = st->locs[k].hash & mask; st->loc_slots[j]; j = (j + 1) & mask)
				;
			st->loc_slots[j] = (uint32_t)k + 1;
		}
		for (j = h & mask; st->loc_slots[j]; j = (j + 1) & mask)
			;
	}
	st->loc_slots[j] = (uint32_t)st->nlocs + 1;
	return (uint32_t)st->nlocs++;
}

/* Appends NAME to the stream, its location word by number when it has one. */
static void put_name(struct symtab *st, unsigned char *p, const char *name, size_t len)
{
	size_t from, to;
	uint64_t num[2];
	uint32_t loc = NO_LOC;
	unsigned kind = find_loc(name, len, &from, &to, num);
	if (kind != NAME_WHOLE)
		loc = loc_number(st, name + from, to - from);
	if (loc == NO_LOC) {
		p = put_varint(p, (uint64_t)len << 2 | NAME_WHOLE);
		memcpy(p, name, len);
		st->len = (size_t)(p + len - st->data);
		return;
	}
	p = put_varint(p, (uint64_t)from << 2 | kind);
	memcpy(p, name, from);
	p = put_varint(p + from, loc);
	if (kind == NAME_TEXT) {
		p = put_varint(p, len - to);
		memcpy(p, name + to, len - to);
		p += len - to;
	}
	for (unsigned k = 0; k < kind - NAME_TEXT; k++)
		p = put_varint(p, num[k]);
	st->len = (size_t)(p - st->data);
}

int symtab_add(struct symtab *st, uint32_t source, uint64_t start, uint64_t size,
	       const char *name, size_t len, uint64_t source_line, struct diag *d)
{
	struct symtab_source *src = &st->sources[source];
	if (size == 0) {
		src->skipped++;
		return 0;
	}
	/* A range may end exactly at 2^64 (its last byte at 2^64 - 1), not past it. */
	if (start - 1 > UINT64_MAX - size && start != 0)
		return entry_error(src, source_line, d,
				   "range 0x%llx + 0x%llx goes past the end of the address space",
				   (unsigned long long)start, (unsigned long long)size);
	if (st->nsyms >= UINT32_MAX / 2)
		return entry_error(src, source_line, d, "more than 2^31 symbols");
	/* An empty name gets the address, so that unnamed blobs stay apart. */
	char fallback[48];
	if (len == 0) {
		len = (size_t)snprintf(fallback, sizeof(fallback), "[JIT code at 0x%llx]",
				       (unsigned long long)start);
		name = fallback;
	}
	if (st->nsyms % STRIDE == 0) {
		XGROW(st->ck, st->ck_cap, st->nck + 1);
		st->ck[st->nck++] = (struct checkpoint){ st->len, st->prev_start, st->prev_line };
	}
	if (!st->nruns || st->runs[st->nruns - 1].source != source) {
		XGROW(st->runs, st->runs_cap, st->nruns + 1);
		st->runs[st->nruns++] = (struct run){ (uint32_t)st->nsyms, source };
	}
	if (has_control((const unsigned char *)name, len)) {
		XGROW(st->clean.p, st->clean.cap, len);
		memcpy(st->clean.p, name, len);
		clean_name((unsigned char *)st->clean.p, len);
		name = st->clean.p;
	}
	/* after the cleaning: the map applies to the name as it is written */
	if (st->paths) {
		const char *m = pathmap_name(st->paths, name, len, &st->mapped, &len);
		st->stats.paths_mapped += m != name;
		name = m;
	}
	XGROW(st->data, st->cap, st->len + 8 * VARINT_MAX + len);
	unsigned char *p = st->data + st->len;
	p = put_varint(p, zigzag(start, st->prev_start));
	p = put_varint(p, size);
	p = put_varint(p, zigzag(source_line, st->prev_line));
	put_name(st, p, name, len);
	/* The index's raw material: symtab_finish() sorts it in place. */
	XGROW(st->segs, st->segs_cap, st->nsyms + 1);
	st->segs[st->nsyms] = (struct symtab_segment){ start, start + size - 1, (uint32_t)st->nsyms, 0 };
	st->prev_start = start;
	st->prev_line = source_line;
	st->nsyms++;
	src->entries++;
	st->stats.symbols++;
	return 0;
}

/* ---- struct symbol, built on request ---- */

static void built_put(struct built *b, uint32_t i, struct symbol *s)
{
	size_t k = i / BUILT_BLOCK;
	if (k >= b->nblocks) {
		size_t n = k + 1 > 2 * b->nblocks ? k + 1 : 2 * b->nblocks;
		b->block = xrealloc(b->block, n * sizeof(*b->block));
		memset(b->block + b->nblocks, 0, (n - b->nblocks) * sizeof(*b->block));
		b->nblocks = n;
	}
	if (!b->block[k])
		b->block[k] = xcalloc(BUILT_BLOCK, sizeof(*b->block[k]));
	b->block[k][i % BUILT_BLOCK] = s;
}

static struct symbol *built_get(const struct built *b, uint32_t i)
{
	size_t k = i / BUILT_BLOCK;
	return k < b->nblocks && b->block[k] ? b->block[k][i % BUILT_BLOCK] : NULL;
}

/* A symbol whose name gives no file takes its name's place, if settle_places() found one:
 * file and line together, so that they always come from one row. */
static void take_place(const struct built *b, struct symbol *s)
{
	if (s->file || s->name_id >= b->nplaces || !b->places[s->name_id].file)
		return;
	s->file = b->places[s->name_id].file;
	s->file_len = b->places[s->name_id].file_len;
	s->line = b->places[s->name_id].line;
}

static struct symbol *build(const struct symtab *st, uint32_t i)
{
	struct built *b = st->built;
	struct symbol *s = built_get(b, i);
	if (s)
		return s;
	struct entry e;
	entry_at(st, i, &e);
	size_t len;
	const char *name = entry_name(st, &e, &b->buf, &len);
	s = arena_alloc(&b->arena, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->start = e.start;
	s->size = e.size;
	s->name_id = strtab_intern(&b->names, name, len, NULL);
	s->name = strtab_get(&b->names, s->name_id)->str;
	s->name_len = len;
	s->source = source_of(st, i);
	s->source_line = e.line;
	struct jitname jn;
	if (jitname_parse(s->name, s->name_len, &jn)) {
		s->file = jn.file;
		s->file_len = jn.file_len;
		s->line = jn.line;
	}
	take_place(b, s);
	built_put(b, i, s);
	return s;
}

/* ---- one file and line per name ---- */

/* A vote of a line row for its file as the file of its symbol's name. */
struct vote {
	uint32_t name_id;
	const char *file;              /* interned: equal files are equal pointers */
	size_t file_len;
	uint64_t line;
	const char *name;              /* the symbol's name, for jitname_jvm_declared_in() */
	size_t name_len;
};

static int cmp_vote(const void *a, const void *b)
{
	const struct vote *x = a, *y = b;
	if (x->name_id != y->name_id)
		return x->name_id < y->name_id ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Of the files that the rows of one name give, the one the name's identity gets: the
 * file of the JVM class that declares the method, else the file of the most rows, else
 * the first in byte order. Returns 1 if A beats B. */
static int better_file(const struct vote *a, uint64_t na, int decl_a, const struct vote *b,
		       uint64_t nb, int decl_b)
{
	if (decl_a != decl_b)
		return decl_a;
	if (na != nb)
		return na > nb;
	size_t n = a->file_len < b->file_len ? a->file_len : b->file_len;
	int c = memcmp(a->file, b->file, n);
	return c < 0 || (c == 0 && a->file_len < b->file_len);
}

/* Identity is (object, file, name) (README rule 3), so every symbol of a name must give
 * the same file, whichever of its loads came first and whichever file the rows of each
 * begin in (C2 code often begins with a callee's inlined code). A name whose convention
 * gives a file keeps it; the others get one file from all the name's rows (better_file())
 * and, as first line, the lowest line of that file among them. Line rows still give each
 * instruction its own file and line. Only symbols built so far have rows (jitdumps build
 * theirs as they add them); symbols built later find their name's place in the table. */
static void settle_places(struct symtab *st)
{
	struct built *b = st->built;
	struct vote *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t k = 0; k < b->nblocks; k++)
		for (size_t j = 0; b->block[k] && j < BUILT_BLOCK; j++) {
			const struct symbol *s = b->block[k][j];
			if (!s || !s->nlines || s->file)
				continue;
			XGROW(v, cap, n + s->nlines);
			for (uint32_t r = 0; r < s->nlines; r++)
				v[n++] = (struct vote){ s->name_id, s->lines[r].file, s->lines[r].file_len,
							s->lines[r].line, s->name, s->name_len };
		}
	b->nplaces = b->names.count;
	b->places = xcalloc(b->nplaces + 1, sizeof(*b->places));
	if (n)
		qsort(v, n, sizeof(*v), cmp_vote);
	for (size_t i = 0; i < n;) {
		const struct vote *best = NULL;
		uint64_t best_n = 0, best_line = 0;
		int best_decl = 0;
		size_t j = i;
		while (j < n && v[j].name_id == v[i].name_id) {
			size_t e = j;
			uint64_t line = UINT64_MAX;
			for (; e < n && v[e].name_id == v[j].name_id && v[e].file == v[j].file; e++)
				line = v[e].line < line ? v[e].line : line;
			int decl = jitname_jvm_declared_in(v[j].name, v[j].name_len, v[j].file, v[j].file_len);
			if (!best || better_file(&v[j], e - j, decl, best, best_n, best_decl)) {
				best = &v[j];
				best_n = e - j;
				best_decl = decl;
				best_line = line;
			}
			j = e;
		}
		b->places[v[i].name_id] = (struct place){ best->file, best->file_len, best_line };
		i = j;
	}
	free(v);
	for (size_t k = 0; k < b->nblocks; k++)
		for (size_t j = 0; b->block[k] && j < BUILT_BLOCK; j++)
			if (b->block[k][j])
				take_place(b, b->block[k][j]);
}

/* ---- the index ---- */

/* In-place MSD radix sort on start (American flag sort): no second array, linear in the
 * number of key bytes that differ. DIFF has the bits in which the starts of A differ; the
 * digit is the eight bits below its highest, so that no pass is spent on a byte that all
 * share, and the permutation gathers each bucket's DIFF for the next level. The order of
 * equal starts does not matter: entries that share a start overlap, and the cluster
 * sweep orders them itself. */
static void sort_by_start(struct symtab_segment *a, size_t n, uint64_t diff)
{
	if (n <= 32 || !diff) {
		for (size_t i = 1; i < n; i++) {
			struct symtab_segment v = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1].start > v.start; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	unsigned top = 63 - (unsigned)__builtin_clzll(diff), shift = top >= 7 ? top - 7 : 0;
	size_t count[256] = { 0 }, head[256], tail[256];
	uint64_t ors[256], ands[256];
	for (size_t i = 0; i < n; i++)
		count[(a[i].start >> shift) & 0xff]++;
	size_t sum = 0;
	for (unsigned b = 0; b < 256; b++) {
		head[b] = sum;
		sum += count[b];
		tail[b] = sum;
		ors[b] = 0;
		ands[b] = UINT64_MAX;
	}
	for (unsigned b = 0; b < 256; b++)
		while (head[b] < tail[b]) {
			struct symtab_segment v = a[head[b]];
			unsigned d = (v.start >> shift) & 0xff;
			while (d != b) {
				struct symtab_segment t = a[head[d]];
				ors[d] |= v.start;
				ands[d] &= v.start;
				a[head[d]++] = v;
				v = t;
				d = (v.start >> shift) & 0xff;
			}
			ors[b] |= v.start;
			ands[b] &= v.start;
			a[head[b]++] = v;
		}
	for (size_t b = 0, off = 0; b < 256; off += count[b++])
		if (count[b] > 1)
			sort_by_start(a + off, count[b], ors[b] ^ ands[b]);
}

static void sort_segments(struct symtab_segment *a, size_t n)
{
	uint64_t ors = 0, ands = UINT64_MAX;
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		ors |= a[i].start;
		ands &= a[i].start;
		sorted &= i == 0 || a[i - 1].start <= a[i].start;
	}
	if (!sorted)
		sort_by_start(a, n, ors ^ ands);
}

/* The output of the sweep goes into the array it reads, behind the reading position;
 * segments that do not fit there yet (a cluster can give more segments than it has
 * entries) wait in a queue. */
struct segout {
	struct symtab_segment *a;
	size_t w, r;                   /* next to write, next to read */
	struct symtab_segment *q;
	size_t qhead, qn, qcap;
};

static void seg_put(struct segout *o, struct symtab_segment s)
{
	if (o->qhead == o->qn && o->w < o->r) {
		o->a[o->w++] = s;
		return;
	}
	if (o->qhead && o->qn == o->qcap) {   /* reuse the room of what was written */
		memmove(o->q, o->q + o->qhead, (o->qn - o->qhead) * sizeof(*o->q));
		o->qn -= o->qhead;
		o->qhead = 0;
	}
	XGROW(o->q, o->qcap, o->qn + 1);
	o->q[o->qn++] = s;
}

static void seg_flush(struct segout *o)
{
	while (o->qhead < o->qn && o->w < o->r)
		o->a[o->w++] = o->q[o->qhead++];
	if (o->qhead == o->qn)
		o->qhead = o->qn = 0;
}

/* A start or end of a cluster member's range; ADDR is taken mod 2^64 and TOP is 1 only
 * for an end at 2^64, which sorts after every address. */
struct point {
	uint64_t addr;
	uint32_t m;
	uint8_t is_end, top;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->top != y->top)
		return x->top - y->top;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->is_end - y->is_end;
}

/* Work space of the cluster sweep, kept from one cluster to the next. Members are
 * numbered from 0 in the cluster; m[j].sym is the entry's index. */
struct sweep {
	struct symtab_segment *m;
	unsigned *prio;
	uint32_t *name;                /* equal names, equal numbers (from 0 in the cluster) */
	uint32_t *heap, *live_by_name, *slots;
	uint64_t *hash;
	uint8_t *ended, *lost;             /* LOST_* bits */
	struct point *pts;
	size_t cap, nslots;
	struct symtab_segment *frag;   /* the cluster's segments */
	size_t nfrag, frag_cap;
	struct namebuf buf[2];
};

static void sweep_reserve(struct sweep *w, size_t k)
{
	if (k <= w->cap)
		return;
	size_t cap = k > 2 * w->cap ? k : 2 * w->cap;
	w->m = xrealloc(w->m, cap * sizeof(*w->m));
	w->prio = xrealloc(w->prio, cap * sizeof(*w->prio));
	w->name = xrealloc(w->name, cap * sizeof(*w->name));
	w->heap = xrealloc(w->heap, cap * sizeof(*w->heap));
	w->live_by_name = xrealloc(w->live_by_name, cap * sizeof(*w->live_by_name));
	w->hash = xrealloc(w->hash, cap * sizeof(*w->hash));
	w->ended = xrealloc(w->ended, cap);
	w->lost = xrealloc(w->lost, cap);
	w->pts = xrealloc(w->pts, 2 * cap * sizeof(*w->pts));
	w->cap = cap;
}

static void sweep_free(struct sweep *w)
{
	free(w->m);
	free(w->prio);
	free(w->name);
	free(w->heap);
	free(w->live_by_name);
	free(w->hash);
	free(w->ended);
	free(w->lost);
	free(w->pts);
	free(w->slots);
	free(w->frag);
	free(w->buf[0].p);
	free(w->buf[1].p);
}

/* Numbers the names of the K members: equal names, equal numbers. */
static void number_names(const struct symtab *st, struct sweep *w, size_t k)
{
	size_t ns = 16;
	while (ns < 2 * k)
		ns *= 2;
	if (ns > w->nslots) {
		free(w->slots);
		w->slots = xmalloc(ns * sizeof(*w->slots));
		w->nslots = ns;
	}
	memset(w->slots, 0, ns * sizeof(*w->slots));   /* member + 1; 0 = empty */
	uint32_t names = 0;
	for (size_t j = 0; j < k; j++) {
		struct entry e, o;
		size_t len, olen;
		entry_at(st, w->m[j].sym, &e);
		const char *name = entry_name(st, &e, &w->buf[0], &len);
		uint64_t h = w->hash[j] = strtab_hash(name, len);
		size_t s = (size_t)h & (ns - 1);
		for (; w->slots[s]; s = (s + 1) & (ns - 1)) {
			uint32_t other = w->slots[s] - 1;
			if (w->hash[other] != h)
				continue;
			entry_at(st, w->m[other].sym, &o);
			const char *oname = entry_name(st, &o, &w->buf[1], &olen);
			if (olen == len && memcmp(oname, name, len) == 0)
				break;
		}
		if (w->slots[s]) {
			w->name[j] = w->name[w->slots[s] - 1];
		} else {
			w->slots[s] = (uint32_t)j + 1;
			w->name[j] = names++;
		}
	}
}

/* How member J lost addresses to TOP. A perf-map entry losing to a jitdump entry is the
 * documented policy (the dump has lines and code), and an entry repeated exactly (a map
 * and a dump of PHP or node describing the same code with the same name, a map listing an
 * entry twice) loses nothing: neither is an overlap. */
enum { LOST_OVERLAP = 1, LOST_OTHER = 2, LOST_SUPERSEDED = 4, LOST_DUPLICATE = 8, };

static unsigned lost_how(const struct sweep *w, uint32_t j, uint32_t top)
{
	if (w->prio[j] < w->prio[top])
		return LOST_SUPERSEDED;
	if (w->name[j] != w->name[top])
		return LOST_OVERLAP | LOST_OTHER;
	if (w->m[j].start == w->m[top].start && w->m[j].last == w->m[top].last)
		return LOST_DUPLICATE;
	return LOST_OVERLAP;
}

/* Heap order: higher priority class first, then the later entry. */
static int beats(const struct sweep *w, uint32_t a, uint32_t b)
{
	return w->prio[a] != w->prio[b] ? w->prio[a] > w->prio[b] : w->m[a].sym > w->m[b].sym;
}

static void heap_push(const struct sweep *w, uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	h[i] = v;
	while (i > 0 && beats(w, h[i], h[(i - 1) / 2])) {
		uint32_t t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void heap_pop(const struct sweep *w, uint32_t *h, size_t *n)
{
	h[0] = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && beats(w, h[l], h[m]))
			m = l;
		if (r < *n && beats(w, h[r], h[m]))
			m = r;
		if (m == i)
			break;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Appends [A, B] (B inclusive, so that a segment can end at 2^64 - 1). */
static void emit(struct sweep *w, uint64_t a, uint64_t b, uint32_t sym, int contested)
{
	struct symtab_segment *prev = w->nfrag ? &w->frag[w->nfrag - 1] : NULL;
	if (prev && prev->last + 1 == a && prev->sym == sym && prev->contested == (uint32_t)contested) {
		prev->last = b;
		return;
	}
	XGROW(w->frag, w->frag_cap, w->nfrag + 1);
	w->frag[w->nfrag++] = (struct symtab_segment){ a, b, sym, (uint32_t)contested };
}

/* The K members of one cluster (w->m) into segments (w->frag), with their statistics. */
static void sweep_cluster(struct symtab *st, struct sweep *w, size_t k)
{
	for (size_t j = 0; j < k; j++) {
		w->prio[j] = st->sources[source_of(st, w->m[j].sym)].prio;
		uint64_t end = w->m[j].last + 1;   /* 0: 2^64 */
		w->pts[2 * j] = (struct point){ w->m[j].start, (uint32_t)j, 0, 0 };
		w->pts[2 * j + 1] = (struct point){ end, (uint32_t)j, 1, end == 0 };
	}
	number_names(st, w, k);
	qsort(w->pts, 2 * k, sizeof(*w->pts), cmp_point);
	memset(w->ended, 0, k);
	memset(w->lost, 0, k);
	memset(w->live_by_name, 0, k * sizeof(*w->live_by_name));
	w->nfrag = 0;
	size_t hn = 0, distinct = 0, np = 2 * k;
	for (size_t i = 0; i < np;) {
		uint64_t at = w->pts[i].addr;
		uint8_t at_top = w->pts[i].top;
		for (; i < np && w->pts[i].addr == at && w->pts[i].top == at_top; i++) {
			uint32_t s = w->pts[i].m, nm = w->name[s];
			if (w->pts[i].is_end) {
				w->ended[s] = 1;
				if (--w->live_by_name[nm] == 0)
					distinct--;
			} else {
				heap_push(w, w->heap, &hn, s);
				if (w->live_by_name[nm]++ == 0)
					distinct++;
			}
		}
		while (hn && w->ended[w->heap[0]])
			heap_pop(w, w->heap, &hn);
		if (!hn || i == np)
			continue;
		uint64_t next = w->pts[i].addr;   /* mod 2^64: 0 for the end at 2^64 */
		uint32_t top = w->heap[0];
		emit(w, at, next - 1, w->m[top].sym, distinct > 1);
		/* Bounded, so that a hostile map with deep overlaps stays O(n log n); the counts
		 * are then lower bounds. */
		for (size_t h = 1; h < hn && h < 256; h++)
			if (!w->ended[w->heap[h]])
				w->lost[w->heap[h]] |= lost_how(w, w->heap[h], top);
	}
	for (size_t j = 0; j < k; j++) {
		st->stats.shadowed += (w->lost[j] & LOST_OVERLAP) != 0;
		st->stats.shadowed_other += (w->lost[j] & LOST_OTHER) != 0;
		st->stats.superseded += (w->lost[j] & LOST_SUPERSEDED) != 0;
		st->stats.duplicates += w->lost[j] == LOST_DUPLICATE;
	}
	for (size_t i = 0; i < w->nfrag; i++)
		st->stats.contested += w->frag[i].contested;
}

void symtab_finish(struct symtab *st)
{
	settle_places(st);
	size_t n = st->nsyms;
	struct segout o = { .a = st->segs };
	st->segs = NULL;
	sort_segments(o.a, n);
	/* A cluster: entries sorted by start, each but the first starting within the ones
	 * before it. The others are segments as they are. */
	struct sweep w = { 0 };
	while (o.r < n) {
		size_t k = 1;
		uint64_t last = o.a[o.r].last;
		while (o.r + k < n && o.a[o.r + k].start <= last) {
			if (o.a[o.r + k].last > last)
				last = o.a[o.r + k].last;
			k++;
		}
		if (k == 1) {
			seg_put(&o, o.a[o.r++]);
			seg_flush(&o);
			continue;
		}
		sweep_reserve(&w, k);
		memcpy(w.m, o.a + o.r, k * sizeof(*w.m));
		o.r += k;
		sweep_cluster(st, &w, k);
		for (size_t i = 0; i < w.nfrag; i++)
			seg_put(&o, w.frag[i]);
		seg_flush(&o);
	}
	sweep_free(&w);
	size_t total = o.w + (o.qn - o.qhead);
	if (total > n)
		o.a = xrealloc(o.a, total * sizeof(*o.a) + 1);
	if (o.qn > o.qhead)
		memcpy(o.a + o.w, o.q + o.qhead, (o.qn - o.qhead) * sizeof(*o.a));
	free(o.q);
	st->segs = total < n ? xrealloc(o.a, total * sizeof(*o.a) + 1) : o.a;
	st->nsegs = total;
	st->stats.segments = total;
}

const struct symtab_segment *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->segs[mid].last < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->nsegs && st->segs[lo].start <= addr)
		return &st->segs[lo];
	return NULL;
}

const struct symbol *symtab_symbol(const struct symtab *st, uint32_t i) { return build(st, i); }
struct symbol *symtab_symbol_mut(struct symtab *st, uint32_t i) { return build(st, i); }
struct symbol *symtab_last(struct symtab *st) { return st->nsyms ? build(st, (uint32_t)(st->nsyms - 1)) : NULL; }
void *symtab_alloc(struct symtab *st, size_t size) { return arena_alloc(&st->arena, size); }

const char *symtab_intern_file(struct symtab *st, const char *s, size_t len)
{
	return strtab_get(&st->files, strtab_intern(&st->files, s, len, NULL))->str;
}

void symtab_set_paths(struct symtab *st, const struct pathmap *pm)
{
	st->paths = pathmap_count(pm) ? pm : NULL;
}

/* A dump repeats a few file names in thousands of rows: each is mapped once. */
const char *symtab_intern_path(struct symtab *st, const char *s, size_t len, size_t *out_len)
{
	if (!st->paths) {
		*out_len = len;
		return symtab_intern_file(st, s, len);
	}
	int added;
	uint32_t k = strtab_intern(&st->raw_files, s, len, &added);
	if (added) {
		XGROW(st->file_as, st->file_as_cap, (size_t)k + 1);
		size_t n;
		const char *m = pathmap_path(st->paths, s, len, &st->mapped, &n);
		st->stats.paths_mapped_files += m != s;
		st->file_as[k] = symtab_intern_file(st, m, n);
	}
	*out_len = strlen(st->file_as[k]);
	return st->file_as[k];
}

const struct symline *symtab_line(const struct symbol *sym, uint64_t addr)
{
	if (!sym->nlines)
		return NULL;
	size_t lo = 0, hi = sym->nlines;   /* the last row with addr <= ADDR */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (sym->lines[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &sym->lines[lo];   /* before the first row: the first row */
}
size_t symtab_count(const struct symtab *st) { return st->nsyms; }
const struct symtab_source *symtab_source(const struct symtab *st, uint32_t i) { return &st->sources[i]; }
const struct symtab_stats *symtab_stats(const struct symtab *st) { return &st->stats; }
