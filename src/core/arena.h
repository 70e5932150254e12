/* arena.h - bump allocator for names that live as long as a run (or a part).
 * Nothing is freed singly; arena_reset() drops everything at once. */
#ifndef CGJIT_ARENA_H
#define CGJIT_ARENA_H

#include <stddef.h>

struct arena_block;
struct arena {
	struct arena_block *head;
	size_t used;     /* bytes used in head */
	size_t total;    /* bytes handed out since the last reset, for the report */
};

/* Copies LEN bytes of S and a terminating NUL into A, with no alignment (read anything
 * stored in it by memcpy). Returns the copy, valid until reset/free. */
char *arena_strndup(struct arena *a, const char *s, size_t len);
/* Returns SIZE bytes aligned for any object, valid until reset/free. */
void *arena_alloc(struct arena *a, size_t size);
/* Frees every block but the first, so a per-part arena reuses its memory. */
void arena_reset(struct arena *a);
void arena_free(struct arena *a);

#endif
