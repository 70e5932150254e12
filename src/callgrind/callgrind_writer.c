/* callgrind_writer.c - output id tables, context tracking and position encoding.
 * Owns its output buffer (callgrind_outbuf.h, with the flusher thread) and the per-part
 * output name tables. */
#include <stdlib.h>
#include <string.h>

#include "callgrind/callgrind_outbuf.h"
#include "callgrind/callgrind_writer.h"
#include "core/arena.h"
#include "core/diag.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/scan.h"
#include "core/slot_index.h"
#include "core/strtab.h"
#include "core/xalloc.h"

struct cgw_name {
	const char *name;   /* NULL once written */
	size_t len;
};

enum { FN_NUMBERED = 1, FN_WRITTEN = 2, FN_BIG = 4 };
enum { FN_ID_BITS = 24, FN_ID_MAX = (1u << FN_ID_BITS) - 1 };

/* A call or a jump held by the writer (cgw_call, cgw_jump): its positions and costs in
 * the held pool, from POOL on. */
struct cgw_held {
	int jump;
	struct cgw_call c;
	struct cgw_jump j;
	size_t pool;
};

struct table {
	struct strtab names;
	uint32_t *id;       /* output id, 0 = not written yet */
	size_t cap;
	uint32_t next;
};

struct cgw {
	struct cg_outbuf buf;

	struct table objs, files;
	/* Per identity, a record of FN_SIZE bytes: its word (below), then its pair of object
	 * and file, an index in CTXS, the distinct pairs of the part, which are few: 2 bytes
	 * where the pair took 8, or 4 once a part has more than 65,536 pairs (ctx_of()). One
	 * record, not an array each: a call names an identity made long before, and each
	 * array was a cache miss of its own. */
	unsigned char *fns;
	size_t fns_cap;
	unsigned fn_size;           /* 6, or 8 when CTX_WIDE */
	int ctx_wide;
	struct cgw_fn *ctxs;
	size_t nctxs, ctxs_cap;
	struct idmap ctx_of;        /* object << 32 | file -> index in ctxs */
	uint64_t last_ctx_key;      /* the pair looked up last, and its index */
	uint32_t last_ctx;
	/* An identity's word: its FN_* flags in the top byte and its output id below (the
	 * input's where it gave one, struct cgw_id), if that fits 24 bits: callgrind's ids do
	 * (the big node profile's reach 615,394); larger ones (another writer's, a hostile
	 * file's) are in BIG_IDS, found through BIG_OF. 4 bytes, where id and flags took 5. */
	size_t nfns;
	uint64_t *big_ids;
	size_t nbig, big_cap;
	struct idmap big_of;        /* identity -> index in big_ids */
	uint64_t top;               /* the largest id the input or the writer used in the part */
	int have_top;
	uint64_t fresh_max;         /* the largest id the writer gave */
	int have_fresh;
	int ids_exhausted;          /* a fresh id was needed above 2^64 - 1 */
	/* Calls and jumps naming an identity that waits for its id, held until it has one */
	struct cgw_held *held;
	size_t nheld, held_cap;
	uint64_t *held_pool;
	size_t held_pool_n, held_pool_cap;
	/* Interned identities: a 64-bit hash of each (fn_key()) and its index in fns */
	uint64_t *interned_key;
	uint32_t *interned_fn;
	size_t ninterned, interned_key_cap, interned_fn_cap;
	struct slot_index interned;
	/* A name is needed until its identity is first written. Names of identities made
	 * since cgw_settle() are borrowed (valid until then) or in TRANSIENT, and RECENT
	 * points to them; cgw_settle() copies those not written yet into PENDING, which lasts
	 * the part, and PENDING_IDS finds them: few identities are not written where they
	 * are made. */
	size_t settled;             /* identities before this index are settled */
	struct cgw_name *recent;    /* identity settled + i -> its name */
	size_t recent_cap;
	struct arena transient, pending;
	struct cgw_name *pending_names;
	size_t npending, pending_cap;
	struct idmap pending_ids;   /* identity -> index in pending_names */

	unsigned npos, nevents;
	enum cg_pos_kind kinds[CG_MAX_POS];
	uint64_t base[CG_MAX_POS];
	int base_valid;
	uint64_t sums[CG_MAX_EVENTS];

	uint32_t ob, fl, file, fn;
	int have_ob, have_fn;
};

static void table_init(struct table *t)
{
	memset(t, 0, sizeof(*t));
	strtab_init(&t->names);
}

