/* Unit tests for augment.c (resolution and rewriting) on small hand-written profiles:
 * which names are JIT code, fragments merged, folded pseudo-calls, moved lines with a
 * synthetic call, 'N and 'caller parts, parts, default output names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "augment/augment.h"
#include "core/diag.h"
#include "helpers.h"
#include "dump_builder.h"
#include "jit/pathmap.h"
#include "augment/augment_stats.h"

#define HDR "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 9\ncmd: x\npart: 1\n"

static struct augment_stats rep;
static const struct pathmap *paths;   /* --root/--path-map of the next augment() */

/* Augments the profile file PIN with the symbol file PSYM (a map or a jitdump; no ELF files
 * are written) into a new file; returns augment_run()'s status, with the error in *D, and
 * the output text (malloc'd) or NULL if there is none. */
static int augment_files(const char *pin, const char *psym, int keep, struct diag *d,
			 char **text)
{
	char *dir = tmp_dir();
	char out[4200];
	snprintf(out, sizeof(out), "%s/out", dir);
	const char *syms[1] = { psym };
	struct augment_opts o = { 0 };
	o.profile = pin;
	o.symfiles = syms;
	o.nsymfiles = 1;
	o.output = out;
	o.keep_addresses = keep;
	o.no_elf = 1;
	o.paths = paths;
	o.max_line = 1 << 20;
	int rc = augment_run(&o, &rep, d);
	*text = slurp(out);
	unlink(out);
	rmdir(dir);
	free(dir);
	return rc;
}

/* Augments PROFILE with MAP (texts) into a new file: as augment_files(). */
static int try_augment(const char *profile, const char *map, int keep, struct diag *d,
		       char **text)
{
	char *pin = tmp_file(profile), *pmap = tmp_file(map);
	int rc = augment_files(pin, pmap, keep, d, text);
	unlink(pin);
	unlink(pmap);
	free(pin);
	free(pmap);
	return rc;
}

/* Augments PROFILE with MAP; returns the output text (malloc'd). */
static char *augment(const char *profile, const char *map, int keep)
{
	struct diag d = { 0 };
	char *s;
	if (try_augment(profile, map, keep, &d, &s) < 0 || !s)
		fail_msg("augment failed: %s", d.msg);
	return s;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static const char map1[] =
	"10000000 100 jit_A(/src/a.raku:10)\n"
	"10000100 100 JS:*jit_B /src/b.js:3:7\n"
	"10000200 100 int C.c(int)\n";

static void test_augment__candidates_only(void **state)
{
	(void)state;
	/* 0x...10000000 in a named object is an ELF offset; 0x...20000000 in ??? is outside
	 * every range (a PLT stub, say): both stay as written. */
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 7\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) 0x0000000010000000\n0 1\n"
			  "ob=(2) ???\nfl=(2) ???\nfn=(2) 0x0000000020000000\n0 2\n"
			  "fn=(3) 0x0000000010000000\n0 4\ntotals: 7\n", map1, 0);
	assert_int_equal(count(s, "fn=(1) 0x0000000010000000\n"), 1);
	assert_int_equal(count(s, "0x0000000020000000"), 1);
	assert_int_equal(count(s, "jit_A(/src/a.raku:10)"), 1);
	assert_int_equal(rep.pseudo_functions, 2);
	assert_int_equal(rep.resolved, 1);
	assert_int_equal(rep.events[0].jit, 4);
	assert_int_equal(rep.events[0].unknown, 2);
	free(s);
}

static void test_augment__fragments_fold(void **state)
{
	(void)state;
	/* A is entered at its start and at +0x40 (two pseudo-functions); the pseudo-call
	 * between them is folded; A's callers keep calling one identity defined on cfn=. */
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 16\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) main\n0x400 5 1\n"
			  "cob=(2) ???\ncfi=(2) ???\ncfn=(3) 0x0000000010000000\ncalls=1 0x10000000 0\n0x404 6 15\n"
			  "ob=(2)\nfl=(2)\nfn=(3)\n0x10000000 0 5\n"
			  "cfn=(4) 0x0000000010000040\ncalls=1 0x10000040 0\n0x10000004 0 10\n"
			  "fn=(4)\n0x10000040 0 10\ntotals: 16\n", map1, 0);
	assert_int_equal(rep.pseudo_calls_removed, 1);
	assert_int_equal(count(s, "calls="), 1);
	/* defined at the call site, with the object and file its body gets */
	assert_non_null(strstr(s, "cfi=(2) /src/a.raku\ncfn=(3) jit_A(/src/a.raku:10)\n"));
	assert_non_null(strstr(s, "ob=(2)\nfl=(2)\nfn=(3)\n0x10000000 10 5\n"));   /* line from the name */
	assert_int_equal(count(s, "\nfn=("), 2);   /* main and one body for both fragments */
	assert_int_equal(rep.events[0].jit, 15);
	free(s);
}

