/* Unit tests for timeline.c (and timeline_svg.c): buckets, the late loads for a warm-up in
 * percent and in seconds, recompilations, moves (by code_index, and of an index no load
 * had), malformed records, both byte orders, CPU-counter clocks, errors with their byte
 * offsets, name cleaning, and the JSON document written and parsed back. Dumps are built
 * byte by byte here, with chosen timestamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "dump_builder.h"
#include "report/doc_out.h"
#include "core/io.h"
#include "report/timeline.h"
#include "report/timeline_svg.h"
#include "report/timeline_text.h"

static void header(struct dump *d, int be, uint64_t flags)
{
	dump_header(d, be, 40, 777, 5, flags);
}

static void load(struct dump *d, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	dump_load_at(d, ts, 777, addr, size, index, name);
}

static void move(struct dump *d, uint64_t ts, uint64_t from, uint64_t to, uint64_t index)
{
	size_t at = dump_begin(d, 1, ts);
	put(d, 777, 4);
	put(d, 778, 4);
	put(d, to, 8);
	put(d, from, 8);
	put(d, to, 8);
	put(d, 4, 8);
	put(d, index, 8);
	dump_end(d, at);
}

static void close_rec(struct dump *d, uint64_t ts)
{
	dump_end(d, dump_begin(d, 3, ts));
}

/* Times from T0 = 1000: loads a@0 b@10 a@20 (again) c@55 d@90, c moved @60 and @70,
 * closed @100. Span 100. */
static void sample(struct dump *d, int be, uint64_t flags)
{
	header(d, be, flags);
	load(d, 1000, 0x1000, 16, 1, "a");
	load(d, 1010, 0x2000, 8, 2, "b  ");          /* trailing blanks are not part of a name */
	load(d, 1020, 0x3000, 16, 3, "a");
	load(d, 1055, 0x4000, 4, 4, "c");
	move(d, 1060, 0x4000, 0x5000, 4);
	move(d, 1070, 0x5000, 0x6000, 4);
	load(d, 1090, 0x7000, 8, 5, "d");
	close_rec(d, 1100);
}

static struct diag dg;

static json_t *build(const struct dump *d, const struct timeline_opts *o)
{
	memset(&dg, 0, sizeof(dg));
	struct input *in = input_open_mem(d->b, d->n, "t.dump");
	json_t *doc = timeline_build(in, o, &dg);
	input_close(in);
	return doc;
}

static uint64_t u(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	assert_non_null(v);
	return (uint64_t)json_integer_value(v);
}

static const json_t *at(const json_t *o, const char *key, size_t i)
{
	const json_t *a = json_object_get(o, key);
	assert_true(json_is_array(a));
	assert_true(i < json_array_size(a));
	return json_array_get(a, i);
}

static void check_bucket(const json_t *doc, size_t i, uint64_t start, uint64_t endt, uint64_t loads,
			 uint64_t bytes, uint64_t moves)
{
	const json_t *b = at(doc, "buckets", i);
	assert_int_equal(u(b, "start"), start);
	assert_int_equal(u(b, "end"), endt);
	assert_int_equal(u(b, "loads"), loads);
	assert_int_equal(u(b, "bytes"), bytes);
	assert_int_equal(u(b, "moves"), moves);
}

