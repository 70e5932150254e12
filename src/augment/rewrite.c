/* rewrite.c - a part's fn=, cost, calls= and jump records, rewritten (rewrite.h): the
 * owner of each line (rules 5 and 9's first half), the fragments of one function folded,
 * the pieces that moved held in moves.c, the rest written at once. Owns the state of the
 * current block; the identities come from resolve.c. */
#include <string.h>

#include "augment/augment_stats.h"
#include "augment/moves.h"
#include "augment/rewrite.h"
#include "augment/stream.h"
#include "callgrind/callgrind_writer.h"
#include "jit/symtab.h"

void rewrite_init(struct rewrite *rw, const struct stream *s, struct resolver *res,
		  struct moves *mv, struct cg_reader *r)
{
	memset(rw, 0, sizeof(*rw));
	rw->s = s;
	rw->res = res;
	rw->mv = mv;
	rw->r = r;
	rw->span_lo = UINT64_MAX;
}

/* ---- blocks ---- */

static void end_block(struct rewrite *rw)
{
	if (rw->have_block && rw->span_lo <= rw->span_hi)
		resolve_note_block(rw->res, rw->fn, rw->span_lo, rw->span_hi);
	rw->span_lo = UINT64_MAX;
	rw->span_hi = 0;
	rw->have_block = 0;
	rw->plain = 0;
	rw->in_foreign_run = 0;
}

void rewrite_end_part(struct rewrite *rw)
{
	end_block(rw);
	resolve_merge_spans(rw->res);
	rw->seq = 0;
}

/* Most lines: code of a function that is not JIT code stays where it is. The reader
 * hands such lines over directly, in runs (cg_reader_sink_costs). */
static void plain_cost(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct rewrite *rw = ctx;
	(void)fn;   /* the block's */
	if (rw->fn_res.elf) {
		rw->span_lo = run->lo < rw->span_lo ? run->lo : rw->span_lo;
		rw->span_hi = run->hi > rw->span_hi ? run->hi : rw->span_hi;
	}
	cgw_cost_run(rw->s->w, rw->fn_res.out, resolve_file(rw->res, file), run);
}

static cg_line_sink jit_home_line;
static cg_cost_sink jit_home_run;
static cg_call_sink call_line;

void rewrite_begin_block(struct rewrite *rw, uint32_t fn)
{
	end_block(rw);
	rw->have_block = 1;
	rw->seq++;
	rw->fn = fn;
	rw->fn_res = resolve_get(rw->res, fn);
	rw->have_home_pos = 0;
	rw->cache_sym = -1;
	rw->have_home_seg = 0;
	/* Lines of a block that is not JIT code never move: enter it now, while the name of
	 * its function, if this fn= line defines it, is at hand (cgw_settle). */
	rw->plain = rw->fn_res.kind == RESOLVE_PLAIN && !rw->fn_res.lookup;
	if (rw->plain) {
		struct cgw *w = rw->s->w;
		cgw_enter(w, rw->fn_res.out, cgw_fn_get(w, rw->fn_res.out).file);
		cg_reader_sink_costs(rw->r, fn, plain_cost, rw);
		cg_reader_sink_calls(rw->r, call_line);
	} else if (rw->fn_res.kind == RESOLVE_JIT && rw->fn_res.lookup) {
		cg_reader_sink_lines(rw->r, fn, jit_home_line, rw);
		cg_reader_sink_calls(rw->r, call_line);   /* call_line() takes any caller */
	}
}

/* ELF function FN has a cost line at ADDR: the block's span widens, or a line outside
 * FN's block (none is, from callgrind) is a block of its own. */
static void widen_span(struct rewrite *rw, uint32_t fn, uint64_t addr)
{
	if (!rw->have_block || fn != rw->fn) {
		resolve_note_block(rw->res, fn, addr, addr);
		return;
	}
	rw->span_lo = addr < rw->span_lo ? addr : rw->span_lo;
	rw->span_hi = addr > rw->span_hi ? addr : rw->span_hi;
}

/* ---- ownership of a line ---- */

struct owner {
	uint32_t out;
	int64_t sym;       /* the JIT symbol whose line numbers apply, or -1 */
	int contested;
	int foreign;       /* code of a JIT function's block that no symbol covers */
};

/* Who the line at POS of X (input function FN) belongs to. TRACK: a cost or call line of
 * the current block, which may start or continue a run of foreign code; jump records (no
 * cost) leave foreign code with X. */
