/* jitdump_walk.c - the jitdump header and record stream (jitdump.c and timeline.c read
 * through it). Owns one record buffer, which grows with the bytes that really arrive. */
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/magic.h"
#include "core/xalloc.h"
#include "jit/jitdump_walk.h"

enum { HEADER_SIZE = 40, PREFIX = 16, MAX_RECORD = 256 << 20, MAX_HEADER = 4096 };
#define MAGIC 0x4A695444u
#define MAGIC_SWAPPED 0x4454694Au

struct jitdump_walk {
	struct input *in;
	const char *path;
	int swap;
	uint64_t off;             /* file offset of the next byte */
	unsigned char *rec;
	size_t rec_cap;
	uint64_t truncated;
};

int jitdump_walk_is_magic(const unsigned char *p)
{
	return magic_is_jitdump(p);
}

uint32_t jitdump_walk_u32(const struct jitdump_walk *w, const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return w->swap ? __builtin_bswap32(v) : v;
}

uint64_t jitdump_walk_u64(const struct jitdump_walk *w, const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return w->swap ? __builtin_bswap64(v) : v;
}

uint64_t jitdump_walk_truncated(const struct jitdump_walk *w)
{
	return w->truncated;
}

/* Reads up to N bytes; returns how many (less only at the end), or -1. */
static ssize_t read_upto(struct jitdump_walk *w, void *buf, size_t n, struct diag *d)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = input_read(w->in, (char *)buf + got, n - got, d);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	w->off += got;
	return (ssize_t)got;
}

static int read_header(struct jitdump_walk *w, struct jitdump_header *hd, struct diag *d)
{
	unsigned char h[HEADER_SIZE];
	ssize_t n = read_upto(w, h, HEADER_SIZE, d);
	if (n < 0)
		return -1;
	if (n < 4 || !jitdump_walk_is_magic(h))
		return diag_byte(d, w->path, 0, "not a jitdump file: expected the magic 'JiTD' or 'DTiJ'%s",
				 n >= 18 && !memcmp(h, "# callgrind format", 18)
				 ? " (this is a callgrind profile)" : "");
	uint32_t m;
	memcpy(&m, h, 4);
	w->swap = m == MAGIC_SWAPPED;
	hd->big_endian = (m == MAGIC) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	if (n < HEADER_SIZE)
		return diag_byte(d, w->path, (uint64_t)n, "the file ends inside the %d-byte jitdump header",
				 HEADER_SIZE);
	hd->version = jitdump_walk_u32(w, h + 4);
	hd->size = jitdump_walk_u32(w, h + 8);
	hd->elf_mach = jitdump_walk_u32(w, h + 12);
	hd->pid = jitdump_walk_u32(w, h + 20);
	hd->timestamp = jitdump_walk_u64(w, h + 24);
	hd->flags = jitdump_walk_u64(w, h + 32);
	if (hd->version < 1 || hd->version > 2)
		return diag_byte(d, w->path, 4, "jitdump version %u is not supported (versions 1 and 2 are)",
				 hd->version);
	if (hd->size < HEADER_SIZE || hd->size > MAX_HEADER)
		return diag_byte(d, w->path, 8, "header size %u: expected 40 to 4096 bytes", hd->size);
	/* A longer header (a newer writer) is skipped up to its total_size. */
	for (uint32_t left = hd->size - HEADER_SIZE; left > 0;) {
		unsigned char skip[256];
		size_t k = left < sizeof(skip) ? left : sizeof(skip);
		ssize_t r = read_upto(w, skip, k, d);
		if (r < 0)
			return -1;
		if ((size_t)r < k)
			return diag_byte(d, w->path, w->off, "the file ends inside the %u-byte header", hd->size);
		left -= (uint32_t)k;
	}
	return 0;
}

struct jitdump_walk *jitdump_walk_new(struct input *in, struct jitdump_header *h, struct diag *d)
{
	struct jitdump_walk *w = xcalloc(1, sizeof(*w));
	w->in = in;
	w->path = input_name(in);
	memset(h, 0, sizeof(*h));
	if (read_header(w, h, d) < 0) {
		jitdump_walk_free(w);
		return NULL;
	}
	return w;
}

