/*
 * cgcheck - independent test oracle for callgrind profiles (plain text).
 *
 * Reads profiles the way kcachegrind's loader does (libcore/
 * cachegrindloader.cpp and TraceData::function(), v22.12.3; see
 * docs/formats.md sections 1, 3 and 6) and checks:
 *
 *   (a) per part and event, the sum of self-cost lines equals `totals:`
 *   (b) no undefined compressed id; no id redefined with another name
 *       (nor a function id re-bound to another file/object)
 *   (c) every `calls=` is followed by its cost line, every `jump=`/`jcnd=`
 *       by its position-only line
 *   (d) no split function (docs/formats.md 3.4): a key with callers but no
 *       body while another key with the same name has a body
 *   (e) every called (or jumped-to) key has a body under the same key
 *   (f) no cost line without a function ("Function not specified")
 *   (g) no TAB and no leading whitespace on cost lines
 *   (h) no NUL bytes
 * plus parse errors (malformed lines, unknown lines, missing events:,
 * missing totals:, no final newline).
 *
 * --jit-invariants RANGES IN OUT checks cgjit's call graph of JIT functions
 * in OUT against its input IN (see the section of that name below): the
 * inclusive cost and call count of each JIT function against the calls into
 * its addresses in IN, less the returns that callgrind recorded as calls
 * (found here, independently), plus cgjit's synthetic calls; that each JIT
 * function's callers pay its self cost and callees where IN's functions did;
 * and that no JIT name is two functions.
 *
 * Identity: key = name + basename(file) + basename(object), no separator,
 * bound when an id is *defined* with the context then in effect; `???` is
 * the empty name; a later `(id)` reference returns the bound function.
 * Id tables (objects, files, functions) are cleared at every new part.
 *
 * Independent of cgjit's sources; libc only.
 * Build: cc -std=c11 -O2 -Wall -Wextra -Werror -o cgcheck cgcheck.c
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef unsigned long long u64;
#define MAXPOS 3

static void *xrealloc(void *p, size_t n)
{
	if (!(p = realloc(p, n ? n : 1))) {
		fprintf(stderr, "cgcheck: out of memory\n");
		exit(2);
	}
	return p;
}

static u64 *zalloc_costs(u64 *p, int nev)
{
	p = xrealloc(p, (size_t)(nev + 1) * sizeof *p);
	memset(p, 0, (size_t)(nev + 1) * sizeof *p);
	return p;
}

/* ---- problems: one line each on stderr ---- */

static const char *g_fname = "-";
static long g_lineno;
static u64 g_nproblems, g_maxshow = 1000;
static bool g_quiet; /* a second reading of a file: its problems are reported once */