static void table_free(struct table *t)
{
	strtab_free(&t->names);
	free(t->id);
}

static void table_clear(struct table *t)
{
	strtab_clear(&t->names);
	t->next = 0;
}

static uint32_t table_intern(struct table *t, const char *s, size_t len)
{
	int added;
	uint32_t i = strtab_intern(&t->names, s, len, &added);
	if (added) {
		XGROW(t->id, t->cap, (size_t)i + 1);
		t->id[i] = 0;
	}
	return i;
}

struct cgw *cgw_new(struct output *out)
{
	struct cgw *w = xcalloc(1, sizeof(*w));
	cg_outbuf_init(&w->buf, out);
	w->fn_size = 6;
	table_init(&w->objs);
	table_init(&w->files);
	idmap_init(&w->pending_ids);
	idmap_init(&w->big_of);
	idmap_init(&w->ctx_of);
	w->last_ctx = UINT32_MAX;
	return w;
}

void cgw_share_pump(struct cgw *w, struct io_pump *pump)
{
	cg_outbuf_share_pump(&w->buf, pump);
}

void cgw_free(struct cgw *w)
{
	if (!w)
		return;
	cg_outbuf_free(&w->buf);
	table_free(&w->objs);
	table_free(&w->files);
	slot_index_free(&w->interned);
	free(w->interned_key);
	free(w->interned_fn);
	free(w->recent);
	free(w->pending_names);
	idmap_free(&w->pending_ids);
	arena_free(&w->transient);
	arena_free(&w->pending);
	free(w->fns);
	free(w->ctxs);
	idmap_free(&w->ctx_of);
	free(w->big_ids);
	idmap_free(&w->big_of);
	free(w->held);
	free(w->held_pool);
	free(w);
}

int cgw_flush(struct cgw *w, struct diag *d)
{
	return cg_outbuf_flush(&w->buf, d);
}

void cgw_part_begin(struct cgw *w)
{
	table_clear(&w->objs);
	table_clear(&w->files);
	slot_index_free(&w->interned);
	w->ninterned = 0;
	idmap_clear(&w->pending_ids);
	w->npending = 0;
	arena_reset(&w->transient);
	arena_reset(&w->pending);
	w->nfns = 0;
	w->nctxs = 0;
	w->ctx_wide = 0;   /* the next part may have few pairs again */
	w->fn_size = 6;
	idmap_clear(&w->ctx_of);
	w->last_ctx = UINT32_MAX;
	w->settled = 0;
	w->nbig = 0;
	idmap_clear(&w->big_of);
	w->have_top = w->have_fresh = 0;
	w->ids_exhausted = 0;
	w->nheld = w->held_pool_n = 0;
	w->have_ob = w->have_fn = 0;
	w->base_valid = 0;
	memset(w->sums, 0, sizeof(w->sums));
}

void cgw_layout(struct cgw *w, unsigned npos, const enum cg_pos_kind *kinds, unsigned nevents)
{
	w->npos = npos;
	memcpy(w->kinds, kinds, npos * sizeof(*kinds));
	w->nevents = nevents;
	w->base_valid = 0;
}

/* A name as it can be written: without blanks at either end (readers disagree on
 * them: "fl=(1) " reads back as a reference to an undefined id), and "???" (what
 * kcachegrind shows for an empty name) when nothing is left. Returns 1 if it changed. */
static int writable_name(const char **name, size_t *len)
{
	const char *s = *name, *e = s + *len;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (s == e) {
		s = "???";
		e = s + 3;
	}
	int changed = s != *name || (size_t)(e - s) != *len;
	*name = s;
	*len = (size_t)(e - s);
	return changed;
}

uint32_t cgw_obj(struct cgw *w, const char *name, size_t len)
{
	writable_name(&name, &len);
	return table_intern(&w->objs, name, len);
}

uint32_t cgw_file(struct cgw *w, const char *name, size_t len)
{
	writable_name(&name, &len);
	return table_intern(&w->files, name, len);
}