static void test_augment__tail_jump_moves_with_synthetic_call(void **state)
{
	(void)state;
	/* A's block holds code of B (reached by a tail jump) and code outside every range (a
	 * runtime's trampoline): both move out of A, each with a synthetic call. */
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 30\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n"
			  "0x10000000 0 1\n+8 0 2\n0x10000104 0 20\n+2 0 3\n0x30000000 0 4\ntotals: 30\n", map1, 0);
	assert_int_equal(rep.lines_moved, 3);
	assert_int_equal(rep.synthetic_calls, 2);
	assert_int_equal(count(s, "# cgjit: synthetic call"), 2);
	/* The synthetic call runs from A's last line before the move to B's first moved line,
	 * with the moved cost as inclusive cost and its first line's Ir as count. */
	assert_non_null(strstr(s, "fn=(2) JS:*jit_B /src/b.js:3:7\n0x10000104 3 20\n"));
	assert_non_null(strstr(s, "cfn=(2)\ncalls=20 0x10000104 3\n0x10000008 10 23\n"));
	/* Outside every range: its own identity in ???, named by its entry, no source line,
	 * reached by a synthetic call that carries exactly its cost. */
	assert_non_null(strstr(s, "ob=(2) ???\nfl=(3) ???\nfn=(3) 0x0000000030000000\n0x30000000 0 4\n"));
	assert_non_null(strstr(s, "cob=(2)\ncfi=(3)\ncfn=(3)\ncalls=4 0x30000000 0\n* * 4\n"));
	assert_int_equal(rep.events[0].jit, 26);
	assert_int_equal(rep.events[0].unknown, 4);
	free(s);
}

/* The lines of a JIT function's block that lie in its own symbol's code are offered by
 * the reader one by one and written at once (rewrite.c, jit_home_line()); the others take
 * the general path. Between the two, nothing of the rules may change: a line of the
 * home symbol ends a run of foreign code (the next one is a new identity, named by its
 * own entry); the home symbol's segment is the block's own (B's line in A's code moves
 * to A even right after A's block); a contested segment's cost is counted as such. */
static void test_augment__jit_lines_offered(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 128\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n"
			  "0x10000000 0 1\n+4 0 1\n0x30000000 0 2\n+4 0 2\n0x10000010 0 4\n"
			  "0x30000100 0 8\n+4 0 8\n0x10000020 0 16\n"
			  "fn=(2) 0x0000000010000100\n0x10000030 0 32\n0x10000104 0 1\n+4 0 1\n"
			  "0x100000fc 0 2\n"
			  "fn=(3) 0x0000000010000000'caller\n0x10000040 0 50\ntotals: 128\n", map1, 0);
	/* two foreign runs, with a run at home between them: two identities */
	assert_int_equal(count(s, " 0x0000000030000000\n"), 1);
	assert_int_equal(count(s, " 0x0000000030000100\n"), 1);
	assert_non_null(strstr(s, "fn=(5) 0x0000000030000100\n0x30000100 0 8\n+4 * 8\n"));
	assert_int_equal(rep.events[0].unknown, 20);
	/* B's block: its lines in A's code (one just below B's) moved to A, its own stayed */
	assert_int_equal(rep.lines_moved, 6);
	assert_non_null(strstr(s, "fn=(2) JS:*jit_B /src/b.js:3:7\n0x10000104 3 1\n+4 * 1\n"));
	assert_int_equal(rep.events[0].jit, 108);
	assert_int_equal(rep.events[0].contested, 0);
	free(s);
	/* A's addresses claimed by two names: every line there is contested */
	s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 7\n"
		    "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n"
		    "0x10000000 0 1\n+4 0 2\n+4 0 4\ntotals: 7\n",
		    "10000000 100 jit_A(/src/a.raku:10)\n10000000 100 jit_Z(/src/z.raku:1)\n", 0);
	assert_int_equal(rep.events[0].jit, 7);
	assert_int_equal(rep.events[0].contested, 7);
	free(s);
	/* no line subposition: a line that stays is copied as the input wrote it */
	s = augment(HDR "positions: instr\nevents: Ir\nsummary: 3\n"
		    "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n"
		    "0x10000000 1\n0x10000004 2\ntotals: 3\n", map1, 0);
	assert_non_null(strstr(s, "fn=(1) jit_A(/src/a.raku:10)\n0x10000000 1\n0x10000004 2\n"));
	free(s);
	/* the line first: the address is the second subposition */
	s = augment(HDR "positions: line instr\nevents: Ir\nsummary: 3\n"
		    "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n"
		    "0 0x10000000 1\n0 +4 2\ntotals: 3\n", map1, 0);
	assert_non_null(strstr(s, "fn=(1) jit_A(/src/a.raku:10)\n10 0x10000000 1\n* +4 2\n"));
	free(s);
}

/* A caller part is renamed only when it is an address to its end: "0x" and 16 or 8
 * lowercase hex digits, then a "'" or the end of the name. Parts that only start like
 * one (more digits, a letter after them, uppercase, too few) stay as written; so do parts
 * whose address is in no symbol. */
static void test_augment__caller_part_shapes(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 1\n"
			  "ob=(2) /lib/libc.so\nfl=(2) x.c\nfn=(3) f'0x0000000010000004"
			  "'0x00000000100000041'0x000000001000000g'0x000000001000000'0x000000001000000A"
			  "'0x10000104'0x1000010'0x10000104x'x0x0000000010000004'0x0000000099999999"
			  "'0x0000000010000204'0x10000004\n0 1\ntotals: 1\n", map1, 0);
	if (!strstr(s, "fn=(3) f'jit_A(/src/a.raku:10)'0x00000000100000041'0x000000001000000g"
		       "'0x000000001000000'0x000000001000000A'JS:*jit_B /src/b.js:3:7'0x1000010"
		       "'0x10000104x'x0x0000000010000004'0x0000000099999999'int C.c(int)"
		       "'jit_A(/src/a.raku:10)\n"))
		fail_msg("%s", s);
	assert_int_equal(rep.renamed_callers, 1);
	free(s);
}


