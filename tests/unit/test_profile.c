/* Unit tests for profile.c and profile_read.c (the per-function model behind report and
 * diff: self, inclusive with recursion and cycles, parts, folding, cachegrind) and for the
 * documents of prof_report.c and prof_diff.c, parsed back as JSON (jansson) and YAML
 * (libyaml). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <string.h>
#include <yaml.h>

#include "core/diag.h"
#include "report/doc_out.h"
#include "helpers.h"
#include "prof_names.h"
#include "jit/pathmap.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/prof_report.h"
#include "report/profile.h"

static const struct fn_view *find(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nfns; i++)
		if (!strcmp(fn_name(p, i), name))
			return fn_view(p, i);
	fail_msg("no function '%s'", name);
	return NULL;
}

static uint32_t fn(struct profile_builder *b, const char *name)
{
	return profile_builder_fn(b, &(struct prof_fn_key){ "/bin/x", 6, "x.c", 3, name, strlen(name) });
}

/* main -> a (100), main -> b (50); a -> a (30, recursion); x -> c (40), c -> d (35),
 * d -> c (25): c and d on a cycle entered with 40. */
static void build(struct profile *p)
{
	static const char *const ev[] = { "Ir" };
	memset(p, 0, sizeof(*p));
	struct profile_builder *b = profile_builder_new(p, 1, ev);
	uint32_t m = fn(b, "main"), a = fn(b, "a"), bb = fn(b, "b"), x = fn(b, "x");
	uint32_t c = fn(b, "c"), d = fn(b, "d");
	uint64_t v;
	v = 10; profile_builder_self(b, m, &v);
	v = 70; profile_builder_self(b, a, &v);
	v = 50; profile_builder_self(b, bb, &v);
	v = 5;  profile_builder_self(b, x, &v);
	v = 15; profile_builder_self(b, c, &v);
	v = 25; profile_builder_self(b, d, &v);
	v = 100; profile_builder_call(b, m, a, 2, &v);
	v = 50; profile_builder_call(b, m, bb, 1, &v);
	v = 30; profile_builder_call(b, a, a, 7, &v);
	v = 40; profile_builder_call(b, x, c, 1, &v);
	v = 35; profile_builder_call(b, c, d, 3, &v);
	v = 25; profile_builder_call(b, d, c, 2, &v);
	profile_builder_finish(b);
}

static void test_profile__inclusive(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	assert_int_equal(p.nfns, 6);
	assert_int_equal(p.totals[0], 175);
	const struct fn_view *m = find(&p, "main"), *a = find(&p, "a"), *c = find(&p, "c");
	assert_int_equal(m->incl[0], 160);      /* nobody calls it: self + calls out */
	assert_int_equal(m->calls, 0);
	assert_int_equal(a->incl[0], 100);      /* the self-call is not added again */
	assert_int_equal(a->calls, 2);
	assert_true(a->self_calls);
	assert_false(a->in_cycle);
	assert_int_equal(find(&p, "b")->incl[0], 50);
	assert_true(c->in_cycle);
	assert_int_equal(c->incl[0], 40);       /* 40 + 25 capped at the 40 that entered */
	assert_int_equal(c->calls, 3);
	assert_int_equal(find(&p, "d")->incl[0], 35);
	assert_true(find(&p, "d")->in_cycle);
	assert_int_equal(find(&p, "x")->incl[0], 45);
	assert_false(find(&p, "x")->in_cycle);
	assert_string_equal(m->obj, "/bin/x");
	assert_string_equal(m->file, "x.c");
	profile_free(&p);
}

/* A cycle that a thread starts inside (the JVM's interpreter): x -> c costs 1, but c and d
 * do 160 in all. Capping at the 1 that entered would put c's inclusive cost below its self
 * cost; the cap is the cycle's own work, and no function gets less than its self cost. */
static void test_profile__cycle_started_inside(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile p;
	memset(&p, 0, sizeof(p));
	struct profile_builder *b = profile_builder_new(&p, 1, ev);
	uint32_t x = fn(b, "x"), c = fn(b, "c"), d = fn(b, "d");
	uint64_t v;
	v = 0;   profile_builder_self(b, x, &v);
	v = 100; profile_builder_self(b, c, &v);
	v = 60;  profile_builder_self(b, d, &v);
	v = 1;   profile_builder_call(b, x, c, 1, &v);
	v = 60;  profile_builder_call(b, c, d, 5, &v);
	v = 50;  profile_builder_call(b, d, c, 4, &v);
	profile_builder_finish(b);
	assert_int_equal(find(&p, "c")->incl[0], 100);   /* arcs in: 51; its self: 100 */
	assert_int_equal(find(&p, "d")->incl[0], 60);
	assert_true(find(&p, "c")->in_cycle);
	for (size_t i = 0; i < p.nfns; i++)
		assert_true(profile_incl(&p, i)[0] >= profile_self(&p, i)[0] && profile_incl(&p, i)[0] <= 160);
	profile_free(&p);
}

