/* timeline_svg.h - `cgjit timeline --format svg`: the timeline document (timeline.h) as a
 * self-contained SVG chart drawn here: bars per time bucket for loads and bytes (and
 * moves), on a logarithmic scale; the warm-up point; the listed late loads as ticks; a
 * hover title on every bar and tick. No scripts, no external files. */
#ifndef CGJIT_TIMELINE_SVG_H
#define CGJIT_TIMELINE_SVG_H

#include <stdio.h>
#include <jansson.h>

/* Writes DOC (from timeline_build()) to F as an SVG document. */
void timeline_svg_render(const json_t *doc, FILE *f);

#endif
