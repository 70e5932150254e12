/* resolve.c - the identities of a part's input functions and the positions their code is
 * shown at (resolve.h): pseudo-function names parsed, symbols looked up, names built and
 * handed to the writer. Owns the resolutions, the file map, the moved identities, the
 * suffixes and a scratch name; the symbols and the writer are augment.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/augment_stats.h"
#include "augment/resolve.h"
#include "augment/stream.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/pseudo_name.h"
#include "core/xalloc.h"
#include "jit/symtab.h"

void resolve_init(struct resolver *r, const struct stream *s, int keep_addresses)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->keep_addresses = keep_addresses;
	r->place_sym = -1;
	idmap_init(&r->moved_ids);
	strtab_init(&r->suffixes);
}

void resolve_free(struct resolver *r)
{
	free(r->fns);
	free(r->spans);
	free(r->pseudo);
	strtab_free(&r->suffixes);
	free(r->file_out);
	free(r->obj_out);
	idmap_free(&r->moved_ids);
	free(r->name);
}

void resolve_begin_part(struct resolver *r)
{
	r->last_row_file = NULL;
	strtab_clear(&r->suffixes);
	idmap_clear(&r->moved_ids);
	r->nspans = 0;
	r->spans_repeat = 0;
	r->nfns = 0;
	r->npseudo = 0;
	if (r->file_out)
		memset(r->file_out, 0, r->file_out_cap * sizeof(*r->file_out));
	if (r->obj_out)
		memset(r->obj_out, 0, r->obj_out_cap * sizeof(*r->obj_out));
}

const struct symtab_segment *resolve_lookup(struct resolver *r, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ULL;
	struct resolve_hit *e = &r->hits[h >> (64 - RESOLVE_HITS_BITS)];
	if (e->key != addr + 1)   /* (the address 2^64 - 1 is never kept) */
		*e = (struct resolve_hit){ addr + 1, symtab_lookup(r->s->st, addr) };
	return e->seg;
}

/* ---- names ---- */

static inline void name_put(struct resolver *r, const char *s, size_t n)
{
	XGROW(r->name, r->name_cap, r->name_len + n + 1);
	memcpy(r->name + r->name_len, s, n);
	r->name_len += n;
	r->name[r->name_len] = '\0';
}

/* The name a symbol's code gets in the output. */
static void put_symbol(struct resolver *r, const struct symbol *s)
{
	name_put(r, s->name, s->name_len);
	if (r->keep_addresses) {
		char a[40];
		int n = snprintf(a, sizeof(a), " [0x%llx]", (unsigned long long)s->start);
		name_put(r, a, (size_t)n);
	}
}

static void put_symbol_name(struct resolver *r, uint32_t sym)
{
	put_symbol(r, symtab_symbol(r->s->st, sym));
}

/* The symbol of the first caller part of SUFFIX ("'2'caller'...") from *P on that is a JIT
 * address, with *P at that part's "'" and *Q at its end; NULL if none. *P is at a "'" or
 * the end. An address part starts "'0x", and an "x" is rarer than a "'" (in the big node
 * profile's suffixes 0.39 M against 1.0 M): the scan goes from "x" to "x". */
static const struct symtab_segment *next_jit_part(struct resolver *r, const char **p,
						  const char **q, const char *end)
{
	const char *from = *p;
	for (const char *x = from; x < end; x++) {
		if (!(x = memchr(x, 'x', (size_t)(end - x))))
			return NULL;
		if (x - from < 2 || x[-1] != '0' || x[-2] != '\'')
			continue;
		/* the part is an address when it is one to its end, which pseudo_name_parse()
		 * finds from the length its digits have (a "'" or the end after them) */
		const char *s = x - 2;
		uint64_t addr;
		size_t head;
		const struct symtab_segment *seg;
		if (pseudo_name_parse(s + 1, (size_t)(end - s - 1), &addr, &head) &&
		    (seg = resolve_lookup(r, addr))) {
			*p = s;
			*q = s + 1 + head;
			return seg;
		}
	}
	return NULL;
}

/* Appends SUFFIX with every caller part that is a JIT address renamed, if one is: returns
 * the number of parts renamed; with 0 nothing was appended. The parts in between are
 * copied in one piece: on the big node profile 2.6 M parts are looked at, and 0.4 M are
 * addresses. */
static int put_suffix(struct resolver *r, const char *suffix, size_t len)
{
	int renamed = 0;
	const char *p = suffix, *q, *end = suffix + len, *kept = suffix;
	const struct symtab_segment *seg;
	while ((seg = next_jit_part(r, &p, &q, end))) {
		name_put(r, kept, (size_t)(p - kept));
		name_put(r, "'", 1);
		put_symbol_name(r, seg->sym);
		kept = p = q;
		renamed++;
	}
	if (renamed)
		name_put(r, kept, (size_t)(end - kept));
	return renamed;
}

