/* budget.c - reads the YAML budget file of `cgjit check` into struct budget.
 * libyaml's document loader gives every node its line and column, so that each message can
 * point at the key or value it is about. A pass over libyaml's events before it bounds
 * what a hostile file could make libyaml do (check_events). The file is small (at most
 * BUDGET_MAX_BYTES); the strings live in the budget's arena. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "report/budget.h"

#define BUDGET_MAX_BYTES (1u << 20)
#define BUDGET_MAX_DEPTH 32
#define BUDGET_MAX_ANCHORS 64

struct loader {
	struct budget *b;
	yaml_document_t doc;
	struct diag *d;
	size_t cap;
};

static struct budget_mark mark_of(const yaml_node_t *n)
{
	return (struct budget_mark){ (unsigned)n->start_mark.line + 1, (unsigned)n->start_mark.column + 1 };
}

static int fail_at(struct loader *l, const yaml_node_t *n, const char *msg)
{
	struct budget_mark m = mark_of(n);
	return diag_at_col(l->d, l->b->path, m.line, m.column, "%s", msg);
}

/* N's text, or NULL if N is no scalar, or one with a NUL byte (a double-quoted "\0"): read
 * as a C string it would end early, and "5\0x" would be the cost 5. */
static const char *scalar(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || memchr(n->data.scalar.value, '\0', n->data.scalar.length))
		return NULL;
	return (const char *)n->data.scalar.value;
}

/* A key's value as a string; KEY names it in the message. */
static int get_str(struct loader *l, const yaml_node_t *v, const char *key, const char **out)
{
	const char *s = scalar(v);
	if (!s || !*s) {
		char msg[96];
		snprintf(msg, sizeof(msg), "'%s' takes a non-empty string", key);
		return fail_at(l, v, msg);
	}
	*out = arena_strndup(&l->b->arena, s, strlen(s));
	return 0;
}

/* Decimal digits with single '_' only between two of them ("2_500_000"), at *P before END:
 * their value is appended to *V (which must not pass UINT64_MAX) and *P advanced past them.
 * Returns how many digits, or -1 (none, a '_' not between digits, too large). */
static int scan_digits(const char **p, const char *end, uint64_t *v)
{
	int n = 0;
	for (const char *q = *p; q < end; q++) {
		if (*q == '_') {
			if (!n || q + 1 >= end || q[1] < '0' || q[1] > '9')
				return -1;
			continue;
		}
		if (*q < '0' || *q > '9') {
			*p = q;
			return n ? n : -1;
		}
		if (*v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*q - '0');
		n++;
	}
	*p = end;
	return n ? n : -1;
}

/* A cost (docs/reports.md section 4): DIGITS, or DIGITS[.DIGITS] with a suffix k, K, M or G
 * (powers of 1000), DIGITS as scan_digits() reads them. Read exactly in integers (4.1M is
 * 4100000, not the 4099999.99... of a double), so a fraction may have no more digits than
 * the suffix has zeros. At most 2^63 - 1, so that a cost fits a JSON integer. */
