/* callgrind_names.h - one part's name tables, as kcachegrind binds them.
 * Three id spaces (objects: ob/cob; files: fl/fi/fe/cfi/cfl/jfi; functions: fn/cfn/jfn),
 * see callgrind-format.md 1.4. Objects and files are interned by name. A function is an
 * identity (name, object, file) fixed where its compressed id is first defined, with the
 * context then in effect (callgrind-format.md 3.1); a later "(id)" reference returns that
 * identity whatever the current ob/fl. Uncompressed names are bound anew each time.
 * Everything is cleared at each new part; memory grows with the number of names. */
#ifndef CGJIT_CALLGRIND_NAMES_H
#define CGJIT_CALLGRIND_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "strtab.h"

enum cg_space { SP_OBJ, SP_FILE, SP_FN };

struct cg_fn {
	const char *name;   /* NUL-terminated, LEN bytes */
	size_t len;
	uint32_t obj;       /* index into the object table */
	uint32_t file;      /* index into the file table */
};

struct cg_names {
	struct strtab objs;     /* index -> object name */
	struct strtab files;    /* index -> file name */
	struct strtab fnkeys;   /* index -> "name\0<obj><file>" */
	struct cg_fn *fns;      /* parallel to fnkeys */
	size_t fns_cap;
	struct idmap ids[3];    /* compressed input id -> index, per space */
};

void cg_names_init(struct cg_names *n);
void cg_names_free(struct cg_names *n);
void cg_names_clear(struct cg_names *n);

/* Interns an object or file name; returns its index. */
uint32_t cg_names_intern(struct cg_names *n, enum cg_space space, const char *s, size_t len);
/* Interns the function identity (NAME, OBJ, FILE); returns its index. */
uint32_t cg_names_fn(struct cg_names *n, const char *name, size_t len, uint32_t obj, uint32_t file);
static inline const struct cg_fn *cg_names_get_fn(const struct cg_names *n, uint32_t i)
{
	return &n->fns[i];
}
static inline const struct strtab_entry *cg_names_get(const struct cg_names *n,
						      enum cg_space space, uint32_t i)
{
	return strtab_get(space == SP_OBJ ? &n->objs : &n->files, i);
}
static inline size_t cg_names_count(const struct cg_names *n, enum cg_space space)
{
	return space == SP_OBJ ? n->objs.count : space == SP_FILE ? n->files.count : n->fnkeys.count;
}

#endif
