/* Unit tests for the JVMTI agent's pure parts, without a JVM: agent/java_names.c (method
 * names in the form of HotSpot's perf map, source paths, line lookup, DEBUG_INFO rows from
 * pc descriptors) and agent/jitdump_writer.c (record bytes, read back through cgjit's own
 * reader, src/jit/jitdump.c; buffering; a failing sink). Expected names are copied from
 * HotSpot 17's -XX:+DumpPerfMapAtExit output (samples/java-instr, samples/java-jvmti). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>

#include "core/diag.h"
#include "helpers.h"
#include "java_names.h"
#include "jit/jitdump.h"
#include "jitdump_writer.h"
#include "jit/symtab.h"

static void expect_method(const char *csig, const char *name, const char *sig, const char *want)
{
	char *got = jn_method_name(csig, name, sig);
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_jvmti__method_names(void **state)
{
	(void)state;
	expect_method("Lcom/acme/Inventory;", "total", "(Ljava/util/List;[I)J",
		      "long com.acme.Inventory.total(java.util.List, int[])");
	expect_method("LProg;", "fib", "(I)I", "int Prog.fib(int)");
	expect_method("Ljava/lang/Object;", "<init>", "()V", "void java.lang.Object.<init>()");
	expect_method("Ljava/util/HashMap$Node;", "<init>",
		      "(ILjava/lang/Object;Ljava/lang/Object;Ljava/util/HashMap$Node;)V",
		      "void java.util.HashMap$Node.<init>(int, java.lang.Object, java.lang.Object, "
		      "java.util.HashMap$Node)");
	expect_method("Ljava/lang/String;", "<init>", "([BB)V", "void java.lang.String.<init>(byte[], byte)");
	expect_method("Ljava/lang/invoke/MethodType;", "makeImpl",
		      "(Ljava/lang/Class;[Ljava/lang/Class;Z)Ljava/lang/invoke/MethodType;",
		      "java.lang.invoke.MethodType java.lang.invoke.MethodType.makeImpl(java.lang.Class, "
		      "java.lang.Class[], boolean)");
	expect_method("Ljava/util/concurrent/ConcurrentHashMap;", "casTabAt",
		      "([Ljava/util/concurrent/ConcurrentHashMap$Node;ILjava/util/concurrent/ConcurrentHashMap$Node;"
		      "Ljava/util/concurrent/ConcurrentHashMap$Node;)Z",
		      "boolean java.util.concurrent.ConcurrentHashMap.casTabAt("
		      "java.util.concurrent.ConcurrentHashMap$Node[], int, "
		      "java.util.concurrent.ConcurrentHashMap$Node, java.util.concurrent.ConcurrentHashMap$Node)");
	expect_method("Ljava/lang/StringConcatHelper;", "newArray", "(J)[B",
		      "byte[] java.lang.StringConcatHelper.newArray(long)");
	expect_method("LM;", "m", "([[D[[Ljava/lang/String;CFSZ)[[J",
		      "long[][] M.m(double[][], java.lang.String[][], char, float, short, boolean)");
	/* A hidden class: JVMTI's "name.suffix" signature, HotSpot's map "name/suffix". */
	expect_method("Ljava/lang/invoke/LambdaForm$MH.0x0000000017001000;", "invoke",
		      "(Ljava/lang/Object;JLjava/lang/Object;I)J",
		      "long java.lang.invoke.LambdaForm$MH/0x0000000017001000.invoke(java.lang.Object, "
		      "long, java.lang.Object, int)");
	/* Malformed signatures give no name. */
	expect_method("LA;", "f", "I)V", NULL);
	expect_method("LA;", "f", "(I", NULL);
	expect_method("LA;", "f", "(Ljava/lang/String)V", NULL);
	expect_method("LA;", "f", "(V)V", NULL);
	expect_method("LA;", "f", "(Q)V", NULL);
	expect_method("LA;", "f", "()[V", NULL);
	expect_method("LA;", "f", "()VI", NULL);
	expect_method("L;", "f", "()V", NULL);
	expect_method(NULL, "f", "()V", NULL);
}

static void test_jvmti__class_names_and_intrinsics(void **state)
{
	(void)state;
	char *s = jn_class_name("Lcom/acme/Inventory;");
	assert_string_equal(s, "com.acme.Inventory");
	free(s);
	s = jn_class_name("Lcom/acme/Outer$Inner$1;");
	assert_string_equal(s, "com.acme.Outer$Inner$1");
	free(s);
	s = jn_class_name("[[I");
	assert_string_equal(s, "int[][]");
	free(s);
	assert_null(jn_class_name("Lcom/acme/Inventory"));
	assert_null(jn_class_name("Lx;y"));
	assert_true(jn_is_mh_intrinsic("Ljava/lang/invoke/MethodHandle;", 1));
	assert_false(jn_is_mh_intrinsic("Ljava/lang/invoke/MethodHandle;", 0));
	assert_false(jn_is_mh_intrinsic("Ljava/lang/invoke/MethodHandles;", 1));
}

