/* Unit tests for the RaptorJIT auditlog reader: auditlog_walk.c on msgpack built byte by
 * byte here (every scalar form, the recognition of a log by its first bytes, a cut record,
 * each refusal with its byte offset), auditlog_dwarf.c and auditlog.c on the stored sample
 * samples/raptorjit-traces/audit.log (its 12 traces, names, ranges, code and times; its 4
 * aborts), and the sample's records rearranged: a trace before the DWARF blob, a blob
 * that is not ELF, a trace whose GCtrace snapshot is missing, a flush. */
#define _GNU_SOURCE   /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>

#include "core/diag.h"
#include "core/io.h"
#include "jit/auditlog.h"
#include "jit/auditlog_dwarf.h"
#include "jit/auditlog_symbols.h"
#include "jit/auditlog_walk.h"
#include "jit/symtab.h"

#define SAMPLE "samples/raptorjit-traces/audit.log"

struct buf {
	unsigned char b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_byte(struct buf *b, unsigned v)
{
	b->b[b->n++] = (unsigned char)v;
}

static void put_fixstr(struct buf *b, const char *s)
{
	put_byte(b, 0xa0 + (unsigned)strlen(s));
	put(b, s, strlen(s));
}

/* The records of B, walked; returns the walker's result for the last call. */
static int walk_all(struct buf *b, struct auditlog_record *r, size_t *n, struct diag *d,
		    uint64_t *truncated)
{
	struct input *in = input_open_mem(b->b, b->n, "t.log");
	struct auditlog_walk *w = auditlog_walk_new(in);
	int rc;
	*n = 0;
	while ((rc = auditlog_walk_next(w, r, d)) == 1)
		(*n)++;
	*truncated = auditlog_walk_truncated(w);
	auditlog_walk_free(w);
	input_close(in);
	return rc;
}

static void test_walk_forms(void **state)
{
	(void)state;
	struct buf b = { .n = 0 };
	/* map16 of 8 pairs: str 8/16 keys; fixint, uint 8..64, negative fixint, int 16, nil,
	 * bool, bin 8 */
	put(&b, "\xde\x00\x08", 3);
	put(&b, "\xd9\x04type", 6);
	put(&b, "\xda\x00\x05" "event", 8);
	put_fixstr(&b, "a");
	put_byte(&b, 0x7f);
	put_fixstr(&b, "b");
	put(&b, "\xcf\x00\x00\x00\x01\x00\x00\x00\x02", 9);
	put_fixstr(&b, "c");
	put_byte(&b, 0xfe);
	put_fixstr(&b, "d");
	put(&b, "\xd1\xff\x00", 3);
	put_fixstr(&b, "e");
	put_byte(&b, 0xc0);
	put_fixstr(&b, "f");
	put_byte(&b, 0xc3);
	put_fixstr(&b, "g");
	put(&b, "\xc4\x03\x01\x02\x03", 5);
	struct input *in = input_open_mem(b.b, b.n, "t.log");
	struct auditlog_walk *w = auditlog_walk_new(in);
	struct auditlog_record *r = malloc(sizeof(*r));
	struct diag d = { 0 };
	assert_int_equal(auditlog_walk_next(w, r, &d), 1);
	assert_int_equal(r->npairs, 8);
	assert_int_equal(r->offset, 0);
	const struct auditlog_value *v = auditlog_record_get(r, "type");
	assert_non_null(v);
	assert_int_equal(v->kind, AUDITLOG_STR);
	assert_memory_equal(v->p, "event", 5);
	assert_int_equal(auditlog_record_get(r, "a")->u, 0x7f);
	assert_int_equal(auditlog_record_get(r, "b")->u, 0x100000002ull);
	assert_int_equal((int64_t)auditlog_record_get(r, "c")->u, -2);
	assert_int_equal(auditlog_record_get(r, "c")->kind, AUDITLOG_INT);
	assert_int_equal((int64_t)auditlog_record_get(r, "d")->u, -256);
	assert_int_equal(auditlog_record_get(r, "e")->kind, AUDITLOG_NIL);
	assert_int_equal(auditlog_record_get(r, "f")->u, 1);
	v = auditlog_record_get(r, "g");
	assert_int_equal(v->kind, AUDITLOG_BIN);
	assert_int_equal(v->len, 3);
	assert_memory_equal(v->p, "\x01\x02\x03", 3);
	assert_null(auditlog_record_get(r, "h"));
	assert_int_equal(auditlog_walk_next(w, r, &d), 0);
	assert_false(d.set);
	auditlog_walk_free(w);
	input_close(in);
	free(r);
}

static void test_is_log(void **state)
{
	(void)state;
	assert_true(auditlog_walk_is_log((const unsigned char *)"\x84\xda\x00\x04type", 9));
	assert_true(auditlog_walk_is_log((const unsigned char *)"\x84\xda\x00\x04", 4));
	assert_true(auditlog_walk_is_log((const unsigned char *)"\x82\xa4ty", 4));
	/* RaptorJIT writes fixmaps: a map 16 or 32 header does not start a log */
	assert_false(auditlog_walk_is_log((const unsigned char *)"\xde\x00\x02\xa4", 4));
	assert_false(auditlog_walk_is_log((const unsigned char *)"\xdf\x00\x00\x00", 4));
	assert_true(auditlog_walk_is_log((const unsigned char *)"\x84\xd9\x04t", 4));
	assert_false(auditlog_walk_is_log((const unsigned char *)"\x84\xd9\x05t", 4));
	assert_false(auditlog_walk_is_log((const unsigned char *)"\x84\xda\x00\x05", 4));
	assert_false(auditlog_walk_is_log((const unsigned char *)"\x84\xa4typ", 3));   /* too short */
	assert_false(auditlog_walk_is_log((const unsigned char *)"\x82\xa4tx", 4));
	assert_false(auditlog_walk_is_log((const unsigned char *)"7f00", 4));        /* a perf map */
	assert_false(auditlog_walk_is_log((const unsigned char *)"JiTD", 4));        /* a jitdump */
	assert_false(auditlog_walk_is_log((const unsigned char *)"\x80\xa4ty", 4));  /* empty map */
}

static void test_walk_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *bytes;
		size_t n;
		const char *msg;
	} cases[] = {
		{ "\x81\xa1k\x01" "\x05", 5, "t.log: byte 4: a record must be a msgpack map, got form 0x05 (a number)" },
		{ "\x81\xa1k\x01" "\xa3" "abc", 8, "t.log: byte 4: a record must be a msgpack map, got form 0xa3 (a string)" },
		{ "\x81\xa1k\x01" "\xe5", 5, "t.log: byte 4: a record must be a msgpack map, got form 0xe5 (a number)" },
		{ "\x81\xa1k\x01" "\xc3", 5, "t.log: byte 4: a record must be a msgpack map, got form 0xc3 (a boolean)" },
		{ "\x81\xa1k\x91\x01", 5, "t.log: byte 3: a value of msgpack form 0x91 (an array)" },
		{ "\x81\xa1k\x81\xa1k\x01", 7, "t.log: byte 3: a value of msgpack form 0x81 (a map)" },
		{ "\x81\xa1k\xcb", 4, "t.log: byte 3: a value of msgpack form 0xcb (a float)" },
		{ "\x81\xa1k\xc1", 4, "t.log: byte 3: a value of msgpack form 0xc1 (a byte msgpack does not define)" },
		{ "\x81\x01\x01", 3, "t.log: byte 1: a key of msgpack form 0x01" },
		{ "\x81\xc4\x01k\x01", 5, "t.log: byte 1: a key of msgpack form 0xc4" },
		{ "\xde\x00\x41", 3, "t.log: byte 0: a record of 65 keys (at most 64)" },
		{ "\xdf\xff\xff\xff\xff", 5, "t.log: byte 0: a record of 4294967295 keys" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = { .n = 0 };
		put(&b, cases[i].bytes, cases[i].n);
		struct auditlog_record *r = malloc(sizeof(*r));
		struct diag d = { 0 };
		size_t n;
		uint64_t cut;
		assert_int_equal(walk_all(&b, r, &n, &d, &cut), -1);
		if (!strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.msg, cases[i].msg);
		free(r);
	}
}