static struct owner owner_of(struct rewrite *rw, const struct resolve_fn *x, uint32_t fn,
			     const uint64_t *pos, int track)
{
	const struct stream *s = rw->s;
	struct owner w = { x->out, x->sym, 0, 0 };
	if (!x->lookup) {
		if (x->sym >= 0) {
			const struct symtab_segment *seg = symtab_lookup(s->st, symtab_symbol(s->st, (uint32_t)x->sym)->start);
			w.contested = seg && seg->contested;
		}
		return w;
	}
	const struct symtab_segment *seg = resolve_lookup(rw->res, pos[s->instr]);
	if (!seg) {
		/* Outside every range: code of an unknown or plain function stays with it. */
		if (x->kind != RESOLVE_JIT || !track)
			return w;
		if (!rw->in_foreign_run) {
			rw->foreign_out = resolve_foreign_identity(rw->res, x, pos[s->instr]);
			rw->in_foreign_run = 1;
		}
		w.out = rw->foreign_out;
		w.sym = -1;
		w.foreign = 1;
		return w;
	}
	if (track)
		rw->in_foreign_run = 0;
	w.contested = (int)seg->contested;
	if ((int64_t)seg->sym == x->sym)
		return w;
	w.sym = seg->sym;
	int in_block = rw->have_block && fn == rw->fn;
	if (in_block && rw->cache_sym == (int64_t)seg->sym) {
		w.out = rw->cache_out;
		return w;
	}
	w.out = resolve_moved_identity(rw->res, x, fn, seg->sym);
	if (in_block) {
		rw->cache_sym = seg->sym;
		rw->cache_out = w.out;
	}
	return w;
}

/* Holds the piece of REC that moves to W's owner, written at AT (moves.h): a line, or a
 * call made there, or the cost of a call folded there. */
static struct move *move_piece(struct rewrite *rw, enum move_kind kind, const struct owner *w,
			       const struct cg_record *rec, const struct resolve_where *at)
{
	const struct stream *s = rw->s;
	struct move m = {
		.kind = kind, .block = rw->seq, .home = rw->fn_res.out, .owner = w->out,
		.sym = w->sym, .foreign = w->foreign, .contested = w->contested,
		.addr = s->instr >= 0 ? rec->pos[s->instr] : 0, .file = at->file,
		.count = kind == MOVE_LINE ? rec->costs[0] : rec->count,
	};
	memcpy(m.pos, at->pos, s->npos * sizeof(*at->pos));
	/* The call seems to come from the home code that ran last before the move, which
	 * is where the tail jump was; with no such line, from the moved piece itself: file
	 * and line then both come from its row, never the line from one and the file from
	 * the home function. */
	if (rw->have_home_pos) {
		memcpy(m.src, rw->last_home_pos, sizeof(m.src));
		m.src_file = rw->last_home_file;
	} else {
		memcpy(m.src, at->pos, s->npos * sizeof(*at->pos));
		m.src_file = at->file;
	}
	return moves_add(rw->mv, &m, rec->costs);
}

/* The line written at AT stayed in its block's function: moved code after it seems to be
 * reached from there. */
static void stay_home(struct rewrite *rw, const struct resolve_where *at)
{
	for (unsigned i = 0; i < rw->s->npos; i++)   /* at most three: no memcpy() call */
		rw->last_home_pos[i] = at->pos[i];
	rw->last_home_file = at->file;
	rw->have_home_pos = 1;
}

/* ---- records ---- */

/* Cost line L of X's block, which stays with its owner W (X's home identity or an
 * identity of its own, never a moved one), written at AT: as the input wrote it if CLEAN
 * and AT is its position, else re-encoded. */
static void write_home_line(struct rewrite *rw, const struct resolve_fn *x, const struct owner *w,
			    const struct resolve_where *at, const struct cg_cost_line *l, int clean)
{
	const struct stream *s = rw->s;
	int same = 1;   /* at most three positions: no memcmp() call */
	for (unsigned i = 0; i < s->npos; i++)
		same &= at->pos[i] == l->pos[i];
	cgw_cost(s->w, &(struct cgw_cost){ .fn = w->out, .file = at->file, .pos = at->pos,
					   .costs = l->costs,
					   .raw = clean && same ? l->text : NULL,
					   .raw_len = l->len, .prev = l->prev });
	int jit = w->sym >= 0;
	stream_account(s, l->costs, jit, !jit && (x->kind == RESOLVE_UNKNOWN || w->foreign),
		       w->contested);
	stay_home(rw, at);
}