/* The index of the pair (OBJ, FILE) in w->ctxs, added if new. */
static uint32_t ctx_index(struct cgw *w, uint32_t obj, uint32_t file)
{
	uint64_t key = (uint64_t)obj << 32 | file;
	if (w->last_ctx != UINT32_MAX && w->last_ctx_key == key)
		return w->last_ctx;
	uint32_t i = idmap_get(&w->ctx_of, key);
	if (i == UINT32_MAX) {
		XGROW(w->ctxs, w->ctxs_cap, w->nctxs + 1);
		w->ctxs[w->nctxs] = (struct cgw_fn){ obj, file };
		i = (uint32_t)w->nctxs++;
		idmap_put(&w->ctx_of, key, i);
	}
	w->last_ctx_key = key;
	w->last_ctx = i;
	return i;
}

static inline uint32_t fn_word(const struct cgw *w, uint32_t fn)
{
	uint32_t v;
	memcpy(&v, w->fns + (size_t)fn * w->fn_size, 4);
	return v;
}

static inline void set_word(struct cgw *w, uint32_t fn, uint32_t v)
{
	memcpy(w->fns + (size_t)fn * w->fn_size, &v, 4);
}

static inline uint32_t ctx_of(const struct cgw *w, uint32_t fn)
{
	const unsigned char *e = w->fns + (size_t)fn * w->fn_size + 4;
	if (w->ctx_wide) {
		uint32_t v;
		memcpy(&v, e, 4);
		return v;
	}
	uint16_t v;
	memcpy(&v, e, 2);
	return v;
}

/* Identity FN has pair CTX. */
static void set_ctx(struct cgw *w, uint32_t fn, uint32_t ctx)
{
	if (!w->ctx_wide && ctx > UINT16_MAX) {
		/* the records of 8 bytes from here on, those before FN widened */
		size_t cap = w->fns_cap / 6 * 8;
		unsigned char *wide = xmalloc(cap ? cap : 8);
		for (uint32_t i = 0; i < fn; i++) {
			uint32_t c = ctx_of(w, i);
			memcpy(wide + 8 * (size_t)i, w->fns + 6 * (size_t)i, 4);
			memcpy(wide + 8 * (size_t)i + 4, &c, 4);
		}
		memcpy(wide + 8 * (size_t)fn, w->fns + 6 * (size_t)fn, 4);
		free(w->fns);
		w->fns = wide;
		w->fns_cap = cap;
		w->fn_size = 8;
		w->ctx_wide = 1;
	}
	unsigned char *e = w->fns + (size_t)fn * w->fn_size + 4;
	if (w->ctx_wide) {
		memcpy(e, &ctx, 4);
	} else {
		uint16_t v = (uint16_t)ctx;
		memcpy(e, &v, 2);
	}
}

static uint32_t add_fn(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file)
{
	XGROW(w->fns, w->fns_cap, (w->nfns + 1) * w->fn_size);
	XGROW(w->recent, w->recent_cap, w->nfns - w->settled + 1);
	set_word(w, (uint32_t)w->nfns, 0);
	set_ctx(w, (uint32_t)w->nfns, ctx_index(w, obj, file));
	w->recent[w->nfns - w->settled] = (struct cgw_name){ name, len };
	return (uint32_t)w->nfns++;
}

/* ---- output ids ---- */

static inline unsigned fn_flags(const struct cgw *w, uint32_t fn)
{
	return fn_word(w, fn) >> FN_ID_BITS;
}

static inline void fn_flag(struct cgw *w, uint32_t fn, unsigned flag)
{
	set_word(w, fn, fn_word(w, fn) | (uint32_t)flag << FN_ID_BITS);
}

static uint64_t out_id(const struct cgw *w, uint32_t fn)
{
	return fn_flags(w, fn) & FN_BIG ? w->big_ids[idmap_get(&w->big_of, fn)]
					 : fn_word(w, fn) & FN_ID_MAX;
}

static void set_id(struct cgw *w, uint32_t fn, uint64_t id)
{
	fn_flag(w, fn, FN_NUMBERED);
	if (id <= FN_ID_MAX) {
		set_word(w, fn, fn_word(w, fn) | (uint32_t)id);
		return;
	}
	fn_flag(w, fn, FN_BIG);
	XGROW(w->big_ids, w->big_cap, w->nbig + 1);
	w->big_ids[w->nbig] = id;
	idmap_put(&w->big_of, fn, (uint32_t)w->nbig++);
}

static void use_id(struct cgw *w, uint64_t id)
{
	if (!w->have_top || id > w->top)
		w->top = id;
	w->have_top = 1;
}

