/* prof_names.h - for the unit tests that read profiles: a function's name as text
 * (profile_name()), without a buffer at every call; a function's fields in one view. */
#ifndef CGJIT_TEST_PROF_NAMES_H
#define CGJIT_TEST_PROF_NAMES_H

#include "report/profile.h"

/* The name of function I of P, in one of 8 static buffers used in turn: valid until the
 * eighth call after this one (enough for the assertions that compare a few names). */
static inline const char *fn_name(const struct profile *p, size_t i)
{
	static struct prof_name ring[8];
	static unsigned next;
	return profile_name(p, i, &ring[next++ % 8]);
}

/* Function I of P as the assertions read it: its object, file, costs and flags together
 * (the profile keeps them apart: struct prof_fn, profile_self(), profile_obj()). */
struct fn_view {
	const char *obj, *file;
	const uint64_t *self, *incl;
	uint64_t calls;
	unsigned jit, kind, self_calls, in_cycle;
};

/* The view of function I of P, in one of 8 static views used in turn, as fn_name(). */
static inline const struct fn_view *fn_view(const struct profile *p, size_t i)
{
	static struct fn_view ring[8];
	static unsigned next;
	struct fn_view *v = &ring[next++ % 8];
	const struct prof_fn *f = &p->fns[i];
	*v = (struct fn_view){ profile_obj(p, i), profile_file(p, i), profile_self(p, i),
			       profile_incl(p, i), f->calls, f->jit, f->kind, f->self_calls, f->in_cycle };
	return v;
}

#endif
