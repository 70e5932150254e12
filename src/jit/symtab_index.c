/* symtab_index.c - the symbol table's lookup index: one segment per entry, sorted by start
 * in place (one radix sort); the entries that overlap no other stay as they are, and each
 * cluster of overlapping entries goes to a sweep over its start and end points that keeps
 * the live entries in a max-heap ordered by (priority class, insertion order) and gives
 * each elementary range to the heap's top: O(n log n), whatever the overlaps (the policy:
 * symtab.h). Sorts and replaces the segments (which symtab.c grows and frees); owns the
 * sweep's work space while it runs. */
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/symtab.h"
#include "jit/symtab_impl.h"
#include "jit/symtab_stream.h"

/* In-place MSD radix sort on start (American flag sort): no second array, linear in the
 * number of key bytes that differ. DIFF has the bits in which the starts of A differ; the
 * digit is the eight bits below its highest, so that no pass is spent on a byte that all
 * share, and the permutation gathers each bucket's DIFF for the next level. The order of
 * equal starts does not matter: entries that share a start overlap, and the cluster
 * sweep orders them itself. */
static void sort_by_start(struct symtab_segment *a, size_t n, uint64_t diff)
{
	if (n <= 32 || !diff) {
		for (size_t i = 1; i < n; i++) {
			struct symtab_segment v = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1].start > v.start; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	unsigned top = 63 - (unsigned)__builtin_clzll(diff), shift = top >= 7 ? top - 7 : 0;
	size_t count[256] = { 0 }, head[256], tail[256];
	uint64_t ors[256], ands[256];
	for (size_t i = 0; i < n; i++)
		count[(a[i].start >> shift) & 0xff]++;
	size_t sum = 0;
	for (unsigned b = 0; b < 256; b++) {
		head[b] = sum;
		sum += count[b];
		tail[b] = sum;
		ors[b] = 0;
		ands[b] = UINT64_MAX;
	}
	for (unsigned b = 0; b < 256; b++)
		while (head[b] < tail[b]) {
			struct symtab_segment v = a[head[b]];
			unsigned d = (v.start >> shift) & 0xff;
			while (d != b) {
				struct symtab_segment t = a[head[d]];
				ors[d] |= v.start;
				ands[d] &= v.start;
				a[head[d]++] = v;
				v = t;
				d = (v.start >> shift) & 0xff;
			}
			ors[b] |= v.start;
			ands[b] &= v.start;
			a[head[b]++] = v;
		}
	for (size_t b = 0, off = 0; b < 256; off += count[b++])
		if (count[b] > 1)
			sort_by_start(a + off, count[b], ors[b] ^ ands[b]);
}

static void sort_segments(struct symtab_segment *a, size_t n)
{
	uint64_t ors = 0, ands = UINT64_MAX;
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		ors |= a[i].start;
		ands &= a[i].start;
		sorted &= i == 0 || a[i - 1].start <= a[i].start;
	}
	if (!sorted)
		sort_by_start(a, n, ors ^ ands);
}

/* The output of the sweep goes into the array it reads, behind the reading position;
 * segments that do not fit there yet (a cluster can give more segments than it has
 * entries) wait in a queue. */
struct segout {
	struct symtab_segment *a;
	size_t w, r;                   /* next to write, next to read */
	struct symtab_segment *q;
	size_t qhead, qn, qcap;
};

static void seg_put(struct segout *o, struct symtab_segment s)
{
	if (o->qhead == o->qn && o->w < o->r) {
		o->a[o->w++] = s;
		return;
	}
	if (o->qhead && o->qn == o->qcap) {   /* reuse the room of what was written */
		memmove(o->q, o->q + o->qhead, (o->qn - o->qhead) * sizeof(*o->q));
		o->qn -= o->qhead;
		o->qhead = 0;
	}
	XGROW(o->q, o->qcap, o->qn + 1);
	o->q[o->qn++] = s;
}

