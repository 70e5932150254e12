/* auditlog.h - what a RaptorJIT auditlog says its JIT did (docs/formats.md 7): each
 * compiled trace with its number, kind, start (chunk and line), machine code and time; each
 * aborted recording with its place and error; each flush. Read in one pass over the records
 * (auditlog_walk.h), the struct layouts taken from the log's own DWARF blob
 * (auditlog_dwarf.h), and handed to a visitor: auditlog_symbols.c (augment's symbols) and
 * timeline.c. */
#ifndef CGJIT_AUDITLOG_H
#define CGJIT_AUDITLOG_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct input;

struct auditlog_trace {
	uint64_t time;              /* the trace_stop event's nanotime (CLOCK_MONOTONIC) */
	uint64_t offset;            /* the event's byte offset in the log */
	uint32_t traceno, parent, exitno, link, linktype;
	uint64_t addr, size;        /* its machine code: [addr, addr + size) */
	const unsigned char *code;  /* SIZE bytes (the MCode[] snapshot), or NULL when the log
	                               has none for it */
	const char *name;           /* "TRACE_N KIND::CHUNK:LINE" (formats.md 7.4), NAME_LEN
	                               bytes, NUL-terminated */
	size_t name_len;
};

struct auditlog_abort {
	uint64_t time, offset;
	uint32_t traceno;           /* the number the trace would have had */
	uint64_t error;             /* TraceError: the index in RaptorJIT's lj_traceerr.h */
	const char *where;          /* "CHUNK:LINE" where the recording started; NUL-terminated */
	size_t where_len;
};

/* What a reader wants to be told. The pointers in a trace or abort are valid during the
 * call only. Any callback may be NULL. */
struct auditlog_visitor {
	void *ctx;
	void (*event)(void *ctx, uint64_t time);   /* every event, first, with its nanotime */
	void (*trace)(void *ctx, const struct auditlog_trace *t);
	void (*abort)(void *ctx, const struct auditlog_abort *a);
	void (*flush)(void *ctx, uint64_t time);   /* trace_flushall: every trace so far ends */
};

struct auditlog_stats {
	uint64_t records, memory, blobs, events;
	uint64_t traces, aborts, flushes;
	uint64_t no_code;           /* traces without an MCode[] snapshot: named, no ELF code */
	uint64_t truncated_bytes;   /* bytes of a record cut off at the end */
	int size_limit;             /* 1 if the log says it stopped at its size limit */
};

/* 1 if the N bytes at P start like an auditlog (no magic: formats.md 7.7), 0 if not. */
int auditlog_is_log(const unsigned char *p, size_t n);

/* Reads the log IN (plain or zstd; not closed here; its name is used in messages), calling
 * V for each trace, abort and flush in the log's order. Memory: the latest snapshot of each
 * address logged with one of the kinds needed (machine code, traces, prototypes, strings,
 * the JIT state): an address logged again replaces its bytes, so a long run that reuses
 * memory does not grow it; at most the log's size. Returns 0, or -1 with D set
 * ("FILE: byte N: ..."): a malformed record, a trace or abort before the DWARF blob, a blob
 * without the layouts needed, an event naming a snapshot the log does not have. */
int auditlog_read(struct input *in, const struct auditlog_visitor *v, struct auditlog_stats *stats,
		  struct diag *d);

#endif