void rewrite_cost(struct rewrite *rw, const struct cg_record *rec)
{
	const struct stream *s = rw->s;
	int span = s->instr >= 0;
	if (rw->plain && rec->fn == rw->fn) {
		if (rw->fn_res.elf && span)
			widen_span(rw, rec->fn, rec->pos[s->instr]);
		cgw_cost(s->w, &(struct cgw_cost){ .fn = rw->fn_res.out,
						   .file = resolve_file(rw->res, rec->file),
						   .pos = rec->pos, .costs = rec->costs,
						   .raw = rec->clean ? rec->text : NULL,
						   .raw_len = rec->len, .prev = rec->prev_pos });
		return;
	}
	/* Cost lines belong to the block's function: its resolution is kept with the block. */
	struct resolve_fn xv, *x = &rw->fn_res;
	if (!rw->have_block || rec->fn != rw->fn) {
		xv = resolve_get(rw->res, rec->fn);
		x = &xv;
	}
	if (x->elf && span)
		widen_span(rw, rec->fn, rec->pos[s->instr]);
	struct owner w = owner_of(rw, x, rec->fn, rec->pos, 1);
	struct resolve_where at;
	resolve_place(rw->res, w.sym, w.out, rec->pos, rec->file, &at);
	if (w.out != x->out) {
		s->rep->lines_moved++;
		move_piece(rw, MOVE_LINE, &w, rec, &at);
		return;
	}
	write_home_line(rw, x, &w, &at, &(struct cg_cost_line){ rec->text, rec->len,
								rec->prev_pos, rec->pos, rec->costs },
			rec->clean);
}

/* A line of a JIT function's block that lies in the code of the block's own symbol (a
 * segment of the symbol table's): taken and written as rewrite_cost() writes it, without
 * a record (most lines of such a block; on the bench profile a record, the lookup and
 * the owner's tests cost 560 k lines three times what writing them does). Any other
 * line is left to rewrite_cost(). */
static int jit_home_line(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *l)
{
	struct rewrite *rw = ctx;
	const struct resolve_fn *x = &rw->fn_res;
	(void)fn;   /* the block's */
	uint64_t a = l->pos[rw->s->instr];
	if (!rw->have_home_seg || a < rw->home_start || a > rw->home_last) {
		/* the segment owner_of() finds: every address of it finds it */
		const struct symtab_segment *seg = resolve_lookup(rw->res, a);
		if (!seg || (int64_t)seg->sym != x->sym)
			return 0;
		rw->home_start = seg->start;
		rw->home_last = seg->last;
		rw->home_contested = (int)seg->contested;
		rw->have_home_seg = 1;
		/* A symbol with no line table is written at one line, its own (resolve_place()):
		 * the segment's lines may come in runs (558,699 of the bench profile's 559,938
		 * lines of JIT blocks were written here one by one). */
		const struct symbol *y = symtab_symbol(rw->s->st, seg->sym);
		if (!y->nlines && rw->s->line == 1 &&
		    cg_reader_sink_range(rw->r, seg->start, seg->last, jit_home_run)) {
			rw->range_line = y->line;
			rw->range_file = cgw_fn_get(rw->s->w, x->out).file;
			rw->range_contested = (int)seg->contested;
		}
	}
	rw->in_foreign_run = 0;
	struct owner w = { x->out, x->sym, rw->home_contested, 0 };
	struct resolve_where at;
	resolve_place(rw->res, w.sym, w.out, l->pos, file, &at);
	write_home_line(rw, x, &w, &at, l, 1);
	return 1;
}

/* A run of lines in a segment of the block's own symbol, which has no line table: written
 * as jit_home_line() writes each, with the writer's fast path for that shape. */
static void jit_home_run(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct rewrite *rw = ctx;
	const struct stream *s = rw->s;
	(void)fn, (void)file;   /* the block's; lines at a JIT symbol go to its own file */
	rw->in_foreign_run = 0;
	cgw_cost_run_at_line(s->w, rw->fn_res.out, rw->range_file, run, rw->range_line);
	stream_account(s, run->sums, 1, 0, rw->range_contested);
	rw->last_home_pos[0] = run->last_pos[0];
	rw->last_home_pos[1] = rw->range_line;
	rw->last_home_file = rw->range_file;
	rw->have_home_pos = 1;
}

