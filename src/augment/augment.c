/* augment.c - the pipeline driver and the rewrite rules (README "How augment works").
 * Loads every symbol source, then streams the profile once: each input function id is
 * resolved when first used (JIT pseudo-function -> symbol identity; anything else keeps its
 * identity), each cost line goes to the function that owns its address, calls between
 * fragments of one function are folded, moved lines get a synthetic call, and the writer
 * re-encodes names and positions. Memory: names, symbols, one line, one block's pending
 * synthetic calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/augment.h"
#include "augment/augment_stats.h"
#include "augment/augment_stats_yaml.h"
#include "augment/deferred_calls.h"
#include "augment/symbol_files.h"
#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/pseudo_name.h"
#include "core/arena.h"
#include "core/diag.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/elf_files.h"
#include "jit/jitdump.h"
#include "jit/symtab.h"

enum fn_kind {
	FK_PLAIN,      /* not JIT code: identity kept (caller parts may be renamed) */
	FK_UNKNOWN,    /* a ??? pseudo-function that no symbol covers: left as written */
	FK_JIT,        /* a ??? pseudo-function inside a symbol's range */
};

struct fnres {                /* per input function: memory follows their number */
	uint8_t done;
	uint8_t kind;          /* enum fn_kind */
	uint8_t lookup;        /* its cost lines are absolute addresses to look up */
	uint8_t elf;           /* its object is a file, not ??? */
	uint32_t out;          /* writer function (the home identity) */
	int32_t sym;           /* home symbol, or -1 */
	uint32_t suffix_len;   /* "'2'caller..." part of a pseudo-function's name ... */
	const char *suffix;    /* ... (part arena), or NULL */
	uint64_t lo, hi;       /* addresses of its own cost lines in this part (lo > hi: none) */
};

/* A piece of a block that belongs to another function (rules 5 and 9): a cost line, a
 * call made there (held in calls), or the cost of a call folded there. Held until the
 * part ends, when its final owner is known: code of a symbol that lies inside a function
 * of an ELF object in the input (V8's builtins) goes to that function. */
enum move_kind { MOVE_LINE, MOVE_CALL, MOVE_COST };

struct move {
	enum move_kind kind;
	uint32_t block;            /* sequence number of the block it moved out of */
	uint32_t home;             /* writer function of that block */
	uint32_t owner;            /* writer function it moves to */
	int64_t sym;               /* the symbol owning it, or -1 (foreign code) */
	int foreign;
	int contested;
	uint64_t addr;
	uint64_t pos[CG_MAX_POS];  /* position as written */
	uint32_t file;             /* writer file of that position: pos and file come from one
	                              row of the owner's line table (place()) */
	uint64_t src[CG_MAX_POS];  /* the home code that ran last before it (or pos) */
	uint32_t src_file;         /* ... its writer file */
	uint64_t count;            /* executions of its instruction */
	size_t ref;                /* index of its costs in the cost pool */
	size_t call;               /* CALL: index in calls */
};

/* A synthetic call: its block, callee and position are those of its first move. */
struct synth {
	size_t first;                   /* index in moves[] */
	size_t costs;                   /* index in synth_costs: moved self + calls' inclusive */
};

struct scratch {
	char *s;
	size_t len, cap;
};

struct run {
	const struct augment_opts *o;
	struct augment_stats *rep;
	struct diag *d;
	struct symtab *st;
	struct cg_reader *r;
	struct cgw *w;
	const struct cg_names *names;
	struct elf_files *ef;
	size_t nsymfiles;        /* symbol files read (the symtab's sources) */

	/* per part */
	struct fnres *res;
	size_t res_cap, nres;    /* entries in use: the part's highest function + 1 */
	uint32_t *file_out;      /* input file index -> writer file + 1 (0 = not mapped yet) */
	size_t file_out_cap;
	unsigned npos, nevents;
	int instr, line;         /* indices into positions, or -1 */
	struct augment_stats_event *ev[CG_MAX_EVENTS];

	/* current block */
	int have_block;
	uint32_t block_fn;       /* reader function */
	struct fnres block_res;  /* its resolution */
	int block_plain;         /* not JIT code, and none of its lines can move */
	uint64_t last_home_pos[CG_MAX_POS];
	uint32_t last_home_file;
	int have_home_pos;
	uint32_t block_seq;      /* blocks of this part so far */
	int64_t cache_sym;       /* last symbol looked up in this block, and its owner */
	uint32_t cache_out;
	struct idmap moved_ids;  /* per part: (block function, symbol) -> owner identity */
	int in_foreign_run;      /* the previous line was foreign code (rule 5) */
	uint32_t foreign_out;    /* ... and the identity its run was given */

	/* per part: held until it ends (deferred_calls.h) */
	struct move *moves;
	size_t nmoves, moves_cap;
	uint64_t *move_costs;
	size_t nmove_costs, move_costs_cap;
	struct synth *synth;
	size_t nsynth, synth_cap;
	uint64_t *synth_costs;
	size_t synth_costs_cap;
	struct idmap synth_ids;  /* (block, owner) -> index in synth[] */
	struct deferred_calls calls;
	uint32_t *elf_owner;     /* scratch: per move, the ELF function found, + 1 */
	uint64_t *elf_width;
	size_t elf_owner_cap;

	struct scratch name;
	struct arena suffixes;       /* per part: suffixes of pseudo-functions */
	const char *last_row_file;   /* cache: the last line-table file and its writer file */
	uint32_t last_row_out;
};

