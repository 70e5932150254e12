/* Unit tests for the files of other writers (issue 26): the reader's foreign mode
 * (cg_reader_accept_foreign: Xdebug's "calls=1 0 0", summary: after the body, parts without
 * totals:, as pprof writes them) against its strict mode, which augment keeps; and what
 * profile_load() and the report make of them (totals_calculated, summary, units). The
 * profiles are small strings shaped like the files Xdebug 3.2 and go tool pprof write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <string.h>

#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "core/io.h"
#include "helpers.h"
#include "prof_names.h"
#include "report/prof_report.h"
#include "report/profile.h"

/* Xdebug 3.2's shape: positions: line, calls= with a third number, summary: at the end,
 * no totals:, php:: internal functions and {main}; its summary exceeds the cost lines. */
static const char xdebug[] =
	"version: 1\ncreator: xdebug 3.2.0 (PHP 8.2.36)\ncmd: /tmp/a.php\npart: 1\npositions: line\n\n"
	"events: Time_(10ns) Memory_(bytes)\n\n"
	"fl=(1) php:internal\nfn=(1) php::strlen\n4 5 0\n\n"
	"fl=(2) /tmp/a.php\nfn=(2) {main}\n1 100 64\ncfl=(1)\ncfn=(1)\ncalls=1 0 0\n4 5 0\n\n"
	"summary: 120 70\n\n";

/* pprof's shape: instr and line positions, relative and "*" subpositions, calls=0, no
 * totals: or summary:. */
static const char pprof[] =
	"positions: instr line\nevents: cpu(ms)\n\n"
	"ob=(1) prog\nfl=(1) /src/main.go\nfn=(1) main.work\n0x401000 10 30\n+4 * 20\n\n"
	"ob=(1)\nfl=(1)\nfn=(2) main.main\n-8 5 0\ncfl=(1)\ncfn=(1)\ncalls=0 +8 10\n* * 50\n";

/* Reads TEXT to its end, in foreign mode or not. Returns cg_reader_next's last result;
 * *SUMMARY gets the costs of a summary: record (or NULL), D the error. */
static int read_all(const char *text, int foreign, uint64_t *summary, struct diag *d)
{
	char *path = tmp_file(text);
	struct input *in = input_open(path, d);
	assert_non_null(in);
	struct cg_reader *r = cg_reader_new(in, 1 << 20);
	if (foreign)
		cg_reader_accept_foreign(r);
	struct cg_record rec;
	int rc;
	while ((rc = cg_reader_next(r, &rec, d)) == 1)
		if (rec.kind == CG_HEADER && rec.key == HK_SUMMARY && summary) {
			assert_true(foreign ? rec.costs != NULL : rec.costs == NULL);
			if (rec.costs)
				memcpy(summary, rec.costs, cg_reader_nevents(r) * sizeof(*summary));
		}
	cg_reader_free(r);
	input_close(in);
	unlink(path);
	free(path);
	return rc;
}

static void test_foreign__strict_refuses_foreign_reads(void **state)
{
	(void)state;
	struct diag d = { 0 };
	assert_int_equal(read_all(xdebug, 0, NULL, &d), -1);
	if (!strstr(d.msg, ":18: unexpected text after the call target position, got 'calls=1 0 0'"))
		fail_msg("%s", d.msg);
	d = (struct diag){ 0 };
	uint64_t sum[2] = { 0, 0 };
	assert_int_equal(read_all(xdebug, 1, sum, &d), 0);
	assert_false(d.set);
	assert_int_equal(sum[0], 120);
	assert_int_equal(sum[1], 70);

	d = (struct diag){ 0 };
	assert_int_equal(read_all(pprof, 0, NULL, &d), -1);
	assert_non_null(strstr(d.msg, "the file ends inside part 1: expected 'totals:'"));
	d = (struct diag){ 0 };
	assert_int_equal(read_all(pprof, 1, NULL, &d), 0);
	assert_false(d.set);
}

