/* symtab_stream.h - the symbol table's entries as one compact byte stream (symtab.c's
 * store): appended in the order of the adds, read back by index (symtab_built.c builds a
 * struct symbol from an entry, symtab_index.c compares names). Only the symtab_*.c files
 * use it. The stream owns its bytes and its location words. */
#ifndef CGJIT_SYMTAB_STREAM_H
#define CGJIT_SYMTAB_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

struct symtab_entry;

/* A growing scratch buffer for a name put together from its parts. */
struct symtab_namebuf {
	char *p;
	size_t cap;
};

/* The fields are private to symtab_stream.c. */
struct symtab_stream {
	unsigned char *data;           /* the entries */
	size_t len, cap;
	struct symtab_stream_ck *ck;   /* where every STRIDE-th entry begins */
	size_t nck, ck_cap;
	uint64_t prev_start, prev_line;   /* of the last entry: the bases of the next one's */
	size_t n;                      /* entries */
	struct symtab_stream_loc *locs;   /* the shared last words of names */
	size_t nlocs, locs_cap;
	uint32_t *loc_slots;           /* open addressing: number + 1, 0 = empty */
	size_t loc_nslots;
	struct arena arena;            /* the location words' bytes */
};

/* One decoded entry. HEAD and TAIL point into the stream, valid until the next append
 * (which may move it). */
struct symtab_stream_entry {
	uint64_t start, size, line;
	const char *head, *tail;
	size_t head_len, tail_len;
	unsigned kind;                 /* how the name is stored (symtab_stream.c) */
	uint32_t loc;
	uint64_t num[2];
};

/* An empty stream; symtab_stream_free() frees what the appends allocate. */
void symtab_stream_init(struct symtab_stream *s);
void symtab_stream_free(struct symtab_stream *s);

/* Appends entry E (its name as it will be read back: cleaned and mapped already) as entry
 * number S->n, and counts it. */
void symtab_stream_put(struct symtab_stream *s, const struct symtab_entry *e);

/* Decodes entry I (< S->n) into E: a walk of a few entries from the checkpoint before it. */
void symtab_stream_get(const struct symtab_stream *s, size_t i, struct symtab_stream_entry *e);

/* E's name (LEN bytes, not NUL-terminated): in the stream when it is stored whole, else put
 * together in B (the caller's, reused from call to call). Valid until B or S changes. */
const char *symtab_stream_name(const struct symtab_stream *s, const struct symtab_stream_entry *e,
			       struct symtab_namebuf *b, size_t *len);

#endif
