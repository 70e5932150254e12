/* auditlog_symbols.h - a RaptorJIT auditlog's traces as symbols for augment: each trace's
 * machine code range named "TRACE_N KIND::CHUNK:LINE" (docs/formats.md 7.4), with its code
 * bytes for the ELF files (elf_files.h), as a jitdump's loads are. */
#ifndef CGJIT_AUDITLOG_SYMBOLS_H
#define CGJIT_AUDITLOG_SYMBOLS_H

#include <stdint.h>

#include "jit/auditlog.h"

/* The ELF machine of a log's code: RaptorJIT runs on x86-64 only (formats.md 7.2). */
#define AUDITLOG_SYMBOLS_ELF_MACHINE 62   /* EM_X86_64 */

struct diag;
struct input;
struct symtab;

struct auditlog_symbols_stats {
	struct auditlog_stats log;
	uint64_t reused;     /* traces at addresses an earlier trace also had (after a flush) */
	uint64_t no_elf;     /* ... reused past CODE_GEN_MAX times: named, no ELF code */
};

/* Reads the log IN (not closed here) into ST as a new source of the jitdump class (its
 * ranges win over perf maps) named OBJECT; a later trace at the same addresses wins, as in
 * a jitdump. Returns 0, or -1 with D set (auditlog_read()). */
int auditlog_symbols_read(struct symtab *st, struct input *in, const char *object,
			  struct auditlog_symbols_stats *stats, struct diag *d);

#endif
