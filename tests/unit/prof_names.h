/* prof_names.h - for the unit tests that read profiles: a function's name as text
 * (profile_name()), without a buffer at every call. */
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

#endif
