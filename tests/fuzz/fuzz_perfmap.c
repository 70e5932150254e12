/* fuzz_perfmap.c - libFuzzer target for the perf map reader (perfmap.c, linereader.c) and
 * the symbol index it fills (symtab.c): the input is a map file, read into a symtab that
 * is then finished and checked (tests/fuzz/fuzz.h). */
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "fuzz.h"
#include "core/io.h"
#include "jit/perfmap.h"
#include "jit/symtab.h"

enum { FUZZ_MAX_LINE = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in = input_open_mem(data, size, "fuzz.map");
	struct symtab *st = symtab_new();
	struct perfmap_stats stats;
	struct diag d = { 0 };
	int rc = perfmap_read_input(st, in, "obj", FUZZ_MAX_LINE, &stats, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	FUZZ_CHECK(stats.entries + stats.zero_size <= stats.lines);
	/* What was added before an error is still a valid table: finish and check it too. */
	symtab_finish(st);
	fuzz_check_symtab(st, 1);   /* perfmap_read_input() adds its source first */
	symtab_free(st);
	input_close(in);
	return 0;
}
