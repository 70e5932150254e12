/*
 * cgcheck - independent test oracle for callgrind profiles (plain text).
 *
 * Reads profiles the way kcachegrind's loader does (libcore/
 * cachegrindloader.cpp and TraceData::function(), v22.12.3; see
 * shared/docs/callgrind-format.md sections 1, 3 and 6) and checks:
 *
 *   (a) per part and event, the sum of self-cost lines equals `totals:`
 *   (b) no undefined compressed id; no id redefined with another name
 *       (nor a function id re-bound to another file/object)
 *   (c) every `calls=` is followed by its cost line, every `jump=`/`jcnd=`
 *       by its position-only line
 *   (d) no split function: a key with callers but no body while another
 *       key with the same name has a body
 *   (e) every called (or jumped-to) key has a body under the same key
 *   (f) no cost line without a function ("Function not specified")
 *   (g) no TAB and no leading whitespace on cost lines
 *   (h) no NUL bytes
 * plus parse errors (malformed lines, unknown lines, missing events:,
 * missing totals:, no final newline).
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

static void problem_at(long line, const char *fmt, ...)
{
	va_list ap;
	if (++g_nproblems > g_maxshow && g_maxshow)
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
} Func;

static Func *F;
static size_t nF, capF;

enum { K_OB, K_FL, K_FN };
static const char *kind_word[] = {"object", "file", "function"};
enum { NEXT_SELF, NEXT_CALL, NEXT_JUMP };

static bool opt_list, opt_totals, opt_incl, opt_addrs;
static bool opt_self_calls;   /* --inclusive counts calls to itself too */
static bool opt_lines;        /* --lines: address, line and file of every self cost line */
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
		if (P.cfn >= 0) {
			Func *callee = &F[P.cfn];
			touch(P.cfn);
			callee->sites++;
			callee->count += P.pend_count;
			if (!callee->first_ref)
				callee->first_ref = P.pend_line;
			for (int i = 0; (opt_self_calls || P.cfn != P.fn) && i < P.nev; i++)
				cur->out[i] += cost[i];
		}
		P.cob = P.cfile = -1; /* cfn stays, as in kcachegrind */
	} else {
		for (int i = 0; i < P.nev; i++) {
			cur->self[i] += cost[i];
			P.selfsum[i] += cost[i];
		}
		if (opt_lines && instr_first && line_idx > 0)
			printf("%d\t0x%llx\t%llu\t%s\t%s\t%s\n", P.num, (unsigned long long)newpos[0],
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
	if (c == '\0' || c == '#')
		return;
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
		"  --lines       part address line file function object, per self cost line (instr line)\n"
		"  --totals      part event sum-of-self-costs\n"
		"  --inclusive   part name file object self+calls-to-others\n"
		"  --max-errors N  print at most N problems (default 1000, 0 = all)\n"
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
		else if (!strcmp(argv[i], "--lines"))
			opt_lines = true;
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
	if (!nfiles) {
		usage(stderr);
		free(files);
		return 2;
	}
	for (i = 0; i < nfiles; i++)
		if (process(files[i]) < 0)
			rc = 2;
	fflush(stdout);
	if (g_maxshow && g_nproblems > g_maxshow)
		fprintf(stderr, "cgcheck: %llu more problem(s) not shown\n", g_nproblems - g_maxshow);
	free(files);
	return rc ? rc : g_nproblems ? 1 : 0;
}