/* The symbol whose code the part "'0xADDR..." at S (before END) names, or NULL, with
 * *HEAD the length of "0xADDR". A part of 16 digits is looked up by its text first: the
 * same JIT callers come back in name after name, and their digits, the segment and the
 * symbol were each a load that missed the cache. */
static const struct symbol *part_symbol(struct resolver *r, const char *s, const char *end,
					size_t *head)
{
	const char *d = s + 3;   /* the first digit */
	uint64_t k0 = 0, k1 = 0;
	struct resolve_part_hit *e = NULL;
	/* the 16-digit form as pseudo_name_parse() tells it: no "'" after 8 digits, one (or
	 * the end) after 16; its digits are never all zero bytes, the empty entry's key */
	if (end - d >= 16 && d[8] != '\'' && (end - d == 16 || d[16] == '\'')) {
		memcpy(&k0, d, 8);
		memcpy(&k1, d + 8, 8);
		uint64_t h = (k0 ^ (k1 * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
		e = &r->part_hits[h >> (64 - RESOLVE_PART_HITS_BITS)];
		if (e->k0 == k0 && e->k1 == k1) {
			*head = 18;
			return e->y;
		}
	}
	uint64_t addr;
	const struct symtab_segment *seg = NULL;
	if (pseudo_name_parse(s + 1, (size_t)(end - s - 1), &addr, head))
		seg = resolve_lookup(r, addr);
	const struct symbol *y = seg ? symtab_symbol(r->s->st, seg->sym) : NULL;
	if (e)
		*e = (struct resolve_part_hit){ k0, k1, y };
	return y;
}

/* Appends the name of DEF with every caller part that is a JIT address renamed, if one is
 * (the reader found where each part that may be one begins: the "'" of each "'0x"):
 * returns the number renamed; with 0 nothing was appended. */
static int put_parts(struct resolver *r, const struct cg_def *def)
{
	int renamed = 0;
	const char *name = def->name, *end = name + def->len, *kept = name;
	for (size_t i = 0; i < def->nparts; i++) {
		const char *s = name + def->parts[i];
		size_t head;
		const struct symbol *y;
		/* the part is an address when it is one to its end (next_jit_part()) */
		if (s < kept || !(y = part_symbol(r, s, end, &head)))
			continue;
		name_put(r, kept, (size_t)(s + 1 - kept));
		put_symbol(r, y);
		kept = s + 1 + head;
		renamed++;
	}
	if (renamed)
		name_put(r, kept, (size_t)(end - kept));
	return renamed;
}

static uint32_t jit_identity(struct resolver *r, uint32_t sym, const char *suffix, size_t slen,
			     const struct cgw_id *id)
{
	struct cgw *w = r->s->w;
	const struct symbol *s = symtab_symbol(r->s->st, sym);
	const char *object = s->object ? s->object : symtab_source(r->s->st, s->source)->object;
	r->name_len = 0;
	put_symbol_name(r, sym);
	if (!put_suffix(r, suffix, slen))
		name_put(r, suffix, slen);
	uint32_t obj = cgw_obj(w, object, strlen(object));
	uint32_t file = s->file ? cgw_file(w, s->file, s->file_len) : cgw_file(w, "???", 3);
	return cgw_fn(w, r->name, r->name_len, obj, file, id);
}

/* Identities that no definition of the input makes get their ids when the part ends. */
static const struct cgw_id later = { CGW_ID_LATER, 0 };

uint32_t resolve_moved_identity(struct resolver *r, const struct resolve_fn *x, uint32_t fn,
				uint32_t sym)
{
	uint64_t key = (uint64_t)fn << 32 | sym;
	uint32_t out = idmap_get(&r->moved_ids, key);
	if (out == UINT32_MAX) {
		out = jit_identity(r, sym, x->suffix ? x->suffix : "", x->suffix_len, &later);
		idmap_put(&r->moved_ids, key, out);
	}
	return out;
}

uint32_t resolve_foreign_identity(struct resolver *r, const struct resolve_fn *x, uint64_t entry)
{
	struct cgw *w = r->s->w;
	char a[24];
	int n = snprintf(a, sizeof(a), "0x%016llx", (unsigned long long)entry);
	r->name_len = 0;
	name_put(r, a, (size_t)n);
	if (!put_suffix(r, x->suffix ? x->suffix : "", x->suffix_len))
		name_put(r, x->suffix ? x->suffix : "", x->suffix_len);
	uint32_t unknown = cgw_obj(w, "???", 3);
	return cgw_fn(w, r->name, r->name_len, unknown, cgw_file(w, "???", 3), &later);
}

/* The writer's index of the part's input object or file IN (of space SP), through MAP
 * (index + 1; 0: not mapped yet), which grows to CAP entries. */
static uint32_t map_name(struct resolver *r, uint32_t **map, size_t *cap, enum cg_space sp,
			 uint32_t in)
{
	if (in >= *cap) {
		size_t old = *cap;
		*map = xgrow_array(*map, cap, (size_t)in + 1, sizeof(**map));
		memset(*map + old, 0, (*cap - old) * sizeof(**map));
	}
	if ((*map)[in] == 0) {
		const struct strtab_entry *e = cg_names_get(r->s->names, sp, in);
		(*map)[in] = (sp == SP_OBJ ? cgw_obj(r->s->w, e->str, e->len)
					   : cgw_file(r->s->w, e->str, e->len)) + 1;
	}
	return (*map)[in] - 1;
}

uint32_t resolve_file_slow(struct resolver *r, uint32_t in_file)
{
	return map_name(r, &r->file_out, &r->file_out_cap, SP_FILE, in_file);
}

/* ---- definitions ---- */

/* A name that is not a JIT address, in object OBJ: kept, with JIT callers renamed. */
static uint32_t define_plain(struct resolver *r, const struct cg_def *def, const struct cgw_id *id)
{
	struct cgw *w = r->s->w;
	uint32_t o = map_name(r, &r->obj_out, &r->obj_out_cap, SP_OBJ, def->obj);
	uint32_t file = resolve_file(r, def->file);
	/* Only --separate-callers names have parts: other names are kept as they are. */
	r->name_len = 0;
	if (def->nparts && put_parts(r, def)) {
		r->s->rep->renamed_callers++;
		return cgw_fn_copied(w, r->name, r->name_len, o, file, id);
	}
	/* Borrowed until the record ends (cgw_settle), not interned: that would hash every
	 * name of the profile. A name the input defines under two ids (callgrind's
	 * --separate-callers can) is then written under two ids, one key for kcachegrind
	 * and callgrind_annotate (docs/formats.md 3.1, 3.3); JIT names are interned
	 * (jit_identity), so each is one identity (README rule 3). */
	return cgw_fn_borrowed(w, def->name, def->len, o, file, id);
}

/* Room for input function FN: the entries up to it are zeroed (not defined), not the whole
 * doubled capacity, which would cost memory. */
static void reserve_fn(struct resolver *r, uint32_t fn)
{
	if (fn < r->nfns)
		return;
	size_t n = (size_t)fn + 1;
	XGROW(r->fns, r->fns_cap, 5 * n);
	memset(r->fns + 5 * r->nfns, 0, 5 * (n - r->nfns));
	r->nfns = n;
}

/* Input function FN's flags become FLAGS. */
static void set_flags(struct resolver *r, uint32_t fn, uint8_t flags)
{
	r->fns[5 * (size_t)fn + 4] = flags;
}

/* Input function FN's entry: flags FLAGS, writer function or pseudo index REF. */
static void set_fn(struct resolver *r, uint32_t fn, uint8_t flags, uint32_t ref)
{
	unsigned char *e = r->fns + 5 * (size_t)fn;
	e[0] = (unsigned char)ref;
	e[1] = (unsigned char)(ref >> 8);
	e[2] = (unsigned char)(ref >> 16);
	e[3] = (unsigned char)(ref >> 24);
	e[4] = flags;
}

void resolve_define(struct resolver *r, const struct cg_def *def)
{
	uint32_t fn = def->fn;
	const struct cgw_id id = { def->compressed ? CGW_ID_INPUT : CGW_ID_FRESH, def->id };
	reserve_fn(r, fn);
	const struct strtab_entry *obj = cg_names_get(r->s->names, SP_OBJ, def->obj);
	int unknown_obj = obj->len == 3 && memcmp(obj->str, "???", 3) == 0;
	uint8_t flags = RESOLVE_DONE;
	flags |= unknown_obj ? 0 : RESOLVE_ELF;
	flags |= unknown_obj && r->s->instr >= 0 ? RESOLVE_LOOKUP : 0;
	uint64_t addr;
	size_t head;
	if (!unknown_obj || !pseudo_name_parse(def->name, def->len, &addr, &head)) {
		set_fn(r, fn, flags, define_plain(r, def, &id));   /* RESOLVE_PLAIN */
		return;
	}
	r->s->rep->pseudo_functions++;
	XGROW(r->pseudo, r->pseudo_cap, r->npseudo + 1);
	struct resolve_pseudo *p = &r->pseudo[r->npseudo];
	p->sym = -1;
	p->suffix = strtab_intern(&r->suffixes, def->name + head, def->len - head, NULL);
	set_fn(r, fn, flags | RESOLVE_UNKNOWN << RESOLVE_KIND_SHIFT, (uint32_t)r->npseudo++);
	const struct symtab_segment *seg = resolve_lookup(r, addr);
	if (seg) {
		const struct strtab_entry *e = strtab_get(&r->suffixes, p->suffix);
		set_flags(r, fn, flags | RESOLVE_JIT << RESOLVE_KIND_SHIFT);
		p->sym = (int32_t)seg->sym;
		p->out = jit_identity(r, seg->sym, e->str, e->len, &id);
		r->s->rep->resolved++;
		return;
	}
	p->out = define_plain(r, def, &id);
}

/* ---- rule 9's spans ---- */

void resolve_note_block(struct resolver *r, uint32_t fn, uint64_t lo, uint64_t hi)
{
	if (!symtab_overlaps(r->s->st, lo, hi))
		return;
	r->spans_repeat |= (resolve_flags(r, fn) & RESOLVE_SPAN) != 0;
	set_flags(r, fn, resolve_flags(r, fn) | RESOLVE_SPAN);
	XGROW(r->spans, r->spans_cap, r->nspans + 1);
	r->spans[r->nspans++] = (struct resolve_span){
		lo, fn, hi - lo >= RESOLVE_WIDE ? RESOLVE_WIDE : (uint32_t)(hi - lo) };
}

static int span_before(const struct resolve_span *x, const struct resolve_span *y)
{
	return x->fn != y->fn ? x->fn < y->fn : x->lo < y->lo;
}

static void sift_down(struct resolve_span *v, size_t n, size_t i)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && span_before(&v[c], &v[c + 1]))
			c++;
		if (!span_before(&v[i], &v[c]))
			return;
		struct resolve_span t = v[i];
		v[i] = v[c];
		v[c] = t;
	}
}

