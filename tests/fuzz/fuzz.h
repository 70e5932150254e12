/* fuzz.h - what the fuzz drivers share: the libFuzzer entry point and the invariant
 * checks run on every symbol table a parser produced. A violated invariant aborts, so
 * libFuzzer (and tests/fuzz/replay.c under `make fuzz-replay`) reports it like a crash.
 * Header-only (static functions), included once per driver. */
#ifndef CGJIT_FUZZ_H
#define CGJIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

/* Reads every byte of [P, P+N), so that ASan sees a bad pointer or length. */
static inline unsigned fuzz_touch(const void *p, size_t n)
{
	const volatile unsigned char *b = p;
	unsigned x = 0;
	for (size_t i = 0; i < n; i++)
		x += b[i];
	return x;
}

/* A nonempty address to probe for a symbol: its first, middle and last byte. */
static inline void fuzz_check_addr(const struct symtab *st, const struct symbol *s, uint64_t addr)
{
	const struct symtab_segment *seg = symtab_lookup(st, addr);
	/* Every address of a symbol is claimed by it, so some symbol owns it (symtab.h). */
	FUZZ_CHECK(seg != NULL);
	FUZZ_CHECK(seg->start <= addr && addr <= seg->last);
	FUZZ_CHECK(seg->sym < symtab_count(st));
	const struct symbol *w = symtab_symbol(st, seg->sym);
	FUZZ_CHECK(w->start <= addr && addr - w->start < w->size);
	/* A higher priority class (jitdump over perf map) always wins. */
	FUZZ_CHECK(symtab_source(st, w->source)->prio >= symtab_source(st, s->source)->prio);
	const struct symline *row = symtab_line(s, addr);
	if (s->nlines) {
		FUZZ_CHECK(row >= s->lines && row < s->lines + s->nlines);
		FUZZ_CHECK(row == s->lines || row->addr <= addr);
	} else {
		FUZZ_CHECK(row == NULL);
	}
}

/* Checks a finished symtab with NSOURCES sources: names and line-table files readable and terminated, line tables
 * sorted, every symbol's first/middle/last address owned by a covering symbol. */
static inline void fuzz_check_symtab(const struct symtab *st, size_t nsources)
{
	size_t n = symtab_count(st);
	for (size_t i = 0; i < nsources; i++) {
		const struct symtab_source *src = symtab_source(st, (uint32_t)i);
		fuzz_touch(src->path, strlen(src->path));
		fuzz_touch(src->object, strlen(src->object));
	}
	for (size_t i = 0; i < n; i++) {
		const struct symbol *s = symtab_symbol(st, (uint32_t)i);
		FUZZ_CHECK(s->name != NULL && s->name[s->name_len] == '\0');
		fuzz_touch(s->name, s->name_len);
		FUZZ_CHECK(s->source < nsources);
		if (s->file)   /* may point into the name: not terminated */
			fuzz_touch(s->file, s->file_len);
		for (uint32_t k = 0; k < s->nlines; k++) {
			const struct symline *l = &s->lines[k];
			FUZZ_CHECK(l->file != NULL && l->file[l->file_len] == '\0');
			fuzz_touch(l->file, l->file_len);
			if (k)
				FUZZ_CHECK(s->lines[k - 1].addr <= l->addr);
		}
		if (s->code)
			fuzz_touch(s->code, (size_t)s->size);
		if (s->object)
			fuzz_touch(s->object, strlen(s->object));
		if (s->size == 0)
			continue;
		FUZZ_CHECK(s->start + s->size - 1 >= s->start);   /* no wrap past 2^64 */
		fuzz_check_addr(st, s, s->start);
		fuzz_check_addr(st, s, s->start + (s->size - 1) / 2);
		fuzz_check_addr(st, s, s->start + s->size - 1);
	}
	/* The ends of the address space (a range may end exactly at 2^64). */
	const struct symtab_segment *seg = symtab_lookup(st, 0);
	if (seg)
		FUZZ_CHECK(seg->start == 0);
	seg = symtab_lookup(st, UINT64_MAX);
	if (seg)
		FUZZ_CHECK(seg->last == UINT64_MAX && seg->start <= seg->last);
}

#endif
