/* elf_files.c - ELF file names and generations for jitdump code (augment.c's symbol
 * loading, via symbol_files.c): one elf_writer.c file per address-reuse generation of a
 * dump, opened at once and held here until augment.c takes them to commit with the
 * profile. Owns the open outputs until then; the paths live in the symtab. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/elf_files.h"
#include "jit/elf_writer.h"
#include "jit/jitdump.h"
#include "jit/symtab.h"

struct elf_files {
	const char *elf_dir;         /* --elf, or NULL */
	const char *output;          /* the profile's output path */
	struct output **out;         /* files written, until elf_files_take() */
	const char **name;           /* ... and their paths (symtab memory) */
	size_t n, out_cap, name_cap;
	int taken;
};

struct elf_files *elf_files_new(const char *elf_dir, const char *output)
{
	struct elf_files *ef = xcalloc(1, sizeof(*ef));
	ef->elf_dir = elf_dir;
	ef->output = output;
	return ef;
}

void elf_files_free(struct elf_files *ef)
{
	if (!ef)
		return;
	for (size_t i = 0; !ef->taken && i < ef->n; i++)
		output_abort(ef->out[i]);
	free(ef->out);
	free(ef->name);
	free(ef);
}

size_t elf_files_count(const struct elf_files *ef)
{
	return ef->n;
}

const char *elf_files_path(const struct elf_files *ef, size_t i)
{
	return ef->name[i];
}

void elf_files_take(struct elf_files *ef, struct output **v)
{
	if (ef->n)
		memcpy(v, ef->out, ef->n * sizeof(*v));
	ef->taken = 1;
}

/* The ELF file for generation GEN of DUMP's code: DIR/<dump name without .zst or .gz>.elf, with
 * ".gN" before ".elf" for the N-th reuse of addresses; DIR made absolute, because
 * kcachegrind looks for the ob= path as written. */
static int elf_path(const struct elf_files *ef, const char *dump, uint32_t gen, char *out, size_t n,
		    struct diag *d)
{
	char dir[4096];
	const char *want = ef->elf_dir;
	char outdir[4096];
	if (!want) {
		/* Beside the output; for one written in place (stdout, /dev/null, /dev/stdout, a
		 * FIFO), whose directory is no place for files, the current directory. */
		const char *o = ef->output;
		const char *slash = strrchr(o, '/');
		if (output_path_in_place(o) || !slash)
			snprintf(outdir, sizeof(outdir), ".");
		else
			snprintf(outdir, sizeof(outdir), "%.*s", slash == o ? 1 : (int)(slash - o), o);
		want = outdir;
	}
	/* realpath() follows links itself: first the shared-directory rule (io.h) */
	if (output_check_links(want, d) < 0)
		return -1;
	if (!realpath(want, dir))
		return diag_at(d, want, 0, "cannot use as the directory for ELF files: %s", strerror(errno));
	const char *base = strrchr(dump, '/');
	base = base ? base + 1 : dump;
	size_t len = strlen(base);
	len = input_name_stem(base, len);
	int k = gen ? snprintf(out, n, "%s/%.*s.g%u.elf", dir, (int)len, base, gen)
		    : snprintf(out, n, "%s/%.*s.elf", dir, (int)len, base);
	if (k < 0 || (size_t)k >= n)
		return diag_at(d, dump, 0, "the ELF file name for it is longer than %zu bytes", n);
	return 0;
}

