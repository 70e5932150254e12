/* pathmap.c - --root and --path-map: prefix entries, the longest match at a component
 * boundary, and the path inside a JIT name located by jitname.c. Owns copies of every
 * OLD and NEW; mapped strings go into the caller's struct pathmap_buf. */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "jit/jitname.h"
#include "jit/pathmap.h"

struct entry {
	char *old, *new_;
	size_t old_len, new_len;
};

struct pathmap {
	struct entry *v;
	size_t n, cap;
};

struct pathmap *pathmap_new(void)
{
	return xcalloc(1, sizeof(struct pathmap));
}

void pathmap_free(struct pathmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++) {
		free(pm->v[i].old);
		free(pm->v[i].new_);
	}
	free(pm->v);
	free(pm);
}

void pathmap_buf_free(struct pathmap_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

size_t pathmap_count(const struct pathmap *pm)
{
	return pm ? pm->n : 0;
}

/* Trailing slashes do not change which paths lie under a prefix: dropped, but for "/". */
static size_t trim_slashes(const char *s, size_t n)
{
	while (n > 1 && s[n - 1] == '/')
		n--;
	return n;
}

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int pathmap_add(struct pathmap *pm, const char *old, const char *new_, struct diag *d)
{
	if (!*old)
		return diag_at(d, "--path-map", 0, "OLD is empty in '%s=%s': give the prefix to replace",
			       old, new_);
	if (has_control(old) || has_control(new_))
		return diag_at(d, "--path-map", 0, "control characters in a path prefix: no JIT name holds them");
	/* A blank would end the path that a V8 name ends with, and "'" separates the parts of
	 * callgrind's names: a NEW with either would put the path elsewhere than it was. */
	if (strpbrk(new_, " \t'"))
		return diag_at(d, "--path-map", 0, "NEW '%s' holds a blank or a \"'\": names would "
			       "no longer show where their path is", new_);
	XGROW(pm->v, pm->cap, pm->n + 1);
	struct entry *e = &pm->v[pm->n++];
	e->old_len = trim_slashes(old, strlen(old));
	e->old = xstrndup(old, e->old_len);
	e->new_len = trim_slashes(new_, strlen(new_));
	e->new_ = xstrndup(new_, e->new_len);
	return 0;
}

int pathmap_add_arg(struct pathmap *pm, const char *arg, struct diag *d)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return diag_at(d, "--path-map", 0, "expected OLD=NEW (NEW may be empty: OLD=), got '%s'", arg);
	char *old = xstrndup(arg, (size_t)(eq - arg));
	int rc = pathmap_add(pm, old, eq + 1, d);
	free(old);
	return rc;
}

/* ABS (absolute) with ".", ".." and repeated slashes resolved by the spelling alone, as
 * the shell's `cd` does; ".." at the top stays at the top. Returns a malloc'd path. */
static char *normalize(const char *abs)
{
	size_t n = strlen(abs);
	char *out = xmalloc(n + 2);
	size_t k = 0;
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		const char *q = p;
		while (*q && *q != '/')
			q++;
		size_t c = (size_t)(q - p);
		if (c == 2 && p[0] == '.' && p[1] == '.') {
			while (k > 0 && out[k - 1] != '/')
				k--;
			if (k > 0)
				k--;   /* the slash before the dropped component */
		} else if (c && !(c == 1 && p[0] == '.')) {
			out[k++] = '/';
			memcpy(out + k, p, c);
			k += c;
		}
		p = q;
	}
	if (k == 0)
		out[k++] = '/';
	out[k] = '\0';
	return out;
}

/* The current directory as the shell names it: $PWD when it is absolute and is the
 * current directory (same device and inode), else getcwd(). Returns a malloc'd path, or
 * NULL. */
static char *current_dir(void)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	if (pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return xstrndup(pwd, strlen(pwd));
	char buf[PATH_MAX];
	return getcwd(buf, sizeof(buf)) ? xstrndup(buf, strlen(buf)) : NULL;
}

int pathmap_add_root(struct pathmap *pm, const char *dir, struct diag *d)
{
	if (!*dir)
		return diag_at(d, "--root", 0, "'' is an empty directory name");
	char *abs;
	if (dir[0] == '/') {
		abs = xstrndup(dir, strlen(dir));
	} else {
		char *cwd = current_dir();
		if (!cwd)
			return diag_at(d, "--root", 0, "'%s' is relative and the current directory is "
				       "unknown", dir);
		abs = xmalloc(strlen(cwd) + strlen(dir) + 2);
		strcpy(abs, cwd);
		strcat(abs, "/");
		strcat(abs, dir);
		free(cwd);
	}
	char *spelled = normalize(abs);
	free(abs);
	int rc = pathmap_add(pm, spelled, "", d);
	/* Runtimes write the path they were given (CPython: the script's path as typed, made
	 * absolute) or its real path (node resolves links): a root through a link covers both. */
	char *real = rc == 0 ? realpath(dir, NULL) : NULL;
	if (real && strcmp(real, spelled))
		rc = pathmap_add(pm, real, "", d);
	free(real);
	free(spelled);
	return rc;
}

