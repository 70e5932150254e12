/* augment.h - the augment pipeline: symbols in, profile streamed through, profile out.
 * No argv, no printing: options come in a struct, the first error in struct diag. */
#ifndef CGJIT_AUGMENT_H
#define CGJIT_AUGMENT_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct pathmap;
struct augment_stats;

struct augment_opts {
	const char *profile;        /* path, or "-" for stdin */
	const char *const *symfiles;/* perf maps and jitdumps (told apart by content); none:
	                               found from the pid: line (README "Usage") */
	size_t nsymfiles;
	const char *output;         /* path or "-"; NULL: augment_default_output() */
	const char *map_dir;        /* where to look for perf-PID.map; NULL: "/tmp" */
	int keep_addresses;         /* keep same-named code blobs apart (address in the name) */
	int no_verify;              /* skip the output totals check */
	int64_t debug_bias;         /* jitdump debug-address bias, or JITDUMP_BIAS_AUTO (-1) */
	const char *elf_dir;        /* where the ELF files of jitdump code go; NULL: beside the
	                               output (the current directory for stdout) */
	int no_elf;                 /* no ELF files; JIT functions' ob= is the dump's path */
	size_t max_line;            /* longest accepted line, bytes */
	const char *stats_path;     /* --stats FILE.yaml, committed with the profile (after the
	                               ELF files, before the profile); NULL: none */
	const struct pathmap *paths;/* --root, --path-map: the paths in JIT names and line-table
	                               files mapped as the symbols are read (pathmap.h); NULL:
	                               kept as the runtime wrote them */
	/* Called now and then while the profile is read (a regular file only): DONE of SIZE
	 * bytes of the file (compressed ones for zstd); DONE == SIZE once at the end. NULL:
	 * none. The library prints nothing itself. */
	void (*progress)(void *ctx, uint64_t done, uint64_t size);
	void *progress_ctx;
	/* The reads ahead and the output's writes each on a thread of its own, sleeping
	 * between buffers, even where one shared thread that polls would do them (io_pump.h;
	 * augment.c, run_share_io()). For tests: $CGJIT_TEST_SEPARATE_IO. */
	int separate_io;
};

/* Fills O with the defaults of `cgjit augment` (64 MiB lines, debug bias detected,
 * everything else off or derived from the profile); the caller then sets profile. */
void augment_opts_init(struct augment_opts *o);

/* Runs the pipeline. On success the outputs are in place and REP filled; returns 0.
 * On error no output was created or replaced, D says why, returns -1; -2 (a usage error)
 * when an output is the same file as an input or as the other output. */
int augment_run(const struct augment_opts *o, struct augment_stats *rep, struct diag *d);

/* The default output path for PROFILE: "callgrind.out.PID..." becomes
 * "callgrind.out.jit.PID..." in the same directory; other names get "jit." in front of the
 * file name. Never a name that starts with the input's, because kcachegrind loads every
 * file starting with the name it opens (docs/formats.md 1.8). Returns a malloc'd
 * string, or NULL for "-" (stdin has no name to derive from). */
char *augment_default_output(const char *profile);

#endif