/* An id above every id used in the part so far; 1 in a part with none yet. */
static uint64_t fresh_id(struct cgw *w)
{
	uint64_t id = 1;
	if (w->have_top) {
		if (w->top == UINT64_MAX)
			w->ids_exhausted = 1;   /* the caller fails the run: see cgw_number_new() */
		id = w->top + 1;
	}
	use_id(w, id);
	w->fresh_max = id;
	w->have_fresh = 1;
	return id;
}

/* Gives FN, if it has no id yet, the one ID says. An input id that the writer may have
 * given already (only in a part that names functions both ways) is replaced by a fresh
 * one: the input cannot know the writer's. */
static void number(struct cgw *w, uint32_t fn, const struct cgw_id *id)
{
	if (id->from == CGW_ID_INPUT)
		use_id(w, id->id);
	if (fn_flags(w, fn) & FN_NUMBERED)
		return;
	switch (id->from) {
	case CGW_ID_INPUT:
		if (!w->have_fresh || id->id > w->fresh_max) {
			set_id(w, fn, id->id);
			return;
		}
		set_id(w, fn, fresh_id(w));
		return;
	case CGW_ID_FRESH:
		set_id(w, fn, fresh_id(w));
		return;
	case CGW_ID_LATER:
		break;
	}
}

/* Identities are interned by a 64-bit hash of (name, object, file), not by the name: the
 * names are not kept once written (callgrind_names.h). */
static uint64_t fn_key(const char *name, size_t len, uint32_t obj, uint32_t file)
{
	uint64_t h = strtab_hash(name, len);
	h ^= ((uint64_t)obj << 32 | file) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ h >> 29;
}

static uint64_t interned_key_of(const void *ctx, size_t item)
{
	const struct cgw *w = ctx;
	return w->interned_key[item];
}

uint32_t cgw_fn(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
		const struct cgw_id *id)
{
	writable_name(&name, &len);
	uint64_t key = fn_key(name, len, obj, file);
	struct slot_index *x = &w->interned;
	slot_index_reserve(x, 0, w->ninterned, interned_key_of, w);
	size_t i = slot_index_home(x, key);
	for (; x->slots[i]; i = slot_index_next(x, i))
		if (w->interned_key[x->slots[i] - 1] == key) {
			uint32_t fn = w->interned_fn[x->slots[i] - 1];
			number(w, fn, id);
			return fn;
		}
	uint32_t fn = add_fn(w, arena_strndup(&w->transient, name, len), len, obj, file);
	XGROW(w->interned_key, w->interned_key_cap, w->ninterned + 1);
	XGROW(w->interned_fn, w->interned_fn_cap, w->ninterned + 1);
	w->interned_key[w->ninterned] = key;
	w->interned_fn[w->ninterned] = fn;
	x->slots[i] = (uint32_t)++w->ninterned;
	number(w, fn, id);
	return fn;
}

/* A new identity with NAME kept as it is (COPY: copied until cgw_settle(), else
 * borrowed), not interned. A name that needs changing may equal another identity after
 * the change: it is interned. */
static uint32_t fn_kept(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
			const struct cgw_id *id, int copy)
{
	const char *n = name;
	size_t l = len;
	if (writable_name(&n, &l))
		return cgw_fn(w, name, len, obj, file, id);
	uint32_t fn = add_fn(w, copy ? arena_strndup(&w->transient, name, len) : name, len, obj, file);
	number(w, fn, id);
	return fn;
}

uint32_t cgw_fn_borrowed(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
			 const struct cgw_id *id)
{
	return fn_kept(w, name, len, obj, file, id, 0);
}

uint32_t cgw_fn_copied(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
		       const struct cgw_id *id)
{
	return fn_kept(w, name, len, obj, file, id, 1);
}

void cgw_settle(struct cgw *w)
{
	for (size_t i = w->settled; i < w->nfns; i++) {
		const struct cgw_name *f = &w->recent[i - w->settled];
		if ((fn_flags(w, (uint32_t)i) & FN_WRITTEN) || !f->name)
			continue;
		XGROW(w->pending_names, w->pending_cap, w->npending + 1);
		w->pending_names[w->npending] =
			(struct cgw_name){ arena_strndup(&w->pending, f->name, f->len), f->len };
		idmap_put(&w->pending_ids, i, (uint32_t)w->npending++);
	}
	w->settled = w->nfns;
	if (w->transient.total)   /* after most records nothing was put there: no call */
		arena_reset(&w->transient);
}

struct cgw_fn cgw_fn_get(const struct cgw *w, uint32_t fn)
{
	return w->ctxs[ctx_of(w, fn)];
}

