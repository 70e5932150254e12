/* record.c - `cgjit record`'s command line as pure functions (docs/record.md): split into
 * record's own options, valgrind's (passed through, but for the two record owns) and the
 * command; valgrind's argv from it and the plan (record_plan.c). Owns only
 * record_valgrind_argv()'s result. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "record/record.h"
#include "record/record_plan.h"

const char *record_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Valgrind options record must own: the tool, and where the profiles go (it collects
 * them there). Returns 0 or -1 with D set. */
static int check_vg_opt(const char *opt, struct diag *d)
{
	if (starts(opt, "--tool=") && strcmp(opt, "--tool=callgrind"))
		return diag_at(d, opt, 0, "record runs callgrind only (use valgrind directly for "
			       "other tools)");
	if (starts(opt, "--callgrind-out-file"))
		return diag_at(d, opt, 0, "record names the profiles callgrind.out.PID itself: use "
			       "-d DIR to choose their directory");
	return 0;
}

/* Where record_parse_args() is in its argv. */
struct args_pos {
	int argc;
	char **argv;
	int i;                             /* the argument being read */
};

/* An option of record's with a value: "--NAME VALUE", "--NAME=VALUE" or, with SHORT, "-X
 * VALUE" / "-XVALUE". 1 with *VAL (and P->i past it), 0 if P's argument is not it, -1 when
 * the value is missing. */
static int opt_value(struct args_pos *p, const char *name, const char *shrt, const char **val,
		     struct diag *d)
{
	const char *a = p->argv[p->i];
	size_t n = strlen(name);
	if (!strncmp(a, name, n) && a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (shrt && !strncmp(a, shrt, 2) && a[2]) {
		*val = a + 2;
		return 1;
	}
	if (strcmp(a, name) && (!shrt || strcmp(a, shrt)))
		return 0;
	if (p->i + 1 >= p->argc)
		return diag_at(d, a, 0, "needs a value");
	*val = p->argv[++p->i];
	return 1;
}

/* One of record's own options at P: 1 taken, 0 not record's, -1 bad. */
static int own_option(struct args_pos *p, struct record_args *a, struct diag *d)
{
	const char *arg = p->argv[p->i], *v;
	int r;
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
		return a->help = 1;
	if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet"))
		return a->quiet = 1;
	/* -v is record's: valgrind's banner is what most want back (valgrind's own -v is
	 * for debugging valgrind; run valgrind directly for that) */
	if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose"))
		return a->verbose = 1;
	if (!strcmp(arg, "--no-deterministic"))
		return a->no_deterministic = 1;
	if (!strcmp(arg, "--no-augment"))
		return a->no_augment = 1;
	if (!strcmp(arg, "--no-root"))
		return a->no_root = 1;
	if ((r = opt_value(p, "--root", NULL, &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!*v)
			return diag_at(d, "--root", 0, "'' is an empty directory name");
		a->root = v;
		return r;
	}
	if ((r = opt_value(p, "--out-dir", "-d", &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!*v)
			return diag_at(d, "--out-dir", 0, "'' is an empty directory name");
		a->out_dir = v;
		return r;
	}
	if ((r = opt_value(p, "--runtime", NULL, &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!record_runtime_known(v))
			return diag_at(d, "--runtime", 0, "unknown runtime '%s', expected one of %s", v,
				       record_runtime_names());
		a->runtime = v;
		return r;
	}
	if ((r = opt_value(p, "--symbols", NULL, &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!strcmp(v, "map"))
			a->symbols = RECORD_SYMBOLS_MAP;
		else if (!strcmp(v, "jitdump"))
			a->symbols = RECORD_SYMBOLS_JITDUMP;
		else
			return diag_at(d, "--symbols", 0, "expected 'map' or 'jitdump', got '%s'", v);
		return 1;
	}
	return 0;
}

int record_parse_args(int argc, char **argv, const char **vg_buf, struct record_args *a,
		      struct diag *d)
{
	memset(a, 0, sizeof(*a));
	a->vg_opts = vg_buf;
	struct args_pos p = { argc, argv, 1 };
	for (; p.i < argc; p.i++) {
		const char *arg = argv[p.i];
		if (!strcmp(arg, "--")) {
			p.i++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		int r = own_option(&p, a, d);
		if (r < 0)
			return -1;
		if (a->help)
			return 0;
		if (r == 0) {
			if (check_vg_opt(arg, d) < 0)
				return -1;
			vg_buf[a->nvg++] = arg;
		}
	}
	if (a->quiet && a->verbose)
		return diag_at(d, "-q", 0, "and -v ask for less and for more: give one");
	if (p.i >= argc)
		return diag_at(d, "record", 0, "no command to run: cgjit record [options] -- COMMAND ARGS...");
	if (argv[p.i][0] == '-')
		return diag_at(d, argv[p.i], 0, "is not a command: valgrind's options go before '--'");
	a->cmd = argv + p.i;
	a->ncmd = (size_t)(argc - p.i);
	return 0;
}

static char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char **record_valgrind_argv(const struct record_args *a, const struct record_plan *plan,
			    const char *out_dir)
{
	size_t nflags = 0;
	while (plan->flags[nflags])
		nflags++;
	char **v = xmalloc((6 + a->nvg + nflags + a->ncmd + 1) * sizeof(*v));
	size_t n = 0;
	v[n++] = xstrdup("valgrind");
	v[n++] = xstrdup("--tool=callgrind");
	/* Instruction positions: augment moves costs to the JIT function owning each address. */
	v[n++] = xstrdup("--dump-instr=yes");
	v[n++] = xstrdup("--trace-children=yes");
	char *out = xmalloc(strlen(out_dir) + 64);
	sprintf(out, "--callgrind-out-file=%s/callgrind.out.%%p", out_dir);
	v[n++] = out;
	/* valgrind's banner and per-process messages go with -q; its errors (a bad option, a
	 * crash, a file it cannot write) are printed all the same */
	if (!a->verbose)
		v[n++] = xstrdup("-q");
	/* After record's own: valgrind takes the last of a repeated option, so the user's win. */
	for (size_t i = 0; i < a->nvg; i++)
		v[n++] = xstrdup(a->vg_opts[i]);
	v[n++] = xstrdup(a->cmd[0]);
	for (size_t i = 0; i < nflags; i++)
		v[n++] = xstrdup(plan->flags[i]);
	for (size_t i = 1; i < a->ncmd; i++)
		v[n++] = xstrdup(a->cmd[i]);
	v[n] = NULL;
	return v;
}

void record_argv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}
