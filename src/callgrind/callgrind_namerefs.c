/* callgrind_namerefs.c - the name lines of a callgrind body (ob=, fl=, fi=, fe=, fn=, cob=,
 * cfi=, cfl=, cfn=, jfi=, jfn=): "(id) name", "(id)" or "name" resolved in the part's three
 * id spaces (docs/formats.md 1.4), functions bound to the object and file in effect where
 * they are defined (3.1), and the context each line sets. Part of the reader
 * (callgrind_reader_ctx.h); fills its name tables and the definitions handed out with the
 * next record. */
#include <stdint.h>
#include <string.h>

#include "callgrind/callgrind_reader_ctx.h"
#include "core/diag.h"
#include "core/scan.h"
#include "core/xalloc.h"

/* The name is borrowed from the line reader's buffer: cg_reader_keep_def_names() copies
 * it if the buffer changes before the record is handed out (a cfn= line's record ends
 * lines later). Most definitions are not copied: on the bench profile that was 219 MB. */
static void add_def(struct cg_reader *r, uint32_t fn, const char *name, size_t len, uint32_t obj,
		    uint32_t file, int compressed, uint64_t id, size_t part0)
{
	XGROW(r->defs, r->defs_cap, r->ndefs + 1);
	/* the parts' index until they are handed out (cg_reader_hand_out_parts()): the list
	 * may move as it grows */
	r->defs[r->ndefs++] = (struct cg_def){ fn, obj, file, name, len, compressed, id,
					       (const size_t *)(uintptr_t)part0, r->def_parts.n - part0 };
}

void cg_reader_keep_def_names(void *ctx)
{
	struct cg_reader *r = ctx;
	for (size_t i = r->ndefs_kept; i < r->ndefs; i++) {
		struct cg_def *def = &r->defs[i];
		XGROW(r->def_names, r->def_names_cap, r->def_names_len + def->len + 1);
		memcpy(r->def_names + r->def_names_len, def->name, def->len);
		r->def_names[r->def_names_len + def->len] = '\0';
		/* an offset until cg_reader_next() returns: def_names may move as it grows */
		def->name = (const char *)(uintptr_t)r->def_names_len;
		r->def_names_len += def->len + 1;
	}
	r->ndefs_kept = r->ndefs;
}

/* The function index of NAME (N bytes) in context OBJ, FILE, for a line that names it
 * uncompressed (COMPRESSED 0) or as "(ID) NAME" (KNOWN: the index ID has, or
 * UINT32_MAX): a new index for each new compressed definition; the known one for a
 * definition repeated with the same name, object and file; UINT32_MAX for one with
 * another (the caller refuses it). SUM and the parts from PART0 on are the name's
 * (name_scan.h); the parts stay only with a new definition. */
static uint32_t fn_index(struct cg_reader *r, int compressed, uint64_t id, uint32_t known,
			 const char *name, size_t n, uint32_t obj, uint32_t file,
			 const struct name_sum *sum, size_t part0)
{
	int added = 1;
	uint32_t idx, fp = name_scan_fp(sum, n, obj, file);
	if (!compressed) {
		idx = cg_names_intern_plain(&r->names, name, n, obj, file, fp, &added);
	} else if (known != UINT32_MAX) {
		/* Not looked up by name: two ids with one name stay two indices
		 * (callgrind_names.h). Only the id's own definition is compared. */
		struct cg_fn f = cg_names_get_fn(&r->names, known);
		uint32_t len = n > CG_FN_LEN_MAX ? CG_FN_LEN_MAX : (uint32_t)n;
		r->def_parts.n = part0;
		return f.len == len && f.fp == fp ? known : UINT32_MAX;
	} else {
		idx = cg_names_add_fn(&r->names, fp, n);
	}
	if (added)
		add_def(r, idx, name, n, obj, file, compressed, id, part0);
	else
		r->def_parts.n = part0;
	return idx;
}

uint32_t cg_namerefs_new_fn(struct cg_reader *r, uint64_t id, const char *name, size_t n,
			    uint32_t obj, uint32_t file, const struct name_sum *sum, size_t part0)
{
	uint32_t idx = fn_index(r, 1, id, UINT32_MAX, name, n, obj, file, sum, part0);
	cg_names_id_put(&r->names, SP_FN, id, idx);
	return idx;
}

/* Resolves the current line's value, "(id) name", "(id)" or "name", in SPACE into *OUT.
 * For functions, OBJ and FILE are the
 * context that binds a definition (or an uncompressed name). */
