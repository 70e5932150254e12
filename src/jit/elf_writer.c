/* elf_writer.c - builds the ELF image in memory (code is small next to a profile) and
 * writes it through struct output. Section order: null, one .text per function, .symtab,
 * .strtab, .debug_abbrev, .debug_info, .debug_line, .shstrtab; then the section headers. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/strtab.h"
#include "core/xalloc.h"
#include "jit/elf_writer.h"
#include "jit/symtab.h"

struct bytes {
	unsigned char *p;
	size_t n, cap;
};

static void put(struct bytes *b, const void *s, size_t n)
{
	XGROW(b->p, b->cap, b->n + n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

/* In the host's byte order, which must be the file's (ELFDATA2LSB): x86-64, aarch64. */
static void put8(struct bytes *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put16(struct bytes *b, uint16_t v)
{
	put(b, &v, 2);
}

static void put32(struct bytes *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct bytes *b, uint64_t v)
{
	put(b, &v, 8);
}

static void uleb(struct bytes *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		put8(b, (uint8_t)(c | (v ? 0x80 : 0)));
	} while (v);
}

static void sleb(struct bytes *b, int64_t v)
{
	for (;;) {
		uint8_t c = (uint8_t)(v & 0x7f);
		v >>= 7;   /* arithmetic shift: gcc and clang on every target we build for */
		int done = (v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40));
		put8(b, (uint8_t)(c | (done ? 0 : 0x80)));
		if (done)
			return;
	}
}

static void align(struct bytes *b, size_t a)
{
	while (b->n % a)
		put8(b, 0);
}

static void patch32(struct bytes *b, size_t at, uint32_t v)
{
	memcpy(b->p + at, &v, 4);
}

/* DWARF 3 line program: one sequence per function (DW_LNE_set_address, rows, end). */
static void debug_line(struct bytes *b, const struct elf_func *f, size_t n)
{
	struct strtab files;
	strtab_init(&files);
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < f[i].nlines; k++)
			strtab_intern(&files, f[i].lines[k].file, f[i].lines[k].file_len, NULL);
	size_t start = b->n;
	put32(b, 0);            /* unit_length, patched */
	put16(b, 3);
	size_t hl = b->n;
	put32(b, 0);            /* header_length, patched */
	put8(b, 1);             /* minimum_instruction_length */
	put8(b, 1);             /* default_is_stmt */
	put8(b, (uint8_t)-5);   /* line_base */
	put8(b, 14);            /* line_range */
	put8(b, 13);            /* opcode_base */
	static const uint8_t lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	put(b, lengths, sizeof(lengths));
	put8(b, 0);             /* no include directories */
	for (size_t i = 0; i < files.count; i++) {
		const struct strtab_entry *e = strtab_get(&files, (uint32_t)i);
		put(b, e->str, e->len);
		put8(b, 0);
		uleb(b, 0);
		uleb(b, 0);
		uleb(b, 0);
	}
	put8(b, 0);
	patch32(b, hl, (uint32_t)(b->n - hl - 4));
	for (size_t i = 0; i < n; i++) {
		if (!f[i].nlines)
			continue;
		put8(b, 0);
		uleb(b, 9);
		put8(b, 2 /* DW_LNE_set_address */);
		put64(b, f[i].addr);
		uint64_t addr = f[i].addr, line = 1, file = 1;
		for (uint32_t k = 0; k < f[i].nlines; k++) {
			const struct symline *r = &f[i].lines[k];
			uint64_t fi = strtab_find(&files, r->file, r->file_len) + 1;
			if (fi != file) {
				put8(b, 4);   /* DW_LNS_set_file */
				uleb(b, fi);
				file = fi;
			}
			if (r->line != line) {
				put8(b, 3);   /* DW_LNS_advance_line */
				sleb(b, (int64_t)r->line - (int64_t)line);
				line = r->line;
			}
			uint64_t at = r->addr < addr ? addr : r->addr;
			if (at != addr) {
				put8(b, 2);   /* DW_LNS_advance_pc */
				uleb(b, at - addr);
				addr = at;
			}
			put8(b, 1);   /* DW_LNS_copy */
		}
		uint64_t end = f[i].addr + f[i].size;
		if (end > addr) {
			put8(b, 2);
			uleb(b, end - addr);
		}
		put8(b, 0);
		uleb(b, 1);
		put8(b, 1);   /* DW_LNE_end_sequence */
	}
	patch32(b, start, (uint32_t)(b->n - start - 4));
	strtab_free(&files);
}

