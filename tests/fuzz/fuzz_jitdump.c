/* fuzz_jitdump.c - libFuzzer target for the jitdump reader (jitdump.c) and the symbol
 * index with line tables it fills (symtab.c): the input is a dump (either byte order,
 * plain or zstd), read with the debug bias detected, then finished and checked: every
 * symbol's addresses and line rows (tests/fuzz/fuzz.h). */
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "fuzz.h"
#include "core/io.h"
#include "jit/jitdump.h"
#include "jit/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in = input_open_mem(data, size, "fuzz.dump");
	struct symtab *st = symtab_new();
	struct jitdump_stats stats;
	struct diag d = { 0 };
	int rc = jitdump_read_input(st, in, "obj", JITDUMP_BIAS_AUTO, &stats, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	FUZZ_CHECK(memchr(stats.bad_debug_reason, '\0', sizeof(stats.bad_debug_reason)) != NULL);
	symtab_finish(st);
	/* The dump's source is added once its records have been read, before any symbol. */
	fuzz_check_symtab(st, symtab_count(st) ? 1 : 0);
	/* Every line row of every symbol, as augment's place() asks for them. */
	for (size_t i = 0; i < symtab_count(st); i++) {
		const struct symbol *s = symtab_symbol(st, (uint32_t)i);
		for (uint32_t k = 0; k < s->nlines; k++) {
			const struct symline *row = symtab_line(s, s->lines[k].addr);
			FUZZ_CHECK(row != NULL && row->addr == s->lines[k].addr);
		}
	}
	symtab_free(st);
	input_close(in);
	return 0;
}