static int parse_cost(const char *s, uint64_t *out)
{
	size_t n = strlen(s);
	int zeros = 0;
	switch (n ? s[n - 1] : '\0') {
	case 'k': case 'K': zeros = 3; break;
	case 'M': zeros = 6; break;
	case 'G': zeros = 9; break;
	}
	const char *p = s, *end = s + n - (zeros ? 1 : 0);
	uint64_t v = 0;
	int frac = 0;
	if (scan_digits(&p, end, &v) < 0)
		return -1;
	if (zeros && p < end && *p == '.') {
		p++;
		frac = scan_digits(&p, end, &v);
		if (frac < 0 || frac > zeros)
			return -1;
	}
	if (p != end)
		return -1;
	for (int z = zeros - frac; z > 0; z--) {
		if (v > UINT64_MAX / 10)
			return -1;
		v *= 10;
	}
	if (v > INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

/* The largest soft limit: the cost may grow 10001-fold. More has no use, and the product
 * with a baseline gets past what a cost can be (prof_check.c clamps it all the same). */
#define SOFT_MAX 1000000.0

/* A change in percent: an optional sign, decimal digits, optionally a point and more
 * digits, optionally '%' ("5%", "5", "+10%", "-2.5%"); more than -100, at most SOFT_MAX.
 * Checked before strtod() reads it, which alone would also take " 5", "0x10" (16), "1e3"
 * and "inf". */
static int parse_percent(const char *s, double *out)
{
	static const char digits[] = "0123456789";
	const char *p = s + (*s == '+' || *s == '-');
	size_t n = strspn(p, digits);
	if (!n)
		return -1;
	p += n;
	if (*p == '.') {
		n = strspn(++p, digits);
		if (!n)
			return -1;
		p += n;
	}
	if (strcmp(p, "%") && *p)
		return -1;
	char *end;
	double v = strtod(s, &end);
	if (end != p || !(v > -100 && v <= SOFT_MAX))
		return -1;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "on" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "off" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return *out = 1, 0;
		if (!strcmp(s, no[i]))
			return *out = 0, 0;
	}
	return -1;
}

/* libyaml keeps both values of a repeated key; a budget with two `hard:` is a mistake. P is
 * compared with the pairs before it only, and the callers check each key as they reach
 * it: the pairs before P are then known keys, all different, so this costs a dozen
 * comparisons, not the square of a mapping's size (100000 unknown keys took minutes). */
static int repeated_key(struct loader *l, const yaml_node_t *map, const yaml_node_pair_t *p)
{
	const char *k = scalar(yaml_document_get_node(&l->doc, p->key));
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; k && q < p; q++) {
		const char *k2 = scalar(yaml_document_get_node(&l->doc, q->key));
		if (k2 && !strcmp(k, k2)) {
			char msg[128];
			snprintf(msg, sizeof(msg), "'%.60s' is given twice", k);
			return fail_at(l, yaml_document_get_node(&l->doc, p->key), msg);
		}
	}
	return 0;
}

/* A `focus` value: a function's exact name, or a mapping of name or glob, object, file
 * (docs/reports.md section 4). Returns 0 with *OUT in the budget's arena, or -1. */
static int read_focus(struct loader *l, const yaml_node_t *v, const struct budget_focus **out)
{
	struct budget_focus *f = arena_alloc(&l->b->arena, sizeof(*f));
	*f = (struct budget_focus){ .at = mark_of(v) };
	*out = f;
	if (v->type == YAML_SCALAR_NODE)
		return get_str(l, v, "focus", &f->name);
	if (v->type != YAML_MAPPING_NODE)
		return fail_at(l, v, "'focus' takes a function's name, or a mapping with name or glob, "
			       "and object and file");
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(&l->doc, p->value);
		const char *k = scalar(kn);
		if (repeated_key(l, v, p) < 0)
			return -1;
		const char **slot = !k ? NULL : !strcmp(k, "name") ? &f->name : !strcmp(k, "glob") ? &f->glob
			: !strcmp(k, "object") ? &f->object : !strcmp(k, "file") ? &f->file : NULL;
		if (!slot) {
			char msg[160];
			snprintf(msg, sizeof(msg), "unknown key '%.60s' in a focus (expected: name, glob, object, file)",
				 k ? k : "?");
			return fail_at(l, kn, msg);
		}
		if (get_str(l, vn, k, slot) < 0)
			return -1;
	}
	if (!f->name == !f->glob)
		return fail_at(l, v, f->name ? "a focus takes name or glob, not both"
			       : "a focus needs name (exact) or glob (a pattern)");
	return 0;
}

