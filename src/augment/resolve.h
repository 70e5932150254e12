/* resolve.h - who each input function of a part is in the output, and where its code is
 * shown (README "What augment does"). A function is resolved once, where the input
 * defines it: a JIT pseudo-function inside a symbol's range gets the symbol's identity,
 * anything else keeps its own (its 'caller parts renamed). Owns the part's resolutions,
 * one per input function (memory follows their number), and the names it builds. */
#ifndef CGJIT_RESOLVE_H
#define CGJIT_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_reader.h"
#include "core/arena.h"
#include "core/idmap.h"
#include "core/strtab.h"

struct stream;
struct symbol;

enum resolve_kind {
	RESOLVE_PLAIN,      /* not JIT code: identity kept (caller parts may be renamed) */
	RESOLVE_UNKNOWN,    /* a ??? pseudo-function that no symbol covers: left as written */
	RESOLVE_JIT,        /* a ??? pseudo-function inside a symbol's range */
};

/* What the rules need of an input function, made by resolve_get() from the compact state
 * below. */
struct resolve_fn {
	uint8_t kind;          /* enum resolve_kind */
	uint8_t lookup;        /* its cost lines are absolute addresses to look up */
	uint8_t elf;           /* its object is a file, not ??? */
	uint32_t out;          /* writer function (the home identity) */
	int32_t sym;           /* home symbol, or -1 */
	size_t suffix_len;     /* "'2'caller..." part of a pseudo-function's name ... */
	const char *suffix;    /* ... (the resolver's, for the part), or NULL */
};

/* Per input function, 1 byte of flags and 4 of reference: the writer function, or for a
 * pseudo-function (a few percent of a profile's functions) its entry in the pseudo
 * table, which holds what only those need. */
enum {
	RESOLVE_DONE = 1,        /* defined in the part */
	RESOLVE_LOOKUP = 2,      /* resolve_fn.lookup */
	RESOLVE_ELF = 4,         /* resolve_fn.elf */
	RESOLVE_KIND_SHIFT = 3,  /* resolve_fn.kind, 2 bits (resolve_kind_of()) */
	RESOLVE_SPAN = 32,       /* has a rule-9 span entry (resolve_note_block()) */
};

static inline uint8_t resolve_kind_of(uint8_t flags)
{
	return (uint8_t)(flags >> RESOLVE_KIND_SHIFT & 3);
}

struct resolve_pseudo {
	uint32_t out;          /* writer function */
	int32_t sym;           /* home symbol, or -1 */
	uint32_t suffix;       /* index in the resolver's suffixes */
};

/* Rule 9's span of ELF function FN: the lowest address of its own cost lines in those of
 * its blocks that overlap a symbol's range (resolve_note_block()), and the highest less
 * the lowest, or RESOLVE_WIDE if that is 2^32 or more. 16 bytes. */
struct resolve_span {
	uint64_t lo;
	uint32_t fn;
	uint32_t width;
};
enum { RESOLVE_WIDE = UINT32_MAX };

/* Where a line is shown (resolve_place()). */
struct resolve_where {
	const uint64_t *pos;          /* the input's position, or buf */
	uint32_t file;                /* writer file */
	uint64_t buf[CG_MAX_POS];
};

/* Symbol lookups remembered: a profile looks up the same caller addresses and lines again
 * and again (2,048 entries of 16 bytes: the table stays in the first-level cache). */
enum { RESOLVE_HITS_BITS = 11, RESOLVE_HITS = 1 << RESOLVE_HITS_BITS };
/* The 16-digit caller parts of names remembered by their text (resolve.c, part_symbol()). */
enum { RESOLVE_PART_HITS_BITS = 10, RESOLVE_PART_HITS = 1 << RESOLVE_PART_HITS_BITS };

struct resolver {
	const struct stream *s;
	int keep_addresses;           /* --keep-addresses: symbol names carry their address */
	/* Per input function of the part, 5 bytes: its writer function, or its index in
	 * pseudo (4, little-endian), then its RESOLVE_* flags. In one record, not two arrays:
	 * a call or block names a function defined long before, and each array was a cache
	 * miss of its own (resolve_get()). */
	unsigned char *fns;
	size_t fns_cap;
	size_t nfns;                  /* entries in use: the part's highest function + 1 */
	struct resolve_pseudo *pseudo;   /* the part's pseudo-functions */
	size_t npseudo, pseudo_cap;
	struct strtab suffixes;       /* their suffixes, each kept once: fragments of one
	                                 function share their callers */
	uint32_t *file_out;           /* input file -> writer file + 1 (0: not mapped yet) */
	size_t file_out_cap;
	uint32_t *obj_out;            /* input object -> writer object + 1 (0: not mapped yet) */
	size_t obj_out_cap;
	struct idmap moved_ids;       /* (input function, symbol) -> identity of its lines there */
	/* Rule 9's spans: one per block that overlaps a symbol, until resolve_merge_spans()
	 * makes them one per function. On node (its map names the builtins in node's text)
	 * 71,637 of 263,255 functions have one: the builtins' caller contexts. */
	struct resolve_span *spans;
	size_t nspans, spans_cap;
	int spans_repeat;             /* some function has two entries: merge them */
	char *name;                   /* scratch for names being built */
	size_t name_len, name_cap;
	const char *last_row_file;    /* cache: the last line-table file and its writer file */
	uint32_t last_row_out;
	int64_t place_sym;            /* cache: the last symbol resolve_place() read (-1: none) */
	const struct symbol *place_y;
	struct resolve_hit {          /* cache of symtab_lookup(): address + 1 (0: empty) -> */
		uint64_t key;         /* segment or NULL; 16 bytes an entry */
		const struct symtab_segment *seg;
	} hits[RESOLVE_HITS];
	struct resolve_part_hit {     /* the 16 digits of a caller part (0, 0: empty) -> */
		uint64_t k0, k1;      /* its symbol, or NULL; 24 bytes an entry */
		const struct symbol *y;
	} part_hits[RESOLVE_PART_HITS];
};