/* What stays refused in foreign mode: text that is not a callgrind line, a cut line, a
 * totals: that does not add up, a calls= without its cost line. */
static void test_foreign__errors_stay(void **state)
{
	(void)state;
	static const char *bad[][2] = {
		{ "events: Ir\nfn=(1) a\n1 2\nbogus line\n", "expected a callgrind line" },
		{ "events: Ir\nfn=(1) a\n1 2\n", NULL },   /* a clean end without totals: */
		{ "events: Ir\nfn=(1) a\n1 2", "the last line has no newline" },
		{ "events: Ir\nfn=(1) a\n1 2\ntotals: 3\n", "'totals:' gives 3 for event Ir" },
		{ "events: Ir\nfn=(1) a\ncfn=(2) b\ncalls=1 0 0\n", "the file ends after 'calls=1 0 0'" },
		{ "events: Ir\nfn=(1) a\ncfn=(2) b\ncalls=x 0\n1 1\n", "expected 'calls=COUNT TARGET-POSITION'" },
		{ "events: Ir\nfn=(1) a\n 1 2\n", "unexpected leading whitespace" },
		/* callgrind's own file cut at a line's end: its totals: are missing, not calculated */
		{ "creator: callgrind-3.19.0\nevents: Ir\nfn=(1) a\n1 2\n", "the file ends inside part 1: expected 'totals:'" },
		{ "creator: callgrind-3.19.0\nevents: Ir\nfn=(1) a\n1 2\nsummary: 2\n", "'summary: 2' starts a new part" },
		/* callgrind's own file: Xdebug's extra numbers after a call target are refused */
		{ "creator: callgrind-3.19.0\nevents: Ir\nfn=(1) a\ncfn=(2) b\ncalls=1 0 0\n1 1\ntotals: 1\n",
		  "unexpected text after the call target position" },
		/* Xdebug writes summary: last: without it the file is cut short */
		{ "creator: xdebug 3.2.0 (PHP 8.2.36)\nevents: Time_(10ns)\nfl=(1) a.php\nfn=(1) f\n1 5\n",
		  ":6: the file ends inside part 1 without 'summary:', which Xdebug writes last (file truncated?)" },
		/* one summary: per part */
		{ "events: Ir\nfn=(1) a\n1 2\nsummary: 2\nsummary: 2\n", ":6: a second 'summary:' line in part 1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct diag d = { 0 };
		char text[256];   /* version: tells it from cachegrind's output, as Xdebug's does */
		snprintf(text, sizeof(text), "version: 1\n%s", bad[i][0]);
		int rc = read_all(text, 1, NULL, &d);
		if (!bad[i][1]) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -1);
		if (!strstr(d.msg, bad[i][1]))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.msg, bad[i][1]);
	}
}

/* A part without totals: ends where the next part's header begins (kcachegrind's rule). */
static void test_foreign__parts_without_totals(void **state)
{
	(void)state;
	static const char two[] =
		"events: Ir\nfn=(1) a\n1 2\npart: 2\nevents: Ir\nfn=(1) b\n1 5\ntotals: 5\n";
	char *path = tmp_file(two);
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.parts, 2);
	assert_int_equal(p.totals[0], 7);
	assert_true(p.totals_calculated);   /* part 1 gives none */
	assert_null(p.summary);
	profile_free(&p);
	o.part = 2;   /* part 2 alone gives its totals */
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.totals[0], 5);
	assert_false(p.totals_calculated);
	profile_free(&p);
	unlink(path);
	free(path);
}

