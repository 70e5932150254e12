/* record_det.c - the determinism settings of `cgjit record` (docs/record.md 1.1): per
 * runtime, the flags or environment entries that make its instruction counts repeatable,
 * and the patterns of the user's own settings that stand in for each. Adds them to a plan
 * (record_plan.c); pure, owns nothing (a plan points into the static tables and the
 * caller's command line and environment). */
#include <fnmatch.h>
#include <string.h>

#include "record/record_det.h"
#include "record/record_plan.h"

/* Settings that make a runtime's instruction counts the same from run to run, each with
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

void record_det_add(struct record_plan *plan, char *const *args, const char *const *envp)
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
