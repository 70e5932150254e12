/* moves.c - the pieces that moved out of their blocks and the calls held with them, until
 * the end of the part (moves.h): rule 9's final owners, the returns recorded as calls
 * (deferred_calls.c), then everything written, synthetic calls last. Owns the part's moves,
 * their costs, the synthetic calls and the held calls. */
#include <stdlib.h>
#include <string.h>

#include "augment/augment_stats.h"
#include "augment/moves.h"
#include "augment/resolve.h"
#include "augment/stream.h"
#include "callgrind/callgrind_writer.h"
#include "core/xalloc.h"

/* A synthetic call: its block, callee and position are those of its first move. */
struct moves_synth {
	size_t first;                   /* index in v */
	size_t costs;                   /* index in synth_costs: moved self + calls' inclusive */
};

void moves_init(struct moves *mv, const struct stream *s, const struct resolver *res)
{
	memset(mv, 0, sizeof(*mv));
	mv->s = s;
	mv->res = res;
	idmap_init(&mv->synth_ids);
	deferred_calls_init(&mv->calls);
}

void moves_free(struct moves *mv)
{
	free(mv->v);
	free(mv->costs);
	free(mv->synth);
	free(mv->synth_costs);
	free(mv->elf_owner);
	free(mv->elf_width);
	idmap_free(&mv->synth_ids);
	deferred_calls_free(&mv->calls);
}

void moves_reset(struct moves *mv)
{
	mv->nsynth = 0;
	mv->n = 0;
	mv->ncosts = 0;
	idmap_clear(&mv->synth_ids);
	deferred_calls_reset(&mv->calls, mv->s->nevents, mv->s->npos, mv->s->instr);
}

struct move *moves_add(struct moves *mv, const struct move *m, const uint64_t *costs)
{
	unsigned nevents = mv->s->nevents;
	XGROW(mv->v, mv->cap, mv->n + 1);
	struct move *k = &mv->v[mv->n++];
	*k = *m;
	XGROW(mv->costs, mv->costs_cap, mv->ncosts + nevents + 1);
	k->ref = mv->ncosts;
	memcpy(mv->costs + k->ref, costs, nevents * sizeof(*costs));
	mv->ncosts += nevents;
	return k;
}

size_t moves_hold_call(struct moves *mv, const struct dcall *c)
{
	return deferred_calls_add(&mv->calls, c);
}

/* ---- rule 9 ---- */

struct addr_ref {
	uint64_t addr;
	size_t move;
};

