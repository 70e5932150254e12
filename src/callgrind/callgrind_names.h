/* callgrind_names.h - one part's name tables, as kcachegrind binds them.
 * Three id spaces (objects: ob/cob; files: fl/fi/fe/cfi/cfl/jfi; functions: fn/cfn/jfn),
 * docs/formats.md 1.4. Objects and files are interned by name (there are few). A function
 * is an identity (name, object, file) fixed where its compressed id is first defined, with
 * the context then in effect (docs/formats.md 3.1); a later "(id)" reference returns that
 * identity whatever the current ob/fl. Uncompressed names are bound anew each time.
 * Function names are not kept, nor looked up: a profile with --separate-callers holds
 * hundreds of megabytes of them, and a table of every identity missed the cache on each
 * definition. Each compressed definition is a new function index; the reader hands its
 * name, object, file and length to the consumer once, there (cg_record.defs). A name
 * defined under two ids (--separate-callers can do that) is two indices with one (name,
 * object, file): consumers that need one identity per name (augment's writer for JIT
 * names, report's profile) key by the name. An index keeps only a fingerprint, which
 * tells "(id) same-name" again (fine) from "(id) other-name" (refused). Uncompressed names
 * ("fn=name": other writers, tests) are interned by (name, object, file) in a table of
 * their own, so that their indices follow the distinct names, not the lines. Everything
 * is cleared at each new part; memory grows with the number of definitions, 6 bytes each,
 * not with the length of the names. */
#ifndef CGJIT_CALLGRIND_NAMES_H
#define CGJIT_CALLGRIND_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "core/idmap.h"
#include "core/strtab.h"

enum cg_space { SP_OBJ, SP_FILE, SP_FN };

struct cg_fn {
	uint32_t fp;        /* fingerprint of (name, obj, file): name_scan_fp() */
	uint32_t len;       /* of the name, capped at CG_FN_LEN_MAX */
};
enum { CG_FN_LEN_MAX = UINT16_MAX };

struct cg_names {
	struct strtab objs;     /* index -> object name */
	struct strtab files;    /* index -> file name */
	uint32_t *fn_fp;        /* index -> function fingerprint ... */
	uint16_t *fn_len;       /* ... and name length (6 bytes a function, not 8) */
	size_t nfns, fn_fp_cap, fn_len_cap;
	struct idmap plain;     /* uncompressed names: cg_names_plain_key() -> index */
	struct idmap ids[3];    /* compressed input id -> index, per space: sparse ids */
	/* ... and small ids, where callgrind's are: 3 bytes an id, the index little-endian
	 * (CG_DENSE_NONE: none; larger indices go to the map), with a byte to spare after */
	unsigned char *dense[3];
	size_t dense_cap[3], dense_n[3];   /* capacity in bytes; ids covered */
	size_t nids[3];
};

void cg_names_init(struct cg_names *n);
void cg_names_free(struct cg_names *n);
void cg_names_clear(struct cg_names *n);

enum { CG_DENSE_NONE = 0xffffff };

/* The index bound to compressed id ID in SPACE, or UINT32_MAX. */
static inline uint32_t cg_names_id_get(const struct cg_names *n, enum cg_space sp, uint64_t id)
{
	/* an id put in the map may lie below a later, larger table */
	if (id < n->dense_n[sp]) {
		const unsigned char *e = n->dense[sp] + 3 * id;
		uint32_t i = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16;
		if (i != CG_DENSE_NONE)
			return i;
	}
	return idmap_get(&n->ids[sp], id);
}
void cg_names_id_put(struct cg_names *n, enum cg_space sp, uint64_t id, uint32_t index);

/* Interns an object or file name; returns its index. */
uint32_t cg_names_intern(struct cg_names *n, enum cg_space space, const char *s, size_t len);

/* A new function index for a compressed definition with fingerprint FP and name length
 * LEN. Returns the index. */
uint32_t cg_names_add_fn(struct cg_names *n, uint32_t fp, size_t len);
/* The index of the uncompressed function (NAME, OBJ, FILE), added with fingerprint FP if
 * new (*ADDED tells). */
uint32_t cg_names_intern_plain(struct cg_names *n, const char *name, size_t len, uint32_t obj,
			       uint32_t file, uint32_t fp, int *added);
static inline struct cg_fn cg_names_get_fn(const struct cg_names *n, uint32_t i)
{
	return (struct cg_fn){ n->fn_fp[i], n->fn_len[i] };
}
static inline const struct strtab_entry *cg_names_get(const struct cg_names *n,
						      enum cg_space space, uint32_t i)
{
	return strtab_get(space == SP_OBJ ? &n->objs : &n->files, i);
}
static inline size_t cg_names_count(const struct cg_names *n, enum cg_space space)
{
	return space == SP_OBJ ? n->objs.count : space == SP_FILE ? n->files.count : n->nfns;
}

#endif