/* One key of a limit's mapping. Returns 0, 1 for a key this kind does not have, -1. */
static int limit_key(struct loader *l, struct budget_limit *lim, const char *k, const yaml_node_t *v)
{
	const char *s = scalar(v);
	if (!strcmp(k, "event")) {
		lim->event_at = mark_of(v);
		return get_str(l, v, k, &lim->event);
	}
	if (!strcmp(k, "hard")) {
		if (!s || parse_cost(s, &lim->hard) < 0)
			return fail_at(l, v, "'hard' takes a cost: a whole number such as 2500000, 2_500_000 or 2.5M");
		lim->has_hard = 1;
		return 0;
	}
	if (!strcmp(k, "soft")) {
		if (!s || parse_percent(s, &lim->soft) < 0)
			return fail_at(l, v, "'soft' takes a change in percent above -100 and at most 1000000, "
				       "such as 5% or -2.5%");
		lim->has_soft = 1;
		return 0;
	}
	if (!strcmp(k, "focus")) {
		lim->own_focus = 1;
		return read_focus(l, v, &lim->focus);
	}
	if (lim->kind == BUDGET_TOTAL)
		return 1;
	if (!strcmp(k, "name"))
		return get_str(l, v, k, &lim->name);
	if (!strcmp(k, "glob"))
		return get_str(l, v, k, &lim->glob);
	if (!strcmp(k, "object"))
		return get_str(l, v, k, &lim->object);
	if (!strcmp(k, "file"))
		return get_str(l, v, k, &lim->file);
	if (!strcmp(k, "cost")) {
		lim->cost_at = mark_of(v);
		if (s && !strcmp(s, "self"))
			lim->cost = BUDGET_SELF;
		else if (s && !strcmp(s, "inclusive"))
			lim->cost = BUDGET_INCLUSIVE;
		else
			return fail_at(l, v, "'cost' takes self or inclusive");
		return 0;
	}
	if (!strcmp(k, "required")) {
		if (!s || parse_bool(s, &lim->required) < 0)
			return fail_at(l, v, "'required' takes true or false");
		return 0;
	}
	if (!strcmp(k, "sum")) {
		if (!s || parse_bool(s, &lim->sum) < 0)
			return fail_at(l, v, "'sum' takes true or false");
		return 0;
	}
	return 1;
}

static int read_limit(struct loader *l, const yaml_node_t *n, enum budget_kind kind)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(l, n, kind == BUDGET_TOTAL ? "a total limit is a mapping with event, focus, hard, soft"
			       : "a function limit is a mapping with name or glob, and hard or soft");
	XGROW(l->b->limits, l->cap, l->b->n + 1);
	struct budget_limit *lim = &l->b->limits[l->b->n];
	*lim = (struct budget_limit){ .kind = kind, .at = mark_of(n), .required = 1,
				      .event_at = l->b->event_at, .cost_at = mark_of(n), .focus = l->b->focus };
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(&l->doc, p->value);
		const char *k = scalar(kn);
		if (repeated_key(l, n, p) < 0)
			return -1;
		int rc = k ? limit_key(l, lim, k, vn) : 1;
		if (rc < 0)
			return -1;
		if (rc > 0) {
			char msg[192];   /* the longest: 60 bytes of the key and the function list */
			snprintf(msg, sizeof(msg), "unknown key '%.60s' in a %s limit (expected: %s)", k ? k : "?",
				 kind == BUDGET_TOTAL ? "total" : "function",
				 kind == BUDGET_TOTAL ? "event, focus, hard, soft"
				 : "name, glob, object, file, cost, event, focus, hard, soft, required, sum");
			return fail_at(l, kn, msg);
		}
	}
	if (kind == BUDGET_FUNCTION && !lim->name == !lim->glob)
		return fail_at(l, n, lim->name ? "a function limit takes name or glob, not both"
			       : "a function limit needs name (exact) or glob (a pattern)");
	if (!lim->has_hard && !lim->has_soft)
		return fail_at(l, n, "a limit needs hard (a cost) or soft (a change in percent against --baseline)");
	l->b->n++;
	return 0;
}

