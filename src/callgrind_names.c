/* callgrind_names.c - per-part interning of objects, files and function identities. */
#include <stdlib.h>
#include <string.h>

#include "callgrind_names.h"
#include "xalloc.h"

void cg_names_init(struct cg_names *n)
{
	memset(n, 0, sizeof(*n));
	strtab_init(&n->objs);
	strtab_init(&n->files);
	strtab_init(&n->fnkeys);
	for (int i = 0; i < 3; i++)
		idmap_init(&n->ids[i]);
}

void cg_names_free(struct cg_names *n)
{
	strtab_free(&n->objs);
	strtab_free(&n->files);
	strtab_free(&n->fnkeys);
	free(n->fns);
	for (int i = 0; i < 3; i++)
		idmap_free(&n->ids[i]);
	memset(n, 0, sizeof(*n));
}

void cg_names_clear(struct cg_names *n)
{
	strtab_clear(&n->objs);
	strtab_clear(&n->files);
	strtab_clear(&n->fnkeys);
	for (int i = 0; i < 3; i++)
		idmap_clear(&n->ids[i]);
}

uint32_t cg_names_intern(struct cg_names *n, enum cg_space space, const char *s, size_t len)
{
	return strtab_intern(space == SP_OBJ ? &n->objs : &n->files, s, len, NULL);
}

uint32_t cg_names_fn(struct cg_names *n, const char *name, size_t len, uint32_t obj, uint32_t file)
{
	int added;
	uint32_t i = strtab_intern_key(&n->fnkeys, name, len, obj, file, &added);
	if (added) {
		XGROW(n->fns, n->fns_cap, (size_t)i + 1);
		const struct strtab_entry *e = strtab_get(&n->fnkeys, i);
		n->fns[i].name = e->str;   /* the key starts with the NUL-terminated name */
		n->fns[i].len = len;
		n->fns[i].obj = obj;
		n->fns[i].file = file;
	}
	return i;
}
