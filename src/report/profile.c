/* profile.c - the per-function model of a profile: identities, self costs, call arcs, and
 * the inclusive costs derived from them. The loaders (profile_read.c) feed a builder; the
 * report commands read struct profile. Owns every string and array in struct profile. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "jit/pathmap.h"
#include "report/prof_arcs.h"
#include "report/profile.h"

struct profile_builder {
	struct profile *p;
	unsigned nev;
	int fold;
	size_t fns_cap;
	uint64_t *self;          /* nfns * nev */
	size_t self_cap;
	struct prof_arc_table arcs;
	char *fold_buf;
	size_t fold_cap;
	const struct pathmap *paths;
	struct pathmap_buf mapped_name, mapped_file;
	struct prof_name copied;   /* profile_builder_copy_fn()'s name */
};

void profile_free(struct profile *p)
{
	if (!p)
		return;
	free(p->path);
	free(p->cmd);
	if (p->scope) {
		free(p->scope->match);
		free(p->scope->pattern);
		free(p->scope->object);
		free(p->scope->file);
		free(p->scope->focus);
		free(p->scope->profile_totals);
		free(p->scope);
	}
	for (unsigned i = 0; i < p->nevents; i++)
		free(p->events[i]);
	free(p->events);
	free(p->totals);
	free(p->summary);
	free(p->fns);
	free(p->cost_pool);
	free(p->arcs);
	free(p->arc_costs);
	profile_names_free(p);
	strtab_free(&p->name_parts);
	strtab_free(&p->objs);
	strtab_free(&p->files);
	memset(p, 0, sizeof(*p));
}

void profile_drop_arcs(struct profile *p)
{
	free(p->arcs);
	free(p->arc_costs);
	p->arcs = NULL;
	p->arc_costs = NULL;
	p->arcs_dropped = 1;
}

const char *profile_kind_name(enum prof_kind kind)
{
	static const char *const names[] = { "native", "jit", "unnamed_jit", "no_symbol" };
	return names[kind];
}

void profile_set_cmd(struct profile *p, const char *cmd, size_t len)
{
	while (len && (*cmd == ' ' || *cmd == '\t'))
		cmd++, len--;
	while (len && (cmd[len - 1] == ' ' || cmd[len - 1] == '\t'))
		len--;
	if (!p->cmd)
		p->cmd = xstrndup(cmd, len);
}

int profile_listed(const struct profile *p, size_t fn)
{
	return !p->scope || !p->scope->jit_only || p->fns[fn].jit;
}

int profile_event(const struct profile *p, const char *name)
{
	for (unsigned i = 0; i < p->nevents; i++)
		if (!strcmp(p->events[i], name))
			return (int)i;
	return -1;
}

struct profile_builder *profile_builder_new(struct profile *p, unsigned nevents,
					    const char *const *events)
{
	struct profile_builder *b = xcalloc(1, sizeof(*b));
	b->p = p;
	b->nev = nevents;
	p->nevents = nevents;
	p->events = xcalloc(nevents ? nevents : 1, sizeof(*p->events));
	for (unsigned i = 0; i < nevents; i++)
		p->events[i] = xstrndup(events[i], strlen(events[i]));
	p->totals = xcalloc(nevents ? nevents : 1, sizeof(*p->totals));
	memset(&p->names, 0, sizeof(p->names));
	strtab_init(&p->name_parts);
	strtab_init(&p->objs);
	strtab_init(&p->files);
	prof_arc_table_init(&b->arcs, nevents);
	return b;
}

void profile_builder_fold(struct profile_builder *b, int fold)
{
	b->fold = fold;
}

void profile_builder_paths(struct profile_builder *b, const struct pathmap *pm)
{
	b->paths = pm;
}

/* "f'2'caller'3" -> "f'caller": callgrind's --separate-recs copies are the same function.
 * A part made only of digits is such a copy number; everything else is kept. */
static size_t fold_name(struct profile_builder *b, const char *name, size_t len, const char **out)
{
	XGROW(b->fold_buf, b->fold_cap, len + 1);
	size_t n = 0, i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && name[j] != '\'')
			j++;
		int digits = j > i && i > 0;
		for (size_t k = i; k < j && digits; k++)
			digits = name[k] >= '0' && name[k] <= '9';
		if (!digits) {
			if (i > 0)
				b->fold_buf[n++] = '\'';
			memcpy(b->fold_buf + n, name + i, j - i);
			n += j - i;
		}
		i = j + 1;
	}
	*out = b->fold_buf;
	return n;
}

