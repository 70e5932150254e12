/* augment_stats_yaml.h - struct augment_stats as a YAML document (--stats FILE.yaml); with
 * budget.c, one of the two users of libyaml. */
#ifndef CGJIT_AUGMENT_STATS_YAML_H
#define CGJIT_AUGMENT_STATS_YAML_H

struct diag;
struct output;
struct augment_stats;

/* Writes R into OUT (not committed: the caller commits or aborts it). Returns 0, or -1 with
 * D set. */
int augment_stats_yaml_emit(const struct augment_stats *r, struct output *out, struct diag *d);
/* Writes R to PATH atomically ("-" = stdout). Returns 0, or -1 with D set. */
int augment_stats_yaml_write(const struct augment_stats *r, const char *path, struct diag *d);

#endif
