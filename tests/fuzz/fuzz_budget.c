/* fuzz_budget.c - libFuzzer target for the budget file reader (budget.c over libyaml):
 * the input is a budget file. Checked: an error is reported exactly when reading fails,
 * with a location; a budget read has limits, each with a hard or soft limit and, for a
 * function limit, a name or a glob but not both. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "report/budget.h"
#include "core/diag.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct budget b;
	struct diag d = { 0 };
	int rc = budget_parse(&b, "fuzz.yaml", (const char *)data, size, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set && !strncmp(d.msg, "fuzz.yaml:", 10));
	FUZZ_CHECK(rc != 0 || b.n > 0);
	for (size_t i = 0; rc == 0 && i < b.n; i++) {
		const struct budget_limit *l = &b.limits[i];
		FUZZ_CHECK(l->has_hard || l->has_soft);
		FUZZ_CHECK(l->kind == BUDGET_TOTAL ? !l->name && !l->glob : !l->name != !l->glob);
		FUZZ_CHECK(!l->has_soft || (l->soft > -100 && l->soft <= 1000000));
		FUZZ_CHECK(l->at.line >= 1 && l->at.column >= 1);
	}
	budget_free(&b);
	return 0;
}