const uint64_t *cgw_sums(const struct cgw *w)
{
	return w->sums;
}

uint64_t cgw_bytes(const struct cgw *w)
{
	return w->buf.bytes;
}

/* The name lines below are inline where they are written, each with its TAG a literal:
 * the tag's length and copy are then constants, not a strlen() and a memcpy() call (a
 * million name lines on the bench profile). */
#define NAME_LINE static inline __attribute__((always_inline))

/* "TAG(id)" or, at first use, "TAG(id) name"; then "\n". *ID is the output id, 0 until
 * the first use, when it becomes ++*NEXT. */
NAME_LINE void put_ref(struct cgw *w, const char *tag, uint32_t *id, uint32_t *next,
		       const char *name, size_t len)
{
	char *o = cg_outbuf_reserve(&w->buf, 32 + len);
	char *s = o;
	size_t tl = strlen(tag);
	memcpy(o, tag, tl);
	o += tl;
	*o++ = '(';
	int fresh = *id == 0;
	if (fresh)
		*id = ++*next;
	o += fmt_dec(o, *id);
	*o++ = ')';
	if (fresh) {
		*o++ = ' ';
		memcpy(o, name, len);
		o += len;
	}
	*o++ = '\n';
	cg_outbuf_commit(&w->buf, (size_t)(o - s));
}

NAME_LINE void ref_obj(struct cgw *w, const char *tag, uint32_t i)
{
	const struct strtab_entry *e = strtab_get(&w->objs.names, i);
	put_ref(w, tag, &w->objs.id[i], &w->objs.next, e->str, e->len);
}

NAME_LINE void ref_file(struct cgw *w, const char *tag, uint32_t i)
{
	const struct strtab_entry *e = strtab_get(&w->files.names, i);
	put_ref(w, tag, &w->files.id[i], &w->files.next, e->str, e->len);
}

/* "TAG(id)", with the name at the identity's first use. */
NAME_LINE void ref_fn(struct cgw *w, const char *tag, uint32_t i)
{
	if (!(fn_flags(w, i) & FN_NUMBERED))
		abort();   /* a record naming it should have been held (cgw_call, cgw_jump) */
	struct cgw_name *f = NULL;
	if (!(fn_flags(w, i) & FN_WRITTEN))
		f = i >= w->settled ? &w->recent[i - w->settled]
		  : &w->pending_names[idmap_get(&w->pending_ids, i)];
	size_t len = f ? f->len : 0;
	char *o = cg_outbuf_reserve(&w->buf, 32 + len), *s = o;
	size_t tl = strlen(tag);
	memcpy(o, tag, tl);
	o += tl;
	*o++ = '(';
	o += fmt_dec(o, out_id(w, i));
	*o++ = ')';
	if (f) {
		*o++ = ' ';
		memcpy(o, f->name, len);
		o += len;
		f->name = NULL;   /* written: its pending copy is no longer needed */
		fn_flag(w, i, FN_WRITTEN);
	}
	*o++ = '\n';
	cg_outbuf_commit(&w->buf, (size_t)(o - s));
}

void cgw_enter(struct cgw *w, uint32_t fn, uint32_t file)
{
	if (!w->have_fn || w->fn != fn) {
		const struct cgw_fn *f = &w->ctxs[ctx_of(w, fn)];
		int force_fl = 0;
		if (!w->have_ob || w->ob != f->obj) {
			ref_obj(w, "ob=", f->obj);
			w->ob = f->obj;
			w->have_ob = 1;
			force_fl = 1;   /* after ob=, always fl= and fn= (docs/formats.md 6.11) */
		}
		if (force_fl || w->fl != f->file || w->file != w->fl) {
			ref_file(w, "fl=", f->file);
			w->fl = w->file = f->file;
		}
		ref_fn(w, "fn=", fn);
		w->fn = fn;
		w->have_fn = 1;
		w->base_valid = 0;   /* the first line of a block is absolute, as callgrind writes it */
	}
	if (file != w->file) {
		ref_file(w, file == w->fl ? "fe=" : "fi=", file);
		w->file = file;
	}
}

/* fmt_dec() with one digit inline: most costs, relative positions and lines written */
static inline size_t dec(char *o, uint64_t v)
{
	if (v < 10) {
		*o = (char)('0' + v);
		return 1;
	}
	return fmt_dec(o, v);
}

