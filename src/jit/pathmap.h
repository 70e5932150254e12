/* pathmap.h - source paths inside JIT names and files made relative to a root, or given
 * another prefix (--root DIR, --path-map OLD=NEW), so that runs of one program from two
 * checkout directories name their JIT code alike (README "Reports for CI").
 * A map is a list of (OLD, NEW) prefixes. A path lies under OLD when it starts with OLD
 * at a component boundary (/a/b/x and /a/b are under /a/b, /a/bc is not) and the rest
 * holds no ".." component (it would climb out of OLD). The longest such OLD wins, of two
 * equal ones the later. The rest then follows NEW ("NEW/rest"), or stands alone when NEW
 * is empty: the path becomes relative ("." for OLD itself). A path under no OLD is kept.
 * Only paths are mapped: JIT names keep every other byte (the path in a name is the one
 * its runtime's convention locates, jitname.h). Used by augment (symtab.c: names and
 * line-table files as they are read) and by the report commands (profile.c: every name
 * and file as it is read). */
#ifndef CGJIT_PATHMAP_H
#define CGJIT_PATHMAP_H

#include <stddef.h>

struct diag;
struct pathmap;

/* A growing buffer for mapped names and paths; the caller owns it and frees it with
 * pathmap_buf_free(). Zero-initialised is empty. */
struct pathmap_buf {
	char *s;
	size_t len, cap;
};

struct pathmap *pathmap_new(void);
void pathmap_free(struct pathmap *pm);   /* NULL is a no-op */
void pathmap_buf_free(struct pathmap_buf *b);

/* Adds OLD -> NEW (both copied). Trailing slashes are dropped ("/" stays "/"). OLD must
 * not be empty; neither may hold control characters, and NEW no blank or "'" (a V8 name
 * ends in a blank and the path, callgrind's names split at "'"). Returns 0, or -1 with D
 * set ("--path-map: ..."). */
int pathmap_add(struct pathmap *pm, const char *old, const char *new_, struct diag *d);
/* Adds the argument of --path-map, "OLD=NEW" (split at the first '='; NEW may be empty).
 * Returns 0, or -1 with D set: no '=', or pathmap_add()'s errors. */
int pathmap_add_arg(struct pathmap *pm, const char *arg, struct diag *d);
/* Adds --root DIR: DIR as an absolute path (a relative DIR taken from the current
 * directory as the shell names it, $PWD when that is it, else getcwd()), ".", ".." and
 * repeated slashes resolved by the spelling, -> ""; and DIR's real path (links resolved,
 * as node and getcwd() write it) -> "" too, when DIR exists and that differs. Returns 0,
 * or -1 with D set (DIR empty, the current directory unknown). */
int pathmap_add_root(struct pathmap *pm, const char *dir, struct diag *d);
/* Entries added (a root may add two). */
size_t pathmap_count(const struct pathmap *pm);

/* PATH (LEN bytes) mapped. Returns PATH itself when no OLD covers it (or PM is NULL),
 * else B's string (valid until B is used again); *OUT_LEN gets the length either way. */
const char *pathmap_path(const struct pathmap *pm, const char *path, size_t len,
			 struct pathmap_buf *b, size_t *out_len);
/* A JIT symbol name with the source path its convention gives (jitname_parse()) mapped,
 * every other byte kept: "JS:*f /ci/a.js:1:2" -> "JS:*f a.js:1:2" under --root /ci.
 * Returns NAME or B's string as pathmap_path() does. */
const char *pathmap_name(const struct pathmap *pm, const char *name, size_t len,
			 struct pathmap_buf *b, size_t *out_len);
/* A function name as callgrind (or cgjit augment) writes it: the symbol name and any
 * "'N" / "'caller" parts, each part mapped as pathmap_name() maps a name. */
const char *pathmap_callgrind_name(const struct pathmap *pm, const char *name, size_t len,
				   struct pathmap_buf *b, size_t *out_len);

#endif
