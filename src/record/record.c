/* record.c - the decisions of `cgjit record` as pure functions (docs/record.md): the
 * command line split, the runtime table (what each JIT needs to write a perf map or a
 * jitdump, and where it writes it), the CPython version rules, valgrind's argv. Runs
 * nothing itself (the CPython probe is the caller's); owns only record_valgrind_argv()'s
 * result. */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/augment_stats.h"
#include "core/diag.h"
#include "core/xalloc.h"
#include "record/record.h"

/* The flags are those of the COMMAND files in samples/, the commands that made this
 * repository's samples, except node's jitdump: --perf-prof without --perf-basic-prof (with
 * both, the map and the dump describe the same code twice). */
struct runtime {
	const char *name;
	const char *map_flags[16];      /* NULL-terminated; none: writes no map */
	const char *dump_flags[16];     /* NULL-terminated; none: writes no jitdump */
	const char *env[3];             /* the same for maps and dumps */
	enum record_where dump_where;   /* maps always go to /tmp */
	const char *map_made_by, *dump_made_by;
};

static const struct runtime runtimes[] = {
	{ "node", { "--perf-basic-prof" }, { "--perf-prof", "--interpreted-frames-native-stack" },
	  { NULL }, RECORD_IN_CWD, "--perf-basic-prof", "--perf-prof" },
	{ "java", { "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit" }, { NULL },
	  { NULL }, RECORD_IN_TMP, "-XX:+DumpPerfMapAtExit", NULL },
	/* python's flags depend on its version: plan_python() */
	{ "python", { "-X", "perf" }, { "-X", "perf_jit" }, { NULL }, RECORD_IN_TMP,
	  "-X perf", "-X perf_jit" },
	/* Under valgrind MoarVM compiles few frames unless specialisation blocks the
	 * interpreter (README "Making perf maps"). */
	{ "moar", { NULL }, { NULL }, { "MVM_JIT_PERF_MAP=1", "MVM_SPESH_BLOCKING=1" },
	  RECORD_IN_TMP, "MVM_JIT_PERF_MAP=1", NULL },
	{ "php", { "-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d",
		   "opcache.jit_buffer_size=32M", "-d", "opcache.jit_debug=0x10",
		   /* else opcache skips a script changed in the last 2 seconds */
		   "-d", "opcache.file_update_protection=0" },
	  { NULL }, { NULL }, RECORD_IN_TMP, "opcache.jit_debug=0x10", NULL },
	{ "mono", { "--jitmap" }, { NULL }, { NULL }, RECORD_IN_TMP, "--jitmap", NULL },
	{ "none", { NULL }, { NULL }, { NULL }, RECORD_IN_TMP, NULL, NULL },
};

/* Command basenames -> runtime (python's are matched by shape in record_runtime_of()). */
static const struct {
	const char *command, *runtime;
} aliases[] = {
	{ "node", "node" }, { "nodejs", "node" }, { "java", "java" },
	{ "rakudo", "moar" }, { "raku", "moar" }, { "perl6", "moar" }, { "moar", "moar" },
	{ "php", "php" }, { "mono", "mono" },
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads digits at *P (at most 4, so no overflow); 1 if there was one. */
static int read_small(const char **p, int *v)
{
	const char *s = *p;
	int n = 0, k = 0;
	for (; is_digit(*s) && k < 4; s++, k++)
		n = n * 10 + (*s - '0');
	if (!k)
		return 0;
	*v = n;
	*p = s;
	return 1;
}

/* "python", "python3", "python3.13", with a build suffix ("python3.13t", "python3.12d"):
 * 1 and the version it names (-1 where the name has none), or 0 when NAME is not CPython. */
static int python_name(const char *name, int *major, int *minor)
{
	*major = *minor = -1;
	if (strncmp(name, "python", 6))
		return 0;
	const char *p = name + 6;
	if (!*p)
		return 1;
	if (!read_small(&p, major) || (*p == '.' && (p++, !read_small(&p, minor))))
		return 0;
	while (*p >= 'a' && *p <= 'z')
		p++;
	return *p == '\0';
}

const char *record_runtime_of(const char *command)
{
	const char *b = base_name(command);
	int major, minor;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(b, aliases[i].command))
			return aliases[i].runtime;
	return python_name(b, &major, &minor) ? "python" : NULL;
}