/* A record cut by the end of the file ends the walk, counted; a huge length claimed by a cut
 * record allocates only what is there. */
static void test_walk_cut(void **state)
{
	(void)state;
	struct buf b = { .n = 0 };
	put(&b, "\x81\xa1k\x01", 4);
	put(&b, "\x82\xa1k\x01\xa1z\xc6\x00\x10\x00\x00\x01\x02", 13);
	struct auditlog_record *r = malloc(sizeof(*r));
	struct diag d = { 0 };
	size_t n;
	uint64_t cut;
	assert_int_equal(walk_all(&b, r, &n, &d, &cut), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cut, 13);
	assert_false(d.set);
	/* more than AUDITLOG_MAX_RECORD: refused once the bytes are there */
	b.n = 0;
	put(&b, "\x81\xa1k\xc6\x10\x00\x00\x01", 8);
	memset(&d, 0, sizeof(d));
	assert_int_equal(walk_all(&b, r, &n, &d, &cut), -1);
	assert_non_null(strstr(d.msg, "t.log: byte 0: a record of more than 268435456 bytes"));
	free(r);
}

/* --- the sample --- */

struct seen {
	size_t ntraces, naborts, nflushes, nevents;
	char names[16][96];
	uint64_t addr[16], size[16], time[16], last_event;
	int code_ok[16];
	char where[8][64];
	uint64_t error[8];
	int events_ordered;
};

