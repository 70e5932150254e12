/* elf_files.h - the ELF files that hold a run's jitdump code (elf_writer.h): one per
 * address-reuse generation of each dump, named uniquely within the run, opened while the
 * symbols load and handed to augment.c, which commits them together with the profile that
 * names them (io.h output_commit_all). Paths are absolute: kcachegrind looks for the ob=
 * path as written. */
#ifndef CGJIT_ELF_FILES_H
#define CGJIT_ELF_FILES_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct output;
struct symtab;

struct elf_files;

/* An empty set. The files go into ELF_DIR (--elf), or with NULL beside OUTPUT, the
 * profile's output path (the current directory for an output written in place: stdout, a
 * device, a FIFO). Both strings are borrowed and must outlive the set. Never NULL. */
struct elf_files *elf_files_new(const char *elf_dir, const char *output);

/* Aborts the outputs not taken by elf_files_take(). NULL is a no-op. */
void elf_files_free(struct elf_files *ef);

/* Writes the symbols FIRST.. of ST (those DUMP, a jitdump path, just added) as one ELF file
 * for MACHINE (the dump's elf_mach) per generation, and sets each symbol's object (ob=) to
 * its file: to the dump's path for code without a generation (struct symbol generation).
 * A dump whose file name another dump of the run already has gets "-K" after its name.
 * Returns 0, or -1 with D set. */
int elf_files_write(struct elf_files *ef, struct symtab *st, const char *dump, size_t first,
		    uint32_t machine, struct diag *d);

/* The number of ELF files written so far. */
size_t elf_files_count(const struct elf_files *ef);

/* The path of file I (< elf_files_count()): symtab memory, valid until symtab_free(). */
const char *elf_files_path(const struct elf_files *ef, size_t i);

/* Moves the elf_files_count() outputs into V (room for that many); from then on the caller
 * commits or aborts them. The paths stay. */
void elf_files_take(struct elf_files *ef, struct output **v);

#endif
