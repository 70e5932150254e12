/* report_yaml.h - struct report as a YAML document (--stats FILE.yaml); the only user of
 * libyaml. */
#ifndef CGJIT_REPORT_YAML_H
#define CGJIT_REPORT_YAML_H

struct diag;
struct output;
struct report;

/* Writes R into OUT (not committed: the caller commits or aborts it). Returns 0, or -1 with
 * D set. */
int report_yaml_emit(const struct report *r, struct output *out, struct diag *d);
/* Writes R to PATH atomically ("-" = stdout). Returns 0, or -1 with D set. */
int report_yaml_write(const struct report *r, const char *path, struct diag *d);

#endif
