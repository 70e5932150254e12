/* augment_stats.h - format-neutral statistics of one augment run.
 * Filled by augment's stages and symbol_files.c, rendered by augment_stats_text.c (stderr
 * summary) and augment_stats_yaml.c (--stats FILE.yaml). What it prints only: the run keeps its own state
 * (output path, ELF files, symbol sources) and does not read it from here. */
#ifndef CGJIT_AUGMENT_STATS_H
#define CGJIT_AUGMENT_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "jit/auditlog_symbols.h"
#include "jit/jitdump.h"

enum { AUGMENT_STATS_MAX_EVENTS = 64, AUGMENT_STATS_MAX_SOURCES = 64, AUGMENT_STATS_MAX_SKIPPED = 8 };

struct augment_stats_event {
	char name[64];
	uint64_t total;       /* sum of self costs, all parts */
	uint64_t jit;         /* ... on named JIT functions */
	uint64_t unknown;     /* ... on pseudo-functions in object ??? that no symbol covers:
	                         unnamed JIT code, as cgjit report calls it ("unnamed" in the
	                         summary, "unnamed_jit" in --stats) */
	uint64_t contested;   /* ... on addresses that several symbol names claimed */
};

struct augment_stats_source {
	char path[512];
	char kind[16];        /* "perf-map", "jitdump", "auditlog", or "empty" (a file with no
	                         bytes) */
	uint64_t lines;       /* lines read (maps) */
	uint64_t symbols;     /* entries added */
	uint64_t skipped;     /* entries ignored (size 0) */
	int unterminated;     /* last line had no newline */
	int is_jitdump;
	struct jitdump_stats jd;   /* jitdump counts, when is_jitdump */
	int is_auditlog;
	struct auditlog_symbols_stats al;   /* auditlog counts, when is_auditlog */
};

struct augment_stats {
	char input[512];              /* the paths as given, for printing */
	char output[512];
	unsigned parts;
	int instr_positions;          /* the profile has instruction addresses */
	uint64_t symbols;             /* JIT symbols loaded (all sources) */
	uint64_t map_overlaps;        /* entries partly or wholly replaced by a later entry */
	uint64_t map_conflicts;       /* ... by an entry with another name */
	uint64_t map_superseded;      /* perf-map entries replaced by a jitdump's (not overlaps) */
	uint64_t map_duplicates;      /* entries repeated exactly (not overlaps) */
	uint64_t pseudo_functions;    /* distinct ??? pseudo-function names seen (per part, summed) */
	uint64_t resolved;            /* ... of those named from a symbol */
	uint64_t renamed_callers;     /* other names whose 'caller parts were renamed */
	uint64_t paths_mapped;        /* symbol entries whose name's path --root/--path-map mapped */
	uint64_t paths_mapped_files;  /* distinct line-table file names it mapped */
	uint64_t pseudo_calls_removed;/* calls between fragments of one function, folded */
	uint64_t lines_moved;         /* cost lines moved to the symbol owning their address */
	uint64_t synthetic_calls;     /* calls added to account for moved lines */
	uint64_t lines_to_elf_functions; /* ... of those, to a function of an ELF object (rule 9) */
	uint64_t returns_as_calls;    /* returns that callgrind recorded as calls, dropped */
	uint64_t jumps_dropped;       /* jump records across objects after renaming */
	uint64_t bytes_out;           /* bytes of profile text written (before compression) */
	unsigned elf_files;           /* ELF files written for jitdump code (set at the commit) */
	char elf_first[512];          /* the first one's path */
	unsigned nevents;
	struct augment_stats_event events[AUGMENT_STATS_MAX_EVENTS];
	unsigned nsources;
	struct augment_stats_source sources[AUGMENT_STATS_MAX_SOURCES];
	unsigned nskipped;            /* files that discovery found but did not read */
	char skipped[AUGMENT_STATS_MAX_SKIPPED][600];   /* ... each "PATH: why" */
};

/* The entry for event NAME, added if new (NULL when AUGMENT_STATS_MAX_EVENTS are in use). */
struct augment_stats_event *augment_stats_event(struct augment_stats *r, const char *name);

#endif