/* The NPOS (w->npos) subpositions POS, relative to the base if RELATIVE and valid. */
static inline __attribute__((always_inline)) char *put_pos(struct cgw *w, char *o,
							   const uint64_t *pos, int relative,
							   unsigned npos)
{
	for (unsigned i = 0; i < npos; i++) {
		if (i)
			*o++ = ' ';
		uint64_t v = pos[i], b = w->base[i];
		if (relative && w->base_valid) {
			if (v == b) {
				*o++ = '*';
				continue;
			}
			if (v > b && v - b < (1u << 20)) {
				*o++ = '+';
				o += dec(o, v - b);
				continue;
			}
			if (v < b && b - v < (1u << 20)) {
				*o++ = '-';
				o += dec(o, b - v);
				continue;
			}
		}
		o += w->kinds[i] == POS_LINE ? dec(o, v) : fmt_hex(o, v);
	}
	return o;
}

/* The NEV (w->nevents) COSTS but the zeros at the end, each after a space. */
static inline __attribute__((always_inline)) char *put_costs(char *o, const uint64_t *costs,
							     unsigned nev)
{
	unsigned n = nev;
	while (n > 0 && costs[n - 1] == 0)
		n--;
	for (unsigned i = 0; i < n; i++) {
		*o++ = ' ';
		o += dec(o, costs[i]);
	}
	return o;
}

static inline __attribute__((always_inline)) void
put_cost_line_in(struct cgw *w, const uint64_t *pos, const uint64_t *costs, unsigned npos,
		 unsigned nev)
{
	char *o = cg_outbuf_reserve(&w->buf, 24 * (CG_MAX_POS + nev) + 2), *s = o;
	o = put_pos(w, o, pos, 1, npos);
	o = put_costs(o, costs, nev);
	*o++ = '\n';
	cg_outbuf_commit(&w->buf, (size_t)(o - s));
	for (unsigned i = 0; i < npos; i++)   /* at most three: no memcpy() call */
		w->base[i] = pos[i];
	w->base_valid = 1;
}

/* A cost line against the base. Compiled for one event and one or two subpositions,
 * nearly every profile's, as the reader's loops are (callgrind_costs.c): the constants
 * take the loops away from the JIT lines' re-encoding (their line subposition changes). */
static void put_cost_line(struct cgw *w, const uint64_t *pos, const uint64_t *costs)
{
	if (w->nevents == 1 && w->npos == 2)
		put_cost_line_in(w, pos, costs, 2, 1);
	else if (w->nevents == 1 && w->npos == 1)
		put_cost_line_in(w, pos, costs, 1, 1);
	else
		put_cost_line_in(w, pos, costs, w->npos, w->nevents);
}

void cgw_raw(struct cgw *w, const char *text, size_t len)
{
	char *o = cg_outbuf_reserve(&w->buf, len + 1);
	memcpy(o, text, len);
	o[len] = '\n';
	cg_outbuf_commit(&w->buf, len + 1);
	cg_outbuf_maybe_flush(&w->buf);
}

/* Whether the input's text of a line read against base PREV can be copied: the writer's
 * base is valid and equal to it, so every subposition, relative or not, reads the same. */
static int same_base(const struct cgw *w, const uint64_t *prev)
{
	if (!w->base_valid)
		return 0;
	for (unsigned i = 0; i < w->npos; i++)
		if (prev[i] != w->base[i])
			return 0;
	return 1;
}

void cgw_cost(struct cgw *w, const struct cgw_cost *c)
{
	cgw_enter(w, c->fn, c->file);
	for (unsigned i = 0; i < w->nevents; i++)
		w->sums[i] += c->costs[i];
	if (c->raw && same_base(w, c->prev)) {
		char *o = cg_outbuf_reserve(&w->buf, c->raw_len + 1);
		memcpy(o, c->raw, c->raw_len);
		o[c->raw_len] = '\n';
		cg_outbuf_commit(&w->buf, c->raw_len + 1);
		memcpy(w->base, c->pos, w->npos * sizeof(*c->pos));
	} else {
		put_cost_line(w, c->pos, c->costs);
	}
	cg_outbuf_maybe_flush(&w->buf);
}

