/* idmap.c - linear-probing hash map u64 -> u32. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/idmap.h"
#include "core/xalloc.h"

/* Keys come from the input, and the mixing below is a public bijection: without a secret
 * in it, a profile could choose ids that all land in one slot and make every lookup
 * linear. So every map of a run mixes in one random seed. */
static uint64_t run_seed(void)
{
	static uint64_t seed;
	static int have;
	if (!have) {
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
			seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&seed;
		seed |= 1;
		have = 1;
	}
	return seed;
}

uint64_t idmap_mix(uint64_t key)
{
	key ^= run_seed();
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key;
}

static size_t slot_of(uint64_t key, size_t mask)
{
	return (size_t)idmap_mix(key) & mask;
}

void idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void idmap_clear(struct idmap *m)
{
	if (m->vals)
		memset(m->vals, 0xff, m->nslots * sizeof(*m->vals));
	m->count = 0;
}

uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->nslots)
		return UINT32_MAX;
	size_t mask = m->nslots - 1;
	for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
		if (m->vals[i] == UINT32_MAX)
			return UINT32_MAX;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static void insert(uint64_t *keys, uint32_t *vals, size_t mask, uint64_t key, uint32_t val)
{
	size_t i = slot_of(key, mask);
	while (vals[i] != UINT32_MAX && keys[i] != key)
		i = (i + 1) & mask;
	keys[i] = key;
	vals[i] = val;
}

void idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	if ((m->count + 1) * 2 > m->nslots) {
		size_t n = m->nslots ? m->nslots * 2 : 64;
		uint64_t *keys = xmalloc(n * sizeof(*keys));
		uint32_t *vals = xmalloc(n * sizeof(*vals));
		memset(vals, 0xff, n * sizeof(*vals));
		for (size_t i = 0; i < m->nslots; i++)
			if (m->vals[i] != UINT32_MAX)
				insert(keys, vals, n - 1, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->nslots = n;
	}
	size_t mask = m->nslots - 1;
	size_t i = slot_of(key, mask);
	while (m->vals[i] != UINT32_MAX && m->keys[i] != key)
		i = (i + 1) & mask;
	if (m->vals[i] == UINT32_MAX)
		m->count++;
	m->keys[i] = key;
	m->vals[i] = val;
}
