/* strtab.c - string interning with an open-addressing index over a dense entry array. */
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "core/strtab.h"
#include "core/xalloc.h"

/* One word into the state: the full 128-bit product with K, its halves folded. A 64-bit
 * product then a shift is linear in the top bit (x ^ 2^63 gives a fixed change that the
 * next word cancels: names that collide whatever the seed); the high half is not. K is
 * odd and drawn from the run's seed: with a constant one, some differences of two words
 * still pass unchanged about once in 2^17 inputs (a reviewer's sampling), the same in
 * every run. */
static inline uint64_t hash_word(uint64_t h, uint64_t w, uint64_t k)
{
	uint64_t x = h ^ w;
#if defined(__SIZEOF_INT128__)
	unsigned __int128 m = (unsigned __int128)x * k;
	return (uint64_t)m ^ (uint64_t)(m >> 64);
#else
	uint64_t xl = x & 0xffffffffu, xh = x >> 32, kl = k & 0xffffffffu, kh = k >> 32;
	uint64_t ll = xl * kl, lh = xl * kh, hl = xh * kl, hh = xh * kh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t lo = (ll & 0xffffffffu) | mid << 32;
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	return lo ^ hi;
#endif
}

static inline uint64_t hash_step(uint64_t h, const char *s, uint64_t k)
{
	uint64_t w;
	memcpy(&w, s, 8);
	return hash_word(h, w, k);
}

uint64_t strtab_hash(const char *s, size_t len)
{
	/* Eight bytes at a time with a multiply-fold mix: names reach kilobytes with
	 * --separate-callers, and a byte-at-a-time hash showed in profiles. Four independent
	 * lanes over each 32 bytes, so that the multiplies overlap (one chain waits for each
	 * multiply: on the bench profile, this function's share of perf's samples went from
	 * 3.5% to 1.8%, and its instructions from 157 M to 95 M).
	 * It starts from the run's random seed (idmap_mix()): without one, strings that all
	 * share a hash can be computed, and an input made of them would fill one chain of
	 * every table, or be taken for one function where a hash stands for the name
	 * (callgrind_names.c). */
	uint64_t h = idmap_mix(0x9e3779b97f4a7c15ULL ^ len);
	const uint64_t k = idmap_mix(0xff51afd7ed558ccdULL) | 1;
	size_t i = 0;
	if (len >= 32) {
		/* Each lane starts from its own mix of the seed, and they are combined in
		 * order: lanes that differed by a constant, or an even-handed combination,
		 * would let swapped words give equal hashes whatever the seed. */
		uint64_t a = idmap_mix(0x2545f4914f6cdd1dULL ^ len), b = idmap_mix(0x94d049bb133111ebULL ^ len),
			 c = idmap_mix(0xbf58476d1ce4e5b9ULL ^ len), d = idmap_mix(0xd6e8feb86659fd93ULL ^ len);
		for (; i + 32 <= len; i += 32) {
			a = hash_step(a, s + i, k);
			b = hash_step(b, s + i + 8, k);
			c = hash_step(c, s + i + 16, k);
			d = hash_step(d, s + i + 24, k);
		}
		h = hash_word(hash_word(hash_word(hash_word(h, a, k), b, k), c, k), d, k);
	}
	for (; i + 8 <= len; i += 8)
		h = hash_step(h, s + i, k);
	uint64_t tail = 0;
	memcpy(&tail, s + i, len - i);
	h = hash_word(h, tail, k) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return h;
}

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
}

void strtab_free(struct strtab *t)
{
	arena_free(&t->arena);
	free(t->entries);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

void strtab_clear(struct strtab *t)
{
	arena_reset(&t->arena);
	t->count = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
}

static size_t probe(const struct strtab *t, const char *s, size_t len, uint64_t h, int *found)
{
	size_t mask = t->nslots - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		uint32_t v = t->slots[i];
		if (!v) {
			*found = 0;
			return i;
		}
		const struct strtab_entry *e = &t->entries[v - 1];
		if (e->hash == h && e->len == len && memcmp(e->str, s, len) == 0) {
			*found = 1;
			return i;
		}
	}
}

static void rehash(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64;
	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->nslots = n;
	for (size_t k = 0; k < t->count; k++) {
		int found;
		size_t i = probe(t, t->entries[k].str, t->entries[k].len, t->entries[k].hash, &found);
		t->slots[i] = (uint32_t)k + 1;
	}
}

uint32_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
	if (!t->nslots)
		return UINT32_MAX;
	int found;
	size_t i = probe(t, s, len, strtab_hash(s, len), &found);
	return found ? t->slots[i] - 1 : UINT32_MAX;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, int *added)
{
	if ((t->count + 1) * 2 > t->nslots)
		rehash(t);
	uint64_t h = strtab_hash(s, len);
	int found;
	size_t i = probe(t, s, len, h, &found);
	if (added)
		*added = !found;
	if (found)
		return t->slots[i] - 1;
	XGROW(t->entries, t->cap, t->count + 1);
	struct strtab_entry *e = &t->entries[t->count];
	e->str = arena_strndup(&t->arena, s, len);
	e->len = len;
	e->hash = h;
	t->slots[i] = (uint32_t)t->count + 1;
	return (uint32_t)t->count++;
}

uint32_t strtab_intern_key(struct strtab *t, const char *name, size_t len, uint32_t a,
			   uint32_t b, int *added)
{
	char stackkey[256];
	size_t klen = len + 1 + 2 * sizeof(uint32_t);
	char *key = klen <= sizeof(stackkey) ? stackkey : xmalloc(klen);
	memcpy(key, name, len);
	key[len] = '\0';
	memcpy(key + len + 1, &a, sizeof(a));
	memcpy(key + len + 1 + sizeof(a), &b, sizeof(b));
	uint32_t i = strtab_intern(t, key, klen, added);
	if (key != stackkey)
		free(key);
	return i;
}