/* A mapping is one limit, a sequence several. */
static int read_limits(struct loader *l, const yaml_node_t *n, enum budget_kind kind)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return kind == BUDGET_TOTAL ? read_limit(l, n, kind)
			: fail_at(l, n, "'functions' takes a list of limits");
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
		if (read_limit(l, yaml_document_get_node(&l->doc, *i), kind) < 0)
			return -1;
	return 0;
}

static int read_top(struct loader *l, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE)
		return fail_at(l, root, "a budget file is a mapping with the keys version, event, focus, total, functions");
	const yaml_node_t *total = NULL, *functions = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(&l->doc, p->value);
		const char *k = scalar(kn);
		if (repeated_key(l, root, p) < 0)
			return -1;
		if (k && !strcmp(k, "version")) {
			const char *v = scalar(vn);
			if (!v || strcmp(v, "1"))
				return fail_at(l, vn, "this cgjit reads budget files of version 1");
		} else if (k && !strcmp(k, "event")) {
			l->b->event_at = mark_of(vn);
			if (get_str(l, vn, k, &l->b->event) < 0)
				return -1;
		} else if (k && !strcmp(k, "focus")) {
			if (read_focus(l, vn, &l->b->focus) < 0)
				return -1;
		} else if (k && !strcmp(k, "total")) {
			total = vn;
		} else if (k && !strcmp(k, "functions")) {
			functions = vn;
		} else {
			char msg[160];
			snprintf(msg, sizeof(msg), "unknown key '%.60s' (expected: version, event, focus, total, functions)",
				 k ? k : "?");
			return fail_at(l, kn, msg);
		}
	}
	/* limits read after `event:` and `focus:` so that they take them as their default */
	if (total && read_limits(l, total, BUDGET_TOTAL) < 0)
		return -1;
	if (functions && read_limits(l, functions, BUDGET_FUNCTION) < 0)
		return -1;
	if (!l->b->n)
		return fail_at(l, root, "the budget sets no limit: give 'total' or 'functions'");
	return 0;
}