static int is_unknown_name(const char *s, size_t len)
{
	if (len < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	size_t i = 2;
	while (i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
		i++;
	return i > 2 && (i == len || s[i] == '\'');
}

/* The objects cgjit augment gives JIT functions (README "What augment does", rule 3):
 * the perf map (perf-PID.map), the jitdump (jit-PID.dump, also compressed) or the ELF
 * file made from a dump (jit-PID.dump.elf, jit-PID.dump.g1.elf); a RaptorJIT auditlog's
 * ELF files (LOG.auditlog.elf, LOG.auditlog.g1.elf: symbol_files.c), or the log itself
 * when it is named so. */
static int is_jit_object(const char *obj)
{
	const char *base = strrchr(obj, '/');
	base = base ? base + 1 : obj;
	size_t n = strlen(base);
	if (!strncmp(base, "perf-", 5) && n > 9 && !strcmp(base + n - 4, ".map"))
		return 1;
	const char *al = strstr(base, ".auditlog");
	if (al && (!strcmp(al, ".auditlog") || !strcmp(al, ".auditlog.zst") || !strcmp(al, ".auditlog.gz") || !strcmp(al, ".auditlog.elf") ||
		   (!strncmp(al, ".auditlog.g", 11) && n > 4 && !strcmp(base + n - 4, ".elf"))))
		return 1;
	return !strncmp(base, "jit-", 4) && strstr(base, ".dump") != NULL;
}

uint32_t profile_builder_fn(struct profile_builder *b, const struct prof_fn_key *k)
{
	struct profile *p = b->p;
	const char *name = k->name, *file = k->file;
	size_t nlen = k->nlen, flen = k->flen;
	if (b->fold)
		nlen = fold_name(b, name, nlen, &name);
	if (b->paths) {
		name = pathmap_callgrind_name(b->paths, name, nlen, &b->mapped_name, &nlen);
		file = pathmap_path(b->paths, file, flen, &b->mapped_file, &flen);
	}
	uint32_t o = strtab_intern(&p->objs, k->obj, k->olen, NULL);
	uint32_t f = strtab_intern(&p->files, file, flen, NULL);
	int added;
	uint32_t i = profile_name_intern(p, name, nlen, o, f, &added);
	if (!added)
		return i;
	XGROW(p->fns, b->fns_cap, p->nfns + 1);
	struct prof_fn *fn = &p->fns[p->nfns++];
	memset(fn, 0, sizeof(*fn));
	/* pointers into the tables are set in finish(): the tables move while they grow;
	 * so is the kind, which needs the object */
	fn->kind = is_unknown_name(name, nlen) ? PROF_NO_SYMBOL : PROF_NATIVE;
	XGROW(b->self, b->self_cap, p->nfns * b->nev);
	memset(b->self + (p->nfns - 1) * b->nev, 0, b->nev * sizeof(*b->self));
	return i;
}

uint32_t profile_builder_copy_fn(struct profile_builder *b, const struct profile *from, size_t fn)
{
	profile_name(from, fn, &b->copied);
	const char *obj = profile_obj(from, fn), *file = profile_file(from, fn);
	struct prof_fn_key k = { obj, strlen(obj), file, strlen(file), b->copied.s, b->copied.len };
	return profile_builder_fn(b, &k);
}

void profile_builder_self(struct profile_builder *b, uint32_t fn, const uint64_t *costs)
{
	uint64_t *s = b->self + (size_t)fn * b->nev;
	for (unsigned e = 0; e < b->nev; e++) {
		s[e] += costs[e];
		b->p->totals[e] += costs[e];
	}
}

void profile_builder_call(struct profile_builder *b, uint32_t caller, uint32_t callee,
			  uint64_t count, const uint64_t *costs)
{
	prof_arc_table_add(&b->arcs, caller, callee, count, costs);
}

uint32_t profile_components(const struct profile *p, uint32_t *comp)
{
	return prof_components(p->nfns, p->arcs, p->narcs, comp, NULL);
}

uint32_t profile_components_of(size_t n, const struct prof_arc *arcs, size_t narcs, uint32_t *comp)
{
	return prof_components(n, arcs, narcs, comp, NULL);
}

/* Inclusive cost, as docs/reports.md explains: the calls into a function from other
 * functions (callgrind_annotate's rule), or, for a function nobody calls, its self cost
 * plus its calls out; never less than its self cost (an activation that is the root of a
 * thread's stack has no arc in). A self-call happens inside an outer activation and is not
 * added again. On a cycle through several functions the arcs cannot tell nested
 * activations from outer ones, so a member's figure is capped at what all activations of
 * the cycle did: the members' self cost plus their calls out of the cycle. (Capping at the
 * arcs into the cycle instead fails for a cycle that threads start inside: the JVM's.) */
static void inclusive(struct profile_builder *b)
{
	struct profile *p = b->p;
	const struct prof_arc_table *t = &b->arcs;
	size_t n = p->nfns, nev = b->nev;
	const uint64_t *self = p->cost_pool;
	uint64_t *incl = p->cost_pool + n * nev;   /* first the arcs in, then the result */
	/* the components first: their walk's memory is freed before the sums below take theirs */
	uint32_t *comp = xmalloc((n + 1) * sizeof(*comp)), *size = xmalloc((n + 1) * sizeof(*size));
	prof_components(n, t->arcs, t->n, comp, size);
	uint64_t *out = xcalloc(n * nev + 1, sizeof(*out));
	uint64_t *work = xcalloc(n * nev + 1, sizeof(*work));   /* per component */
	unsigned char *has_in = xcalloc(n + 1, 1);
	memset(incl, 0, n * nev * sizeof(*incl));
	for (size_t f = 0; f < n; f++)
		for (size_t e = 0; e < nev; e++)
			work[comp[f] * nev + e] += self[f * nev + e];
	for (size_t a = 0; a < t->n; a++) {
		const struct prof_arc *r = &t->arcs[a];
		const uint64_t *c = t->costs + a * nev;
		if (r->caller == r->callee) {
			p->fns[r->caller].self_calls = 1;
			continue;
		}
		has_in[r->callee] = 1;
		p->fns[r->callee].calls += r->count;
		for (size_t e = 0; e < nev; e++) {
			incl[r->callee * nev + e] += c[e];
			out[r->caller * nev + e] += c[e];
		}
		uint32_t k = comp[r->caller];
		if (comp[r->callee] != k)
			for (size_t e = 0; e < nev; e++)
				work[k * nev + e] += c[e];
	}
	for (size_t f = 0; f < n; f++) {
		uint32_t k = comp[f];
		p->fns[f].in_cycle = size[k] > 1;
		for (size_t e = 0; e < nev; e++) {
			size_t i = f * nev + e;
			uint64_t v = has_in[f] ? incl[i] : self[i] + out[i];
			if (size[k] > 1 && v > work[k * nev + e])
				v = work[k * nev + e];
			incl[i] = v > self[i] ? v : self[i];
		}
	}
	free(out);
	free(has_in);
	free(comp);
	free(size);
	free(work);
}

void profile_builder_finish(struct profile_builder *b)
{
	struct profile *p = b->p;
	size_t n = p->nfns, nev = b->nev;
	/* nothing more is added: the arcs' index goes before the inclusive costs' memory comes */
	prof_arc_table_drop_index(&b->arcs);
	profile_names_seal(p);
	/* the self costs become the first half of the pool, without a second copy */
	p->cost_pool = xrealloc(b->self, (2 * n * nev + 1) * sizeof(*p->cost_pool));
	b->self = NULL;
	if (p->cachegrind && n && nev)
		memcpy(p->cost_pool + n * nev, p->cost_pool, n * nev * sizeof(*p->cost_pool));
	else
		inclusive(b);
	/* the arcs go to the profile for the flame graph (flamegraph_model.c); the builder is done with them */
	p->narcs = b->arcs.n;
	p->arcs = b->arcs.arcs;
	p->arc_costs = b->arcs.costs;
	b->arcs.arcs = NULL;
	b->arcs.costs = NULL;
	for (size_t i = 0; i < n; i++) {
		struct prof_fn *fn = &p->fns[i];
		const char *obj = profile_obj(p, i);
		fn->jit = (unsigned)is_jit_object(obj);
		/* callgrind's object ??? is memory that no ELF file maps: a 0x... name there is
		 * JIT code no symbol names; in an ELF file it is code without symbols */
		if (fn->jit)
			fn->kind = PROF_JIT;
		else if (fn->kind == PROF_NO_SYMBOL && !strcmp(obj, "???"))
			fn->kind = PROF_UNNAMED_JIT;
	}
	profile_builder_abort(b);
}

void profile_builder_abort(struct profile_builder *b)
{
	if (!b)
		return;
	free(b->self);
	prof_arc_table_free(&b->arcs);
	free(b->fold_buf);
	pathmap_buf_free(&b->mapped_name);
	pathmap_buf_free(&b->mapped_file);
	prof_name_free(&b->copied);
	free(b);
}
