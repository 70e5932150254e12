/* cmd_util.h - what the subcommands share:
 * usage errors, number options, loading a profile and picking its event, each with the
 * message printed to stderr here (the front end's side of the library's struct diag). */
#ifndef CGJIT_CMD_UTIL_H
#define CGJIT_CMD_UTIL_H

struct pathmap;
struct profile;
struct profile_opts;

/* Prints "cgjit: MESSAGE", USAGE's first line and a pointer to --help to stderr.
 * Returns 2, the usage exit status. */
int cmd_util_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The message for what getopt_long returned as OPT, ':' (an option without its value) or
 * '?' (an unknown option), naming the option as the user wrote it (without "=VALUE"),
 * and one usage line. The option string must start with ':'. Returns 2. */
int cmd_util_option_error(const char *usage, int opt, char *const *argv);
/* The usage error for an output option OPTION given '' (the shell's empty variable): one
 * message for every command that writes a file. Returns 2. */
int cmd_util_empty_output(const char *usage, const char *option);
/* A decimal number from 0 to MAX (no sign). Returns 0, or -1. */
int cmd_util_parse_count(const char *s, unsigned long long max, unsigned long long *out);
/* --path-map ARG for the profiles O loads: adds ARG to *PM (made on first use; the caller
 * frees it with pathmap_free()) and points O at it. Returns -1 to go on, or 2 after the
 * usage error (a malformed OLD=NEW). */
int cmd_util_path_map(struct pathmap **pm, struct profile_opts *o, const char *usage,
		      const char *arg);
/* profile_load(); prints the error. Returns 0, or -1 (P is then empty, freed or not). */
int cmd_util_load(struct profile *p, const char *path, const struct profile_opts *o);
/* The index of event NAME in P (NULL: the first). Returns 0, or -1 after printing which
 * events P counts. */
int cmd_util_pick_event(const struct profile *p, const char *name, unsigned *ev);

#endif
