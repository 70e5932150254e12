/* idmap.h - map from a 64-bit key (a compressed id from the input) to a 32-bit value.
 * Memory grows with the number of keys, not with their values, so a hostile id such as
 * 2^63 costs one slot. */
#ifndef CGJIT_IDMAP_H
#define CGJIT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;
	uint32_t *vals;    /* UINT32_MAX marks an empty slot */
	size_t nslots, count;
};

void idmap_init(struct idmap *m);
void idmap_free(struct idmap *m);
void idmap_clear(struct idmap *m);
/* Returns the value for KEY, or UINT32_MAX. */
uint32_t idmap_get(const struct idmap *m, uint64_t key);
/* Sets KEY to VAL (VAL must not be UINT32_MAX). */
void idmap_put(struct idmap *m, uint64_t key, uint32_t val);
/* KEY mixed with the run's random seed, as these maps place keys: for other tables whose
 * keys an input chooses, so that no input can put them all in one slot. */
uint64_t idmap_mix(uint64_t key);

#endif