static void scratch_put(struct scratch *b, const char *s, size_t n)
{
	XGROW(b->s, b->cap, b->len + n + 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* ---- names ---- */

/* The name a symbol's code gets in the output. */
static void put_symbol_name(struct run *u, struct scratch *b, uint32_t sym)
{
	const struct symbol *s = symtab_symbol(u->st, sym);
	scratch_put(b, s->name, s->name_len);
	if (u->o->keep_addresses) {
		char a[40];
		int n = snprintf(a, sizeof(a), " [0x%llx]", (unsigned long long)s->start);
		scratch_put(b, a, (size_t)n);
	}
}

/* Appends SUFFIX ("'2'caller'...") with every caller part that is a JIT address renamed.
 * Returns the number of parts renamed. */
static int put_suffix(struct run *u, struct scratch *b, const char *suffix, size_t len)
{
	int renamed = 0;
	const char *p = suffix, *end = suffix + len;
	while (p < end) {
		const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));
		if (!q)
			q = end;
		uint64_t addr;
		size_t head;
		const struct symtab_segment *seg = NULL;
		if (pseudo_name_parse(p + 1, (size_t)(q - p - 1), &addr, &head) &&
		    head == (size_t)(q - p - 1))
			seg = symtab_lookup(u->st, addr);
		if (seg) {
			scratch_put(b, "'", 1);
			put_symbol_name(u, b, seg->sym);
			renamed++;
		} else {
			scratch_put(b, p, (size_t)(q - p));
		}
		p = q;
	}
	return renamed;
}

static uint32_t jit_identity(struct run *u, uint32_t sym, const char *suffix, size_t slen)
{
	const struct symbol *s = symtab_symbol(u->st, sym);
	const char *object = s->object ? s->object : symtab_source(u->st, s->source)->object;
	u->name.len = 0;
	put_symbol_name(u, &u->name, sym);
	put_suffix(u, &u->name, suffix, slen);
	uint32_t obj = cgw_obj(u->w, object, strlen(object));
	uint32_t file = s->file ? cgw_file(u->w, s->file, s->file_len) : cgw_file(u->w, "???", 3);
	return cgw_fn(u->w, u->name.s, u->name.len, obj, file);
}

static uint32_t out_file(struct run *u, uint32_t in_file)
{
	if (in_file >= u->file_out_cap) {
		size_t old = u->file_out_cap;
		XGROW(u->file_out, u->file_out_cap, (size_t)in_file + 1);
		memset(u->file_out + old, 0, (u->file_out_cap - old) * sizeof(*u->file_out));
	}
	if (u->file_out[in_file] == 0) {
		const struct strtab_entry *e = cg_names_get(u->names, SP_FILE, in_file);
		u->file_out[in_file] = cgw_file(u->w, e->str, e->len) + 1;
	}
	return u->file_out[in_file] - 1;
}

/* The resolution of input function FN, made where the input defined it (define()). The
 * pointer is valid until the next define(): callers that resolve two functions copy the
 * first. */
static struct fnres *resolve(struct run *u, uint32_t fn)
{
	return &u->res[fn];
}

/* Resolves function DEF->fn, defined with the name DEF->name, which the reader hands out
 * only now: the name is used here and, if it is kept, by the writer until it is written. */
static void define(struct run *u, const struct cg_def *def)
{
	uint32_t fn = def->fn;
	if (fn >= u->nres) {
		/* zeroed up to FN only: touching the whole doubled capacity costs memory */
		XGROW(u->res, u->res_cap, (size_t)fn + 1);
		memset(u->res + u->nres, 0, ((size_t)fn + 1 - u->nres) * sizeof(*u->res));
		u->nres = (size_t)fn + 1;
	}
	struct fnres *x = &u->res[fn];
	x->done = 1;
	const struct cg_fn *f = cg_names_get_fn(u->names, fn);
	const char *name = def->name;
	size_t nlen = def->len;
	const struct strtab_entry *obj = cg_names_get(u->names, SP_OBJ, f->obj);
	int unknown_obj = obj->len == 3 && memcmp(obj->str, "???", 3) == 0;
	x->elf = !unknown_obj;
	x->lo = UINT64_MAX;
	x->hi = 0;
	uint64_t addr;
	size_t head;
	x->sym = -1;
	x->kind = FK_PLAIN;
	int pseudo = unknown_obj && pseudo_name_parse(name, nlen, &addr, &head);
	x->lookup = unknown_obj && u->instr >= 0;
	if (pseudo) {
		u->rep->pseudo_functions++;
		x->suffix_len = nlen - head > UINT32_MAX ? UINT32_MAX : (uint32_t)(nlen - head);
		x->suffix = arena_strndup(&u->suffixes, name + head, x->suffix_len);
		const struct symtab_segment *seg = symtab_lookup(u->st, addr);
		if (seg) {
			x->kind = FK_JIT;
			x->sym = (int32_t)seg->sym;
			x->out = jit_identity(u, seg->sym, x->suffix, x->suffix_len);
			u->rep->resolved++;
			return;
		}
		x->kind = FK_UNKNOWN;
	}
	uint32_t o = cgw_obj(u->w, obj->str, obj->len);
	uint32_t file = out_file(u, f->file);
	/* Only --separate-callers names carry "'": other names are kept as they are. */
	const char *q = memchr(name, '\'', nlen);
	if (q) {
		u->name.len = 0;
		scratch_put(&u->name, name, (size_t)(q - name));
		if (put_suffix(u, &u->name, q, nlen - (size_t)(q - name))) {
			u->rep->renamed_callers++;
			x->out = cgw_fn(u->w, u->name.s, u->name.len, o, file);
			return;
		}
	}
	/* Input identities are distinct (callgrind defines each once), so the writer can
	 * borrow the name until the record ends (cgw_settle). */
	x->out = cgw_fn_borrowed(u->w, name, nlen, o, file);
}

