/* Unit tests for budget.c (the YAML budget file: every key, value forms, and the error
 * messages with line and column) and prof_check.c (each verdict: held, exceeded by the
 * hard or the soft limit, missing, skipped; globs; baseline matching across pids; the
 * budget/profile mismatches; limits under a focus, of the file, of a limit or of the
 * command line; JIT functions only; the names suggested for a limit that matches
 * nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <string.h>

#include "report/budget.h"
#include "core/diag.h"
#include "helpers.h"
#include "report/prof_check.h"
#include "report/prof_scope.h"
#include "report/profile.h"

static int load_budget(struct budget *b, const char *text, struct diag *d)
{
	char *path = tmp_file(text);
	int rc = budget_load(b, path, d);
	unlink(path);
	free(path);
	return rc;
}

/* The message without the temporary file's name. */
static const char *msg_after_path(const struct diag *d)
{
	const char *s = strchr(d->msg, ':');
	assert_non_null(s);
	return s + 1;
}

static void expect_error(const char *text, const char *where_and_what)
{
	struct budget b;
	struct diag d = { 0 };
	assert_int_equal(load_budget(&b, text, &d), -1);
	if (!strstr(msg_after_path(&d), where_and_what))
		fail_msg("for\n%.300s\nexpected '%s' in '%s'", text, where_and_what, d.msg);
	budget_free(&b);
}

static void test_check__budget_file(void **state)
{
	(void)state;
	struct budget b;
	struct diag d = { 0 };
	assert_int_equal(load_budget(&b,
		"version: 1\n"
		"event: Dr\n"
		"total:\n"
		"  - hard: 2_500_000\n"
		"  - event: Ir\n"
		"    soft: -2.5%\n"
		"functions:\n"
		"  - name: 'JS:*f a.js:1'\n"
		"    object: 'perf-*.map'\n"
		"    file: '*.js'\n"
		"    cost: inclusive\n"
		"    hard: 1.5k\n"
		"    soft: 10\n"
		"  - glob: 'g*'\n"
		"    required: false\n"
		"    hard: 3M\n", &d), 0);
	assert_int_equal(b.n, 4);
	assert_string_equal(b.event, "Dr");
	const struct budget_limit *l = b.limits;
	assert_int_equal(l[0].kind, BUDGET_TOTAL);
	assert_null(l[0].event);
	assert_int_equal(l[0].event_at.line, 2);   /* the file's event, for messages */
	assert_true(l[0].has_hard);
	assert_int_equal(l[0].hard, 2500000);
	assert_false(l[0].has_soft);
	assert_string_equal(l[1].event, "Ir");
	assert_true(l[1].has_soft);
	assert_true(l[1].soft == -2.5);
	assert_int_equal(l[1].at.line, 5);
	assert_int_equal(l[2].kind, BUDGET_FUNCTION);
	assert_string_equal(l[2].name, "JS:*f a.js:1");
	assert_null(l[2].glob);
	assert_string_equal(l[2].object, "perf-*.map");
	assert_string_equal(l[2].file, "*.js");
	assert_int_equal(l[2].cost, BUDGET_INCLUSIVE);
	assert_int_equal(l[2].hard, 1500);
	assert_true(l[2].soft == 10);
	assert_true(l[2].required);
	assert_string_equal(l[3].glob, "g*");
	assert_int_equal(l[3].cost, BUDGET_SELF);
	assert_false(l[3].required);
	assert_int_equal(l[3].hard, 3000000);
	budget_free(&b);
}

