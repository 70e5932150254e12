/* symbol_files.h - the perf maps and jitdumps of a run (README "Usage"): the files named
 * after the profile, or with none named, /tmp/perf-PID.map and jit-PID.dump found from
 * the profile's pid: line (only regular files of the user or root). Each file is opened
 * once and told apart by its first bytes (a jitdump magic, else a perf map). */
#ifndef CGJIT_SYMBOL_FILES_H
#define CGJIT_SYMBOL_FILES_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct elf_files;
struct augment_stats;
struct symtab;

struct symbol_files_opts {
	const char *profile;            /* the profile's path, or "-" for stdin: for messages,
	                                   and the files named after it are looked for beside it */
	const char *const *paths;       /* the symbol files named, in order; "-" is stdin */
	size_t npaths;                  /* 0: found from PID */
	uint64_t pid;                   /* the profile's pid: line, 0 if it has none */
	const char *map_dir;            /* where perf-PID.map is; NULL: beside the profile, then
	                                   /tmp (jit-PID.dump: the last place looked in) */
	int64_t debug_bias;             /* jitdump debug-address bias, or JITDUMP_BIAS_AUTO */
	int no_elf;                     /* no ELF files for jitdump code */
	size_t max_line;                /* longest accepted perf-map line, bytes */
};

/* Loads O's symbol files (o->paths; none: those found from o->pid) into ST and freezes it
 * with symtab_finish(). A jitdump's code goes into ELF files through EF unless o->no_elf.
 * Fills REP's sources, skipped, symbols, map_overlaps and map_conflicts; *NREAD is the
 * number of files read (ST's sources, in order). Returns 0, or -1 with D set (an
 * unreadable or malformed file, a second "-", no file found). */
int symbol_files_load(const struct symbol_files_opts *o, struct symtab *st, struct elf_files *ef,
		      struct augment_stats *rep, size_t *nread, struct diag *d);

#endif
