/* symtab.c - symbols, and a sorted array of disjoint segments built by one sweep.
 * The sweep walks the start and end points in address order, keeps the live entries in a
 * max-heap ordered by (priority class, insertion order) and gives each elementary range
 * to the heap's top: O(n log n), whatever the overlaps. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "jitname.h"
#include "strtab.h"
#include "symtab.h"
#include "xalloc.h"

struct symtab {
	struct symbol *syms;
	size_t nsyms, cap;
	struct symtab_source *sources;
	size_t nsources, sources_cap;
	struct strtab names;
	struct strtab files;
	struct arena arena;
	struct symtab_segment *segs;
	size_t nsegs;
	struct symtab_stats stats;
};

struct symtab *symtab_new(void)
{
	struct symtab *st = xcalloc(1, sizeof(*st));
	strtab_init(&st->names);
	strtab_init(&st->files);
	return st;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->sources);
	free(st->segs);
	strtab_free(&st->names);
	strtab_free(&st->files);
	arena_free(&st->arena);
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
	/* A name becomes part of a text line: control bytes (a jitdump name may hold any byte
	 * but NUL) are written as '_', as wasmtime does for its perf maps; an empty name gets
	 * the address, so that unnamed blobs stay apart. */
	char fallback[48], small[256];
	char *clean = len <= sizeof(small) ? small : xmalloc(len);
	for (size_t i = 0; i < len; i++)
		clean[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '_' : name[i];
	const char *use = clean;
	if (len == 0) {
		len = (size_t)snprintf(fallback, sizeof(fallback), "[JIT code at 0x%llx]",
				       (unsigned long long)start);
		use = fallback;
	}
	XGROW(st->syms, st->cap, st->nsyms + 1);
	struct symbol *s = &st->syms[st->nsyms++];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->size = size;
	s->name_id = strtab_intern(&st->names, use, len, NULL);
	if (clean != small)
		free(clean);
	s->name = strtab_get(&st->names, s->name_id)->str;
	s->name_len = len;
	s->source = source;
	s->source_line = source_line;
	struct jitname jn;
	if (jitname_parse(s->name, len, &jn)) {
		s->file = jn.file;
		s->file_len = jn.file_len;
		s->line = jn.line;
	}
	src->entries++;
	st->stats.symbols++;
	return 0;
}

/* A start or end of a range; ADDR is taken mod 2^64 and TOP is 1 only for an end at
 * 2^64, which sorts after every address. */
struct point {
	uint64_t addr;
	uint32_t sym;
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

/* Heap order: higher priority class first, then the later entry. */
static int beats(const struct symtab *st, uint32_t a, uint32_t b)
{
	unsigned pa = st->sources[st->syms[a].source].prio, pb = st->sources[st->syms[b].source].prio;
	return pa != pb ? pa > pb : a > b;
}

static void heap_push(const struct symtab *st, uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	h[i] = v;
	while (i > 0 && beats(st, h[i], h[(i - 1) / 2])) {
		uint32_t t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void heap_pop(const struct symtab *st, uint32_t *h, size_t *n)
{
	h[0] = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && beats(st, h[l], h[m]))
			m = l;
		if (r < *n && beats(st, h[r], h[m]))
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
static void emit(struct symtab *st, size_t *cap, uint64_t a, uint64_t b, uint32_t sym, int contested)
{
	struct symtab_segment *prev = st->nsegs ? &st->segs[st->nsegs - 1] : NULL;
	if (prev && prev->last + 1 == a && prev->sym == sym && prev->contested == (uint32_t)contested) {
		prev->last = b;
		return;
	}
	XGROW(st->segs, *cap, st->nsegs + 1);
	st->segs[st->nsegs++] = (struct symtab_segment){ a, b, sym, (uint32_t)contested };
}

void symtab_finish(struct symtab *st)
{
	size_t n = st->nsyms, segcap = 0;
	struct point *pts = xmalloc(2 * n * sizeof(*pts) + 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t end = st->syms[i].start + st->syms[i].size;   /* 0: 2^64 */
		pts[2 * i] = (struct point){ st->syms[i].start, (uint32_t)i, 0, 0 };
		pts[2 * i + 1] = (struct point){ end, (uint32_t)i, 1, end == 0 };
	}
	qsort(pts, 2 * n, sizeof(*pts), cmp_point);
	uint32_t *heap = xmalloc(n * sizeof(*heap) + 1);
	size_t hn = 0;
	uint8_t *ended = xcalloc(n + 1, 1);
	uint64_t *won = xcalloc(n + 1, sizeof(*won));
	uint8_t *lost_other = xcalloc(n + 1, 1);
	uint32_t *live_by_name = xcalloc(st->names.count + 1, sizeof(*live_by_name));
	size_t live = 0, distinct = 0;
	for (size_t k = 0; k < 2 * n;) {
		uint64_t at = pts[k].addr;
		uint8_t at_top = pts[k].top;
		for (; k < 2 * n && pts[k].addr == at && pts[k].top == at_top; k++) {
			uint32_t s = pts[k].sym;
			uint32_t nm = st->syms[s].name_id;
			if (pts[k].is_end) {
				ended[s] = 1;
				live--;
				if (--live_by_name[nm] == 0)
					distinct--;
			} else {
				heap_push(st, heap, &hn, s);
				live++;
				if (live_by_name[nm]++ == 0)
					distinct++;
			}
		}
		while (hn && ended[heap[0]])
			heap_pop(st, heap, &hn);
		if (!hn || k == 2 * n)
			continue;
		uint64_t next = pts[k].addr;   /* mod 2^64: 0 for the end at 2^64 */
		uint32_t top = heap[0];
		won[top] += next - at;
		emit(st, &segcap, at, next - 1, top, distinct > 1);
		/* Bounded, so that a hostile map with deep overlaps stays O(n log n); the count
		 * is then a lower bound. */
		if (distinct > 1)
			for (size_t i = 0; i < hn && i < 256; i++)
				if (!ended[heap[i]] && st->syms[heap[i]].name_id != st->syms[top].name_id)
					lost_other[heap[i]] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (won[i] < st->syms[i].size)
			st->stats.shadowed++;
		if (lost_other[i])
			st->stats.shadowed_other++;
	}
	for (size_t i = 0; i < st->nsegs; i++)
		st->stats.contested += st->segs[i].contested;
	st->stats.segments = st->nsegs;
	free(pts);
	free(heap);
	free(ended);
	free(won);
	free(lost_other);
	free(live_by_name);
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

const struct symbol *symtab_symbol(const struct symtab *st, uint32_t i) { return &st->syms[i]; }
struct symbol *symtab_symbol_mut(struct symtab *st, uint32_t i) { return &st->syms[i]; }
struct symbol *symtab_last(struct symtab *st) { return st->nsyms ? &st->syms[st->nsyms - 1] : NULL; }
void *symtab_alloc(struct symtab *st, size_t size) { return arena_alloc(&st->arena, size); }

const char *symtab_intern_file(struct symtab *st, const char *s, size_t len)
{
	return strtab_get(&st->files, strtab_intern(&st->files, s, len, NULL))->str;
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