/* Lines of a symbol without a line table that come in a range run (jit_home_run()) end
 * a run of foreign code, as lines offered one by one do, and keep the input's line
 * subposition exactly where a line written by itself would (README rule 5; the writer's
 * cgw_cost_run_at_line()). */
static void test_augment__range_runs(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 31\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000200\n"
			  "0x10000200 0 1\n0x10000150 0 2\n+176 0 4\n0x10000160 0 8\n+160 0 16\n"
			  "totals: 31\n",
			  "10000000 100 jit_A(/src/a.raku:10)\n10000200 100 jit_B(/src/b.raku:3)\n", 0);
	/* two foreign runs, with a run at home between them: two identities */
	if (!strstr(s, "fn=(2) 0x0000000010000150\n0x10000150 0 2\nfn=(3) 0x0000000010000160\n"))
		fail_msg("%s", s);
	free(s);
	/* a symbol at line 0: L kept only where it and the line before are 0 */
	s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 23\n"
		    "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000204\n"
		    "0x10000204 0 1\n+4 0 9\n+7 2 6\n+3 0 7\ntotals: 23\n", map1, 0);
	if (!strstr(s, "0x10000204 0 1\n+4 0 9\n+7 * 6\n+3 * 7\n"))
		fail_msg("%s", s);
	free(s);
}

/* A jitdump symbol with a line table gets no range sink: its rows place its lines. */
static void test_augment__range_not_for_line_tables(void **state)
{
	(void)state;
	struct dump d;
	dump_header(&d, 0, 40, 9, 0, 0);
	static const struct dump_row rows[] = {
		{ 0x20000000, 7, "p.js" }, { 0x20000010, 8, "p.js" }, { 0x20000020, 12, "q.js" } };
	dump_debug(&d, 0x20000000, rows, 3, 0);
	dump_load(&d, 0x20000000, 0x100, 9, "fnP");
	char *pin = tmp_file(HDR "positions: instr line\nevents: Ir\nsummary: 9\n"
			     "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000020000000\n0x20000000 0 1\n"
			     "+4 0 1\n+4 0 1\n+4 0 1\n+4 0 1\n+4 0 1\n+4 0 1\n+4 0 1\n+4 0 1\ntotals: 9\n");
	char *pdump = tmp_file_n((const char *)d.b, d.n), *s;
	struct diag dg = { 0 };
	if (augment_files(pin, pdump, 0, &dg, &s) < 0 || !s)
		fail_msg("%s", dg.msg);
	/* rows: line 8 from 0x20000010, q.js's 12 from 0x20000020 */
	if (!strstr(s, "fn=(1) fnP\n0x20000000 7 1\n+4 * 1\n+4 * 1\n+4 * 1\n+4 +1 1\n"))
		fail_msg("%s", s);
	if (!strstr(s, "+4 +4 1\n"))
		fail_msg("%s", s);
	free(s);
	unlink(pin);
	unlink(pdump);
	free(pin);
	free(pdump);
}

static void test_augment__suffixes(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 3\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000200'2\n0 1\n"
			  "fn=(2) 0x0000000010000100'0x0000000010000000'main\n0 1\n"
			  "ob=(2) /lib/libc.so\nfl=(2) x.c\nfn=(3) memcpy'0x0000000010000200'0x0000000099999999\n0 1\n"
			  "totals: 3\n", map1, 0);
	assert_non_null(strstr(s, "fn=(1) int C.c(int)'2\n"));
	assert_non_null(strstr(s, "fn=(2) JS:*jit_B /src/b.js:3:7'jit_A(/src/a.raku:10)'main\n"));
	assert_non_null(strstr(s, "fn=(3) memcpy'int C.c(int)'0x0000000099999999\n"));
	assert_int_equal(rep.renamed_callers, 1);
	free(s);
}

/* --root: the JIT names, their files and the JIT callers renamed in other names all carry
 * the relative path; files of ELF code stay as callgrind wrote them (README rule 7). */
static void test_augment__root(void **state)
{
	(void)state;
	static const char map[] =
		"10000000 100 jit_A(/ci/app/a.raku:10)\n"
		"10000100 100 JS:*jit_B /ci/app/lib/b.js:3:7\n"
		"10000200 100 JS:*jit_C /elsewhere/c.js:1:1\n";
	struct pathmap *pm = pathmap_new();
	struct diag d = { 0 };
	assert_int_equal(pathmap_add_arg(pm, "/ci/app=", &d), 0);
	paths = pm;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 4\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n0 1\n"
			  "fn=(2) 0x0000000010000100'0x0000000010000000'main\n0 1\n"
			  "fn=(3) 0x0000000010000200\n0 1\n"
			  "ob=(2) /ci/app/prog\nfl=(2) /ci/app/prog.c\nfn=(4) memcpy'0x0000000010000100\n0 1\n"
			  "totals: 4\n", map, 0);
	paths = NULL;
	pathmap_free(pm);
	assert_non_null(strstr(s, "jit_A(a.raku:10)\n"));
	assert_non_null(strstr(s, "fl=(1) a.raku\n"));
	assert_non_null(strstr(s, "JS:*jit_B lib/b.js:3:7'jit_A(a.raku:10)'main\n"));
	assert_non_null(strstr(s, " lib/b.js\n"));
	assert_non_null(strstr(s, "JS:*jit_C /elsewhere/c.js:1:1\n"));   /* not under the root */
	assert_non_null(strstr(s, "fl=(4) /ci/app/prog.c\n"));
	assert_non_null(strstr(s, "memcpy'JS:*jit_B lib/b.js:3:7\n"));
	assert_null(strstr(s, "/ci/app/a.raku"));
	assert_null(strstr(s, "/ci/app/lib"));
	assert_int_equal(rep.paths_mapped, 2);
	free(s);
}

