/* profile_name.c - function names in a profile by their parts: a name is split at every "'"
 * (callgrind's --separate-callers and --separate-recs contexts, "f'caller1'caller2") and
 * each part is interned once in the profile's parts table, so that a function costs 4
 * bytes per part, not a byte per character (docs/design.md, "Memory"). The text is made
 * only where it is shown or matched, into a buffer the caller owns. The function's key in
 * the profile's keys table is its part indices, then its object and file indices. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/profile.h"

/* Ids on the stack for names of up to this many parts; longer ones take the heap. */
#define STACK_PARTS 64

uint32_t profile_name_intern(struct profile *p, const char *name, size_t len, uint32_t obj,
			     uint32_t file, int *added)
{
	size_t n = 1;
	for (size_t i = 0; i < len; i++)
		n += name[i] == '\'';
	uint32_t stack[STACK_PARTS + 2];
	uint32_t *key = n <= STACK_PARTS ? stack : xmalloc((n + 2) * sizeof(*key));
	size_t k = 0, i = 0;
	for (;;) {   /* every "'" ends a part, so "a'" is "a" and "", and "" is one empty part */
		size_t j = i;
		while (j < len && name[j] != '\'')
			j++;
		key[k++] = strtab_intern(&p->name_parts, name + i, j - i, NULL);
		if (j == len)
			break;
		i = j + 1;
	}
	key[k++] = obj;
	key[k++] = file;
	uint32_t r = strtab_intern(&p->keys, (const char *)key, k * sizeof(*key), added);
	if (key != stack)
		free(key);
	return r;
}

/* The key's bytes are not aligned for uint32_t (the table's arena packs them): read by copy. */
static uint32_t key_at(const struct strtab_entry *k, size_t i)
{
	uint32_t v;
	memcpy(&v, k->str + i * sizeof(v), sizeof(v));
	return v;
}

static size_t parts_of(const struct strtab_entry *k)
{
	return k->len / sizeof(uint32_t) - 2;
}

void profile_key_where(const struct profile *p, size_t fn, uint32_t *obj, uint32_t *file)
{
	const struct strtab_entry *k = strtab_get(&p->keys, (uint32_t)fn);
	size_t n = parts_of(k);
	*obj = key_at(k, n);
	*file = key_at(k, n + 1);
}

size_t profile_name_parts(const struct profile *p, size_t fn)
{
	return parts_of(strtab_get(&p->keys, (uint32_t)fn));
}

uint32_t profile_name_part(const struct profile *p, size_t fn, size_t i)
{
	return key_at(strtab_get(&p->keys, (uint32_t)fn), i);
}

size_t profile_name_len(const struct profile *p, size_t fn)
{
	const struct strtab_entry *k = strtab_get(&p->keys, (uint32_t)fn);
	size_t n = parts_of(k), len = n - 1;
	for (size_t i = 0; i < n; i++)
		len += strtab_get(&p->name_parts, key_at(k, i))->len;
	return len;
}

const char *profile_name(const struct profile *p, size_t fn, struct prof_name *buf)
{
	const struct strtab_entry *k = strtab_get(&p->keys, (uint32_t)fn);
	size_t n = parts_of(k);
	XGROW(buf->s, buf->cap, profile_name_len(p, fn) + 1);
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		const struct strtab_entry *part = strtab_get(&p->name_parts, key_at(k, i));
		if (i)
			buf->s[len++] = '\'';
		memcpy(buf->s + len, part->str, part->len);
		len += part->len;
	}
	buf->s[len] = '\0';
	buf->len = len;
	return buf->s;
}

void prof_name_free(struct prof_name *buf)
{
	free(buf->s);
	memset(buf, 0, sizeof(*buf));
}

/* A name read as strcmp reads the text: its parts joined by "'", ended by a NUL. */
struct name_cursor {
	const struct profile *p;
	const struct strtab_entry *key;
	size_t nparts, part;
};

static const struct strtab_entry *cursor_text(const struct name_cursor *c)
{
	return strtab_get(&c->p->name_parts, key_at(c->key, c->part));
}

/* The byte after the end of the cursor's current part: "'" or the name's end. */
static unsigned char cursor_after(const struct name_cursor *c)
{
	return c->part + 1 < c->nparts ? '\'' : 0;
}

/* Parts with one index are one text and are skipped whole; the first differing part
 * decides, where the shorter one's next byte is "'" or the end (no part holds "'"). A NUL
 * inside a part ends the comparison there, as it ends strcmp's. */
int profile_name_cmp(const struct profile *pa, size_t a, const struct profile *pb, size_t b)
{
	struct name_cursor x = { pa, strtab_get(&pa->keys, (uint32_t)a), 0, 0 };
	struct name_cursor y = { pb, strtab_get(&pb->keys, (uint32_t)b), 0, 0 };
	x.nparts = parts_of(x.key);
	y.nparts = parts_of(y.key);
	for (;; x.part++, y.part++) {
		if (pa != pb || key_at(x.key, x.part) != key_at(y.key, y.part)) {
			const struct strtab_entry *s = cursor_text(&x), *t = cursor_text(&y);
			size_t m = s->len < t->len ? s->len : t->len;
			for (size_t i = 0; i < m; i++) {
				unsigned char u = (unsigned char)s->str[i], v = (unsigned char)t->str[i];
				if (u != v)
					return u < v ? -1 : 1;
				if (!u)
					return 0;
			}
			unsigned char u = s->len > m ? (unsigned char)s->str[m] : cursor_after(&x);
			unsigned char v = t->len > m ? (unsigned char)t->str[m] : cursor_after(&y);
			if (u != v)
				return u < v ? -1 : 1;
			if (!u)
				return 0;
		}
		int xend = x.part + 1 == x.nparts, yend = y.part + 1 == y.nparts;
		if (xend || yend)
			return xend == yend ? 0 : xend ? -1 : 1;
	}
}
