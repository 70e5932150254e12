/* symtab_impl.h - the insides of struct symtab, shared by the files that make up the symbol
 * table (symtab.h): symtab.c (sources, adds, accessors), symtab_stream.c (the entries'
 * bytes), symtab_built.c (struct symbol on request, one file and line per name) and
 * symtab_index.c (the segments and the overlap sweep). No other file includes it. */
#ifndef CGJIT_SYMTAB_IMPL_H
#define CGJIT_SYMTAB_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/strtab.h"
#include "jit/pathmap.h"
#include "jit/symtab.h"
#include "jit/symtab_stream.h"

struct symtab_built;

struct symtab_run {                    /* entries from FIRST on come from SOURCE */
	uint32_t first, source;
};

struct symtab {
	struct symtab_stream stream;   /* the entries, in the order of the adds */
	struct symtab_namebuf clean;   /* a name with its control bytes replaced */
	struct symtab_run *runs;
	size_t nruns, runs_cap;
	struct symtab_source *sources;
	size_t nsources, sources_cap;
	struct strtab files;
	struct arena arena;            /* sources' strings, symtab_alloc() */
	struct symtab_built *built;    /* the struct symbols asked for so far */
	struct symtab_segment *segs;   /* before symtab_finish(): one per entry, in order */
	size_t nsegs, segs_cap;
	struct symtab_stats stats;
	const struct pathmap *paths;   /* --root, --path-map (borrowed), or NULL */
	struct pathmap_buf mapped;     /* a name with its path mapped */
	struct strtab raw_files;       /* symtab_intern_path(): each file name as read ... */
	const char **file_as;          /* ... -> its interned mapped form, by raw index */
	size_t file_as_cap;
};

/* symtab.c: the source that entry I (< ST's count) came from. */
uint32_t symtab_source_of(const struct symtab *st, size_t i);

/* symtab_built.c: the struct symbols built on request. */
/* An empty set; symtab_built_free() frees it and every symbol built. */
struct symtab_built *symtab_built_new(void);
void symtab_built_free(struct symtab_built *b);
/* Symbol I of ST, built from its entry on the first request and kept: the same object
 * afterwards. Changes only ST->built (memory the caller never sees). */
struct symbol *symtab_built_get(const struct symtab *st, uint32_t i);
/* Gives each name without a file of its own one file and line from the line rows of all
 * its symbols built so far (symtab_finish()); symbols built later take it too. Once. */
void symtab_built_settle(struct symtab *st);

/* symtab_index.c: sorts ST's segments, one per entry, and applies the overlap policy
 * (symtab.h), counting into ST's statistics. Once, after the last add. */
void symtab_index_build(struct symtab *st);

#endif
