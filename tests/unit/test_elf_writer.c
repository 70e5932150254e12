/* Unit tests for elf_writer.c: the file read back with <elf.h>: code sections at the
 * runtime addresses, functions close together sharing a section, one STT_FUNC symbol per
 * function, a .debug_line section. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/diag.h"
#include "jit/elf_writer.h"
#include "helpers.h"
#include "core/io.h"
#include "jit/symtab.h"

static void test_elf_writer__sections_symbols_lines(void **state)
{
	(void)state;
	static const unsigned char a[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 }, b[] = { 0xc3 }, c[] = { 0x90, 0xc3 };
	struct symline rows[2] = { { 0x1000, "/src/a.js", 9, 3 }, { 0x1004, "/src/a.js", 9, 4 } };
	struct elf_func f[3] = {
		{ 0x1000, sizeof(a), "a", a, rows, 2 },
		{ 0x1010, sizeof(b), "b", b, NULL, 0 },      /* 10 bytes after a: same section */
		{ 0x900000, sizeof(c), "c", c, NULL, 0 },    /* far away: its own section */
	};
	char path[] = "/tmp/cgjit-elf-XXXXXX";
	close(mkstemp(path));
	struct diag d = { 0 };
	struct output *o = output_open(path, &d);
	assert_int_equal(elf_write(o, 0, f, 3, &d), 0);
	assert_int_equal(output_commit(o, &d), 0);
	FILE *fp = fopen(path, "rb");
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	unsigned char *img = malloc((size_t)n);
	fseek(fp, 0, SEEK_SET);
	assert_int_equal(fread(img, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)img;
	assert_memory_equal(h->e_ident, ELFMAG, SELFMAG);
	assert_int_equal(h->e_machine, EM_X86_64);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + h->e_shoff);
	const char *names = (const char *)img + sh[h->e_shstrndx].sh_offset;
	int text = 0, lines = 0;
	const Elf64_Shdr *symtab = NULL;
	for (int i = 0; i < h->e_shnum; i++) {
		if (!strcmp(names + sh[i].sh_name, ".text")) {
			text++;
			assert_int_equal(sh[i].sh_flags, SHF_ALLOC | SHF_EXECINSTR);
			if (sh[i].sh_addr == 0x1000) {
				assert_int_equal(sh[i].sh_size, 0x11);
				assert_memory_equal(img + sh[i].sh_offset, a, sizeof(a));
				assert_int_equal(img[sh[i].sh_offset + 0x10], 0xc3);
			} else {
				assert_int_equal(sh[i].sh_addr, 0x900000);
			}
		}
		if (!strcmp(names + sh[i].sh_name, ".debug_line"))
			lines = sh[i].sh_size > 40;
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
	}
	assert_int_equal(text, 2);
	assert_true(lines);
	assert_non_null(symtab);
	const Elf64_Sym *sym = (const Elf64_Sym *)(img + symtab->sh_offset);
	const char *str = (const char *)img + sh[symtab->sh_link].sh_offset;
	assert_int_equal(symtab->sh_size / sizeof(Elf64_Sym), 4);
	assert_string_equal(str + sym[3].st_name, "c");
	assert_int_equal(sym[3].st_value, 0x900000);
	assert_int_equal(ELF64_ST_TYPE(sym[3].st_info), STT_FUNC);
	assert_int_equal(sym[1].st_shndx, sym[2].st_shndx);
	free(img);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_writer__sections_symbols_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
