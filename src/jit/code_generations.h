/* code_generations.h - which ELF file each piece of JIT code goes into (elf_files.h): code
 * loaded at addresses other code also had (a JIT reusing memory) cannot share an ELF file
 * with it, so loads are partitioned into generations of disjoint ranges. Used by jitdump.c
 * and auditlog_symbols.c. */
#ifndef CGJIT_CODE_GENERATIONS_H
#define CGJIT_CODE_GENERATIONS_H

#include <stddef.h>
#include <stdint.h>

/* Generations that get an ELF file each; code reused more often gets none (CODE_GEN_NONE),
 * so that heavy reuse (QEMU flushing its translation cache) cannot make thousands of ELF
 * files or quadratic work. */
#define CODE_GEN_MAX 16
#define CODE_GEN_NONE UINT32_MAX

/* A load as the partition sees it, in load order. */
struct code_range {
	uint64_t start, size;    /* [start, start + size), which may end at 2^64 */
	int has_code;            /* 0: no bytes for an ELF file (CODE_GEN_NONE) */
};

/* Each of the N loads' generation (malloc'd, N + 1 entries, the caller frees it): the code
 * loaded last at an address gets generation 0. *REUSED counts the loads in a generation
 * above 0, *NO_ELF those past CODE_GEN_MAX. */
uint32_t *code_generations(const struct code_range *r, size_t n, uint64_t *reused, uint64_t *no_elf);

#endif