const char *record_runtime_names(void)
{
	return "node, java, python, moar, php, mono, none";
}

int record_python_version(const char *text, int *major, int *minor)
{
	const char *p = text;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (strncmp(p, "Python ", 7))
		return -1;
	p += 7;
	if (!read_small(&p, major) || *p++ != '.' || !read_small(&p, minor))
		return -1;
	return 0;
}

static const struct runtime *find_runtime(const char *name)
{
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strcmp(name, runtimes[i].name))
			return &runtimes[i];
	return NULL;
}

static void copy_list(const char **dst, size_t max, const char *const *src, size_t srcmax)
{
	size_t n = 0;
	for (; n < srcmax && src[n] && n + 1 < max; n++)
		dst[n] = src[n];
	dst[n] = NULL;
}

/* CPython's version decides: -X perf came in 3.12, -X perf_jit (a jitdump) in 3.13. The
 * name says it (python3.13), or `COMMAND --version` does. */
static int python_version(const char *command, record_probe_fn probe, void *ctx,
			  struct record_plan *plan, struct diag *d)
{
	int major, minor;
	if (python_name(base_name(command), &major, &minor) && minor >= 0) {
		plan->py_major = major;
		plan->py_minor = minor;
		return 0;
	}
	char out[256];
	if (!probe || probe(ctx, command, out, sizeof(out)) < 0) {
		diag_at(d, command, 0, "could not run '%s --version' to learn the CPython version", command);
		return -2;
	}
	if (record_python_version(out, &plan->py_major, &plan->py_minor) < 0) {
		char q[80];
		diag_at(d, command, 0, "'%s --version' said '%s', expected 'Python 3.N...'", command,
			diag_quote(q, sizeof(q), out, strcspn(out, "\n")));
		return -1;
	}
	return 0;
}

/* Which of the runtime's files to ask for: SYMBOLS if it writes that, else an error. */
static int choose(const struct runtime *rt, enum record_symbols symbols, int has_dump,
		  struct record_plan *plan, struct diag *d)
{
	int has_map = rt->map_flags[0] || rt->env[0];
	if (symbols == RECORD_SYMBOLS_DEFAULT)
		symbols = has_dump ? RECORD_SYMBOLS_JITDUMP : RECORD_SYMBOLS_MAP;
	if ((symbols == RECORD_SYMBOLS_JITDUMP && !has_dump) ||
	    (symbols == RECORD_SYMBOLS_MAP && !has_map))
		return diag_at(d, "--symbols", 0, "%s writes no %s%s", rt->name,
			       symbols == RECORD_SYMBOLS_MAP ? "perf map" : "jitdump",
			       !strcmp(rt->name, "python") ? " before CPython 3.13" : "");
	plan->writes = symbols;
	if (symbols == RECORD_SYMBOLS_JITDUMP) {
		copy_list(plan->flags, sizeof(plan->flags) / sizeof(plan->flags[0]), rt->dump_flags, 16);
		plan->where = rt->dump_where;
		plan->made_by = rt->dump_made_by;
	} else {
		copy_list(plan->flags, sizeof(plan->flags) / sizeof(plan->flags[0]), rt->map_flags, 16);
		plan->where = RECORD_IN_TMP;
		plan->made_by = rt->map_made_by;
	}
	copy_list(plan->env, sizeof(plan->env) / sizeof(plan->env[0]), rt->env, 3);
	return 0;
}

/* ---- determinism (docs/record.md 1.1) ----
 * Settings that make a runtime's instruction counts the same from run to run, each with
 * the patterns (fnmatch()) of the command's own arguments, or environment entries, that
 * set the same thing: then the user's choice wins and nothing is added, so that nothing
 * contradicts it. Which settings, and the spreads measured with and without them, are in
 * docs/record.md; a setting that changes what is measured (beyond making it repeatable)
 * says so there. */