static int read_file(struct budget *b, char **text, size_t *len, struct diag *d)
{
	struct input *in = input_open(b->path, d);
	if (!in)
		return -1;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		/* PROFILE and --budget swapped: say so rather than quote YAML's complaint */
		if (n >= 18 && !memcmp(buf, "# callgrind format", 18)) {
			input_close(in);
			free(buf);
			return diag_at(d, b->path, 0, "this is a callgrind profile, not a budget file: "
				       "cgjit check PROFILE --budget BUDGET.yaml");
		}
		if (n == cap) {
			if (n > BUDGET_MAX_BYTES) {
				input_close(in);
				free(buf);
				return diag_at(d, b->path, 0, "larger than %u bytes: not a budget file", BUDGET_MAX_BYTES);
			}
			/* one byte more than the bound, so that a file of exactly the bound is read whole */
			cap = cap * 2 > BUDGET_MAX_BYTES ? BUDGET_MAX_BYTES + 1 : cap * 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = input_read(in, buf + n, cap - n, d);
		if (r < 0) {
			input_close(in);
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	input_close(in);
	*text = buf;
	*len = n;
	return 0;
}

static int yaml_error(const yaml_parser_t *parser, const char *path, struct diag *d)
{
	const yaml_mark_t *m = parser->problem ? &parser->problem_mark : &parser->mark;
	return diag_at_col(d, path, m->line + 1, m->column + 1, "not valid YAML: %s%s%s",
			   parser->problem ? parser->problem : "cannot parse",
			   parser->context ? " " : "", parser->context ? parser->context : "");
}

static int refuse_at(const yaml_event_t *e, const char *path, const char *msg, struct diag *d)
{
	return diag_at_col(d, path, e->start_mark.line + 1, e->start_mark.column + 1, "%s", msg);
}

/* Bounds checked on libyaml's events before its loader builds the document:
 * - one document: the loader reads one per call, and a second one went unread, its limits
 *   (even its syntax errors) ignored. Refused where it starts, whatever it holds;
 * - BUDGET_MAX_DEPTH collections in collections (a budget needs 3): libyaml's scanner does
 *   work in proportion to the flow depth for every token (80 KB of '[' took 7 s, 1 MiB
 *   about 20 minutes). Block nesting is bounded with it, at no cost;
 * - BUDGET_MAX_ANCHORS anchors (a budget needs none): the loader compares each new anchor
 *   with every earlier one (1 MiB of anchors took 20 s).
 * The events come from libyaml's own parser, so quotes, comments and block scalars are
 * told from structure exactly as the loader tells them. The pass stops at the first
 * event past a bound, while the depth is still small, so its work stays linear.
 * Returns 0, or -1 with D set (also for a YAML error before that point). */
static int check_events(const char *path, const char *text, size_t len, struct diag *d)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	unsigned depth = 0, anchors = 0, documents = 0;
	int rc = 0, end = 0;
	char msg[128];
	while (!rc && !end) {
		yaml_event_t e;
		if (!yaml_parser_parse(&parser, &e)) {
			rc = yaml_error(&parser, path, d);
			break;
		}
		const yaml_char_t *anchor = NULL;
		switch (e.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1)
				rc = refuse_at(&e, path, "a budget file is one YAML document, and a second one "
					       "starts here", d);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			anchor = e.type == YAML_SEQUENCE_START_EVENT ? e.data.sequence_start.anchor
				 : e.data.mapping_start.anchor;
			if (++depth > BUDGET_MAX_DEPTH) {
				snprintf(msg, sizeof(msg), "nested deeper than %d levels of lists and mappings: "
					 "not a budget file", BUDGET_MAX_DEPTH);
				rc = refuse_at(&e, path, msg, d);
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SCALAR_EVENT:
			anchor = e.data.scalar.anchor;
			break;
		case YAML_STREAM_END_EVENT:
			end = 1;
			break;
		default:
			break;
		}
		if (!rc && anchor && ++anchors > BUDGET_MAX_ANCHORS) {
			snprintf(msg, sizeof(msg), "more than %d anchors (&name): not a budget file",
				 BUDGET_MAX_ANCHORS);
			rc = refuse_at(&e, path, msg, d);
		}
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&parser);
	return rc;
}

static int parse(struct budget *b, const char *text, size_t len, struct diag *d)
{
	const char *path = b->path;
	if (check_events(path, text, len, d) < 0)
		return -1;
	struct loader l = { .b = b, .d = d };
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = -1;
	if (!yaml_parser_load(&parser, &l.doc)) {
		yaml_error(&parser, path, d);
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&l.doc);
		if (!root)
			diag_at(d, path, 0, "empty: a budget file sets limits under 'total' or 'functions'");
		else
			rc = read_top(&l, root);
		yaml_document_delete(&l.doc);
	}
	yaml_parser_delete(&parser);
	return rc;
}

int budget_load(struct budget *b, const char *path, struct diag *d)
{
	*b = (struct budget){ 0 };
	b->path = xstrndup(path, strlen(path));
	char *text = NULL;
	size_t len = 0;
	if (read_file(b, &text, &len, d) < 0)
		return -1;
	int rc = parse(b, text, len, d);
	free(text);
	return rc;
}

int budget_parse(struct budget *b, const char *name, const char *text, size_t len,
		 struct diag *d)
{
	*b = (struct budget){ 0 };
	b->path = xstrndup(name, strlen(name));
	return parse(b, text, len, d);
}

void budget_free(struct budget *b)
{
	free(b->path);
	free(b->limits);
	arena_free(&b->arena);
	*b = (struct budget){ 0 };
}

int budget_has_focus(const struct budget *b)
{
	if (b->focus)
		return 1;
	for (size_t i = 0; i < b->n; i++)
		if (b->limits[i].focus)
			return 1;
	return 0;
}
