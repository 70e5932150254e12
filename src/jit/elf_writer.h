/* elf_writer.h - an ELF object that holds JIT code at its runtime addresses, so that
 * kcachegrind's machine-code view (objdump -d --start-address ... on the ob= file) and plain
 * objdump show it: a PROGBITS SHF_ALLOC|SHF_EXECINSTR section per function with sh_addr =
 * the runtime address, an STT_FUNC symbol per function (objdump re-synchronises its linear
 * sweep at symbols: docs/formats.md 3.5), and a DWARF .debug_line table from the
 * jitdump line rows. Written with <elf.h> from libc: a dozen structs do not need libelf. */
#ifndef CGJIT_ELF_WRITER_H
#define CGJIT_ELF_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct output;
struct symline;

struct elf_func {
	uint64_t addr, size;
	const char *name;
	const unsigned char *code;      /* SIZE bytes */
	const struct symline *lines;    /* sorted by address, may be NULL */
	uint32_t nlines;
};

/* Writes FUNCS (sorted by address, non-overlapping) as a 64-bit little-endian ELF for
 * MACHINE (an EM_ value; 0 means x86-64) to O; the caller commits or aborts O, so that ELF
 * files appear only with the profile that names them. Returns 0, or -1 with D set. */
int elf_write(struct output *o, uint16_t machine, const struct elf_func *funcs, size_t n,
	      struct diag *d);

#endif
