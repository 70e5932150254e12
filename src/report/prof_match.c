/* prof_match.c - which function of one profile is which of another, by kcachegrind's key:
 * object file name, file, name. The key is never made as text nor stored: NEW's functions
 * are indexed by their parts, object class and file as they are (4 bytes a slot), and
 * BASE's looked up with their parts and file put in NEW's numbers, so that a comparison of
 * two large profiles holds no third table of names (docs/design.md, "Memory"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "core/slot_index.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "report/prof_match.h"
#include "report/profile.h"

/* A JIT object's file name carries the pid of its run (perf-PID.map, jit-PID.dump.elf),
 * which changes every time: PID is left out of the key, so that runs can be compared.
 * OUT has room for strlen(BASE) + 3 bytes. */
static size_t object_key(const char *base, char *out)
{
	size_t n = strlen(base), k = 0;
	const char *digits = !strncmp(base, "perf-", 5) ? base + 5 : !strncmp(base, "jit-", 4) ? base + 4 : NULL;
	if (!digits || *digits < '0' || *digits > '9') {
		memcpy(out, base, n);
		return n;
	}
	const char *rest = digits;
	while (*rest >= '0' && *rest <= '9')
		rest++;
	memcpy(out, base, (size_t)(digits - base));
	k = (size_t)(digits - base);
	memcpy(out + k, "PID", 3);
	k += 3;
	memcpy(out + k, rest, strlen(rest));
	return k + strlen(rest);
}

/* A function's key in NEW's numbers: its object's class (the object_key() text's index in
 * CLS), its file in NEW's files, its parts in NEW's parts table (IDS, N of them). */
struct key {
	uint32_t cls, file;
	const uint32_t *ids;
	size_t n;
};

struct matcher {
	const struct profile *base, *now;
	struct strtab cls;
	uint32_t *base_cls, *now_cls;   /* object -> class, UINT32_MAX: no such object in NEW */
	uint32_t *base_file;            /* BASE's file -> NEW's, or UINT32_MAX */
	uint32_t *base_part;            /* BASE's part -> NEW's, or UINT32_MAX */
	struct slot_index index;        /* NEW's functions by key */
	uint32_t *ids, *other;          /* part buffers */
	size_t ids_cap, other_cap;
};

/* The class of every object of P (interned into M->cls when ADD, else looked up). */
static uint32_t *object_classes(struct matcher *m, const struct profile *p, int add)
{
	uint32_t *c = xmalloc((p->objs.count + 1) * sizeof(*c));
	for (size_t o = 0; o < p->objs.count; o++) {
		const char *obj = strtab_get(&p->objs, (uint32_t)o)->str, *base = strrchr(obj, '/');
		base = base ? base + 1 : obj;
		char *k = xmalloc(strlen(base) + 3);
		size_t len = object_key(base, k);
		c[o] = add ? strtab_intern(&m->cls, k, len, NULL) : strtab_find(&m->cls, k, len);
		free(k);
	}
	return c;
}

/* Every entry of table FROM's index in table TO, or UINT32_MAX. */
static uint32_t *translate(const struct strtab *from, const struct strtab *to)
{
	uint32_t *t = xmalloc((from->count + 1) * sizeof(*t));
	for (size_t k = 0; k < from->count; k++) {
		const struct strtab_entry *e = strtab_get(from, (uint32_t)k);
		t[k] = strtab_find(to, e->str, e->len);
	}
	return t;
}

/* Every part goes through the run's seeded mix (idmap_mix()), not only the sum: the input
 * chooses the names, and an unseeded hash of them could be made to collide. */
static uint64_t key_hash(const struct key *k)
{
	uint64_t h = idmap_mix((uint64_t)k->cls << 32 | k->file);
	for (size_t i = 0; i < k->n; i++)
		h = idmap_mix(h ^ k->ids[i]);
	return h ^ k->n;
}

/* Function FN of NEW's key, its parts in M->other. */
static struct key now_key(struct matcher *m, size_t fn)
{
	uint32_t o, f;
	profile_key_where(m->now, fn, &o, &f);
	size_t n = profile_name_part_ids(m->now, fn, m->other, m->other_cap);
	if (n > m->other_cap) {
		XGROW(m->other, m->other_cap, n);
		profile_name_part_ids(m->now, fn, m->other, m->other_cap);
	}
	return (struct key){ m->now_cls[o], f, m->other, n };
}

/* Function FN of BASE's parts in NEW's numbers, into M->ids; *N gets their number.
 * Returns 0, or -1 when NEW has no such part: then no name of NEW is FN's. */
static int base_parts(struct matcher *m, size_t fn, size_t *n)
{
	*n = profile_name_part_ids(m->base, fn, m->ids, m->ids_cap);
	if (*n > m->ids_cap) {
		XGROW(m->ids, m->ids_cap, *n);
		profile_name_part_ids(m->base, fn, m->ids, m->ids_cap);
	}
	for (size_t i = 0; i < *n; i++)
		if ((m->ids[i] = m->base_part[m->ids[i]]) == UINT32_MAX)
			return -1;
	return 0;
}

/* Function FN of BASE's key in NEW's numbers, its parts in M->ids. Returns 0, or -1 when
 * NEW has no such object class, file or part: then no function of NEW has that key. */
static int base_key(struct matcher *m, size_t fn, struct key *k)
{
	uint32_t o, f;
	profile_key_where(m->base, fn, &o, &f);
	size_t n;
	if (base_parts(m, fn, &n) < 0)
		return -1;
	*k = (struct key){ m->base_cls[o], m->base_file[f], m->ids, n };
	return k->cls == UINT32_MAX || k->file == UINT32_MAX ? -1 : 0;
}