static void test_timeline__buckets_late_recompiled_moved(void **state)
{
	(void)state;
	for (int be = 0; be <= 1; be++) {
		struct dump d;
		sample(&d, be, 0);
		struct timeline_opts o;
		timeline_opts_init(&o);
		o.buckets = 5;
		o.warmup_pct = 50;
		json_t *doc = build(&d, &o);
		assert_non_null(doc);
		assert_string_equal(doc_get_str(doc, "schema"), "cgjit.timeline/1");
		assert_string_equal(doc_get_str(doc, "clock"), "monotonic");
		assert_string_equal(doc_get_str(doc, "unit"), "ns");
		assert_int_equal(u(doc, "pid"), 777);
		assert_int_equal(u(doc, "start"), 1000);
		assert_int_equal(u(doc, "span"), 100);
		assert_int_equal(u(doc, "records"), 8);
		assert_int_equal(u(doc, "loads"), 5);
		assert_int_equal(u(doc, "bytes"), 52);
		assert_int_equal(u(doc, "moves"), 2);
		assert_int_equal(u(doc, "closes"), 1);
		assert_int_equal(json_array_size(json_object_get(doc, "buckets")), 5);
		check_bucket(doc, 0, 0, 20, 2, 24, 0);
		check_bucket(doc, 1, 20, 40, 1, 16, 0);
		check_bucket(doc, 2, 40, 60, 1, 4, 0);
		check_bucket(doc, 3, 60, 80, 0, 0, 2);
		check_bucket(doc, 4, 80, 100, 1, 8, 0);
		const json_t *late = json_object_get(doc, "late");
		assert_string_equal(doc_get_str(late, "warmup"), "50%");
		assert_int_equal(u(late, "after"), 50);
		assert_int_equal(u(late, "loads"), 2);
		assert_int_equal(u(late, "bytes"), 12);
		assert_int_equal(u(late, "functions"), 2);
		assert_string_equal(doc_get_str(at(late, "list", 0), "name"), "c");
		assert_int_equal(u(at(late, "list", 0), "time"), 55);
		assert_int_equal(u(at(late, "list", 0), "size"), 4);
		assert_string_equal(doc_get_str(at(late, "list", 1), "name"), "d");
		const json_t *rc = json_object_get(doc, "recompiled");
		assert_int_equal(u(rc, "functions"), 1);
		assert_int_equal(u(rc, "extra_loads"), 1);
		const json_t *a = at(rc, "list", 0);
		assert_string_equal(doc_get_str(a, "name"), "a");
		assert_int_equal(u(a, "loads"), 2);
		assert_int_equal(u(a, "bytes"), 32);
		assert_int_equal(json_integer_value(json_array_get(json_object_get(a, "times"), 0)), 0);
		assert_int_equal(json_integer_value(json_array_get(json_object_get(a, "times"), 1)), 20);
		const json_t *mv = json_object_get(doc, "moved");
		assert_int_equal(u(mv, "functions"), 1);
		assert_string_equal(doc_get_str(at(mv, "list", 0), "name"), "c");
		assert_int_equal(u(at(mv, "list", 0), "moves"), 2);
		json_decref(doc);
	}
}

static void test_timeline__json_parsed_back(void **state)
{
	(void)state;
	struct dump d;
	sample(&d, 0, 0);
	struct timeline_opts o;
	timeline_opts_init(&o);
	json_t *doc = build(&d, &o);
	assert_non_null(doc);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_int_equal(doc_write_json(doc, f), 0);
	fclose(f);
	json_error_t err;
	json_t *back = json_loads(buf, 0, &err);
	assert_non_null(back);
	assert_true(json_equal(doc, back));
	assert_int_equal(json_array_size(json_object_get(back, "buckets")), TIMELINE_DEFAULT_BUCKETS);
	uint64_t sum = 0;
	for (size_t i = 0; i < TIMELINE_DEFAULT_BUCKETS; i++)
		sum += u(at(back, "buckets", i), "loads");
	assert_int_equal(sum, 5);
	/* default warm-up 10% of 100: every load after time 10 is late (a@20, c, d) */
	assert_int_equal(u(json_object_get(back, "late"), "after"), 10);
	assert_int_equal(u(json_object_get(back, "late"), "loads"), 3);
	json_decref(back);
	free(buf);
	json_decref(doc);
}

static void test_timeline__warmup_seconds_top_and_ticks(void **state)
{
	(void)state;
	struct dump d;
	sample(&d, 0, 0);
	struct timeline_opts o;
	timeline_opts_init(&o);
	o.warmup_is_pct = 0;
	o.warmup_ns = 30;
	o.top = 1;
	json_t *doc = build(&d, &o);
	const json_t *late = json_object_get(doc, "late");
	assert_int_equal(u(late, "loads"), 2);
	assert_int_equal(json_array_size(json_object_get(late, "list")), 1);
	assert_string_equal(doc_get_str(at(late, "list", 0), "name"), "d");   /* the last one */
	json_decref(doc);

	sample(&d, 1, 1);   /* JITDUMP_FLAGS_ARCH_TIMESTAMP */
	assert_null(build(&d, &o));
	assert_non_null(strstr(dg.msg, "t.dump: the timestamps are CPU counter ticks"));
	o.warmup_is_pct = 1;
	doc = build(&d, &o);
	assert_non_null(doc);
	assert_string_equal(doc_get_str(doc, "clock"), "arch");
	assert_string_equal(doc_get_str(doc, "unit"), "ticks");
	char t[48];
	assert_string_equal(timeline_time(t, doc, 1234567), "1,234,567 ticks");
	json_decref(doc);
}

