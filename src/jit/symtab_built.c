/* symtab_built.c - struct symbol on request: a symbol is built from its entry in the
 * stream (symtab_stream.c) on the first request for it and kept, so that most symbols of
 * a big map, never asked for, cost no more than their entry; and at symtab_finish() one
 * file and first line per name from the line rows of all its symbols. Owns the symbols,
 * their interned names and the places. */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/jitname.h"
#include "jit/symtab.h"
#include "jit/symtab_impl.h"
#include "jit/symtab_stream.h"

/* The struct symbols built so far, by entry index in blocks of BUILT_BLOCK pointers,
 * each allocated when the first of its symbols is built (a profile that hits a few
 * symbols of a big map pays little). Behind a pointer, so that the const accessors can
 * fill it: building is invisible to callers but for the memory it takes. */
enum { BUILT_BLOCK = 512 };

/* The file and first line that every symbol of one name gets (symtab_built_settle()). */
struct place {
	const char *file;              /* NULL: the name has none */
	size_t file_len;
	uint64_t line;
};

struct symtab_built {
	struct strtab names;           /* equal names share an id */
	struct symtab_namebuf buf;
	struct arena arena;            /* the struct symbols: their addresses never change */
	struct symbol ***block;
	size_t nblocks;
	struct place *places;          /* by name id, for the names known at symtab_finish() */
	size_t nplaces;
};

struct symtab_built *symtab_built_new(void)
{
	struct symtab_built *b = xcalloc(1, sizeof(*b));
	strtab_init(&b->names);
	return b;
}

void symtab_built_free(struct symtab_built *b)
{
	if (!b)
		return;
	strtab_free(&b->names);
	free(b->buf.p);
	arena_free(&b->arena);
	for (size_t k = 0; k < b->nblocks; k++)
		free(b->block[k]);
	free(b->block);
	free(b->places);
	free(b);
}

static void built_put(struct symtab_built *b, uint32_t i, struct symbol *s)
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

static struct symbol *built_get(const struct symtab_built *b, uint32_t i)
{
	size_t k = i / BUILT_BLOCK;
	return k < b->nblocks && b->block[k] ? b->block[k][i % BUILT_BLOCK] : NULL;
}

/* A symbol whose name gives no file takes its name's place, if symtab_built_settle() found one:
 * file and line together, so that they always come from one row. */
static void take_place(const struct symtab_built *b, struct symbol *s)
{
	if (s->file || s->name_id >= b->nplaces || !b->places[s->name_id].file)
		return;
	s->file = b->places[s->name_id].file;
	s->file_len = b->places[s->name_id].file_len;
	s->line = b->places[s->name_id].line;
}

struct symbol *symtab_built_get(const struct symtab *st, uint32_t i)
{
	struct symtab_built *b = st->built;
	struct symbol *s = built_get(b, i);
	if (s)
		return s;
	struct symtab_stream_entry e;
	symtab_stream_get(&st->stream, i, &e);
	size_t len;
	const char *name = symtab_stream_name(&st->stream, &e, &b->buf, &len);
	s = arena_alloc(&b->arena, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->start = e.start;
	s->size = e.size;
	s->name_id = strtab_intern(&b->names, name, len, NULL);
	s->name = strtab_get(&b->names, s->name_id)->str;
	s->name_len = len;
	s->source = symtab_source_of(st, i);
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
void symtab_built_settle(struct symtab *st)
{
	struct symtab_built *b = st->built;
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
