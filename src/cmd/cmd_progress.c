/* cmd_progress.c - a progress line on stderr while augment reads a large profile. The
 * library reports positions through augment_opts.progress; printing stays here. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd_progress.h"

static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

int cmd_progress_init(struct cmd_progress *p, const char *name)
{
	*p = (struct cmd_progress){ .name = name, .min_size = 100u * 1000 * 1000 };
	/* the tests have no 100 MB profile at hand: they lower the threshold */
	const char *env = getenv("CGJIT_PROGRESS_MIN_BYTES");
	if (env && *env)
		p->min_size = strtoull(env, NULL, 10);
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->last = p->start;
	return isatty(STDERR_FILENO);
}

void cmd_progress_update(void *ctx, uint64_t done, uint64_t size)
{
	struct cmd_progress *p = ctx;
	if (size < p->min_size)
		return;
	if (done >= size) {
		cmd_progress_end(p);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->shown && seconds(&p->last, &now) < 0.25)
		return;
	p->last = now;
	double t = seconds(&p->start, &now), mb = 1e6;
	fprintf(stderr, "\rcgjit: reading %s: %.0f of %.0f MB (%.0f%%), %.0f MB/s\033[K", p->name,
		(double)done / mb, (double)size / mb, 100.0 * (double)done / (double)size,
		t > 0 ? (double)done / mb / t : 0.0);
	fflush(stderr);
	p->shown = 1;
}

void cmd_progress_end(struct cmd_progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = 0;
}
