/* jitdump.c - jitdump reader: records (from jitdump_walk.c) -> loads (with debug rows and
 * code) -> symtab.
 * Reads the file once, in record order; keeps the loads until the end because the
 * debug-address bias is decided over the whole dump (docs/formats.md 5.8). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/code_generations.h"
#include "jit/jitdump.h"
#include "jit/jitdump_walk.h"
#include "jit/jitname.h"
#include "jit/symtab.h"

enum { BIAS = 0x40 };

struct row {
	uint64_t addr;
	uint32_t line;
	const char *file;
	size_t file_len;
};

struct load {
	uint64_t start, size, index, offset;
	const char *name;        /* symtab memory */
	size_t name_len;
	const unsigned char *code;
	struct row *rows;
	size_t nrows;
	int moved;               /* a CODE_MOVE's copy: its rows are counted with the original */
	int bare;                /* a copy past JITDUMP_MAX_MOVES: name only, no rows or code */
	uint32_t root;           /* the CODE_LOAD this code came from (itself, if not moved) */
	uint32_t copies;         /* root: its moved copies that have rows and code */
	uint32_t prev_index;     /* the previous load with the same code_index, or UINT32_MAX */
};

struct jd {
	struct jitdump_walk *w;
	struct symtab *st;
	struct jitdump_stats *stats;
	struct diag *d;
	struct load *loads;
	size_t nloads, loads_cap;
	unsigned char *dbg;       /* the last DEBUG_INFO record, for the next load */
	size_t dbg_size, dbg_cap;
	struct row *pending;      /* its rows, while they are read */
	size_t npending, pending_cap;
	uint64_t pending_offset;
	int have_pending;
	struct idmap by_index;    /* code_index -> the last load with it (a CODE_MOVE's source) */
};

int jitdump_is_magic(const unsigned char *p)
{
	return jitdump_walk_is_magic(p);
}

static uint32_t u32(const struct jd *j, const unsigned char *p)
{
	return jitdump_walk_u32(j->w, p);
}

static uint64_t u64(const struct jd *j, const unsigned char *p)
{
	return jitdump_walk_u64(j->w, p);
}

__attribute__((format(printf, 2, 3)))
static void bad_debug(struct jd *j, const char *fmt, ...)
{
	if (j->stats->bad_debug++)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->stats->bad_debug_reason, sizeof(j->stats->bad_debug_reason), fmt, ap);
	va_end(ap);
}

/* DEBUG_INFO is kept as raw bytes until the next CODE_LOAD, whose range and name decide
 * how its entries are read. */
static void on_debug(struct jd *j, const unsigned char *r, size_t size, uint64_t offset)
{
	j->stats->debug_records++;
	XGROW(j->dbg, j->dbg_cap, size);
	memcpy(j->dbg, r, size);
	j->dbg_size = size;
	j->have_pending = 1;
	j->pending_offset = offset;
}

static struct load *new_load(struct jd *j)
{
	XGROW(j->loads, j->loads_cap, j->nloads + 1);
	struct load *l = &j->loads[j->nloads++];
	memset(l, 0, sizeof(*l));
	l->root = (uint32_t)(j->nloads - 1);
	return l;
}

/* Files the last load under its code_index, for CODE_MOVE to find in O(1). */
static void index_load(struct jd *j)
{
	struct load *l = &j->loads[j->nloads - 1];
	l->prev_index = idmap_get(&j->by_index, l->index);
	idmap_put(&j->by_index, l->index, (uint32_t)(j->nloads - 1));
}

static void add_row(struct jd *j, uint64_t addr, uint32_t line, const char *file, size_t len)
{
	XGROW(j->pending, j->pending_cap, j->npending + 1);
	j->pending[j->npending++] = (struct row){ addr, line, file, len };
}

static int in_function(const struct load *l, uint64_t a)
{
	return a >= l->start && a - l->start <= l->size + BIAS;   /* V8/LLVM bias past the end */
}

/* Entries {addr, line, discrim, name\0} read one after another by nr_entry (V8 pads the
 * record to 8 bytes). Returns 0, or -1 with REASON set. */
