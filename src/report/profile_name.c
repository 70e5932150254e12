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
	uint32_t stack[STACK_PARTS + 2], *key = stack;
	size_t k = 0, cap = STACK_PARTS;
	const char *s = name, *end = name + len;
	for (;;) {   /* every "'" ends a part, so "a'" is "a" and "", and "" is one empty part */
		const char *q = s < end ? memchr(s, '\'', (size_t)(end - s)) : NULL;
		const char *e = q ? q : end;
		if (k == cap) {   /* a name of more parts than the stack holds */
			uint32_t *more = xmalloc((2 * cap + 2) * sizeof(*more));
			memcpy(more, key, k * sizeof(*key));
			if (key != stack)
				free(key);
			key = more;
			cap *= 2;
		}
		key[k++] = strtab_intern(&p->name_parts, s, (size_t)(e - s), NULL);
		if (!q)
			break;
		s = q + 1;
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

const char *profile_obj(const struct profile *p, size_t fn)
{
	uint32_t o, f;
	profile_key_where(p, fn, &o, &f);
	return strtab_get(&p->objs, o)->str;
}

const char *profile_file(const struct profile *p, size_t fn)
{
	uint32_t o, f;
	profile_key_where(p, fn, &o, &f);
	return strtab_get(&p->files, f)->str;
}

size_t profile_name_parts(const struct profile *p, size_t fn)
{
	return parts_of(strtab_get(&p->keys, (uint32_t)fn));
}

uint32_t profile_name_part(const struct profile *p, size_t fn, size_t i)
{
	return key_at(strtab_get(&p->keys, (uint32_t)fn), i);
}

size_t profile_name_part_ids(const struct profile *p, size_t fn, uint32_t *ids, size_t cap)
{
	const struct strtab_entry *k = strtab_get(&p->keys, (uint32_t)fn);
	size_t n = parts_of(k);
	for (size_t i = 0; i < n && i < cap; i++)
		ids[i] = key_at(k, i);
	return n;
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

struct prof_name_key profile_name_key(const struct profile *p, size_t fn)
{
	const struct strtab_entry *k = strtab_get(&p->keys, (uint32_t)fn);
	return (struct prof_name_key){ k->str, parts_of(k) };
}

static uint32_t part_id(const struct prof_name_key *k, size_t i)
{
	uint32_t v;
	memcpy(&v, k->parts + i * sizeof(v), sizeof(v));
	return v;
}

/* The first differing part decides, where the shorter one's next byte is "'" or the name's
 * end (no part holds "'"); strcmp's rule: unsigned bytes, a NUL ends the comparison. */
static int cmp_parts(const struct strtab_entry *s, const struct strtab_entry *t, int s_more, int t_more)
{
	size_t m = s->len < t->len ? s->len : t->len;
	const char *nul = memchr(s->str, 0, m);
	int c = memcmp(s->str, t->str, nul ? (size_t)(nul - s->str) + 1 : m);
	if (c || nul)
		return c < 0 ? -1 : c > 0;
	unsigned char u = s->len > m ? (unsigned char)s->str[m] : s_more ? '\'' : 0;
	unsigned char v = t->len > m ? (unsigned char)t->str[m] : t_more ? '\'' : 0;
	if (u != v)
		return u < v ? -1 : 1;
	return u ? 2 : 0;   /* 2: equal so far, both go on */
}

int profile_name_key_cmp(const struct profile *pa, const struct prof_name_key *a,
			 const struct profile *pb, const struct prof_name_key *b)
{
	for (size_t i = 0;; i++) {
		uint32_t x = part_id(a, i), y = part_id(b, i);
		int a_more = i + 1 < a->nparts, b_more = i + 1 < b->nparts;
		if (pa != pb || x != y) {   /* equal indices in one profile: one text */
			int c = cmp_parts(strtab_get(&pa->name_parts, x), strtab_get(&pb->name_parts, y),
					  a_more, b_more);
			if (c != 2)
				return c;
		} else if (!a_more || !b_more) {
			return a_more == b_more ? 0 : a_more ? 1 : -1;
		}
	}
}

int profile_name_cmp(const struct profile *pa, size_t a, const struct profile *pb, size_t b)
{
	struct prof_name_key x = profile_name_key(pa, a), y = profile_name_key(pb, b);
	return profile_name_key_cmp(pa, &x, pb, &y);
}