static int name_ref(struct cg_reader *r, enum cg_space sp, uint32_t obj, uint32_t file,
		    uint32_t *out)
{
	const char *v = r->cur.val, *end = r->cur.val_end;
	struct diag *d = r->d;
	uint64_t id = 0;
	int compressed = 0;
	if (v + 1 < end && *v == '(' && (unsigned)(v[1] - '0') <= 9) {
		const char *p = v + 1;
		if (scan_number(&p, end, &id) < 0 || p >= end || *p != ')')
			return cg_reader_err(r, "expected '(id)' with a decimal id");
		v = p + 1;
		scan_blanks(&v, end);
		compressed = 1;
	}
	uint32_t known = compressed ? cg_names_id_get(&r->names, sp, id) : UINT32_MAX;
	if (compressed && v == end) {
		if (known == UINT32_MAX) {
			static const char *what[] = { "object", "file", "function" };
			return diag_at(d, r->name, r->lr.lineno,
				       "%s id (%llu) is used before it is defined", what[sp],
				       (unsigned long long)id);
		}
		*out = known;
		return 0;
	}
	size_t n = (size_t)(end - v);
	uint32_t idx;
	if (sp == SP_FN) {
		struct name_sum sum;
		size_t part0 = r->def_parts.n;
		name_scan_len(v, n, &sum, &r->def_parts);
		idx = fn_index(r, compressed, id, known, v, n, obj, file, &sum, part0);
	} else
		idx = cg_names_intern(&r->names, sp, v, n);
	if (compressed && known != UINT32_MAX && known != idx) {
		/* kcachegrind rebinds, callgrind_annotate overwrites: the two disagree, so refuse. */
		char q1[100], q2[100];
		if (sp == SP_FN)
			return diag_at(d, r->name, r->lr.lineno, "id (%llu) redefined as '%s', which is not "
				       "the name (or the object and file) it was defined with",
				       (unsigned long long)id, diag_quote(q1, sizeof(q1), v, n));
		const char *old = cg_names_get(&r->names, sp, known)->str;
		return diag_at(d, r->name, r->lr.lineno, "id (%llu) redefined as '%s', it was '%s'",
			       (unsigned long long)id, diag_quote(q1, sizeof(q1), v, n),
			       diag_quote(q2, sizeof(q2), old, strlen(old)));
	}
	if (compressed && known == UINT32_MAX) {
		if (r->names.nids[sp] >= (size_t)1 << 30)
			return diag_at(d, r->name, r->lr.lineno, "more than 2^30 ids");
		cg_names_id_put(&r->names, sp, id, idx);
	}
	*out = idx;
	return 0;
}

/* Function X is current from an fn= line on: REC is its record. */
static void enter_fn(struct cg_reader *r, uint32_t x, struct cg_record *rec)
{
	r->sink = NULL;
	r->line_sink = NULL;
	r->range_sink = NULL;
	r->call_sink = NULL;
	r->call_left = 0;
	r->fn = x;
	r->file = r->fl;
	r->have_fn = 1;
	rec->kind = CG_FN;
	rec->fn = x;
}

int cg_namerefs_fast_fn(struct cg_reader *r, struct cg_record *rec)
{
	struct line_reader *lr = &r->lr;
	const char *line = lr->buf + lr->start, *limit = lr->buf + lr->end, *p = line + 4, *e;
	uint64_t id;
	/* byte by byte: the NUL after the buffer's bytes stops the comparisons */
	if (line[0] != 'f' || line[1] != 'n' || line[2] != '=' || line[3] != '(' ||
	    scan_dec(&p, limit, &id) < 0 || *p != ')')
		return 0;
	uint32_t x = cg_names_id_get(&r->names, SP_FN, id);
	const char *name = NULL;
	struct name_sum sum;
	size_t part0 = r->def_parts.n;
	if (p[1] == '\n' && x != UINT32_MAX) {
		e = p + 1;   /* "fn=(ID)", defined before */
	} else if (p[1] == ' ' && p[2] != ' ' && p[2] != '\t' && x == UINT32_MAX &&
		   r->names.nids[SP_FN] < (size_t)1 << 30) {
		/* "fn=(ID) NAME", NAME not empty, not after more blanks, not ending in "\r" */
		name = p + 2;
		e = name_scan_line(name, limit, &sum, &r->def_parts);
		if (*e != '\n' || e == name || e[-1] == '\r')
			e = NULL;
	} else {
		return 0;
	}
	size_t len = e ? (size_t)(e - line) : 0;
	if (!e || len > lr->max_line) {   /* the general path reads (and reports) it */
		r->def_parts.n = part0;
		return 0;
	}
	if (name)
		x = cg_namerefs_new_fn(r, id, name, (size_t)(e - name), r->ob, r->fl, &sum, part0);
	line_reader_skip(lr, len + 1, 1);
	r->cur = (struct cg_reader_line){ line, len, line + 3, e };
	rec->line = lr->lineno;
	rec->text = line;
	rec->len = len;
	enter_fn(r, x, rec);
	return 1;
}

int cg_namerefs_line(struct cg_reader *r, enum cg_tag t, struct cg_record *rec)
{
	uint32_t x;
	switch (t) {
	case T_OB:
		if (name_ref(r, SP_OBJ, 0, 0, &x) < 0)
			return -1;
		r->ob = x;
		r->have_fn = 0;   /* kcachegrind: ob= resets the current function */
		return 0;
	case T_FL:
		if (name_ref(r, SP_FILE, 0, 0, &x) < 0)
			return -1;
		r->fl = r->file = x;
		return 0;
	case T_FI:
	case T_FE:
		if (name_ref(r, SP_FILE, 0, 0, &x) < 0)
			return -1;
		r->file = x;
		return 0;
	case T_FN:
		if (name_ref(r, SP_FN, r->ob, r->fl, &x) < 0)
			return -1;
		enter_fn(r, x, rec);
		return 1;
	case T_COB:
		if (name_ref(r, SP_OBJ, 0, 0, &r->cob) < 0)
			return -1;
		r->have_cob = 1;
		return 0;
	case T_CFI:
	case T_CFL:
		if (name_ref(r, SP_FILE, 0, 0, &r->cfi) < 0)
			return -1;
		r->have_cfi = 1;
		return 0;
	case T_CFN:
		if (name_ref(r, SP_FN, r->have_cob ? r->cob : r->ob,
			     r->have_cfi ? r->cfi : r->file, &r->cfn) < 0)
			return -1;
		r->have_cfn = 1;
		return 0;
	case T_JFI:
		if (name_ref(r, SP_FILE, 0, 0, &r->jfi) < 0)
			return -1;
		r->have_jfi = 1;
		return 0;
	case T_JFN:
		if (name_ref(r, SP_FN, r->ob, r->have_jfi ? r->jfi : r->file,
			     &r->jfn) < 0)
			return -1;
		r->have_jfn = 1;
		return 0;
	default:
		return 0;
	}
}
