/* strtab.h - interning of byte strings: each distinct string gets a dense index from 0.
 * Used for output name tables (objects, files, function identities) and symbol names.
 * Strings are copied into the table's own arena and live until strtab_free/strtab_clear. */
#ifndef CGJIT_STRTAB_H
#define CGJIT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

struct strtab_entry {
	const char *str;   /* NUL-terminated copy; may contain NULs before len only if the key did */
	size_t len;
	uint64_t hash;
};

struct strtab {
	struct arena arena;
	struct strtab_entry *entries;   /* index -> string */
	size_t count, cap;
	uint32_t *slots;                /* open addressing, index+1, 0 = empty */
	size_t nslots;
};

void strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* Forgets every string; indices start again at 0. */
void strtab_clear(struct strtab *t);
/* Returns the index of S, adding it if new; *ADDED (may be NULL) tells which. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, int *added);
/* Interns the identity key "NAME\0" + A + B (two 32-bit numbers, e.g. object and file);
 * the entry's str starts with the NUL-terminated NAME. */
uint32_t strtab_intern_key(struct strtab *t, const char *name, size_t len, uint32_t a,
			   uint32_t b, int *added);
/* Returns the index of S, or UINT32_MAX if absent. */
uint32_t strtab_find(const struct strtab *t, const char *s, size_t len);
static inline const struct strtab_entry *strtab_get(const struct strtab *t, uint32_t i)
{
	return &t->entries[i];
}
/* A 64-bit hash of S from the run's random seed (idmap_mix()); identities are keyed by it,
 * so the pairs that collided whatever the seed with earlier versions do not any more
 * (strtab.c; tests/unit/test_primitives.c). */
uint64_t strtab_hash(const char *s, size_t len);

#endif