/* Costs with suffixes are exact: no double on the way (4.1 * 1e6 is 4099999.999...). */
static void test_check__budget_costs(void **state)
{
	(void)state;
	static const struct { const char *text; uint64_t want; } cases[] = {
		{ "4.1M", 4100000 }, { "0.3k", 300 }, { "1.005k", 1005 }, { "7G", 7000000000 },
		{ "2_500_000", 2500000 }, { "1_0.5_5M", 10550000 }, { "9223372036854775807", INT64_MAX },
		{ "9.223372036854775807G", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[96];
		snprintf(text, sizeof(text), "total: {hard: %s}\n", cases[i].text);
		struct budget b;
		struct diag d = { 0 };
		int rc = load_budget(&b, text, &d);
		if (cases[i].want) {
			if (rc != 0)
				fail_msg("'%s': %s", cases[i].text, d.msg);
			assert_int_equal(b.limits[0].hard, cases[i].want);
		} else {
			assert_int_equal(rc, -1);   /* more fraction digits than the suffix has zeros */
		}
		budget_free(&b);
	}
}

static void test_check__budget_errors(void **state)
{
	(void)state;
	expect_error("total: {hard: 12x}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {hard: 1.5}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {hard: -1}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {hard: 1.2345k}\n", "1:15: 'hard' takes a cost");   /* not whole */
	expect_error("total: {hard: 1.M}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {hard: 9223372036854775808}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {hard: 9300000000G}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {soft: -100%}\n", "1:15: 'soft' takes a change in percent");
	/* above a 10001-fold growth: no meaning, and past 2^64 % (1e17, 1e20) the limit used
	 * to be converted out of range */
	expect_error("total: {soft: 1000000.001}\n", "1:15: 'soft' takes a change in percent");
	expect_error("total: {soft: 100000000000000000000%}\n", "1:15: 'soft' takes a change in percent");
}

/* The grammar of docs/reports.md section 4, no looser: '_' only between two digits,
 * percentages in decimal (strtod() alone took " 5", 0x10 as 16 and 1e3). */
static void test_check__budget_number_grammar(void **state)
{
	(void)state;
	static const char *const bad_hard[] = {
		"1_", "_1", "1__0", "1_.5M", "1._5M", "1.5_M", ".5M", "5.M", "_", "1 000", " 1", "1 ",
		"+1", "0x10", "1e3", "1.5m", "1Mk", "M", "1_k",
	};
	for (size_t i = 0; i < sizeof(bad_hard) / sizeof(bad_hard[0]); i++) {
		char text[96];
		snprintf(text, sizeof(text), "total: {hard: '%s'}\n", bad_hard[i]);
		expect_error(text, "1:15: 'hard' takes a cost");
	}
	/* a NUL byte (YAML's "\0") ends a C string early: "5\0x" was the cost 5 */
	expect_error("total: {hard: \"5\\0x\"}\n", "1:15: 'hard' takes a cost");
	expect_error("total: {soft: \"5\\0x\"}\n", "1:15: 'soft' takes a change in percent");
	expect_error("functions: [{name: \"f\\0g\", hard: 1}]\n", "1:20: 'name' takes a non-empty string");
	static const char *const bad_soft[] = {
		"0x10", " 5", "5 ", "5 %", "1e3", "1E3", "inf", "nan", ".5", "5.", "+-5", "--5", "5%%",
		"%", "", "5_0", "1,5", "0x1p3", "+.5%",
	};
	for (size_t i = 0; i < sizeof(bad_soft) / sizeof(bad_soft[0]); i++) {
		char text[96];
		snprintf(text, sizeof(text), "total: {soft: '%s'}\n", bad_soft[i]);
		expect_error(text, "1:15: 'soft' takes a change in percent");
	}
	static const struct { const char *text; double want; } good_soft[] = {
		{ "5", 5 }, { "5%", 5 }, { "+5%", 5 }, { "-2.5%", -2.5 }, { "0.25", 0.25 },
		{ "-99.999%", -99.999 }, { "007", 7 }, { "0", 0 }, { "1000000%", 1000000 },
	};
	for (size_t i = 0; i < sizeof(good_soft) / sizeof(good_soft[0]); i++) {
		char text[96];
		snprintf(text, sizeof(text), "total: {soft: '%s'}\n", good_soft[i].text);
		struct budget b;
		struct diag d = { 0 };
		if (load_budget(&b, text, &d) != 0)
			fail_msg("'%s': %s", good_soft[i].text, d.msg);
		assert_true(b.limits[0].soft == good_soft[i].want);
		budget_free(&b);
	}
	expect_error("total:\n  hardd: 1\n", "2:3: unknown key 'hardd' in a total limit");
	expect_error("total:\n  name: x\n  hard: 1\n", "2:3: unknown key 'name' in a total limit");
	expect_error("functions:\n  - {name: a, glob: b, hard: 1}\n", "2:5: a function limit takes name or glob, not both");
	expect_error("functions:\n  - {hard: 1}\n", "2:5: a function limit needs name (exact) or glob");
	expect_error("functions:\n  - name: a\n", "2:5: a limit needs hard (a cost) or soft");
	expect_error("functions:\n  - {name: a, hard: 1, hard: 2}\n", "2:24: 'hard' is given twice");
	expect_error("functions: {name: a, hard: 1}\n", "1:12: 'functions' takes a list of limits");
	expect_error("functions:\n  - {name: a, cost: total, hard: 1}\n", "2:21: 'cost' takes self or inclusive");
	expect_error("functions:\n  - {name: a, required: maybe, hard: 1}\n", "2:25: 'required' takes true or false");
	expect_error("version: 2\n", "1:10: this cgjit reads budget files of version 1");
	expect_error("limits: []\n", "1:1: unknown key 'limits'");
	expect_error("version: 1\n", "1:1: the budget sets no limit");
	expect_error("- total\n", "1:1: a budget file is a mapping");
	expect_error("total: [\n", "2:1: not valid YAML");
	expect_error("", "empty");
	expect_error("event: ''\ntotal: {hard: 1}\n", "1:8: 'event' takes a non-empty string");
}

/* A budget of PREFIX, N copies of PIECE (an '@' in it replaced by the copy's number) and
 * SUFFIX, malloc'd. */
static char *repeat(const char *prefix, const char *piece, int n, const char *suffix)
{
	size_t cap = strlen(prefix) + (size_t)n * (strlen(piece) + 12) + strlen(suffix) + 1, k;
	char *text = malloc(cap);
	assert_non_null(text);
	const char *at = strchr(piece, '@');
	int head = at ? (int)(at - piece) : (int)strlen(piece);
	k = (size_t)snprintf(text, cap, "%s", prefix);
	for (int i = 0; i < n; i++)
		k += (size_t)(at ? snprintf(text + k, cap - k, "%.*s%d%s", head, piece, i, at + 1)
			      : snprintf(text + k, cap - k, "%s", piece));
	snprintf(text + k, cap - k, "%s", suffix);
	return text;
}

static void expect_error_free(char *text, const char *where_and_what)
{
	expect_error(text, where_and_what);
	free(text);
}

static void expect_loads(char *text, size_t limits)
{
	struct budget b;
	struct diag d = { 0 };
	if (load_budget(&b, text, &d) != 0)
		fail_msg("for\n%.300s\nunexpected: %s", text, d.msg);
	assert_int_equal(b.n, limits);
	budget_free(&b);
	free(text);
}

/* Budgets made to be slow for libyaml. Its scanner works in proportion to the flow depth
 * for every token (1 MiB of '[' took about 20 minutes): the depth is bounded before the
 * loader runs, on libyaml's own events, so quotes, comments and block scalars count as
 * libyaml reads them. */
static void test_check__budget_nesting(void **state)
{
	(void)state;
	/* 32 levels are read (and then refused for what they are), 33 are not */
	expect_error_free(repeat("", "[", 32, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"), "1:1: a budget file is a mapping");
	expect_error_free(repeat("", "[", 33, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"), "1:33: nested deeper than 32 levels");
	expect_error_free(repeat("total: ", "{a: ", 40, ""), "1:132: nested deeper than 32 levels");
	/* block collections count as well: sequences in sequences, mappings by indentation */
	expect_error_free(repeat("", "- ", 40, "x\n"), "1:65: nested deeper than 32 levels");
	char indented[2048];
	size_t k = 0;
	for (int i = 0; i < 40; i++)
		k += (size_t)snprintf(indented + k, sizeof(indented) - k, "%*sa:\n", i, "");
	expect_error(indented, "33:33: nested deeper than 32 levels");
	/* brackets in quotes, comments and block scalars are text */
	expect_loads(repeat("functions:\n  - name: '", "[", 100, "'\n    hard: 1\n"), 1);
	expect_loads(repeat("functions:\n  - name: \"", "{", 100, "\"\n    hard: 1\n"), 1);
	expect_loads(repeat("total: {hard: 1}  # ", "[", 1 << 19, "\n"), 1);
	expect_loads(repeat("functions:\n  - hard: 1\n    name: |\n      ", "[", 100, "\n"), 1);
}

/* libyaml's loader compares every anchor with every earlier one (1 MiB of anchors took 20
 * s): 64 are read, the 65th is refused where it is. */
static void test_check__budget_anchors(void **state)
{
	(void)state;
	expect_loads(repeat("functions:\n", "  - &a@ {name: f, hard: 1}\n", 64, ""), 64);
	expect_error_free(repeat("functions:\n", "  - &a@ {name: f, hard: 1}\n", 65, ""),
			  "66:5: more than 64 anchors");
}

/* One document: a second one is refused where it starts, whatever it holds (libyaml's
 * loader reads one document per call, and the rest went unread: limits in it, even YAML
 * errors, were ignored). */
static void test_check__budget_one_document(void **state)
{
	(void)state;
	expect_error("total: {hard: 1}\n---\ntotal: {hard: 0}\n", "2:1: a budget file is one YAML document");
	expect_error("total: {hard: 1}\n--- [\n", "2:1: a budget file is one YAML document");
	expect_error("total: {hard: 1}\n---\n", "2:1: a budget file is one YAML document");
	/* after '...' libyaml wants '---': the syntax error of the second document is reported */
	expect_error("total: {hard: 1}\n...\ntotal: {hard: 0}\n", "3:1: not valid YAML: did not find expected <document start>");
	expect_loads(strdup("--- \ntotal: {hard: 1}\n...\n"), 1);
	expect_loads(strdup("%YAML 1.1\n---\ntotal: {hard: 1}\n"), 1);
}

/* At most 1 MiB, to the byte (a file read in growing steps passed 1 MiB up to 2 MiB). */
static void test_check__budget_size(void **state)
{
	(void)state;
	const char *head = "total: {hard: 1}\n#";
	char *text = repeat(head, "x", (1 << 20) - (int)strlen(head) - 1, "\n");
	assert_int_equal(strlen(text), 1 << 20);
	expect_loads(text, 1);
	text = repeat(head, "x", (1 << 20) - (int)strlen(head), "\n");
	expect_error_free(text, " larger than 1048576 bytes: not a budget file");
}

/* Keys are checked one by one: the first unknown key is reported without comparing every
 * pair of 100000 keys first (that took minutes; the repeat at the end is never reached). */
static void test_check__budget_many_keys(void **state)
{
	(void)state;
	expect_error_free(repeat("", "k@: 1\n", 100000, "k0: 1\n"), "1:1: unknown key 'k0'");
	expect_error_free(repeat("total:\n  hard: 1\n", "  k@: 1\n", 80000, ""),
			  "3:3: unknown key 'k0' in a total limit");
	expect_error("total: {hardd: 1, hardd: 2}\n", "1:9: unknown key 'hardd'");
}

static uint32_t fn(struct profile_builder *b, const char *obj, const char *name)
{
	return profile_builder_fn(b, &(struct prof_fn_key){ obj, strlen(obj), "a.js", 4, name, strlen(name) });
}

/* main (self 10) calls f (self 100) and g1 (self 40), g1 calls g2 (self 20). F_SELF changes
 * f's cost between runs; OBJ is the JIT object, whose name carries the pid. */
/* main calls F_NAME and g1, g1 calls g2 */
static void build_named(struct profile *p, const char *path, const char *obj, uint64_t f_self,
			const char *f_name)
{
	static const char *const ev[] = { "Ir", "Dr" };
	memset(p, 0, sizeof(*p));
	struct profile_builder *b = profile_builder_new(p, 2, ev);
	p->path = strdup(path);
	uint32_t m = fn(b, "/bin/node", "main"), f = fn(b, obj, f_name), g1 = fn(b, obj, "g1"),
		 g2 = fn(b, obj, "g2");
	uint64_t v[2];
	v[0] = 10; v[1] = 1; profile_builder_self(b, m, v);
	v[0] = f_self; v[1] = 2; profile_builder_self(b, f, v);
	v[0] = 40; v[1] = 3; profile_builder_self(b, g1, v);
	v[0] = 20; v[1] = 4; profile_builder_self(b, g2, v);
	v[0] = f_self; v[1] = 2; profile_builder_call(b, m, f, 1, v);
	v[0] = 60; v[1] = 7; profile_builder_call(b, m, g1, 1, v);
	v[0] = 20; v[1] = 4; profile_builder_call(b, g1, g2, 1, v);
	profile_builder_finish(b);
}

static void build(struct profile *p, const char *path, const char *obj, uint64_t f_self)
{
	build_named(p, path, obj, f_self, "f");
}

static json_t *check(const char *budget_text, const struct profile *p, const struct profile *base,
		     int *bad, struct diag *d)
{
	struct budget b;
	assert_int_equal(load_budget(&b, budget_text, d), 0);
	json_t *doc = prof_check_build(&b, p, base, NULL, bad, d);
	budget_free(&b);
	return doc;
}

static const json_t *result(const json_t *doc, size_t i)
{
	const json_t *r = json_array_get(json_object_get(doc, "results"), i);
	assert_non_null(r);
	return r;
}

static void expect_result(const json_t *doc, size_t i, const char *verdict, json_int_t value,
			  const char *over)
{
	const json_t *r = result(doc, i);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), verdict);
	if (value >= 0)
		assert_int_equal(json_integer_value(json_object_get(r, "value")), value);
	else
		assert_true(json_is_null(json_object_get(r, "value")));
	const json_t *x = json_object_get(r, "exceeded");
	char got[32] = "";
	size_t k;
	json_t *s;
	json_array_foreach(x, k, s) {
		strcat(got, k ? "," : "");
		strcat(got, json_string_value(s));
	}
	assert_string_equal(got, over);
}

static void test_check__verdicts(void **state)
{
	(void)state;
	struct profile base, slow;
	build(&base, "base.out", "/tmp/perf-100.map", 100);
	build(&slow, "slow.out", "/tmp/perf-200.map", 130);   /* total 170 -> 200 */
	const char *budget =
		"total:\n"
		"  - {hard: 250, soft: 10%}\n"       /* 200 <= 250; 200 > 187 */
		"  - {event: Dr, hard: 9}\n"         /* Dr total 10 */
		"functions:\n"
		"  - {name: f, hard: 130, soft: 30%}\n" /* 130 <= 130 and <= 130 */
		"  - {name: f, soft: 29.9%}\n"        /* 130 > 129.9 */
		"  - {glob: 'g*', cost: inclusive, hard: 59}\n" /* g1 60 over, g2 20 */
		"  - {name: nosuch, hard: 1}\n"
		"  - {glob: 'nosuch*', hard: 1, required: false}\n"
		"  - {name: main, object: 'perf-*', hard: 1}\n"  /* main is in /bin/node */
		"  - {name: g2, file: '*.c', hard: 1}\n"
		"  - {glob: 'g*', sum: true, hard: 59, soft: 0%}\n"; /* 40 + 20, base 60 */
	struct diag d = { 0 };
	int bad = -1;
	json_t *doc = check(budget, &slow, &base, &bad, &d);
	assert_non_null(doc);
	expect_result(doc, 0, "exceeded", 200, "soft");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 0), "soft_limit")), 187);
	assert_int_equal(json_integer_value(json_object_get(result(doc, 0), "baseline_value")), 170);
	expect_result(doc, 1, "exceeded", 10, "hard");
	assert_string_equal(json_string_value(json_object_get(result(doc, 1), "event")), "Dr");
	expect_result(doc, 2, "held", 130, "");     /* matched across perf-100 / perf-200 */
	assert_int_equal(json_integer_value(json_object_get(result(doc, 2), "baseline_value")), 100);
	expect_result(doc, 3, "exceeded", 130, "soft");
	expect_result(doc, 4, "exceeded", 60, "hard");
	assert_string_equal(json_string_value(json_object_get(json_object_get(result(doc, 4), "function"), "name")), "g1");
	assert_true(json_is_true(json_object_get(json_object_get(result(doc, 4), "function"), "jit")));
	expect_result(doc, 5, "held", 20, "");
	assert_string_equal(json_string_value(json_object_get(json_object_get(result(doc, 5), "function"), "name")), "g2");
	expect_result(doc, 6, "missing", -1, "");
	expect_result(doc, 7, "skipped", -1, "");
	expect_result(doc, 8, "missing", -1, "");   /* object pattern excludes it */
	expect_result(doc, 9, "missing", -1, "");   /* file pattern excludes it */
	expect_result(doc, 10, "exceeded", 60, "hard");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 10), "functions")), 2);
	assert_int_equal(json_integer_value(json_object_get(result(doc, 10), "baseline_value")), 60);
	assert_int_equal(json_array_size(json_object_get(doc, "results")), 11);
	assert_false(prof_check_passed(doc));
	assert_int_equal(json_integer_value(json_object_get(doc, "held")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "exceeded")), 5);
	assert_int_equal(json_integer_value(json_object_get(doc, "missing")), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "skipped")), 1);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	prof_check_render(doc, f, 0);
	fclose(f);
	assert_non_null(strstr(text, "result    FAILED: 2 held, 5 exceeded, 3 missing, 1 skipped\n"));
	assert_non_null(strstr(text, "\nEXCEEDED  Dr   "));
	assert_non_null(strstr(text, "  g* (self, sum of 2)  ["));
	assert_non_null(strstr(text, "  nosuch (self)  [")); /* missing: the name it looked for */
	free(text);
	f = open_memstream(&text, &len);
	prof_check_render(doc, f, 1);
	fclose(f);
	assert_non_null(strstr(text, "## Budget check: **failed**"));
	assert_non_null(strstr(text, "| ❌ exceeded | `g1` (inclusive) **JIT** | Ir | 60 | 59 | 60 | - | +0.00% | 7 |\n"));
	free(text);
	json_decref(doc);

	/* without a baseline a soft-only limit is skipped, and a passing budget passes */
	doc = check("total: {soft: 1%}\nfunctions:\n  - {name: f, hard: 100, soft: 1%}\n", &base, NULL, &bad, &d);
	assert_non_null(doc);
	expect_result(doc, 0, "skipped", 170, "");
	assert_string_equal(json_string_value(json_object_get(result(doc, 0), "note")), "no --baseline given");
	expect_result(doc, 1, "held", 100, "");
	assert_true(prof_check_passed(doc));
	json_decref(doc);
	profile_free(&base);
	profile_free(&slow);
}