static void test_timeline__malformed_and_unknown(void **state)
{
	(void)state;
	struct dump d;
	header(&d, 0, 0);
	load(&d, 10, 0x1000, 4, 1, "x");
	size_t r = dump_begin(&d, 0, 20);          /* a CODE_LOAD too short for its fields */
	put(&d, 0, 8);
	dump_end(&d, r);
	move(&d, 30, 0x9000, 0xa000, 99);     /* an index no load had */
	r = dump_begin(&d, 1, 40);                 /* a CODE_MOVE too short */
	dump_end(&d, r);
	r = dump_begin(&d, 77, 5);                 /* unknown id, out of order */
	dump_end(&d, r);
	struct timeline_opts o;
	timeline_opts_init(&o);
	o.warmup_pct = 0;
	json_t *doc = build(&d, &o);
	assert_non_null(doc);
	assert_int_equal(u(doc, "loads"), 2);
	assert_int_equal(u(doc, "bad_loads"), 1);
	assert_int_equal(u(doc, "moves"), 2);
	assert_int_equal(u(doc, "bad_moves"), 1);
	assert_int_equal(u(doc, "out_of_order"), 1);
	assert_int_equal(u(doc, "start"), 5);
	assert_int_equal(u(doc, "span"), 35);
	const json_t *late = json_object_get(doc, "late");
	assert_string_equal(doc_get_str(at(late, "list", 1), "name"), "(malformed record)");
	assert_string_equal(doc_get_str(at(json_object_get(doc, "moved"), "list", 0), "name"), "(code_index 99)");
	json_decref(doc);
}

static void test_timeline__errors_and_truncation(void **state)
{
	(void)state;
	struct dump d;
	struct timeline_opts o;
	timeline_opts_init(&o);
	header(&d, 0, 0);
	d.b[0] = 'X';
	assert_null(build(&d, &o));
	assert_string_equal(dg.msg, "t.dump: byte 0: not a jitdump file: expected the magic 'JiTD' or 'DTiJ'");
	header(&d, 0, 0);
	load(&d, 10, 0x1000, 4, 1, "x");
	size_t r = d.n;
	dump_begin(&d, 0, 20);
	d.b[r + 4] = 8;   /* record size 8 */
	assert_null(build(&d, &o));
	assert_int_equal(strncmp(dg.msg, "t.dump: byte 102: record size 8", 31), 0);
	sample(&d, 0, 0);
	d.n -= 5;   /* the CLOSE record cut off */
	json_t *doc = build(&d, &o);
	assert_non_null(doc);
	assert_int_equal(u(doc, "truncated_bytes"), 11);
	assert_int_equal(u(doc, "loads"), 5);
	assert_int_equal(u(doc, "span"), 90);
	json_decref(doc);
	header(&d, 0, 0);   /* no records at all */
	doc = build(&d, &o);
	assert_non_null(doc);
	assert_int_equal(u(doc, "span"), 0);
	assert_int_equal(u(at(doc, "buckets", 0), "loads"), 0);
	json_decref(doc);
}

static void test_timeline__clean_name(void **state)
{
	(void)state;
	const char *in = "ok \xc3\xa9 \x01 \xff \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98\x80";
	char *s = doc_clean_utf8(in, strlen(in));
	assert_string_equal(s, "ok \xc3\xa9 \\x01 \\xff \\xe2\\x82 \\xed\\xa0\\x80 \xf0\x9f\x98\x80");
	free(s);
}

static void test_timeline__text_and_svg(void **state)
{
	(void)state;
	struct dump d;
	sample(&d, 0, 0);
	load(&d, 1100, 0x8000, 4, 6, "<&\"x\">");
	struct timeline_opts o;
	timeline_opts_init(&o);
	o.buckets = 5;
	json_t *doc = build(&d, &o);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	timeline_text_render(doc, f);
	fclose(f);
	assert_non_null(strstr(buf, "t.dump: pid 777, 6 code loads (56 bytes), 2 moves over 0.100 us\n"));
	assert_non_null(strstr(buf, "clock: CLOCK_MONOTONIC nanoseconds"));
	assert_non_null(strstr(buf, "warm-up: 10% of the span = 0.010 us; after it: 4 loads (66.7%) of 4 functions, 32 bytes\n"));
	assert_non_null(strstr(buf, "      2  0.000 us, 0.020 us"));
	assert_non_null(strstr(buf, "Moved (CODE_MOVE): 2 moves of 1 functions\n"));
	free(buf);
	f = open_memstream(&buf, &n);
	timeline_svg_render(doc, f);
	fclose(f);
	assert_int_equal(strncmp(buf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44), 0);
	assert_non_null(strstr(buf, "&lt;&amp;&quot;x&quot;&gt;"));
	assert_null(strstr(buf, "<&"));
	assert_non_null(strstr(buf, "</svg>\n"));
	free(buf);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline__buckets_late_recompiled_moved),
		cmocka_unit_test(test_timeline__json_parsed_back),
		cmocka_unit_test(test_timeline__warmup_seconds_top_and_ticks),
		cmocka_unit_test(test_timeline__malformed_and_unknown),
		cmocka_unit_test(test_timeline__errors_and_truncation),
		cmocka_unit_test(test_timeline__clean_name),
		cmocka_unit_test(test_timeline__text_and_svg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