struct shdr_plan {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t align, entsize;
};

static void shdr(struct bytes *b, const struct shdr_plan *s)
{
	Elf64_Shdr h = { s->name, s->type, s->flags, s->addr, s->offset, s->size, s->link,
			 s->info, s->align, s->entsize };
	put(b, &h, sizeof(h));
}

/* The file being built: the image, with the code already in it, and the sections that go
 * after the code, each built apart and then appended. */
struct elf_image {
	struct bytes img, strtab, syms, line, info, abbrev;
	size_t ngroups;        /* code sections */
	size_t *group;         /* function -> code section */
	uint64_t *sec_addr, *sec_off, *sec_size;
};

/* Functions closer than GAP bytes share a section (the gap filled with zeros), so a dump
 * of 100,000 functions does not need 100,000 sections. F is sorted by address. */
static void place_code(struct elf_image *e, const struct elf_func *f, size_t n)
{
	enum { GAP = 256 };
	e->group = xmalloc((n + 1) * sizeof(*e->group));
	e->sec_addr = xmalloc((n + 1) * sizeof(*e->sec_addr));
	e->sec_off = xmalloc((n + 1) * sizeof(*e->sec_off));
	e->sec_size = xmalloc((n + 1) * sizeof(*e->sec_size));
	size_t g = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t end = g ? e->sec_addr[g - 1] + e->sec_size[g - 1] : 0;
		if (g && f[i].addr >= end && f[i].addr - end <= GAP) {
			for (uint64_t k = end; k < f[i].addr; k++)
				put8(&e->img, 0);
		} else {
			align(&e->img, 16);
			e->sec_addr[g] = f[i].addr;
			e->sec_off[g] = e->img.n;
			e->sec_size[g] = 0;
			g++;
		}
		e->group[i] = g - 1;
		put(&e->img, f[i].code, (size_t)f[i].size);
		e->sec_size[g - 1] = f[i].addr + f[i].size - e->sec_addr[g - 1];
	}
	e->ngroups = g;
}

/* .symtab and .strtab: one global STT_FUNC per function, in its code section. */
static void put_symbols(struct elf_image *e, const struct elf_func *f, size_t n)
{
	put8(&e->strtab, 0);
	Elf64_Sym null_sym;
	memset(&null_sym, 0, sizeof(null_sym));
	put(&e->syms, &null_sym, sizeof(null_sym));
	for (size_t i = 0; i < n; i++) {
		Elf64_Sym s;
		memset(&s, 0, sizeof(s));
		s.st_name = (uint32_t)e->strtab.n;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = (uint16_t)(1 + e->group[i] < SHN_LORESERVE ? 1 + e->group[i] : SHN_UNDEF);
		s.st_value = f[i].addr;
		s.st_size = f[i].size;
		put(&e->strtab, f[i].name, strlen(f[i].name) + 1);
		put(&e->syms, &s, sizeof(s));
	}
}

/* .debug_abbrev and .debug_info: a compile unit that points at the line table, so DWARF
 * readers find it. */
static void put_compile_unit(struct elf_image *e)
{
	struct bytes *a = &e->abbrev, *info = &e->info;
	uleb(a, 1);
	uleb(a, 0x11 /* DW_TAG_compile_unit */);
	put8(a, 0);
	uleb(a, 0x10);   /* DW_AT_stmt_list */
	uleb(a, 0x06);   /* DW_FORM_data4 */
	uleb(a, 0x03);   /* DW_AT_name */
	uleb(a, 0x08);   /* DW_FORM_string */
	put8(a, 0);
	put8(a, 0);
	put8(a, 0);
	put32(info, 0);
	put16(info, 3);
	put32(info, 0);
	put8(info, 8);
	uleb(info, 1);
	put32(info, 0);
	put(info, "jit", 4);
	patch32(info, 0, (uint32_t)(info->n - 4));
}

static const char shstr[] = "\0.text\0.symtab\0.strtab\0.debug_abbrev\0.debug_info\0"
			    ".debug_line\0.shstrtab";
