/* cmd_progress.h - the one-line progress indicator of long reads: on a terminal only, for
 * inputs of 100 MB and more, never with -q (the caller decides that). */
#ifndef CGJIT_CMD_PROGRESS_H
#define CGJIT_CMD_PROGRESS_H

#include <stdint.h>
#include <time.h>

struct cmd_progress {
	const char *name;
	int shown;               /* a line is on the terminal and must be cleared */
	struct timespec start, last;
	uint64_t min_size;       /* inputs smaller than this get no line */
};

/* Sets P up for reading NAME. Returns 1 if stderr is a terminal (a line may be shown),
 * else 0 (then do not call cmd_progress_update). */
int cmd_progress_init(struct cmd_progress *p, const char *name);
/* augment_opts.progress: redraws the line at most 4 times a second ("cgjit: reading NAME:
 * 120 of 303 MB (39%), 410 MB/s"), and clears it when DONE == SIZE. CTX is the struct. */
void cmd_progress_update(void *ctx, uint64_t done, uint64_t size);
/* Clears a line left on the terminal (an error ended the read). */
void cmd_progress_end(struct cmd_progress *p);

#endif