/* The slot of NEW's function with key K, or the empty slot where it would go. */
static size_t probe(struct matcher *m, const struct key *k)
{
	const struct slot_index *x = &m->index;
	for (size_t i = slot_index_home(x, key_hash(k));; i = slot_index_next(x, i)) {
		if (!x->slots[i])
			return i;
		/* the object and file first: the name is walked only where they agree */
		uint32_t obj, file;
		profile_key_where(m->now, x->slots[i] - 1, &obj, &file);
		if (m->now_cls[obj] != k->cls || file != k->file)
			continue;
		struct key o = now_key(m, x->slots[i] - 1);
		if (o.n == k->n && !memcmp(o.ids, k->ids, k->n * sizeof(*k->ids)))
			return i;
	}
}

/* NEW's functions indexed by key; where two share one, the first is kept. */
static void index_now(struct matcher *m)
{
	slot_index_sized(&m->index, m->now->nfns);
	for (size_t j = 0; j < m->now->nfns; j++) {
		struct key k = now_key(m, j);
		/* the key's parts are in M->other, which probe() overwrites: keep a copy */
		XGROW(m->ids, m->ids_cap, k.n);
		memcpy(m->ids, k.ids, k.n * sizeof(*k.ids));
		k.ids = m->ids;
		size_t i = probe(m, &k);
		if (!m->index.slots[i])
			m->index.slots[i] = (uint32_t)j + 1;
	}
}

static void matcher_free(struct matcher *m)
{
	strtab_free(&m->cls);
	free(m->base_cls);
	free(m->now_cls);
	free(m->base_file);
	free(m->base_part);
	slot_index_free(&m->index);
	free(m->ids);
	free(m->other);
}

/* Index in T of the JIT functions of P that are still unmatched (FREE[i]), by name alone,
 * as NEW's part numbers (P is BASE when BASE_SIDE, its parts translated; a name with a part
 * NEW does not have is left out, it matches nothing): NAME_FN[k] is the function, or
 * SIZE_MAX when the name occurs more than once. */
static size_t *unique_jit_names(struct matcher *m, int base_side, const char *free_fn, struct strtab *t)
{
	const struct profile *p = base_side ? m->base : m->now;
	size_t *name_fn = xmalloc((p->nfns + 1) * sizeof(*name_fn));
	for (size_t i = 0; i < p->nfns; i++) {
		if (!p->fns[i].jit || !free_fn[i])
			continue;
		const uint32_t *ids;
		size_t n;
		if (base_side) {
			if (base_parts(m, i, &n) < 0)
				continue;
			ids = m->ids;
		} else {
			struct key k = now_key(m, i);
			ids = k.ids;
			n = k.n;
		}
		int added;
		uint32_t e = strtab_intern(t, (const char *)ids, n * sizeof(*ids), &added);
		name_fn[e] = added ? i : SIZE_MAX;
	}
	return name_fn;
}

/* The same JIT code named from a perf map in one run and from a jitdump in the other
 * (the JVM's map and cgjit's JVMTI agent, node's two flags) has the same name but another
 * object (perf-PID.map, jit-PID.dump.elf) and file (??? and the source): JIT functions
 * left unmatched are matched by name where the name is unique among them on both sides. */
static void match_jit_by_name(struct matcher *m, size_t *in_base)
{
	const struct profile *A = m->base, *B = m->now;
	char *free_a = xmalloc(A->nfns + 1), *free_b = xmalloc(B->nfns + 1);
	memset(free_a, 1, A->nfns + 1);
	for (size_t j = 0; j < B->nfns; j++) {
		free_b[j] = in_base[j] == SIZE_MAX;
		if (!free_b[j])
			free_a[in_base[j]] = 0;
	}
	struct strtab ta, tb;
	strtab_init(&ta);
	strtab_init(&tb);
	size_t *fa = unique_jit_names(m, 1, free_a, &ta), *fb = unique_jit_names(m, 0, free_b, &tb);
	for (uint32_t k = 0; k < (uint32_t)tb.count; k++) {
		const struct strtab_entry *e = strtab_get(&tb, k);
		uint32_t ka = strtab_find(&ta, e->str, e->len);
		if (fb[k] != SIZE_MAX && ka != UINT32_MAX && fa[ka] != SIZE_MAX)
			in_base[fb[k]] = fa[ka];
	}
	free(fa);
	free(fb);
	strtab_free(&ta);
	strtab_free(&tb);
	free(free_a);
	free(free_b);
}

size_t *prof_match(const struct profile *base, const struct profile *now)
{
	struct matcher m;
	memset(&m, 0, sizeof(m));
	m.base = base;
	m.now = now;
	strtab_init(&m.cls);
	m.now_cls = object_classes(&m, now, 1);
	m.base_cls = object_classes(&m, base, 0);
	m.base_file = translate(&base->files, &now->files);
	m.base_part = translate(&base->name_parts, &now->name_parts);
	index_now(&m);
	size_t *in_base = xmalloc((now->nfns + 1) * sizeof(*in_base));
	for (size_t j = 0; j < now->nfns; j++)
		in_base[j] = SIZE_MAX;
	for (size_t i = 0; i < base->nfns; i++) {
		struct key k;
		if (base_key(&m, i, &k) < 0)
			continue;
		uint32_t slot = m.index.slots[probe(&m, &k)];
		/* else matched already: two objects of BASE in one class, the first one matches */
		if (slot && in_base[slot - 1] == SIZE_MAX)
			in_base[slot - 1] = i;
	}
	match_jit_by_name(&m, in_base);
	matcher_free(&m);
	return in_base;
}
