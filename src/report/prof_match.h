/* prof_match.h - which function of one profile is which of another (diff, check against a
 * baseline, the flame graph's comparison colours). */
#ifndef CGJIT_PROF_MATCH_H
#define CGJIT_PROF_MATCH_H

#include <stddef.h>

struct profile;

/* Matches the functions of NEW to those of BASE: by object file name without its directory
 * (a JIT object's pid left out), file and name; then JIT functions left over by name alone,
 * where the name is unique among them on both sides (a run named from a perf map against
 * one named from a jitdump). Each BASE function matches at most one; where two functions of
 * one side have one key, the first matches. Returns a malloc'd array of NEW->nfns entries:
 * the index in BASE, or SIZE_MAX for a function only in NEW. */
size_t *prof_match(const struct profile *base, const struct profile *new_);

#endif