/* ---- ownership of a line ---- */

struct owner {
	uint32_t out;
	int64_t sym;       /* the JIT symbol whose line numbers apply, or -1 */
	int contested;
	int foreign;       /* code of a JIT function's block that no symbol covers */
};

/* Code that no symbol covers, reached from a JIT function by a jump (a runtime's
 * trampoline): callgrind charged it to the JIT function, but it is not that function's
 * code. It gets the identity callgrind gives code it cannot symbolise: object and file
 * ???, named by its entry address, taken as the first address of its run of lines. */
static uint32_t foreign_identity(struct run *u, const struct fnres *x, uint64_t entry)
{
	char a[24];
	int n = snprintf(a, sizeof(a), "0x%016llx", (unsigned long long)entry);
	u->name.len = 0;
	scratch_put(&u->name, a, (size_t)n);
	put_suffix(u, &u->name, x->suffix ? x->suffix : "", x->suffix_len);
	uint32_t unknown = cgw_obj(u->w, "???", 3);
	return cgw_fn(u->w, u->name.s, u->name.len, unknown, cgw_file(u->w, "???", 3));
}

/* Who the line at POS of X (input function FN) belongs to. TRACK: a cost or call line of
 * the current block, which may start or continue a run of foreign code; jump records (no
 * cost) leave foreign code with X. */
static struct owner owner_of(struct run *u, const struct fnres *x, uint32_t fn,
			     const uint64_t *pos, int track)
{
	struct owner w = { x->out, x->sym, 0, 0 };
	if (!x->lookup) {
		if (x->sym >= 0) {
			const struct symtab_segment *seg = symtab_lookup(u->st, symtab_symbol(u->st, (uint32_t)x->sym)->start);
			w.contested = seg && seg->contested;
		}
		return w;
	}
	const struct symtab_segment *seg = symtab_lookup(u->st, pos[u->instr]);
	if (!seg) {
		/* Outside every range: code of an unknown or plain function stays with it. */
		if (x->kind != FK_JIT || !track)
			return w;
		if (!u->in_foreign_run) {
			u->foreign_out = foreign_identity(u, x, pos[u->instr]);
			u->in_foreign_run = 1;
		}
		w.out = u->foreign_out;
		w.sym = -1;
		w.foreign = 1;
		return w;
	}
	if (track)
		u->in_foreign_run = 0;
	w.contested = (int)seg->contested;
	if ((int64_t)seg->sym == x->sym)
		return w;
	w.sym = seg->sym;
	int in_block = u->have_block && fn == u->block_fn;
	if (in_block && u->cache_sym == (int64_t)seg->sym) {
		w.out = u->cache_out;
		return w;
	}
	/* Lines may alternate between symbols: build each name once per input function (the
	 * name carries that function's 'N and 'caller parts). */
	uint64_t key = (uint64_t)fn << 32 | seg->sym;
	uint32_t out = idmap_get(&u->moved_ids, key);
	if (out == UINT32_MAX) {
		out = jit_identity(u, seg->sym, x->suffix ? x->suffix : "", x->suffix_len);
		idmap_put(&u->moved_ids, key, out);
	}
	if (in_block) {
		u->cache_sym = seg->sym;
		u->cache_out = out;
	}
	w.out = out;
	return w;
}

/* Where code at POS is shown. JIT code: the file and line of its row in the symbol's
 * jitdump line table, else the symbol's first file and line (from the name); other code
 * keeps its position and file. Returns the position to write (POS or BUF) and sets *FILE
 * to a writer file. */
static const uint64_t *place(struct run *u, int64_t sym, uint32_t out, const uint64_t *pos,
			     uint32_t in_file, uint64_t *buf, uint32_t *file)
{
	if (sym < 0) {
		*file = out_file(u, in_file);
		return pos;
	}
	const struct symbol *s = symtab_symbol(u->st, (uint32_t)sym);
	*file = cgw_fn_get(u->w, out)->file;
	uint64_t line = s->line;
	const struct symline *row = u->instr >= 0 ? symtab_line(s, pos[u->instr]) : NULL;
	if (row) {
		line = row->line;
		if (row->file != u->last_row_file) {
			u->last_row_file = row->file;
			u->last_row_out = cgw_file(u->w, row->file, row->file_len);
		}
		*file = u->last_row_out;
	}
	if (u->line < 0)
		return pos;
	memcpy(buf, pos, u->npos * sizeof(*pos));
	buf[u->line] = line;
	return buf;
}

/* ---- moved lines and synthetic calls ---- */

/* Records that the piece at POS (written at WPOS in WFILE) moves to W's owner, with costs
 * COSTS (a CALL's as the input gave them). */
