/* code_generations.c - interval partitioning of JIT loads by start address: no two loads of
 * one generation overlap, so each generation can become one ELF file with its sections at
 * the runtime addresses. */
#include <stdlib.h>

#include "core/xalloc.h"
#include "jit/code_generations.h"

struct load_start {
	uint64_t start;
	size_t load;
};

/* By start; equal starts: the later load first, so that the code that was there last gets
 * generation 0 (and always an ELF file). Loads are distinct, so the order is total and
 * qsort's instability does not matter. */
static int cmp_load_start(const void *a, const void *b)
{
	const struct load_start *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->load > y->load ? -1 : x->load < y->load;
}

uint32_t *code_generations(const struct code_range *r, size_t n, uint64_t *reused, uint64_t *no_elf)
{
	size_t ngen = 0, gen_cap = 0;
	uint64_t *gen_end = NULL;
	uint32_t *gen = xcalloc(n + 1, sizeof(*gen));
	struct load_start *order = xmalloc((n + 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = (struct load_start){ r[i].start, i };
	if (n)
		qsort(order, n, sizeof(*order), cmp_load_start);
	for (size_t k = 0; k < n; k++) {
		const struct code_range *l = &r[order[k].load];
		uint32_t *g_out = &gen[order[k].load];
		if (!l->has_code) {
			*g_out = CODE_GEN_NONE;
			continue;
		}
		size_t g = 0;
		while (g < ngen && gen_end[g] - 1 >= l->start)   /* mod 2^64: code may end there */
			g++;
		if (g > 0)
			(*reused)++;
		if (g == CODE_GEN_MAX) {
			*g_out = CODE_GEN_NONE;
			(*no_elf)++;
			continue;
		}
		if (g == ngen) {
			XGROW(gen_end, gen_cap, ngen + 1);
			ngen++;
		}
		gen_end[g] = l->start + l->size;
		*g_out = (uint32_t)g;
	}
	free(gen_end);
	free(order);
	return gen;
}
