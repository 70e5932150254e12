/* slot_index.c - an index of numbered items by their keys (slot_index.h). */
#include <stdlib.h>

#include "core/idmap.h"
#include "core/slot_index.h"
#include "core/xalloc.h"

size_t slot_index_home(const struct slot_index *x, uint64_t key)
{
	return (size_t)idmap_mix(key) & (x->nslots - 1);
}

void slot_index_sized(struct slot_index *x, size_t count)
{
	x->nslots = 1024;
	while (count * 4 > x->nslots * 3)
		x->nslots *= 2;
	x->slots = xcalloc(x->nslots, sizeof(*x->slots));
}

void slot_index_reserve(struct slot_index *x, size_t first, size_t count, slot_key_fn *key,
			const void *ctx)
{
	if ((count + 1) * 4 <= x->nslots * 3)
		return;
	struct slot_index grown = { NULL, x->nslots ? x->nslots * 2 : 1024 };
	grown.slots = xcalloc(grown.nslots, sizeof(*grown.slots));
	for (size_t item = first; item < count; item++) {
		size_t i = slot_index_home(&grown, key(ctx, item));
		while (grown.slots[i])
			i = slot_index_next(&grown, i);
		grown.slots[i] = (uint32_t)item + 1;
	}
	free(x->slots);
	*x = grown;
}

void slot_index_free(struct slot_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->nslots = 0;
}
