/* report_text.h - the one-screen summary of an augment run (stderr). */
#ifndef CGJIT_REPORT_TEXT_H
#define CGJIT_REPORT_TEXT_H

#include <stdio.h>

struct report;

void report_text_write(const struct report *r, FILE *f);

#endif
