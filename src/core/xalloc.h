/* xalloc.h - allocation that never returns NULL.
 * Out of memory is the one condition the library does not report through struct diag:
 * it prints "cgjit: out of memory" and exits 1 (as git's xmalloc does), because every
 * caller would otherwise carry an error path that cannot be tested. exit() runs tempfiles.c's
 * atexit handler, which removes the temporary output files, so nothing is left behind.
 * Input sizes are bounded before anything is allocated (see README "Limits"), so this
 * means the machine is really out of memory. */
#ifndef CGJIT_XALLOC_H
#define CGJIT_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* XGROW(p, cap, need): grows the array P (capacity CAP, both lvalues) to hold at least NEED
 * items, doubling; type-safe where a void ** would hide a wrong pointer. */
#define XGROW(p, cap, need) \
	do { \
		if ((need) > (cap)) \
			(p) = xgrow_array((p), &(cap), (need), sizeof(*(p))); \
	} while (0)
void *xgrow_array(void *p, size_t *cap, size_t need, size_t elem);
char *xstrndup(const char *s, size_t n);
/* Test hook: from now on every single allocation of more than MAX bytes is treated as out
 * of memory (0: no limit). Set by cgjit from $CGJIT_TEST_ALLOC_LIMIT and by unit tests. */
void xalloc_limit(size_t max);
/* Every block of 256 KiB or more is mapped on its own, and returned to the system when
 * freed or moved by realloc() (glibc's M_MMAP_THRESHOLD; nothing elsewhere). glibc raises
 * that threshold each time such a block is freed, and the arrays that grow by doubling while
 * a profile is read then came from the heap, whose freed copies stayed resident: a diff of
 * two large profiles peaked 20 MB higher, augment 2.4 MB (docs/design.md, "Memory"). */
void xalloc_map_large_blocks(void);
/* Returns the free memory inside the heap to the system (glibc's malloc_trim(); nothing
 * elsewhere): after a phase that freed much, so that the next one's peak does not stand on
 * memory nobody uses (a report's first profile while the second is read). */
void xalloc_give_back(void);

#endif
