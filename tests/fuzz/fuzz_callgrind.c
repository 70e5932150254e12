/* fuzz_callgrind.c - libFuzzer target for the callgrind reader (callgrind_reader.c, with
 * linereader.c, callgrind_names.c, io.c, io_zstd.c and io_gzip.c below it): the input is a
 * profile, plain, zstd- or gzip-compressed, read twice: strictly (augment's reader) and
 * accepting other writers' files (the report commands'). Every record is read to its end
 * and its indices are checked against the name tables, so a bad pointer or length shows
 * under ASan. */
#include <stddef.h>
#include <stdint.h>

#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "fuzz.h"
#include "core/io.h"

/* Small enough that the fuzzer reaches the line limit within -max_len. */
enum { FUZZ_MAX_LINE = 4096 };

static void check_record(const struct cg_reader *r, const struct cg_record *rec)
{
	const struct cg_names *n = cg_reader_names(r);
	unsigned npos = cg_reader_npos(r), nev = cg_reader_nevents(r);
	FUZZ_CHECK(npos <= CG_MAX_POS && nev <= CG_MAX_EVENTS);
	if (rec->text)
		fuzz_touch(rec->text, rec->len);
	switch (rec->kind) {
	case CG_HEADER:
	case CG_COMMENT:
	case CG_TOTALS:
		break;
	case CG_FN:
		FUZZ_CHECK(rec->fn < cg_names_count(n, SP_FN));
		break;
	case CG_COST:
	case CG_CALL:
	case CG_JUMP:
		FUZZ_CHECK(rec->fn < cg_names_count(n, SP_FN));
		FUZZ_CHECK(rec->file < cg_names_count(n, SP_FILE));
		fuzz_touch(rec->pos, npos * sizeof(*rec->pos));
		if (rec->prev_pos)
			fuzz_touch(rec->prev_pos, npos * sizeof(*rec->prev_pos));
		if (rec->kind == CG_JUMP) {
			FUZZ_CHECK(rec->callee < cg_names_count(n, SP_FN));
			FUZZ_CHECK(rec->callee_file < cg_names_count(n, SP_FILE));
			fuzz_touch(rec->target, npos * sizeof(*rec->target));
		} else {
			fuzz_touch(rec->costs, nev * sizeof(*rec->costs));
		}
		if (rec->kind == CG_CALL) {
			FUZZ_CHECK(rec->callee < cg_names_count(n, SP_FN));
			fuzz_touch(rec->target, npos * sizeof(*rec->target));
		}
		break;
	}
	for (unsigned i = 0; i < rec->ndefs; i++) {
		/* each name is handed out once, where it is defined, with the object and file
		 * that bind it */
		const struct cg_def *def = &rec->defs[i];
		FUZZ_CHECK(def->fn < cg_names_count(n, SP_FN));
		FUZZ_CHECK(cg_names_get_fn(n, def->fn).len ==
			   (def->len > CG_FN_LEN_MAX ? CG_FN_LEN_MAX : def->len));
		FUZZ_CHECK(def->obj < cg_names_count(n, SP_OBJ));
		FUZZ_CHECK(def->file < cg_names_count(n, SP_FILE));
		fuzz_touch(def->name, def->len);
		const struct strtab_entry *o = cg_names_get(n, SP_OBJ, def->obj);
		fuzz_touch(o->str, o->len);
	}
}

/* Reads the input to its end, in the strict mode augment uses or in the foreign one
 * (cg_reader_accept_foreign) of the report commands. */
static void read_input(const uint8_t *data, size_t size, int foreign)
{
	struct input *in = input_open_mem(data, size, "fuzz.cg");
	struct cg_reader *r = cg_reader_new(in, FUZZ_MAX_LINE);
	if (foreign)
		cg_reader_accept_foreign(r);
	struct cg_record rec;
	struct diag d = { 0 };
	int rc;
	while ((rc = cg_reader_next(r, &rec, &d)) > 0) {
		FUZZ_CHECK(!d.set);
		check_record(r, &rec);
		if (rec.kind == CG_HEADER && rec.key == HK_SUMMARY) {
			FUZZ_CHECK(foreign ? rec.costs != NULL : rec.costs == NULL);
			if (rec.costs)
				fuzz_touch(rec.costs, cg_reader_nevents(r) * sizeof(*rec.costs));
		}
	}
	/* -1 always says why; 0 never carries an error (callgrind_reader.h). */
	FUZZ_CHECK(rc == 0 ? !d.set : d.set && d.msg[0] != '\0');
	FUZZ_CHECK(memchr(d.msg, '\0', sizeof(d.msg)) != NULL);
	for (unsigned i = 0; i < cg_reader_nevents(r); i++) {
		const char *e = cg_reader_event_name(r, i);
		fuzz_touch(e, strlen(e));
	}
	fuzz_touch(cg_reader_part_sums(r), cg_reader_nevents(r) * sizeof(uint64_t));
	cg_reader_free(r);
	input_close(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_input(data, size, 0);
	read_input(data, size, 1);
	return 0;
}