void cgw_cost_run(struct cgw *w, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	cgw_enter(w, fn, file);
	for (unsigned i = 0; i < w->nevents; i++)
		w->sums[i] += run->sums[i];
	int same = same_base(w, run->prev);
	size_t from = 0;
	if (!same) {
		put_cost_line(w, run->first_pos, run->first_costs);
		from = run->lines > 1 ? run->first_len + 1 : run->len;
	}
	size_t n = run->len - from;
	if (same || run->lines > 1) {   /* (the second line may be empty: N 0) */
		char *o = cg_outbuf_reserve(&w->buf, n + 1);
		memcpy(o, run->text + from, n);
		o[n] = '\n';
		cg_outbuf_commit(&w->buf, n + 1);
	}
	memcpy(w->base, run->last_pos, w->npos * sizeof(*w->base));
	w->base_valid = 1;
	cg_outbuf_maybe_flush(&w->buf);
}

void cgw_cost_run_at_line(struct cgw *w, uint32_t fn, uint32_t file, const struct cg_cost_run *run,
			  uint64_t line)
{
	cgw_enter(w, fn, file);
	for (unsigned i = 0; i < w->nevents; i++)
		w->sums[i] += run->sums[i];
	/* A line is written as cgw_cost() writes it at (instr, LINE): copied as it is where
	 * its L is LINE and the base it was read against is the writer's (the line before
	 * it also at LINE), else re-encoded, which here means L written "*" (the base's line
	 * is LINE after the first line) and the same "+N" against the same instr base. */
	if (run->first_pos[1] == line && same_base(w, run->prev)) {
		char *o = cg_outbuf_reserve(&w->buf, run->first_len + 1);
		memcpy(o, run->text, run->first_len);
		o[run->first_len] = '\n';
		cg_outbuf_commit(&w->buf, run->first_len + 1);
	} else {
		put_cost_line(w, (const uint64_t[]){ run->first_pos[0], line }, run->first_costs);
	}
	if (run->lines > 1) {
		size_t from = run->first_len + 1, n = run->len - from;
		char *o = cg_outbuf_reserve(&w->buf, n + 1), *end = o + n;
		memcpy(o, run->text + from, n);
		*end = '\n';
		uint64_t before = run->first_pos[1];
		for (char *q = o + 2; q < end; q += 2) {
			while (*q != ' ')   /* the rest of "+N": one digit, mostly */
				q++;
			uint64_t l = (uint64_t)(q[1] - '0');
			if (l != line || before != line)
				q[1] = '*';
			before = l;
			for (q += 4; *q != '\n'; q++)   /* the cost's other digits */
				;
		}
		cg_outbuf_commit(&w->buf, n + 1);
	}
	w->base[0] = run->last_pos[0];
	w->base[1] = line;
	w->base_valid = 1;
	cg_outbuf_maybe_flush(&w->buf);
}

/* Copies the two input lines A (the calls=/jump= line) and B (its cost or source line),
 * each then "\n", and takes B's position POS as the base, as every reader does. */
static void copy_pair(struct cgw *w, const char *a, size_t alen, const char *b, size_t blen,
		      const uint64_t *pos)
{
	char *o = cg_outbuf_reserve(&w->buf, alen + blen + 2);
	memcpy(o, a, alen);
	o[alen] = '\n';
	memcpy(o + alen + 1, b, blen);
	o[alen + 1 + blen] = '\n';
	cg_outbuf_commit(&w->buf, alen + blen + 2);
	memcpy(w->base, pos, w->npos * sizeof(*pos));
}

static int numbered(const struct cgw *w, uint32_t fn)
{
	return (fn_flags(w, fn) & FN_NUMBERED) != 0;
}

/* Holds a call or jump that names an identity waiting for its id: a copy, with its
 * positions and costs in the pool, and nothing copied of the input's text. */
static void hold(struct cgw *w, const struct cgw_call *c, const struct cgw_jump *j)
{
	unsigned np = w->npos, ne = c ? w->nevents : 0;
	XGROW(w->held, w->held_cap, w->nheld + 1);
	XGROW(w->held_pool, w->held_pool_cap, w->held_pool_n + 2 * np + ne);
	struct cgw_held *h = &w->held[w->nheld++];
	memset(h, 0, sizeof(*h));
	h->jump = j != NULL;
	h->pool = w->held_pool_n;
	uint64_t *p = w->held_pool + w->held_pool_n;
	memcpy(p, c ? c->pos : j->pos, np * sizeof(*p));
	memcpy(p + np, c ? c->target : j->target, np * sizeof(*p));
	if (c) {
		memcpy(p + 2 * np, c->costs, ne * sizeof(*p));
		h->c = *c;
		h->c.raw_line = h->c.raw = NULL;
	} else {
		h->j = *j;
		h->j.raw_line = h->j.raw = NULL;
	}
	w->held_pool_n += 2 * np + ne;
}

