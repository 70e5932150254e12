/* prof_scope.c - selectors (functions by name or pattern, object and file, as budget
 * files name them), the names close to a selector that matches nothing, and scoped
 * profiles: a profile's costs under a focus (flamegraph_scope.c, on the flame graph's model) or its JIT code
 * only, built as a new struct profile that this module fills and the caller owns. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "report/doc_out.h"
#include "report/flamegraph.h"
#include "report/prof_scope.h"
#include "report/profile.h"

/* Names up to this long are made on the stack: matching runs over every function. */
#define MATCH_STACK 4096

int prof_select_match(const struct prof_select *s, const struct profile *p, size_t i)
{
	const char *obj = profile_obj(p, i), *base = strrchr(obj, '/');
	base = base ? base + 1 : obj;
	if ((s->object && fnmatch(s->object, base, 0)) || (s->file && fnmatch(s->file, profile_file(p, i), 0)))
		return 0;
	char stack[MATCH_STACK];
	struct prof_name name = { stack, 0, sizeof(stack) };
	if (profile_name_len(p, i) >= sizeof(stack))
		name = (struct prof_name){ 0 };
	profile_name(p, i, &name);
	int match = s->name ? !strcmp(s->name, name.s) : !fnmatch(s->glob, name.s, 0);
	if (name.s != stack)
		prof_name_free(&name);
	return match;
}

size_t prof_select_count(const struct profile *p, const struct prof_select *s)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nfns; i++)
		n += (size_t)prof_select_match(s, p, i);
	return n;
}

/* The fewest edits (insertions, deletions, substitutions, ignoring case) that turn NEEDLE
 * into some part of HAY: Sellers' algorithm, a column of M + 1 entries in COL. 0 when
 * NEEDLE is in HAY. */
static size_t part_distance(const char *needle, size_t m, const char *hay, size_t n, size_t *col)
{
	for (size_t i = 0; i <= m; i++)
		col[i] = i;
	size_t best = col[m];
	for (size_t j = 1; j <= n && best; j++) {
		size_t diag = col[0];
		col[0] = 0;   /* the part may start anywhere */
		for (size_t i = 1; i <= m; i++) {
			size_t up = col[i];
			size_t v = diag + (tolower((unsigned char)needle[i - 1]) != tolower((unsigned char)hay[j - 1]));
			if (up + 1 < v)
				v = up + 1;
			if (col[i - 1] + 1 < v)
				v = col[i - 1] + 1;
			diag = up;
			col[i] = v;
		}
		if (col[m] < best)
			best = col[m];
	}
	return best;
}

/* What a selector's names are compared with: the name, or the longest run of a pattern
 * without fnmatch's special characters ("JS:*bubblesort *" -> "bubblesort "). */
static void needle_of(const struct prof_select *s, const char **p, size_t *len)
{
	if (s->name) {
		*p = s->name;
		*len = strlen(s->name);
		return;
	}
	*p = s->glob;
	*len = 0;
	for (const char *q = s->glob; *q;) {
		size_t k = strcspn(q, "*?[]\\");
		if (k > *len) {
			*p = q;
			*len = k;
		}
		q += k;
		if (*q)
			q++;
	}
}

struct candidate {
	size_t fn, dist;
	int jit;
	uint64_t self;
};

