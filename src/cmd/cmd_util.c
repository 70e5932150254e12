/* cmd_util.c - the pieces the subcommands share: usage errors, number
 * options, loading a profile and picking its event, with their messages. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_util.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/pathmap.h"
#include "report/prof_scope.h"
#include "report/profile.h"

int cmd_util_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cgjit: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	const char *nl = strchr(usage, '\n');
	fprintf(stderr, "%.*s\n(--help describes every option)\n", (int)(nl - usage), usage);
	return 2;
}

int cmd_util_path_map(struct pathmap **pm, struct profile_opts *o, const char *usage,
		      const char *arg)
{
	if (!*pm)
		*pm = pathmap_new();
	o->paths = *pm;
	struct diag d = { 0 };
	return pathmap_add_arg(*pm, arg, &d) < 0 ? cmd_util_usage_error(usage, "%s", d.msg) : -1;
}

int cmd_util_option_error(const char *usage, int opt, char *const *argv)
{
	/* getopt_long leaves the offending word at optind - 1; optopt is the short option's
	 * letter, or a long option's val (not printable: 256 and up), or 0 */
	const char *word = argv[optind - 1];
	char shortname[3] = { '-', (char)optopt, '\0' };
	/* inside a bundle (-zq), optind stays on it until its last letter: the word before it
	 * is another argument */
	const char *cur = argv[optind];
	if (optopt > 0 && optopt < 256 && cur && cur[0] == '-' && cur[1] != '-' &&
	    strchr(cur + 1, optopt))
		word = cur;
	int is_long = !strncmp(word, "--", 2);
	const char *name = is_long || optopt <= 0 || optopt > 255 ? word : shortname;
	int len = (int)(is_long && strchr(word, '=') ? strchr(word, '=') - word : (long)strlen(name));
	if (opt == ':')
		return cmd_util_usage_error(usage, "option '%.*s' needs a value", len, name);
	if (is_long && strchr(word, '=') && optopt)
		return cmd_util_usage_error(usage, "option '%.*s' takes no value", len, name);
	return cmd_util_usage_error(usage, "unknown option '%.*s'", len, name);
}

int cmd_util_empty_output(const char *usage, const char *option)
{
	return cmd_util_usage_error(usage, "%s '' is an empty file name, expected a file to write",
				    option);
}

int cmd_util_parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Reads IN (or PATH when IN is NULL) into P, with the memory rules of the report commands. */
static int load(struct profile *p, const char *path, struct input *in, const struct profile_opts *o)
{
	struct diag d = { 0 };
	xalloc_map_large_blocks();
	if ((in ? profile_load_input(p, in, o, &d) : profile_load(p, path, o, &d)) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return -1;
	}
	xalloc_give_back();   /* the loader's tables, freed: not under the next profile's */
	return 0;
}

int cmd_util_load(struct profile *p, const char *path, const struct profile_opts *o)
{
	return load(p, path, NULL, o);
}

int cmd_util_load_input(struct profile *p, struct input *in, const struct profile_opts *o)
{
	return load(p, NULL, in, o);
}

int cmd_util_pick_event(const struct profile *p, const char *name, unsigned *ev)
{
	if (!name) {
		*ev = 0;
		return 0;
	}
	int e = profile_event(p, name);
	if (e < 0) {
		fprintf(stderr, "cgjit: %s: no event '%s' (it counts:", p->path, name);
		for (unsigned i = 0; i < p->nevents; i++)
			fprintf(stderr, " %s", p->events[i]);
		fputs(")\n", stderr);
		return -1;
	}
	*ev = (unsigned)e;
	return 0;
}

int cmd_util_scope_option(const char *usage, int which, const char *arg, struct prof_select *sel,
			  struct prof_scope_opts *o)
{
	static const char *const names[] = { "--focus", "--focus-object", "--focus-file" };
	if (which == 3) {
		o->jit_only = 1;
		return -1;
	}
	if (!*arg || ((!strncmp(arg, "glob:", 5) || !strncmp(arg, "name:", 5)) && !arg[5]))
		return cmd_util_usage_error(usage, "%s takes a %s, got '%s'", names[which],
					    which ? "pattern" : "function's name or glob:PATTERN", arg);
	if (which == 1) {
		sel->object = arg;
	} else if (which == 2) {
		sel->file = arg;
	} else if (!strncmp(arg, "glob:", 5)) {
		sel->glob = arg + 5;
		sel->name = NULL;
	} else {
		/* "name:" spells a name that itself starts with "glob:" or "name:" */
		sel->name = !strncmp(arg, "name:", 5) ? arg + 5 : arg;
		sel->glob = NULL;
	}
	return -1;
}

int cmd_util_scope_done(const char *usage, struct prof_select *sel, struct prof_scope_opts *o)
{
	if (!sel->name && !sel->glob && (sel->object || sel->file))
		return cmd_util_usage_error(usage, "%s narrows --focus, which is not given",
					    sel->object ? "--focus-object" : "--focus-file");
	o->focus = sel->name || sel->glob ? sel : NULL;
	return -1;
}

int cmd_util_apply_scope(struct profile *p, const struct prof_scope_opts *o, unsigned ev)
{
	if (!o->focus && !o->jit_only)
		return -1;
	struct profile out;
	struct diag d = { 0 };
	if (prof_scope_make(p, o, ev, &out, &d) < 0) {
		profile_free(&out);
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return 2;
	}
	profile_free(p);
	*p = out;
	return -1;
}

int cmd_util_check_focus(const struct profile *p, const struct prof_scope_opts *o)
{
	struct profile out;
	struct diag d = { 0 };
	/* the cheap test first: only a focus that names nothing, or a cachegrind file, fails */
	if (!p->cachegrind && prof_select_count(p, o->focus))
		return -1;
	if (prof_scope_make(p, o, 0, &out, &d) < 0)
		fprintf(stderr, "cgjit: %s\n", d.msg);
	profile_free(&out);
	return d.set ? 2 : -1;
}