/* A call that is not folded, from W (MOVED: not the block function's home identity) at
 * AT to C: calls made from JIT code and calls into the interior of a JIT function wait
 * for the end of the part (deferred_calls.h); the others are written at once. */
static void call_out(struct rewrite *rw, const struct cg_record *rec, const struct owner *w,
		     const struct resolve_fn *c, const struct resolve_where *at, int moved)
{
	const struct stream *s = rw->s;
	struct resolve_where target;
	resolve_place(rw->res, c->sym, c->out, rec->target, rec->file, &target);
	int64_t callee_sym = -1;
	uint64_t dest = 0;
	if (s->instr >= 0 && c->kind == RESOLVE_JIT) {
		dest = rec->target[s->instr];
		const struct symtab_segment *seg = resolve_lookup(rw->res, dest);
		callee_sym = seg ? (int64_t)seg->sym : -1;   /* B outside every symbol: no return */
	}
	uint64_t callee_start = callee_sym >= 0 ? symtab_symbol(s->st, (uint32_t)callee_sym)->start : 0;
	int interior = callee_sym >= 0 && dest != callee_start && callee_sym != w->sym;
	if (w->sym < 0 && !interior) {
		if (moved)
			move_piece(rw, MOVE_COST, w, rec, at);
		cgw_call(s->w, &(struct cgw_call){ .fn = w->out, .file = at->file, .pos = at->pos,
						   .callee = c->out, .target = target.pos,
						   .count = rec->count, .costs = rec->costs });
		return;
	}
	struct dcall d = {
		.caller = w->out, .callee = c->out, .file = at->file, .caller_sym = (int32_t)w->sym,
		.callee_sym = (int32_t)callee_sym, .interior = interior, .count = rec->count,
		.pos = at->pos, .target = target.pos, .costs = rec->costs,
	};
	size_t call = moves_hold_call(rw->mv, &d);
	if (moved)
		move_piece(rw, MOVE_CALL, w, rec, at)->call = call;
}

/* A call that stays as the input wrote it: from a block whose lines never move (plain)
 * to a function that is neither JIT code nor in ??? (so never a fragment, a moved
 * identity, a held call or a return recorded as a call: README rules 5, 6). Its names go
 * through the writer's id tables (cob=/cfi=/cfn= as the writer's context needs, the
 * callee's output identity, renamed 'caller parts included); only its calls= and cost
 * lines are copied, when canonical and read against the writer's base. Returns 0 for a
 * call that takes the general path instead. */
static int plain_call(struct rewrite *rw, const struct cg_record *rec)
{
	if (!rw->plain || rec->fn != rw->fn)
		return 0;
	const struct resolve_fn cv = resolve_get(rw->res, rec->callee), *c = &cv;
	/* the same output identity: folded unless it is the input's own self-call */
	if (c->kind != RESOLVE_PLAIN || !c->elf || (c->out == rw->fn_res.out && rec->callee != rec->fn))
		return 0;
	/* field by field, as call_line() builds its record */
	struct cgw_call call;
	call.fn = rw->fn_res.out;
	call.file = resolve_file(rw->res, rec->file);
	call.pos = rec->pos;
	call.callee = c->out;
	call.target = rec->target;
	call.count = rec->count;
	call.costs = rec->costs;
	call.comment = NULL;
	call.raw_line = rec->clean ? rec->line_text : NULL;
	call.raw_line_len = rec->line_len;
	call.raw = rec->clean ? rec->text : NULL;
	call.raw_len = rec->len;
	call.prev = rec->prev_pos;
	cgw_call(rw->s->w, &call);
	return 1;
}

void rewrite_call(struct rewrite *rw, const struct cg_record *rec)
{
	if (plain_call(rw, rec))
		return;
	struct resolve_fn x = resolve_get(rw->res, rec->fn);
	struct owner w = owner_of(rw, &x, rec->fn, rec->pos, 1);
	struct resolve_fn c = resolve_get(rw->res, rec->callee);
	int moved = w.out != x.out;
	struct resolve_where at;
	resolve_place(rw->res, w.sym, w.out, rec->pos, rec->file, &at);
	/* A call between fragments of one function that merging created: its cost is already
	 * the function's self cost and callees (docs/formats.md 6.8). A self-call that was in
	 * the input (e.g. recursion past --separate-recs) stays. */
	if (c.out == w.out && !(rec->callee == rec->fn && !moved)) {
		if (moved)
			move_piece(rw, MOVE_COST, &w, rec, &at);
		rw->s->rep->pseudo_calls_removed++;
		return;
	}
	call_out(rw, rec, &w, &c, &at, moved);
	if (!moved)
		stay_home(rw, &at);
}