struct det_setting {
	const char *add[3];       /* words inserted after COMMAND, NULL-terminated; with ENV,
	                             ADD[0] is one NAME=VALUE */
	int env;
	const char *yours[6];     /* NULL-terminated */
	const char *needs;        /* a flag that must come first, unless it is there already */
};

/* V8 (node): flag names take '_' and '-' alike (V8 normalises them), and the last of a
 * repeated flag wins. --predictable turns off V8's concurrent compilers, sweeper and
 * marker and the memory reducer (timers), and implies a fixed --random-seed; --hash-seed
 * fixes the seed of V8's string hashes, random by default; --single-threaded turns off
 * V8's remaining background tasks. */
static const struct det_setting det_node[] = {
	{ .add = { "--single-threaded" }, .yours = { "--single-threaded", "--single-threaded=*",
						     "--no-single-threaded", "--nosingle-threaded" } },
	{ .add = { "--predictable" }, .yours = { "--predictable", "--predictable=*",
						 "--no-predictable", "--nopredictable" } },
	{ .add = { "--hash-seed=1" }, .yours = { "--hash-seed", "--hash-seed=*" } },
	{ .add = { "--random-seed=1" }, .yours = { "--random-seed", "--random-seed=*" } },
	{ .add = { NULL } },
};

/* HotSpot: -Xbatch compiles in the foreground (a background compilation ends at a time
 * that depends on the thread schedule, and with it how long the method runs
 * interpreted); the others stop timers and sizes that follow the wall clock or the
 * machine: the perf-data sampler, the guaranteed safepoint every second, the compiler and
 * GC threads added and removed as load changes. */
static const struct det_setting det_java[] = {
	{ .add = { "-Xbatch" }, .yours = { "-Xbatch", "-XX:[+-]BackgroundCompilation" } },
	{ .add = { "-XX:-UsePerfData" }, .yours = { "-XX:[+-]UsePerfData" } },
	{ .add = { "-XX:GuaranteedSafepointInterval=0" },
	  .yours = { "-XX:GuaranteedSafepointInterval=*" }, .needs = "-XX:+UnlockDiagnosticVMOptions" },
	{ .add = { "-XX:-UseDynamicNumberOfCompilerThreads" },
	  .yours = { "-XX:[+-]UseDynamicNumberOfCompilerThreads" } },
	{ .add = { "-XX:-UseDynamicNumberOfGCThreads" },
	  .yours = { "-XX:[+-]UseDynamicNumberOfGCThreads" } },
	{ .add = { NULL } },
};

/* CPython: str and bytes hashes are salted at random unless PYTHONHASHSEED is set; and a
 * run that writes the .pyc files of the program's modules makes the next run, which
 * reads them, cheaper. -E and -I ignore the environment, -R asks for the salt, -B writes
 * no .pyc: the user's choice. */
static const struct det_setting det_python[] = {
	{ .add = { "PYTHONHASHSEED=0" }, .env = 1,
	  .yours = { "PYTHONHASHSEED=*", "-E", "-I", "-R", "-[!-]*[EIR]*" } },
	{ .add = { "PYTHONDONTWRITEBYTECODE=1" }, .env = 1,
	  .yours = { "PYTHONDONTWRITEBYTECODE=*", "-B", "-E", "-I", "-[!-]*[BEI]*" } },
	{ .add = { NULL } },
};

/* PHP hashes are not salted and opcache's JIT counters count calls and loops, so PHP's
 * counts depend on the clock only through its timed caches: opcache looks at a script's
 * mtime again after opcache.revalidate_freq seconds (the CLI's cache lives no longer than
 * the process anyway), and the realpath cache forgets a path after realpath_cache_ttl
 * seconds, which a run under valgrind can outlast. Not measured: no php here. */
