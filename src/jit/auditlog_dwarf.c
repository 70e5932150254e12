/* auditlog_dwarf.c - struct layouts from a RaptorJIT auditlog's lj_dwarf.dwo through libdw
 * (elfutils), read from memory: every unit's top-level structs that the table below names,
 * the first definition of each (a declaration has no size), and of their members the
 * offset and the size of the member's type. Observed on the sample's blob: one unit of type
 * DW_UT_split_compile, names as GNU split-DWARF string indexes, which libdw resolves
 * (docs/formats.md 7.5). Owns nothing past the call. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>

#include "core/xalloc.h"
#include "jit/auditlog_dwarf.h"

#define FIELD(m) offsetof(struct auditlog_layout, m)

static const struct want {
	const char *type, *member;
	size_t at;          /* of its struct auditlog_field in the layout */
	int number;         /* read as a number: at most 8 bytes */
} wants[] = {
	{ "GCtrace", "traceno", FIELD(traceno), 1 }, { "GCtrace", "parent", FIELD(parent), 1 },
	{ "GCtrace", "exitno", FIELD(exitno), 1 }, { "GCtrace", "link", FIELD(link), 1 },
	{ "GCtrace", "linktype", FIELD(linktype), 1 }, { "GCtrace", "startpt", FIELD(startpt), 1 },
	{ "GCtrace", "startpc", FIELD(startpc), 1 }, { "GCtrace", "mcode", FIELD(mcode), 1 },
	{ "GCtrace", "szmcode", FIELD(szmcode), 1 }, { "GCtrace", "mcloop", FIELD(mcloop), 1 },
	{ "GCproto", "chunkname", FIELD(chunkname), 1 }, { "GCproto", "lineinfo", FIELD(lineinfo), 1 },
	{ "GCstr", "len", FIELD(str_len), 1 }, { "jit_State", "cur", FIELD(cur), 0 },
};
enum { NWANT = sizeof(wants) / sizeof(wants[0]) };

static const struct sizes {
	const char *type;
	size_t at;
} sizes[] = {
	{ "GCtrace", offsetof(struct auditlog_layout, trace_size) },
	{ "GCproto", offsetof(struct auditlog_layout, proto_size) },
	{ "GCstr", offsetof(struct auditlog_layout, str_size) },
	{ "jit_State", SIZE_MAX },
};
enum { NTYPES = sizeof(sizes) / sizeof(sizes[0]) };

struct found {
	struct auditlog_layout *out;
	unsigned char type_seen[NTYPES];
	unsigned char member_seen[NWANT];
};

/* The byte size of MEMBER's type, typedefs and qualifiers peeled; 0 if unknown. */
static uint32_t member_size(Dwarf_Die *member)
{
	Dwarf_Attribute a;
	Dwarf_Die type, peeled;
	if (!dwarf_attr(member, DW_AT_type, &a) || !dwarf_formref_die(&a, &type) ||
	    dwarf_peel_type(&type, &peeled) != 0)
		return 0;
	int size = dwarf_bytesize(&peeled);
	return size > 0 ? (uint32_t)size : 0;
}

