/* jitname.c - the table of runtime name conventions and one matcher per convention
 * (docs/formats.md 4.4). */
#include <string.h>

#include "core/scan.h"
#include "jit/jitname.h"

/* Parses a run of decimal digits ending exactly at END. */
static int digits_to_end(const char *p, const char *end, uint64_t *v)
{
	return scan_dec(&p, end, v) == 0 && p == end ? 0 : -1;
}

/* "...(FILE:LINE)" at the end of the name. */
static int match_moarvm(const char *s, size_t n, struct jitname *o)
{
	if (n < 5 || s[n - 1] != ')')
		return 0;
	const char *end = s + n - 1;
	const char *colon = end;
	while (colon > s && colon[-1] != ':' && (unsigned)(colon[-1] - '0') <= 9)
		colon--;
	if (colon == s || colon[-1] != ':' || colon == end)
		return 0;
	colon--;
	uint64_t line;
	if (digits_to_end(colon + 1, end, &line) < 0)
		return 0;
	/* The file starts after the '(' that opens this group: search back for it. */
	const char *open = colon;
	while (open > s && open[-1] != '(')
		open--;
	if (open == s || open == colon)
		return 0;
	o->file = open;
	o->file_len = (size_t)(colon - open);
	o->line = line;
	return 1;
}

/* The length of the V8 code-kind prefix ("JS:", ...) NAME starts with, or 0. */
static size_t v8_prefix(const char *s, size_t n)
{
	static const char *prefixes[] = { "JS:", "LazyCompile:", "Function:", "Script:", "Eval:",
					  "InterpretedFunction:", "RegExp:" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = strlen(prefixes[i]);
		if (n > k && !memcmp(s, prefixes[i], k))
			return k;
	}
	return 0;
}

/* Whether the N bytes at S end with the C string T. */
static int ends_with(const char *s, size_t n, const char *t)
{
	size_t k = strlen(t);
	return n >= k && !memcmp(s + n - k, t, k);
}

int jitname_v8_wasm(const char *name, size_t len, struct jitname_wasm *out)
{
	static const char *tiers[] = { "-liftoff", "-turbofan", "-none", "-interpreter" };
	static const char anon[] = "-<anonymous>";
	size_t k = v8_prefix(name, len), t = 0;
	for (size_t i = 0; k && !t && i < sizeof(tiers) / sizeof(tiers[0]); i++)
		if (ends_with(name + k, len - k, tiers[i]))
			t = strlen(tiers[i]);
	if (!t)
		return 0;
	const char *end = name + len - t;   /* the '-' before the tier */
	const char *p = end;
	uint64_t index = UINT64_MAX;
	if (ends_with(name + k, (size_t)(end - name) - k, anon)) {
		p -= sizeof(anon) - 1;
	} else {
		while (p > name + k && (unsigned)(p[-1] - '0') <= 9)
			p--;
		if (p == end || p[-1] != '-' || digits_to_end(p, end, &index) < 0)
			return 0;
		p--;
	}
	if (p == name + k)   /* V8 never logs an empty NAME */
		return 0;
	if (out) {
		out->func = name + k;
		out->func_len = (size_t)(p - out->func);
		out->index = index;
		out->tier = end + 1;
		out->tier_len = t - 1;
	}
	return 1;
}

char jitname_v8_kind(const char *name, size_t len)
{
	size_t k = v8_prefix(name, len);
	if (!k || !memchr("~^+*", name[k], 4) || jitname_v8_wasm(name, len, NULL))
		return 0;
	return name[k];
}

/* "PREFIX:NAME FILE:LINE[:COL]" with one of V8's code-kind prefixes. */
static int match_v8(const char *s, size_t n, struct jitname *o)
{
	if (!v8_prefix(s, n))
		return 0;
	const char *sp = s + n;
	while (sp > s && sp[-1] != ' ')
		sp--;
	if (sp == s)
		return 0;
	const char *tok = sp, *end = s + n;
	/* Up to two trailing ":digits" groups: line and column. */
	const char *c1 = memchr(tok, ':', (size_t)(end - tok));
	const char *last = NULL, *prev = NULL;
	for (const char *p = tok; p < end; p++)
		if (*p == ':') {
			prev = last;
			last = p;
		}
	if (!c1 || !last)
		return 0;
	uint64_t a, b;
	if (digits_to_end(last + 1, end, &b) < 0)
		return 0;
	if (prev && digits_to_end(prev + 1, last, &a) == 0) {
		o->file = tok;
		o->file_len = (size_t)(prev - tok);
		o->line = a;
	} else {
		o->file = tok;
		o->file_len = (size_t)(last - tok);
		o->line = b;
	}
	return o->file_len > 0;
}

/* "py::QUALNAME:FILE" (no line: jitname_parse() makes it 1). */
static int match_cpython(const char *s, size_t n, struct jitname *o)
{
	if (n < 6 || memcmp(s, "py::", 4) != 0)
		return 0;
	const char *colon = memchr(s + 4, ':', n - 4);
	if (!colon || colon + 1 >= s + n)
		return 0;
	o->file = colon + 1;
	o->file_len = (size_t)(s + n - colon - 1);
	return 1;
}

