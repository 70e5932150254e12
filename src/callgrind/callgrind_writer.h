/* callgrind_writer.h - records -> callgrind text with compressed ids: functions keep the
 * input's (struct cgw_id), objects and files are numbered densely. Every output part has
 * its own id tables; an id is defined ("(id) name") where it is first written and never
 * redefined. The writer derives ob=/fl=/fi=/fe= from the
 * identity of the function it writes for, and writes cob=/cfi= only where the callee's
 * object or file differs from the current ones, so that every implicit context equals
 * the callee's identity wherever kcachegrind binds an id (docs/formats.md 3.1, 6.2).
 * Positions are written relative to the writer's own base; cost lines whose input text
 * is canonical and whose base agrees are copied byte for byte. Output is buffered and
 * handed to struct output in large blocks. */
#ifndef CGJIT_CALLGRIND_WRITER_H
#define CGJIT_CALLGRIND_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_reader.h"

struct diag;
struct io_pump;
struct output;
struct cgw;

struct cgw_fn {
	uint32_t obj, file; /* writer object and file indices */
};

/* Writes to OUT (not owned). */
struct cgw *cgw_new(struct output *out);
void cgw_free(struct cgw *w);   /* NULL is a no-op */
/* Writes through PUMP (not owned; it must outlive W): cg_outbuf_share_pump(). */
void cgw_share_pump(struct cgw *w, struct io_pump *pump);

/* Starts a new output part: forgets every id. */
void cgw_part_begin(struct cgw *w);
/* The part's layout, from its positions: and events: lines. */
void cgw_layout(struct cgw *w, unsigned npos, const enum cg_pos_kind *kinds, unsigned nevents);

/* Where a function identity's output id comes from. Function ids are the input's
 * (issue 25), so that a merged function keeps the id of its first definition and the
 * others keep theirs; objects and files are numbered by the writer. */
struct cgw_id {
	enum {
		CGW_ID_INPUT,   /* the input defined it as "(ID) name": ID, unless the writer
		                   gave that number already (a part naming functions both ways) */
		CGW_ID_FRESH,   /* the input defined it without an id: one above every id so far */
		CGW_ID_LATER,   /* cgjit made it (moved code, foreign code): one above the part's
		                   largest, at cgw_number_new(); calls and jumps naming it wait */
	} from;
	uint64_t id;
};

/* Interning (no output): object and file names, and function identities. Indices are
 * valid until the next cgw_part_begin(). An identity that exists already keeps its id,
 * or takes ID's if it has none yet. */
uint32_t cgw_obj(struct cgw *w, const char *name, size_t len);
uint32_t cgw_file(struct cgw *w, const char *name, size_t len);
uint32_t cgw_fn(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
		const struct cgw_id *id);
/* A new function identity for an input definition kept as it is: not interned (a name
 * the input defines under two ids gets two, which readers key as one function), and
 * NAME is borrowed, not copied; it must stay valid until the next cgw_settle(). Saves a
 * copy and a hash of every long name. */
uint32_t cgw_fn_borrowed(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
			 const struct cgw_id *id);
/* The same for a name built for the record (a definition with its JIT callers renamed):
 * copied until the next cgw_settle(), not interned. */
uint32_t cgw_fn_copied(struct cgw *w, const char *name, size_t len, uint32_t obj, uint32_t file,
		       const struct cgw_id *id);
struct cgw_fn cgw_fn_get(const struct cgw *w, uint32_t fn);   /* its object and file */
/* Called after each input record: the names of identities made since the last call
 * (borrowed, or copied for the record) are kept only if not written yet. A name written
 * where the input defines it is never stored. */
void cgw_settle(struct cgw *w);
/* Makes FN the current function and FILE the current file (writes fn=, fi=, ... if they
 * change); a block whose lines cannot move is entered at its fn= line, so that its name
 * is written while the reader still has it. */