/* The largest soft limit on the largest baseline: a limit past what a cost can be is
 * shown as the largest (INT64_MAX, as every cost is), in JSON and in the text alike. The
 * long double used to be converted to uint64_t out of range (undefined; it gave 0). */
static void test_check__soft_limit_out_of_range(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile base, p;
	const uint64_t huge = (uint64_t)1 << 62, small = 1000;
	const uint64_t *const costs[] = { &huge, &small };
	struct profile *const profs[] = { &base, &p };
	for (int i = 0; i < 2; i++) {
		memset(profs[i], 0, sizeof(*profs[i]));
		struct profile_builder *b = profile_builder_new(profs[i], 1, ev);
		profs[i]->path = strdup(i ? "p.out" : "base.out");
		profile_builder_self(b, fn(b, "/bin/x", "main"), costs[i]);
		profile_builder_finish(b);
	}
	struct diag d = { 0 };
	int bad = -1;
	json_t *doc = check("total: {soft: 1000000%}\nfunctions:\n  - {name: main, soft: 0}\n", &p, &base, &bad, &d);
	assert_non_null(doc);
	expect_result(doc, 0, "held", 1000, "");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 0), "soft_limit")), INT64_MAX);
	expect_result(doc, 1, "held", 1000, "");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 1), "soft_limit")), huge);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	prof_check_render(doc, f, 0);
	fclose(f);
	assert_non_null(strstr(text, "9,223,372,036,854,775,807 (+1e+06%)"));
	free(text);
	json_decref(doc);
	profile_free(&base);
	profile_free(&p);
}