static const char two_parts[] =
	"# callgrind format\nversion: 1\ncreator: test\npid: 7\npart: 1\npositions: line\nevents: Ir Dr\n"
	"ob=(1) /bin/p\nfl=(1) p.c\nfn=(1) main\n3 10 1\ncfn=(2) work'2\ncalls=4 9\n9 60 6\n"
	"fn=(2)\n9 60 6\ncfl=(2) q.c\ncfn=(3) work\ncalls=1 1\n1 5 0\n"
	"totals: 70 7\n"
	"part: 2\npositions: line\nevents: Ir Dr\n"
	"ob=(1) /bin/p\nfl=(1) p.c\nfn=(1) main\n3 1 1\n"
	"totals: 1 1\n";

static void test_profile__parts_and_folding(void **state)
{
	(void)state;
	char *path = tmp_file(two_parts);
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.parts, 2);
	assert_int_equal(p.nevents, 2);
	assert_int_equal(p.totals[0], 71);
	assert_int_equal(p.totals[1], 8);
	assert_int_equal(find(&p, "main")->self[0], 11);
	assert_int_equal(find(&p, "main")->incl[0], 71);
	assert_int_equal(find(&p, "work'2")->incl[0], 60);
	assert_int_equal(find(&p, "work'2")->calls, 4);
	assert_string_equal(find(&p, "work")->file, "q.c");
	profile_free(&p);

	o.part = 2;
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.totals[0], 1);
	assert_int_equal(p.nfns, 1);
	profile_free(&p);

	/* work'2 becomes work in p.c, a function of its own beside work in q.c */
	o.part = 0;
	o.fold_recursion = 1;
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.nfns, 3);
	profile_free(&p);

	o.part = 3;
	o.fold_recursion = 0;
	assert_int_equal(profile_load(&p, path, &o, &d), -1);
	assert_non_null(strstr(d.msg, "there is no part 3: the file has 2"));
	unlink(path);
	free(path);
}

static void test_profile__fold_self_calls(void **state)
{
	(void)state;
	/* f -> f'2 -> f'2 folded: one function, its recursion not counted twice */
	char *path = tmp_file("events: Ir\nfl=a.c\nfn=f\n1 5\ncfn=f'2\ncalls=1 1\n1 20\n"
			      "fn=f'2\n1 12\ncfn=f'2\ncalls=1 1\n1 8\n"
			      "fn=g\n1 3\ncfn=f\ncalls=1 1\n1 25\ntotals: 20\n");
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { .fold_recursion = 1 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.nfns, 2);
	const struct fn_view *f = find(&p, "f");
	assert_int_equal(f->self[0], 17);
	assert_int_equal(f->incl[0], 25);
	assert_true(f->self_calls);
	assert_int_equal(find(&p, "g")->incl[0], 28);
	profile_free(&p);
	unlink(path);
	free(path);
}

/* One name defined under two ids (callgrind's --separate-callers can do that) is two
 * function indices in the reader and one function in the profile: costs and calls of both
 * add up. */
static void test_profile__one_name_two_ids(void **state)
{
	(void)state;
	char *path = tmp_file("events: Ir\nob=(1) /x\nfl=(1) a.c\nfn=(1) main\n1 1\n"
			      "cfn=(2) f'g\ncalls=2 1\n1 10\ncfn=(3) f'g\ncalls=1 1\n1 7\n"
			      "fn=(2)\n1 6\nfn=(3) f'g\n1 4\ncfn=(4) h\ncalls=1 1\n1 3\n"
			      "fn=(4)\n1 3\ntotals: 14\n");
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_int_equal(p.nfns, 3);
	const struct fn_view *f = find(&p, "f'g");
	assert_int_equal(f->self[0], 10);
	assert_int_equal(f->incl[0], 17);
	assert_int_equal(f->calls, 3);
	assert_int_equal(find(&p, "main")->incl[0], 18);
	profile_free(&p);
	unlink(path);
	free(path);
}