static int rows_by_nul(struct jd *j, const struct load *l, char *reason, size_t rn)
{
	const unsigned char *r = j->dbg;
	size_t size = j->dbg_size, p = 32;
	unsigned long long off = (unsigned long long)j->pending_offset;
	j->npending = 0;
	if (size < 32)
		return snprintf(reason, rn, "record at byte %llu is shorter than its 32-byte start", off), -1;
	uint64_t n = u64(j, r + 24);
	if (n > (size - 32) / 17)
		return snprintf(reason, rn, "record at byte %llu claims %llu entries, more than fit in it",
				off, (unsigned long long)n), -1;
	const char *prev = NULL;
	size_t prev_len = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (size - p < 17)
			return snprintf(reason, rn, "record at byte %llu: entry %llu runs past the record", off,
					(unsigned long long)i), -1;
		uint64_t addr = u64(j, r + p);
		const unsigned char *name = r + p + 16;
		const unsigned char *nul = memchr(name, 0, size - p - 16);
		if (!nul)
			return snprintf(reason, rn, "record at byte %llu: entry %llu has no terminated file name",
					off, (unsigned long long)i), -1;
		size_t len = (size_t)(nul - name), field = len;
		const char *file;
		if (len == 1 && name[0] == 0xff) {   /* "same file as the previous entry" */
			if (!prev)
				return snprintf(reason, rn, "record at byte %llu: its first entry repeats a file name",
						off), -1;
			file = prev;
			len = prev_len;
		} else {
			for (size_t k = 0; k < len; k++)
				if (name[k] < 0x20 || name[k] == 0x7f)
					return snprintf(reason, rn, "record at byte %llu: entry %llu has a garbage file name",
							off, (unsigned long long)i), -1;
			file = symtab_intern_path(j->st, (const char *)name, len, &len);
		}
		if (!in_function(l, addr))
			return snprintf(reason, rn, "record at byte %llu: entry address 0x%llx lies outside its function",
					off, (unsigned long long)addr), -1;
		add_row(j, addr, u32(j, r + p + 8), file, len);
		prev = file;
		prev_len = len;
		p += 16 + field + 1;
	}
	return 0;
}

/* node 20 writes some DEBUG_INFO records (those of the script's own functions) with every
 * file-name field of the full name's length but its first 16 bytes overwritten, NULs
 * included (docs/formats.md 5.10; seen in samples/node-jitdump): read by NUL, the entries
 * fall out of step. Read at that fixed stride instead; when every address lies in the
 * function and each field, past its first 16 bytes, is the file in the function's V8 name
 * ("JS:*f /path/a.js:1:2") and as long, the rows are lines of that file. */
static int rows_by_stride(struct jd *j, const struct load *l)
{
	const unsigned char *r = j->dbg;
	size_t size = j->dbg_size;
	j->npending = 0;
	if (size < 32)
		return -1;
	uint64_t n = u64(j, r + 24);
	struct jitname jn;
	if (n == 0 || n > (size - 32) / 17 || jitname_parse(l->name, l->name_len, &jn) != JN_V8)
		return -1;
	for (size_t pad = 0; pad < 8; pad++) {
		size_t body = size - 32 - pad;
		if (body % n || body / n < 17 + 16)
			continue;
		size_t stride = body / n, field = stride - 16;
		int ok = 1;
		for (uint64_t i = 0; ok && i < n; i++) {
			const unsigned char *e = r + 32 + i * stride, *name = e + 16;
			if (!in_function(l, u64(j, e)) || name[field - 1] != 0) {
				ok = 0;
				break;
			}
			/* the field holds the whole path's length; past the first 16 bytes it is
			 * the path itself */
			if (field - 1 != jn.file_len || field - 1 <= 16 + 3 ||
			    memcmp(jn.file + 16, name + 16, field - 1 - 16) != 0) {
				ok = 0;
				break;
			}
			size_t flen;
			const char *file = symtab_intern_path(j->st, jn.file, jn.file_len, &flen);
			add_row(j, u64(j, e), u32(j, e + 8), file, flen);
		}
		if (ok)
			return 0;
		j->npending = 0;
	}
	return -1;
}