void cgw_enter(struct cgw *w, uint32_t fn, uint32_t file);

/* A cost line: self cost COSTS at POS for FN, in FILE (fi=/fe= as needed). If RAW is not
 * NULL it is the input text of the same line (RAW_LEN bytes) and PREV its input base: it
 * is copied when PREV equals the writer's base. */
struct cgw_cost {
	uint32_t fn, file;
	const uint64_t *pos, *costs;
	const char *raw;
	size_t raw_len;
	const uint64_t *prev;
};

/* A call from FN at POS (in FILE) to CALLEE entered at TARGET: COUNT calls, inclusive
 * COSTS. COMMENT, if not NULL, is written as a "# ..." line before the call. RAW_LINE and
 * RAW, if not NULL, are the input's calls= line and cost line of the same call, canonical,
 * read against the input base PREV: they are copied when PREV is the writer's base (the
 * names before them are the writer's own, never the input's). */
struct cgw_call {
	uint32_t fn, file;
	const uint64_t *pos;
	uint32_t callee;
	const uint64_t *target;
	uint64_t count;
	const uint64_t *costs;
	const char *comment;
	const char *raw_line, *raw;
	size_t raw_line_len, raw_len;
	const uint64_t *prev;
};

/* A jump (jcnd= if CONDITIONAL: FOLLOWED of COUNT executions) from FN at POS (in FILE) to
 * TARGET in function TFN, file TFILE. RAW_LINE, RAW and PREV as for a call: the input's
 * jump=/jcnd= line and source line, copied when PREV is the writer's base. */
struct cgw_jump {
	uint32_t fn, file;
	const uint64_t *pos;
	uint32_t tfn, tfile;
	const uint64_t *target;
	uint64_t count, followed;
	int conditional;
	const char *raw_line, *raw;
	size_t raw_line_len, raw_len;
	const uint64_t *prev;
};

/* A line as it is (header, comment): TEXT then "\n". */
void cgw_raw(struct cgw *w, const char *text, size_t len);
/* The cost line C (fi=/fe= as needed). */
void cgw_cost(struct cgw *w, const struct cgw_cost *c);
/* Cost lines of FN in FILE, copied (the first one re-encoded if RUN's base before it is
 * not the writer's base). */
void cgw_cost_run(struct cgw *w, uint32_t fn, uint32_t file, const struct cg_cost_run *run);
/* Cost lines of FN in FILE at source line LINE, from a range sink's RUN (callgrind_reader.h,
 * cg_reader_sink_range(): "+N L C" lines, positions "instr line"): the first re-encoded,
 * the others copied with their L written "*". */
void cgw_cost_run_at_line(struct cgw *w, uint32_t fn, uint32_t file, const struct cg_cost_run *run,
			  uint64_t line);
/* The call C: cob=/cfi= where the callee's object or file differs from the current ones. */
void cgw_call(struct cgw *w, const struct cgw_call *c);
/* The jump J. Returns 0, or -1 (and writes nothing) if J->TFN is in another object than
 * J->FN: callgrind never records such jumps and the format cannot express them (jfn= binds
 * the current ob). */
int cgw_jump(struct cgw *w, const struct cgw_jump *j);

/* The end of the part's body: ids for the identities that wait (CGW_ID_LATER), above
 * every id of the part, then the calls and jumps held for them. Returns 0, or -1 if an
 * identity of the part needed an id above 2^64 - 1 (also one named without an id during
 * the body): the run must fail, its output is not usable. */
int cgw_number_new(struct cgw *w);

/* Sum of the self costs written in this part, per event. */
const uint64_t *cgw_sums(const struct cgw *w);
/* Bytes written so far (before compression). */
uint64_t cgw_bytes(const struct cgw *w);
/* Hands buffered bytes to the output. Returns 0, or -1 with D set (the first write error). */
int cgw_flush(struct cgw *w, struct diag *d);

#endif
