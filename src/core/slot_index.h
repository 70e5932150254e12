/* slot_index.h - the index of a table whose items are numbered and kept by the caller:
 * open addressing over item numbers + 1 (0: empty), 4 bytes a slot, at most three quarters
 * full, each item placed by its key mixed with the run's seed (idmap_mix()), since inputs
 * choose the keys. The caller reads an item's key and compares items itself. */
#ifndef CGJIT_SLOT_INDEX_H
#define CGJIT_SLOT_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct slot_index {
	uint32_t *slots;   /* item + 1; 0: empty */
	size_t nslots;     /* a power of two, or 0 */
};

/* The key of item ITEM of the caller's table CTX. */
typedef uint64_t slot_key_fn(const void *ctx, size_t item);

/* Room for one more item while items FIRST .. COUNT - 1 are in: when it would fill more
 * than three quarters of the slots, the index is made anew twice as large from KEY. */
void slot_index_reserve(struct slot_index *x, size_t first, size_t count, slot_key_fn *key,
			const void *ctx);
/* An empty index with room for COUNT items, for a table whose size is known (X is
 * overwritten, not freed). */
void slot_index_sized(struct slot_index *x, size_t count);
/* The slot to look at first for KEY; the next one is slot_index_next(). */
size_t slot_index_home(const struct slot_index *x, uint64_t key);
static inline size_t slot_index_next(const struct slot_index *x, size_t i)
{
	return (i + 1) & (x->nslots - 1);
}
void slot_index_free(struct slot_index *x);

#endif