static struct move *move_add(struct run *u, enum move_kind kind, const struct owner *w,
			     const uint64_t *pos, const uint64_t *wpos, uint32_t wfile,
			     const uint64_t *costs, uint64_t count)
{
	XGROW(u->moves, u->moves_cap, u->nmoves + 1);
	struct move *m = &u->moves[u->nmoves++];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->block = u->block_seq;
	m->home = u->block_res.out;
	m->owner = w->out;
	m->sym = w->sym;
	m->foreign = w->foreign;
	m->contested = w->contested;
	m->addr = u->instr >= 0 ? pos[u->instr] : 0;
	memcpy(m->pos, wpos, u->npos * sizeof(*wpos));
	m->file = wfile;
	m->count = count;
	/* The call seems to come from the home code that ran last before the move, which
	 * is where the tail jump was; with no such line, from the moved piece itself: file
	 * and line then both come from its row, never the line from one and the file from
	 * the home function. */
	if (u->have_home_pos) {
		memcpy(m->src, u->last_home_pos, sizeof(m->src));
		m->src_file = u->last_home_file;
	} else {
		memcpy(m->src, wpos, u->npos * sizeof(*wpos));
		m->src_file = wfile;
	}
	XGROW(u->move_costs, u->move_costs_cap, u->nmove_costs + u->nevents + 1);
	m->ref = u->nmove_costs;
	memcpy(u->move_costs + m->ref, costs, u->nevents * sizeof(*costs));
	u->nmove_costs += u->nevents;
	return m;
}

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

static void forget_part_moves(struct run *u)
{
	u->nsynth = 0;
	u->nmoves = 0;
	u->nmove_costs = 0;
	u->block_seq = 0;
	idmap_clear(&u->synth_ids);
	idmap_clear(&u->moved_ids);
	deferred_calls_reset(&u->calls, u->nevents);
}

static void end_block(struct run *u)
{
	u->have_block = 0;
	u->block_plain = 0;
	u->in_foreign_run = 0;
}

static cg_cost_sink plain_cost;

static void begin_block(struct run *u, uint32_t fn)
{
	end_block(u);
	u->have_block = 1;
	u->block_seq++;
	u->block_fn = fn;
	u->block_res = *resolve(u, fn);
	u->have_home_pos = 0;
	u->cache_sym = -1;
	/* Lines of a block that is not JIT code never move: enter it now, while the name of
	 * its function, if this fn= line defines it, is at hand (cgw_settle). */
	u->block_plain = u->block_res.kind == FK_PLAIN && !u->block_res.lookup;
	if (u->block_plain) {
		cgw_enter(u->w, u->block_res.out, cgw_fn_get(u->w, u->block_res.out)->file);
		cg_reader_sink_costs(u->r, fn, plain_cost, u);
	}
}

/* ---- records ---- */

static void account(struct run *u, const struct fnres *x, const struct owner *w,
		    const uint64_t *costs)
{
	int jit = w->sym >= 0;
	int unknown = !jit && (x->kind == FK_UNKNOWN || w->foreign);
	for (unsigned i = 0; i < u->nevents; i++) {
		struct augment_stats_event *e = u->ev[i];
		if (!e)
			continue;
		if (jit)
			e->jit += costs[i];
		if (unknown)
			e->unknown += costs[i];
		if (w->contested)
			e->contested += costs[i];
	}
}

static void widen_span(struct run *u, uint32_t fn, uint64_t lo, uint64_t hi)
{
	struct fnres *own = &u->res[fn];
	own->lo = lo < own->lo ? lo : own->lo;
	own->hi = hi > own->hi ? hi : own->hi;
}

/* Most lines: code of a function that is not JIT code stays where it is. The reader
 * hands such lines over directly, in runs (cg_reader_sink_costs). */
static void plain_cost(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	struct run *u = ctx;
	if (u->block_res.elf && run->lo <= run->hi)
		widen_span(u, fn, run->lo, run->hi);
	cgw_cost_run(u->w, u->block_res.out, out_file(u, file), run);
}

static void on_cost(struct run *u, const struct cg_record *rec)
{
	int span = u->instr >= 0;
	if (u->block_plain && rec->fn == u->block_fn) {
		if (u->block_res.elf && span)
			widen_span(u, rec->fn, rec->pos[u->instr], rec->pos[u->instr]);
		cgw_cost(u->w, u->block_res.out, out_file(u, rec->file), rec->pos, rec->costs,
			 rec->clean ? rec->text : NULL, rec->len, rec->prev_pos);
		return;
	}
	/* Cost lines belong to the block's function: its resolution is kept with the block. */
	struct fnres xv, *x = &u->block_res;
	if (!u->have_block || rec->fn != u->block_fn) {
		xv = *resolve(u, rec->fn);
		x = &xv;
	}
	if (x->elf && span)
		widen_span(u, rec->fn, rec->pos[u->instr], rec->pos[u->instr]);
	struct owner w = owner_of(u, x, rec->fn, rec->pos, 1);
	uint64_t buf[CG_MAX_POS];
	uint32_t file;
	const uint64_t *pos = place(u, w.sym, w.out, rec->pos, rec->file, buf, &file);
	if (w.out != x->out) {
		u->rep->lines_moved++;
		move_add(u, MOVE_LINE, &w, rec->pos, pos, file, rec->costs, rec->costs[0]);
		return;
	}
	int same = pos == rec->pos || memcmp(pos, rec->pos, u->npos * sizeof(*pos)) == 0;
	cgw_cost(u->w, w.out, file, pos, rec->costs, rec->clean && same ? rec->text : NULL,
		 rec->len, rec->prev_pos);
	account(u, x, &w, rec->costs);
	memcpy(u->last_home_pos, pos, u->npos * sizeof(*pos));
	u->last_home_file = file;
	u->have_home_pos = 1;
}

/* Calls made from JIT code and calls into the interior of a JIT function wait for the
 * end of the part (deferred_calls.h); the others are written at once. */