static void test_augment__same_name_merges_or_keeps_addresses(void **state)
{
	(void)state;
	static const char map[] = "10000000 100 f(x.raku:1)\n10000100 100 f(x.raku:1)\n";
	static const char prof[] = HDR "positions: line\nevents: Ir\nsummary: 3\n"
		"ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n0 1\n"
		"cfn=(2) 0x0000000010000100\ncalls=1 0\n0 2\nfn=(2)\n0 2\ntotals: 3\n";
	char *s = augment(prof, map, 0);
	assert_int_equal(count(s, "f(x.raku:1)"), 1);
	assert_int_equal(count(s, "calls="), 0);    /* a re-compilation calling itself: folded */
	free(s);
	s = augment(prof, map, 1);
	assert_non_null(strstr(s, "f(x.raku:1) [0x10000000]"));
	assert_non_null(strstr(s, "fn=(2) f(x.raku:1) [0x10000100]\n"));
	assert_non_null(strstr(s, "cfn=(2)\ncalls=1 1\n1 2\n"));
	assert_int_equal(count(s, "calls="), 1);
	free(s);
}

/* Issue 24 step 2: a call from a block that stays to a function that is neither JIT code
 * nor in ??? keeps its calls= and cost lines as the input wrote them (callgrind's trailing
 * space, "0" for an unchanged line); its names are the writer's, with the input's function
 * ids (issue 25) and fresh object and file ids. */
static const char plain_calls[] = HDR "positions: instr line\nevents: Ir\nsummary: 12\n"
	"ob=(7) /bin/prog\nfl=(9) prog.c\nfn=(615) main\n0x400 5 1\n"
	"cfn=(700) helper'0x0000000010000004'main\ncalls=2 0x500 12 \n* 0 7\n"
	"+4 6 1\n"
	"cfn=(700)\ncalls=1 0x500 12 \n* 0 3\n"
	"fn=(700)\n0x500 12 10\ntotals: 12\n";

static void test_augment__plain_calls_copied(void **state)
{
	(void)state;
	char *s = augment(plain_calls, map1, 0);
	/* the callee's 'caller part that is a JIT address is renamed; the input's id (700),
	 * defined where first written and then used as (700) */
	assert_non_null(strstr(s, "fn=(615) main\n"));
	assert_non_null(strstr(s, "cfn=(700) helper'jit_A(/src/a.raku:10)'main\ncalls=2 0x500 12 \n* 0 7\n"));
	assert_non_null(strstr(s, "+4 6 1\ncfn=(700)\ncalls=1 0x500 12 \n* 0 3\n"));
	assert_int_equal(count(s, "(7)"), 0);   /* objects and files: the writer's */
	assert_int_equal(count(s, "(9)"), 0);
	assert_int_equal(rep.renamed_callers, 1);
	free(s);
}

/* The same calls, each in a form that must still be re-encoded: hex count, a tab, a call
 * as the first line of its block (the writer's base starts anew there), a callee in ???
 * (a pseudo-function no symbol covers), a JIT callee. */
static void test_augment__calls_still_reencoded(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 5\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) main\n0x400 5 1\n"
			  "cfn=(2) f\ncalls=0x2 0x500 12\n* 5 7\n"
			  "cfn=(2)\ncalls=2\t0x500 12\n* 5 7\n"
			  "fn=(2)\ncfn=(1)\ncalls=1 0x400 5 \n0x504 12 9\n0x500 12 2\n"
			  "fn=(1)\n0x408 5 1\n"
			  "cob=(2) ???\ncfi=(2) ???\ncfn=(3) 0x0000000020000000\ncalls=1 0x20000000 0 \n* 5 4\n"
			  "cob=(2)\ncfi=(2)\ncfn=(4) 0x0000000010000000\ncalls=1 0x10000000 0 \n+4 5 6\n"
			  "ob=(2)\nfl=(2)\nfn=(3)\n0x20000000 0 1\ntotals: 5\n", map1, 0);
	assert_int_equal(count(s, "calls=2 0x500 12\n* * 7\n"), 2);
	assert_non_null(strstr(s, "cfn=(1)\ncalls=1 0x400 5\n0x504 12 9\n"));
	assert_non_null(strstr(s, "cfn=(3) 0x0000000020000000\ncalls=1 0x20000000 0\n* * 4\n"));
	assert_non_null(strstr(s, "calls=1 0x10000000 10\n"));   /* held, line from the name */
	assert_int_equal(count(s, "calls="), 5);
	free(s);
}

/* 0X is hexadecimal too (scan_number() reads it), which callgrind_annotate reads as 0 and
 * kcachegrind does not read as a jump target: a count, a relative position or a jump target
 * written so is re-encoded, never copied. */
static void test_augment__uppercase_hex_reencoded(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 11\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) main\n0x400 5 1\n"
			  "cfn=(2) f\ncalls=0X2 0x500 12 \n* 5 7\n"
			  "+0X4 6 1\n"
			  "jump=1 +0X8 *\n+2 *\n"
			  "fn=(2)\n0x500 12 9\ntotals: 11\n", map1, 0);
	assert_non_null(strstr(s, "cfn=(2) f\ncalls=2 0x500 12\n* * 7\n+4 +1 1\njump=1 0x40c 6\n+2 *\n"));
	/* not anywhere: the "# cgjit:" line names the map, a random temporary name */
	assert_int_equal(count(s, "=0X") + count(s, " 0X") + count(s, "+0X") + count(s, "\n0X"), 0);
	free(s);
}