void cgw_call(struct cgw *w, const struct cgw_call *c)
{
	if (!numbered(w, c->fn) || !numbered(w, c->callee)) {
		hold(w, c, NULL);
		return;
	}
	cgw_enter(w, c->fn, c->file);
	if (c->comment) {
		cg_outbuf_put(&w->buf, "# ", 2);
		cg_outbuf_put(&w->buf, c->comment, strlen(c->comment));
		cg_outbuf_put(&w->buf, "\n", 1);
	}
	const struct cgw_fn *callee = &w->ctxs[ctx_of(w, c->callee)];
	if (callee->obj != w->ob)
		ref_obj(w, "cob=", callee->obj);
	if (callee->file != w->file)
		ref_file(w, "cfi=", callee->file);
	ref_fn(w, "cfn=", c->callee);
	if (c->raw_line && c->raw && same_base(w, c->prev)) {
		copy_pair(w, c->raw_line, c->raw_line_len, c->raw, c->raw_len, c->pos);
		cg_outbuf_maybe_flush(&w->buf);
		return;
	}
	char *o = cg_outbuf_reserve(&w->buf, 40 + 20 * CG_MAX_POS), *s = o;
	memcpy(o, "calls=", 6);
	o += 6;
	o += fmt_dec(o, c->count);
	*o++ = ' ';
	o = put_pos(w, o, c->target, 0, w->npos);   /* absolute: unambiguous for every reader */
	*o++ = '\n';
	cg_outbuf_commit(&w->buf, (size_t)(o - s));
	put_cost_line(w, c->pos, c->costs);
	cg_outbuf_maybe_flush(&w->buf);
}

int cgw_jump(struct cgw *w, const struct cgw_jump *j)
{
	if (cgw_fn_get(w, j->tfn).obj != cgw_fn_get(w, j->fn).obj)
		return -1;
	if (!numbered(w, j->fn) || !numbered(w, j->tfn)) {
		hold(w, NULL, j);
		return 0;
	}
	cgw_enter(w, j->fn, j->file);
	if (j->tfile != w->file)
		ref_file(w, "jfi=", j->tfile);
	if (j->tfn != j->fn)
		ref_fn(w, "jfn=", j->tfn);
	if (j->raw_line && j->raw && same_base(w, j->prev)) {
		copy_pair(w, j->raw_line, j->raw_line_len, j->raw, j->raw_len, j->pos);
		cg_outbuf_maybe_flush(&w->buf);
		return 0;
	}
	char *o = cg_outbuf_reserve(&w->buf, 64 + 20 * CG_MAX_POS), *s = o;
	if (j->conditional) {
		memcpy(o, "jcnd=", 5);
		o += 5;
		o += fmt_dec(o, j->followed);
		*o++ = '/';
	} else {
		memcpy(o, "jump=", 5);
		o += 5;
	}
	o += fmt_dec(o, j->count);
	*o++ = ' ';
	o = put_pos(w, o, j->target, 0, w->npos);
	*o++ = '\n';
	o = put_pos(w, o, j->pos, 1, w->npos);
	*o++ = '\n';
	cg_outbuf_commit(&w->buf, (size_t)(o - s));
	memcpy(w->base, j->pos, w->npos * sizeof(*j->pos));
	w->base_valid = 1;
	cg_outbuf_maybe_flush(&w->buf);
	return 0;
}

int cgw_number_new(struct cgw *w)
{
	for (size_t i = 0; i < w->nfns; i++)
		if (!(fn_flags(w, i) & FN_NUMBERED))
			set_id(w, (uint32_t)i, fresh_id(w));
	if (w->ids_exhausted)
		return -1;
	for (size_t i = 0; i < w->nheld; i++) {
		struct cgw_held *h = &w->held[i];
		const uint64_t *p = w->held_pool + h->pool;
		if (h->jump) {
			h->j.pos = p;
			h->j.target = p + w->npos;
			cgw_jump(w, &h->j);
		} else {
			h->c.pos = p;
			h->c.target = p + w->npos;
			h->c.costs = p + 2 * w->npos;
			cgw_call(w, &h->c);
		}
	}
	w->nheld = w->held_pool_n = 0;
	return 0;
}