static const struct det_setting det_php[] = {
	{ .add = { "-d", "opcache.validate_timestamps=0" },
	  .yours = { "opcache.validate_timestamps=*", "-dopcache.validate_timestamps=*" } },
	{ .add = { "-d", "realpath_cache_ttl=86400" },
	  .yours = { "realpath_cache_ttl=*", "-drealpath_cache_ttl=*" } },
	{ .add = { NULL } },
};

static const struct {
	const char *runtime;
	const struct det_setting *settings;
	const char *opts_env[4];   /* variables whose words the runtime reads as options */
	int v8_names;
} det_table[] = {
	{ "node", det_node, { NULL }, 1 },
	{ "java", det_java, { "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS" }, 0 },
	{ "python", det_python, { NULL }, 0 },
	{ "php", det_php, { NULL }, 0 },
};

/* WORD (LEN bytes, not NUL-terminated) matches one of PATS, V8's '_' taken as '-' in a
 * flag's name when V8. */
static int det_matches(const char *word, size_t len, const char *const *pats, int v8)
{
	char w[256];
	if (len >= sizeof(w))
		return 0;   /* no flag of the table is that long */
	memcpy(w, word, len);
	w[len] = '\0';
	for (char *c = w; v8 && *c && *c != '='; c++)
		if (*c == '_')
			*c = '-';
	for (size_t i = 0; pats[i]; i++)
		if (!fnmatch(pats[i], w, 0))
			return 1;
	return 0;
}

/* The user's own setting for S: an argument, an environment entry, or an entry of an
 * options variable holding a matching word. Returns it, or NULL. */
static const char *det_yours(const struct det_setting *s, char *const *args,
			     const char *const *envp, const char *const *opts_env, int v8)
{
	for (size_t i = 0; args[i]; i++)
		if (det_matches(args[i], strlen(args[i]), s->yours, v8))
			return args[i];
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *e = envp[i], *eq = strchr(e, '=');
		if (!eq)
			continue;
		if (s->env && det_matches(e, strlen(e), s->yours, 0))
			return e;
		for (size_t k = 0; opts_env[k]; k++) {
			if ((size_t)(eq - e) != strlen(opts_env[k]) || strncmp(e, opts_env[k], (size_t)(eq - e)))
				continue;
			for (const char *w = eq + 1; *w; ) {
				size_t n = strcspn(w, " \t\n");
				if (n && det_matches(w, n, s->yours, v8))
					return e;
				w += n;
				w += strspn(w, " \t\n");
			}
		}
	}
	return NULL;
}