/* Jumps (--collect-jumps=yes) between code that stays are copied with their source line
 * (callgrind ends both with a space); jfn= is the writer's. A jump into a JIT function is
 * re-encoded. */
static void test_augment__plain_jumps_copied(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 4\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(5) main\n0x400 5 1\n"
			  "jump=3 +8 *\n+2 *\n"
			  "jcnd=1/4 0x420 6 \n+3 6\n"
			  "jfn=(6) other\njump=2 0x600 9 \n* * \n"
			  "+1 * 1\n"
			  "fn=(6)\n0x600 9 1\n"
			  "ob=(2) ???\nfl=(2) ???\nfn=(7) 0x0000000010000000\n0x10000000 0 1\n"
			  "jump=1 0x10000010 0\n+4 0\ntotals: 4\n", map1, 0);
	assert_non_null(strstr(s, "fn=(5) main\n0x400 5 1\njump=3 +8 *\n+2 *\njcnd=1/4 0x420 6 \n+3 6\n"
			       "jfn=(6) other\njump=2 0x600 9 \n* * \n+1 * 1\n"));
	assert_non_null(strstr(s, "fn=(7) jit_A(/src/a.raku:10)\n0x10000000 10 1\njump=1 0x10000010 10\n+4 *\n"));
	assert_int_equal(rep.jumps_dropped, 0);
	free(s);
}

/* Rule 9: pseudo-function F (0x1000) has a line at 0x2008, in map symbol X's range, which
 * moves; the ELF function Builtins_X has lines around it in two blocks, each meeting X's
 * range. FIRST and SECOND are those lines' addresses. */
static const char rule9_map[] = "1000 100 F\n2000 100 X\n";
#define RULE9(first, second) HDR "positions: instr line\nevents: Ir\nsummary: 14\n" \
	"ob=(1) /bin/node\nfl=(1) ???\nfn=(1) Builtins_X\n" first " 0 1\n" \
	"ob=(2) ???\nfl=(2) ???\nfn=(2) 0x0000000000001000\n0x1000 0 5\n0x2008 0 7\n" \
	"ob=(1)\nfl=(1)\nfn=(1)\n" second " 0 1\ntotals: 14\n"

static void test_augment__rule9_spans_blocks(void **state)
{
	(void)state;
	/* neither block alone spans 0x2008: their hull does */
	char *s = augment(RULE9("0x2000", "0x2010"), rule9_map, 0);
	assert_int_equal(rep.lines_to_elf_functions, 1);
	assert_non_null(strstr(s, "fn=(1)\n0x2010 0 1\n-8 * 7\n"));
	assert_non_null(strstr(s, "cob=(1)\ncfn=(1)\ncalls=7 0x2008 0\n0x1000 0 7\n"));
	assert_null(strstr(s, " X\n"));
	free(s);
}

static void test_augment__rule9_blocks_outside_symbols(void **state)
{
	(void)state;
	/* Builtins_X's blocks lie on both sides of X, neither meeting it: the line stays X's */
	char *s = augment(RULE9("0x1f00", "0x2200"), rule9_map, 0);
	assert_int_equal(rep.lines_to_elf_functions, 0);
	assert_non_null(strstr(s, "fn=(3) X\n0x2008 0 7\n"));
	free(s);
}

static void test_augment__rule9_block_beside_symbols_not_counted(void **state)
{
	(void)state;
	/* Builtins_X's second block, 48 MiB away, meets no symbol: it does not widen the
	 * span, which holds 0x2008 (a span over both blocks would be too wide) */
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 16\n"
			  "ob=(1) /bin/node\nfl=(1) ???\nfn=(1) Builtins_X\n0x2000 0 1\n0x2010 0 1\n"
			  "ob=(2) ???\nfl=(2) ???\nfn=(2) 0x0000000000001000\n0x1000 0 5\n0x2008 0 7\n"
			  "ob=(1)\nfl=(1)\nfn=(1)\n0x3002000 0 2\ntotals: 16\n", rule9_map, 0);
	assert_int_equal(rep.lines_to_elf_functions, 1);
	assert_non_null(strstr(s, "cob=(1)\ncfn=(1)\ncalls=7 0x2008 0\n"));
	free(s);
}

static void test_augment__rule9_wide_span(void **state)
{
	(void)state;
	/* each block meets a symbol, and together they span more than 16 MiB */
	static const char map[] = "1000 100 F\n2000 100 X\n1002000 100 Y\n";
	char *s = augment(RULE9("0x2000", "0x1002001"), map, 0);
	assert_int_equal(rep.lines_to_elf_functions, 0);
	assert_non_null(strstr(s, "fn=(3) X\n0x2008 0 7\n"));
	free(s);
	s = augment(RULE9("0x2000", "0x1002000"), map, 0);   /* exactly 16 MiB: counts */
	assert_int_equal(rep.lines_to_elf_functions, 1);
	free(s);
}

