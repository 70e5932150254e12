/* callgrind_reader.h - a callgrind profile as a stream of typed records.
 * Reads the whole format as valgrind writes it (docs/formats.md section 1): header
 * lines, several parts, name compression with its three id spaces, uncompressed names,
 * positions "line", "instr", "bb" in any combination, subposition compression, fi=/fe=,
 * calls= with its cost line, jump=/jcnd=, any list of events, CRLF. Positions in records
 * are absolute. Name lines (ob=, fl=, cfn=, ...) are consumed here and turned into the
 * function and file indices that the records carry (struct cg_names, per part).
 * A record borrows the reader's memory until the next cg_reader_next(). */
#ifndef CGJIT_CALLGRIND_READER_H
#define CGJIT_CALLGRIND_READER_H

#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_names.h"

struct diag;
struct input;

enum { CG_MAX_EVENTS = 64, CG_MAX_POS = 3 };

enum cg_kind {
	CG_HEADER,    /* a header line ("key: value"), or the format marker line */
	CG_COMMENT,   /* a "#" line or an empty line */
	CG_FN,        /* fn=: FN is the new current function */
	CG_COST,      /* self cost at POS, charged to FN in FILE */
	CG_CALL,      /* calls= and its cost line: FN at POS calls CALLEE, inclusive COSTS */
	CG_JUMP,      /* jump=/jcnd= and its source line */
	CG_TOTALS,    /* totals: (the end of a part; the reader has checked the sums) */
};

enum cg_header_key {
	HK_MARKER, HK_VERSION, HK_CREATOR, HK_PID, HK_CMD, HK_PART, HK_THREAD, HK_DESC,
	HK_POSITIONS, HK_EVENT, HK_EVENTS, HK_SUMMARY,
};

enum cg_pos_kind { POS_INSTR, POS_BB, POS_LINE };

/* A function defined by a name line (fn=, cfn=, jfn=) since the previous record, with its
 * name, which the reader does not keep: this is the one time it is handed out, with the
 * object and file that bind it (docs/formats.md 3.1). One (name, object, file) defined
 * under two ids is two definitions with two indices (callgrind_names.h). */
struct cg_def {
	uint32_t fn;
	uint32_t obj, file;         /* cg_names indices of its object and file */
	const char *name;           /* LEN bytes, not NUL-terminated */
	size_t len;
	int compressed;             /* defined as "(id) name": ... */
	uint64_t id;                /* ... with this id */
	const size_t *parts;        /* the offset in NAME of each "'0x" in it (a caller part
	                               that may be callgrind's name of an address), NPARTS */
	size_t nparts;
};

struct cg_record {
	enum cg_kind kind;
	const struct cg_def *defs;  /* valid until the next cg_reader_next() */
	unsigned ndefs;
	uint64_t line;              /* line number in the input (of the last line read) */
	const char *text;           /* the line, without "\n"/"\r\n" (HEADER, COMMENT, COST; CALL:
	                               its cost line; JUMP: its source line) */
	size_t len;
	enum cg_header_key key;     /* HEADER */
	int new_part;               /* HEADER: the first header line of a new part */
	uint32_t fn;                /* FN, COST, CALL, JUMP: current function (cg_names index) */
	uint32_t file;              /* COST, CALL, JUMP: file in effect (fl=, or fi=/fe=) */
	const uint64_t *pos;        /* COST, CALL (source), JUMP (source): absolute positions */
	const uint64_t *prev_pos;   /* the position base before this line */
	int clean;                  /* COST: TEXT is canonical callgrind text (single spaces,
	                               decimal costs) and may be copied when the bases agree;
	                               CALL, JUMP: so are TEXT and LINE_TEXT */
	const char *line_text;      /* CALL, JUMP: the calls=/jump=/jcnd= line as read, kept by
	                               the reader (its buffer moves on the next line), or NULL
	                               when not CLEAN; relative to PREV_POS, like TEXT */
	size_t line_len;
	const uint64_t *costs;      /* COST: self; CALL: inclusive; HEADER summary: its values
	                               in foreign mode (cg_reader_accept_foreign), else NULL.
	                               nevents entries */
	uint64_t count;             /* CALL: calls count; JUMP: executions */
	uint64_t followed;          /* JUMP (jcnd=): times followed */
	int conditional;            /* JUMP: 1 for jcnd= */
	const uint64_t *target;     /* CALL, JUMP: target position */
	uint32_t callee;            /* CALL: called function; JUMP: target function */
	uint32_t callee_file;       /* JUMP: target file (jfi= or the current file) */
};