static void test_profile__cachegrind(void **state)
{
	(void)state;
	char *path = tmp_file("desc: I1 cache: 32768 B\ncmd: ./a\nevents: Ir D1mr\n"
			      "fl=a.c\nfn=main\n1 5 1\n2 5\nfn=f\n7 2 0\nfl=b.c\nfn=f\n1 1 1\n"
			      "summary: 13 2\n");
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_true(p.cachegrind);
	assert_int_equal(p.nfns, 3);           /* f in a.c and f in b.c are two functions */
	assert_int_equal(find(&p, "main")->self[0], 10);
	assert_int_equal(find(&p, "main")->incl[0], 10);
	assert_int_equal(p.totals[1], 2);
	json_t *doc = prof_report_build(&p, 0, 10);
	assert_false(json_is_true(json_object_get(doc, "inclusive")));
	assert_int_equal(json_array_size(json_object_get(doc, "functions_by_inclusive")), 0);
	json_decref(doc);
	profile_free(&p);
	unlink(path);
	free(path);

	path = tmp_file("desc: x\ncmd: ./a\nevents: Ir\nfl=a.c\nfn=main\n1 5\nsummary: 6\n");
	assert_int_equal(profile_load(&p, path, &o, &d), -1);
	assert_non_null(strstr(d.msg, ":7: 'summary:' gives 6 for event Ir, but the cost lines add up to 5"));
	unlink(path);
	free(path);
}

/* What cg_annotate reads in valgrind's own test input cachegrind/tests/ann2.cgout: a line
 * number alone (every count 0), counts left out at the end (0), tabs and runs of blanks,
 * cost after fl= and before any fn= ("<unspecified>"); negative counts (cg_diff) are
 * refused with their own message. */
static void test_profile__cachegrind_lenient(void **state)
{
	(void)state;
	char *path = tmp_file("cmd: ann\nevents: A B C\nfl=x.rs\n1 1000 500 0\nfn=f\n"
			      "2  200\t\t100 0  \n18\n19 7\nfl=y.rs\nfn=f\n3 1 1 1\nsummary: 1208 601 1\n");
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_true(p.cachegrind);
	assert_int_equal(p.nfns, 3);
	const struct fn_view *u = find(&p, "<unspecified>");
	assert_non_null(u);
	assert_string_equal(u->file, "x.rs");
	assert_int_equal(u->self[0], 1000);
	assert_int_equal(u->self[1], 500);
	uint64_t f_x = 0;
	for (size_t i = 0; i < p.nfns; i++)
		if (!strcmp(fn_name(&p, i), "f") && !strcmp(profile_file(&p, i), "x.rs"))
			f_x = profile_self(&p, i)[0] * 1000 + profile_self(&p, i)[1];
	assert_int_equal(f_x, 207 * 1000 + 100);
	profile_free(&p);
	unlink(path);
	free(path);

	/* cg_diff's negative counts: signed costs, the largest either way first */
	path = tmp_file("cmd: ann\nevents: A\nfl=x.rs\nfn=neg\n0 -1000\n1 -5\nfn=pos\n2 300\nsummary: -705\n");
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_true(p.negative);
	assert_int_equal((int64_t)find(&p, "neg")->self[0], -1005);
	assert_int_equal((int64_t)p.totals[0], -705);
	json_t *doc = prof_report_build(&p, 0, 10);
	json_t *fns = json_object_get(doc, "functions");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fns, 0), "name")), "neg");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(fns, 0), "self")), -1005);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "totals"), "A")), -705);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	prof_report_render(doc, f, 0);
	fclose(f);
	if (!strstr(buf, "          -1,005") || !strstr(buf, "total     A                      -705\n") ||
	    !strstr(buf, "negative counts"))
		fail_msg("%s", buf);
	free(buf);
	json_decref(doc);
	profile_free(&p);
	unlink(path);
	free(path);
	/* a count below -2^63 is no number */
	path = tmp_file("cmd: ann\nevents: A\nfl=x.rs\nfn=neg\n0 -9223372036854775809\nsummary: 0\n");
	assert_int_equal(profile_load(&p, path, &o, &d), -1);
	assert_non_null(strstr(d.msg, ":5: expected a cost line"));
	unlink(path);
	free(path);
}

