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

struct stream;

enum resolve_kind {
	RESOLVE_PLAIN,      /* not JIT code: identity kept (caller parts may be renamed) */
	RESOLVE_UNKNOWN,    /* a ??? pseudo-function that no symbol covers: left as written */
	RESOLVE_JIT,        /* a ??? pseudo-function inside a symbol's range */
};

struct resolve_fn {           /* per input function */
	uint8_t done;
	uint8_t kind;          /* enum resolve_kind */
	uint8_t lookup;        /* its cost lines are absolute addresses to look up */
	uint8_t elf;           /* its object is a file, not ??? */
	uint32_t out;          /* writer function (the home identity) */
	int32_t sym;           /* home symbol, or -1 */
	uint32_t suffix_len;   /* "'2'caller..." part of a pseudo-function's name ... */
	const char *suffix;    /* ... (the resolver's, for the part), or NULL */
	uint64_t lo, hi;       /* addresses of its own cost lines in this part (lo > hi: none) */
};

/* Where a line is shown (resolve_place()). */
struct resolve_where {
	const uint64_t *pos;          /* the input's position, or buf */
	uint32_t file;                /* writer file */
	uint64_t buf[CG_MAX_POS];
};

struct resolver {
	const struct stream *s;
	int keep_addresses;           /* --keep-addresses: symbol names carry their address */
	struct resolve_fn *fns;       /* per input function of the part */
	size_t fns_cap, nfns;         /* entries in use: the part's highest function + 1 */
	uint32_t *file_out;           /* input file -> writer file + 1 (0: not mapped yet) */
	size_t file_out_cap;
	struct idmap moved_ids;       /* (input function, symbol) -> identity of its lines there */
	struct arena suffixes;        /* the part's pseudo-functions' suffixes */
	char *name;                   /* scratch for names being built */
	size_t name_len, name_cap;
	const char *last_row_file;    /* cache: the last line-table file and its writer file */
	uint32_t last_row_out;
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

/* The resolution of input function FN, defined earlier in the part (the reader refuses
 * undefined ids). Valid until the next resolve_define(): callers that keep it copy it. */
static inline struct resolve_fn *resolve_get(struct resolver *r, uint32_t fn)
{
	return &r->fns[fn];
}

/* Notes that FN has cost lines at addresses LO to HI (rule 9 looks for moved code there). */
static inline void resolve_widen(struct resolver *r, uint32_t fn, uint64_t lo, uint64_t hi)
{
	struct resolve_fn *x = &r->fns[fn];
	x->lo = lo < x->lo ? lo : x->lo;
	x->hi = hi > x->hi ? hi : x->hi;
}

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