/* Sorts V by function, then lowest address, in place: qsort() would take a copy of the
 * spans, at the part's end, when memory peaks. */
static void sort_spans(struct resolve_span *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, n, i);
	for (size_t k = n; k-- > 1;) {
		struct resolve_span t = v[0];
		v[0] = v[k];
		v[k] = t;
		sift_down(v, k, 0);
	}
}

/* The highest address of span X, or UINT64_MAX for a wide one. */
static uint64_t span_hi(const struct resolve_span *x)
{
	return x->width == RESOLVE_WIDE ? UINT64_MAX : x->lo + x->width;
}

void resolve_merge_spans(struct resolver *r)
{
	if (!r->spans_repeat)
		return;   /* one entry per function already (callgrind writes one block each) */
	r->spans_repeat = 0;
	sort_spans(r->spans, r->nspans);
	size_t n = 0;
	for (size_t i = 0; i < r->nspans; i++) {
		const struct resolve_span *x = &r->spans[i];
		if (n == 0 || r->spans[n - 1].fn != x->fn) {
			r->spans[n++] = *x;
			continue;
		}
		struct resolve_span *m = &r->spans[n - 1];
		/* sorted by lo: M keeps its lo; the highest end wins, and wide stays wide */
		uint64_t hi = span_hi(m) > span_hi(x) ? span_hi(m) : span_hi(x);
		m->width = hi - m->lo >= RESOLVE_WIDE ? RESOLVE_WIDE : (uint32_t)(hi - m->lo);
	}
	r->nspans = n;
}