static void on_event(void *ctx, uint64_t t)
{
	struct seen *s = ctx;
	if (s->nevents++ && t < s->last_event)
		s->events_ordered = 0;
	s->last_event = t;
}

static void on_trace(void *ctx, const struct auditlog_trace *t)
{
	struct seen *s = ctx;
	if (s->ntraces < 16) {
		snprintf(s->names[s->ntraces], sizeof(s->names[0]), "%s", t->name);
		s->addr[s->ntraces] = t->addr;
		s->size[s->ntraces] = t->size;
		s->time[s->ntraces] = t->time;
		s->code_ok[s->ntraces] = t->code != NULL && strlen(t->name) == t->name_len;
	}
	s->ntraces++;
}

static void on_abort(void *ctx, const struct auditlog_abort *a)
{
	struct seen *s = ctx;
	if (s->naborts < 8) {
		snprintf(s->where[s->naborts], sizeof(s->where[0]), "%u %s", a->traceno, a->where);
		s->error[s->naborts] = a->error;
	}
	s->naborts++;
}

static void on_flush(void *ctx, uint64_t t)
{
	(void)t;
	((struct seen *)ctx)->nflushes++;
}

static unsigned char *read_sample(size_t *n)
{
	FILE *f = fopen(SAMPLE, "rb");
	assert_non_null(f);
	unsigned char *p = malloc(1 << 20);
	*n = fread(p, 1, 1 << 20, f);
	fclose(f);
	assert_true(*n > 1000);
	return p;
}

static int read_log(const unsigned char *p, size_t n, struct seen *s, struct auditlog_stats *st,
		    struct diag *d)
{
	memset(s, 0, sizeof(*s));
	s->events_ordered = 1;
	struct auditlog_visitor v = { s, on_event, on_trace, on_abort, on_flush };
	struct input *in = input_open_mem(p, n, "t.log");
	int rc = auditlog_read(in, &v, st, d);
	input_close(in);
	return rc;
}

