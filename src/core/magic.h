/* magic.h - the first bytes that tell apart the files cgjit reads, for every reader that
 * must recognise another's file (a jitdump given where a profile belongs, a dump among
 * symbol files) without depending on that reader: a jitdump's magic in either byte order
 * ("JiTD" big-endian, "DTiJ" little-endian; perf's tools/perf/Documentation/
 * jitdump-specification.txt). input.c tells zstd frames apart itself
 * (io_zstd.h). */
#ifndef CGJIT_MAGIC_H
#define CGJIT_MAGIC_H

#include <string.h>

/* Whether the 4 bytes at P are a jitdump's magic. */
static inline int magic_is_jitdump(const unsigned char *p)
{
	return memcmp(p, "JiTD", 4) == 0 || memcmp(p, "DTiJ", 4) == 0;
}

#endif
