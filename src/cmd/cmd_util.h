/* cmd_util.h - what the subcommands share:
 * usage errors, number options, loading a profile and picking its event, each with the
 * message printed to stderr here (the front end's side of the library's struct diag). */
#ifndef CGJIT_CMD_UTIL_H
#define CGJIT_CMD_UTIL_H

struct pathmap;
struct prof_scope_opts;
struct prof_select;
struct profile;
struct profile_opts;
struct input;

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
/* profile_load(); prints the error. Returns 0, or -1 (P is then empty, freed or not).
 * While it reads, large blocks are mapped on their own, and the heap's free memory is
 * given back after (xalloc.h): a second profile's peak does not stand on the first's. */
int cmd_util_load(struct profile *p, const char *path, const struct profile_opts *o);
/* The same from IN, already open (not closed here). */
int cmd_util_load_input(struct profile *p, struct input *in, const struct profile_opts *o);
/* The index of event NAME in P (NULL: the first). Returns 0, or -1 after printing which
 * events P counts. */
int cmd_util_pick_event(const struct profile *p, const char *name, unsigned *ev);

/* The scope options of report, diff, check and flamegraph (docs/reports.md section 2.1):
 * WHICH 0 --focus ARG (an exact name, "name:NAME" or "glob:PATTERN"), 1 --focus-object,
 * 2 --focus-file, 3 --jit-only, into SEL (which keeps pointers to ARG) and O. Returns -1,
 * or 2 after printing a usage error. */
int cmd_util_scope_option(const char *usage, int which, const char *arg, struct prof_select *sel,
			  struct prof_scope_opts *o);
/* After the options: O->focus is SEL when --focus was given; --focus-object and
 * --focus-file without --focus are a usage error. Returns -1, or 2 after printing it. */
int cmd_util_scope_done(const char *usage, struct prof_select *sel, struct prof_scope_opts *o);
/* Replaces *P by P seen through O (prof_scope_make(), calls estimated for event EV); with
 * no focus and no --jit-only, leaves it. Returns -1, or 2 after printing why not (the focus
 * names no function, with the closest names; a cachegrind file), P untouched. */
int cmd_util_apply_scope(struct profile *p, const struct prof_scope_opts *o, unsigned ev);
/* Whether O's focus names a function of P. Returns -1, or 2 after printing why not. */
int cmd_util_check_focus(const struct profile *p, const struct prof_scope_opts *o);

#endif