static void test_augment__rule9_interleaved_blocks(void **state)
{
	(void)state;
	/* three functions, two blocks each, interleaved: each span is its own two blocks' */
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 24\n"
			  "ob=(1) /bin/node\nfl=(1) ???\nfn=(3) Builtins_C\n0x2200 0 1\n"
			  "fn=(1) Builtins_A\n0x2000 0 1\nfn=(2) Builtins_B\n0x2100 0 1\n"
			  "fn=(3)\n0x2210 0 1\nfn=(1)\n0x2010 0 1\nfn=(2)\n0x2110 0 1\n"
			  "ob=(2) ???\nfl=(2) ???\nfn=(4) 0x0000000000001000\n0x1000 0 3\n"
			  "0x2008 0 4\n0x2108 0 5\n0x2208 0 6\ntotals: 24\n",
			  "1000 100 F\n2000 300 X\n", 0);
	assert_int_equal(rep.lines_to_elf_functions, 3);
	assert_non_null(strstr(s, "cfn=(1)\ncalls=4 0x2008 0\n"));
	assert_non_null(strstr(s, "cfn=(2)\ncalls=5 0x2108 0\n"));
	assert_non_null(strstr(s, "cfn=(3)\ncalls=6 0x2208 0\n"));
	free(s);
}

static void test_augment__rule9_first_defined_wins_a_tie(void **state)
{
	(void)state;
	/* the same span and name length: the function defined first (Builtins_X, on a cfn=
	 * line), whatever its id and wherever its block */
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 17\n"
			  "ob=(1) /bin/node\nfl=(1) ???\nfn=(5) main\n0x100 0 1\n"
			  "cfn=(9) Builtins_X\ncalls=1 0x2000 0\n0x104 0 2\n"
			  "fn=(7) Builtins_Y\n0x2000 0 1\n0x2010 0 1\n"
			  "fn=(9)\n0x2000 0 1\n0x2010 0 1\n"
			  "ob=(2) ???\nfl=(2) ???\nfn=(2) 0x0000000000001000\n0x1000 0 5\n0x2008 0 7\n"
			  "totals: 17\n", rule9_map, 0);
	assert_int_equal(rep.lines_to_elf_functions, 1);
	assert_non_null(strstr(s, "cob=(1)\ncfn=(9)\ncalls=7 0x2008 0\n"));
	free(s);
}

/* V8 baseline code: F's entry (0x10000000) calls the prologue builtin P at +0xf, which
 * returns to +0x14 with a lower stack pointer: callgrind records P -> 0x10000014. */
static const char baseline[] = HDR "positions: instr line\nevents: Ir\nsummary: 35\n"
	"ob=(1) /bin/node\nfl=(1) ???\nfn=(1) caller\n0x400 0 1\n"
	"cob=(2) ???\ncfi=(2) ???\ncfn=(2) 0x0000000010000000\ncalls=3 0x10000000 0\n0x404 0 34\n"
	"fn=(3) Builtins_Prologue\n0x500 0 2\n"
	"cob=(2)\ncfi=(2)\ncfn=(4) 0x0000000010000014\ncalls=3 0x10000014 0\n0x504 0 %s\n"
	"ob=(2)\nfl=(2)\nfn=(2)\n0x10000000 0 3\n"
	"cob=(1)\ncfi=(1)\ncfn=(3)\ncalls=3 0x500 0\n0x1000000f 0 %s\n"
	"fn=(4)\n0x10000014 0 29\ntotals: 35\n";

static void test_augment__return_recorded_as_call_dropped(void **state)
{
	(void)state;
	char prof[sizeof(baseline) + 16];
	snprintf(prof, sizeof(prof), baseline, "29", "31");
	char *s = augment(prof, map1, 0);
	assert_int_equal(rep.returns_as_calls, 1);
	/* No call from the builtin into A; A's call to it keeps its count and loses the
	 * body's cost (31 - 29 = the builtin's own 2); A is called 3 times, inclusive 34. */
	assert_int_equal(count(s, "calls="), 2);
	assert_non_null(strstr(s, "cfn=(2) jit_A(/src/a.raku:10)\ncalls=3 0x10000000 10\n+4 * 34\n"));
	assert_non_null(strstr(s, "calls=3 0x500 0\n-5 * 2\n"));
	free(s);
}

static void test_augment__interior_call_that_is_no_return_stays(void **state)
{
	(void)state;
	char prof[sizeof(baseline) + 16];
	/* The arc costs more than the call at +0xf contains: not a return of that call. */
	snprintf(prof, sizeof(prof), baseline, "29", "28");
	char *s = augment(prof, map1, 0);
	assert_int_equal(rep.returns_as_calls, 0);
	assert_int_equal(count(s, "calls="), 3);
	free(s);
}

/* A return recorded as a call, made from code that moved (P's code reached by a jump
 * from A): it is dropped, so the synthetic call A -> P carries only what moved (20). */
static void test_augment__dropped_return_not_in_synthetic_call(void **state)
{
	(void)state;
	static const char map[] = "1000 100 F\n2000 100 P\n3000 100 A\n";
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 142\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000001000\n0x1000 0 10\n"
			  "cfn=(2) 0x0000000000002000\ncalls=1 0x2000 0\n0x1010 0 100\n"
			  "fn=(2)\n0x2000 0 100\n"
			  "fn=(3) 0x0000000000003000\n0x3000 0 7\n0x2050 0 20\n"
			  "cfn=(4) 0x0000000000001015\ncalls=1 0x1015 0\n0x2060 0 5\n"
			  "fn=(4)\n0x1015 0 5\ntotals: 142\n", map, 0);
	assert_int_equal(rep.returns_as_calls, 1);
	assert_non_null(strstr(s, "calls=1 0x2000 0\n0x1010 0 95\n"));
	assert_non_null(strstr(s, "calls=20 0x2050 0\n0x3000 0 20\n"));
	assert_int_equal(count(s, "calls="), 2);
	free(s);
}

