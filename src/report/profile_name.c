/* profile_name.c - function names in a profile as a tree of their parts. A name is split
 * at every "'" (callgrind's --separate-callers and --separate-recs contexts,
 * "f'caller1'caller2"); each part's text is interned once in the parts table, and the
 * name is a node of a tree whose path from the root reads its parts from the last:
 * caller2, caller1, f. Functions called from one context share that context's nodes, so a
 * profile whose names repeat a few thousand parts in hundreds of megabytes of text keeps
 * 8 bytes a node and 12 a function (docs/design.md, "Memory"). Walking up from a
 * function's node reads its parts in order. The text is made only where it is shown or
 * matched, into a buffer the caller owns. */
#include <stdlib.h>
#include <string.h>

#include "core/slot_index.h"
#include "core/xalloc.h"
#include "report/profile.h"

/* Part ids on the stack for names of up to this many parts; longer ones take the heap. */
#define STACK_PARTS 64

static uint64_t node_key(uint32_t parent, uint32_t part)
{
	return (uint64_t)parent << 32 | part;
}

static uint64_t fn_key(const struct prof_key *k)
{
	return node_key(k->node, k->obj) ^ (uint64_t)k->file * 0x9e3779b97f4a7c15ULL;
}

static uint64_t key_of_node(const void *ctx, size_t x)
{
	const struct prof_names *t = ctx;
	return node_key(t->nodes[x].parent, t->nodes[x].part);
}

static uint64_t key_of_fn(const void *ctx, size_t f)
{
	const struct prof_names *t = ctx;
	return fn_key(&t->keys[f]);
}

/* The node under PARENT for part PART, added if new. */
static uint32_t child(struct prof_names *t, uint32_t parent, uint32_t part)
{
	struct slot_index *x = &t->node_index;
	slot_index_reserve(x, 1, t->nnodes, key_of_node, t);   /* the root is never looked up */
	for (size_t i = slot_index_home(x, node_key(parent, part));; i = slot_index_next(x, i)) {
		uint32_t v = x->slots[i];
		if (!v) {
			XGROW(t->nodes, t->nodes_cap, t->nnodes + 1);
			t->nodes[t->nnodes] = (struct prof_name_node){ parent, part };
			x->slots[i] = (uint32_t)++t->nnodes;
			return (uint32_t)t->nnodes - 1;
		}
		if (t->nodes[v - 1].parent == parent && t->nodes[v - 1].part == part)
			return v - 1;
	}
}

/* The function with key K among P's NFNS, or a new one numbered NFNS. */
static uint32_t function(struct prof_names *t, size_t nfns, const struct prof_key *k, int *added)
{
	struct slot_index *x = &t->key_index;
	slot_index_reserve(x, 0, nfns, key_of_fn, t);
	for (size_t i = slot_index_home(x, fn_key(k));; i = slot_index_next(x, i)) {
		uint32_t v = x->slots[i];
		if (!v) {
			XGROW(t->keys, t->keys_cap, nfns + 1);
			t->keys[nfns] = *k;
			x->slots[i] = (uint32_t)nfns + 1;
			*added = 1;
			return (uint32_t)nfns;
		}
		const struct prof_key *o = &t->keys[v - 1];
		if (o->node == k->node && o->obj == k->obj && o->file == k->file) {
			*added = 0;
			return v - 1;
		}
	}
}

uint32_t profile_name_intern(struct profile *p, const char *name, size_t len, uint32_t obj,
			     uint32_t file, int *added)
{
	struct prof_names *t = &p->names;
	if (!t->nnodes) {   /* the root: no part */
		XGROW(t->nodes, t->nodes_cap, 1);
		t->nodes[0] = (struct prof_name_node){ UINT32_MAX, UINT32_MAX };
		t->nnodes = 1;
	}
	uint32_t stack[STACK_PARTS], *ids = stack;
	size_t k = 0, cap = STACK_PARTS;
	const char *s = name, *end = name + len;
	for (;;) {   /* every "'" ends a part, so "a'" is "a" and "", and "" is one empty part */
		const char *q = s < end ? memchr(s, '\'', (size_t)(end - s)) : NULL;
		const char *e = q ? q : end;
		if (k == cap) {   /* a name of more parts than the stack holds */
			uint32_t *more = xmalloc(2 * cap * sizeof(*more));
			memcpy(more, ids, k * sizeof(*ids));
			if (ids != stack)
				free(ids);
			ids = more;
			cap *= 2;
		}
		ids[k++] = strtab_intern(&p->name_parts, s, (size_t)(e - s), NULL);
		if (!q)
			break;
		s = q + 1;
	}
	uint32_t node = 0;
	while (k)
		node = child(t, node, ids[--k]);
	if (ids != stack)
		free(ids);
	struct prof_key key = { node, obj, file };
	int a;
	uint32_t fn = function(t, p->nfns, &key, &a);
	if (added)
		*added = a;
	return fn;
}

