/* timeline_text.h - `cgjit timeline --format text`: the timeline document (timeline.h)
 * as aligned text, the way timeline_svg.h draws it as a chart. */
#ifndef CGJIT_TIMELINE_TEXT_H
#define CGJIT_TIMELINE_TEXT_H

#include <stdio.h>
#include <jansson.h>

/* Writes DOC (from timeline_build()) to F as aligned text: the head (dump, clock, notes,
 * warm-up), the buckets with '#' bars, the late loads, the recompiled and the moved
 * functions. */
void timeline_text_render(const json_t *doc, FILE *f);

#endif