static void seg_flush(struct segout *o)
{
	while (o->qhead < o->qn && o->w < o->r)
		o->a[o->w++] = o->q[o->qhead++];
	if (o->qhead == o->qn)
		o->qhead = o->qn = 0;
}

/* A start or end of a cluster member's range; ADDR is taken mod 2^64 and TOP is 1 only
 * for an end at 2^64, which sorts after every address. */
struct point {
	uint64_t addr;
	uint32_t m;
	uint8_t is_end, top;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->top != y->top)
		return x->top - y->top;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->is_end - y->is_end;
}

/* Work space of the cluster sweep, kept from one cluster to the next. Members are
 * numbered from 0 in the cluster; m[j].sym is the entry's index. */
struct sweep {
	struct symtab_segment *m;
	unsigned *prio;
	uint32_t *name;                /* equal names, equal numbers (from 0 in the cluster) */
	uint32_t *heap, *live_by_name, *slots;
	uint64_t *hash;
	uint8_t *ended, *lost;             /* LOST_* bits */
	struct point *pts;
	size_t cap, nslots;
	struct symtab_segment *frag;   /* the cluster's segments */
	size_t nfrag, frag_cap;
	struct symtab_namebuf buf[2];
};

static void sweep_reserve(struct sweep *w, size_t k)
{
	if (k <= w->cap)
		return;
	size_t cap = k > 2 * w->cap ? k : 2 * w->cap;
	w->m = xrealloc(w->m, cap * sizeof(*w->m));
	w->prio = xrealloc(w->prio, cap * sizeof(*w->prio));
	w->name = xrealloc(w->name, cap * sizeof(*w->name));
	w->heap = xrealloc(w->heap, cap * sizeof(*w->heap));
	w->live_by_name = xrealloc(w->live_by_name, cap * sizeof(*w->live_by_name));
	w->hash = xrealloc(w->hash, cap * sizeof(*w->hash));
	w->ended = xrealloc(w->ended, cap);
	w->lost = xrealloc(w->lost, cap);
	w->pts = xrealloc(w->pts, 2 * cap * sizeof(*w->pts));
	w->cap = cap;
}

static void sweep_free(struct sweep *w)
{
	free(w->m);
	free(w->prio);
	free(w->name);
	free(w->heap);
	free(w->live_by_name);
	free(w->hash);
	free(w->ended);
	free(w->lost);
	free(w->pts);
	free(w->slots);
	free(w->frag);
	free(w->buf[0].p);
	free(w->buf[1].p);
}

/* Numbers the names of the K members: equal names, equal numbers. */
static void number_names(const struct symtab *st, struct sweep *w, size_t k)
{
	size_t ns = 16;
	while (ns < 2 * k)
		ns *= 2;
	if (ns > w->nslots) {
		free(w->slots);
		w->slots = xmalloc(ns * sizeof(*w->slots));
		w->nslots = ns;
	}
	memset(w->slots, 0, ns * sizeof(*w->slots));   /* member + 1; 0 = empty */
	uint32_t names = 0;
	for (size_t j = 0; j < k; j++) {
		struct symtab_stream_entry e, o;
		size_t len, olen;
		symtab_stream_get(&st->stream, w->m[j].sym, &e);
		const char *name = symtab_stream_name(&st->stream, &e, &w->buf[0], &len);
		uint64_t h = w->hash[j] = strtab_hash(name, len);
		size_t s = (size_t)h & (ns - 1);
		for (; w->slots[s]; s = (s + 1) & (ns - 1)) {
			uint32_t other = w->slots[s] - 1;
			if (w->hash[other] != h)
				continue;
			symtab_stream_get(&st->stream, w->m[other].sym, &o);
			const char *oname = symtab_stream_name(&st->stream, &o, &w->buf[1], &olen);
			if (olen == len && memcmp(oname, name, len) == 0)
				break;
		}
		if (w->slots[s]) {
			w->name[j] = w->name[w->slots[s] - 1];
		} else {
			w->slots[s] = (uint32_t)j + 1;
			w->name[j] = names++;
		}
	}
}