static void test_foreign__profile_and_report(void **state)
{
	(void)state;
	char *path = tmp_file(xdebug);
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.totals[0], 105);   /* the cost lines' sum */
	assert_false(p.totals_calculated);    /* a summary: line is given */
	assert_non_null(p.summary);
	assert_int_equal(p.summary[0], 120);
	assert_int_equal(p.summary[1], 70);
	json_t *doc = prof_report_build(&p, 0, 5);
	assert_true(json_is_false(json_object_get(doc, "totals_calculated")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "Time_(10ns)")), 120);
	json_t *units = json_object_get(doc, "units");
	assert_string_equal(json_string_value(json_object_get(units, "Time_(10ns)")), "10ns");
	assert_string_equal(json_string_value(json_object_get(units, "Memory_(bytes)")), "bytes");
	json_decref(doc);
	profile_free(&p);
	unlink(path);
	free(path);

	path = tmp_file(pprof);
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.totals[0], 50);
	assert_true(p.totals_calculated);
	assert_null(p.summary);
	doc = prof_report_build(&p, 0, 5);
	assert_true(json_is_true(json_object_get(doc, "totals_calculated")));
	assert_true(json_is_null(json_object_get(doc, "summary")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "units"), "cpu(ms)")), "ms");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	prof_report_render(doc, f, 0);
	fclose(f);
	if (!strstr(buf, "total     cpu(ms)           50.000 ms (calculated)\n"))   /* in its unit */
		fail_msg("%s", buf);
	free(buf);
	json_decref(doc);
	/* calls=0 (pprof knows no counts) is a call: its cost is main.main's inclusive, not self */
	for (size_t i = 0; i < p.nfns; i++)
		if (!strcmp(fn_name(&p, i), "main.main")) {
			assert_int_equal(profile_self(&p, i)[0], 0);
			assert_int_equal(profile_incl(&p, i)[0], 50);
		}
	profile_free(&p);
	unlink(path);
	free(path);

	/* callgrind's own events name no unit */
	path = tmp_file("events: Ir\nfn=(1) a\n1 2\ntotals: 2\n");
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	doc = prof_report_build(&p, 0, 5);
	assert_int_equal(json_object_size(json_object_get(doc, "units")), 0);
	assert_true(json_is_false(json_object_get(doc, "totals_calculated")));
	json_decref(doc);
	profile_free(&p);
	unlink(path);
	free(path);
}

/* positions: line with "*", "+N" and "-N", as callgrind_annotate resolves them
 * (s/^\+(\d+)/$prev_line_num+$1/e and the like), in foreign mode, on calls too */
static void test_foreign__relative_line_positions(void **state)
{
	(void)state;
	static const char text[] = "version: 1\npositions: line\nevents: Ir\nfn=(1) f\n10 1\n+5 2\n* 3\n-12 4\n"
				   "cfn=(2) g\ncalls=1 +7 0\n* 9\n+1 5\nfn=(2)\n10 9\n";
	static const uint64_t want_pos[] = { 10, 15, 15, 3, 3, 4, 10 };
	char *path = tmp_file(text);
	struct diag d = { 0 };
	struct input *in = input_open(path, &d);
	struct cg_reader *r = cg_reader_new(in, 1 << 20);
	cg_reader_accept_foreign(r);
	struct cg_record rec;
	size_t n = 0;
	while (cg_reader_next(r, &rec, &d) == 1) {
		if (rec.kind != CG_COST && rec.kind != CG_CALL)
			continue;
		assert_true(n < sizeof(want_pos) / sizeof(want_pos[0]));
		assert_int_equal(rec.pos[0], want_pos[n]);
		if (rec.kind == CG_CALL)
			assert_int_equal(rec.target[0], 10);   /* +7 from the base 3 */
		n++;
	}
	assert_false(d.set);
	assert_int_equal(n, sizeof(want_pos) / sizeof(want_pos[0]));
	cg_reader_free(r);
	input_close(in);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign__strict_refuses_foreign_reads),
		cmocka_unit_test(test_foreign__errors_stay),
		cmocka_unit_test(test_foreign__parts_without_totals),
		cmocka_unit_test(test_foreign__profile_and_report),
		cmocka_unit_test(test_foreign__relative_line_positions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