static void test_profile__errors(void **state)
{
	(void)state;
	struct profile p;
	struct diag d = { 0 };
	struct profile_opts o = { 0 };
	char *path = tmp_file("events: Ir\nfl=a.c\nfn=f\n1 5\ntotals: 5\nevents: Dr\nfl=a.c\nfn=f\n1 5\ntotals: 5\n");
	assert_int_equal(profile_load(&p, path, &o, &d), -1);
	assert_non_null(strstr(d.msg, "part 2 counts the events 'Dr', but an earlier part counts 'Ir'"));
	unlink(path);
	free(path);
	d.set = 0;
	path = tmp_file("positions: line\nevents: Ir\nfl=a.c\nfn=f\n1 5\ntotals: 6\n");
	assert_int_equal(profile_load(&p, path, &o, &d), -1);
	assert_non_null(strstr(d.msg, ":6: 'totals:' gives 6 for event Ir, but the cost lines of part 1 add up to 5"));
	unlink(path);
	free(path);
}

/* The YAML document's scalar at KEY of the top mapping, parsed with libyaml. */
static char *yaml_top_scalar(const char *text, const char *key)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	assert_true(yaml_parser_load(&parser, &doc));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	assert_non_null(root);
	assert_int_equal(root->type, YAML_MAPPING_NODE);
	char *out = NULL;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		if (!strcmp((const char *)k->data.scalar.value, key) && v->type == YAML_SCALAR_NODE)
			out = strdup((const char *)v->data.scalar.value);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return out;
}

static char *render(const json_t *doc, enum doc_format f, void (*r)(const json_t *, FILE *, int))
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (f == DOC_JSON)
		assert_int_equal(doc_write_json(doc, m), 0);
	else if (f == DOC_YAML)
		assert_int_equal(doc_write_yaml(doc, m), 0);
	else
		r(doc, m, f == DOC_MARKDOWN);
	fclose(m);
	return buf;
}

static void test_profile__report_formats(void **state)
{
	(void)state;
	struct profile p;
	build(&p);
	free(p.path);
	p.path = strdup("prof: \"x\"|y");   /* quoting in every format */
	json_t *doc = prof_report_build(&p, 0, 3);
	json_t *top = json_object_get(doc, "functions");
	assert_int_equal(json_array_size(top), 3);
	assert_string_equal(doc_get_str(json_array_get(top, 0), "name"), "a");
	assert_int_equal(doc_get_u64(json_array_get(top, 0), "self"), 70);
	assert_string_equal(doc_get_str(json_array_get(json_object_get(doc, "functions_by_inclusive"), 0), "name"), "main");

	char *js = render(doc, DOC_JSON, NULL);
	json_error_t err;
	json_t *back = json_loads(js, 0, &err);
	assert_non_null(back);
	assert_true(json_equal(doc, back));
	json_decref(back);

	char *ym = render(doc, DOC_YAML, NULL);
	char *v = yaml_top_scalar(ym, "profile");
	assert_string_equal(v, "prof: \"x\"|y");
	free(v);
	v = yaml_top_scalar(ym, "function_count");
	assert_string_equal(v, "6");
	free(v);

	char *md = render(doc, DOC_MARKDOWN, prof_report_render);
	assert_non_null(strstr(md, "| 70 | 40.00% | 100 | 57.14% | 2 | `a` | `x` | `x.c` |"));
	char *tx = render(doc, DOC_TEXT, prof_report_render);
	assert_non_null(strstr(tx, "total     Ir                      175"));
	free(js);
	free(ym);
	free(md);
	free(tx);
	json_decref(doc);
	profile_free(&p);
}

/* A run named from the JVM's perf map against one named from a jitdump: the objects
 * (perf-1.map, jit-2.dump.elf) and files (???, the source) differ, the names do not. */
static void test_profile__diff_map_against_dump(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" };
	struct profile a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	struct profile_builder *ba = profile_builder_new(&a, 1, ev), *bb = profile_builder_new(&b, 1, ev);
	static const char map[] = "/t/perf-1.map", elf[] = "/t/jit-2.dump.elf";
	uint64_t v = 10;
#define ADD(bld, obj, file, name) profile_builder_self(bld, profile_builder_fn(bld, &(struct prof_fn_key){ \
		obj, strlen(obj), file, strlen(file), name, strlen(name) }), &v)
	ADD(ba, map, "???", "long A.total(int[])");
	ADD(bb, elf, "com/a/A.java", "long A.total(int[])");           /* matched by name */
	ADD(ba, map, "???", "void Object.<init>()");
	ADD(bb, elf, "???", "void Object.<init>()");
	ADD(bb, elf, "java/lang/Object.java", "void Object.<init>()");  /* twice: not matched */
	ADD(ba, "/bin/java", "???", "main");
	ADD(bb, "/bin/java2", "???", "main");                           /* not JIT: not matched */