static void test_check__mismatch(void **state)
{
	(void)state;
	struct profile p, other;
	build(&p, "p.out", "/tmp/perf-1.map", 100);
	static const char *const ev[] = { "Ir" };
	memset(&other, 0, sizeof(other));
	profile_builder_finish(profile_builder_new(&other, 1, ev));
	other.path = strdup("other.out");
	struct diag d = { 0 };
	int bad = -1;
	/* an event the profile does not count: the budget's fault, pointing at its event */
	assert_null(check("event: Ticks\ntotal: {hard: 1}\n", &p, NULL, &bad, &d));
	assert_int_equal(bad, 1);
	assert_non_null(strstr(d.msg, ":1:8: event 'Ticks' is not in p.out (it counts 'Ir Dr')"));
	/* the baseline lacks it: the baseline's fault */
	d = (struct diag){ 0 };
	assert_null(check("total: {event: Dr, soft: 1}\n", &p, &other, &bad, &d));
	assert_int_equal(bad, 0);
	assert_non_null(strstr(d.msg, "other.out: the baseline has no event 'Dr', which "));
	profile_free(&p);
	profile_free(&other);
}

static void test_check__budget_focus_key(void **state)
{
	(void)state;
	struct budget b;
	struct diag d = { 0 };
	assert_int_equal(load_budget(&b, "focus: f\ntotal: {hard: 1}\nfunctions:\n"
				     "  - {name: g2, hard: 1, focus: {glob: 'g*', object: 'perf-*', file: '*.js'}}\n"
				     "  - {name: g1, hard: 1}\n", &d), 0);
	assert_string_equal(b.focus->name, "f");
	assert_true(b.limits[0].focus == b.focus && !b.limits[0].own_focus);
	assert_true(b.limits[1].own_focus);
	assert_string_equal(b.limits[1].focus->glob, "g*");
	assert_string_equal(b.limits[1].focus->object, "perf-*");
	assert_string_equal(b.limits[1].focus->file, "*.js");
	assert_int_equal(b.limits[1].focus->at.line, 4);
	assert_true(b.limits[2].focus == b.focus);
	budget_free(&b);
	/* the focus after the limits in the file is still their default */
	assert_int_equal(load_budget(&b, "total: {hard: 1}\nfocus: {name: f}\n", &d), 0);
	assert_true(b.limits[0].focus == b.focus && b.focus);
	budget_free(&b);
	expect_error("focus: {name: a, glob: b}\ntotal: {hard: 1}\n", "1:8: a focus takes name or glob, not both");
	expect_error("focus: {object: x}\ntotal: {hard: 1}\n", "1:8: a focus needs name (exact) or glob (a pattern)");
	expect_error("focus: {nme: a}\ntotal: {hard: 1}\n", "1:9: unknown key 'nme' in a focus (expected: name, glob, object, file)");
	expect_error("focus: [a]\ntotal: {hard: 1}\n", "1:8: 'focus' takes a function's name, or a mapping");
	expect_error("focus: ''\ntotal: {hard: 1}\n", "1:8: 'focus' takes a non-empty string");
	expect_error("total: {hard: 1, focus: {name: a, name: b}}\n", "1:35: 'name' is given twice");
	expect_error("total: {hard: 1, focus: {glob: [7]}}\n", "1:32: 'glob' takes a non-empty string");
	expect_error("total: {hard: 1}\nfocuss: f\n", "2:1: unknown key 'focuss' (expected: version, event, focus, total, functions)");
}