/* Attaches the pending DEBUG_INFO to L; a record that cannot be read so that every entry
 * lies in L's code is garbage: dropped and counted. */
static void attach_rows(struct jd *j, struct load *l)
{
	if (!j->have_pending)
		return;
	j->have_pending = 0;
	char reason[sizeof(j->stats->bad_debug_reason)];
	if (rows_by_nul(j, l, reason, sizeof(reason)) < 0) {
		if (rows_by_stride(j, l) < 0) {
			bad_debug(j, "%s", reason);
			return;
		}
		j->stats->debug_recovered++;
	}
	if (j->npending == 0)   /* a record with no entries: valid, nothing to attach */
		return;
	l->rows = symtab_alloc(j->st, j->npending * sizeof(*l->rows) + 1);
	memcpy(l->rows, j->pending, j->npending * sizeof(*l->rows));
	l->nrows = j->npending;
	j->stats->debug_used++;
	j->stats->debug_entries += j->npending;
}

/* CODE_LOAD (decoded and checked by jitdump_walk_load()). */
static void on_load(struct jd *j, const struct jitdump_record *rec)
{
	j->stats->loads++;
	struct jitdump_load in;
	if (jitdump_walk_load(j->w, rec, &in) < 0) {   /* refused and counted */
		j->stats->bad_loads++;
		j->have_pending = 0;
		return;
	}
	if (in.size == 0) {
		j->stats->zero_size++;
		j->have_pending = 0;
		return;
	}
	struct load *l = new_load(j);
	l->start = in.addr;
	l->size = in.size;
	l->index = in.index;
	l->offset = rec->offset;
	char *name = symtab_alloc(j->st, in.name_len + 1);
	memcpy(name, in.name, in.name_len);
	name[in.name_len] = '\0';
	l->name = name;
	l->name_len = in.name_len;
	unsigned char *code = symtab_alloc(j->st, (size_t)in.size);
	memcpy(code, in.code, (size_t)in.size);
	l->code = code;
	attach_rows(j, l);
	index_load(j);
}

/* CODE_MOVE: the function with code_index now also lives at new_code_addr. Its old range
 * keeps the name too: callgrind's costs there came from the same code, before the move.
 * The source is the last load with that index at old_code_addr, found through by_index.
 * Memory and the ELF files follow the distinct code, not the moves: the first
 * JITDUMP_MAX_MOVES copies of a function get its rows (shifted) and code; later ones only
 * the name (counted), so that a dump of moves cannot multiply what one load holds. */
static void on_move(struct jd *j, const struct jitdump_record *rec)
{
	j->stats->moves++;
	struct jitdump_move mv;
	if (jitdump_walk_move(j->w, rec, &mv) < 0)
		return;
	uint64_t old = mv.old_addr, to = mv.new_addr, index = mv.index, offset = rec->offset;
	for (uint32_t i = idmap_get(&j->by_index, index); i != UINT32_MAX; i = j->loads[i].prev_index) {
		if (j->loads[i].start != old)
			continue;
		if (jitdump_walk_past_end(to, j->loads[i].size)) {
			j->stats->bad_moves++;
			return;
		}
		struct load src = j->loads[i];
		struct load *root = &j->loads[src.root];
		int bare = root->copies >= JITDUMP_MAX_MOVES;
		root->copies += !bare;
		struct load *l = new_load(j);
		*l = src;
		l->start = to;
		l->offset = offset;
		l->moved = 1;
		l->copies = 0;
		if (bare) {
			j->stats->moves_bare++;
			l->bare = 1;
			l->code = NULL;
			l->rows = NULL;
			l->nrows = 0;
		} else if (src.nrows) {
			l->rows = symtab_alloc(j->st, src.nrows * sizeof(*l->rows));
			for (size_t k = 0; k < src.nrows; k++) {
				l->rows[k] = src.rows[k];
				l->rows[k].addr = src.rows[k].addr - old + to;
			}
		}
		index_load(j);
		return;
	}
}