static void problem_at(long line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem_at(long line, const char *fmt, ...)
{
	va_list ap;
	if (g_quiet || (++g_nproblems > g_maxshow && g_maxshow))
		return;
	if (line > 0)
		fprintf(stderr, "%s:%ld: ", g_fname, line);
	else
		fprintf(stderr, "%s: ", g_fname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
#define problem(...) problem_at(g_lineno, __VA_ARGS__)

/* Decimal or 0x hex, as kcachegrind accepts in every numeric field.
 * False if there is no digit or the value overflows. */
static bool parse_num(const char **pp, u64 *out)
{
	const char *p = *pp;
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	char *end;
	if (hex ? !isxdigit((unsigned char)p[2]) : !isdigit((unsigned char)p[0]))
		return false;
	errno = 0;
	*out = strtoull(hex ? p + 2 : p, &end, hex ? 16 : 10);
	if (errno == ERANGE)
		return false;
	*pp = end;
	return true;
}

static const char *skip_sp(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* ---- string interning ----
 * Every string (names, function keys, and "id keys" "<kind><id>") gets an
 * index.  Parallel arrays: S_func = function of a key string; S_idval and
 * S_idgen = what an id key is bound to, valid only in part generation
 * S_idgen (so clearing all id tables at a new part is O(1)). */

static char **S;
static int *S_func, *S_idval;
static unsigned *S_idgen;
static size_t nS, capS;
static int *Stab; /* open addressing over string indexes, -1 = empty */
static size_t Stab_cap;

static size_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static int intern_n(const char *s, size_t n)
{
	if (2 * (nS + 1) > Stab_cap) {
		size_t nc = Stab_cap ? 2 * Stab_cap : 4096;
		free(Stab);
		Stab = xrealloc(NULL, nc * sizeof *Stab);
		memset(Stab, 0xff, nc * sizeof *Stab);
		for (size_t i = 0; i < nS; i++) {
			size_t h = hash_bytes(S[i], strlen(S[i])) & (nc - 1);
			while (Stab[h] >= 0)
				h = (h + 1) & (nc - 1);
			Stab[h] = (int)i;
		}
		Stab_cap = nc;
	}
	size_t h = hash_bytes(s, n) & (Stab_cap - 1);
	for (; Stab[h] >= 0; h = (h + 1) & (Stab_cap - 1))
		if (strncmp(S[Stab[h]], s, n) == 0 && S[Stab[h]][n] == '\0')
			return Stab[h];
	if (nS >= capS) {
		capS = capS ? 2 * capS : 4096;
		S = xrealloc(S, capS * sizeof *S);
		S_func = xrealloc(S_func, capS * sizeof *S_func);
		S_idval = xrealloc(S_idval, capS * sizeof *S_idval);
		S_idgen = xrealloc(S_idgen, capS * sizeof *S_idgen);
	}
	S[nS] = xrealloc(NULL, n + 1);
	memcpy(S[nS], s, n);
	S[nS][n] = '\0';
	S_func[nS] = -1;
	S_idgen[nS] = 0;
	Stab[h] = (int)nS;
	return (int)nS++;
}

static int intern(const char *s) { return intern_n(s, strlen(s)); }
/* kcachegrind's checkUnknown(): "???" is the empty name */
static int intern_name(const char *s) { return intern(strcmp(s, "???") ? s : ""); }
static const char *show(int sid) { return S[sid][0] ? S[sid] : "???"; }

static const char *base_of(int sid)
{
	const char *b = strrchr(S[sid], '/');
	return b ? b + 1 : S[sid];
}

/* ---- functions (global, like TraceData) with per-part statistics ---- */

typedef struct {
	int name, file, obj; /* string ids of the first binding */
	int part;            /* part the statistics below belong to */
	u64 *self, *out;     /* self cost; inclusive cost of calls to others */
	u64 sites, count, jumps;
	long first_ref;      /* first calls=/jump line targeting it */
	bool body;           /* some fn= block had a self cost or call line */
	/* --jit-invariants: JIT function group of this key in the input (by the
	 * address in its `0x…` name) and in the output (by name); -1 = none */
	int jin, jout, jrange;
	bool jin_set, jout_set, has_span;
	u64 jaddr, span_lo, span_hi; /* addresses of its self cost lines in this part */
} Func;

static Func *F;
static size_t nF, capF;

enum { K_OB, K_FL, K_FN };
static const char *kind_word[] = {"object", "file", "function"};
enum { NEXT_SELF, NEXT_CALL, NEXT_JUMP };

static bool opt_list, opt_totals, opt_incl, opt_addrs;
static bool opt_self_calls;   /* --inclusive counts calls to itself too */
static bool opt_lines;        /* --lines: address, line and file of every self cost line */
static bool opt_spans;        /* --spans: lowest and highest address of each ELF function's
                                 self cost lines, per part (README rule 9) */
static bool opt_jit;          /* --jit-invariants RANGES IN OUT */
static int line_idx = -1;     /* index of the line subposition, -1 if none */
static bool instr_first;  /* positions: starts with instr (absolute addresses in ???) */
static int g_parts;      /* parts are numbered over all files */
static unsigned g_gen;   /* id table generation, bumped at every part */
static int npos;         /* position kinds; kept across parts like kcachegrind */
static bool g_fatal;     /* kcachegrind would skip the rest of the file */
static int g_file_parts;

static struct {
	int num; /* 0 until events: is seen */
	int nev, ntot;
	char **evname;
	u64 *selfsum, *totals;
	bool have_totals;
	u64 pos[MAXPOS];
	int ob, file, fnfile, fn; /* current; -1 = unset */
	int cob, cfile, cfn;      /* call target context */
	int jfile, jfn;           /* jump target context */
	int next;                 /* what the next cost line is */
	long pend_line;           /* line of the pending calls=/jump */
	bool pend_reported;
	u64 pend_count;
	u64 pend_target;          /* first subposition of the calls= target */
	bool synth_pending;       /* "# cgjit: synthetic call" seen before this call */
	int *touched; /* functions seen in this part */
	size_t ntouched, captouched;
} P;

static void touch(int f)
{
	Func *fp = &F[f];
	if (fp->part == P.num)
		return;
	fp->part = P.num;
	fp->self = zalloc_costs(fp->self, P.nev);
	fp->out = zalloc_costs(fp->out, P.nev);
	fp->sites = fp->count = fp->jumps = 0;
	fp->first_ref = 0;
	fp->has_span = false;
	fp->body = false;
	if (P.ntouched >= P.captouched) {
		P.captouched = P.captouched ? 2 * P.captouched : 1024;
		P.touched = xrealloc(P.touched, P.captouched * sizeof *P.touched);
	}
	P.touched[P.ntouched++] = f;
}

/* TraceData::function(): key = name + basename(file) + basename(obj) */
static int func_get(int name, int file, int obj)
{
	static char *buf;
	static size_t cap;
	const char *bf = base_of(file), *bo = base_of(obj);
	size_t ln = strlen(S[name]), lf = strlen(bf), lo = strlen(bo);
	if (ln + lf + lo + 1 > cap)
		buf = xrealloc(buf, cap = 2 * (ln + lf + lo + 1));
	memcpy(buf, S[name], ln);
	memcpy(buf + ln, bf, lf);
	memcpy(buf + ln + lf, bo, lo);
	int k = intern_n(buf, ln + lf + lo);
	if (S_func[k] < 0) {
		if (nF >= capF)
			F = xrealloc(F, (capF = capF ? 2 * capF : 1024) * sizeof *F);
		memset(&F[nF], 0, sizeof F[nF]);
		F[nF].name = name;
		F[nF].file = file;
		F[nF].obj = obj;
		S_func[k] = (int)nF++;
	}
	touch(S_func[k]);
	return S_func[k];
}

static int empty_sid(void) { return intern(""); }

/* Resolve the name of an ob/cob (K_OB), fl/fi/fe/cfi/cfl/jfi (K_FL) or
 * fn/cfn/jfn (K_FN) line: "(id) name" defines, "(id)" references, anything
 * else is a plain name.  Returns a string id, or for K_FN a function bound
 * with file/obj. */
static int resolve(int kind, const char *tag, const char *s, int file, int obj)
{
	u64 id = 0;
	int nm, val, old = -1;
	char idkey[32];
	if (*s == ' ' || *s == '\t')
		problem("whitespace after '%s=': kcachegrind keeps it in the name", tag);
	if (s[0] != '(' || !isdigit((unsigned char)s[1])) { /* plain name */
		nm = intern_name(s);
		return kind == K_FN ? func_get(nm, file, obj) : nm;
	}
	const char *p = s + 1;
	if (p[1] == 'x' || p[1] == 'X' || !parse_num(&p, &id) || *p++ != ')') {
		problem("invalid compressed name '%s' in %s=", s, tag);
		return kind == K_FN ? func_get(empty_sid(), file, obj) : empty_sid();
	}
	while (isspace((unsigned char)*p))
		p++;
	snprintf(idkey, sizeof idkey, "%c%llu", "ofn"[kind], id);
	int k = intern(idkey);
	if (S_idgen[k] == g_gen)
		old = S_idval[k];
	if (!*p) { /* reference */
		if (old >= 0) {
			if (kind == K_FN)
				touch(old);
			return old;
		}
		problem("undefined %s id (%llu) in %s=", kind_word[kind], id, tag);
		return kind == K_FN ? func_get(empty_sid(), file, obj) : empty_sid();
	}
	nm = intern_name(p); /* definition */
	val = kind == K_FN ? func_get(nm, file, obj) : nm;
	if (old >= 0 && old != val) {
		int oldname = kind == K_FN ? F[old].name : old;
		if (oldname != nm)
			problem("redefinition of %s id (%llu) in %s=: was '%s', now '%s'",
				kind_word[kind], id, tag, show(oldname), show(nm));
		else
			problem("function id (%llu) '%s' re-bound in %s=: was file '%s' object '%s', "
				"now file '%s' object '%s'", id, show(nm), tag, show(F[old].file),
				show(F[old].obj), show(file), show(obj));
	}
	S_idgen[k] = g_gen;
	S_idval[k] = val;
	return val;
}

/* ---- --jit-invariants RANGES IN OUT ----
 * cgjit's call-graph invariants for JIT functions, from cgjit's input IN, its
 * output OUT and RANGES, the effective JIT address ranges after the overlap
 * policy (written by tests/e2e/check-augment.pl):
 *   START SIZE ENTRY NAME   [START, START+SIZE) is owned by the symbol NAME
 *                           that starts at ENTRY; ranges are disjoint
 *   object BASENAME         the functions of this object in OUT are JIT code
 *
 * A JIT function J is all symbols of one name.  In IN, a self cost or call
 * line is J's when it is in a `???` function and its address (the instr
 * subposition) lies in J's ranges (README rule 5: code no symbol covers is no
 * JIT function's) but not between the first and last self cost line of a
 * function of an ELF object in that part spanning at most 16 MiB (rule 9:
 * such code is that function's; IN is read twice for this).  Without instr
 * positions a line is J's when its function's `0x…` name is in J's ranges.
 * A call goes into J when its callee is a `???` function whose `0x…` name is.
 * In OUT, J is every function of a JIT object whose name is J's or J's
 * followed by `'` parts (`'N` recursion levels, `--separate-callers`
 * contexts): grouped, because they split what IN has at the same addresses.
 * Calls between J's members are J's own in both files (kcachegrind's
 * callers-based inclusive cost leaves calls to itself out): "into J" means
 * from outside J, "to others" to outside J.
 *
 * Returns recorded as calls (instr positions only): a call P -> B into J from
 * outside J, B not the start of its symbol F, where F's code calls P at a
 * site s with 0 < B - s <= 15 (the nearest such s in F) and the record has no
 * more calls, and in no event more cost, than all calls from F's code at s to
 * P (of any of J's functions) still have: each return found takes its cost
 * off them, as cgjit does.  Then per part and J:
 *   inv1  inclusive(OUT) = calls into J (IN) - returns + synthetic calls into J (OUT)
 *   inv2  self(OUT) + calls to others (OUT, not synthetic) <= self(IN)
 *         + calls from J's code to others (IN) - the returns' cost taken off
 *         J's calls - returns made from J's code
 *   inv3  calls into J (OUT, count) <= calls into J (IN) - returns + synthetic
 *   inv4  self(OUT) = self(IN)
 *   inv5  callers-based inclusive = self + callees: calls into J (OUT) =
 *         self(OUT) + calls and synthetic calls to others (OUT), wherever
 *         J's functions of IN, taken as callgrind wrote them (the `???`
 *         functions whose `0x…` name lies in J's ranges, by name, not by
 *         address), added up so: calls into them from outside J = their self
 *         cost + their calls to outside J (kcachegrind's two views of J agree)
 *   inv6  one function per JIT name: OUT has no two functions of JIT objects
 *         with the same name (README rule 3: the identity (object, file,
 *         name) of a JIT function does not depend on which of its loads came
 *         first or where its line rows start) */

typedef struct {
	u64 start, end, entry;
	int j;
} JRange;
static JRange *JR;
static size_t nJR;
static int *J_name;   /* group -> name sid */
static int nJ;
static int *J_of_sid; /* name sid -> group or -1, for sids < nJ_of_sid */
static size_t nJ_of_sid;
static int *J_obj;    /* sids of JIT object basenames */
static size_t nJ_obj;
static int jit_side;  /* -1: first reading of IN (spans), 0: IN, 1: OUT */

enum { Q_IN_INCL, Q_RET, Q_SELF_IN, Q_CALLS_IN, Q_RED,
       Q_OUT_INCL, Q_SYNTH_IN, Q_SELF_OUT, Q_CALLS_OUT, Q_SYNTH_OUT,
       Q_FN_INCL, Q_FN_SELF, Q_FN_CALLS, NQ };   /* Q_FN_*: IN by function (inv5) */
enum { N_IN, N_RET, N_OUT, N_SYNTH, NN };

typedef struct {
	int nev;
	bool in_seen, out_seen, instr;
	char **evname;
	u64 *v; /* [j][q][event] */
	u64 *n; /* [j][k] call counts */
	u64 nret;
} JPart;
static JPart *JP;
static int nJP;

/* per input part: calls made from JIT code, keyed by (call site, callee) */
typedef struct {
	u64 s, n, entry;
	int callee, j;
	u64 *rem; /* inclusive cost not yet taken by a return */
} JSite;
static JSite *JS;
static size_t nJS, capJS;
static int *JStab;
static size_t JStab_cap;

/* per input part: calls into J at an interior address, from outside J */
typedef struct {
	u64 b, a, n;
	int caller, jt, js, range;
	u64 *c;
} JCand;
static JCand *JC;
static size_t nJC, capJC;

static u64 g_jfuncs, g_jrets, g_jviol;

static int lookup_n(const char *s, size_t n)
{
	if (!Stab_cap)
		return -1;
	for (size_t h = hash_bytes(s, n) & (Stab_cap - 1); Stab[h] >= 0; h = (h + 1) & (Stab_cap - 1))
		if (strncmp(S[Stab[h]], s, n) == 0 && S[Stab[h]][n] == '\0')
			return Stab[h];
	return -1;
}

static int cmp_range(const void *a, const void *b)
{
	const JRange *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Reads RANGES.  Returns 0, or -1 with a message on stderr. */
static int jit_load(const char *fname)
{
	FILE *fp = fopen(fname, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long ln = 0;
	if (!fp) {
		fprintf(stderr, "cgcheck: cannot open %s\n", fname);
		return -1;
	}
	while ((len = getline(&line, &cap, fp)) != -1) {
		const char *p = line;
		u64 start, size, entry;
		ln++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (!strncmp(line, "object ", 7)) {
			J_obj = xrealloc(J_obj, (nJ_obj + 1) * sizeof *J_obj);
			J_obj[nJ_obj++] = intern(line + 7);
			continue;
		}
		if (!parse_num(&p, &start) || *p++ != ' ' || !parse_num(&p, &size) || *p++ != ' ' ||
		    !parse_num(&p, &entry) || *p++ != ' ' || !*p || !size || start + size < start) {
			fprintf(stderr, "cgcheck: %s:%ld: expected 'START SIZE ENTRY NAME' or 'object NAME'\n",
				fname, ln);
			goto fail;
		}
		int sid = intern(p);
		if ((size_t)sid >= nJ_of_sid) {
			size_t nc = 2 * (size_t)sid + 16;
			J_of_sid = xrealloc(J_of_sid, nc * sizeof *J_of_sid);
			for (size_t i = nJ_of_sid; i < nc; i++)
				J_of_sid[i] = -1;
			nJ_of_sid = nc;
		}
		if (J_of_sid[sid] < 0) {
			J_name = xrealloc(J_name, (size_t)(nJ + 1) * sizeof *J_name);
			J_name[nJ] = sid;
			J_of_sid[sid] = nJ++;
		}
		JR = xrealloc(JR, (nJR + 1) * sizeof *JR);
		JR[nJR++] = (JRange){start, start + size, entry, J_of_sid[sid]};
	}
	qsort(JR, nJR, sizeof *JR, cmp_range);
	for (size_t i = 1; i < nJR; i++)
		if (JR[i].start < JR[i - 1].end) {
			fprintf(stderr, "cgcheck: %s: ranges at 0x%llx and 0x%llx overlap\n", fname,
				JR[i - 1].start, JR[i].start);
			goto fail;
		}
	free(line);
	fclose(fp);
	return 0;
fail:
	free(line);
	fclose(fp);
	return -1;
}

/* whether a range has an address in [LO, HI] (disjoint, sorted by start) */
static bool jit_overlaps(u64 lo, u64 hi)
{
	size_t a = 0, b = nJR; /* the first range ending above LO */
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (JR[mid].end <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < nJR && JR[a].start <= hi;
}

/* index of the range holding ADDR, or -1 */
static int jit_own(u64 addr)
{
	size_t lo = 0, hi = nJR;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (JR[mid].end <= addr)
			lo = mid + 1;
		else if (JR[mid].start > addr)
			hi = mid;
		else
			return (int)mid;
	}
	return -1;
}

/* callgrind's name for code without a symbol: 0x + 16 (8 on 32-bit hosts)
 * lowercase hex digits, then nothing or `'` parts */
static bool pseudo_addr(const char *s, u64 *addr)
{
	size_t n = 0;
	if (s[0] != '0' || s[1] != 'x')
		return false;
	while (isdigit((unsigned char)s[2 + n]) || (s[2 + n] >= 'a' && s[2 + n] <= 'f'))
		n++;
	if ((n != 16 && n != 8) || (s[2 + n] && s[2 + n] != '\''))
		return false;
	*addr = strtoull(s + 2, NULL, 16);
	return true;
}

static bool is_unknown_obj(int f) { return S[F[f].obj][0] == '\0'; }

/* input: the group of a `???` function's entry address, or -1 */
static int jit_in(int f)
{
	Func *fp = &F[f];
	if (!fp->jin_set) {
		fp->jin_set = true;
		fp->jin = fp->jrange = -1;
		if (is_unknown_obj(f) && pseudo_addr(S[fp->name], &fp->jaddr) &&
		    (fp->jrange = jit_own(fp->jaddr)) >= 0)
			fp->jin = JR[fp->jrange].j;
	}
	return fp->jin;
}

/* ELF functions' spans per input part (README, rule 9): sorted by start, with
 * the largest end so far, so that "does some span cover A" is one search */
typedef struct {
	u64 *lo, *hi_max;
	size_t n;
} JSpans;
static JSpans *JSP;
static int nJSP;

static bool jit_in_elf_function(u64 a)
{
	if (g_file_parts > nJSP)
		return false;
	const JSpans *sp = &JSP[g_file_parts - 1];
	size_t lo = 0, hi = sp->n; /* first span starting above A */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->lo[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && sp->hi_max[lo - 1] >= a;
}

/* input: the group a line of function F at address A (if HAVE_A) belongs to.
 * With addresses, the symbol owning the address, or none: uncovered code
 * reached by a jump from JIT code gets an identity of its own (README, rule
 * 5), and code of another JIT function than F's, reached by a jump, inside
 * the span of an ELF function goes to that function (rule 9: node's map
 * names builtins in its binary); F's own code stays F's wherever it is */
static int jit_attr(int f, bool have_a, u64 a)
{
	int r;
	if (!is_unknown_obj(f))
		return -1;
	if (!have_a)
		return jit_in(f);
	if ((r = jit_own(a)) < 0)
		return -1;
	return JR[r].j != jit_in(f) && jit_in_elf_function(a) ? -1 : JR[r].j;
}

/* output: the group of a function of a JIT object, by the longest prefix of
 * its name that ends before a `'` (or is the name) and names a symbol */
static int jit_out(int f)
{
	Func *fp = &F[f];
	if (fp->jout_set)
		return fp->jout;
	fp->jout_set = true;
	fp->jout = -1;
	const char *ob = base_of(fp->obj), *nm = S[fp->name];
	size_t i;
	for (i = 0; i < nJ_obj && strcmp(S[J_obj[i]], ob); i++)
		;
	if (i == nJ_obj)
		return -1;
	for (size_t n = strlen(nm);; n--) {
		if (n == strlen(nm) || nm[n] == '\'') {
			int sid = lookup_n(nm, n);
			if (sid >= 0 && (size_t)sid < nJ_of_sid && J_of_sid[sid] >= 0)
				return fp->jout = J_of_sid[sid];
		}
		if (!n)
			break;
	}
	printf("note\t%d\tfunction '%s' of JIT object '%s' has no symbol's name: not checked\n",
	       g_file_parts, show(fp->name), show(fp->obj));
	return -1;
}

static void jit_violation(const char *inv, int part, int j, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static JPart *jit_cur(void) { return &JP[g_file_parts - 1]; }

static void jit_add(int j, int q, const u64 *c)
{
	JPart *jp = jit_cur();
	u64 *v = jp->v + ((size_t)j * NQ + (size_t)q) * (size_t)jp->nev;
	for (int e = 0; e < jp->nev && e < P.nev; e++)
		v[e] += c[e];
}

static void jit_count(int j, int k, u64 n) { jit_cur()->n[(size_t)j * NN + (size_t)k] += n; }

/* events: of a part of IN or OUT */
static void jit_part_begin(void)
{
	int k = g_file_parts;
	if (jit_side < 0)
		return;
	if (k > nJP) {
		JP = xrealloc(JP, (size_t)k * sizeof *JP);
		memset(&JP[nJP], 0, (size_t)(k - nJP) * sizeof *JP);
		nJP = k;
	}
	JPart *jp = &JP[k - 1];
	if (jit_side == 0) {
		jp->in_seen = true;
		jp->instr = instr_first;
		jp->nev = P.nev;
		jp->evname = xrealloc(NULL, (size_t)(P.nev + 1) * sizeof *jp->evname);
		for (int e = 0; e < P.nev; e++)
			jp->evname[e] = strcpy(xrealloc(NULL, strlen(P.evname[e]) + 1), P.evname[e]);
		jp->v = xrealloc(NULL, ((size_t)nJ * NQ * (size_t)P.nev + 1) * sizeof *jp->v);
		memset(jp->v, 0, ((size_t)nJ * NQ * (size_t)P.nev + 1) * sizeof *jp->v);
		jp->n = xrealloc(NULL, ((size_t)nJ * NN + 1) * sizeof *jp->n);
		memset(jp->n, 0, ((size_t)nJ * NN + 1) * sizeof *jp->n);
	} else {
		jp->out_seen = true;
		if (jp->in_seen && jp->nev != P.nev)
			jit_violation("parts", k, -1, "part %d has %d events in the input, %d in the output", k,
				      jp->nev, P.nev);
		if (!jp->in_seen) {
			jp->nev = 0;
			jp->v = xrealloc(NULL, sizeof *jp->v);
			jp->n = xrealloc(NULL, ((size_t)nJ * NN + 1) * sizeof *jp->n);
			memset(jp->n, 0, ((size_t)nJ * NN + 1) * sizeof *jp->n);
		}
	}
}

static size_t jsite_hash(u64 s, int callee)
{
	return (size_t)((s * 0x9e3779b97f4a7c15ULL) ^ ((u64)(unsigned)callee * 0xff51afd7ed558ccdULL) ^
			(s >> 31));
}

static int jsite_find(u64 s, int callee)
{
	if (!JStab_cap)
		return -1;
	size_t mask = JStab_cap - 1;
	for (size_t h = jsite_hash(s, callee) & mask; JStab[h] >= 0; h = (h + 1) & mask)
		if (JS[JStab[h]].s == s && JS[JStab[h]].callee == callee)
			return JStab[h];
	return -1;
}

static void jsite_add(u64 s, int callee, int r, u64 n, const u64 *c)
{
	int i = jsite_find(s, callee);
	if (i < 0) {
		if (2 * (nJS + 1) > JStab_cap) {
			size_t nc = JStab_cap ? 2 * JStab_cap : 1024;
			free(JStab);
			JStab = xrealloc(NULL, nc * sizeof *JStab);
			memset(JStab, 0xff, nc * sizeof *JStab);
			for (size_t k = 0; k < nJS; k++) {
				size_t h = jsite_hash(JS[k].s, JS[k].callee) & (nc - 1);
				while (JStab[h] >= 0)
					h = (h + 1) & (nc - 1);
				JStab[h] = (int)k;
			}
			JStab_cap = nc;
		}
		if (nJS >= capJS)
			JS = xrealloc(JS, (capJS = capJS ? 2 * capJS : 1024) * sizeof *JS);
		JS[nJS] = (JSite){s, 0, JR[r].entry, callee, JR[r].j, zalloc_costs(NULL, P.nev)};
		size_t h = jsite_hash(s, callee) & (JStab_cap - 1);
		while (JStab[h] >= 0)
			h = (h + 1) & (JStab_cap - 1);
		JStab[h] = (int)nJS;
		i = (int)nJS++;
	}
	JS[i].n += n;
	for (int e = 0; e < P.nev; e++)
		JS[i].rem[e] += c[e];
}

/* Rule 9 (README): the span of an ELF function is the hull of its self cost
 * lines in those of its fn= blocks (a fn= line and the lines up to the next)
 * that overlap a JIT range. The block being read, in the first reading of IN: */
static int blk_f = -1;
static u64 blk_lo, blk_hi;

/* the end of the current block: --spans prints it, --jit-invariants takes it
 * into its function's span if it overlaps a JIT range */
static void jit_block_end(void)
{
	if (blk_f < 0)
		return;
	Func *fp = &F[blk_f];
	blk_f = -1;
	if (opt_spans) {
		printf("%d\t%s\t%s\t%s\t%llx\t%llx\n", P.num, show(fp->name), show(fp->file),
		       show(fp->obj), blk_lo, blk_hi);
		return;
	}
	if (!jit_overlaps(blk_lo, blk_hi))
		return;
	if (!fp->has_span || blk_lo < fp->span_lo)
		fp->span_lo = blk_lo;
	if (!fp->has_span || blk_hi > fp->span_hi)
		fp->span_hi = blk_hi;
	fp->has_span = true;
}

/* a self cost line of function F at address A (first subposition) */
static void jit_self(int f, u64 a, const u64 *c)
{
	if (jit_side < 0) { /* the first reading of IN: blocks of ELF functions */
		if (!instr_first || is_unknown_obj(f))
			return;
		if (blk_f != f) { /* no line of another function comes between a fn= and the next */
			jit_block_end();
			blk_f = f;
			blk_lo = blk_hi = a;
		}
		blk_lo = a < blk_lo ? a : blk_lo;
		blk_hi = a > blk_hi ? a : blk_hi;
		return;
	}
	int j = jit_side ? jit_out(f) : jit_attr(f, instr_first, a);
	if (j >= 0)
		jit_add(j, jit_side ? Q_SELF_OUT : Q_SELF_IN, c);
	if (!jit_side && (j = jit_in(f)) >= 0)
		jit_add(j, Q_FN_SELF, c);
}

/* a call record: CALLER at call site A calls CALLEE N times, inclusive cost C */
static void jit_call(int caller, u64 a, int callee, u64 n, const u64 *c, bool synth)
{
	if (jit_side < 0)
		return;
	if (jit_side) {
		int jc = jit_out(caller), jk = jit_out(callee);
		if (jk >= 0 && jk != jc) {
			jit_add(jk, Q_OUT_INCL, c);
			jit_count(jk, N_OUT, n);
			if (synth) {
				jit_add(jk, Q_SYNTH_IN, c);
				jit_count(jk, N_SYNTH, n);
			}
		}
		if (jc >= 0 && jk != jc)
			jit_add(jc, synth ? Q_SYNTH_OUT : Q_CALLS_OUT, c);
		return;
	}
	int js = jit_attr(caller, instr_first, a), jt = jit_in(callee), jf = jit_in(caller), r;
	if (jt >= 0 && jt != jf)
		jit_add(jt, Q_FN_INCL, c);
	if (jf >= 0 && jt != jf)
		jit_add(jf, Q_FN_CALLS, c);
	if (jt >= 0 && jt != js) {
		jit_add(jt, Q_IN_INCL, c);
		jit_count(jt, N_IN, n);
		const Func *k = &F[callee];
		if (instr_first && k->jaddr != JR[k->jrange].entry) {
			if (nJC >= capJC)
				JC = xrealloc(JC, (capJC = capJC ? 2 * capJC : 256) * sizeof *JC);
			JC[nJC] = (JCand){k->jaddr, a, n, caller, jt, js, k->jrange, zalloc_costs(NULL, P.nev)};
			memcpy(JC[nJC++].c, c, (size_t)P.nev * sizeof *c);
		}
	}
	if (js >= 0 && jt != js)
		jit_add(js, Q_CALLS_IN, c);
	if (instr_first && is_unknown_obj(caller) && (r = jit_own(a)) >= 0)
		jsite_add(a, callee, r, n, c);
}

/* a return recorded as a call?  The nearest call site s before B in B's symbol
 * whose calls go to the record's caller and can hold it. */
static int jit_return_site(const JCand *r)
{
	int nev = jit_cur()->nev;
	for (u64 d = 1; d <= 15 && d <= r->b; d++) {
		int i = jsite_find(r->b - d, r->caller);
		if (i < 0 || JS[i].entry != JR[r->range].entry || JS[i].j != r->jt || r->n > JS[i].n)
			continue;
		int e = 0;
		while (e < nev && r->c[e] <= JS[i].rem[e])
			e++;
		if (e == nev)
			return i;
	}
	return -1;
}

static int cmp_u64_pair(const void *a, const void *b)
{
	const u64 *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* end of a part in the first reading of IN: the spans of ELF functions, those
 * of at most 16 MiB (rule 9) */
static void jit_spans_end(void)
{
	int k = g_file_parts;
	if (k > nJSP) {
		JSP = xrealloc(JSP, (size_t)k * sizeof *JSP);
		memset(&JSP[nJSP], 0, (size_t)(k - nJSP) * sizeof *JSP);
		nJSP = k;
	}
	JSpans *sp = &JSP[k - 1];
	u64 *pairs = xrealloc(NULL, (2 * P.ntouched + 1) * sizeof *pairs);
	size_t n = 0;
	for (size_t i = 0; i < P.ntouched; i++) {
		const Func *fp = &F[P.touched[i]];
		if (fp->has_span && fp->span_hi - fp->span_lo <= ((u64)16 << 20)) {
			pairs[2 * n] = fp->span_lo;
			pairs[2 * n++ + 1] = fp->span_hi;
		}
	}
	qsort(pairs, n, 2 * sizeof *pairs, cmp_u64_pair);
	sp->lo = xrealloc(NULL, (n + 1) * sizeof *sp->lo);
	sp->hi_max = xrealloc(NULL, (n + 1) * sizeof *sp->hi_max);
	for (size_t i = 0; i < n; i++) {
		sp->lo[i] = pairs[2 * i];
		sp->hi_max[i] = i && sp->hi_max[i - 1] > pairs[2 * i + 1] ? sp->hi_max[i - 1] : pairs[2 * i + 1];
	}
	sp->n = n;
	free(pairs);
}

/* end of a part of IN: find the returns recorded as calls */
static void jit_part_end(void)
{
	if (jit_side < 0) {
		jit_spans_end();
		return;
	}
	JPart *jp = jit_cur();
	for (size_t k = 0; jit_side == 0 && k < nJC; k++) {
		JCand *r = &JC[k];
		int i = jit_return_site(r);
		if (i < 0)
			continue;
		for (int e = 0; e < jp->nev; e++)
			JS[i].rem[e] -= r->c[e];
		jit_add(r->jt, Q_RET, r->c);
		jit_count(r->jt, N_RET, r->n);
		jit_add(r->jt, Q_RED, r->c); /* F's call at s loses it */
		if (r->js >= 0)
			jit_add(r->js, Q_RED, r->c); /* and the record's caller its call */
		jp->nret++;
		g_jrets++;
		printf("return\t%d\t0x%llx\t%s\t%s\t0x%llx\t0x%llx\t%llu\t", g_file_parts, r->b,
		       show(J_name[r->jt]), show(F[r->caller].name), r->a, JS[i].s, r->n);
		for (int e = 0; e < jp->nev; e++)
			printf(e ? " %llu" : "%llu", r->c[e]);
		putchar('\n');
	}
	for (size_t k = 0; k < nJC; k++)
		free(JC[k].c);
	for (size_t k = 0; k < nJS; k++)
		free(JS[k].rem);
	nJC = nJS = 0;
	if (JStab)
		memset(JStab, 0xff, JStab_cap * sizeof *JStab);
}

static void jit_vec(const char *key, const u64 *v, int nev)
{
	printf("\t%s=", key);
	for (int e = 0; e < nev; e++)
		printf(e ? ",%llu" : "%llu", v[e]);
}

static void jit_violation(const char *inv, int part, int j, const char *fmt, ...)
{
	va_list ap;
	g_jviol++;
	printf("violation\t%s\t%d\t%s\t", inv, part, j >= 0 ? show(J_name[j]) : "");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* the fn line and the violations of JIT function J in part K */
static void jit_check_function(int k, int j)
{
	const JPart *jp = &JP[k - 1];
	const u64 *v = jp->v + (size_t)j * NQ * (size_t)jp->nev, *n = jp->n + (size_t)j * NN;
#define Q(q) (v + (size_t)(q) * (size_t)jp->nev)
	printf("fn\t%d\t%s", k, show(J_name[j]));
	jit_vec("incl", Q(Q_OUT_INCL), jp->nev);
	jit_vec("in", Q(Q_IN_INCL), jp->nev);
	jit_vec("ret", Q(Q_RET), jp->nev);
	jit_vec("synth", Q(Q_SYNTH_IN), jp->nev);
	printf("\tcount=%llu\tin-count=%llu\tret-count=%llu\tsynth-count=%llu", n[N_OUT], n[N_IN], n[N_RET],
	       n[N_SYNTH]);
	jit_vec("self", Q(Q_SELF_OUT), jp->nev);
	jit_vec("in-self", Q(Q_SELF_IN), jp->nev);
	jit_vec("calls", Q(Q_CALLS_OUT), jp->nev);
	jit_vec("in-calls", Q(Q_CALLS_IN), jp->nev);
	jit_vec("ret-taken", Q(Q_RED), jp->nev);
	jit_vec("synth-out", Q(Q_SYNTH_OUT), jp->nev);
	jit_vec("fn-in", Q(Q_FN_INCL), jp->nev);
	jit_vec("fn-self", Q(Q_FN_SELF), jp->nev);
	jit_vec("fn-calls", Q(Q_FN_CALLS), jp->nev);
	putchar('\n');
	for (int e = 0; e < jp->nev; e++) {
		const char *ev = jp->evname[e];
		u64 in = Q(Q_IN_INCL)[e], ret = Q(Q_RET)[e], syn = Q(Q_SYNTH_IN)[e];
		u64 got = Q(Q_OUT_INCL)[e], want = in - ret + syn; /* ret is part of in */
		if (got != want)
			jit_violation("inv1", k, j,
				      "%s: inclusive %llu != %llu = calls into it in the input %llu - returns "
				      "recorded as calls %llu + synthetic calls into it %llu",
				      ev, got, want, in, ret, syn);
		u64 own = Q(Q_SELF_OUT)[e] + Q(Q_CALLS_OUT)[e];
		u64 bound = Q(Q_SELF_IN)[e] + Q(Q_CALLS_IN)[e];
		bound = bound >= Q(Q_RED)[e] ? bound - Q(Q_RED)[e] : 0;
		if (own > bound)
			jit_violation("inv2", k, j,
				      "%s: self %llu + calls to others %llu = %llu > %llu = the input's self cost "
				      "%llu + calls from its code %llu - returns recorded as calls %llu",
				      ev, Q(Q_SELF_OUT)[e], Q(Q_CALLS_OUT)[e], own, bound, Q(Q_SELF_IN)[e],
				      Q(Q_CALLS_IN)[e], Q(Q_RED)[e]);
		if (Q(Q_SELF_OUT)[e] != Q(Q_SELF_IN)[e])
			jit_violation("inv4", k, j, "%s: self cost %llu != %llu, the input's at its addresses",
				      ev, Q(Q_SELF_OUT)[e], Q(Q_SELF_IN)[e]);
	}
	for (int e = 0; e < jp->nev; e++) {
		u64 fin = Q(Q_FN_INCL)[e], fown = Q(Q_FN_SELF)[e] + Q(Q_FN_CALLS)[e];
		u64 in = Q(Q_OUT_INCL)[e];
		u64 own = Q(Q_SELF_OUT)[e] + Q(Q_CALLS_OUT)[e] + Q(Q_SYNTH_OUT)[e];
		if (fin == fown && in != own)
			jit_violation("inv5", k, j,
				      "%s: its callers pay %llu, its self cost %llu + calls to others %llu + "
				      "synthetic calls %llu = %llu; in the input its functions added up (%llu)",
				      jp->evname[e], in, Q(Q_SELF_OUT)[e], Q(Q_CALLS_OUT)[e],
				      Q(Q_SYNTH_OUT)[e], own, fin);
	}
#undef Q
	u64 want = n[N_IN] - n[N_RET] + n[N_SYNTH];
	if (n[N_OUT] > want)
		jit_violation("inv3", k, j,
			      "called %llu times > %llu = calls into it in the input %llu - returns recorded as "
			      "calls %llu + synthetic calls %llu",
			      n[N_OUT], want, n[N_IN], n[N_RET], n[N_SYNTH]);
}

/* inv6: the functions of OUT that are JIT code (a group by name), each name
 * bound to one key; F holds every key of both files (IN's are in `???`) */
static void jit_identities(void)
{
	int *first = xrealloc(NULL, (nS + 1) * sizeof *first);
	for (size_t i = 0; i < nS; i++)
		first[i] = -1;
	for (size_t f = 0; f < nF; f++) {
		if (!F[f].jout_set || F[f].jout < 0)
			continue;
		int *g = &first[F[f].name];
		if (*g < 0) {
			*g = (int)f;
			continue;
		}
		jit_violation("inv6", 0, F[f].jout,
			      "'%s' is two functions: in file '%s' of '%s' and in file '%s' of '%s'",
			      show(F[f].name), show(F[*g].file), show(F[*g].obj), show(F[f].file),
			      show(F[f].obj));
	}
	free(first);
}

/* after IN and OUT: per part, a fn line and the violations of each JIT
 * function with any cost or call in either file; a summary line last */
static void jit_report(void)
{
	u64 nparts = 0;
	jit_identities();
	for (int k = 1; k <= nJP; k++) {
		const JPart *jp = &JP[k - 1];
		if (!jp->in_seen || !jp->out_seen) {
			jit_violation("parts", k, -1, "part %d is only in the %s", k,
				      jp->in_seen ? "input" : "output");
			continue;
		}
		nparts++;
		if (!jp->instr)
			printf("note\t%d\tno instr positions: returns recorded as calls cannot be found "
			       "(no call-site addresses); costs and calls belong to the function's entry\n", k);
		for (int j = 0; j < nJ; j++) {
			const u64 *v = jp->v + (size_t)j * NQ * (size_t)jp->nev, *n = jp->n + (size_t)j * NN;
			bool any = n[N_IN] || n[N_OUT];
			for (int i = 0; !any && i < NQ * jp->nev; i++)
				any = v[i] != 0;
			if (any) {
				g_jfuncs++;
				jit_check_function(k, j);
			}
		}
	}
	printf("summary\tparts=%llu\tfunctions=%llu\treturns=%llu\tviolations=%llu\n", nparts, g_jfuncs,
	       g_jrets, g_jviol);
}

static void jit_free(void)
{
	for (int k = 0; k < nJP; k++) {
		for (int e = 0; JP[k].evname && e < JP[k].nev; e++)
			free(JP[k].evname[e]);
		free(JP[k].evname);
		free(JP[k].v);
		free(JP[k].n);
	}
	free(JP);
	for (int k = 0; k < nJSP; k++) {
		free(JSP[k].lo);
		free(JSP[k].hi_max);
	}
	free(JSP);
	free(JC);
	free(JS);
	free(JStab);
	free(JR);
	free(J_name);
	free(J_of_sid);
	free(J_obj);
}

/* ---- end of a part: checks (a), (c), (d), (e) and the outputs ---- */

static int cmp_func(const void *a, const void *b)
{
	const Func *x = &F[*(const int *)a], *y = &F[*(const int *)b];
	int c = strcmp(S[x->name], S[y->name]);
	if (!c)
		c = strcmp(S[x->file], S[y->file]);
	return c ? c : strcmp(S[x->obj], S[y->obj]);
}

static void print_row(const Func *f, const u64 *a, const u64 *b)
{
	printf("%d\t%s\t%s\t%s\t", P.num, show(f->name), show(f->file), show(f->obj));
	for (int i = 0; i < P.nev; i++)
		printf("%s%llu", i ? " " : "", a[i] + (b ? b[i] : 0));
}

static void check_functions(void)
{
	size_t n = P.ntouched;
	int *t = P.touched;
	if (n)
		qsort(t, n, sizeof *t, cmp_func);
	for (size_t i = 0, j; i < n; i = j) {
		size_t bodyf = n; /* a key with this name that has a body */
		for (j = i; j < n && F[t[j]].name == F[t[i]].name; j++)
			if (F[t[j]].body && bodyf == n)
				bodyf = j;
		for (size_t k = i; k < j; k++) {
			Func *f = &F[t[k]];
			if ((!f->sites && !f->jumps) || f->body)
				continue;
			if (bodyf < n)
				problem_at(f->first_ref,
					   "part %d: SPLIT function '%s': %llu call site(s) and %llu jump(s) "
					   "bind it to file '%s' object '%s', which has no body; "
					   "the body is under file '%s' object '%s'",
					   P.num, show(f->name), f->sites, f->jumps, show(f->file),
					   show(f->obj), show(F[t[bodyf]].file), show(F[t[bodyf]].obj));
			else
				problem_at(f->first_ref,
					   "part %d: function '%s' (file '%s' object '%s') is called "
					   "(%llu call site(s), %llu jump(s)) but has no fn= body",
					   P.num, show(f->name), show(f->file), show(f->obj), f->sites,
					   f->jumps);
		}
	}
	for (size_t i = 0; opt_list && i < n; i++) {
		print_row(&F[t[i]], F[t[i]].self, NULL);
		printf("\t%llu\t%llu\n", F[t[i]].sites, F[t[i]].count);
	}
	for (size_t i = 0; opt_incl && i < n; i++) {
		print_row(&F[t[i]], F[t[i]].self, F[t[i]].out);
		putchar('\n');
	}
}

static void finish_part(void)
{
	if (!P.num) {
		if (!g_fatal && !g_file_parts)
			problem_at(0, "no events: line");
		return;
	}
	if (P.next != NEXT_SELF && !P.pend_reported)
		problem_at(P.pend_line, "%s not followed by its %s line (end of part)",
			   P.next == NEXT_CALL ? "calls=" : "jump", P.next == NEXT_CALL ? "cost" : "position");
	if (!P.have_totals)
		problem_at(0, "part %d: no totals: line (truncated file?)", P.num);
	else if (P.ntot > P.nev)
		problem_at(0, "part %d: totals: has %d values but there are %d events", P.num,
			   P.ntot, P.nev);
	for (int i = 0; P.have_totals && i < P.nev; i++) {
		u64 tv = i < P.ntot ? P.totals[i] : 0;
		if (tv != P.selfsum[i])
			problem_at(0, "part %d: event %s: sum of self cost %llu != totals: %llu",
				   P.num, P.evname[i], P.selfsum[i], tv);
	}
	check_functions();
	if (jit_side < 0)
		jit_block_end();
	if (opt_jit)
		jit_part_end();
	for (int i = 0; opt_totals && i < P.nev; i++)
		printf("%d\t%s\t%llu\n", P.num, P.evname[i], P.selfsum[i]);
}

/* kcachegrind's prepareNewPart(): clearCompression() + clearPosition() */
static void start_part(void)
{
	for (int i = 0; i < P.nev; i++)
		free(P.evname[i]);
	free(P.evname);
	free(P.selfsum);
	free(P.totals);
	int *t = P.touched;
	size_t ct = P.captouched;
	memset(&P, 0, sizeof P);
	P.touched = t;
	P.captouched = ct;
	P.ob = P.file = P.fnfile = P.fn = P.cob = P.cfile = P.cfn = P.jfile = P.jfn = -1;
	P.next = NEXT_SELF;
	g_gen++;
}

/* once events: was seen, events:/part:/pid:/thread:/positions: start a part */
static void maybe_new_part(void)
{
	if (P.num) {
		finish_part();
		start_part();
	}
}

/* next whitespace-separated word of a header line */
static bool next_word(const char **s, const char **w, size_t *len)
{
	*s += strspn(*s, " \t");
	*w = *s;
	*len = strcspn(*s, " \t");
	*s += *len;
	return *len > 0;
}

static void set_events(const char *s)
{
	const char *w;
	size_t l;
	maybe_new_part();
	P.num = ++g_parts;
	g_file_parts++;
	while (next_word(&s, &w, &l)) {
		P.evname = xrealloc(P.evname, (size_t)(P.nev + 1) * sizeof *P.evname);
		P.evname[P.nev] = xrealloc(NULL, l + 1);
		memcpy(P.evname[P.nev], w, l);
		P.evname[P.nev++][l] = '\0';
	}
	if (!P.nev)
		problem("events: line names no events");
	P.selfsum = zalloc_costs(NULL, P.nev);
	if (opt_jit)
		jit_part_begin();
}

static void set_positions(const char *s)
{
	const char *w;
	size_t l;
	maybe_new_part();
	instr_first = false;
	line_idx = -1;
	for (npos = 0; next_word(&s, &w, &l);) {
		if (l == 4 && !strncmp(w, "line", 4))
			line_idx = npos;
		if (npos == 0 && l == 5 && !strncmp(w, "instr", 5))
			instr_first = true;
		bool known = (l == 5 && !strncmp(w, "instr", 5)) || (l == 4 && !strncmp(w, "line", 4)) ||
			     (l == 2 && !strncmp(w, "bb", 2));
		if (!known || npos == MAXPOS)
			problem("unknown or too many position kinds in positions: line");
		else
			npos++;
	}
	if (!npos)
		npos = 1;
}

static void set_totals(const char *s)
{
	u64 v;
	if (P.have_totals)
		problem("second totals: line in part %d", P.num);
	P.have_totals = true;
	P.ntot = 0;
	for (s = skip_sp(s); *s; s = skip_sp(s)) {
		if (!parse_num(&s, &v)) {
			problem("malformed totals: line");
			break;
		}
		P.totals = xrealloc(P.totals, (size_t)(P.ntot + 1) * sizeof *P.totals);
		P.totals[P.ntot++] = v;
	}
}

/* ---- positions and cost lines ---- */

/* Parse a position list relative to P.pos ("*", "+N", "-N", absolute) into
 * out[].  Returns the rest of the line, spaces skipped, or NULL. */
static const char *parse_positions(const char *p, u64 *out)
{
	for (int i = 0; i < npos; i++) {
		char c = *p;
		u64 d;
		if (c == '*') {
			out[i] = P.pos[i];
			p++;
		} else if (c == '+' || c == '-') {
			p++;
			if (!parse_num(&p, &d))
				return NULL;
			if (c == '+')
				out[i] = P.pos[i] + d;
			else if (d <= P.pos[i])
				out[i] = P.pos[i] - d;
			else {
				problem("relative position -%llu goes below zero", d);
				out[i] = 0;
			}
		} else if (!parse_num(&p, &out[i])) {
			return NULL;
		}
		if (*p && *p != ' ')
			return NULL;
		p = skip_sp(p);
	}
	return p;
}

static void cost_line(const char *line)
{
	u64 newpos[MAXPOS];
	const char *p;
	if (line[0] == ' ' || line[0] == '\t') {
		problem("leading whitespace on a cost line: kcachegrind drops it");
		return;
	}
	if (strchr(line, '\t')) {
		problem("TAB separator on a cost line: kcachegrind drops the cost");
		return;
	}
	if (!(p = parse_positions(line, newpos))) {
		problem("invalid position specification: '%s'", line);
		return;
	}
	if (P.fn < 0) { /* kcachegrind's ensureFunction() */
		problem("cost line without a function (no fn= since part start or last ob=): "
			"kcachegrind: \"Function not specified\"");
		P.file = P.file >= 0 ? P.file : empty_sid();
		P.ob = P.ob >= 0 ? P.ob : empty_sid();
		P.fn = func_get(empty_sid(), P.file, P.ob);
	}
	memcpy(P.pos, newpos, sizeof newpos);
	touch(P.fn);
	Func *cur = &F[P.fn];

	if (P.next == NEXT_JUMP) {
		if (*p)
			problem("costs on a jump source line (must be position only)");
		if (P.jfn >= 0) {
			touch(P.jfn);
			F[P.jfn].jumps++;
			if (!F[P.jfn].first_ref)
				F[P.jfn].first_ref = P.pend_line;
		}
		P.jfn = P.jfile = -1;
		P.next = NEXT_SELF;
		return;
	}

	u64 *cost = zalloc_costs(NULL, P.nev), v;
	int k = 0;
	for (; *p; p = skip_sp(p), k++) {
		if (!parse_num(&p, &v) || (*p && *p != ' ')) {
			problem("garbage at end of cost line: '%s'", p);
			break;
		}
		if (k < P.nev)
			cost[k] = v;
	}
	if (k > P.nev)
		problem("%d cost values but only %d events", k, P.nev);
	cur->body = true;
	if (P.next == NEXT_CALL) { /* inclusive cost of a call */
		/* --addrs: call sites too, marked, for bounds on moved calls */
		if (opt_addrs && instr_first && !S[cur->obj][0])
			printf("%d\t0x%llx\t%s\tcall\n", P.num, (unsigned long long)newpos[0], show(cur->name));
		P.next = NEXT_SELF;
		if (opt_lines && instr_first && line_idx > 0)
			printf("%d\t0x%llx\t%llu\t%s\t%s\t%s\t%s\n", P.num, (unsigned long long)newpos[0],
			       (unsigned long long)newpos[line_idx], show(P.file), show(cur->name),
			       show(cur->obj), P.synth_pending ? "synthetic call" : "call");
		if (P.cfn >= 0) {
			Func *callee = &F[P.cfn];
			touch(P.cfn);
			callee->sites++;
			callee->count += P.pend_count;
			if (!callee->first_ref)
				callee->first_ref = P.pend_line;
			for (int i = 0; (opt_self_calls || P.cfn != P.fn) && i < P.nev; i++)
				cur->out[i] += cost[i];
			if (opt_jit)
				jit_call(P.fn, newpos[0], P.cfn, P.pend_count, cost, P.synth_pending);
		}
		P.synth_pending = false;
		P.cob = P.cfile = -1; /* cfn stays, as in kcachegrind */
	} else {
		for (int i = 0; i < P.nev; i++) {
			cur->self[i] += cost[i];
			P.selfsum[i] += cost[i];
		}
		if (opt_jit || opt_spans)
			jit_self(P.fn, newpos[0], cost);
		P.synth_pending = false;
		if (opt_lines && instr_first && line_idx > 0)
			printf("%d\t0x%llx\t%llu\t%s\t%s\t%s\tself\n", P.num, (unsigned long long)newpos[0],
			       (unsigned long long)newpos[line_idx], show(P.file), show(cur->name), show(cur->obj));
		/* --addrs: self cost per absolute address in object ??? (for range sums) */
		if (opt_addrs && instr_first && !S[cur->obj][0]) {
			printf("%d\t0x%llx\t%s\t", P.num, (unsigned long long)newpos[0], show(cur->name));
			for (int i = 0; i < P.nev; i++)
				printf(i ? " %llu" : "%llu", (unsigned long long)cost[i]);
			putchar('\n');
		}
	}
	free(cost);
}

/* "calls=COUNT TARGET" (kind 0), "jump=COUNT TARGET" (1),
 * "jcnd=FOLLOWED/EXECUTED TARGET" (2); the target does not move the base */
static void call_or_jump(const char *s, int kind, const char *tag)
{
	u64 count = 0, exe, tgt[MAXPOS];
	const char *r;
	s = skip_sp(s);
	bool ok = parse_num(&s, &count);
	if (ok && kind == 2)
		ok = *s++ == '/' && parse_num(&s, &exe);
	ok = ok && *s == ' ' && (r = parse_positions(skip_sp(s), tgt)) && !*r;
	if (!ok)
		problem("malformed %s line", tag);
	P.pend_target = ok ? tgt[0] : 0;
	if (P.next != NEXT_SELF && !P.pend_reported)
		problem_at(P.pend_line, "%s not followed by its %s line",
			   P.next == NEXT_CALL ? "calls=" : "jump",
			   P.next == NEXT_CALL ? "cost" : "position");
	P.pend_line = g_lineno;
	P.pend_reported = false;
	P.pend_count = count;
	P.next = kind == 0 ? NEXT_CALL : NEXT_JUMP;
	if (kind == 0 && P.cfn < 0)
		problem("calls= without a preceding cfn=");
}

/* ---- line dispatch ---- */

static const char *after(const char *line, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(line, prefix, n) == 0 ? line + n : NULL;
}

static void spec_line(const char *line)
{
	const char *a;
	if ((a = after(line, "events:")))
		set_events(a);
	else if ((a = after(line, "positions:")))
		set_positions(a);
	else if (after(line, "part:") || after(line, "pid:") || after(line, "thread:"))
		maybe_new_part();
	else if ((a = after(line, "totals:")))
		set_totals(a);
	else if (after(line, "summary:")) {
		if (!P.num) {
			problem("summary: before events: (kcachegrind skips the file)");
			g_fatal = true;
		}
	} else if (after(line, "version:") || after(line, "creator:") || after(line, "cmd:") ||
		   after(line, "desc:") || after(line, "event:") || after(line, "arch:") ||
		   after(line, "timeframe (BB):"))
		; /* ignored, as by kcachegrind */
	else if (!P.num)
		problem("'%.20s' before events: line", line);
	else if ((a = after(line, "ob="))) {
		P.ob = resolve(K_OB, "ob", a, -1, -1);
		P.fn = -1; /* ob= resets the current function */
	} else if ((a = after(line, "fl=")))
		P.file = P.fnfile = resolve(K_FL, "fl", a, -1, -1);
	else if ((a = after(line, "fi=")) || (a = after(line, "fe=")))
		P.file = resolve(K_FL, line[1] == 'i' ? "fi" : "fe", a, -1, -1);
	else if ((a = after(line, "fn="))) {
		if (jit_side < 0)
			jit_block_end();
		/* the file is reset to the last fl=; fi=/fe= do not count */
		P.file = P.fnfile >= 0 ? P.fnfile : empty_sid();
		P.ob = P.ob >= 0 ? P.ob : empty_sid();
		P.fn = resolve(K_FN, "fn", a, P.file, P.ob);
	} else if ((a = after(line, "cob=")))
		P.cob = resolve(K_OB, "cob", a, -1, -1);
	else if ((a = after(line, "cfi=")) || (a = after(line, "cfl=")))
		P.cfile = resolve(K_FL, line[2] == 'i' ? "cfi" : "cfl", a, -1, -1);
	else if ((a = after(line, "cfn="))) {
		/* absent cob=/cfi= mean the current object and file (incl. fi/fe) */
		if (P.cob < 0)
			P.cob = P.ob >= 0 ? P.ob : empty_sid();
		if (P.cfile < 0)
			P.cfile = P.file >= 0 ? P.file : empty_sid();
		P.cfn = resolve(K_FN, "cfn", a, P.cfile, P.cob);
	} else if ((a = after(line, "calls=")) || (a = after(line, "rcalls=")))
		call_or_jump(a, 0, "calls=");
	else if ((a = after(line, "jump=")))
		call_or_jump(a, 1, "jump=");
	else if ((a = after(line, "jcnd=")))
		call_or_jump(a, 2, "jcnd=");
	else if ((a = after(line, "jfi=")))
		P.jfile = resolve(K_FL, "jfi", a, -1, -1);
	else if ((a = after(line, "jfn="))) {
		/* jfi= or the current file, and always the current object */
		if (P.jfile < 0)
			P.jfile = P.file >= 0 ? P.file : empty_sid();
		P.jfn = resolve(K_FN, "jfn", a, P.jfile, P.ob >= 0 ? P.ob : empty_sid());
	} else
		problem("unknown line '%s' (kcachegrind: \"Invalid line\")", line);
}

static void handle_line(const char *line)
{
	unsigned char c = (unsigned char)line[0];
	if (c == '\0' || c == '#') {
		/* cgjit marks the calls it adds (README, rule 5) */
		if ((opt_jit || opt_lines) && after(line, "# cgjit: synthetic call"))
			P.synth_pending = true;
		return;
	}
	if (c <= '9') { /* kcachegrind: a position (cost) line */
		if (!P.num) {
			problem("cost line before events: (kcachegrind skips the file)");
			g_fatal = true;
		} else
			cost_line(line);
		return;
	}
	bool is_call = after(line, "calls=") || after(line, "rcalls=") || after(line, "jump=") ||
		       after(line, "jcnd=");
	if (P.next != NEXT_SELF && !P.pend_reported && !is_call) {
		problem_at(P.pend_line, "%s not followed by its %s line (line %ld is '%.40s')",
			   P.next == NEXT_CALL ? "calls=" : "jump",
			   P.next == NEXT_CALL ? "cost" : "position", g_lineno, line);
		P.pend_reported = true;
	}
	spec_line(line);
}

static int process(const char *fname)
{
	FILE *fp = strcmp(fname, "-") ? fopen(fname, "rb") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool nul_seen = false;
	if (!fp) {
		fprintf(stderr, "cgcheck: cannot open %s\n", fname);
		return -1;
	}
	g_fname = fname;
	g_lineno = 0;
	g_fatal = false;
	g_file_parts = 0;
	npos = 1; /* default "positions: line"; a new loader per file */
	start_part();
	while (!g_fatal && (n = getline(&line, &cap, fp)) != -1) {
		size_t len = (size_t)n;
		g_lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		else
			problem("last line has no newline (truncated file?)");
		if (memchr(line, '\0', len)) {
			if (!nul_seen)
				problem("NUL byte (kcachegrind's loader hangs on it)");
			nul_seen = true;
			continue;
		}
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		handle_line(line);
	}
	free(line);
	if (ferror(fp))
		problem_at(0, "read error");
	finish_part();
	if (fp != stdin)
		fclose(fp);
	return 0;
}

static void usage(FILE *o)
{
	fprintf(o,
		"usage: cgcheck [--list] [--totals] [--inclusive] [--addrs] [--max-errors N] FILE...\n"
		"Checks callgrind profiles (plain text) with kcachegrind's loader semantics.\n"
		"Output lines are TAB separated, per part; functions sorted by name:\n"
		"  --list        part name file object self-costs call-sites calls-count\n"
		"  --addrs       part address function self-costs, per self cost line in object ???\n"
		"                (and 'call' instead of costs for each call's source line)\n"
		"  --inclusive-all  as --inclusive, counting calls to itself too\n"
		"  --lines       part address line file function object kind, per self cost line (kind\n"
		"                'self') and call site ('call', 'synthetic call') (instr line)\n"
		"  --totals      part event sum-of-self-costs\n"
		"  --inclusive   part name file object self+calls-to-others\n"
		"  --max-errors N  print at most N problems (default 1000, 0 = all)\n"
		"  --spans       part name file object lo hi: per fn= block of a function\n"
		"                outside object ???, the lowest and highest address of its self\n"
		"                cost lines (hex)\n"
		"  --jit-invariants RANGES IN OUT\n"
		"                cgjit's JIT call-graph invariants of OUT (augmented) against IN\n"
		"                (its input); RANGES: lines 'START SIZE ENTRY NAME' (disjoint JIT\n"
		"                ranges, ENTRY = start of the owning symbol) and 'object BASENAME'\n"
		"                (the JIT objects of OUT).  Prints per part and JIT function:\n"
		"                  return part B function caller site s count costs\n"
		"                  fn part name incl= in= ret= synth= count= ... (key=value)\n"
		"                  violation inv1|...|inv6|parts part name message\n"
		"                  note part message\n"
		"                and last 'summary parts= functions= returns= violations='\n"
		"Exit: 0 all checks pass, 1 problems found (one per line on stderr), 2 usage.\n");
}

int main(int argc, char **argv)
{
	int i, nfiles = 0, rc = 0;
	bool opts = true;
	char **files = xrealloc(NULL, (size_t)argc * sizeof *files);
	for (i = 1; i < argc; i++) {
		const char *s;
		if (!opts || argv[i][0] != '-' || !argv[i][1])
			files[nfiles++] = argv[i];
		else if (!strcmp(argv[i], "--list"))
			opt_list = true;
		else if (!strcmp(argv[i], "--totals"))
			opt_totals = true;
		else if (!strcmp(argv[i], "--inclusive"))
			opt_incl = true;
		else if (!strcmp(argv[i], "--addrs"))
			opt_addrs = true;
		else if (!strcmp(argv[i], "--inclusive-all"))
			opt_incl = opt_self_calls = true;
		else if (!strcmp(argv[i], "--spans")) {
			opt_spans = true;
			jit_side = -1;
		} else if (!strcmp(argv[i], "--lines"))
			opt_lines = true;
		else if (!strcmp(argv[i], "--jit-invariants") && i + 1 < argc && !opt_jit) {
			opt_jit = true;
			if (jit_load(argv[++i]) < 0) {
				free(files);
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--max-errors") && i + 1 < argc &&
			 parse_num((s = argv[i + 1], &s), &g_maxshow) && !*s)
			i++;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			free(files);
			return 0;
		} else if (!strcmp(argv[i], "--"))
			opts = false;
		else {
			usage(stderr);
			free(files);
			return 2;
		}
	}
	if (!nfiles || (opt_jit && nfiles != 2)) {
		usage(stderr);
		free(files);
		return 2;
	}
	if (opt_jit) { /* a first reading of IN for rule 9's ELF function spans */
		jit_side = -1;
		g_quiet = true;
		if (process(files[0]) < 0)
			rc = 2;
		g_quiet = false;
	}
	for (i = 0; i < nfiles; i++) {
		jit_side = opt_spans ? -1 : i;
		if (process(files[i]) < 0)
			rc = 2;
	}
	if (opt_jit) {
		jit_report();
		jit_free();
	}
	fflush(stdout);
	if (g_maxshow && g_nproblems > g_maxshow)
		fprintf(stderr, "cgcheck: %llu more problem(s) not shown\n", g_nproblems - g_maxshow);
	free(files);
	return rc ? rc : g_nproblems || g_jviol ? 1 : 0;
}