/* R empty, reading S (not owned, outlives R). KEEP_ADDRESSES: --keep-addresses. */
void resolve_init(struct resolver *r, const struct stream *s, int keep_addresses);
void resolve_free(struct resolver *r);

/* Forgets the part's resolutions and files: a new part numbers its functions anew. */
void resolve_begin_part(struct resolver *r);

/* Resolves function DEF->fn, defined with the name DEF->name, which the reader hands out
 * only now: the name is used here and, if kept, borrowed by the writer until the record
 * is settled (cgw_settle). */
void resolve_define(struct resolver *r, const struct cg_def *def);

/* Input function FN's RESOLVE_* flags and its reference (struct resolver's FNS). */
static inline uint8_t resolve_flags(const struct resolver *r, uint32_t fn)
{
	return r->fns[5 * (size_t)fn + 4];
}

static inline uint32_t resolve_ref(const struct resolver *r, uint32_t fn)
{
	const unsigned char *e = r->fns + 5 * (size_t)fn;
	return (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
}

/* The resolution of input function FN, defined earlier in the part (the reader refuses
 * undefined ids). Its suffix lasts the part. */
static inline struct resolve_fn resolve_get(const struct resolver *r, uint32_t fn)
{
	uint8_t f = resolve_flags(r, fn);
	struct resolve_fn x = {
		.kind = resolve_kind_of(f), .lookup = (f & RESOLVE_LOOKUP) != 0,
		.elf = (f & RESOLVE_ELF) != 0, .out = resolve_ref(r, fn), .sym = -1,
	};
	if (x.kind != RESOLVE_PLAIN) {
		const struct resolve_pseudo *p = &r->pseudo[x.out];
		const struct strtab_entry *e = strtab_get(&r->suffixes, p->suffix);
		x.out = p->out;
		x.sym = p->sym;
		x.suffix = e->str;
		x.suffix_len = e->len;
	}
	return x;
}

/* The writer function of input function FN. */
static inline uint32_t resolve_out(const struct resolver *r, uint32_t fn)
{
	return resolve_kind_of(resolve_flags(r, fn)) == RESOLVE_PLAIN ? resolve_ref(r, fn)
									: r->pseudo[resolve_ref(r, fn)].out;
}

/* A block of ELF function FN (a fn= line and the lines up to the next) had its own cost
 * lines at addresses LO to HI: if that overlaps a symbol's range, FN's span takes it in
 * (rule 9 looks for moved code there; moved code is always in a symbol's range). */
void resolve_note_block(struct resolver *r, uint32_t fn, uint64_t lo, uint64_t hi);
/* The end of the part's body: the spans become one per function (in no set order). */
void resolve_merge_spans(struct resolver *r);

/* symtab_lookup(ADDR) in the run's symbols, through a small cache: the symbols do not
 * change during the body. */
const struct symtab_segment *resolve_lookup(struct resolver *r, uint64_t addr);

/* resolve_file() for a file not mapped yet: call that instead. */
uint32_t resolve_file_slow(struct resolver *r, uint32_t in_file);

/* The writer file of input file IN_FILE (of the part). */
static inline uint32_t resolve_file(struct resolver *r, uint32_t in_file)
{
	/* every plain cost line comes here: the mapped case stays inline */
	if (in_file < r->file_out_cap && r->file_out[in_file])
		return r->file_out[in_file] - 1;
	return resolve_file_slow(r, in_file);
}

/* The identity of symbol SYM's code in the lines of input function FN, resolved as X:
 * the symbol's name with X's 'N and 'caller parts, made once per (FN, SYM) in the part
 * (lines may alternate between symbols). */
uint32_t resolve_moved_identity(struct resolver *r, const struct resolve_fn *x, uint32_t fn,
				uint32_t sym);

/* The identity of code that no symbol covers, reached from JIT function X by a jump (a
 * runtime's trampoline): callgrind charged it to X, but it is not X's code. It gets the
 * identity callgrind gives code it cannot symbolise: object and file ???, named by ENTRY,
 * the first address of its run of lines. */
uint32_t resolve_foreign_identity(struct resolver *r, const struct resolve_fn *x, uint64_t entry);

/* Where code at POS (input file IN_FILE) of writer function OUT, owned by symbol SYM (-1:
 * not JIT code), is shown: JIT code at the file and line of its row in the symbol's
 * jitdump line table, else at the symbol's first file and line (from its name); other
 * code keeps its position and file. Fills AT; AT->pos is POS or AT->buf. */
void resolve_place(struct resolver *r, int64_t sym, uint32_t out, const uint64_t *pos,
		   uint32_t in_file, struct resolve_where *at);

#endif
