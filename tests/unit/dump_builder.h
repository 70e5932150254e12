/* dump_builder.h - jitdump bytes built in memory for the unit tests of the readers
 * (test_jitdump.c, test_timeline.c): either byte order, the 40-byte header, and records
 * whose total_size is patched once their body is written. Header-only, test code. */
#ifndef CGJIT_TEST_DUMP_BUILDER_H
#define CGJIT_TEST_DUMP_BUILDER_H

#include <stdint.h>
#include <string.h>

struct dump {
	unsigned char b[1 << 16];
	size_t n;
	int be;   /* big-endian */
};

/* V in BYTES bytes, in the dump's byte order. */
static inline void put(struct dump *d, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		int shift = d->be ? 8 * (bytes - 1 - i) : 8 * i;
		d->b[d->n++] = (unsigned char)(v >> shift);
	}
}

static inline void put_str(struct dump *d, const char *s)
{
	size_t k = strlen(s) + 1;
	memcpy(d->b + d->n, s, k);
	d->n += k;
}

/* A new dump: magic, version 1, TOTAL header bytes (padded with 0xee past 40), x86-64,
 * PID, timestamp TS, FLAGS. */
static inline void dump_header(struct dump *d, int be, uint32_t total, uint32_t pid, uint64_t ts,
			       uint64_t flags)
{
	memset(d, 0, sizeof(*d));
	d->be = be;
	put(d, 0x4A695444, 4);
	put(d, 1, 4);
	put(d, total, 4);
	put(d, 62, 4);
	put(d, 0, 4);
	put(d, pid, 4);
	put(d, ts, 8);
	put(d, flags, 8);
	while (d->n < total)
		d->b[d->n++] = 0xee;
}

/* Starts a record of id ID at time TS; returns where it starts, for dump_end(). */
static inline size_t dump_begin(struct dump *d, uint32_t id, uint64_t ts)
{
	size_t at = d->n;
	put(d, id, 4);
	put(d, 0, 4);
	put(d, ts, 8);
	return at;
}

/* Patches the u32 total_size of the record that starts at AT. */
static inline void dump_end(struct dump *d, size_t at)
{
	struct dump tmp = { .be = d->be };
	put(&tmp, d->n - at, 4);
	memcpy(d->b + at + 4, tmp.b, 4);
}

/* A CODE_LOAD at time TS by process PID (thread PID + 1) of SIZE code bytes (0x90, 0x91,
 * ...) named NAME at ADDR, code index INDEX. */
static inline void dump_load_at(struct dump *d, uint64_t ts, uint32_t pid, uint64_t addr,
				uint64_t size, uint64_t index, const char *name)
{
	size_t at = dump_begin(d, 0, ts);
	put(d, pid, 4);
	put(d, pid + 1, 4);
	put(d, addr, 8);
	put(d, addr, 8);
	put(d, size, 8);
	put(d, index, 8);
	put_str(d, name);
	for (uint64_t i = 0; i < size; i++)
		d->b[d->n++] = (unsigned char)(0x90 + i);
	dump_end(d, at);
}

/* dump_load_at() at time 1000 + INDEX by process 4242. */
static inline void dump_load(struct dump *d, uint64_t addr, uint64_t size, uint64_t index,
			     const char *name)
{
	dump_load_at(d, 1000 + index, 4242, addr, size, index, name);
}

/* One line row of a DEBUG_INFO record. */
struct dump_row {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

/* A DEBUG_INFO record of the N rows E for the code at ADDR (the next load's), at time 999,
 * with PAD zero bytes after them. */
static inline void dump_debug(struct dump *d, uint64_t addr, const struct dump_row *e, size_t n,
			      size_t pad)
{
	size_t at = dump_begin(d, 2, 999);
	put(d, addr, 8);
	put(d, n, 8);
	for (size_t i = 0; i < n; i++) {
		put(d, e[i].addr, 8);
		put(d, e[i].line, 4);
		put(d, 0, 4);
		put_str(d, e[i].file);
	}
	for (size_t i = 0; i < pad; i++)
		d->b[d->n++] = 0;
	dump_end(d, at);
}

#endif