/* "TRACE_N::CHUNK:LINE"; a chunk name starting with '@' is a file. */
static int match_luajit(const char *s, size_t n, struct jitname *o)
{
	if (n < 10 || memcmp(s, "TRACE_", 6) != 0)
		return 0;
	const char *sep = NULL;
	for (const char *p = s + 6; p + 1 < s + n; p++)
		if (p[0] == ':' && p[1] == ':') {
			sep = p + 2;
			break;
		}
	if (!sep)
		return 0;
	const char *end = s + n, *last = NULL;
	for (const char *p = sep; p < end; p++)
		if (*p == ':')
			last = p;
	uint64_t line;
	if (!last || digits_to_end(last + 1, end, &line) < 0)
		return 0;
	if (*sep == '@')
		sep++;
	o->file = sep;
	o->file_len = (size_t)(last - sep);
	o->line = line;
	return o->file_len > 0;
}

/* Whether the N bytes at S name a file rather than a function: PHP names top-level code
 * after its file, and no function, class or method name holds a '/' or a '.' (PHP's
 * identifiers do not). The '.' matters for a path --root made relative ("x.php"). */
static int php_file(const char *s, size_t n)
{
	return memchr(s, '/', n) || memchr(s, '.', n);
}

/* The function part of a PHP name: a file (php_file()), PHP 8.4's "{closure:SCOPE:LINE}"
 * (SCOPE is the file for a closure in top-level code, else the enclosing function), or a
 * name. */
static void php_what(const char *w, size_t n, struct jitname *o)
{
	static const char clo[] = "{closure:";
	const char *end = w + n;
	if (n > 0 && w[n - 1] == '}') {
		const char *c = NULL;
		for (const char *p = w; p + sizeof(clo) - 1 <= end; p++)
			if (!memcmp(p, clo, sizeof(clo) - 1)) {
				c = p + sizeof(clo) - 1;
				break;
			}
		const char *colon = end - 1;
		while (c && colon > c && colon[-1] != ':')
			colon--;
		uint64_t line;
		if (!c || colon <= c + 1 || digits_to_end(colon, end - 1, &line) < 0)
			return;
		o->line = line;
		if (php_file(c, (size_t)(colon - 1 - c))) {
			o->file = c;
			o->file_len = (size_t)(colon - 1 - c);
		}
		return;
	}
	if (n > 0 && w[0] != '{' && php_file(w, n)) {
		o->file = w;
		o->file_len = n;
	}
}

/* PHP opcache: "TRACE-N$WHAT$LINE" (a trace starting at LINE), "JIT$WHAT" (a function);
 * "JIT$$stub" has no location. */
static int match_php(const char *s, size_t n, struct jitname *o)
{
	const char *end = s + n;
	if (n > 6 && !memcmp(s, "TRACE-", 6)) {
		const char *p = s + 6;
		uint64_t num, line;
		if (scan_dec(&p, end, &num) < 0 || p == end || *p != '$')
			return 0;
		const char *what = p + 1, *dollar = end;
		while (dollar > what && dollar[-1] != '$')
			dollar--;
		if (dollar == what || dollar - 1 == what || digits_to_end(dollar, end, &line) < 0)
			return 0;
		php_what(what, (size_t)(dollar - 1 - what), o);
		o->line = line;   /* the trace's own line beats a closure's first line */
		return 1;
	}
	if (n > 4 && !memcmp(s, "JIT$", 4)) {
		if (s[4] != '$')
			php_what(s + 4, n - 4, o);
		return 1;
	}
	return 0;
}

static const struct {
	enum jitname_convention c;
	const char *name;
	int (*match)(const char *, size_t, struct jitname *);
} conventions[] = {
	{ JN_V8, "v8", match_v8 },
	{ JN_CPYTHON, "cpython", match_cpython },
	{ JN_LUAJIT, "luajit", match_luajit },
	{ JN_PHP, "php", match_php },
	{ JN_MOARVM, "moarvm", match_moarvm },   /* last: "(x:1)" endings occur elsewhere too */
};

enum jitname_convention jitname_parse(const char *name, size_t len, struct jitname *out)
{
	for (size_t i = 0; i < sizeof(conventions) / sizeof(conventions[0]); i++) {
		memset(out, 0, sizeof(*out));   /* a matcher that fails may have set fields */
		if (conventions[i].match(name, len, out)) {
			out->convention = conventions[i].c;
			if (out->file && out->line == 0)
				out->line = 1;
			return out->convention;
		}
	}
	memset(out, 0, sizeof(*out));
	return JN_NONE;
}

int jitname_jvm_declared_in(const char *name, size_t len, const char *file, size_t flen)
{
	const char *open = memchr(name, '(', len);
	if (!open)
		return 0;
	const char *q = open;   /* the qualified method name: the word before the '(' */
	while (q > name && q[-1] != ' ')
		q--;
	const char *dot = open;
	while (dot > q && dot[-1] != '.')
		dot--;
	if (dot - 1 <= q)
		return 0;
	const char *cls_end = dot - 1;
	const char *dollar = memchr(q, '$', (size_t)(cls_end - q));
	if (dollar)
		cls_end = dollar;   /* a nested class lives in its outer class's file */
	const char *fend = file + flen, *ext = fend;
	while (ext > file && ext[-1] != '.' && ext[-1] != '/')
		ext--;
	if (ext == file || ext[-1] != '.')
		return 0;
	ext--;
	if ((size_t)(ext - file) != (size_t)(cls_end - q))
		return 0;
	for (size_t i = 0; q + i < cls_end; i++)
		if (file[i] != (q[i] == '.' ? '/' : q[i]))
			return 0;
	return 1;
}

const char *jitname_convention_name(enum jitname_convention c)
{
	for (size_t i = 0; i < sizeof(conventions) / sizeof(conventions[0]); i++)
		if (conventions[i].c == c)
			return conventions[i].name;
	return "none";
}