static int read_records(struct jd *j)
{
	struct jitdump_record rec;
	int rc;
	while ((rc = jitdump_walk_next(j->w, &rec, j->d)) == 1) {
		switch (rec.id) {
		case JITDUMP_CODE_LOAD: on_load(j, &rec); break;
		case JITDUMP_CODE_MOVE: on_move(j, &rec); break;
		case JITDUMP_DEBUG_INFO: on_debug(j, rec.bytes, rec.size, rec.offset); break;
		case JITDUMP_CODE_CLOSE: j->stats->closes++; break;
		case JITDUMP_UNWINDING_INFO: j->stats->unwinding++; break;
		default: j->stats->unknown++; break;
		}
	}
	j->stats->truncated_bytes = jitdump_walk_truncated(j->w);
	return rc;
}

/* V8 and LLVM add 0x40 to every debug address; perf's own agent and QEMU do not. The rows
 * of a function decide: biased if none lies in its first 0x40 bytes and some lies past its
 * end, or if all start exactly 0x40 in. */
static int64_t detect_bias(const struct jd *j)
{
	uint64_t biased = 0, plain = 0;
	for (size_t i = 0; i < j->nloads; i++) {
		const struct load *l = &j->loads[i];
		if (!l->nrows)
			continue;
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t k = 0; k < l->nrows; k++) {
			lo = l->rows[k].addr < lo ? l->rows[k].addr : lo;
			hi = l->rows[k].addr > hi ? l->rows[k].addr : hi;
		}
		if (lo - l->start < BIAS)
			plain++;
		else if (lo - l->start == BIAS || hi - l->start >= l->size)
			biased++;
	}
	return biased > plain ? BIAS : 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

enum { NOT_CODE_BASELINE = 1, NOT_CODE_PREFIX = 2, PREFIX_MIN_SIZE = 256, PREFIX_MIN_ROWS = 4 };

/* Rows that cannot be offsets into L's machine code (L's rows with BIAS removed, sorted).
 * V8 writes the rows of Sparkplug code (name "JS:^f ...") from the bytecode's source
 * position table, whose offsets are bytecode offsets (src/objects/code.cc
 * Code::SourcePositionTable, src/diagnostics/perf-jit.cc LogWriteDebugInfo): they cover
 * the first 7-16% of the code, and the last row would get the rest. Other V8 code with
 * that shape (a dump with V8's 0x40 bias) is taken for the same: code of at least
 * PREFIX_MIN_SIZE bytes, at least PREFIX_MIN_ROWS distinct row addresses, and the highest
 * in the first quarter (4 * offset < size). TurboFan's rows reach 72-84% of their code
 * (samples/node-jitdump). Other producers' rows are never guessed away: the JVM's C1 code
 * puts its out-of-line stubs after the main path, and the last row covers them by design
 * (samples/java-tiers). Returns NOT_CODE_BASELINE, NOT_CODE_PREFIX, or 0 when the rows
 * can be used. */
static int rows_not_code(const struct load *l, int64_t bias)
{
	if (jitname_v8_kind(l->name, l->name_len) == '^')
		return NOT_CODE_BASELINE;
	if (bias != BIAS || l->size < PREFIX_MIN_SIZE)
		return 0;
	size_t distinct = 0;
	for (size_t k = 0; k < l->nrows; k++)
		distinct += k == 0 || l->rows[k].addr != l->rows[k - 1].addr;
	uint64_t last = l->rows[l->nrows - 1].addr - l->start;
	return distinct >= PREFIX_MIN_ROWS && 4 * last < l->size ? NOT_CODE_PREFIX : 0;
}

/* Drops L's rows when rows_not_code() says so: the function keeps the file and line of
 * its name, as one without rows does. Counted once per DEBUG_INFO (not per move). */
