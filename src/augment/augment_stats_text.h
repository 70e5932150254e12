/* augment_stats_text.h - the one-screen summary of an augment run (stderr). */
#ifndef CGJIT_AUGMENT_STATS_TEXT_H
#define CGJIT_AUGMENT_STATS_TEXT_H

#include <stdio.h>

struct augment_stats;

void augment_stats_text_write(const struct augment_stats *r, FILE *f);

#endif
