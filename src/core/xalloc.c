/* xalloc.c - allocation wrappers; the only place that handles out-of-memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

static size_t limit;   /* xalloc_limit(); 0: none */

void xalloc_limit(size_t max)
{
	limit = max;
}

/* exit(), not _exit(): tempfiles.c's atexit handler removes the temporary output files. */
static void oom(void)
{
	fputs("cgjit: out of memory\n", stderr);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = limit && n > limit ? NULL : malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = limit && size && n > limit / size ? NULL : calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = limit && n > limit ? NULL : realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xgrow_array(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			oom();
		n *= 2;
	}
	p = xrealloc(p, n * elem);
	*cap = n;
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void xalloc_map_large_blocks(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

void xalloc_give_back(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