static void test_sample(void **state)
{
	(void)state;
	size_t n;
	unsigned char *p = read_sample(&n);
	struct seen s;
	struct auditlog_stats st;
	struct diag d = { 0 };
	assert_int_equal(read_log(p, n, &s, &st, &d), 0);
	assert_int_equal(st.records, 184);
	assert_int_equal(st.traces, 12);
	assert_int_equal(st.aborts, 4);
	assert_int_equal(st.flushes, 0);
	assert_int_equal(st.no_code, 0);
	assert_int_equal(st.truncated_bytes, 0);
	assert_int_equal(s.ntraces, 12);
	assert_true(s.events_ordered);
	/* the sample's README (samples/src/auditstats.py, an independent reader) */
	assert_string_equal(s.names[0], "TRACE_1 loop::@raptor.lua:15");
	assert_int_equal(s.addr[0], 0x2d95fdee);
	assert_int_equal(s.size[0], 530);
	assert_string_equal(s.names[1], "TRACE_2 (1/5) -> 1::@raptor.lua:15");
	assert_string_equal(s.names[3], "TRACE_4 return::@raptor.lua:31");
	assert_string_equal(s.names[10], "TRACE_11 (5/0) loop::@raptor.lua:41");
	assert_string_equal(s.names[11], "TRACE_12 (11/2) -> 5::@raptor.lua:41");
	assert_int_equal(s.addr[11], 0x2d95eeac);
	assert_int_equal(s.size[11], 442);
	for (int i = 0; i < 12; i++)
		assert_true(s.code_ok[i]);
	/* +98.729 ms and +111.001 ms from the first event in the README: 12.272 ms apart, to
	 * the microsecond of its rounding */
	uint64_t apart = s.time[1] - s.time[0];
	assert_true(apart > 12272000 - 1000 && apart < 12272000 + 1000);
	assert_int_equal(s.naborts, 4);
	assert_string_equal(s.where[0], "4 @raptor.lua:30");
	assert_string_equal(s.where[3], "5 @raptor.lua:30");
	assert_int_equal(s.error[0], 7);
	free(p);
}

/* Through auditlog_symbols: 12 symbols, named and sized as the traces, with their code. */
static void test_sample_symbols(void **state)
{
	(void)state;
	size_t n;
	unsigned char *p = read_sample(&n);
	struct input *in = input_open_mem(p, n, "t.log");
	struct symtab *st = symtab_new();
	struct auditlog_symbols_stats as;
	struct diag d = { 0 };
	assert_int_equal(auditlog_symbols_read(st, in, "obj", &as, &d), 0);
	symtab_finish(st);
	assert_int_equal(symtab_count(st), 12);
	assert_int_equal(as.reused, 0);
	const struct symtab_segment *seg = symtab_lookup(st, 0x2d95fdee + 100);
	assert_non_null(seg);
	const struct symbol *s = symtab_symbol(st, seg->sym);
	assert_string_equal(s->name, "TRACE_1 loop::@raptor.lua:15");
	assert_int_equal(s->size, 530);
	assert_non_null(s->code);
	assert_int_equal(s->generation, 0);
	assert_int_equal(s->line, 15);
	assert_memory_equal(s->file, "raptor.lua", 10);
	assert_null(symtab_lookup(st, 0x2d95fdee + 530 + 0x100));
	symtab_free(st);
	input_close(in);
	free(p);
}

/* The sample's record offsets (the walker's own), to rearrange records. */
static size_t record_offsets(const unsigned char *p, size_t n, size_t *offs, size_t cap)
{
	struct input *in = input_open_mem(p, n, "t.log");
	struct auditlog_walk *w = auditlog_walk_new(in);
	struct auditlog_record *r = malloc(sizeof(*r));
	struct diag d = { 0 };
	size_t k = 0;
	while (k + 1 < cap && auditlog_walk_next(w, r, &d) == 1)
		offs[k++] = r->offset;
	offs[k] = n;
	free(r);
	auditlog_walk_free(w);
	input_close(in);
	return k;
}

static size_t find_record(const unsigned char *p, const size_t *offs, size_t k, const char *needle)
{
	for (size_t i = 0; i < k; i++)
		if (memmem(p + offs[i], offs[i + 1] - offs[i], needle, strlen(needle)))
			return i;
	fail_msg("no record holds '%s'", needle);
	return 0;
}