/* How member J lost addresses to TOP. A perf-map entry losing to a jitdump entry is the
 * documented policy (the dump has lines and code), and an entry repeated exactly (a map
 * and a dump of PHP or node describing the same code with the same name, a map listing an
 * entry twice) loses nothing: neither is an overlap. */
enum { LOST_OVERLAP = 1, LOST_OTHER = 2, LOST_SUPERSEDED = 4, LOST_DUPLICATE = 8, };

static unsigned lost_how(const struct sweep *w, uint32_t j, uint32_t top)
{
	if (w->prio[j] < w->prio[top])
		return LOST_SUPERSEDED;
	if (w->name[j] != w->name[top])
		return LOST_OVERLAP | LOST_OTHER;
	if (w->m[j].start == w->m[top].start && w->m[j].last == w->m[top].last)
		return LOST_DUPLICATE;
	return LOST_OVERLAP;
}

/* Heap order: higher priority class first, then the later entry. */
static int beats(const struct sweep *w, uint32_t a, uint32_t b)
{
	return w->prio[a] != w->prio[b] ? w->prio[a] > w->prio[b] : w->m[a].sym > w->m[b].sym;
}

static void heap_push(const struct sweep *w, uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	h[i] = v;
	while (i > 0 && beats(w, h[i], h[(i - 1) / 2])) {
		uint32_t t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void heap_pop(const struct sweep *w, uint32_t *h, size_t *n)
{
	h[0] = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && beats(w, h[l], h[m]))
			m = l;
		if (r < *n && beats(w, h[r], h[m]))
			m = r;
		if (m == i)
			break;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Appends [A, B] (B inclusive, so that a segment can end at 2^64 - 1). */
static void emit(struct sweep *w, uint64_t a, uint64_t b, uint32_t sym, int contested)
{
	struct symtab_segment *prev = w->nfrag ? &w->frag[w->nfrag - 1] : NULL;
	if (prev && prev->last + 1 == a && prev->sym == sym && prev->contested == (uint32_t)contested) {
		prev->last = b;
		return;
	}
	XGROW(w->frag, w->frag_cap, w->nfrag + 1);
	w->frag[w->nfrag++] = (struct symtab_segment){ a, b, sym, (uint32_t)contested };
}

/* The K members of one cluster (w->m) into segments (w->frag), with their statistics. */
static void sweep_cluster(struct symtab *st, struct sweep *w, size_t k)
{
	for (size_t j = 0; j < k; j++) {
		w->prio[j] = st->sources[symtab_source_of(st, w->m[j].sym)].prio;
		uint64_t end = w->m[j].last + 1;   /* 0: 2^64 */
		w->pts[2 * j] = (struct point){ w->m[j].start, (uint32_t)j, 0, 0 };
		w->pts[2 * j + 1] = (struct point){ end, (uint32_t)j, 1, end == 0 };
	}
	number_names(st, w, k);
	qsort(w->pts, 2 * k, sizeof(*w->pts), cmp_point);
	memset(w->ended, 0, k);
	memset(w->lost, 0, k);
	memset(w->live_by_name, 0, k * sizeof(*w->live_by_name));
	w->nfrag = 0;
	size_t hn = 0, distinct = 0, np = 2 * k;
	for (size_t i = 0; i < np;) {
		uint64_t at = w->pts[i].addr;
		uint8_t at_top = w->pts[i].top;
		for (; i < np && w->pts[i].addr == at && w->pts[i].top == at_top; i++) {
			uint32_t s = w->pts[i].m, nm = w->name[s];
			if (w->pts[i].is_end) {
				w->ended[s] = 1;
				if (--w->live_by_name[nm] == 0)
					distinct--;
			} else {
				heap_push(w, w->heap, &hn, s);
				if (w->live_by_name[nm]++ == 0)
					distinct++;
			}
		}
		while (hn && w->ended[w->heap[0]])
			heap_pop(w, w->heap, &hn);
		if (!hn || i == np)
			continue;
		uint64_t next = w->pts[i].addr;   /* mod 2^64: 0 for the end at 2^64 */
		uint32_t top = w->heap[0];
		emit(w, at, next - 1, w->m[top].sym, distinct > 1);
		/* Bounded, so that a hostile map with deep overlaps stays O(n log n); the counts
		 * are then lower bounds. */
		for (size_t h = 1; h < hn && h < 256; h++)
			if (!w->ended[w->heap[h]])
				w->lost[w->heap[h]] |= lost_how(w, w->heap[h], top);
	}
	for (size_t j = 0; j < k; j++) {
		st->stats.shadowed += (w->lost[j] & LOST_OVERLAP) != 0;
		st->stats.shadowed_other += (w->lost[j] & LOST_OTHER) != 0;
		st->stats.superseded += (w->lost[j] & LOST_SUPERSEDED) != 0;
		st->stats.duplicates += w->lost[j] == LOST_DUPLICATE;
	}
	for (size_t i = 0; i < w->nfrag; i++)
		st->stats.contested += w->frag[i].contested;
}

void symtab_index_build(struct symtab *st)
{
	size_t n = st->stream.n;
	struct segout o = { .a = st->segs };
	st->segs = NULL;
	sort_segments(o.a, n);
	/* A cluster: entries sorted by start, each but the first starting within the ones
	 * before it. The others are segments as they are. */
	struct sweep w = { 0 };
	while (o.r < n) {
		size_t k = 1;
		uint64_t last = o.a[o.r].last;
		while (o.r + k < n && o.a[o.r + k].start <= last) {
			if (o.a[o.r + k].last > last)
				last = o.a[o.r + k].last;
			k++;
		}
		if (k == 1 && o.qhead == o.qn) {   /* nothing waits: as seg_put(), in line */
			o.a[o.w++] = o.a[o.r++];
			continue;
		}
		if (k == 1) {
			seg_put(&o, o.a[o.r++]);
			seg_flush(&o);
			continue;
		}
		sweep_reserve(&w, k);
		memcpy(w.m, o.a + o.r, k * sizeof(*w.m));
		o.r += k;
		sweep_cluster(st, &w, k);
		for (size_t i = 0; i < w.nfrag; i++)
			seg_put(&o, w.frag[i]);
		seg_flush(&o);
	}
	sweep_free(&w);
	size_t total = o.w + (o.qn - o.qhead);
	if (total > n)
		o.a = xrealloc(o.a, total * sizeof(*o.a) + 1);
	if (o.qn > o.qhead)
		memcpy(o.a + o.w, o.q + o.qhead, (o.qn - o.qhead) * sizeof(*o.a));
	free(o.q);
	st->segs = total < n ? xrealloc(o.a, total * sizeof(*o.a) + 1) : o.a;
	st->nsegs = total;
	st->stats.segments = total;
}

/* The index of the first segment that ends at or after ADDR, or nsegs. */
static size_t first_ending_from(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->segs[mid].last < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if [LO, HI] lies outside the whole index: the segments are disjoint and sorted, so
 * the first starts lowest and the last ends highest. Most look-ups of ELF code stop here,
 * before the binary search (on the big node profile 263,000 blocks ask symtab_overlaps()). */
static int outside_all(const struct symtab *st, uint64_t lo, uint64_t hi)
{
	return st->nsegs == 0 || hi < st->segs[0].start || lo > st->segs[st->nsegs - 1].last;
}

const struct symtab_segment *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	if (outside_all(st, addr, addr))
		return NULL;
	size_t i = first_ending_from(st, addr);
	if (i < st->nsegs && st->segs[i].start <= addr)
		return &st->segs[i];
	return NULL;
}

int symtab_overlaps(const struct symtab *st, uint64_t lo, uint64_t hi)
{
	if (outside_all(st, lo, hi))
		return 0;
	size_t i = first_ending_from(st, lo);
	return i < st->nsegs && st->segs[i].start <= hi;
}