static size_t list_len(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

static int list_has(const char *const *v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* Adds the runtime's determinism settings to PLAN, but none that ARGS or ENVP set. */
static void plan_determinism(struct record_plan *plan, char *const *args, const char *const *envp)
{
	size_t t = 0, nt = sizeof(det_table) / sizeof(det_table[0]);
	while (t < nt && strcmp(det_table[t].runtime, plan->runtime))
		t++;
	if (t == nt)
		return;
	const size_t maxf = sizeof(plan->flags) / sizeof(plan->flags[0]) - 1,
		     maxe = sizeof(plan->env) / sizeof(plan->env[0]) - 1,
		     maxd = sizeof(plan->det) / sizeof(plan->det[0]) - 1,
		     maxy = sizeof(plan->det_yours) / sizeof(plan->det_yours[0]) - 1;
	size_t nf = list_len(plan->flags), ne = list_len(plan->env), nd = 0, ny = 0;
	for (const struct det_setting *s = det_table[t].settings; s->add[0]; s++) {
		const char *own = det_yours(s, args, envp, det_table[t].opts_env, det_table[t].v8_names);
		if (own) {
			if (ny < maxy && !list_has(plan->det_yours, own))
				plan->det_yours[ny++] = own;
			continue;
		}
		if (s->env) {
			if (ne < maxe && nd < maxd)
				plan->env[ne++] = plan->det[nd++] = s->add[0];
			continue;
		}
		/* (-XX:+UnlockDiagnosticVMOptions is there already when java writes a map) */
		if (s->needs && !list_has(plan->flags, s->needs) && nf < maxf && nd < maxd)
			plan->flags[nf++] = plan->det[nd++] = s->needs;
		for (size_t k = 0; s->add[k]; k++)
			if (nf < maxf && nd < maxd)
				plan->flags[nf++] = plan->det[nd++] = s->add[k];
	}
}

int record_plan_make(const struct record_args *a, const char *const *envp,
		     const char *jvmti_agent, record_probe_fn probe, void *ctx,
		     struct record_plan *plan, struct diag *d)
{
	memset(plan, 0, sizeof(*plan));
	const char *command = a->cmd[0];
	const char *name = a->runtime ? a->runtime : record_runtime_of(command);
	if (!name)
		return diag_at(d, command, 0, "cannot tell which JIT runtime '%s' is: name it with "
			       "--runtime NAME (%s; none adds no flags)", base_name(command),
			       record_runtime_names());
	const struct runtime *rt = find_runtime(name);
	if (!rt)
		return diag_at(d, "--runtime", 0, "unknown runtime '%s', expected one of %s", name,
			       record_runtime_names());
	plan->runtime = rt->name;
	plan->deterministic = !a->no_deterministic;
	if (rt == find_runtime("none"))
		return 0;
	int has_dump = rt->dump_flags[0] != NULL;
	if (!strcmp(rt->name, "python")) {
		int rc = python_version(command, probe, ctx, plan, d);
		if (rc < 0)
			return rc;
		if (plan->py_major < 3 || (plan->py_major == 3 && plan->py_minor < 12))
			return diag_at(d, command, 0, "CPython %d.%d cannot write a perf map: -X perf "
				       "needs 3.12 or later (-X perf_jit, a jitdump, 3.13)",
				       plan->py_major, plan->py_minor);
		has_dump = plan->py_major > 3 || plan->py_minor >= 13;
	}
	int java = !strcmp(rt->name, "java");
	if (java && a->symbols == RECORD_SYMBOLS_JITDUMP && !jvmti_agent)
		return diag_at(d, "--symbols", 0, "java writes a jitdump only with cgjit's JVMTI "
			       "agent, libcgjit-jvmti.so, which was not found (make builds it when a "
			       "JDK is installed; or set CGJIT_JVMTI_AGENT)");
	if (java && jvmti_agent)
		has_dump = 1;
	if (choose(rt, a->symbols, has_dump, plan, d) < 0)
		return -1;
	if (java && plan->writes == RECORD_SYMBOLS_JITDUMP) {
		/* dir=. over $JITDUMPDIR, which the agent would use too: record collects
		 * ./jit-PID.dump (docs/jvmti.md) */
		if ((size_t)snprintf(plan->agent_flag, sizeof(plan->agent_flag), "-agentpath:%s=dir=.",
				     jvmti_agent) >= sizeof(plan->agent_flag))
			return diag_at(d, jvmti_agent, 0, "the agent's path is too long");
		plan->flags[0] = plan->agent_flag;
		plan->flags[1] = NULL;
		plan->where = RECORD_IN_CWD;
		plan->made_by = "cgjit's JVMTI agent (-agentpath:libcgjit-jvmti.so)";
	}
	if (plan->deterministic)
		plan_determinism(plan, a->cmd + 1, envp);
	return 0;
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

/* An option of record's with a value: "--NAME VALUE", "--NAME=VALUE" or, with SHORT, "-X
 * VALUE" / "-XVALUE". 1 with *VAL (and *I past it), 0 if ARGV[*I] is not it, -1 when the
 * value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char *shrt,
		     const char **val, struct diag *d)
{
	const char *a = argv[*i];
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
	if (*i + 1 >= argc)
		return diag_at(d, a, 0, "needs a value");
	*val = argv[++*i];
	return 1;
}

/* One of record's own options at ARGV[*I]: 1 taken, 0 not record's, -1 bad. */
static int own_option(int argc, char **argv, int *i, struct record_args *a, struct diag *d)
{
	const char *arg = argv[*i], *v;
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
	if ((r = opt_value(argc, argv, i, "--root", NULL, &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!*v)
			return diag_at(d, "--root", 0, "'' is an empty directory name");
		a->root = v;
		return r;
	}
	if ((r = opt_value(argc, argv, i, "--out-dir", "-d", &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!*v)
			return diag_at(d, "--out-dir", 0, "'' is an empty directory name");
		a->out_dir = v;
		return r;
	}
	if ((r = opt_value(argc, argv, i, "--runtime", NULL, &v, d)) != 0) {
		if (r < 0)
			return r;
		if (!find_runtime(v))
			return diag_at(d, "--runtime", 0, "unknown runtime '%s', expected one of %s", v,
				       record_runtime_names());
		a->runtime = v;
		return r;
	}
	if ((r = opt_value(argc, argv, i, "--symbols", NULL, &v, d)) != 0) {
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
	int i = 1;
	for (; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		int r = own_option(argc, argv, &i, a, d);
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
	if (i >= argc)
		return diag_at(d, "record", 0, "no command to run: cgjit record [options] -- COMMAND ARGS...");
	if (argv[i][0] == '-')
		return diag_at(d, argv[i], 0, "is not a command: valgrind's options go before '--'");
	a->cmd = argv + i;
	a->ncmd = (size_t)(argc - i);
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

/* ---- shims ---- */

/* The file name in the word W of *N bytes: what follows its last '/'; *N becomes its length. */
static const char *word_base(const char *w, size_t *n)
{
	for (size_t i = *n; i > 0; i--)
		if (w[i - 1] == '/') {
			*n -= i;
			return w + i;
		}
	return w;
}

/* The program a #! line runs: "bash" for "/usr/bin/env bash" or "/bin/bash -e". */
static void interp_program(const char *interp, char *out, size_t outsz)
{
	size_t n = strcspn(interp, " \t");
	const char *word = word_base(interp, &n);
	if (n == 3 && !strncmp(word, "env", 3)) {
		/* env's first word that is neither an option nor an assignment */
		const char *p = interp + strcspn(interp, " \t");
		for (;;) {
			p += strspn(p, " \t");
			size_t k = strcspn(p, " \t");
			if (!k || (p[0] != '-' && !memchr(p, '=', k))) {
				n = k;
				word = word_base(p, &n);
				break;
			}
			p += k;
		}
	}
	snprintf(out, outsz, "%.*s", (int)n, word);
}

/* The version manager that owns a shims directory: the directory above it, without a
 * leading dot (~/.pyenv/shims -> pyenv, ~/.local/share/mise/shims -> mise). "" when PATH
 * is not in a directory named shims. */
static void shim_manager(const char *path, char *out, size_t outsz)
{
	out[0] = '\0';
	const char *end = strrchr(path, '/');
	if (!end || end - path < 6 || strncmp(end - 6, "/shims", 6))
		return;
	const char *dir_end = end - 6, *dir = dir_end;
	while (dir > path && dir[-1] != '/')
		dir--;
	if (*dir == '.')
		dir++;
	if (dir < dir_end)
		snprintf(out, outsz, "%.*s", (int)(dir_end - dir), dir);
}

int record_shim_check(const struct record_args *a, const char *path, const char *real,
		      const char *head, size_t len, struct record_shim *s, struct diag *d)
{
	memset(s, 0, sizeof(*s));
	const char *rt = record_runtime_of(a->cmd[0]);
	if (a->runtime || !rt)
		return 0;
	const char *name = base_name(a->cmd[0]);
	if (!strcmp(base_name(real), "volta-shim")) {
		snprintf(s->manager, sizeof(s->manager), "volta");
		return diag_at(d, a->cmd[0], 0, "is volta's shim (%s, a link to %s), not %s itself: "
			       "valgrind would profile the shim too; give the program itself, "
			       "\"$(volta which %s)\", or --runtime %s to record through the shim anyway",
			       path, real, rt, name, rt);
	}
	if (len < 2 || head[0] != '#' || head[1] != '!')
		return 0;
	size_t n = 2;
	while (n < len && head[n] != '\n' && head[n] != '\r')
		n++;
	const char *in = head + 2;
	size_t inlen = n - 2;
	while (inlen && (*in == ' ' || *in == '\t'))
		in++, inlen--;
	while (inlen && (in[inlen - 1] == ' ' || in[inlen - 1] == '\t'))
		inlen--;
	char q[sizeof(s->interp)], prog[64];
	snprintf(s->interp, sizeof(s->interp), "%s", diag_quote(q, sizeof(q), in, inlen));
	interp_program(s->interp, prog, sizeof(prog));
	shim_manager(path, s->manager, sizeof(s->manager));
	if (s->manager[0])
		return diag_at(d, a->cmd[0], 0, "is a %s shim (%s, a %s script), not %s itself: "
			       "valgrind would profile %s and %s too, a profile for each process, and "
			       "their counts would vary with the shim's work; give the program itself, "
			       "\"$(%s which %s)\", or --runtime %s to record through the shim anyway",
			       s->manager, path, prog, rt, prog, s->manager, s->manager, name, rt);
	return diag_at(d, a->cmd[0], 0, "is a script (%s, run by %s), not %s itself: valgrind "
		       "would profile %s and every process it starts; give the program the script "
		       "runs, or --runtime %s to record through the script anyway", path, prog, rt,
		       prog, rt);
}

/* ---- what is shown ---- */

/* "12 B", "340 KB", "1.2 MB", "3.4 GB" (powers of 1000, as the augment progress line). */
static void size_text(uint64_t b, char *out, size_t outsz)
{
	if (b < 1000)
		snprintf(out, outsz, "%u B", (unsigned)b);
	else if (b < 1000 * 1000)
		snprintf(out, outsz, "%u KB", (unsigned)(b / 1000));
	else if (b < UINT64_C(1000) * 1000 * 1000)
		snprintf(out, outsz, "%.1f MB", (double)b / 1e6);
	else
		snprintf(out, outsz, "%.1f GB", (double)b / 1e9);
}

void record_progress_line(const struct record_progress *p, size_t width, char *out, size_t outsz)
{
	char line[512], sz[32];
	size_t n = (size_t)snprintf(line, sizeof(line), "cgjit: %u s under callgrind: %u process%s, "
				    "%u profile%s written", p->seconds, p->running,
				    p->running == 1 ? "" : "es", p->written, p->written == 1 ? "" : "s");
	for (unsigned i = 0; i < p->nfiles && i < 3 && n < sizeof(line); i++) {
		size_text(p->files[i].bytes, sz, sizeof(sz));
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s", i ? ", " : "; ",
				      p->files[i].name, sz);
	}
	if (p->nfiles > 3 && n < sizeof(line)) {
		size_text(p->bytes, sz, sizeof(sz));
		snprintf(line + n, sizeof(line) - n, " (%u files, %s in all)", p->nfiles, sz);
	}
	/* one column short of the width: a full line would wrap on some terminals */
	size_t max = width > 1 ? width - 1 : 0;
	snprintf(out, outsz, "%.*s", (int)(max < sizeof(line) ? max : sizeof(line)), line);
}

void record_summary_line(const struct augment_stats *r, char *out, size_t outsz)
{
	const struct augment_stats_event *e = r->nevents ? &r->events[0] : NULL;
	double jit = e && e->total ? 100.0 * (double)e->jit / (double)e->total : 0.0;
	double unknown = e && e->total ? 100.0 * (double)e->unknown / (double)e->total : 0.0;
	char elf[600] = "";
	if (r->elf_files)   /* beside the output: its name says enough */
		snprintf(elf, sizeof(elf), ", machine code in %s%s", base_name(r->elf_first),
			 r->elf_files > 1 ? " and more" : "");
	snprintf(out, outsz, "%s: %s %.2f%% JIT, %.2f%% unknown (%" PRIu64 " of %" PRIu64
		 " pseudo-functions named%s)", r->output, e ? e->name : "cost", jit, unknown,
		 r->resolved, r->pseudo_functions, elf);
}