static void on_call(struct run *u, const struct cg_record *rec)
{
	struct fnres xv = *resolve(u, rec->fn), *x = &xv;
	struct owner w = owner_of(u, x, rec->fn, rec->pos, 1);
	struct fnres cv = *resolve(u, rec->callee), *c = &cv;
	uint32_t callee = c->out;
	int moved = w.out != x->out;
	uint64_t b1[CG_MAX_POS], b2[CG_MAX_POS];
	uint32_t file, tfile;
	const uint64_t *pos = place(u, w.sym, w.out, rec->pos, rec->file, b1, &file);
	/* A call between fragments of one function that merging created: its cost is already
	 * the function's self cost and callees (callgrind-format.md 6.8). A self-call that was
	 * in the input (e.g. recursion past --separate-recs) stays. */
	if (callee == w.out && !(rec->callee == rec->fn && !moved)) {
		if (moved)
			move_add(u, MOVE_COST, &w, rec->pos, pos, file, rec->costs, rec->count);
		u->rep->pseudo_calls_removed++;
		return;
	}
	const uint64_t *target = place(u, c->sym, callee, rec->target, rec->file, b2, &tfile);
	int64_t callee_sym = -1;
	uint64_t dest = 0;
	if (u->instr >= 0 && c->kind == FK_JIT) {
		dest = rec->target[u->instr];
		const struct symtab_segment *seg = symtab_lookup(u->st, dest);
		callee_sym = seg ? (int64_t)seg->sym : -1;   /* B outside every symbol: no return */
	}
	uint64_t callee_start = callee_sym >= 0 ? symtab_symbol(u->st, (uint32_t)callee_sym)->start : 0;
	int interior = callee_sym >= 0 && dest != callee_start && callee_sym != w.sym;
	if (w.sym < 0 && !interior) {
		if (moved)
			move_add(u, MOVE_COST, &w, rec->pos, pos, file, rec->costs, rec->count);
		cgw_call(u->w, w.out, file, callee, rec->count, target, pos, rec->costs, NULL);
	} else {
		struct dcall d = {
			.caller = w.out, .callee = callee, .file = file, .caller_sym = w.sym,
			.callee_sym = callee_sym, .site = u->instr >= 0 ? rec->pos[u->instr] : 0,
			.dest = dest, .count = rec->count, .callee_start = callee_start,
		};
		memcpy(d.pos, pos, u->npos * sizeof(*pos));
		memcpy(d.target, target, u->npos * sizeof(*target));
		if (moved)
			move_add(u, MOVE_CALL, &w, rec->pos, pos, file, rec->costs, rec->count)->call = u->calls.n;
		deferred_calls_add(&u->calls, &d, rec->costs);
	}
	if (!moved) {
		memcpy(u->last_home_pos, pos, u->npos * sizeof(*pos));
		u->last_home_file = file;
		u->have_home_pos = 1;
	}
}

struct addr_ref {
	uint64_t addr;
	size_t move;
};