static void test_sample_rearranged(void **state)
{
	(void)state;
	size_t n, offs[256];
	unsigned char *p = read_sample(&n);
	size_t k = record_offsets(p, n, offs, 256);
	assert_int_equal(k, 184);
	size_t blob = find_record(p, offs, k, "lj_dwarf.dwo"), stop = find_record(p, offs, k, "trace_stop");
	unsigned char *q = malloc(n + 64);
	struct seen s;
	struct auditlog_stats st;
	struct diag d = { 0 };

	/* the first trace_stop alone: before any blob */
	memcpy(q, p + offs[stop], offs[stop + 1] - offs[stop]);
	assert_int_equal(read_log(q, offs[stop + 1] - offs[stop], &s, &st, &d), -1);
	assert_string_equal(d.msg, "t.log: byte 0: a trace_stop event before the blob lj_dwarf.dwo that "
			    "describes its structs");

	/* the blob, then the first trace_stop: its GCtrace snapshot is missing */
	size_t m = offs[blob + 1] - offs[blob];
	memcpy(q, p + offs[blob], m);
	memcpy(q + m, p + offs[stop], offs[stop + 1] - offs[stop]);
	memset(&d, 0, sizeof(d));
	assert_int_equal(read_log(q, m + offs[stop + 1] - offs[stop], &s, &st, &d), -1);
	char want[128];
	snprintf(want, sizeof(want), "t.log: byte %zu: the stopped trace (GCtrace) at 0x", m);
	assert_non_null(strstr(d.msg, want));
	assert_non_null(strstr(d.msg, "no snapshot of it before this event"));

	/* the blob's ELF magic broken */
	memcpy(q, p, n);
	unsigned char *elf = memmem(q + offs[blob], m, "\x7f" "ELF", 4);
	assert_non_null(elf);
	elf[1] = 'X';
	memset(&d, 0, sizeof(d));
	assert_int_equal(read_log(q, n, &s, &st, &d), -1);
	snprintf(want, sizeof(want), "t.log: byte %zu: the blob lj_dwarf.dwo cannot give the struct "
		 "layouts: it is not an ELF object", offs[blob]);
	assert_string_equal(d.msg, want);

	/* the log cut inside its last trace_stop: the traces before it, the cut counted */
	size_t last_stop = 0;
	for (size_t i = 0; i < k; i++)
		if (memmem(p + offs[i], offs[i + 1] - offs[i], "trace_stop", 10))
			last_stop = i;
	memset(&d, 0, sizeof(d));
	assert_int_equal(read_log(p, offs[last_stop] + 10, &s, &st, &d), 0);
	assert_int_equal(st.traces, 11);
	assert_int_equal(st.truncated_bytes, 10);
	free(q);
	free(p);
}

/* The layouts from the sample's blob: the offsets the sample's README gives. */
static void test_dwarf(void **state)
{
	(void)state;
	size_t n, offs[256];
	unsigned char *p = read_sample(&n);
	size_t k = record_offsets(p, n, offs, 256);
	size_t blob = find_record(p, offs, k, "lj_dwarf.dwo");
	const unsigned char *elf = memmem(p + offs[blob], offs[blob + 1] - offs[blob], "\x7f" "ELF", 4);
	size_t len = (size_t)(p + offs[blob + 1] - elf);
	struct auditlog_layout l;
	char why[256];
	assert_int_equal(auditlog_dwarf_layout(elf, len, &l, why, sizeof(why)), 0);
	assert_int_equal(l.trace_size, 136);
	assert_int_equal(l.proto_size, 112);
	assert_int_equal(l.str_size, 24);
	assert_int_equal(l.traceno.off, 116);
	assert_int_equal(l.traceno.size, 2);
	assert_int_equal(l.parent.off, 126);
	assert_int_equal(l.exitno.off, 128);
	assert_int_equal(l.link.off, 118);
	assert_int_equal(l.linktype.off, 134);
	assert_int_equal(l.linktype.size, 1);
	assert_int_equal(l.startpt.off, 64);
	assert_int_equal(l.startpt.size, 8);
	assert_int_equal(l.startpc.off, 72);
	assert_int_equal(l.mcode.off, 88);
	assert_int_equal(l.szmcode.off, 84);
	assert_int_equal(l.mcloop.off, 96);
	assert_int_equal(l.chunkname.off, 64);
	assert_int_equal(l.lineinfo.off, 80);
	assert_int_equal(l.str_len.off, 16);
	assert_int_equal(l.cur.off, 0);
	/* a blob that is ELF but without these structs: this test program's own bytes are not at
	 * hand, so the blob cut to its ELF header only */
	assert_int_equal(auditlog_dwarf_layout(elf, 64, &l, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "GCtrace.traceno") ? why : strstr(why, "DWARF"));
	free(p);
}