/* Limits under a focus: the file's for every limit, a limit's own, --focus for those without
 * their own; a focus that matches nothing makes its limits missing, with the closest names;
 * --jit-only; a name that matches nothing gets the closest names too. */
static void test_check__focus_verdicts(void **state)
{
	(void)state;
	struct profile base, slow;
	build(&base, "base.out", "/tmp/perf-100.map", 100);
	build(&slow, "slow.out", "/tmp/perf-200.map", 130);
	const char *budget =
		"focus: g1\n"
		"total:\n"
		"  - {hard: 59}\n"                      /* under g1: 60 */
		"  - {hard: 1, focus: nosuch}\n"
		"functions:\n"
		"  - {name: g2, hard: 20, soft: 0%}\n" /* under g1: all of g2 */
		"  - {name: f, hard: 1}\n"              /* f is not under g1 */
		"  - {name: f, hard: 200, soft: 25%, focus: {name: f}}\n"   /* 130 against 100 */
		"  - {name: G2, hard: 1, focus: {glob: '*'}}\n";
	struct diag d = { 0 };
	int bad = -1;
	json_t *doc = check(budget, &slow, &base, &bad, &d);
	assert_non_null(doc);
	expect_result(doc, 0, "exceeded", 60, "hard");
	assert_string_equal(json_string_value(json_object_get(json_object_get(result(doc, 0), "focus"), "pattern")), "g1");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 0), "baseline_value")), 60);
	expect_result(doc, 1, "missing", -1, "");
	assert_non_null(strstr(json_string_value(json_object_get(result(doc, 1), "note")),
			       "slow.out: the focus name 'nosuch' matches no function"));
	expect_result(doc, 2, "held", 20, "");
	expect_result(doc, 3, "missing", -1, "");
	expect_result(doc, 4, "exceeded", 130, "soft");
	assert_int_equal(json_integer_value(json_object_get(result(doc, 4), "baseline_value")), 100);
	assert_string_equal(json_string_value(json_object_get(json_object_get(result(doc, 4), "focus"), "pattern")), "f");
	/* G2 is g2's name in capitals: missing, and g2 suggested */
	expect_result(doc, 5, "missing", -1, "");
	assert_string_equal(json_string_value(json_array_get(json_object_get(result(doc, 5), "suggestions"), 0)), "g2");
	assert_string_equal(json_string_value(json_object_get(result(doc, 5), "note")),
			    "matches no function; did you mean 'g2'?");
	json_decref(doc);

	/* --focus f: the limits without a focus of their own are under f, the file's focus
	 * overruled; --jit-only: main is not matched */
	struct prof_select sel = { .name = "f" };
	struct prof_scope_opts o = { &sel, 1 };
	struct budget b;
	assert_int_equal(load_budget(&b, "focus: g1\ntotal: {hard: 1000}\nfunctions:\n"
				     "  - {glob: '*', hard: 1000}\n  - {name: main, hard: 1}\n", &d), 0);
	doc = prof_check_build(&b, &slow, &base, &o, &bad, &d);
	assert_non_null(doc);
	expect_result(doc, 0, "held", 130, "");
	expect_result(doc, 1, "held", 130, "");   /* f alone is under f */
	assert_string_equal(json_string_value(json_object_get(json_object_get(result(doc, 1), "function"), "name")), "f");
	expect_result(doc, 2, "missing", -1, "");
	const json_t *sc = json_object_get(doc, "scope");
	assert_true(json_is_true(json_object_get(sc, "jit_only")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(sc, "focus"), "pattern")), "f");
	json_decref(doc);
	budget_free(&b);

	/* a focus the baseline does not have: soft limits skipped, saying so */
	struct profile other;
	build_named(&other, "other.out", "/tmp/perf-300.map", 100, "F");   /* f renamed in the baseline */
	assert_int_equal(load_budget(&b, "total: {soft: 5%, focus: f}\n", &d), 0);
	doc = prof_check_build(&b, &slow, &other, NULL, &bad, &d);
	expect_result(doc, 0, "skipped", 130, "");
	assert_string_equal(json_string_value(json_object_get(result(doc, 0), "note")),
			    "the focus matches nothing in the baseline");
	json_decref(doc);
	budget_free(&b);
	profile_free(&other);
	profile_free(&base);
	profile_free(&slow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check__budget_file),
		cmocka_unit_test(test_check__budget_costs),
		cmocka_unit_test(test_check__budget_errors),
		cmocka_unit_test(test_check__budget_number_grammar),
		cmocka_unit_test(test_check__budget_nesting),
		cmocka_unit_test(test_check__budget_anchors),
		cmocka_unit_test(test_check__budget_one_document),
		cmocka_unit_test(test_check__budget_many_keys),
		cmocka_unit_test(test_check__budget_size),
		cmocka_unit_test(test_check__verdicts),
		cmocka_unit_test(test_check__soft_limit_out_of_range),
		cmocka_unit_test(test_check__mismatch),
		cmocka_unit_test(test_check__budget_focus_key),
		cmocka_unit_test(test_check__focus_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