/* 1 if the N bytes at S hold a ".." component. */
static int climbs(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '.' && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
		    (i + 2 == n || s[i + 2] == '/'))
			return 1;
	return 0;
}

/* The entry whose OLD covers PATH, or NULL; *REST gets the offset of the rest. */
static const struct entry *match(const struct pathmap *pm, const char *path, size_t len,
				 size_t *rest)
{
	const struct entry *best = NULL;
	for (size_t i = 0; i < pm->n; i++) {
		const struct entry *e = &pm->v[i];
		size_t k = e->old_len;
		if (k > len || memcmp(path, e->old, k) != 0)
			continue;
		/* at a component boundary: OLD "/" ends in one itself */
		if (k < len && path[k] != '/' && !(k == 1 && e->old[0] == '/'))
			continue;
		if (best && k < best->old_len)
			continue;   /* the longest wins; of equal ones the later (>=) */
		best = e;
	}
	if (!best)
		return NULL;
	size_t r = best->old_len;
	while (r < len && path[r] == '/')
		r++;
	if (climbs(path + r, len - r))
		return NULL;   /* a shorter OLD has the same rest, ".." and all */
	*rest = r;
	return best;
}

/* Appends N bytes of S to B. */
static void put(struct pathmap_buf *b, const char *s, size_t n)
{
	XGROW(b->s, b->cap, b->len + n + 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Appends to B what entry E makes of PATH (REST: where the rest of it starts). */
static void put_mapped(struct pathmap_buf *b, const struct entry *e, const char *path,
		       size_t len, size_t rest)
{
	put(b, e->new_, e->new_len);
	if (rest < len) {
		if (e->new_len && !(e->new_len == 1 && e->new_[0] == '/'))
			put(b, "/", 1);
		put(b, path + rest, len - rest);
	} else if (!e->new_len) {
		put(b, ".", 1);   /* OLD itself, relative to OLD */
	}
}

const char *pathmap_path(const struct pathmap *pm, const char *path, size_t len,
			 struct pathmap_buf *b, size_t *out_len)
{
	size_t rest;
	const struct entry *e = pm ? match(pm, path, len, &rest) : NULL;
	if (!e) {
		*out_len = len;
		return path;
	}
	b->len = 0;
	put_mapped(b, e, path, len, rest);
	*out_len = b->len;
	return b->s;
}

/* Whether some OLD occurs in the N bytes at S: most names of a big map (a runtime's
 * builtins, node's own modules) hold none, and are then not parsed at all. */
static int mentions_old(const struct pathmap *pm, const char *s, size_t n)
{
	for (size_t i = 0; i < pm->n; i++) {
		const char *old = pm->v[i].old, *p = s, *end = s + n;
		size_t k = pm->v[i].old_len;
		while ((size_t)(end - p) >= k && (p = memchr(p, old[0], (size_t)(end - p - (ptrdiff_t)k) + 1))) {
			if (!memcmp(p, old, k))
				return 1;
			p++;
		}
	}
	return 0;
}

/* Appends NAME with its path mapped to B and returns 1; or appends nothing and returns 0
 * when the name has no path that an OLD covers. */
static int put_name(const struct pathmap *pm, struct pathmap_buf *b, const char *name, size_t len)
{
	struct jitname jn;
	size_t rest;
	const struct entry *e;
	if (!pm || !pm->n || !mentions_old(pm, name, len) || !jitname_parse(name, len, &jn) ||
	    !jn.file || !(e = match(pm, jn.file, jn.file_len, &rest)))
		return 0;
	size_t at = (size_t)(jn.file - name);
	put(b, name, at);
	put_mapped(b, e, jn.file, jn.file_len, rest);
	put(b, jn.file + jn.file_len, len - at - jn.file_len);
	return 1;
}

const char *pathmap_name(const struct pathmap *pm, const char *name, size_t len,
			 struct pathmap_buf *b, size_t *out_len)
{
	b->len = 0;
	if (!put_name(pm, b, name, len)) {
		*out_len = len;
		return name;
	}
	*out_len = b->len;
	return b->s;
}

const char *pathmap_callgrind_name(const struct pathmap *pm, const char *name, size_t len,
				   struct pathmap_buf *b, size_t *out_len)
{
	if (!pm || !pm->n || !mentions_old(pm, name, len)) {
		*out_len = len;
		return name;
	}
	b->len = 0;
	int mapped = 0;
	for (size_t i = 0; i <= len;) {
		const char *q = memchr(name + i, '\'', len - i);
		size_t j = q ? (size_t)(q - name) : len;
		if (i)
			put(b, "'", 1);
		if (put_name(pm, b, name + i, j - i))
			mapped = 1;
		else
			put(b, name + i, j - i);
		i = j + 1;
	}
	if (!mapped) {
		*out_len = len;
		return name;
	}
	*out_len = b->len;
	return b->s;
}
