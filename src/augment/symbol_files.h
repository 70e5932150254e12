/* symbol_files.h - the perf maps and jitdumps of a run (README "Usage"): the files named
 * after the profile, or with none named, /tmp/perf-PID.map and jit-PID.dump found from
 * the profile's pid: line (only regular files of the user or root). Each file is opened
 * once and told apart by its first bytes (a jitdump magic, else a perf map). */
#ifndef CGJIT_SYMBOL_FILES_H
#define CGJIT_SYMBOL_FILES_H

#include <stddef.h>
#include <stdint.h>

struct augment_opts;
struct diag;
struct elf_files;
struct augment_stats;
struct symtab;

/* Loads O's symbol files (o->symfiles; none: those found from PID, the profile's pid:
 * line, 0 if it has none) into ST and freezes it with symtab_finish(). A jitdump's code
 * goes into ELF files through EF unless o->no_elf. Fills REP's sources, skipped, symbols,
 * map_overlaps and map_conflicts; *NREAD is the number of files read (ST's sources, in
 * order). Returns 0, or -1 with D set (an unreadable or malformed file, a second "-", no
 * file found). */
int symbol_files_load(const struct augment_opts *o, uint64_t pid, struct symtab *st,
		      struct elf_files *ef, struct augment_stats *rep, size_t *nread, struct diag *d);

#endif
