/* symtab.c - the symbol table's front (symtab.h): sources, adding an entry (the range
 * checked, the name made fit for a text line and its path mapped), which source an entry
 * came from, symtab_finish(), the accessors and the interned file names. An entry is kept
 * as bytes of a compact stream (symtab_stream.c, some 27 bytes a node map line); a struct
 * symbol exists only once asked for (symtab_built.c); the lookup index is symtab_index.c.
 * Owns everything a symtab holds, through those parts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/pathmap.h"
#include "jit/symtab.h"
#include "jit/symtab_impl.h"
#include "jit/symtab_stream.h"

struct symtab *symtab_new(void)
{
	struct symtab *st = xcalloc(1, sizeof(*st));
	symtab_stream_init(&st->stream);
	strtab_init(&st->files);
	strtab_init(&st->raw_files);
	st->built = symtab_built_new();
	return st;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	symtab_stream_free(&st->stream);
	free(st->runs);
	free(st->sources);
	free(st->segs);
	strtab_free(&st->files);
	strtab_free(&st->raw_files);
	free(st->file_as);
	pathmap_buf_free(&st->mapped);
	free(st->clean.p);
	arena_free(&st->arena);
	symtab_built_free(st->built);
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

uint32_t symtab_source_of(const struct symtab *st, size_t i)
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

int symtab_add(struct symtab *st, uint32_t source, const struct symtab_entry *e, struct diag *d)
{
	struct symtab_source *src = &st->sources[source];
	if (e->size == 0) {
		src->skipped++;
		return 0;
	}
	/* A range may end exactly at 2^64 (its last byte at 2^64 - 1), not past it. */
	if (e->start - 1 > UINT64_MAX - e->size && e->start != 0)
		return entry_error(src, e->source_line, d,
				   "range 0x%llx + 0x%llx goes past the end of the address space",
				   (unsigned long long)e->start, (unsigned long long)e->size);
	size_t i = st->stream.n;
	if (i >= UINT32_MAX / 2)
		return entry_error(src, e->source_line, d, "more than 2^31 symbols");
	struct symtab_entry n = *e;   /* with the name as it is kept */
	/* An empty name gets the address, so that unnamed blobs stay apart. */
	char fallback[48];
	if (n.name_len == 0) {
		n.name_len = (size_t)snprintf(fallback, sizeof(fallback), "[JIT code at 0x%llx]",
					      (unsigned long long)n.start);
		n.name = fallback;
	}
	if (!st->nruns || st->runs[st->nruns - 1].source != source) {
		XGROW(st->runs, st->runs_cap, st->nruns + 1);
		st->runs[st->nruns++] = (struct symtab_run){ (uint32_t)i, source };
	}
	if (has_control((const unsigned char *)n.name, n.name_len)) {
		XGROW(st->clean.p, st->clean.cap, n.name_len);
		memcpy(st->clean.p, n.name, n.name_len);
		clean_name((unsigned char *)st->clean.p, n.name_len);
		n.name = st->clean.p;
	}
	/* after the cleaning: the map applies to the name as it is written */
	if (st->paths) {
		const char *m = pathmap_name(st->paths, n.name, n.name_len, &st->mapped, &n.name_len);
		st->stats.paths_mapped += m != n.name;
		n.name = m;
	}
	symtab_stream_put(&st->stream, &n);
	/* The index's raw material: symtab_finish() sorts it in place. */
	XGROW(st->segs, st->segs_cap, i + 1);
	st->segs[i] = (struct symtab_segment){ n.start, n.start + n.size - 1, (uint32_t)i, 0 };
	src->entries++;
	st->stats.symbols++;
	return 0;
}

void symtab_finish(struct symtab *st)
{
	symtab_built_settle(st);
	symtab_index_build(st);
}

const struct symbol *symtab_symbol(const struct symtab *st, uint32_t i)
{
	return symtab_built_get(st, i);
}

struct symbol *symtab_symbol_mut(struct symtab *st, uint32_t i)
{
	return symtab_built_get(st, i);
}

struct symbol *symtab_last(struct symtab *st)
{
	return st->stream.n ? symtab_built_get(st, (uint32_t)(st->stream.n - 1)) : NULL;
}

void *symtab_alloc(struct symtab *st, size_t size)
{
	return arena_alloc(&st->arena, size);
}

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

size_t symtab_count(const struct symtab *st)
{
	return st->stream.n;
}

const struct symtab_source *symtab_source(const struct symtab *st, uint32_t i)
{
	return &st->sources[i];
}

const struct symtab_stats *symtab_stats(const struct symtab *st)
{
	return &st->stats;
}
