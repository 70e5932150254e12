/* callgrind_reader_ctx.h - the reader's context, shared by the files that make the reader
 * (private to src/callgrind/): callgrind_reader.c reads lines and dispatches them,
 * callgrind_costs.c parses positions and costs, callgrind_records.c turns header, cost,
 * call and jump lines into records, callgrind_namerefs.c resolves name lines. The context
 * holds what kcachegrind's loader holds, plus the current line and the caller's diag, so
 * that no step needs them passed along. */
#ifndef CGJIT_CALLGRIND_READER_CTX_H
#define CGJIT_CALLGRIND_READER_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_names.h"
#include "callgrind/callgrind_reader.h"
#include "callgrind/name_scan.h"
#include "core/linereader.h"

enum { CG_LINE_COPY_MAX = 128 };

enum cg_reader_state {
	ST_START,      /* nothing read yet */
	ST_HEADER,     /* in a part's header, before events: */
	ST_BODY,       /* after events: */
	ST_CLOSED,     /* after totals: */
};

/* The tag of a "tag=value" body line. */
enum cg_tag {
	T_OB, T_FL, T_FI, T_FE, T_FN, T_COB, T_CFI, T_CFL, T_CFN, T_JFI, T_JFN,
	T_CALLS, T_JUMP, T_JCND, T_NONE,
};

/* The line being read: messages quote it. VAL..VAL_END is its value ("tag=VALUE",
 * "key: VALUE" without the blanks around it); the line after calls= or jump= replaces it. */
struct cg_reader_line {
	const char *text;
	size_t len;
	const char *val, *val_end;
};

struct cg_reader {
	struct line_reader lr;
	const char *name;
	struct diag *d;             /* the caller's, for the cg_reader_next() under way */
	struct cg_reader_line cur;
	struct cg_names names;
	enum cg_reader_state state;
	unsigned parts;
	uint64_t pid;
	int body_cost_seen;         /* a cost line in this part (cachegrind detection) */

	unsigned npos;
	enum cg_pos_kind pos_kind[CG_MAX_POS];
	unsigned nevents;
	char *event_names[CG_MAX_EVENTS];

	uint64_t base[CG_MAX_POS], prev[CG_MAX_POS], target[CG_MAX_POS];
	uint64_t costs[CG_MAX_EVENTS];
	uint64_t sums[CG_MAX_EVENTS];

	/* context (kcachegrind's loader state) */
	uint32_t ob, fl, file, fn;
	int have_ob, have_fn;
	uint32_t cob, cfi, jfi, cfn, jfn;
	int have_cob, have_cfi, have_jfi, have_cfn, have_jfn;
	uint32_t unknown_obj, unknown_file;
	struct cg_def *defs;        /* functions defined since the last record: the names of the
	                               first NDEFS_KEPT copied to def_names (offsets), the
	                               others still in the line reader's buffer */
	size_t ndefs, defs_cap, ndefs_kept;
	char *def_names;
	size_t def_names_len, def_names_cap;
	struct name_parts def_parts;   /* the defs' parts: each def's PARTS is an index here
	                                  until they are handed out */
	int instr;                  /* index of the instr position, or -1 */
	cg_cost_sink *sink;         /* cg_reader_sink_costs() ... */
	cg_line_sink *line_sink;    /* ... or cg_reader_sink_lines(): at most one is set */
	cg_cost_sink *range_sink;   /* cg_reader_sink_range(), with LINE_SINK only */
	uint64_t range_lo, range_hi;
	cg_call_sink *call_sink;    /* cg_reader_sink_calls(), with SINK only */
	int call_left;              /* the call being read is the general path's: not tried
	                               again at each of its lines */
	void *sink_ctx;
	uint32_t sink_fn;
	int saw_sign;           /* a line only callgrind writes: marker, creator:, version:, positions: */
	int maybe_cachegrind;   /* events: came without any such line */
	int symbol_file;        /* the input is a perf map or a jitdump */
	int foreign;            /* cg_reader_accept_foreign(): other writers' files too */
	int by_callgrind;       /* "# callgrind format" or creator: callgrind-...: valgrind's
	                           callgrind wrote it, and a part without totals: is cut short */
	int by_xdebug;          /* creator: xdebug ...: Xdebug writes summary: last, so a part
	                           without one is cut short */
	int summary_seen;       /* the part has had its summary: line (one per part) */
	uint64_t summary[CG_MAX_EVENTS];   /* the part's summary: line (foreign mode) */
	/* The last calls=/jump=/jcnd= line, canonical (cg_record.line_text): copied here
	 * because the line after it may move the line reader's buffer. Callgrind's are
	 * short ("calls=COUNT 0xADDR LINE "); a longer one is re-encoded instead. */
	char line_copy[CG_LINE_COPY_MAX];
};

