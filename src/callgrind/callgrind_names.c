/* callgrind_names.c - per-part interning of objects and files, function fingerprints, and
 * the table of uncompressed function names (callgrind_names.h). */
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_names.h"
#include "core/xalloc.h"

void cg_names_init(struct cg_names *n)
{
	memset(n, 0, sizeof(*n));
	strtab_init(&n->objs);
	strtab_init(&n->files);
	idmap_init(&n->plain);
	for (int i = 0; i < 3; i++)
		idmap_init(&n->ids[i]);
}

void cg_names_free(struct cg_names *n)
{
	strtab_free(&n->objs);
	strtab_free(&n->files);
	free(n->fn_fp);
	free(n->fn_len);
	idmap_free(&n->plain);
	for (int i = 0; i < 3; i++) {
		idmap_free(&n->ids[i]);
		free(n->dense[i]);
	}
	memset(n, 0, sizeof(*n));
}

void cg_names_clear(struct cg_names *n)
{
	strtab_clear(&n->objs);
	strtab_clear(&n->files);
	n->nfns = 0;
	idmap_clear(&n->plain);
	for (int i = 0; i < 3; i++) {
		idmap_clear(&n->ids[i]);
		n->dense_n[i] = 0;
		n->nids[i] = 0;
	}
}

void cg_names_id_put(struct cg_names *n, enum cg_space sp, uint64_t id, uint32_t index)
{
	n->nids[sp]++;
	/* A table indexed by id costs 3 bytes per id up to the largest: used while ids stay
	 * within a few times their number, or below 2^20 (3 MiB): callgrind numbers them
	 * densely, but over the whole run, so a part's first id may be in the 100,000s (on
	 * the big node profile 263,255 functions have ids up to 615,394). A hostile id such
	 * as 2^63 goes to the hash map, and so does an index of 2^24 - 1 or more. */
	if (id >= n->dense_n[sp] && id < ((size_t)1 << 28) &&
	    id < 8 * n->nids[sp] + ((size_t)1 << 20)) {
		XGROW(n->dense[sp], n->dense_cap[sp], 3 * ((size_t)id + 1) + 1);
		/* marked unused up to ID only: the rest of the doubled capacity stays untouched */
		memset(n->dense[sp] + 3 * n->dense_n[sp], 0xff, 3 * ((size_t)id + 1 - n->dense_n[sp]));
		n->dense_n[sp] = (size_t)id + 1;
	}
	if (id < n->dense_n[sp]) {
		/* an index that does not fit leaves the entry empty, which sends a look-up on
		 * to the map */
		uint32_t v = index < CG_DENSE_NONE ? index : CG_DENSE_NONE;
		unsigned char *e = n->dense[sp] + 3 * id;
		e[0] = (unsigned char)v;
		e[1] = (unsigned char)(v >> 8);
		e[2] = (unsigned char)(v >> 16);
		if (index < CG_DENSE_NONE)
			return;
	}
	idmap_put(&n->ids[sp], id, index);
}

uint32_t cg_names_intern(struct cg_names *n, enum cg_space space, const char *s, size_t len)
{
	return strtab_intern(space == SP_OBJ ? &n->objs : &n->files, s, len, NULL);
}

uint32_t cg_names_add_fn(struct cg_names *n, uint32_t fp, size_t len)
{
	XGROW(n->fn_fp, n->fn_fp_cap, n->nfns + 1);
	XGROW(n->fn_len, n->fn_len_cap, n->nfns + 1);
	n->fn_fp[n->nfns] = fp;
	n->fn_len[n->nfns] = (uint16_t)(len > CG_FN_LEN_MAX ? CG_FN_LEN_MAX : len);
	return (uint32_t)n->nfns++;
}

/* The key of an uncompressed name: a full hash, since equal keys are taken for one
 * identity without comparing the names (which are not kept). */
static uint64_t plain_key(const char *name, size_t len, uint32_t obj, uint32_t file)
{
	uint64_t h = strtab_hash(name, len);
	h ^= ((uint64_t)obj << 32 | file) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 31;
}

uint32_t cg_names_intern_plain(struct cg_names *n, const char *name, size_t len, uint32_t obj,
			       uint32_t file, uint32_t fp, int *added)
{
	uint64_t key = plain_key(name, len, obj, file);
	uint32_t i = idmap_get(&n->plain, key);
	*added = i == UINT32_MAX;
	if (*added) {
		i = cg_names_add_fn(n, fp, len);
		idmap_put(&n->plain, key, i);
	}
	return i;
}