#undef ADD
	profile_builder_finish(ba);
	profile_builder_finish(bb);
	size_t *m = prof_match(&a, &b);
	for (size_t j = 0; j < b.nfns; j++) {
		const char *want = !strcmp(fn_name(&b, j), "long A.total(int[])") ? "long A.total(int[])" : NULL;
		if (want) {
			assert_true(m[j] != SIZE_MAX);
			assert_string_equal(fn_name(&a, m[j]), want);
		} else {
			assert_true(m[j] == SIZE_MAX);
		}
	}
	free(m);
	profile_free(&a);
	profile_free(&b);
}

/* A profile recorded in /w/ci1 and one in /w/ci2, augmented without --root: loaded with
 * --path-map /w/ci1= --path-map /w/ci2=, every function matches (names with "'" parts,
 * recursion folded, files of ELF code too), the report's objects have no directory, and
 * a cachegrind file is mapped alike. */
static void test_profile__path_map(void **state)
{
	(void)state;
	static const char body[] =
		"# callgrind format\nversion: 1\npositions: line\nevents: Ir\n"
		"ob=(1) /tmp/out.%s/jit-%s.dump.elf\nfl=(1) /w/%s/a.js\n"
		"fn=(1) JS:*f /w/%s/a.js:1:2\n1 5\n"
		"fn=(2) JS:*f /w/%s/a.js:1:2'2\n1 3\n"
		"fn=(3) JS:^g /w/%s/a.js:4:1'JS:*f /w/%s/a.js:1:2\n4 2\n"
		"ob=(2) /w/%s/build/app\nfl=(2) /w/%s/src/main.c\nfn=(4) main\n9 1\n"
		"cob=(1)\ncfl=(1)\ncfn=(1)\ncalls=1 1\n9 5\n"
		"totals: 11\n";
	struct pathmap *pm = pathmap_new();
	struct diag d = { 0 };
	assert_int_equal(pathmap_add_arg(pm, "/w/ci1=", &d), 0);
	assert_int_equal(pathmap_add_arg(pm, "/w/ci2=", &d), 0);
	struct profile p[2];
	char *path[2];
	const char *dir[2] = { "ci1", "ci2" }, *pid[2] = { "11", "22" };
	for (int i = 0; i < 2; i++) {
		char text[2048];
		const char *w = dir[i];
		snprintf(text, sizeof(text), body, pid[i], pid[i], w, w, w, w, w, w, w);
		path[i] = tmp_file(text);
		struct profile_opts o = { .fold_recursion = 1, .paths = pm };
		if (profile_load(&p[i], path[i], &o, &d) < 0)
			fail_msg("%s", d.msg);
	}
	assert_int_equal(p[0].nfns, 3);                    /* f'2 folded into f */
	assert_int_equal(find(&p[0], "JS:*f a.js:1:2")->self[0], 8);
	assert_string_equal(find(&p[0], "JS:*f a.js:1:2")->file, "a.js");
	assert_string_equal(find(&p[0], "JS:^g a.js:4:1'JS:*f a.js:1:2")->file, "a.js");
	assert_string_equal(find(&p[0], "main")->file, "src/main.c");
	assert_string_equal(find(&p[0], "main")->obj, "/w/ci1/build/app");   /* objects as written */
	size_t *m = prof_match(&p[0], &p[1]);
	for (size_t j = 0; j < p[1].nfns; j++) {
		assert_true(m[j] != SIZE_MAX);
		assert_string_equal(fn_name(&p[0], m[j]), fn_name(&p[1], j));
	}
	free(m);
	json_t *doc = prof_diff_build(&p[0], &p[1], NULL, 100, 0, &d);
	assert_int_equal(doc_get_u64(doc, "added"), 0);
	assert_int_equal(doc_get_u64(doc, "removed"), 0);
	assert_int_equal(doc_get_u64(doc, "changed"), 0);
	json_decref(doc);
	/* the report's objects: the file name only, never the directory augment wrote to */
	doc = prof_report_build(&p[0], 0, 10);
	const json_t *top = json_object_get(doc, "functions");
	for (size_t i = 0; i < json_array_size(top); i++) {
		const char *obj = doc_get_str(json_array_get(top, i), "object");
		assert_null(strchr(obj, '/'));
		assert_true(!strcmp(obj, "jit-11.dump.elf") || !strcmp(obj, "app"));
	}
	json_decref(doc);
	for (int i = 0; i < 2; i++) {
		profile_free(&p[i]);
		unlink(path[i]);
		free(path[i]);
	}
	/* without the map, the JIT functions and main are only in one file each */
	struct profile_opts plain = { .fold_recursion = 1 };
	for (int i = 0; i < 2; i++) {
		char text[2048];
		const char *w = dir[i];
		snprintf(text, sizeof(text), body, pid[i], pid[i], w, w, w, w, w, w, w);
		path[i] = tmp_file(text);
		assert_int_equal(profile_load(&p[i], path[i], &plain, &d), 0);
	}
	doc = prof_diff_build(&p[0], &p[1], NULL, 100, 0, &d);
	assert_int_equal(doc_get_u64(doc, "added"), 3);
	assert_int_equal(doc_get_u64(doc, "removed"), 3);
	json_decref(doc);
	for (int i = 0; i < 2; i++) {
		profile_free(&p[i]);
		unlink(path[i]);
		free(path[i]);
	}
	/* cachegrind: files mapped as well */
	char *cg = tmp_file("desc: x\ncmd: ./a\nevents: Ir\nfl=/w/ci1/a.c\nfn=main\n1 5\nsummary: 5\n");
	struct profile_opts o = { .paths = pm };
	assert_int_equal(profile_load(&p[0], cg, &o, &d), 0);
	assert_string_equal(find(&p[0], "main")->file, "a.c");
	profile_free(&p[0]);
	unlink(cg);
	free(cg);
	pathmap_free(pm);
}