/* The line reader's before_fill: copies the names of the definitions not yet handed out,
 * before the buffer they are in changes (callgrind_namerefs.c). */
void cg_reader_keep_def_names(void *ctx);

/* Sets R's diag to "WHAT, got 'LINE'" for the current line. Returns -1. */
int cg_reader_err(struct cg_reader *r, const char *what);

/* callgrind_costs.c. Each returns 0, or -1 with the diag set, unless said otherwise. */
/* "N N N" from P to END into OUT (missing trailing values are 0, as the spec says); *CLEAN
 * becomes 0 if the text is not as callgrind writes it. */
int cg_costs_list(struct cg_reader *r, const char *p, const char *end, uint64_t *out, int *clean);
/* The subpositions at *PP, relative to the base, into OUT; *PP moves past them. */
int cg_costs_pos(struct cg_reader *r, const char **pp, const char *end, uint64_t *out, int *clean);
/* The subpositions at *PP as cg_costs_pos() reads them (the base does not move), the
 * canonical case on the fast parser's path: a calls=/jump= line's target, a jump's source
 * line. */
int cg_costs_positions(struct cg_reader *r, const char **pp, const char *end, uint64_t *out,
		    int *clean);
/* The current line as a cost line, into the base (PREV keeps the old one) and COSTS. */
int cg_costs_line(struct cg_reader *r, int *clean);
/* LINE, a canonical cost line of the sink's function, handed to the sink: 1; 0 if it is
 * anything else (it then takes the general path, which also explains errors). */
int cg_costs_sink_line(struct cg_reader *r, const char *line, size_t len);
/* The canonical cost lines of the sink's function that the buffer holds, from the next
 * line on, handed to the sink as one run: 1, or 0 if the next line is not such a line. */
int cg_costs_sink_run(struct cg_reader *r);
/* The call that the buffer holds from the next line on, handed to the call sink: 1, or 0
 * if the lines are no such call (nothing is consumed). */
int cg_costs_sink_call(struct cg_reader *r);

/* callgrind_namerefs.c: the new function index of "(ID) NAME", ID not defined before,
 * bound to OBJ and FILE, its definition added to those handed out next. SUM and the parts
 * from PART0 on are the name's (name_scan_line()). */
uint32_t cg_namerefs_new_fn(struct cg_reader *r, uint64_t id, const char *name, size_t n,
			    uint32_t obj, uint32_t file, const struct name_sum *sum, size_t part0);
/* callgrind_namerefs.c: the line "fn=(ID)" or "fn=(ID) NAME" (ID not defined before) that
 * the buffer holds from the next line on, as the general path reads it: 1 with REC filled
 * (CG_FN), or 0 for any other line or form (nothing consumed). */
int cg_namerefs_fast_fn(struct cg_reader *r, struct cg_record *rec);
/* callgrind_reader.c: the defs are handed out: their PARTS become pointers. */
void cg_reader_hand_out_parts(struct cg_reader *r);

/* callgrind_records.c. Each returns 1 with REC filled, or -1 with the diag set. */
int cg_records_header(struct cg_reader *r, enum cg_header_key k, struct cg_record *rec);
int cg_records_totals(struct cg_reader *r, struct cg_record *rec);
int cg_records_cost(struct cg_reader *r, struct cg_record *rec);
int cg_records_calls(struct cg_reader *r, struct cg_record *rec);
int cg_records_jump(struct cg_reader *r, enum cg_tag t, struct cg_record *rec);

/* callgrind_namerefs.c: a name line (ob=, fl=, fi=, fe=, fn=, cob=, cfi=, cfl=, cfn=, jfi=,
 * jfn=) with tag T. Returns 1 with REC filled (fn=: CG_FN), 0 (the context changed, no
 * record) or -1 with the diag set. */
int cg_namerefs_line(struct cg_reader *r, enum cg_tag t, struct cg_record *rec);

#endif