static void expect_path(const char *csig, const char *src, const char *want)
{
	char *got = jn_source_path(csig, src);
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_jvmti__source_paths(void **state)
{
	(void)state;
	expect_path("Lcom/acme/Inventory;", "Inventory.java", "com/acme/Inventory.java");
	expect_path("Lcom/acme/Outer$Inner;", "Outer.java", "com/acme/Outer.java");
	expect_path("Lcom/acme/Item;", "Item.java", "com/acme/Item.java");
	expect_path("LProg;", "Prog.java", "Prog.java");
	expect_path("Lscala/Option;", "Option.scala", "scala/Option.scala");
	expect_path("Ljava/lang/invoke/LambdaForm$MH.0x0000000017001000;", "LambdaForm$MH",
		    "java/lang/invoke/LambdaForm$MH");
	expect_path("Lcom/acme/Inventory;", NULL, NULL);
	expect_path("Lcom/acme/Inventory;", "", NULL);
}

static void test_jvmti__line_by_bci(void **state)
{
	(void)state;
	/* Unsorted, as JVMTI may return it; a loop's back edge jumps to a lower line. */
	struct jn_line t[] = { { 0, 10 }, { 14, 13 }, { 4, 11 }, { 9, 12 }, { 30, 15 } };
	assert_int_equal(jn_line_at(t, 5, 0), 10);
	assert_int_equal(jn_line_at(t, 5, 3), 10);
	assert_int_equal(jn_line_at(t, 5, 4), 11);
	assert_int_equal(jn_line_at(t, 5, 13), 12);
	assert_int_equal(jn_line_at(t, 5, 14), 13);
	assert_int_equal(jn_line_at(t, 5, 1000), 15);
	assert_int_equal(jn_line_at(t, 5, -1), 0);   /* no position */
	struct jn_line u[] = { { 5, 7 } };
	assert_int_equal(jn_line_at(u, 1, 2), 0);
	assert_int_equal(jn_line_at(NULL, 0, 2), 0);
}

static void test_jvmti__rows_from_pcs(void **state)
{
	(void)state;
	const char *inv = "com/acme/Inventory.java", *item = "com/acme/Item.java";
	/* HotSpot's pc descriptors: the pc after the instruction described (unsorted here). */
	struct jn_pc pcs[] = {
		{ 0x1030, inv, 12 },
		{ 0x1010, inv, 11 },
		{ 0x1020, inv, 11 },     /* same position: merged */
		{ 0x1040, item, 14 },    /* inlined */
		{ 0x1048, NULL, 0 },     /* no position: skipped */
		{ 0x1050, item, 15 },
		{ 0x1000, inv, 9 },      /* at the start: describes no code */
		{ 0x2000, inv, 99 },     /* outside */
		{ 0x1060, inv, 13 },     /* at the end */
	};
	struct jd_row rows[10];
	size_t n = jn_rows(0x1000, 0x60, pcs, 9, 1, rows);
	assert_int_equal(n, 5);
	assert_int_equal(rows[0].addr, 0x1000);
	assert_int_equal(rows[0].line, 11);
	assert_int_equal(rows[1].addr, 0x1020);
	assert_int_equal(rows[1].line, 12);
	assert_int_equal(rows[2].addr, 0x1030);
	assert_string_equal(rows[2].file, item);
	assert_int_equal(rows[2].line, 14);
	assert_int_equal(rows[3].addr, 0x1040);
	assert_int_equal(rows[3].line, 15);
	assert_int_equal(rows[4].addr, 0x1050);
	assert_int_equal(rows[4].line, 13);
	assert_string_equal(rows[4].file, inv);

	/* An address-location map: each address starts its position's code. */
	struct jn_pc map[] = { { 0x1008, inv, 5 }, { 0x1000, inv, 4 }, { 0x1010, inv, 5 },
			       { 0x1018, inv, 4 }, { 0x1020, inv, 6 } };
	n = jn_rows(0x1000, 0x20, map, 5, 0, rows);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].addr, 0x1000);
	assert_int_equal(rows[0].line, 4);
	assert_int_equal(rows[1].addr, 0x1008);
	assert_int_equal(rows[1].line, 5);
	assert_int_equal(rows[2].addr, 0x1018);
	assert_int_equal(rows[2].line, 4);
	assert_int_equal(jn_rows(0x1000, 0x20, map, 0, 0, rows), 0);
}

