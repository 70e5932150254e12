/* report.c - event bookkeeping for struct report. */
#include <stdio.h>
#include <string.h>

#include "report.h"

struct report_event *report_event(struct report *r, const char *name)
{
	for (unsigned i = 0; i < r->nevents; i++)
		if (strcmp(r->events[i].name, name) == 0)
			return &r->events[i];
	if (r->nevents == REPORT_MAX_EVENTS)
		return NULL;
	struct report_event *e = &r->events[r->nevents++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	return e;
}