/* One name defined under two ids (callgrind's --separate-callers can do that): the
 * reader hands it out twice. A JIT name is still one identity, defined once (rule 3); a
 * name that is not JIT code keeps the input's two ids, which kcachegrind and
 * callgrind_annotate key by name as one function. */
static void test_augment__one_name_two_ids(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 15\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) main\n0 1\n"
			  "cob=(2) ???\ncfi=(2) ???\ncfn=(2) 0x0000000010000000'main\ncalls=1 0\n0 2\n"
			  "cob=(2)\ncfi=(2)\ncfn=(3) 0x0000000010000000'main\ncalls=1 0\n0 4\n"
			  "fn=(4) memcpy'main\n0 1\nfn=(5) memcpy'main\n0 1\n"
			  "ob=(2)\nfl=(2)\nfn=(2)\n0 2\nfn=(3)\n0 4\n"
			  "fn=(6) 0x0000000020000000'main\n0 3\nfn=(7) 0x0000000020000000'main\n0 3\n"
			  "totals: 15\n", map1, 0);
	assert_int_equal(count(s, "jit_A(/src/a.raku:10)'main"), 1);
	assert_int_equal(count(s, ") jit_A(/src/a.raku:10)'main\n"), 1);
	assert_int_equal(count(s, "memcpy'main\n"), 2);
	assert_int_equal(count(s, "0x0000000020000000'main\n"), 2);
	assert_int_equal(rep.resolved, 2);     /* definitions, as the input gives them */
	assert_int_equal(rep.events[0].jit, 6);
	free(s);
}

/* Two functions that are not JIT code, whose caller parts are two addresses of one JIT
 * function: both come out as memcpy'jit_A(...)'main, each under its own input id (not
 * merged: kcachegrind and callgrind_annotate key them as one function by name). */
static void test_augment__renamed_callers_keep_their_ids(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 3\n"
			  "ob=(1) /lib/libc.so\nfl=(1) x.c\n"
			  "fn=(4) memcpy'0x0000000010000000'main\n0 1\n"
			  "fn=(9) memcpy'0x0000000010000010'main\n0 2\n"
			  "cfn=(4)\ncalls=1 0\n0 1\n"
			  "totals: 3\n", map1, 0);
	assert_non_null(strstr(s, "fn=(4) memcpy'jit_A(/src/a.raku:10)'main\n0 1\n"));
	assert_non_null(strstr(s, "fn=(9) memcpy'jit_A(/src/a.raku:10)'main\n0 2\ncfn=(4)\ncalls=1 0\n"));
	assert_int_equal(rep.renamed_callers, 2);
	free(s);
}

/* The caller parts that are JIT addresses are found from "x" to "x" (resolve.c,
 * next_jit_part): an "x" at the suffix's start, in a name, in "'0x" parts that are no
 * addresses (too short, not in a map, an "x" among the digits) or an address inside a
 * part ("ab0x...") leaves them as they are. */
static void test_augment__caller_parts_scan(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 1\n"
			  "ob=(1) /lib/libc.so\nfl=(1) x.c\n"
			  "fn=(4) max'xx'0x0000000010000000'0xzz'x'0x0000000099000000"
			  "'0x00000000100000x0'ab0x0000000010000000'0x0000000010000010\n0 1\n"
			  "totals: 1\n", map1, 0);
	assert_non_null(strstr(s, "fn=(4) max'xx'jit_A(/src/a.raku:10)'0xzz'x'0x0000000099000000"
			       "'0x00000000100000x0'ab0x0000000010000000'jit_A(/src/a.raku:10)\n0 1\n"));
	assert_int_equal(rep.renamed_callers, 1);
	free(s);
}

static void test_augment__parts_define_ids_again(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: line\nevents: Ir\nsummary: 1\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n0 1\ntotals: 1\n"
			  "part: 2\npositions: line\nevents: Ir\nsummary: 2\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000010000000\n0 2\ntotals: 2\n", map1, 0);
	assert_int_equal(count(s, "fn=(1) jit_A(/src/a.raku:10)\n"), 2);
	assert_int_equal(rep.parts, 2);
	assert_int_equal(rep.events[0].total, 3);
	free(s);
}

/* Function ids are the input's (issue 25), whatever their size and spacing: the
 * functions cgjit adds (code moved to B, code no symbol covers) get ids above the part's
 * largest, and the call from the uncovered code waits for them; a part uses its ids anew. */
static void test_augment__input_ids_kept(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 28\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(9223372036854775000) main\n0x400 5 1\n"
			  "cob=(2) ???\ncfi=(2) ???\ncfn=(9223372036854775807) 0x0000000010000000\n"
			  "calls=1 0x10000000 0\n0x404 6 27\n"
			  "ob=(2)\nfl=(2)\nfn=(9223372036854775807)\n"
			  "0x10000000 0 1\n+8 0 2\n0x10000104 0 20\n0x30000000 0 4\n"
			  "cob=(1)\ncfi=(1)\ncfn=(9223372036854775000)\ncalls=1 0x400 5\n+4 0 9\n"
			  "totals: 28\n"
			  "part: 2\npositions: line\nevents: Ir\nsummary: 2\n"
			  "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(9223372036854775807) f\n0 2\ntotals: 2\n",
			  map1, 0);
	assert_non_null(strstr(s, "fn=(9223372036854775000) main\n"));
	assert_non_null(strstr(s, "cfn=(9223372036854775807) jit_A(/src/a.raku:10)\n"));
	/* B's code and the uncovered code: above the part's largest id, in the order made */
	assert_non_null(strstr(s, "fn=(9223372036854775808) JS:*jit_B /src/b.js:3:7\n"));
	/* the call made from the uncovered code, written once its id was known */
	assert_non_null(strstr(s, "fn=(9223372036854775809) 0x0000000030000000\ncob=(1)\ncfi=(1)\n"
			       "cfn=(9223372036854775000)\ncalls=1 0x400 5\n0x30000004 0 9\n"));
	assert_non_null(strstr(s, "fn=(9223372036854775807) f\n0 2\n"));   /* part 2 */
	assert_int_equal(rep.synthetic_calls, 2);
	assert_int_equal(rep.events[0].total, 30);
	free(s);
}

