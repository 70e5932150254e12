/* symtab.h - address ranges of JIT code and the symbol that owns each address.
 * Filled by perfmap.c and jitdump.c, frozen by symtab_finish(), read by the rewriter.
 * Overlap policy: a later entry wins over an earlier one for the addresses both claim (a
 * map is appended as code is compiled, so the later line describes what was there last;
 * samply does the same: docs/formats.md 4.3). An entry of a higher priority class
 * (jitdump over perf map) wins whatever the order.
 * Memory: an entry costs its name's bytes (a shared last word, such as V8's source path,
 * once), some 7 bytes of numbers and a 24-byte segment; its struct symbol exists only
 * from the first symtab_symbol(), symtab_symbol_mut() or symtab_last() on, and then
 * stays, with what its adder wrote into it. All names and symbols stay valid until
 * symtab_free(). */
#ifndef CGJIT_SYMTAB_H
#define CGJIT_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct pathmap;

/* One row of a jitdump line table: from ADDR up to the next row's address, the code
 * comes from FILE:LINE. */
struct symline {
	uint64_t addr;
	const char *file;        /* interned in the symtab; NUL-terminated */
	size_t file_len;
	uint32_t line;
};

/* A symbol as its adder gave it, built on request (see above): file and line from the
 * name's convention, the rest of the fields from file on empty until the adder (or the
 * driver, for object) sets them. */
struct symbol {
	uint64_t start, size;
	const char *name;        /* as the runtime wrote it, trimmed; NUL-terminated */
	size_t name_len;
	uint32_t name_id;        /* equal names share an id (among the symbols built) */
	uint32_t source;         /* index of the map or dump it came from */
	uint64_t source_line;    /* line (map) or byte offset (dump) of the entry */
	const char *file;        /* source file: from the name's convention, else the one that
	                            symtab_finish() chose for the name from all its line rows
	                            (every symbol of a name has the same), else NULL */
	size_t file_len;
	uint64_t line;           /* the function's line (same sources), or 0 */
	const struct symline *lines;   /* jitdump line table sorted by address, or NULL */
	uint32_t nlines;
	const unsigned char *code;     /* jitdump code bytes (size bytes), or NULL */
	uint64_t code_index;     /* jitdump code_index */
	uint32_t generation;     /* jitdump: 0, or n for the n-th reuse of these addresses */
	const char *object;      /* ob= name when it differs from the source's, or NULL */
};

struct symtab_source {
	const char *path;        /* as given by the user */
	const char *object;      /* the object name JIT functions from it get (ob=) */
	unsigned prio;           /* SYMTAB_PRIO_MAP or SYMTAB_PRIO_JITDUMP */
	uint64_t entries;        /* symbols added from it */
	uint64_t skipped;        /* entries ignored (size 0) */
};

struct symtab_stats {
	uint64_t symbols;        /* entries added */
	uint64_t shadowed;       /* entries partly or wholly replaced by a later entry of the
	                            same kind (map by map, dump by dump), other than an exact
	                            repeat */
	uint64_t shadowed_other; /* ... of those, replaced by an entry with another name */
	uint64_t superseded;     /* perf-map entries replaced by jitdump entries (the policy) */
	uint64_t duplicates;     /* entries repeated exactly (same range and name) and nothing else */
	uint64_t segments;       /* disjoint address ranges in the index */
	uint64_t contested;      /* segments claimed by several distinct names */
	uint64_t paths_mapped;   /* entries whose name had its path mapped (symtab_set_paths) */
	uint64_t paths_mapped_files;   /* distinct line-table file names mapped */
};

struct symtab_segment {
	uint64_t start, last;    /* [start, last]: the last address is included, so that a
	                            segment can end at 2^64 */
	uint32_t sym;            /* index of the winning symbol */
	uint32_t contested;      /* 1 if several distinct names claimed these addresses */
};

struct symtab;

/* Priority classes of sources; also how an entry's source_line is meant: a line of a perf
 * map, a byte offset in a jitdump (messages say "FILE:LINE:" or "FILE: byte N:"). */
enum { SYMTAB_PRIO_MAP = 0, SYMTAB_PRIO_JITDUMP = 1 };

struct symtab *symtab_new(void);
void symtab_free(struct symtab *st);   /* NULL is a no-op */
/* Registers a symbol source (map or dump path; OBJECT is the ob= name). Returns its index. */
uint32_t symtab_add_source(struct symtab *st, const char *path, const char *object, unsigned prio);
/* One entry as a reader gives it to symtab_add(). */
struct symtab_entry {
	uint64_t start, size;    /* [start, start + size) */
	const char *name;        /* NAME_LEN bytes, not NUL-terminated; borrowed */
	size_t name_len;
	uint64_t source_line;    /* line (map) or byte offset (dump), for messages */
};

/* Adds E to ST from SOURCE (symtab_add_source()); E's name is copied. SIZE 0 is counted as
 * skipped. A range may end exactly at 2^64. Returns 0, or -1 with D set when START+SIZE
 * passes 2^64. */
int symtab_add(struct symtab *st, uint32_t source, const struct symtab_entry *e, struct diag *d);
/* Builds the lookup index with the overlap policy, and gives each name without a file of
 * its own (jitname.h) one file and line from the line rows of all its symbols: the file
 * of the JVM class that declares the method, else the file of the most rows, else the
 * first in byte order; its lowest line. Call once, after the last add. */
void symtab_finish(struct symtab *st);
/* The segment covering ADDR, or NULL. Valid until symtab_free(). */
const struct symtab_segment *symtab_lookup(const struct symtab *st, uint64_t addr);
/* 1 if a segment has an address in [LO, HI], else 0. */
int symtab_overlaps(const struct symtab *st, uint64_t lo, uint64_t hi);
/* Symbol I, 0 <= I < symtab_count(), counted in the order of the adds. Built on the first
 * request for I (the table is not changed otherwise), the same object afterwards; valid
 * until symtab_free(). */
const struct symbol *symtab_symbol(const struct symtab *st, uint32_t i);
/* The same, writable: for the adder that owns symbol I (its object, line tables). */
struct symbol *symtab_symbol_mut(struct symtab *st, uint32_t i);
/* The symbol added last (or NULL), for its adder to attach a line table and code bytes. */
struct symbol *symtab_last(struct symtab *st);
/* Copies LEN bytes of S into the symtab (file names, code bytes); returns the copy. */
const char *symtab_intern_file(struct symtab *st, const char *s, size_t len);
/* From now on the path in every added name (pathmap_name()) and every file name given to
 * symtab_intern_path() is mapped by PM (--root, --path-map), which must outlive the adds;
 * before the first add, so that every name of the table (identity, overlap policy, one
 * file per name, ELF symbols) is the mapped one (README rule 3). NULL or an empty map:
 * names are kept as written. */
void symtab_set_paths(struct symtab *st, const struct pathmap *pm);
/* A source file name of a line row (jitdump DEBUG_INFO), mapped and interned: the copy,
 * NUL-terminated, with its length in *OUT_LEN. */
const char *symtab_intern_path(struct symtab *st, const char *s, size_t len, size_t *out_len);
void *symtab_alloc(struct symtab *st, size_t size);
/* The line row covering ADDR in SYM's table, or NULL if it has none. */
const struct symline *symtab_line(const struct symbol *sym, uint64_t addr);
size_t symtab_count(const struct symtab *st);
const struct symtab_source *symtab_source(const struct symtab *st, uint32_t i);
const struct symtab_stats *symtab_stats(const struct symtab *st);

#endif