void profile_names_seal(struct profile *p)
{
	slot_index_free(&p->names.node_index);
	slot_index_free(&p->names.key_index);
}

void profile_names_free(struct profile *p)
{
	profile_names_seal(p);
	free(p->names.nodes);
	free(p->names.keys);
	memset(&p->names, 0, sizeof(p->names));
}

void profile_key_where(const struct profile *p, size_t fn, uint32_t *obj, uint32_t *file)
{
	*obj = p->names.keys[fn].obj;
	*file = p->names.keys[fn].file;
}

const char *profile_obj(const struct profile *p, size_t fn)
{
	return strtab_get(&p->objs, p->names.keys[fn].obj)->str;
}

const char *profile_file(const struct profile *p, size_t fn)
{
	return strtab_get(&p->files, p->names.keys[fn].file)->str;
}

size_t profile_name_part_ids(const struct profile *p, size_t fn, uint32_t *ids, size_t cap)
{
	const struct prof_name_node *nodes = p->names.nodes;
	size_t n = 0;
	for (uint32_t x = p->names.keys[fn].node; x; x = nodes[x].parent, n++)
		if (n < cap)
			ids[n] = nodes[x].part;
	return n;
}

size_t profile_name_parts(const struct profile *p, size_t fn)
{
	return profile_name_part_ids(p, fn, NULL, 0);
}

uint32_t profile_name_part(const struct profile *p, size_t fn, size_t i)
{
	const struct prof_name_node *nodes = p->names.nodes;
	uint32_t x = p->names.keys[fn].node;
	while (i--)
		x = nodes[x].parent;
	return nodes[x].part;
}

size_t profile_name_len(const struct profile *p, size_t fn)
{
	const struct prof_name_node *nodes = p->names.nodes;
	size_t len = 0;
	for (uint32_t x = p->names.keys[fn].node; x; x = nodes[x].parent)
		len += strtab_get(&p->name_parts, nodes[x].part)->len + (nodes[x].parent != 0);
	return len;
}

const char *profile_name(const struct profile *p, size_t fn, struct prof_name *buf)
{
	const struct prof_name_node *nodes = p->names.nodes;
	XGROW(buf->s, buf->cap, profile_name_len(p, fn) + 1);
	size_t len = 0;
	for (uint32_t x = p->names.keys[fn].node; x; x = nodes[x].parent) {
		const struct strtab_entry *part = strtab_get(&p->name_parts, nodes[x].part);
		memcpy(buf->s + len, part->str, part->len);
		len += part->len;
		if (nodes[x].parent)
			buf->s[len++] = '\'';
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
	return (struct prof_name_key){ p->names.keys[fn].node };
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
	const struct prof_name_node *na = pa->names.nodes, *nb = pb->names.nodes;
	uint32_t x = a->node, y = b->node;
	for (;;) {
		/* one node of one profile: the same parts from here to the end */
		if (pa == pb && x == y)
			return 0;
		int a_more = na[x].parent != 0, b_more = nb[y].parent != 0;
		int c = cmp_parts(strtab_get(&pa->name_parts, na[x].part), strtab_get(&pb->name_parts, nb[y].part),
				  a_more, b_more);
		if (c != 2)
			return c;
		x = na[x].parent;
		y = nb[y].parent;
	}
}

int profile_name_cmp(const struct profile *pa, size_t a, const struct profile *pb, size_t b)
{
	struct prof_name_key x = profile_name_key(pa, a), y = profile_name_key(pb, b);
	return profile_name_key_cmp(pa, &x, pb, &y);
}