static int cmp_addr_ref(const void *a, const void *b)
{
	const struct addr_ref *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Rule 9: a moved piece whose address lies within the cost lines of a function of an
 * ELF object in the input (node's map names V8's builtins, which callgrind already knows
 * from the node binary) goes to that function instead of the map's name. The narrowest
 * such function wins, then the shortest name (Builtins_X before Builtins_X'2). Functions
 * spanning more than MAX_ELF_SPAN are not considered: no real function is that large,
 * and a hostile profile could otherwise make this quadratic. */
enum { MAX_ELF_SPAN = 1 << 24 };

static void assign_elf_owners(struct run *u)
{
	struct addr_ref *v = xmalloc((u->nmoves + 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < u->nmoves; i++)
		if (u->moves[i].sym >= 0)
			v[n++] = (struct addr_ref){ u->moves[i].addr, i };
	qsort(v, n, sizeof(*v), cmp_addr_ref);
	XGROW(u->elf_owner, u->elf_owner_cap, n + 1);
	u->elf_width = xrealloc(u->elf_width, u->elf_owner_cap * sizeof(*u->elf_width));
	memset(u->elf_owner, 0, n * sizeof(*u->elf_owner));
	for (size_t fn = 0; n && fn < u->nres; fn++) {
		const struct fnres *x = &u->res[fn];
		if (!x->done || !x->elf || x->lo > x->hi || x->hi - x->lo > MAX_ELF_SPAN)
			continue;
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (v[mid].addr < x->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint64_t width = x->hi - x->lo;
		for (size_t k = lo; k < n && v[k].addr <= x->hi; k++) {
			uint32_t best = u->elf_owner[k];
			if (best && (u->elf_width[k] < width ||
				     (u->elf_width[k] == width &&
				      cg_names_get_fn(u->names, best - 1)->len <= cg_names_get_fn(u->names, (uint32_t)fn)->len)))
				continue;
			u->elf_owner[k] = (uint32_t)fn + 1;
			u->elf_width[k] = width;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (!u->elf_owner[k])
			continue;
		struct move *m = &u->moves[v[k].move];
		m->owner = u->res[u->elf_owner[k] - 1].out;
		m->sym = -1;
		m->file = cgw_fn_get(u->w, m->owner)->file;
		u->rep->lines_to_elf_functions += m->kind == MOVE_LINE;
		if (m->kind == MOVE_CALL) {
			u->calls.v[m->call].caller = m->owner;
			u->calls.v[m->call].file = m->file;
		}
	}
	free(v);
}

/* The synthetic call of move I's block into its owner. */
static struct synth *synth_for(struct run *u, size_t i)
{
	const struct move *m = &u->moves[i];
	uint64_t key = (uint64_t)m->block << 32 | m->owner;
	uint32_t k = idmap_get(&u->synth_ids, key);
	if (k != UINT32_MAX)
		return &u->synth[k];
	idmap_put(&u->synth_ids, key, (uint32_t)u->nsynth);
	XGROW(u->synth, u->synth_cap, u->nsynth + 1);
	XGROW(u->synth_costs, u->synth_costs_cap, (u->nsynth + 1) * u->nevents + 1);
	struct synth *s = &u->synth[u->nsynth];
	s->first = i;
	s->costs = u->nsynth * u->nevents;
	memset(u->synth_costs + s->costs, 0, u->nevents * sizeof(*u->synth_costs));
	u->nsynth++;
	return s;
}

static void account_move(struct run *u, const struct move *m, const uint64_t *costs)
{
	for (unsigned i = 0; i < u->nevents; i++) {
		struct augment_stats_event *e = u->ev[i];
		if (!e)
			continue;
		if (m->sym >= 0)
			e->jit += costs[i];
		if (m->foreign)
			e->unknown += costs[i];
		if (m->contested)
			e->contested += costs[i];
	}
}

/* The end of a part: moved lines go to their final owners, the held calls are written
 * less the returns recorded as calls, then one synthetic call per block and owner with
 * everything that moved there (moved calls at the cost the input gave them). */
static int end_part_calls(struct run *u, uint64_t line)
{
	end_block(u);
	struct deferred_calls *q = &u->calls;
	if (u->instr >= 0) {
		assign_elf_owners(u);   /* first: a return may come from code rule 9 renames */
		u->rep->returns_as_calls += deferred_calls_match_returns(q);
	}
	for (size_t i = 0; i < u->nmoves; i++) {
		const struct move *m = &u->moves[i];
		if (m->kind != MOVE_LINE)
			continue;
		const uint64_t *costs = u->move_costs + m->ref;
		cgw_cost(u->w, m->owner, m->file, m->pos, costs, NULL, 0, NULL);
		account_move(u, m, costs);
	}
	for (size_t i = 0; i < q->n; i++) {
		const struct dcall *d = &q->v[i];
		if (!d->dropped)
			cgw_call(u->w, d->caller, d->file, d->callee, d->count, d->target, d->pos,
				 deferred_calls_costs(q, d), NULL);
	}
	for (size_t i = 0; i < u->nmoves; i++) {
		const struct move *m = &u->moves[i];
		struct synth *s = synth_for(u, i);
		if (m->kind == MOVE_CALL && q->v[m->call].dropped)
			continue;   /* a return, not written: nothing of it moved */
		/* A moved call at its cost as the input gave it, before a return recorded as a
		 * call lowered it (rule 6): what came back through the return ran inside the
		 * owner's activation, which the jumping function's callers paid for, so the
		 * synthetic call carries it; the call itself, at its site, is written lowered. */
		if (add_costs_checked(u->synth_costs + s->costs, u->move_costs + m->ref, u->nevents) < 0)
			return diag_at(u->d, u->o->profile, line,
				       "the inclusive costs of the calls that moved out of one block add "
				       "up to more than 2^64 (a synthetic call's cost cannot be written)");
	}
	for (size_t i = 0; i < u->nsynth; i++) {
		const struct move *m = &u->moves[u->synth[i].first];
		uint64_t count = m->count ? m->count : 1;
		cgw_call(u->w, m->home, m->src_file, m->owner, count, m->pos, m->src,
			 u->synth_costs + u->synth[i].costs, m->foreign
			 ? "cgjit: synthetic call: code that no symbol covers, reached by a jump from "
			   "this function, is the callee (its cost was moved there); count = "
			   "executions of the first moved instruction"
			 : "cgjit: synthetic call: code reached by a jump from this function belongs "
			   "to the callee (its cost was moved there); count = executions of the first "
			   "moved instruction");
		u->rep->synthetic_calls++;
	}
	forget_part_moves(u);
	return 0;
}

static void on_jump(struct run *u, const struct cg_record *rec)
{
	struct fnres xv = *resolve(u, rec->fn), *x = &xv;
	struct owner w = owner_of(u, x, rec->fn, rec->pos, 0);
	struct fnres tv = *resolve(u, rec->callee), *t = &tv;
	struct owner tw = owner_of(u, t, rec->callee, rec->target, 0);
	uint64_t b1[CG_MAX_POS], b2[CG_MAX_POS];
	uint32_t file, tfile;
	const uint64_t *pos = place(u, w.sym, w.out, rec->pos, rec->file, b1, &file);
	const uint64_t *target = place(u, tw.sym, tw.out, rec->target, rec->callee_file, b2, &tfile);
	if (cgw_jump(u->w, w.out, file, tw.out, tfile, rec->conditional,
		     rec->followed, rec->count, target, pos) < 0)
		u->rep->jumps_dropped++;
}

/* ---- the stream ---- */

static void begin_part(struct run *u)
{
	end_block(u);
	u->last_row_file = NULL;
	cgw_part_begin(u->w);
	arena_reset(&u->suffixes);
	forget_part_moves(u);
	u->nres = 0;
	if (u->file_out)
		memset(u->file_out, 0, u->file_out_cap * sizeof(*u->file_out));
	u->rep->parts++;
}

static void on_events(struct run *u, const struct cg_record *rec)
{
	u->npos = cg_reader_npos(u->r);
	u->nevents = cg_reader_nevents(u->r);
	enum cg_pos_kind kinds[CG_MAX_POS];
	for (unsigned i = 0; i < u->npos; i++)
		kinds[i] = cg_reader_pos_kind(u->r, i);
	u->instr = cg_reader_pos_index(u->r, POS_INSTR);
	u->line = cg_reader_pos_index(u->r, POS_LINE);
	if (u->instr >= 0)
		u->rep->instr_positions = 1;
	for (unsigned i = 0; i < u->nevents; i++)
		u->ev[i] = augment_stats_event(u->rep, cg_reader_event_name(u->r, i));
	cgw_layout(u->w, u->npos, kinds, u->nevents);
	deferred_calls_reset(&u->calls, u->nevents);
	char note[600];
	int n = snprintf(note, sizeof(note),
			 "# cgjit: %llu JIT symbols from %s%s; JIT functions are named from them",
			 (unsigned long long)symtab_stats(u->st)->symbols, symtab_source(u->st, 0)->path,
			 u->nsymfiles > 1 ? " and more" : "");
	cgw_raw(u->w, note, (size_t)(n < (int)sizeof(note) ? n : (int)sizeof(note) - 1));
	cgw_raw(u->w, rec->text, rec->len);
}

static int on_totals(struct run *u, const struct cg_record *rec)
{
	if (end_part_calls(u, rec->line) < 0)
		return -1;
	const uint64_t *in = cg_reader_part_sums(u->r), *out = cgw_sums(u->w);
	for (unsigned i = 0; i < u->nevents; i++) {
		if (u->ev[i])
			u->ev[i]->total += in[i];
		if (!u->o->no_verify && in[i] != out[i])
			return diag_at(u->d, u->o->profile, rec->line,
				       "internal error: part %u's output self cost for %s is %llu, the input's "
				       "is %llu; nothing was written", cg_reader_part_count(u->r),
				       cg_reader_event_name(u->r, i), (unsigned long long)out[i],
				       (unsigned long long)in[i]);
	}
	cgw_raw(u->w, rec->text, rec->len);
	return 0;
}

static int dispatch(struct run *u, const struct cg_record *rec)
{
	for (unsigned i = 0; i < rec->ndefs; i++)
		define(u, &rec->defs[i]);
	switch (rec->kind) {
	case CG_HEADER:
		if (rec->new_part)
			begin_part(u);
		if (rec->key == HK_EVENTS) {
			on_events(u, rec);
			return 0;
		}
		cgw_raw(u->w, rec->text, rec->len);
		return 0;
	case CG_COMMENT:
		cgw_raw(u->w, rec->text, rec->len);
		return 0;
	case CG_FN:
		begin_block(u, rec->fn);
		return 0;
	case CG_COST:
		on_cost(u, rec);
		return 0;
	case CG_CALL:
		on_call(u, rec);
		return 0;
	case CG_JUMP:
		on_jump(u, rec);
		return 0;
	case CG_TOTALS:
		return on_totals(u, rec);
	}
	return 0;
}

char *augment_default_output(const char *profile)
{
	if (strcmp(profile, "-") == 0)
		return NULL;
	const char *slash = strrchr(profile, '/');
	const char *base = slash ? slash + 1 : profile;
	size_t dirlen = (size_t)(base - profile);
	static const char stem[] = "callgrind.out.";
	size_t k = sizeof(stem) - 1;
	/* A compressed input still gives a plain output: callgrind_annotate and kcachegrind
	 * read only plain text (zstd output only when -o says .zst). */
	size_t blen = strlen(base);
	if (blen > 4 && !strcmp(base + blen - 4, ".zst"))
		blen -= 4;
	char *out = xmalloc(strlen(profile) + 16);
	memcpy(out, profile, dirlen);
	if (blen > k && strncmp(base, stem, k) == 0)
		sprintf(out + dirlen, "%sjit.%.*s", stem, (int)(blen - k), base + k);
	else if (blen == k - 1 && strncmp(base, "callgrind.out", blen) == 0)
		sprintf(out + dirlen, "callgrind.jit.out");
	else
		sprintf(out + dirlen, "jit.%.*s", (int)blen, base);
	return out;
}

void augment_opts_init(struct augment_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_line = (size_t)64 << 20;
	o->debug_bias = JITDUMP_BIAS_AUTO;
}

int augment_run(const struct augment_opts *o, struct augment_stats *rep, struct diag *d)
{
	memset(rep, 0, sizeof(*rep));
	char *defout = NULL;
	const char *outpath = o->output;
	if (!outpath) {
		defout = augment_default_output(o->profile);
		if (!defout)
			return diag_at(d, "-", 0, "reading the profile from stdin needs -o FILE (or -o -)");
		outpath = defout;
	}
	snprintf(rep->input, sizeof(rep->input), "%s", o->profile);
	snprintf(rep->output, sizeof(rep->output), "%s", outpath);

	struct run u;
	memset(&u, 0, sizeof(u));
	u.o = o;
	u.rep = rep;
	u.d = d;
	u.instr = u.line = -1;
	deferred_calls_init(&u.calls);
	idmap_init(&u.synth_ids);
	idmap_init(&u.moved_ids);
	u.ef = elf_files_new(o->elf_dir, outpath);
	int rc = -1;
	struct input *in = input_open(o->profile, d);
	struct output *out = NULL, *stats = NULL;
	struct output **all = NULL;   /* the ELF files, --stats and the profile, to commit */
	size_t nall = 0;              /* ... those of them to abort at the end */
	const char **inputs = NULL;
	size_t ninputs = 0;
	if (!in)
		goto done;
	out = output_open(outpath, d);
	if (!out)
		goto done;
	if (o->stats_path && !(stats = output_open(o->stats_path, d)))
		goto done;
	/* An output that is an input (by device and inode: any spelling or link of it), or the
	 * other output, is refused before any work; symbol files found from the pid: line and
	 * the ELF files are checked again before the commit. */
	inputs = xmalloc((1 + o->nsymfiles) * sizeof(*inputs));
	inputs[ninputs++] = o->profile;
	for (size_t i = 0; i < o->nsymfiles; i++)
		inputs[ninputs++] = o->symfiles[i];
	struct output *const first[2] = { out, stats };
	if (output_check_clashes(first, 2, inputs, ninputs, d) < 0) {
		rc = -2;
		goto done;
	}
	u.st = symtab_new();
	symtab_set_paths(u.st, o->paths);
	u.r = cg_reader_new(in, o->max_line);
	u.names = cg_reader_names(u.r);
	u.w = cgw_new(out);
	/* The run: the first part's header up to events:, whose pid: line finds the symbol
	 * files; the symbols; then the body, part by part; verify (on_totals) and commit. */
	struct cg_record rec;
	int r;
	while ((r = cg_reader_next(u.r, &rec, d)) == 1 &&
	       !(rec.kind == CG_HEADER && rec.key == HK_EVENTS)) {
		/* our own note (on_events): its JIT code is named already, and a second run
		 * would only report 0% JIT and write callgrind.out.jit.jit.PID */
		if (rec.kind == CG_COMMENT && rec.len >= 9 && !memcmp(rec.text, "# cgjit: ", 9)) {
			diag_at(d, o->profile, rec.line, "this profile was written by cgjit augment "
				"already (its JIT code has names): augment the profile callgrind wrote");
			goto done;
		}
		if (dispatch(&u, &rec) < 0)
			goto done;
	}
	if (r == 1 && symbol_files_load(o, cg_reader_pid(u.r), u.st, u.ef, rep, &u.nsymfiles, d) < 0)
		goto done;
	uint64_t at, size;
	int tell = o->progress && input_position(in, &at, &size) == 0;
	for (unsigned long n = 0; r == 1; r = cg_reader_next(u.r, &rec, d)) {
		if (dispatch(&u, &rec) < 0)
			break;
		cgw_settle(u.w);
		/* every 1024 records (most cost lines are copied without one): two system calls */
		if (tell && !(++n & 0x3ff) && input_position(in, &at, &size) == 0)
			o->progress(o->progress_ctx, at, size);
	}
	if (tell && r == 0)
		o->progress(o->progress_ctx, size, size);
	if (r == 0 && !d->set && cgw_flush(u.w, d) == 0) {
		rep->bytes_out = cgw_bytes(u.w);
		/* Commit order: the ELF files, --stats, then the profile, which names the ELF files
		 * and decides: output_commit_all() renames none of them unless every one is
		 * written, and if a later rename fails or a signal comes, puts back what the
		 * earlier ones replaced. Nothing that this run did not create is removed. */
		size_t nelf = elf_files_count(u.ef);
		rep->elf_files = (unsigned)nelf;
		if (nelf)
			snprintf(rep->elf_first, sizeof(rep->elf_first), "%s", elf_files_path(u.ef, 0));
		all = xmalloc((nelf + 2) * sizeof(*all));
		elf_files_take(u.ef, all);
		nall = nelf;
		all[nelf] = stats;
		all[nelf + 1] = out;
		inputs = xrealloc(inputs, (ninputs + u.nsymfiles) * sizeof(*inputs));
		for (size_t i = 0; i < u.nsymfiles; i++)
			inputs[ninputs++] = symtab_source(u.st, (uint32_t)i)->path;
		if (output_check_clashes(all, nelf + 2, inputs, ninputs, d) < 0) {
			rc = -2;
			goto done;
		}
		if (stats && augment_stats_yaml_emit(rep, stats, d) < 0)
			goto done;
		stats = out = NULL;
		rc = output_commit_all(all, nelf + 2, d);
		nall = 0;   /* all freed */
	}
done:
	if (rc < 0 && u.r && cg_reader_is_symbol_file(u.r)) {
		size_t n = strlen(d->msg);
		snprintf(d->msg + n, sizeof(d->msg) - n, "; the profile goes first: cgjit augment "
			 "PROFILE [PERF-MAP|JITDUMP...]");
	}
	/* The writer's flusher thread may still be writing to OUT: stop it first. */
	cgw_free(u.w);
	u.w = NULL;
	output_abort(out);
	output_abort(stats);
	free(inputs);
	for (size_t i = 0; i < nall; i++)
		output_abort(all[i]);
	free(all);
	elf_files_free(u.ef);
	cg_reader_free(u.r);
	symtab_free(u.st);
	input_close(in);
	free(u.res);
	free(u.file_out);
	free(u.synth);
	free(u.synth_costs);
	free(u.moves);
	free(u.move_costs);
	free(u.elf_owner);
	free(u.elf_width);
	deferred_calls_free(&u.calls);
	idmap_free(&u.synth_ids);
	idmap_free(&u.moved_ids);
	free(u.name.s);
	arena_free(&u.suffixes);
	free(defout);
	return rc;
}