/* Costs up to 2^64 - 1 load (the readers bound sums at 64 bits), so a change can be
 * -2^63 or +2^63: subtracted as json_int_t it overflowed (undefined; the second case
 * came out as -2^63, the wrong sign). It is now exact, or clamped to the JSON integer's
 * range. */
static void test_profile__diff_costs_past_2_63(void **state)
{
	(void)state;
	static const char *const costs[] = { "9223372036854775807", "18446744073709551615" };
	struct profile p[2];
	for (int i = 0; i < 2; i++) {
		char text[256], *path;
		snprintf(text, sizeof(text), "# callgrind format\nversion: 1\npositions: line\nevents: Ir\n"
			 "fl=a.c\nfn=f\n1 %s\ntotals: %s\n", costs[i], costs[i]);
		path = tmp_file(text);
		struct profile_opts o = { 0 };
		struct diag d = { 0 };
		if (profile_load(&p[i], path, &o, &d) < 0)
			fail_msg("%s", d.msg);
		unlink(path);
		free(path);
	}
	struct diag d = { 0 };
	json_t *doc = prof_diff_build(&p[1], &p[0], NULL, 10, 0, &d);   /* 2^64 - 1 -> 2^63 - 1 */
	assert_non_null(doc);
	const json_t *c = json_array_get(json_object_get(doc, "functions"), 0);
	assert_true(json_integer_value(json_object_get(c, "self_change")) == INT64_MIN);
	assert_true(json_integer_value(json_object_get(c, "inclusive_change")) == INT64_MIN);
	assert_true(json_integer_value(json_object_get(json_object_get(doc, "totals_change"), "Ir")) == INT64_MIN);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	prof_diff_render(doc, f, 0);
	fclose(f);
	assert_non_null(strstr(text, "-9,223,372,036,854,775,808"));
	free(text);
	json_decref(doc);
	doc = prof_diff_build(&p[0], &p[1], NULL, 10, 0, &d);   /* 2^63 - 1 -> 2^64 - 1: +2^63, clamped */
	assert_non_null(doc);
	c = json_array_get(json_object_get(doc, "functions"), 0);
	assert_true(json_integer_value(json_object_get(c, "self_change")) == INT64_MAX);
	assert_true(json_integer_value(json_object_get(json_object_get(doc, "totals_change"), "Ir")) == INT64_MAX);
	json_decref(doc);
	profile_free(&p[0]);
	profile_free(&p[1]);
}

