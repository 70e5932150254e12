/* augment_stats.c - event bookkeeping for struct augment_stats. */
#include <stdio.h>
#include <string.h>

#include "augment/augment_stats.h"

struct augment_stats_event *augment_stats_event(struct augment_stats *r, const char *name)
{
	for (unsigned i = 0; i < r->nevents; i++)
		if (strcmp(r->events[i].name, name) == 0)
			return &r->events[i];
	if (r->nevents == AUGMENT_STATS_MAX_EVENTS)
		return NULL;
	struct augment_stats_event *e = &r->events[r->nevents++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	return e;
}