struct cg_reader;
struct io_pump;

/* Reads from IN (not owned; its name is used in messages). MAX_LINE bounds a line. */
struct cg_reader *cg_reader_new(struct input *in, size_t max_line);
void cg_reader_free(struct cg_reader *r);   /* NULL is a no-op */
/* Reads ahead through PUMP (not owned; it must outlive R): line_reader_share_pump(). */
void cg_reader_share_pump(struct cg_reader *r, struct io_pump *pump);
/* From now on R reads what callgrind_annotate and kcachegrind read of other writers' files
 * (Xdebug, go tool pprof -callgrind), which valgrind's callgrind never writes: text after a
 * calls= line's target position (Xdebug's "calls=1 0 0"), a summary: line after the body
 * (Xdebug's, its values in the record's costs), and a part that ends without totals: (at
 * the end of the file or where the next part's header begins; pprof writes none). A file
 * that says callgrind wrote it ("# callgrind format", creator: callgrind-...) still needs
 * its summary: before the body and a totals: per part: without it, it was cut short. For
 * the readers of reports; augment stays strict, since it rewrites what it reads. */
void cg_reader_accept_foreign(struct cg_reader *r);
/* Returns 1 with REC filled, 0 at a clean end (every part closed by a matching totals:),
 * -1 with D set: malformed line, undefined id, calls= without its cost line, truncated
 * file, self costs not adding up to totals:, NUL byte, cachegrind input. */
int cg_reader_next(struct cg_reader *r, struct cg_record *rec, struct diag *d);

/* Consecutive cost lines of one function in one file, handed over without records, with
 * the jumps inside the function between them (jump=/jcnd= without jfi=/jfn=, and the
 * source line) and the empty lines among and after them (callgrind ends each block with
 * one), neither ever the first line: their text (each line canonical, as callgrind writes
 * it) is copied as it is, except that the first line may need its positions re-encoded
 * when the consumer's base differs. */
struct cg_cost_run {
	const char *text;           /* LINES lines joined by "\n", without the last one's */
	size_t len;
	size_t first_len;           /* bytes of the first line */
	uint64_t lines;             /* of text: cost lines, two per jump, empty lines */
	const uint64_t *prev;       /* the position base before the first line */
	const uint64_t *first_pos;  /* the first line's absolute positions and self costs */
	const uint64_t *first_costs;
	const uint64_t *last_pos;   /* the base after the run */
	const uint64_t *sums;       /* self costs of the run, per event */
	uint64_t lo, hi;            /* smallest and largest instr position (UINT64_MAX, 0 if none) */
};
typedef void cg_cost_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run);
/* From now on, canonical cost lines of function FN go to SINK, in runs, instead of being
 * returned as records, until the next fn= line or part (SINK NULL: none); so do the jumps
 * inside FN between them, which the consumer then writes as they are. Most lines of a
 * profile are such lines in blocks that stay as they are: this saves a record and a copy
 * per line. */
void cg_reader_sink_costs(struct cg_reader *r, uint32_t fn, cg_cost_sink *sink, void *ctx);

