/* jitdump.h - jitdump files (jit-PID.dump, the format `perf inject --jit` reads) into
 * symtab entries with line tables and code bytes.
 * Layout and producer quirks: docs/formats.md section 5. Both byte orders (from the magic),
 * headers longer than 40 bytes (total_size honoured), records CODE_LOAD, CODE_MOVE,
 * DEBUG_INFO, CODE_CLOSE, UNWINDING_INFO (skipped, counted) and unknown ids (skipped by
 * size). Every length is checked against the record and the file before it is used.
 * Lenient where real dumps need it: a record cut off at the end of the file (a JIT still
 * running when the dump was copied) ends the reading with a warning; a DEBUG_INFO record
 * whose entries do not fit its function (garbage file names, node 20) is dropped and
 * counted. DEBUG_INFO applies to the next CODE_LOAD, as in perf; "\xff\0" repeats the
 * previous file name. Rows that cannot be machine-code offsets (V8 baseline code, or all
 * rows in the first quarter of a large function: rows_not_code() in jitdump.c) are
 * ignored and counted; such a function keeps the file and line of its name. A later
 * CODE_LOAD at the same addresses replaces an earlier one for those addresses (callgrind
 * keeps no times; each reuse is a new ELF generation). */
#ifndef CGJIT_JITDUMP_H
#define CGJIT_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "jit/code_generations.h"

struct diag;
struct input;
struct symtab;

enum { JITDUMP_BIAS_AUTO = -1 };
/* Address-reuse generations that get an ELF file each; code reused more often gets none
 * (struct symbol generation = JITDUMP_NO_GENERATION). */
#define JITDUMP_MAX_GENERATIONS CODE_GEN_MAX
#define JITDUMP_NO_GENERATION CODE_GEN_NONE
/* Moved copies of one function that get its line rows and machine code; later CODE_MOVEs of
 * it give the new range its name only (struct jitdump_stats moves_bare), so that memory and
 * ELF files follow the distinct code, not the number of moves. */
#define JITDUMP_MAX_MOVES 16

struct jitdump_stats {
	int big_endian;
	uint32_t version, elf_mach;
	uint64_t flags;
	uint64_t pid;
	uint64_t loads, moves, debug_records, debug_used, debug_entries, unwinding, closes;
	uint64_t unknown;          /* records of unknown id, skipped */
	uint64_t debug_recovered;  /* ... read at a fixed stride (node 20's overwritten names) */
	uint64_t not_code_baseline;/* debug records ignored: V8 Sparkplug code ("JS:^"), whose
	                              rows are bytecode offsets */
	uint64_t not_code_prefix;  /* ... ignored: every row in the first quarter of 256+ bytes */
	uint64_t not_code_rows;    /* rows of those records (not in debug_entries) */
	uint64_t bad_debug;        /* DEBUG_INFO records dropped */
	char bad_debug_reason[160];/* why the first one was dropped */
	uint64_t bad_loads;        /* CODE_LOAD records refused (name not terminated, code past
	                              2^64, ...) */
	uint64_t bad_moves;        /* CODE_MOVE records refused (code moved past 2^64) */
	uint64_t moves_bare;       /* moves past JITDUMP_MAX_MOVES of one function: name only */
	uint64_t reused;           /* loads at addresses another load also had */
	uint64_t no_elf;           /* loads past JITDUMP_MAX_GENERATIONS reuses: no ELF */
	uint64_t truncated_bytes;  /* bytes of a record cut off at the end */
	uint64_t zero_size;        /* loads of code_size 0 (ignored) */
	int64_t bias;              /* debug address bias applied (0 or 0x40 usually) */
	int bias_detected;         /* 1 if found by detection, 0 if given or none */
};

/* 1 if the 4 bytes at P are a jitdump magic in either byte order. */
int jitdump_is_magic(const unsigned char *p);

/* Reads the dump at PATH (plain or zstd) into ST as a new source (priority 1, so its ranges
 * win over perf maps) named OBJECT. BIAS is the debug-address bias to subtract, or
 * JITDUMP_BIAS_AUTO. Returns 0, or -1 with D set ("FILE: byte N: ..."). */
int jitdump_read(struct symtab *st, const char *path, const char *object, int64_t bias,
		 struct jitdump_stats *stats, struct diag *d);

/* The same from an open input (not closed here); its name is used in messages. */
int jitdump_read_input(struct symtab *st, struct input *in, const char *object, int64_t bias,
		       struct jitdump_stats *stats, struct diag *d);

#endif