enum { N_TEXT = 1, N_SYMTAB = 7, N_STRTAB = 15, N_ABBREV = 23, N_INFO = 37, N_LINE = 49,
       N_SHSTRTAB = 61 };

/* Appends the sections after the code, .shstrtab and the section headers. Returns the
 * section headers' offset. */
static uint64_t put_sections(struct elf_image *e)
{
	struct bytes *img = &e->img;
	struct { struct bytes *b; size_t align; uint64_t off; } parts[] = {
		{ &e->syms, 8, 0 }, { &e->strtab, 1, 0 }, { &e->abbrev, 1, 0 }, { &e->info, 1, 0 },
		{ &e->line, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		align(img, parts[i].align);
		parts[i].off = img->n;
		put(img, parts[i].b->p, parts[i].b->n);
	}
	uint64_t shstr_off = img->n;
	put(img, shstr, sizeof(shstr));
	align(img, 8);
	uint64_t shoff = img->n;
	struct shdr_plan zero;
	memset(&zero, 0, sizeof(zero));
	shdr(img, &zero);
	for (size_t i = 0; i < e->ngroups; i++)
		shdr(img, &(struct shdr_plan){ N_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					      e->sec_addr[i], e->sec_off[i], e->sec_size[i], 0, 0, 1, 0 });
	uint32_t strtab_idx = (uint32_t)(1 + e->ngroups) + 1;
	shdr(img, &(struct shdr_plan){ N_SYMTAB, SHT_SYMTAB, 0, 0, parts[0].off, e->syms.n, strtab_idx,
				      1, 8, sizeof(Elf64_Sym) });
	shdr(img, &(struct shdr_plan){ N_STRTAB, SHT_STRTAB, 0, 0, parts[1].off, e->strtab.n, 0, 0, 1, 0 });
	shdr(img, &(struct shdr_plan){ N_ABBREV, SHT_PROGBITS, 0, 0, parts[2].off, e->abbrev.n, 0, 0, 1, 0 });
	shdr(img, &(struct shdr_plan){ N_INFO, SHT_PROGBITS, 0, 0, parts[3].off, e->info.n, 0, 0, 1, 0 });
	shdr(img, &(struct shdr_plan){ N_LINE, SHT_PROGBITS, 0, 0, parts[4].off, e->line.n, 0, 0, 1, 0 });
	shdr(img, &(struct shdr_plan){ N_SHSTRTAB, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstr), 0, 0, 1, 0 });
	return shoff;
}

/* The ELF header, at the start of the image, for section headers at SHOFF. */
static void fill_header(struct elf_image *e, uint16_t machine, uint64_t shoff)
{
	size_t nsec = 1 + e->ngroups + 6;
	Elf64_Ehdr *h = (Elf64_Ehdr *)e->img.p;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
	h->e_machine = machine ? machine : EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(Elf64_Ehdr);
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shoff = shoff;
	if (nsec < SHN_LORESERVE) {
		h->e_shnum = (uint16_t)nsec;
		h->e_shstrndx = (uint16_t)(nsec - 1);
	} else {   /* more than 65279 sections: the counts go into section header 0 */
		Elf64_Shdr *s0 = (Elf64_Shdr *)(e->img.p + shoff);
		s0->sh_size = nsec;
		s0->sh_link = (uint32_t)(nsec - 1);
		h->e_shnum = 0;
		h->e_shstrndx = SHN_XINDEX;
	}
}

static void image_free(struct elf_image *e)
{
	free(e->group);
	free(e->sec_addr);
	free(e->sec_off);
	free(e->sec_size);
	free(e->img.p);
	free(e->strtab.p);
	free(e->syms.p);
	free(e->line.p);
	free(e->info.p);
	free(e->abbrev.p);
}

int elf_write(struct output *o, uint16_t machine, const struct elf_func *f, size_t n,
	      struct diag *d)
{
	struct elf_image e;
	memset(&e, 0, sizeof(e));
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	put(&e.img, &eh, sizeof(eh));   /* filled at the end */
	place_code(&e, f, n);
	put_symbols(&e, f, n);
	put_compile_unit(&e);
	debug_line(&e.line, f, n);
	uint64_t shoff = put_sections(&e);
	fill_header(&e, machine, shoff);
	int rc = output_write(o, e.img.p, e.img.n, d);
	image_free(&e);
	return rc;
}
