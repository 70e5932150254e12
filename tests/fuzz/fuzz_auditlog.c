/* fuzz_auditlog.c - libFuzzer target for the RaptorJIT auditlog reader (auditlog_walk.c,
 * auditlog.c, auditlog_dwarf.c through libdw, auditlog_symbols.c) and the timeline built
 * from a log (timeline.c): the input is a log (plain or zstd), read into a symbol table,
 * finished and checked (tests/fuzz/fuzz.h), then read again as a timeline, which must
 * agree. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/diag.h"
#include "fuzz.h"
#include "core/io.h"
#include "jit/auditlog_symbols.h"
#include "jit/symtab.h"
#include "report/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in = input_open_mem(data, size, "fuzz.log");
	struct symtab *st = symtab_new();
	struct auditlog_symbols_stats stats;
	struct diag d = { 0 };
	int rc = auditlog_symbols_read(st, in, "obj", &stats, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	FUZZ_CHECK(rc < 0 || symtab_count(st) == stats.log.traces);
	symtab_finish(st);
	fuzz_check_symtab(st, symtab_count(st) ? 1 : 0);
	for (size_t i = 0; i < symtab_count(st); i++) {
		const struct symbol *s = symtab_symbol(st, (uint32_t)i);
		FUZZ_CHECK(s->name_len > 6 && !memcmp(s->name, "TRACE_", 6));
	}
	symtab_free(st);
	input_close(in);

	/* the timeline reads the same log: the same verdict */
	in = input_open_mem(data, size, "fuzz.log");
	struct timeline_opts o;
	timeline_opts_init(&o);
	struct diag d2 = { 0 };
	json_t *doc = timeline_build(in, &o, &d2);
	FUZZ_CHECK(doc ? !d2.set : d2.set);
	/* read as a log too (the timeline tells a log by its first bytes, the reader above does
	 * not ask): the same traces */
	const char *source = doc ? json_string_value(json_object_get(doc, "source")) : NULL;
	if (source && !strcmp(source, "auditlog"))
		FUZZ_CHECK(rc == 0 && (uint64_t)json_integer_value(json_object_get(doc, "loads")) == stats.log.traces);
	json_decref(doc);
	input_close(in);
	return 0;
}
