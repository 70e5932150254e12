/* record_text.c - the lines `cgjit record` shows as it goes (docs/record.md 5): the progress
 * line of a run, cut to the terminal, and the one-line summary of an augmented profile.
 * Pure: writes into the caller's buffers. */
#include <inttypes.h>
#include <stdio.h>

#include "augment/augment_stats.h"
#include "record/record.h"
#include "record/record_text.h"

/* "12 B", "340 KB", "1.2 MB", "3.4 GB" (powers of 1000, as the augment progress line). */
static void size_text(uint64_t b, char *out, size_t outsz)
{
	if (b < 1000)
		snprintf(out, outsz, "%u B", (unsigned)b);
	else if (b < 1000 * 1000)
		snprintf(out, outsz, "%u KB", (unsigned)(b / 1000));
	else if (b < UINT64_C(1000) * 1000 * 1000)
		snprintf(out, outsz, "%.1f MB", (double)b / 1e6);
	else
		snprintf(out, outsz, "%.1f GB", (double)b / 1e9);
}

void record_progress_line(const struct record_progress *p, size_t width, char *out, size_t outsz)
{
	char line[512], sz[32];
	size_t n = (size_t)snprintf(line, sizeof(line), "cgjit: %u s under callgrind: %u process%s, "
				    "%u profile%s written", p->seconds, p->running,
				    p->running == 1 ? "" : "es", p->written, p->written == 1 ? "" : "s");
	for (unsigned i = 0; i < p->nfiles && i < 3 && n < sizeof(line); i++) {
		size_text(p->files[i].bytes, sz, sizeof(sz));
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s", i ? ", " : "; ",
				      p->files[i].name, sz);
	}
	if (p->nfiles > 3 && n < sizeof(line)) {
		size_text(p->bytes, sz, sizeof(sz));
		snprintf(line + n, sizeof(line) - n, " (%u files, %s in all)", p->nfiles, sz);
	}
	/* one column short of the width: a full line would wrap on some terminals */
	size_t max = width > 1 ? width - 1 : 0;
	snprintf(out, outsz, "%.*s", (int)(max < sizeof(line) ? max : sizeof(line)), line);
}

void record_summary_line(const struct augment_stats *r, char *out, size_t outsz)
{
	const struct augment_stats_event *e = r->nevents ? &r->events[0] : NULL;
	double jit = e && e->total ? 100.0 * (double)e->jit / (double)e->total : 0.0;
	double unknown = e && e->total ? 100.0 * (double)e->unknown / (double)e->total : 0.0;
	char elf[600] = "";
	if (r->elf_files)   /* beside the output: its name says enough */
		snprintf(elf, sizeof(elf), ", machine code in %s%s", record_base_name(r->elf_first),
			 r->elf_files > 1 ? " and more" : "");
	snprintf(out, outsz, "%s: %s %.2f%% JIT, %.2f%% unknown (%" PRIu64 " of %" PRIu64
		 " pseudo-functions named%s)", r->output, e ? e->name : "cost", jit, unknown,
		 r->resolved, r->pseudo_functions, elf);
}