static int cmp_func_addr(const void *a, const void *b)
{
	const struct elf_func *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct name_object {
	uint32_t name_id;
	uint32_t generation;
	size_t sym;
};

static int cmp_name_object(const void *a, const void *b)
{
	const struct name_object *x = a, *y = b;
	if (x->name_id != y->name_id)
		return x->name_id < y->name_id ? -1 : 1;
	if (x->generation != y->generation)
		return x->generation < y->generation ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* Identity is (object, file, name) (README rule 3): a name whose loads ended in different
 * generations (one was loaded where other code had been) would be two functions. All of
 * the dump's symbols of a name take the object of its lowest generation: its code lies in
 * that file; the other loads' code stays in their own files, which objdump reads, but
 * kcachegrind's machine code view of the function shows the first file only. */
static void one_object_per_name(struct symtab *st, size_t first, size_t end)
{
	struct name_object *v = xmalloc((end - first + 1) * sizeof(*v));
	for (size_t i = first; i < end; i++) {
		const struct symbol *s = symtab_symbol(st, (uint32_t)i);
		v[i - first] = (struct name_object){ s->name_id, s->generation, i };
	}
	qsort(v, end - first, sizeof(*v), cmp_name_object);
	for (size_t i = 0, k = 0; i < end - first; i = k) {
		const char *object = symtab_symbol(st, (uint32_t)v[i].sym)->object;
		for (k = i; k < end - first && v[k].name_id == v[i].name_id; k++)
			symtab_symbol_mut(st, (uint32_t)v[k].sym)->object = object;
	}
	free(v);
}

/* One ELF per address-reuse generation of the symbols FIRST.. (one dump's), opened now and
 * committed with the profile; every symbol with code gets its generation's file as ob=.
 * The names are unique in the run: two dumps with one file name (in other directories, or
 * x.dump and x.dump.zst) would otherwise share a file, the later's code replacing the
 * earlier's while the earlier's ob= still named it. The K-th such dump gets "-K" after
 * its name (x.dump-2.elf, x.dump-2.g1.elf). */
int elf_files_write(struct elf_files *ef, struct symtab *st, const char *dump, size_t first,
		    uint32_t machine, struct diag *d)
{
	size_t end = symtab_count(st);
	uint32_t ngen = 0;
	for (size_t i = first; i < end; i++) {
		struct symbol *s = symtab_symbol_mut(st, (uint32_t)i);
		if (s->generation == JITDUMP_NO_GENERATION)
			s->object = symtab_intern_file(st, dump, strlen(dump));   /* no machine code */
		else if (s->generation + 1 > ngen)
			ngen = s->generation + 1;
	}
	if (ngen == 0)
		return 0;
	size_t len = input_name_stem(dump, strlen(dump));
	char stem[4096];
	char (*path)[4096] = xmalloc(ngen * sizeof(*path));
	for (unsigned k = 1, clash = 1; clash; k++) {
		snprintf(stem, sizeof(stem), k == 1 ? "%.*s" : "%.*s-%u", (int)len, dump, k);
		clash = 0;
		for (uint32_t g = 0; g < ngen && !clash; g++) {
			if (elf_path(ef, stem, g, path[g], sizeof(path[g]), d) < 0)
				return free(path), -1;
			for (size_t i = 0; i < ef->n && !clash; i++)
				clash = !strcmp(ef->name[i], path[g]);
		}
	}
	struct elf_func *f = xmalloc((end - first + 1) * sizeof(*f));
	int rc = 0;
	for (uint32_t g = 0; g < ngen && rc == 0; g++) {
		const char *object = symtab_intern_file(st, path[g], strlen(path[g]));
		size_t n = 0;
		for (size_t i = first; i < end; i++) {
			struct symbol *s = symtab_symbol_mut(st, (uint32_t)i);
			if (g == 0 && !s->code)   /* a CODE_MOVE's copy without code (jitdump.h
			                             JITDUMP_MAX_MOVES): same function, same file */
				s->object = object;
			if (s->generation != g || !s->code)
				continue;
			s->object = object;
			f[n++] = (struct elf_func){ s->start, s->size, s->name, s->code, s->lines, s->nlines };
		}
		qsort(f, n, sizeof(*f), cmp_func_addr);
		struct output *o = output_open(path[g], d);
		if (!o) {
			rc = -1;
			break;
		}
		XGROW(ef->out, ef->out_cap, ef->n + 1);
		XGROW(ef->name, ef->name_cap, ef->n + 1);
		ef->name[ef->n] = object;
		ef->out[ef->n++] = o;
		rc = elf_write(o, (uint16_t)machine, f, n, d);
	}
	free(f);
	free(path);
	if (rc == 0)
		one_object_per_name(st, first, end);
	return rc;
}