/* ---- positions ---- */

void resolve_place(struct resolver *r, int64_t sym, uint32_t out, const uint64_t *pos,
		   uint32_t in_file, struct resolve_where *at)
{
	const struct stream *s = r->s;
	at->pos = pos;
	if (sym < 0) {
		at->file = resolve_file(r, in_file);
		return;
	}
	/* a JIT block's lines come one after another (symtab_symbol() is a table walk) */
	if (sym != r->place_sym) {
		r->place_y = symtab_symbol(s->st, (uint32_t)sym);
		r->place_sym = sym;
	}
	const struct symbol *y = r->place_y;
	at->file = cgw_fn_get(s->w, out).file;
	uint64_t line = y->line;
	const struct symline *row = s->instr >= 0 ? symtab_line(y, pos[s->instr]) : NULL;
	if (row) {
		line = row->line;
		if (row->file != r->last_row_file) {
			r->last_row_file = row->file;
			r->last_row_out = cgw_file(s->w, row->file, row->file_len);
		}
		at->file = r->last_row_out;
	}
	if (s->line < 0)
		return;
	for (unsigned i = 0; i < s->npos; i++)   /* at most three: no memcpy() call */
		at->buf[i] = pos[i];
	at->buf[s->line] = line;
	at->pos = at->buf;
}
