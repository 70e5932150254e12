/* fuzz_profile.c - libFuzzer target for the report commands' loader (profile_read.c,
 * profile.c) and the flame graph built on it (flamegraph.c): the input is a callgrind or
 * cachegrind file, read into the per-function model. Checked: an error is reported exactly
 * when the load fails, a loaded profile's totals are the sums of its functions' self
 * costs, and its flame graph's frames fit into their parents, their own costs add up to
 * the total, and no function is drawn wider than its self cost by a unit per frame
 * (docs/flamegraph.md section 1.4). */
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "report/flamegraph.h"
#include "fuzz.h"
#include "core/io.h"
#include "report/profile.h"

struct flame_check {
	const struct profile *p;
	uint64_t *drawn;              /* per function: its frames' own costs */
	size_t *frames;               /* per function: its frames with an own cost */
	uint64_t sum, kids[66], end[66];   /* per depth: children's widths, the last child's end */
};

static int flame_visit(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct flame_check *c = ctx;
	const struct flamegraph_frame *f = &stack[depth];
	if (leave) {
		FUZZ_CHECK(c->kids[depth + 1] + f->self == f->width);
		c->kids[depth + 1] = 0;
		return 0;
	}
	FUZZ_CHECK(depth <= 65);
	if (depth) {
		FUZZ_CHECK(f->x >= c->end[depth] && f->x >= stack[depth - 1].x);
		FUZZ_CHECK(f->x + f->width <= stack[depth - 1].x + stack[depth - 1].width);
		c->kids[depth] += f->width;
		c->end[depth] = f->x + f->width;
	}
	c->end[depth + 1] = f->x;
	c->sum += f->self;
	if (f->fn != FLAMEGRAPH_ROOT && f->fn != FLAMEGRAPH_ELIDED) {
		FUZZ_CHECK(f->fn < c->p->nfns);
		c->drawn[f->fn] += f->self;
		c->frames[f->fn] += f->self > 0;
	}
	return 0;
}

/* The flame graph of event 0 down to one cost unit, at most 64 frames deep and 2000 frames. */
static void check_flame(const struct profile *p)
{
	unsigned __int128 total = 0;
	if (p->negative)
		return;   /* cg_diff's signed costs: cgjit flamegraph refuses them */
	for (size_t i = 0; i < p->nfns; i++)
		total += profile_self(p, i)[0];
	if (total > UINT64_MAX)
		return;   /* the totals wrapped: widths mean nothing, but must not crash */
	struct flamegraph_opts fo = { 0, 0.0, 64, 2000, NULL, 0 };
	struct flamegraph *g = flamegraph_new(p, &fo);
	struct flame_check c = { p, calloc(p->nfns + 1, sizeof(uint64_t)), calloc(p->nfns + 1, sizeof(size_t)), 0, { 0 }, { 0 } };
	FUZZ_CHECK(flamegraph_walk(g, flame_visit, &c) == 0);
	FUZZ_CHECK(c.sum == p->totals[0]);
	for (size_t i = 0; i < p->nfns; i++)
		FUZZ_CHECK(c.drawn[i] <= profile_self(p, i)[0] || c.drawn[i] - profile_self(p, i)[0] < c.frames[i]);
	free(c.drawn);
	free(c.frames);
	flamegraph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in = input_open_mem(data, size, "fuzz.out");
	struct profile p;
	struct profile_opts o = { .max_line = 4096, .fold_recursion = size & 1 };
	struct diag d = { 0 };
	int rc = profile_load_input(&p, in, &o, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	struct prof_name name = { 0 };
	for (unsigned e = 0; rc == 0 && e < p.nevents; e++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < p.nfns; i++) {
			sum += profile_self(&p, i)[e];
			FUZZ_CHECK(profile_name(&p, i, &name) && name.len == profile_name_len(&p, i) &&
				   profile_obj(&p, i) && profile_file(&p, i));
			FUZZ_CHECK(p.cachegrind ? profile_incl(&p, i)[e] == profile_self(&p, i)[e] : 1);
		}
		FUZZ_CHECK(sum == p.totals[e]);
	}
	prof_name_free(&name);
	if (rc == 0 && p.nevents)
		check_flame(&p);
	profile_free(&p);
	input_close(in);
	return 0;
}