void jitdump_walk_free(struct jitdump_walk *w)
{
	if (!w)
		return;
	free(w->rec);
	free(w);
}

int jitdump_walk_next(struct jitdump_walk *w, struct jitdump_record *r, struct diag *d)
{
	unsigned char pre[PREFIX];
	uint64_t at = w->off;
	if (w->truncated)
		return 0;
	ssize_t n = read_upto(w, pre, PREFIX, d);
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	if (n < PREFIX) {
		w->truncated = (uint64_t)n;
		return 0;
	}
	uint32_t size = jitdump_walk_u32(w, pre + 4);
	if (size < PREFIX)
		return diag_byte(d, w->path, at, "record size %u is smaller than the 16-byte prefix", size);
	if (size > MAX_RECORD)
		return diag_byte(d, w->path, at, "record size %u is larger than the limit of %d bytes", size,
				 MAX_RECORD);
	/* The buffer grows with the bytes that really arrive, never to a claimed size first:
	 * a lying size in a short file costs no allocation. */
	XGROW(w->rec, w->rec_cap, PREFIX);
	memcpy(w->rec, pre, PREFIX);
	size_t got = PREFIX;
	while (got < size) {
		size_t chunk = size - got < (1u << 20) ? size - got : (1u << 20);
		XGROW(w->rec, w->rec_cap, got + chunk);
		n = read_upto(w, w->rec + got, chunk, d);
		if (n < 0)
			return -1;
		got += (size_t)n;
		if ((size_t)n < chunk)
			break;
	}
	if (got < size) {
		/* A JIT still writing when the dump was copied: what came before is kept. */
		w->truncated = got;
		return 0;
	}
	r->id = jitdump_walk_u32(w, pre);
	r->size = size;
	r->timestamp = jitdump_walk_u64(w, pre + 8);
	r->offset = at;
	r->bytes = w->rec;
	return 1;
}

int jitdump_walk_past_end(uint64_t start, uint64_t size)
{
	return start != 0 && start - 1 > UINT64_MAX - size;
}

/* pid, tid, vma, code_addr, code_size, code_index, name\0, code. The code is the record's
 * last code_size bytes (as perf takes it). */
int jitdump_walk_load(const struct jitdump_walk *w, const struct jitdump_record *r,
		      struct jitdump_load *l)
{
	const unsigned char *p = r->bytes;
	size_t size = r->size;
	uint64_t code_size = size >= 56 ? jitdump_walk_u64(w, p + 40) : 0;
	if (size < 57 || code_size > size - 57)
		return -1;
	size_t name_end = size - (size_t)code_size;
	const unsigned char *nul = memchr(p + 56, 0, name_end - 56);
	if (!nul)
		return -1;
	l->pid = jitdump_walk_u32(w, p + 16);
	l->tid = jitdump_walk_u32(w, p + 20);
	l->vma = jitdump_walk_u64(w, p + 24);
	l->addr = jitdump_walk_u64(w, p + 32);
	l->size = code_size;
	l->index = jitdump_walk_u64(w, p + 48);
	if (jitdump_walk_past_end(l->addr, code_size))
		return -1;
	size_t len = (size_t)(nul - (p + 56));
	while (len && (p[56 + len - 1] == ' ' || p[56 + len - 1] == '\t'))
		len--;
	l->name = (const char *)p + 56;
	l->name_len = len;
	l->code = p + name_end;
	return 0;
}

/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index. */
int jitdump_walk_move(const struct jitdump_walk *w, const struct jitdump_record *r,
		      struct jitdump_move *m)
{
	const unsigned char *p = r->bytes;
	if (r->size < 64)
		return -1;
	m->pid = jitdump_walk_u32(w, p + 16);
	m->tid = jitdump_walk_u32(w, p + 20);
	m->vma = jitdump_walk_u64(w, p + 24);
	m->old_addr = jitdump_walk_u64(w, p + 32);
	m->new_addr = jitdump_walk_u64(w, p + 40);
	m->size = jitdump_walk_u64(w, p + 48);
	m->index = jitdump_walk_u64(w, p + 56);
	return 0;
}