/* A sink into memory. */
struct mem {
	unsigned char b[1 << 16];
	size_t n;
	int calls;
	int fail_after;   /* > 0: the call after this many fails */
};

static int mem_sink(void *ctx, const void *data, size_t len)
{
	struct mem *m = ctx;
	m->calls++;
	if (m->fail_after && m->calls > m->fail_after) {
		errno = ENOSPC;
		return -1;
	}
	if (m->n + len > sizeof(m->b))
		abort();
	memcpy(m->b + m->n, data, len);
	m->n += len;
	return 0;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void test_jvmti__record_bytes(void **state)
{
	(void)state;
	static struct mem m;
	memset(&m, 0, sizeof(m));
	struct jd_writer w;
	assert_int_equal(jd_init(&w, mem_sink, &m, 64), 0);
	assert_int_equal(jd_header(&w, 62, 4242, 1000), 0);
	const unsigned char code[4] = { 0x55, 0x48, 0x89, 0xe5 };
	struct jd_row r[] = { { 0x7000, 12, 0, "com/acme/Inventory.java" } };
	assert_int_equal(jd_debug_info(&w, 1001, 0x7000, r, 1), 0);
	assert_int_equal(jd_code_load(&w, 1002, 4242, 4243, 0x7000, code, 4, "int Prog.fib(int)"), 0);
	assert_int_equal(jd_code_close(&w, 1003), 0);
	assert_int_equal(jd_flush(&w), 0);
	jd_free(&w);
	assert_true(m.calls > 1);   /* the records passed the 64-byte buffer */
	/* Header: docs/formats.md 5.1. */
	assert_int_equal(m.n, 40 + (32 + 16 + 24) + (56 + 18 + 4) + 16);
	assert_int_equal(u32_at(m.b), 0x4A695444);
	assert_memory_equal(m.b, "DTiJ", 4);   /* little-endian host */
	assert_int_equal(u32_at(m.b + 4), 1);
	assert_int_equal(u32_at(m.b + 8), 40);
	assert_int_equal(u32_at(m.b + 12), 62);
	assert_int_equal(u32_at(m.b + 20), 4242);
	assert_int_equal(u64_at(m.b + 24), 1000);
	assert_int_equal(u64_at(m.b + 32), 0);
	/* DEBUG_INFO: 5.5. */
	const unsigned char *d = m.b + 40;
	assert_int_equal(u32_at(d), 2);
	assert_int_equal(u32_at(d + 4), 72);
	assert_int_equal(u64_at(d + 8), 1001);
	assert_int_equal(u64_at(d + 16), 0x7000);
	assert_int_equal(u64_at(d + 24), 1);
	assert_int_equal(u64_at(d + 32), 0x7000);
	assert_int_equal(u32_at(d + 40), 12);
	assert_int_equal(u32_at(d + 44), 0);
	assert_string_equal((const char *)d + 48, "com/acme/Inventory.java");
	/* CODE_LOAD: 5.3; code_index from 1. */
	const unsigned char *l = d + 72;
	assert_int_equal(u32_at(l), 0);
	assert_int_equal(u32_at(l + 4), 78);
	assert_int_equal(u32_at(l + 16), 4242);
	assert_int_equal(u32_at(l + 20), 4243);
	assert_int_equal(u64_at(l + 24), 0x7000);
	assert_int_equal(u64_at(l + 32), 0x7000);
	assert_int_equal(u64_at(l + 40), 4);
	assert_int_equal(u64_at(l + 48), 1);
	assert_string_equal((const char *)l + 56, "int Prog.fib(int)");
	assert_memory_equal(l + 74, code, 4);
	/* CODE_CLOSE: 5.6. */
	assert_int_equal(u32_at(l + 78), 3);
	assert_int_equal(u32_at(l + 82), 16);
}

static void test_jvmti__read_back_by_cgjit(void **state)
{
	(void)state;
	static struct mem m;
	memset(&m, 0, sizeof(m));
	struct jd_writer w;
	assert_int_equal(jd_init(&w, mem_sink, &m, 4096), 0);
	assert_int_equal(jd_header(&w, jd_host_elf_machine(), 777, 5), 0);
	assert_int_equal(jd_code_load(&w, 6, 777, 778, 0x5000, "\xc3", 1, "flush_icache_stub"), 0);
	unsigned char code[0x60];
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (unsigned char)(0x90 + (i & 7));
	const char *inv = "com/acme/Inventory.java", *item = "com/acme/Item.java";
	struct jn_pc pcs[] = { { 0x6010, inv, 11 }, { 0x6030, item, 14 }, { 0x6040, item, 15 },
			       { 0x6050, inv, 13 } };
	struct jd_row rows[5];
	size_t n = jn_rows(0x6000, sizeof(code), pcs, 4, 1, rows);
	assert_int_equal(n, 4);
	assert_int_equal(jd_debug_info(&w, 7, 0x6000, rows, n), 0);
	assert_int_equal(jd_code_load(&w, 8, 777, 778, 0x6000, code, sizeof(code),
				      "long com.acme.Inventory.total(java.util.List, int[])"), 0);
	assert_int_equal(jd_code_close(&w, 9), 0);
	assert_int_equal(jd_flush(&w), 0);
	jd_free(&w);

	char *p = tmp_file_n((const char *)m.b, m.n);
	struct symtab *st = symtab_new();
	struct jitdump_stats js;
	struct diag dg;
	memset(&js, 0, sizeof(js));
	memset(&dg, 0, sizeof(dg));
	assert_int_equal(jitdump_read(st, p, "obj", JITDUMP_BIAS_AUTO, &js, &dg), 0);
	symtab_finish(st);
	unlink(p);
	free(p);
	assert_int_equal(js.pid, 777);
	assert_int_equal(js.loads, 2);
	assert_int_equal(js.debug_used, 1);
	assert_int_equal(js.debug_entries, 4);
	assert_int_equal(js.closes, 1);
	assert_int_equal(js.bad_debug, 0);
	assert_int_equal(js.bias, 0);
	assert_int_equal(js.elf_mach, jd_host_elf_machine());
	const struct symbol *s = symtab_symbol(st, symtab_lookup(st, 0x6044)->sym);
	assert_string_equal(s->name, "long com.acme.Inventory.total(java.util.List, int[])");
	assert_memory_equal(s->code, code, sizeof(code));
	assert_int_equal(symtab_line(s, 0x6000)->line, 11);
	assert_string_equal(symtab_line(s, 0x600f)->file, inv);
	assert_int_equal(symtab_line(s, 0x6010)->line, 14);   /* from the first pc on */
	assert_string_equal(symtab_line(s, 0x6010)->file, item);
	assert_int_equal(symtab_line(s, 0x602f)->line, 14);
	assert_int_equal(symtab_line(s, 0x6030)->line, 15);
	assert_int_equal(symtab_line(s, 0x6040)->line, 13);
	assert_string_equal(symtab_line(s, 0x6040)->file, inv);
	assert_int_equal(symtab_line(s, 0x605f)->line, 13);   /* the last row to the end */
	s = symtab_symbol(st, symtab_lookup(st, 0x5000)->sym);
	assert_string_equal(s->name, "flush_icache_stub");
	assert_int_equal(s->nlines, 0);
	symtab_free(st);
}

static void test_jvmti__sink_failure_stops(void **state)
{
	(void)state;
	static struct mem m;
	memset(&m, 0, sizeof(m));
	m.fail_after = 1;
	struct jd_writer w;
	assert_int_equal(jd_init(&w, mem_sink, &m, 48), 0);
	assert_int_equal(jd_header(&w, 62, 1, 0), 0);
	assert_int_equal(jd_flush(&w), 0);            /* call 1: the header */
	unsigned char big[100] = { 0 };
	assert_int_equal(jd_code_load(&w, 1, 1, 1, 0x1000, big, sizeof(big), "f"), -1);
	assert_true(w.failed);
	assert_int_equal(w.err, ENOSPC);
	int calls = m.calls;
	assert_int_equal(jd_code_load(&w, 2, 1, 1, 0x2000, big, 1, "g"), -1);
	assert_int_equal(jd_code_close(&w, 3), -1);
	assert_int_equal(jd_flush(&w), -1);
	assert_int_equal(m.calls, calls);             /* nothing more reaches the sink */
	assert_int_equal(m.n, 40);
	jd_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jvmti__method_names),
		cmocka_unit_test(test_jvmti__class_names_and_intrinsics),
		cmocka_unit_test(test_jvmti__source_paths),
		cmocka_unit_test(test_jvmti__line_by_bci),
		cmocka_unit_test(test_jvmti__rows_from_pcs),
		cmocka_unit_test(test_jvmti__record_bytes),
		cmocka_unit_test(test_jvmti__read_back_by_cgjit),
		cmocka_unit_test(test_jvmti__sink_failure_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