static int cmp_addr_ref(const void *a, const void *b)
{
	const struct addr_ref *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Rule 9: a moved piece whose address lies within the span of an ELF function of the
 * input (node's map names V8's builtins, which callgrind already knows from the node
 * binary) goes to that function instead of the map's name. A span is the hull of the
 * function's own cost lines in its blocks that overlap a symbol's range
 * (resolve_note_block()). The narrowest such function wins, then the shortest name
 * (Builtins_X before Builtins_X'2), then the first defined. Spans of more than
 * MAX_ELF_SPAN are not considered: no real function is that large, and a hostile profile
 * could otherwise make this quadratic. */
enum { MAX_ELF_SPAN = 1 << 24 };

/* 1 if ELF function FN, of span WIDTH, beats BEST (a function + 1, or 0: none yet) of
 * span BEST_WIDTH. */
static int elf_owner_beats(const struct cg_names *names, uint32_t fn, uint64_t width,
			   uint32_t best, uint64_t best_width)
{
	if (!best || width != best_width)
		return !best || width < best_width;
	/* lengths are capped at CG_FN_LEN_MAX: longer names tie, and the first defined wins */
	uint32_t len = cg_names_get_fn(names, fn).len, best_len = cg_names_get_fn(names, best - 1).len;
	return len != best_len ? len < best_len : fn < best - 1;
}

/* Finds, for each of the N moved pieces of V (sorted by address), the ELF function that
 * rule 9 gives it, if any: elf_owner[k] is that function + 1, or 0. */
static void find_elf_owners(struct moves *mv, const struct addr_ref *v, size_t n)
{
	const struct cg_names *names = mv->s->names;
	XGROW(mv->elf_owner, mv->elf_owner_cap, n + 1);
	mv->elf_width = xrealloc(mv->elf_width, mv->elf_owner_cap * sizeof(*mv->elf_width));
	memset(mv->elf_owner, 0, n * sizeof(*mv->elf_owner));
	for (size_t i = 0; n && i < mv->res->nspans; i++) {
		const struct resolve_span *x = &mv->res->spans[i];
		if (x->width > MAX_ELF_SPAN)
			continue;
		uint64_t width = x->width, last = x->lo + width;
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (v[mid].addr < x->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < n && v[k].addr <= last; k++) {
			if (!elf_owner_beats(names, x->fn, width, mv->elf_owner[k], mv->elf_width[k]))
				continue;
			mv->elf_owner[k] = x->fn + 1;
			mv->elf_width[k] = width;
		}
	}
}

static void assign_elf_owners(struct moves *mv)
{
	struct addr_ref *v = xmalloc((mv->n + 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < mv->n; i++)
		if (mv->v[i].sym >= 0)
			v[n++] = (struct addr_ref){ mv->v[i].addr, i };
	qsort(v, n, sizeof(*v), cmp_addr_ref);
	find_elf_owners(mv, v, n);
	for (size_t k = 0; k < n; k++) {
		if (!mv->elf_owner[k])
			continue;
		struct move *m = &mv->v[v[k].move];
		m->owner = resolve_out(mv->res, mv->elf_owner[k] - 1);
		m->sym = -1;
		m->file = cgw_fn_get(mv->s->w, m->owner).file;
		mv->s->rep->lines_to_elf_functions += m->kind == MOVE_LINE;
		if (m->kind == MOVE_CALL)
			deferred_calls_move(&mv->calls, m->call, m->owner, m->file);
	}
	free(v);
}

/* ---- the end of a part ---- */

/* Adds C to ACC; -1 (ACC partly updated) if a sum would pass 2^64. */
static int add_costs_checked(uint64_t *acc, const uint64_t *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (acc[i] + c[i] < acc[i])
			return -1;
		acc[i] += c[i];
	}
	return 0;
}

/* The synthetic call of move I's block into its owner. */
static struct moves_synth *synth_for(struct moves *mv, size_t i)
{
	unsigned nevents = mv->s->nevents;
	const struct move *m = &mv->v[i];
	uint64_t key = (uint64_t)m->block << 32 | m->owner;
	uint32_t k = idmap_get(&mv->synth_ids, key);
	if (k != UINT32_MAX)
		return &mv->synth[k];
	idmap_put(&mv->synth_ids, key, (uint32_t)mv->nsynth);
	XGROW(mv->synth, mv->synth_cap, mv->nsynth + 1);
	XGROW(mv->synth_costs, mv->synth_costs_cap, (mv->nsynth + 1) * nevents + 1);
	struct moves_synth *s = &mv->synth[mv->nsynth];
	s->first = i;
	s->costs = mv->nsynth * nevents;
	memset(mv->synth_costs + s->costs, 0, nevents * sizeof(*mv->synth_costs));
	mv->nsynth++;
	return s;
}

static void write_lines(struct moves *mv)
{
	for (size_t i = 0; i < mv->n; i++) {
		const struct move *m = &mv->v[i];
		if (m->kind != MOVE_LINE)
			continue;
		const uint64_t *costs = mv->costs + m->ref;
		cgw_cost(mv->s->w, &(struct cgw_cost){ .fn = m->owner, .file = m->file, .pos = m->pos,
						       .costs = costs });
		stream_account(mv->s, costs, m->sym >= 0, m->foreign, m->contested);
	}
}

static void write_held_calls(struct moves *mv)
{
	struct dcall_cursor k;
	deferred_calls_rewind(&k);
	while (deferred_calls_next(&mv->calls, &k)) {
		const struct dcall *d = &k.c;
		if (!(k.flags & DCALL_DROPPED))
			cgw_call(mv->s->w, &(struct cgw_call){
				.fn = d->caller, .file = d->file, .pos = d->pos, .callee = d->callee,
				.target = d->target, .count = d->count, .costs = d->costs });
	}
}

/* Each synthetic call's cost: everything that moved out of its block into its owner. */
static int sum_synth(struct moves *mv)
{
	for (size_t i = 0; i < mv->n; i++) {
		const struct move *m = &mv->v[i];
		struct moves_synth *s = synth_for(mv, i);
		if (m->kind == MOVE_CALL && deferred_calls_dropped(&mv->calls, m->call))
			continue;   /* a return, not written: nothing of it moved */
		/* A moved call at its cost as the input gave it, before a return recorded as a
		 * call lowered it (rule 6): what came back through the return ran inside the
		 * owner's activation, which the jumping function's callers paid for, so the
		 * synthetic call carries it; the call itself, at its site, is written lowered. */
		if (add_costs_checked(mv->synth_costs + s->costs, mv->costs + m->ref, mv->s->nevents) < 0)
			return -1;
	}
	return 0;
}

static void write_synth(struct moves *mv)
{
	for (size_t i = 0; i < mv->nsynth; i++) {
		const struct move *m = &mv->v[mv->synth[i].first];
		uint64_t count = m->count ? m->count : 1;
		struct cgw_call c = {
			.fn = m->home, .file = m->src_file, .pos = m->src, .callee = m->owner,
			.target = m->pos, .count = count, .costs = mv->synth_costs + mv->synth[i].costs,
			.comment = m->foreign
			? "cgjit: synthetic call: code that no symbol covers, reached by a jump from "
			  "this function, is the callee (its cost was moved there); count = "
			  "executions of the first moved instruction"
			: "cgjit: synthetic call: code reached by a jump from this function belongs "
			  "to the callee (its cost was moved there); count = executions of the first "
			  "moved instruction",
		};
		cgw_call(mv->s->w, &c);
		mv->s->rep->synthetic_calls++;
	}
}

int moves_end_part(struct moves *mv)
{
	if (mv->s->instr >= 0) {
		assign_elf_owners(mv);   /* first: a return may come from code rule 9 renames */
		mv->s->rep->returns_as_calls += deferred_calls_match_returns(&mv->calls);
	}
	write_lines(mv);
	write_held_calls(mv);
	if (sum_synth(mv) < 0)
		return -1;
	write_synth(mv);
	moves_reset(mv);
	return 0;
}