static void read_members(struct found *f, Dwarf_Die *st, const char *type)
{
	Dwarf_Die m;
	if (dwarf_child(st, &m) != 0)
		return;
	do {
		const char *name = dwarf_tag(&m) == DW_TAG_member ? dwarf_diename(&m) : NULL;
		Dwarf_Attribute a;
		Dwarf_Word off;
		if (!name || !dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &off) != 0)
			continue;
		for (size_t i = 0; i < NWANT; i++) {
			if (strcmp(wants[i].type, type) || strcmp(wants[i].member, name))
				continue;
			struct auditlog_field *fl = (void *)((char *)f->out + wants[i].at);
			fl->off = (uint32_t)off;
			fl->size = member_size(&m);
			f->member_seen[i] = off <= UINT32_MAX;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
}

static void read_unit(struct found *f, Dwarf_Die *cudie)
{
	Dwarf_Die c;
	if (dwarf_child(cudie, &c) != 0)
		return;
	do {
		if (dwarf_tag(&c) != DW_TAG_structure_type || dwarf_bytesize(&c) <= 0)
			continue;
		const char *name = dwarf_diename(&c);   /* NULL for an anonymous struct */
		for (size_t t = 0; name && t < NTYPES; t++) {
			if (f->type_seen[t] || strcmp(sizes[t].type, name))
				continue;
			f->type_seen[t] = 1;
			if (sizes[t].at != SIZE_MAX)
				*(uint32_t *)(void *)((char *)f->out + sizes[t].at) = (uint32_t)dwarf_bytesize(&c);
			read_members(f, &c, name);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* The size of TYPE read into OUT, or UINT32_MAX for one not kept (jit_State: its
 * snapshots are checked against jit_State.cur where they are read). */
static uint32_t struct_size(const struct auditlog_layout *out, const char *type)
{
	for (size_t t = 0; t < NTYPES; t++)
		if (!strcmp(sizes[t].type, type))
			return sizes[t].at == SIZE_MAX ? UINT32_MAX
				: *(const uint32_t *)(const void *)((const char *)out + sizes[t].at);
	return UINT32_MAX;
}

/* Every member found, numbers no wider than 8 bytes, inside its struct, and jit_State.cur a whole GCtrace.
 * Returns 0, or -1 with WHY set. */
static int check_found(const struct found *f, char *why, size_t why_len)
{
	for (size_t i = 0; i < NWANT; i++) {
		const struct auditlog_field *fl = (const void *)((const char *)f->out + wants[i].at);
		if (!f->member_seen[i]) {
			snprintf(why, why_len, "its DWARF has no %s.%s", wants[i].type, wants[i].member);
			return -1;
		}
		if (wants[i].number && (fl->size == 0 || fl->size > 8)) {
			snprintf(why, why_len, "%s.%s is %u bytes wide in its DWARF (a number of 1 to 8 bytes "
				 "expected)", wants[i].type, wants[i].member, fl->size);
			return -1;
		}
		/* the readers trust a member to lie inside its struct's snapshot */
		uint32_t size = struct_size(f->out, wants[i].type);
		if (size != UINT32_MAX && ((uint64_t)fl->off + fl->size > size)) {
			snprintf(why, why_len, "%s.%s (%u bytes at %u) passes the end of %s (%u bytes) in its "
				 "DWARF", wants[i].type, wants[i].member, fl->size, fl->off, wants[i].type, size);
			return -1;
		}
	}
	if (f->out->cur.size != f->out->trace_size) {
		snprintf(why, why_len, "jit_State.cur is %u bytes in its DWARF, GCtrace %u", f->out->cur.size,
			 f->out->trace_size);
		return -1;
	}
	return 0;
}

int auditlog_dwarf_layout(const unsigned char *blob, size_t n, struct auditlog_layout *out,
			  char *why, size_t why_len)
{
	memset(out, 0, sizeof(*out));
	struct found f = { .out = out };
	elf_version(EV_CURRENT);
	/* libelf may write to the image it reads: a copy, freed at the end */
	char *image = xmalloc(n ? n : 1);
	memcpy(image, blob, n);
	Elf *elf = elf_memory(image, n);
	Dwarf *dw = elf && elf_kind(elf) == ELF_K_ELF ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	int rc = -1;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, why_len, "it is not an ELF object");
	} else if (!dw) {
		snprintf(why, why_len, "it holds no DWARF that libdw reads: %s", dwarf_errmsg(-1));
	} else {
		Dwarf_CU *cu = NULL;
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie;
		while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0)
			read_unit(&f, &cudie);
		rc = check_found(&f, why, why_len);
	}
	dwarf_end(dw);
	elf_end(elf);
	free(image);
	return rc;
}