/* The offset in BLOB of the DW_AT_data_member_location value of STRUCT_NAME.MEMBER, through
 * libdw (whose attribute values point into the image it reads), or SIZE_MAX. */
static size_t member_location_at(unsigned char *blob, size_t n, const char *struct_name, const char *member)
{
	size_t at = SIZE_MAX;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)blob, n);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, c, m;
	while (dw && at == SIZE_MAX && dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &c) != 0)
			continue;
		do {
			const char *name = dwarf_diename(&c);
			if (dwarf_tag(&c) != DW_TAG_structure_type || !name || strcmp(name, struct_name) ||
			    dwarf_bytesize(&c) <= 0 || dwarf_child(&c, &m) != 0)
				continue;
			do {
				Dwarf_Attribute a;
				const char *mn = dwarf_diename(&m);
				if (mn && !strcmp(mn, member) && dwarf_attr(&m, DW_AT_data_member_location, &a) &&
				    a.form == DW_FORM_data1 && a.valp >= blob && a.valp < blob + n)
					at = (size_t)(a.valp - blob);
			} while (at == SIZE_MAX && dwarf_siblingof(&m, &m) == 0);
			break;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	dwarf_end(dw);
	elf_end(elf);
	return at;
}

/* A blob whose GCtrace.traceno lies past the end of GCtrace is refused, naming it (the
 * readers would otherwise read past a GCtrace snapshot). */
static void test_dwarf_member_outside(void **state)
{
	(void)state;
	size_t n, offs[256];
	unsigned char *p = read_sample(&n);
	size_t k = record_offsets(p, n, offs, 256);
	size_t blob = find_record(p, offs, k, "lj_dwarf.dwo");
	unsigned char *elf = memmem(p + offs[blob], offs[blob + 1] - offs[blob], "\x7f" "ELF", 4);
	size_t len = (size_t)(p + offs[blob + 1] - elf);
	unsigned char *copy = malloc(len);
	memcpy(copy, elf, len);
	size_t at = member_location_at(copy, len, "GCtrace", "traceno");
	assert_true(at != SIZE_MAX);
	assert_int_equal(copy[at], 116);
	free(copy);
	elf[at] = 255;   /* in the log itself: read whole, it must be refused */
	struct seen s;
	struct auditlog_stats st;
	struct diag d = { 0 };
	assert_int_equal(read_log(p, n, &s, &st, &d), -1);
	char want[200];
	snprintf(want, sizeof(want), "t.log: byte %zu: the blob lj_dwarf.dwo cannot give the struct layouts: "
		 "GCtrace.traceno (2 bytes at 255) passes the end of GCtrace (136 bytes) in its DWARF", offs[blob]);
	assert_string_equal(d.msg, want);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_forms),
		cmocka_unit_test(test_is_log),
		cmocka_unit_test(test_walk_refusals),
		cmocka_unit_test(test_walk_cut),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_sample_symbols),
		cmocka_unit_test(test_sample_rearranged),
		cmocka_unit_test(test_dwarf),
		cmocka_unit_test(test_dwarf_member_outside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
