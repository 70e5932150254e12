/* java_names.c - names, source paths and line rows for the JVMTI agent, without a JVM
 * (java_names.h). The name form is HotSpot's Method::print_external_name as its perf map
 * shows it (samples/java-instr/perf-23041.map): "int Prog.fib(int)",
 * "void java.util.HashMap$Node.<init>(int, java.lang.Object, ...)",
 * "long java.lang.invoke.LambdaForm$MH/0x0000000017001000.invoke(java.lang.Object, int)". */
#include "java_names.h"

#include <stdlib.h>
#include <string.h>

#include "jitdump_writer.h"

/* A growable string; on allocation failure it sets oom and ignores further appends. */
struct sb {
	char *s;
	size_t len, cap;
	int oom;
};

static void sb_add(struct sb *b, const char *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static char *sb_done(struct sb *b)
{
	if (b->oom || !b->s) {
		free(b->s);
		return NULL;
	}
	return b->s;
}

static const char *primitive(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	case 'V': return "void";
	default: return NULL;
	}
}

/* Appends the field descriptor at P in Java's spelling; returns the byte after it, or NULL
 * when it is malformed. Class names: '/' -> '.', and '.' (only in a hidden class's
 * "name.suffix" form) -> '/'. */
static const char *put_type(struct sb *b, const char *p)
{
	size_t dims = 0;
	while (*p == '[')
		dims++, p++;
	if (*p == 'L') {
		const char *end = strchr(p + 1, ';');
		if (!end || end == p + 1)
			return NULL;
		for (const char *q = p + 1; q < end; q++) {
			char c = *q == '/' ? '.' : *q == '.' ? '/' : *q;
			sb_add(b, &c, 1);
		}
		p = end + 1;
	} else {
		const char *prim = primitive(*p);
		if (!prim || (*p == 'V' && dims))
			return NULL;
		sb_str(b, prim);
		p++;
	}
	while (dims--)
		sb_add(b, "[]", 2);
	return p;
}

char *jn_class_name(const char *class_sig)
{
	struct sb b = { 0 };
	if (!class_sig)
		return NULL;
	const char *end = put_type(&b, class_sig);
	if (!end || *end) {
		free(b.s);
		return NULL;
	}
	return sb_done(&b);
}

char *jn_method_name(const char *class_sig, const char *name, const char *method_sig)
{
	if (!class_sig || !name || !method_sig || method_sig[0] != '(')
		return NULL;
	const char *ret = strchr(method_sig, ')');
	if (!ret)
		return NULL;
	struct sb b = { 0 };
	const char *end = put_type(&b, ret + 1);
	if (!end || *end)
		goto bad;
	sb_add(&b, " ", 1);
	end = put_type(&b, class_sig);
	if (!end || *end)
		goto bad;
	sb_add(&b, ".", 1);
	sb_str(&b, name);
	sb_add(&b, "(", 1);
	for (const char *p = method_sig + 1; p < ret;) {
		if (p != method_sig + 1)
			sb_add(&b, ", ", 2);
		if (*p == 'V')   /* no void parameters */
			goto bad;
		p = put_type(&b, p);
		if (!p || p > ret)
			goto bad;
	}
	sb_add(&b, ")", 1);
	return sb_done(&b);
bad:
	free(b.s);
	return NULL;
}

int jn_is_mh_intrinsic(const char *class_sig, int is_native)
{
	return is_native && class_sig && strcmp(class_sig, "Ljava/lang/invoke/MethodHandle;") == 0;
}

char *jn_source_path(const char *class_sig, const char *source_file)
{
	if (!class_sig || !source_file || !*source_file)
		return NULL;
	const char *p = class_sig[0] == 'L' ? class_sig + 1 : class_sig;
	const char *slash = strrchr(p, '/');
	struct sb b = { 0 };
	if (slash)
		sb_add(&b, p, (size_t)(slash - p) + 1);
	sb_str(&b, source_file);
	return sb_done(&b);
}

int jn_line_at(const struct jn_line *tab, size_t n, int64_t bci)
{
	int line = 0;
	int64_t best = -1;
	for (size_t i = 0; i < n; i++)
		if (tab[i].bci <= bci && tab[i].bci > best) {
			best = tab[i].bci;
			line = tab[i].line;
		}
	return line;
}

static int by_pc(const void *a, const void *b)
{
	uint64_t x = ((const struct jn_pc *)a)->pc, y = ((const struct jn_pc *)b)->pc;
	return x < y ? -1 : x > y;
}

static int same_pos(const struct jd_row *r, const struct jn_pc *p)
{
	return r->line == (uint32_t)p->line && strcmp(r->file, p->file) == 0;
}

size_t jn_rows(uint64_t code_addr, uint64_t size, struct jn_pc *pcs, size_t n, int pc_is_end,
	       struct jd_row *rows)
{
	uint64_t end = code_addr + size;
	size_t k = 0;
	qsort(pcs, n, sizeof(*pcs), by_pc);
	uint64_t cursor = code_addr;    /* pc_is_end: where the next row starts */
	for (size_t i = 0; i < n; i++) {
		const struct jn_pc *p = &pcs[i];
		if (!p->file || p->line <= 0 || p->pc < code_addr || p->pc > end)
			continue;
		uint64_t start;
		if (pc_is_end) {
			if (p->pc <= cursor)   /* describes nothing after the last row */
				continue;
			start = cursor;
			cursor = p->pc;
		} else {
			if (p->pc == end)
				continue;
			start = p->pc;
		}
		if (k && same_pos(&rows[k - 1], p))
			continue;
		if (k && rows[k - 1].addr == start) {   /* two positions at one address */
			rows[k - 1].line = (uint32_t)p->line;
			rows[k - 1].file = p->file;
			if (k >= 2 && same_pos(&rows[k - 2], p))
				k--;
			continue;
		}
		rows[k++] = (struct jd_row){ start, (uint32_t)p->line, 0, p->file };
	}
	return k;
}