/* A call of a plain block, or of a JIT block whose lines go to the line sink, that the
 * reader hands over with no record (cg_reader_sink_calls()), rewritten as its record
 * would be: nearly every call of a profile (on the bench profile 392,214 of 392,649;
 * 305,701 when only plain blocks' calls came here, and the general path's four records
 * a call cost the 86,948 others 1,400 more instructions each: 2,247 -> 2,120 M in all). */
static void call_line(void *ctx, uint32_t fn, uint32_t file, const struct cg_call_line *c)
{
	struct rewrite *rw = ctx;
	for (unsigned i = 0; i < c->ndefs; i++)
		resolve_define(rw->res, &c->defs[i]);
	/* Field by field: a compound literal's zero fill of the rest was a `rep stos`, which
	 * starts slowly, 46% of this function's perf samples on the bench profile. */
	struct cg_record rec;
	rec.kind = CG_CALL;
	rec.defs = NULL;
	rec.ndefs = 0;
	rec.line = 0;
	rec.text = c->text;
	rec.len = c->len;
	rec.key = HK_MARKER;
	rec.new_part = 0;
	rec.fn = fn;
	rec.file = file;
	rec.pos = c->pos;
	rec.prev_pos = c->prev;
	rec.clean = 1;
	rec.line_text = c->line_text;
	rec.line_len = c->line_len;
	rec.costs = c->costs;
	rec.count = c->count;
	rec.followed = 0;
	rec.conditional = 0;
	rec.target = c->target;
	rec.callee = c->callee;
	rec.callee_file = 0;
	rewrite_call(rw, &rec);
	/* a name defined here is borrowed from the reader's buffer until the record would
	 * have ended (augment.c settles after each record) */
	if (c->ndefs)
		cgw_settle(rw->s->w);
}

/* A jump that stays as the input wrote it: within or out of a block whose lines never
 * move, to a function whose lines never move either (owner_of() would keep both); jfi=/jfn=
 * come from the writer's tables. Returns 0 for a jump that takes the general path. */
static int plain_jump(struct rewrite *rw, const struct cg_record *rec)
{
	if (!rw->plain || rec->fn != rw->fn)
		return 0;
	const struct resolve_fn tv = resolve_get(rw->res, rec->callee), *t = &tv;
	if (t->kind != RESOLVE_PLAIN || t->lookup)
		return 0;
	struct cgw_jump j = {
		.fn = rw->fn_res.out, .file = resolve_file(rw->res, rec->file), .pos = rec->pos,
		.tfn = t->out, .tfile = resolve_file(rw->res, rec->callee_file), .target = rec->target,
		.count = rec->count, .followed = rec->followed, .conditional = rec->conditional,
		.raw_line = rec->clean ? rec->line_text : NULL, .raw_line_len = rec->line_len,
		.raw = rec->clean ? rec->text : NULL, .raw_len = rec->len, .prev = rec->prev_pos,
	};
	if (cgw_jump(rw->s->w, &j) < 0)
		rw->s->rep->jumps_dropped++;
	return 1;
}

void rewrite_jump(struct rewrite *rw, const struct cg_record *rec)
{
	if (plain_jump(rw, rec))
		return;
	struct resolve_fn x = resolve_get(rw->res, rec->fn);
	struct owner w = owner_of(rw, &x, rec->fn, rec->pos, 0);
	struct resolve_fn t = resolve_get(rw->res, rec->callee);
	struct owner tw = owner_of(rw, &t, rec->callee, rec->target, 0);
	struct resolve_where at, target;
	resolve_place(rw->res, w.sym, w.out, rec->pos, rec->file, &at);
	resolve_place(rw->res, tw.sym, tw.out, rec->target, rec->callee_file, &target);
	struct cgw_jump j = {
		.fn = w.out, .file = at.file, .pos = at.pos, .tfn = tw.out, .tfile = target.file,
		.target = target.pos, .count = rec->count, .followed = rec->followed,
		.conditional = rec->conditional,
	};
	if (cgw_jump(rw->s->w, &j) < 0)
		rw->s->rep->jumps_dropped++;
}