static void test_profile__diff(void **state)
{
	(void)state;
	static const char *const ev[] = { "Ir" }, *const ev2[] = { "Dr" };
	struct profile a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	struct profile_builder *ba = profile_builder_new(&a, 1, ev), *bb = profile_builder_new(&b, 1, ev);
	uint64_t v;
	v = 100; profile_builder_self(ba, fn(ba, "same"), &v);
	v = 100; profile_builder_self(bb, fn(bb, "same"), &v);
	v = 50;  profile_builder_self(ba, fn(ba, "slower"), &v);
	v = 80;  profile_builder_self(bb, fn(bb, "slower"), &v);
	v = 9;   profile_builder_self(ba, fn(ba, "gone"), &v);
	v = 2;   profile_builder_self(bb, fn(bb, "new"), &v);
	/* object matched by its file name only: /bin/x and /other/x are one */
	v = 10;  profile_builder_self(ba, profile_builder_fn(ba, &(struct prof_fn_key){ "/bin/x", 6, "y.c", 3, "k", 1 }), &v);
	v = 11;  profile_builder_self(bb, profile_builder_fn(bb, &(struct prof_fn_key){ "/other/x", 8, "y.c", 3, "k", 1 }), &v);
	profile_builder_finish(ba);
	profile_builder_finish(bb);
	a.path = strdup("a");
	b.path = strdup("b");
	struct diag d = { 0 };
	json_t *doc = prof_diff_build(&a, &b, NULL, 10, 0, &d);
	assert_non_null(doc);
	json_t *ch = json_object_get(doc, "functions");
	assert_int_equal(json_array_size(ch), 4);
	assert_string_equal(doc_get_str(json_array_get(ch, 0), "name"), "slower");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ch, 0), "self_change")), 30);
	assert_true(json_real_value(json_object_get(json_array_get(ch, 0), "self_change_rel")) == 0.6);
	assert_string_equal(doc_get_str(json_array_get(ch, 1), "status"), "removed");
	assert_int_equal(doc_get_u64(doc, "added"), 1);
	assert_int_equal(doc_get_u64(doc, "removed"), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "totals_change"), "Ir")), 24);
	json_decref(doc);

	/* a threshold of 5% of the base total (169): only changes of 8.45 or more */
	doc = prof_diff_build(&a, &b, NULL, 10, 5, &d);
	assert_int_equal(json_array_size(json_object_get(doc, "functions")), 2);
	json_decref(doc);
	profile_free(&b);

	memset(&b, 0, sizeof(b));
	bb = profile_builder_new(&b, 1, ev2);
	profile_builder_finish(bb);
	b.path = strdup("b");
	assert_null(prof_diff_build(&a, &b, NULL, 10, 0, &d));
	assert_non_null(strstr(d.msg, "b: no event 'Ir' (it counts 'Dr'): the base's first event; pick "
				  "one both count with --event"));
	d.set = 0;
	assert_null(prof_diff_build(&a, &b, "Ir", 10, 0, &d));
	assert_non_null(strstr(d.msg, "b: no event 'Ir' (it counts 'Dr')"));
	profile_free(&a);
	profile_free(&b);
}

/* The kinds of code: a 0x... name in object ??? is JIT code no symbol names, in an ELF
 * file code without symbols; the two are counted apart (they used to be one "unknown"). The
 * cmd: line is kept, and a diff of two different commands says so. */
static const char kinds_profile[] =
	"# callgrind format\nversion: 1\ncmd:  node  a.js \npositions: line\nevents: Ir\n"
	"ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000004a00000\n1 7\n"
	"ob=(2) /lib/libx.so\nfn=(2) 0x00000000000012a0'2\n1 5\n"
	"ob=(3) /tmp/perf-12.map\nfn=(3) JS:*f a.js:1\n1 30\n"
	"ob=(2)\nfn=(4) main\n1 58\n"
	"totals: 100\n";