static int cmp_candidate(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;
	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	if (a->jit != b->jit)
		return a->jit ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* The longest needle compared, and the longest part of a name searched: the hint is for
 * people, and a profile can hold 263,257 names (scripts/bench). */
#define SUGGEST_NEEDLE 64
#define SUGGEST_HAY 512

size_t prof_select_suggest(const struct profile *p, const struct prof_select *s, size_t *out,
			   size_t max)
{
	const char *needle;
	size_t m;
	needle_of(s, &needle, &m);
	if (m > SUGGEST_NEEDLE)
		m = SUGGEST_NEEDLE;
	/* a short needle is found by chance in many names: only as it is */
	size_t allowed = m / 4;
	if (!m || !max)
		return 0;
	struct candidate *c = xmalloc((p->nfns + 1) * sizeof(*c));
	size_t nc = 0, col[SUGGEST_NEEDLE + 1];
	struct prof_name name = { 0 };
	for (size_t i = 0; i < p->nfns; i++) {
		const struct prof_fn *fn = &p->fns[i];
		size_t n = strlen(profile_name(p, i, &name));
		size_t dist = part_distance(needle, m, name.s, n < SUGGEST_HAY ? n : SUGGEST_HAY, col);
		if (dist <= allowed)
			c[nc++] = (struct candidate){ i, dist, fn->jit, p->nevents ? profile_self(p, i)[0] : 0 };
	}
	prof_name_free(&name);
	qsort(c, nc, sizeof(*c), cmp_candidate);
	size_t k = 0;
	for (; k < nc && k < max; k++)
		out[k] = c[k].fn;
	free(c);
	return k;
}

char *prof_select_hint(const struct profile *p, const struct prof_select *s)
{
	size_t idx[3];
	size_t n = prof_select_suggest(p, s, idx, 3), len = 32;
	if (!n)
		return NULL;
	struct prof_name name = { 0 };
	for (size_t i = 0; i < n; i++)
		len += strlen(profile_name(p, idx[i], &name)) + 8;
	char *h = xmalloc(len), *q = h;
	q += sprintf(q, "did you mean ");
	for (size_t i = 0; i < n; i++)
		q += sprintf(q, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ", profile_name(p, idx[i], &name));
	prof_name_free(&name);
	strcpy(q, "?");
	return h;
}

static json_t *opt_string(const char *s)
{
	return s ? doc_string(s) : json_null();
}

json_t *prof_select_json(const struct prof_select *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "match", json_string(s->name ? "name" : "glob"));
	json_object_set_new(o, "pattern", doc_string(s->name ? s->name : s->glob));
	json_object_set_new(o, "object", opt_string(s->object));
	json_object_set_new(o, "file", opt_string(s->file));
	return o;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

/* The focus functions of P (FOCUS[f] set), at least one; else -1 with D set. */
static int find_focus(const struct profile *p, const struct prof_select *s, unsigned char *focus,
		      size_t *n, struct diag *d)
{
	*n = 0;
	for (size_t i = 0; i < p->nfns; i++)
		if (prof_select_match(s, p, i)) {
			focus[i] = 1;
			(*n)++;
		}
	if (*n)
		return 0;
	char *hint = prof_select_hint(p, s);
	diag_at(d, p->path, 0, "the focus %s '%s'%s%s%s%s matches no function%s%s", s->name ? "name" : "glob",
		s->name ? s->name : s->glob, s->object ? " in object " : "", s->object ? s->object : "",
		s->file ? " in file " : "", s->file ? s->file : "", hint ? "; " : "", hint ? hint : "");
	free(hint);
	return -1;
}

/* The scope's description, for the documents. */
static void describe(struct profile *out, const struct profile *p, const struct prof_scope_opts *o,
		     const unsigned char *focus, const uint32_t *idx, const uint64_t *calls)
{
	struct profile_scope *sc = xcalloc(1, sizeof(*sc));
	sc->jit_only = o->jit_only;
	sc->profile_totals = xmalloc((p->nevents ? p->nevents : 1) * sizeof(*sc->profile_totals));
	for (unsigned e = 0; e < p->nevents; e++)
		sc->profile_totals[e] = p->totals[e];
	if (focus) {
		const struct prof_select *s = o->focus;
		sc->focused = 1;
		sc->match = dup_or_null(s->name ? "name" : "glob");
		sc->pattern = dup_or_null(s->name ? s->name : s->glob);
		sc->object = dup_or_null(s->object);
		sc->file = dup_or_null(s->file);
		sc->focus = xmalloc((p->nfns + 1) * sizeof(*sc->focus));
		for (size_t f = 0; f < p->nfns; f++)
			if (focus[f]) {
				sc->focus[sc->nfocus++] = idx[f];
				sc->calls += calls[f];
			}
	}
	out->scope = sc;
}

int prof_scope_make(const struct profile *p, const struct prof_scope_opts *o, unsigned ev,
		    struct profile *out, struct diag *d)
{
	memset(out, 0, sizeof(*out));
	if (o->focus && p->cachegrind)
		return diag_at(d, p->path, 0, "a cachegrind file records no calls: there is nothing under a "
			       "function to focus on (--focus needs a callgrind profile)");
	unsigned char *focus = NULL;
	size_t nfocus = 0;
	if (o->focus) {
		focus = xcalloc(p->nfns + 1, 1);
		if (find_focus(p, o->focus, focus, &nfocus, d) < 0) {
			free(focus);
			return -1;
		}
	}
	unsigned nev = p->nevents;
	struct flamegraph_scope *sc = focus ? xcalloc(nev, sizeof(*sc)) : NULL;
	for (unsigned e = 0; focus && e < nev; e++)
		flamegraph_scope(p, e, focus, &sc[e]);
	struct profile_builder *b = profile_builder_new(out, nev, (const char *const *)p->events);
	uint32_t *idx = xmalloc((p->nfns + 1) * sizeof(*idx));
	uint64_t *costs = xmalloc((nev ? nev : 1) * sizeof(*costs));
	for (size_t f = 0; f < p->nfns; f++) {
		int keep = !focus || focus[f];
		for (unsigned e = 0; e < nev && !keep; e++)
			keep = sc[e].self[f] || sc[e].incl[f];
		idx[f] = UINT32_MAX;
		if (!keep)
			continue;
		idx[f] = profile_builder_copy_fn(b, p, f);
		for (unsigned e = 0; e < nev; e++)
			costs[e] = focus ? sc[e].self[f] : profile_self(p, f)[e];
		profile_builder_self(b, idx[f], costs);
	}
	out->cachegrind = p->cachegrind;
	profile_builder_finish(b);
	for (size_t f = 0; f < p->nfns; f++) {
		if (idx[f] == UINT32_MAX)
			continue;
		const struct prof_fn *fn = &p->fns[f];
		struct prof_fn *to = &out->fns[idx[f]];
		uint64_t *incl = profile_incl_w(out, idx[f]);
		for (unsigned e = 0; e < nev; e++)
			incl[e] = focus ? sc[e].incl[f] : profile_incl(p, f)[e];
		to->calls = focus ? sc[ev].calls[f] : fn->calls;
		to->self_calls = fn->self_calls;
		to->in_cycle = focus ? sc[ev].in_cycle[f] : fn->in_cycle;
	}
	/* the focus's totals are its activity, exact; the self costs under it are rounded
	 * each and may add up to a few units more or less */
	for (unsigned e = 0; focus && e < nev; e++)
		out->totals[e] = sc[e].total;
	out->path = p->path ? xstrndup(p->path, strlen(p->path)) : NULL;
	if (p->cmd)
		profile_set_cmd(out, p->cmd, strlen(p->cmd));
	out->parts = p->parts;
	out->part = p->part;
	out->folded = p->folded;
	out->totals_calculated = p->totals_calculated;
	if (p->summary && !focus) {   /* a focus's totals are its own: no summary */
		out->summary = xmalloc(nev * sizeof(*out->summary));
		memcpy(out->summary, p->summary, nev * sizeof(*out->summary));
	}
	describe(out, p, o, focus, idx, focus ? sc[ev].calls : NULL);
	for (unsigned e = 0; focus && e < nev; e++)
		flamegraph_scope_free(&sc[e]);
	free(sc);
	free(idx);
	free(costs);
	free(focus);
	return 0;
}
