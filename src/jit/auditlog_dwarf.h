/* auditlog_dwarf.h - the struct layouts a RaptorJIT auditlog's snapshots are read with,
 * from the log's own DWARF blob, lj_dwarf.dwo (docs/formats.md 7.5): offsets change with
 * RaptorJIT's version and build, so none is written down here. The only file that includes
 * libdw. */
#ifndef CGJIT_AUDITLOG_DWARF_H
#define CGJIT_AUDITLOG_DWARF_H

#include <stddef.h>
#include <stdint.h>

/* A member: its offset in its struct and the byte size of its type (typedefs peeled). */
struct auditlog_field {
	uint32_t off, size;
};

struct auditlog_layout {
	uint32_t trace_size, proto_size, str_size;   /* sizeof GCtrace, GCproto, GCstr */
	struct auditlog_field traceno, parent, exitno, link, linktype, startpt, startpc, mcode,
		szmcode, mcloop;                     /* GCtrace's */
	struct auditlog_field chunkname, lineinfo;   /* GCproto's */
	struct auditlog_field str_len;               /* GCstr.len */
	struct auditlog_field cur;                   /* jit_State.cur, a GCtrace */
};

/* Reads the layouts from the N bytes of BLOB (an ELF object with DWARF in .debug_info or
 * .debug_info.dwo). Returns 0, or -1 with a reason in WHY (WHY_LEN bytes): not ELF, no
 * DWARF, a struct or member missing (named), a number member wider than 8 bytes. */
int auditlog_dwarf_layout(const unsigned char *blob, size_t n, struct auditlog_layout *out,
			  char *why, size_t why_len);

#endif