static void test_profile__kinds_and_command(void **state)
{
	(void)state;
	char *path = tmp_file(kinds_profile);
	struct profile p, q;
	struct diag d = { 0 };
	struct profile_opts o = { .fold_recursion = 1 };
	assert_int_equal(profile_load(&p, path, &o, &d), 0);
	assert_string_equal(p.cmd, "node  a.js");
	assert_int_equal(find(&p, "0x0000000004a00000")->kind, PROF_UNNAMED_JIT);
	assert_int_equal(find(&p, "0x00000000000012a0")->kind, PROF_NO_SYMBOL);   /* 'N folded */
	assert_int_equal(find(&p, "JS:*f a.js:1")->kind, PROF_JIT);
	assert_true(find(&p, "JS:*f a.js:1")->jit);
	assert_int_equal(find(&p, "main")->kind, PROF_NATIVE);
	json_t *doc = prof_report_build(&p, 0, 10);
	const json_t *k = json_object_get(doc, "kinds");
	assert_int_equal(doc_get_u64(json_object_get(k, "unnamed_jit"), "self"), 7);
	assert_int_equal(doc_get_u64(json_object_get(k, "no_symbol"), "self"), 5);
	assert_int_equal(doc_get_u64(json_object_get(k, "jit"), "functions"), 1);
	assert_true(doc_get_real(json_object_get(k, "jit"), "share") == 0.3);
	assert_string_equal(doc_get_str(doc, "command"), "node  a.js");
	assert_string_equal(doc_get_str(json_array_get(json_object_get(doc, "functions"), 2), "kind"), "unnamed_jit");
	char *tx = render(doc, DOC_TEXT, prof_report_render);
	assert_non_null(strstr(tx, "command   node  a.js\n"));
	assert_non_null(strstr(tx, "JIT code (0x... in ?\?\?) 7.00%; code without symbols (0x... in an ELF file) 5.00%"));
	free(tx);
	json_decref(doc);
	unlink(path);
	free(path);

	/* the same program: no warning; another one: the diff (and check) says which */
	char *other = tmp_file(kinds_profile);
	assert_int_equal(profile_load(&q, other, &o, &d), 0);
	doc = prof_diff_build(&p, &q, NULL, 10, 0, &d);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 0);
	json_decref(doc);
	profile_free(&q);
	unlink(other);
	free(other);
	char *text = strdup(kinds_profile);
	memcpy(strstr(text, "a.js \n"), "b", 1);
	other = tmp_file(text);
	free(text);
	assert_int_equal(profile_load(&q, other, &o, &d), 0);
	doc = prof_diff_build(&p, &q, NULL, 10, 0, &d);
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "warnings"), 0)),
			    "the profiles ran different commands: the baseline 'node  a.js', this one 'node  b.js'");
	char *md = render(doc, DOC_MARKDOWN, prof_diff_render);
	assert_non_null(strstr(md, "> **Warning:** the profiles ran different commands"));
	free(md);
	json_decref(doc);
	profile_free(&q);
	profile_free(&p);
	unlink(other);
	free(other);
}

/* Costs for people in the unit an event's name gives (doc_cost(), doc_cost_signed()):
 * times scaled to the unit that suits them, bytes marked, anything else as counts. */
static void test_profile__cost_units(void **state)
{
	(void)state;
	json_t *doc = json_pack("{s:{s:s,s:s,s:s,s:s,s:s}}", "units", "Time_(10ns)", "10ns", "cpu(ms)", "ms",
				"Memory_(bytes)", "bytes", "t(us)", "us", "odd(furlongs)", "furlongs");
	char b[48];
	assert_string_equal(doc_cost(b, 483754, doc, "Time_(10ns)"), "4.838 ms");
	assert_string_equal(doc_cost(b, 50, doc, "Time_(10ns)"), "500 ns");
	assert_string_equal(doc_cost(b, 1460, doc, "cpu(ms)"), "1.460 s");
	assert_string_equal(doc_cost(b, 280, doc, "cpu(ms)"), "280.000 ms");
	assert_string_equal(doc_cost(b, 1500, doc, "t(us)"), "1.500 ms");
	json_object_set_new(json_object_get(doc, "units"), "Time_(\xc2\xb5s)", json_string("\xc2\xb5s"));
	assert_string_equal(doc_cost(b, 2500, doc, "Time_(\xc2\xb5s)"), "2.500 ms");   /* Xdebug 3.0 */
	assert_string_equal(doc_cost(b, 58016, doc, "Memory_(bytes)"), "58,016 B");
	assert_string_equal(doc_cost(b, 1234567, doc, "odd(furlongs)"), "1,234,567");
	assert_string_equal(doc_cost(b, 1234567, doc, "Ir"), "1,234,567");
	assert_string_equal(doc_cost_signed(b, -4567, doc, "Time_(10ns)"), "-45.670 us");
	assert_string_equal(doc_cost_signed(b, 2048, doc, "Memory_(bytes)"), "+2,048 B");
	assert_string_equal(doc_cost_signed(b, 0, doc, "Memory_(bytes)"), "0");
	assert_string_equal(doc_cost_signed(b, -1234, doc, "Ir"), "-1,234");
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile__inclusive),
		cmocka_unit_test(test_profile__cycle_started_inside),
		cmocka_unit_test(test_profile__parts_and_folding),
		cmocka_unit_test(test_profile__fold_self_calls),
		cmocka_unit_test(test_profile__one_name_two_ids),
		cmocka_unit_test(test_profile__cachegrind),
		cmocka_unit_test(test_profile__cachegrind_lenient),
		cmocka_unit_test(test_profile__cost_units),
		cmocka_unit_test(test_profile__errors),
		cmocka_unit_test(test_profile__report_formats),
		cmocka_unit_test(test_profile__diff),
		cmocka_unit_test(test_profile__diff_costs_past_2_63),
		cmocka_unit_test(test_profile__diff_map_against_dump),
		cmocka_unit_test(test_profile__path_map),
		cmocka_unit_test(test_profile__kinds_and_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