/* One canonical cost line offered to a line sink: what its record would carry. */
struct cg_cost_line {
	const char *text;           /* the line, without "\n" */
	size_t len;
	const uint64_t *prev;       /* the position base before the line */
	const uint64_t *pos;        /* its absolute positions and self costs */
	const uint64_t *costs;
};
/* Takes LINE (1) or leaves it (0): it is then returned as a record, as without a sink. */
typedef int cg_line_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_line *line);
/* From now on, canonical cost lines of function FN are offered to SINK one by one, until
 * the next fn= line or part, or cg_reader_sink_costs(): each line it takes is consumed with
 * no record; the first it leaves comes as a record, and the next line is offered again.
 * Jumps are never offered. For blocks whose lines are not copied in runs but most of
 * which the consumer writes as they come (augment's JIT functions: a record per line
 * cost about three times the work of writing the line). */
void cg_reader_sink_lines(struct cg_reader *r, uint32_t fn, cg_line_sink *sink, void *ctx);
/* While the line sink set last is on, the lines of its function at an instr position from
 * LO to HI that read "+N L C" (N 1 to 2^20 - 1 and C above 0, both without a leading
 * zero, L one digit: as the writer writes such a line, but for L) go to SINK (with the
 * line sink's context) in runs, without being offered; the line sink gets the others, as
 * before. For code whose lines are all written at one source line (augment's JIT symbols
 * with no line table, as every perf map's: the consumer copies the text with L replaced).
 * Only in the layout "positions: instr line" with one event: returns 1 if set, else 0 (the
 * line sink then gets every line). Called again, it replaces the range. */
int cg_reader_sink_range(struct cg_reader *r, uint64_t lo, uint64_t hi, cg_cost_sink *sink);

/* A call as callgrind writes most of them, handed to a call sink: "cfn=(ID)" naming a
 * function defined before or "cfn=(ID) NAME" defining one (after "cob=(ID)" and
 * "cfi=(ID)" naming what was defined before), a canonical calls= line and, right after
 * it, its canonical cost line. */
struct cg_call_line {
	const struct cg_def *defs;  /* the callee's definition, if the call makes it: as a
	                               record's, handed out this once */
	unsigned ndefs;
	uint32_t callee;            /* the called function */
	uint64_t count;
	const uint64_t *target;     /* absolute */
	const uint64_t *pos;        /* of the cost line: absolute; the base before it: PREV */
	const uint64_t *prev;
	const uint64_t *costs;      /* inclusive */
	const char *line_text;      /* the calls= line, without "\n" */
	size_t line_len;
	const char *text;           /* its cost line */
	size_t len;
};
typedef void cg_call_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_call_line *call);
/* After cg_reader_sink_costs() or cg_reader_sink_lines(): the calls of its function that
 * are such calls go to SINK too (with its context), with no record, until that sink ends;
 * the others (an object or file defined on their lines, a callee's id defined again, a
 * comment before the cost line, text that is not canonical, an error) come as records. */
void cg_reader_sink_calls(struct cg_reader *r, cg_call_sink *sink);

/* The current part's layout; valid after its events: line. */
unsigned cg_reader_npos(const struct cg_reader *r);
enum cg_pos_kind cg_reader_pos_kind(const struct cg_reader *r, unsigned i);
int cg_reader_pos_index(const struct cg_reader *r, enum cg_pos_kind k);  /* -1 if absent */
unsigned cg_reader_nevents(const struct cg_reader *r);
const char *cg_reader_event_name(const struct cg_reader *r, unsigned i);
/* Sum of self costs of the current part so far. */
const uint64_t *cg_reader_part_sums(const struct cg_reader *r);
/* The pid: header (0 if none seen yet). */
uint64_t cg_reader_pid(const struct cg_reader *r);
/* 1 if reading failed because the input is a perf map or a jitdump, not a profile. */
int cg_reader_is_symbol_file(const struct cg_reader *r);
unsigned cg_reader_part_count(const struct cg_reader *r);
const struct cg_names *cg_reader_names(const struct cg_reader *r);
const char *cg_reader_input_name(const struct cg_reader *r);

#endif
