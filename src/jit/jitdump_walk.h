/* jitdump_walk.h - one pass over a jitdump's records: the header checked, then each record
 * with its id, timestamp and bytes, every size checked against the file. Shared by
 * jitdump.c (symbols for augment) and timeline.c (when code was loaded).
 * Layout: docs/formats.md 5.1-5.7. Both byte orders (from the
 * magic); a header of 40 to 4096 bytes (a longer one skipped up to its total_size);
 * versions 1 and 2. A record cut off at the end of the file (a JIT still writing when the
 * dump was copied) ends the walk cleanly and is counted (jitdump_walk_truncated()). */
#ifndef CGJIT_JITDUMP_WALK_H
#define CGJIT_JITDUMP_WALK_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct input;
struct jitdump_walk;

enum jitdump_record_id {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_UNWINDING_INFO = 4,
};

/* Header flag bit 0: record timestamps are CPU counter values (e.g. TSC), not
 * CLOCK_MONOTONIC nanoseconds. */
#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1u

struct jitdump_header {
	int big_endian;         /* the writer's byte order */
	uint32_t version;
	uint32_t size;          /* total_size: the first record starts here */
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;     /* creation time; not reliable (V8, CPython write wall-clock us) */
	uint64_t flags;
};

struct jitdump_record {
	uint32_t id;                 /* enum jitdump_record_id, or any other value */
	uint32_t size;               /* the whole record, the 16-byte prefix included */
	uint64_t timestamp;
	uint64_t offset;             /* file offset of its first byte, for messages */
	const unsigned char *bytes;  /* SIZE bytes, prefix included; valid until the next
	                                jitdump_walk_next() or jitdump_walk_free() */
};

/* CODE_LOAD's fields (docs/formats.md 5.3). */
struct jitdump_load {
	uint32_t pid, tid;
	uint64_t vma, addr, size, index;
	const char *name;            /* into the record (not NUL-terminated here), trailing
	                                blanks and tabs left out */
	size_t name_len;
	const unsigned char *code;   /* SIZE bytes: the record's last bytes */
};

/* CODE_MOVE's fields (docs/formats.md 5.4). */
struct jitdump_move {
	uint32_t pid, tid;
	uint64_t vma, old_addr, new_addr, size, index;
};

/* 1 if the 4 bytes at P are a jitdump magic in either byte order. */
int jitdump_walk_is_magic(const unsigned char *p);

/* Reads and checks the header of IN (not closed here; its name is used in messages) into
 * *H. Returns the walker (free with jitdump_walk_free()), or NULL with D set
 * ("FILE: byte N: ..."). */
struct jitdump_walk *jitdump_walk_new(struct input *in, struct jitdump_header *h, struct diag *d);
void jitdump_walk_free(struct jitdump_walk *w);   /* NULL is a no-op */

/* The next record into *R. Returns 1, 0 at the end (a clean one, or a record cut off by
 * the end of the file), or -1 with D set (a size below the prefix or above 256 MiB, a
 * read error). */
int jitdump_walk_next(struct jitdump_walk *w, struct jitdump_record *r, struct diag *d);

/* Bytes of the record the file ended inside (0: it ended between records). */
uint64_t jitdump_walk_truncated(const struct jitdump_walk *w);

/* Fields in the dump's byte order, from P (which must hold 4 or 8 bytes). */
uint32_t jitdump_walk_u32(const struct jitdump_walk *w, const unsigned char *p);
uint64_t jitdump_walk_u64(const struct jitdump_walk *w, const unsigned char *p);

/* R (a CODE_LOAD) into *L. Returns 0, or -1 if it is malformed: its sizes do not fit the
 * record, its name is not terminated, or its code would pass 2^64. A load of code size 0
 * is well-formed. */
int jitdump_walk_load(const struct jitdump_walk *w, const struct jitdump_record *r,
		      struct jitdump_load *l);

/* R (a CODE_MOVE) into *M. Returns 0, or -1 if the record is shorter than 64 bytes. */
int jitdump_walk_move(const struct jitdump_walk *w, const struct jitdump_record *r,
		      struct jitdump_move *m);

/* 1 if SIZE bytes at START would pass 2^64 (ending exactly there is fine). */
int jitdump_walk_past_end(uint64_t start, uint64_t size);

#endif