static void drop_rows_not_code(struct jd *j, struct load *l, int64_t bias)
{
	int why = rows_not_code(l, bias);
	if (!why)
		return;
	if (!l->moved) {
		if (why == NOT_CODE_BASELINE)
			j->stats->not_code_baseline++;
		else
			j->stats->not_code_prefix++;
		j->stats->not_code_rows += l->nrows;
		j->stats->debug_used--;
		j->stats->debug_entries -= l->nrows;
	}
	l->rows = NULL;
	l->nrows = 0;
}

/* Each load's generation (code_generations.h); a bare copy has no code for an ELF file. */
static uint32_t *assign_generations(struct jd *j)
{
	struct code_range *r = xmalloc((j->nloads + 1) * sizeof(*r));
	for (size_t i = 0; i < j->nloads; i++)
		r[i] = (struct code_range){ j->loads[i].start, j->loads[i].size, !j->loads[i].bare };
	uint32_t *gen = code_generations(r, j->nloads, &j->stats->reused, &j->stats->no_elf);
	free(r);
	return gen;
}

static int add_symbols(struct jd *j, uint32_t src, int64_t bias)
{
	size_t n = j->nloads;
	uint32_t *gen = assign_generations(j);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct load *l = &j->loads[i];
		struct symtab_entry e = { l->start, l->size, l->name, l->name_len, l->offset };
		if (symtab_add(j->st, src, &e, j->d) < 0) {
			rc = -1;
			break;
		}
		struct symbol *s = symtab_last(j->st);
		s->code = l->code;
		s->code_index = l->index;
		s->generation = gen[i];
		if (l->bare || !l->nrows)   /* file and line: its name's (symtab_finish()) */
			continue;
		for (size_t k = 0; k < l->nrows; k++) {
			uint64_t into = l->rows[k].addr - l->start;
			l->rows[k].addr = l->start + (into >= (uint64_t)bias ? into - (uint64_t)bias : 0);
		}
		qsort(l->rows, l->nrows, sizeof(*l->rows), cmp_row);
		drop_rows_not_code(j, l, bias);
		if (!l->nrows)
			continue;
		struct symline *lines = symtab_alloc(j->st, l->nrows * sizeof(*lines));
		for (size_t k = 0; k < l->nrows; k++)
			lines[k] = (struct symline){ l->rows[k].addr, l->rows[k].file, l->rows[k].file_len,
						     l->rows[k].line };
		s->lines = lines;
		s->nlines = (uint32_t)l->nrows;
	}
	free(gen);
	return rc;
}

int jitdump_read(struct symtab *st, const char *path, const char *object, int64_t bias,
		 struct jitdump_stats *stats, struct diag *d)
{
	memset(stats, 0, sizeof(*stats));
	struct input *in = input_open(path, d);
	if (!in)
		return -1;
	int rc = jitdump_read_input(st, in, object, bias, stats, d);
	input_close(in);
	return rc;
}

int jitdump_read_input(struct symtab *st, struct input *in, const char *object, int64_t bias,
		       struct jitdump_stats *stats, struct diag *d)
{
	memset(stats, 0, sizeof(*stats));
	struct jd j;
	memset(&j, 0, sizeof(j));
	j.st = st;
	j.stats = stats;
	j.d = d;
	struct jitdump_header h;
	j.w = jitdump_walk_new(in, &h, d);
	if (!j.w)
		return -1;
	stats->big_endian = h.big_endian;
	stats->version = h.version;
	stats->elf_mach = h.elf_mach;
	stats->pid = h.pid;
	stats->flags = h.flags;
	idmap_init(&j.by_index);
	int rc = read_records(&j);
	if (rc == 0) {
		stats->bias_detected = bias == JITDUMP_BIAS_AUTO;
		stats->bias = bias == JITDUMP_BIAS_AUTO ? detect_bias(&j) : bias;
		uint32_t src = symtab_add_source(st, input_name(in), object, SYMTAB_PRIO_JITDUMP);
		rc = add_symbols(&j, src, stats->bias);
	}
	jitdump_walk_free(j.w);
	free(j.loads);
	idmap_free(&j.by_index);
	free(j.pending);
	free(j.dbg);
	return rc;
}