/* B's code met first in A's block (an identity cgjit makes, waiting for an id), then
 * defined by the input: B takes the input's id, and the synthetic call to it too. */
static void test_augment__moved_owner_defined_later(void **state)
{
	(void)state;
	char *s = augment(HDR "positions: instr line\nevents: Ir\nsummary: 26\n"
			  "ob=(1) ???\nfl=(1) ???\nfn=(40) 0x0000000010000000\n"
			  "0x10000000 0 1\n+8 0 2\n0x10000104 0 20\n"
			  "fn=(90) 0x0000000010000100\n0x10000100 0 3\ntotals: 26\n", map1, 0);
	assert_non_null(strstr(s, "fn=(90) JS:*jit_B /src/b.js:3:7\n"));
	assert_non_null(strstr(s, "cfn=(90)\ncalls=20 0x10000104 3\n"));
	assert_int_equal(count(s, "(91)"), 0);   /* no id of its own: it is the input's B */
	assert_int_equal(rep.synthetic_calls, 1);
	free(s);
}

/* The ids reach 2^64 - 1 and a function named without an id needs one above: refused,
 * with the reason, and no output. */
static void test_augment__ids_exhausted(void **state)
{
	(void)state;
	struct diag d = { 0 };
	char *s;
	assert_int_equal(try_augment(HDR "positions: line\nevents: Ir\nsummary: 2\n"
				     "ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(18446744073709551615) main\n"
				     "0 1\nfn=other\n0 1\ntotals: 2\n", map1, 0, &d, &s), -1);
	assert_non_null(strstr(d.msg, "function ids reach 2^64 - 1"));
	assert_null(s);   /* nothing written */
}

static void test_augment__default_output(void **state)
{
	(void)state;
	char *o = augment_default_output("dir/callgrind.out.1234");
	assert_string_equal(o, "dir/callgrind.out.jit.1234");
	free(o);
	/* a compressed input gives a plain output (callgrind_annotate reads no zstd) */
	o = augment_default_output("callgrind.out.1234.2-01.zst");
	assert_string_equal(o, "callgrind.out.jit.1234.2-01");
	free(o);
	o = augment_default_output("callgrind.out.zst");
	assert_string_equal(o, "callgrind.jit.out");
	free(o);
	o = augment_default_output("p/prof.zst");
	assert_string_equal(o, "p/jit.prof");
	free(o);
	o = augment_default_output(".zst");
	assert_string_equal(o, "jit..zst");
	free(o);
	o = augment_default_output("/x/callgrind.out");
	assert_string_equal(o, "/x/callgrind.jit.out");
	free(o);
	o = augment_default_output("prof.txt");
	assert_string_equal(o, "jit.prof.txt");
	free(o);
	assert_null(augment_default_output("-"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_augment__candidates_only),
		cmocka_unit_test(test_augment__fragments_fold),
		cmocka_unit_test(test_augment__tail_jump_moves_with_synthetic_call),
		cmocka_unit_test(test_augment__jit_lines_offered),
		cmocka_unit_test(test_augment__suffixes),
		cmocka_unit_test(test_augment__caller_part_shapes),
		cmocka_unit_test(test_augment__range_runs),
		cmocka_unit_test(test_augment__range_not_for_line_tables),
		cmocka_unit_test(test_augment__root),
		cmocka_unit_test(test_augment__same_name_merges_or_keeps_addresses),
		cmocka_unit_test(test_augment__return_recorded_as_call_dropped),
		cmocka_unit_test(test_augment__interior_call_that_is_no_return_stays),
		cmocka_unit_test(test_augment__dropped_return_not_in_synthetic_call),
		cmocka_unit_test(test_augment__one_name_two_ids),
		cmocka_unit_test(test_augment__plain_calls_copied),
		cmocka_unit_test(test_augment__calls_still_reencoded),
		cmocka_unit_test(test_augment__uppercase_hex_reencoded),
		cmocka_unit_test(test_augment__plain_jumps_copied),
		cmocka_unit_test(test_augment__renamed_callers_keep_their_ids),
		cmocka_unit_test(test_augment__caller_parts_scan),
		cmocka_unit_test(test_augment__parts_define_ids_again),
		cmocka_unit_test(test_augment__input_ids_kept),
		cmocka_unit_test(test_augment__moved_owner_defined_later),
		cmocka_unit_test(test_augment__ids_exhausted),
		cmocka_unit_test(test_augment__default_output),
		cmocka_unit_test(test_augment__rule9_spans_blocks),
		cmocka_unit_test(test_augment__rule9_blocks_outside_symbols),
		cmocka_unit_test(test_augment__rule9_block_beside_symbols_not_counted),
		cmocka_unit_test(test_augment__rule9_wide_span),
		cmocka_unit_test(test_augment__rule9_interleaved_blocks),
		cmocka_unit_test(test_augment__rule9_first_defined_wins_a_tie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
