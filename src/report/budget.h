/* budget.h - the budget file of `cgjit check` (YAML, schema in docs/reports.md section 4):
 * limits on a profile's totals and on functions, absolute ("hard") or relative to a
 * baseline profile ("soft", in percent), per event. This module only reads the file; the
 * limits are applied by prof_check.c. */
#ifndef CGJIT_BUDGET_H
#define CGJIT_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

struct diag;

enum budget_kind { BUDGET_TOTAL, BUDGET_FUNCTION, };
enum budget_cost { BUDGET_SELF, BUDGET_INCLUSIVE, };

/* A place in the budget file, from 1, for messages about a limit read later. */
struct budget_mark {
	unsigned line, column;
};

/* The functions a limit's costs are taken under (docs/reports.md 2.1 and 4): exactly one
 * of NAME and GLOB, OBJECT and FILE optional, as a function limit names functions. */
struct budget_focus {
	struct budget_mark at;          /* the focus's value in the file */
	const char *name, *glob, *object, *file;
};

struct budget_limit {
	enum budget_kind kind;
	struct budget_mark at;          /* the limit's mapping */
	const char *event;              /* NULL: the file's `event`, else the profile's first */
	struct budget_mark event_at;    /* where EVENT (or the file's) was given */
	enum budget_cost cost;          /* functions only */
	struct budget_mark cost_at;
	const char *name;               /* exact function name, or NULL */
	const char *glob;               /* fnmatch(3) pattern on the name, or NULL */
	const char *object;             /* pattern on the object file's name (no directory), or NULL */
	const char *file;               /* pattern on the function's file, or NULL */
	int required;                   /* a function limit that matches nothing fails */
	int sum;                        /* the limit is on the sum over the matched functions
	                                   (e.g. every JIT tier of one JS function), not on each */
	int has_hard;
	uint64_t hard;                  /* the cost may be at most this */
	int has_soft;
	double soft;                    /* percent: at most the baseline's cost times 1 + SOFT/100 */
	const struct budget_focus *focus;   /* its own `focus`, else the file's, else NULL */
	int own_focus;                  /* FOCUS is the limit's own */
};

struct budget {
	char *path;
	const char *event;              /* the file's default event, or NULL */
	struct budget_mark event_at;
	const struct budget_focus *focus;   /* the file's `focus` (every limit's default), or NULL */
	size_t n;
	struct budget_limit *limits;    /* in file order: totals, then functions */
	struct arena arena;             /* every string above */
};

/* Reads the budget file PATH ("-" for stdin). Returns 0, or -1 with D set to
 * "PATH:LINE:COLUMN: ..." (a YAML syntax error, an unknown key, a value of the wrong
 * kind, a limit without hard or soft). B must be freed either way. */
int budget_load(struct budget *b, const char *path, struct diag *d);
/* The same from LEN bytes of TEXT, named NAME in messages. */
int budget_parse(struct budget *b, const char *name, const char *text, size_t len,
		 struct diag *d);
void budget_free(struct budget *b);
/* Whether a limit of B measures under a focus (its own or the file's). */
int budget_has_focus(const struct budget *b);

#endif
