/* arena.c - bump allocator in 64 KiB blocks (larger requests get their own block); strings
 * packed, other allocations aligned for any object. */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/xalloc.h"

struct arena_block {
	struct arena_block *next;
	size_t size;
	alignas(max_align_t) unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

/* SIZE bytes at a multiple of ALIGN (a power of two) in the head block, or a new one. */
static void *take(struct arena *a, size_t size, size_t align)
{
	size_t at = (a->used + align - 1) & ~(align - 1);
	if (!a->head || a->head->size < at || a->head->size - at < size) {
		size_t bs = size > ARENA_BLOCK ? size : ARENA_BLOCK;
		struct arena_block *b = xmalloc(sizeof(*b) + bs);
		b->size = bs;
		b->next = a->head;
		a->head = b;
		at = 0;
	}
	void *p = a->head->data + at;
	a->used = at + size;
	a->total += size;
	return p;
}

void *arena_alloc(struct arena *a, size_t size)
{
	return take(a, size, alignof(max_align_t));
}

/* Strings are packed: rounding each to max_align_t's 16 bytes cost a report on a large
 * profile 8 bytes a name part and a function key (docs/design.md, "Memory"). */
char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p = take(a, len + 1, 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* Frees the blocks from B up to (not including) KEEP. */
static void free_blocks(struct arena_block *b, const struct arena_block *keep)
{
	while (b != keep) {
		struct arena_block *n = b->next;
		free(b);
		b = n;
	}
}

void arena_reset(struct arena *a)
{
	if (!a->head)
		return;
	struct arena_block *keep = a->head;
	while (keep->next)
		keep = keep->next;
	free_blocks(a->head, keep);
	a->head = keep;
	a->used = 0;
	a->total = 0;
}

void arena_free(struct arena *a)
{
	free_blocks(a->head, NULL);
	a->head = NULL;
	a->used = 0;
	a->total = 0;
}
