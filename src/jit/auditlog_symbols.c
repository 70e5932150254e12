/* auditlog_symbols.c - the traces of auditlog.c into the symtab: collected while the log
 * is read (the symtab takes a source's entries together), then added in log order with
 * their ELF generations (code_generations.c). Names and code are copied into the symtab;
 * the arrays here are freed before returning. */
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/xalloc.h"
#include "jit/auditlog_symbols.h"
#include "jit/code_generations.h"
#include "jit/symtab.h"

struct trace {
	uint64_t start, size, offset;
	uint32_t traceno;
	const char *name;               /* symtab memory */
	size_t name_len;
	const unsigned char *code;      /* symtab memory, or NULL */
};

struct collect {
	struct symtab *st;
	struct trace *v;
	size_t n, cap;
};

static void on_trace(void *ctx, const struct auditlog_trace *t)
{
	struct collect *c = ctx;
	char *name = symtab_alloc(c->st, t->name_len + 1);
	memcpy(name, t->name, t->name_len + 1);
	unsigned char *code = NULL;
	if (t->code) {
		code = symtab_alloc(c->st, (size_t)t->size);
		memcpy(code, t->code, (size_t)t->size);
	}
	XGROW(c->v, c->cap, c->n + 1);
	c->v[c->n++] = (struct trace){ t->addr, t->size, t->offset, t->traceno, name, t->name_len, code };
}

static int add_symbols(struct collect *c, uint32_t src, struct auditlog_symbols_stats *stats,
		       struct diag *d)
{
	struct code_range *r = xmalloc((c->n + 1) * sizeof(*r));
	for (size_t i = 0; i < c->n; i++)
		r[i] = (struct code_range){ c->v[i].start, c->v[i].size, c->v[i].code != NULL };
	uint32_t *gen = code_generations(r, c->n, &stats->reused, &stats->no_elf);
	free(r);
	int rc = 0;
	for (size_t i = 0; i < c->n && rc == 0; i++) {
		const struct trace *t = &c->v[i];
		struct symtab_entry e = { t->start, t->size, t->name, t->name_len, t->offset };
		if ((rc = symtab_add(c->st, src, &e, d)) < 0)
			break;
		struct symbol *s = symtab_last(c->st);
		s->code = t->code;
		s->code_index = t->traceno;
		s->generation = gen[i];
	}
	free(gen);
	return rc;
}

int auditlog_symbols_read(struct symtab *st, struct input *in, const char *object,
			  struct auditlog_symbols_stats *stats, struct diag *d)
{
	memset(stats, 0, sizeof(*stats));
	struct collect c = { .st = st };
	struct auditlog_visitor v = { .ctx = &c, .trace = on_trace };
	int rc = auditlog_read(in, &v, &stats->log, d);
	if (rc == 0)
		rc = add_symbols(&c, symtab_add_source(st, input_name(in), object, SYMTAB_PRIO_JITDUMP),
				 stats, d);
	free(c.v);
	return rc;
}
