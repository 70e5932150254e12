/* record_plan.c - the runtime table of `cgjit record` (docs/record.md 1): which runtime a
 * command names, what each needs to write a perf map or a jitdump and where it writes it,
 * the CPython version rules; record_plan_make() puts them together with the determinism
 * settings (record_det.c). Pure: the CPython probe is the caller's. Owns nothing: a plan's
 * strings are static or the caller's. */
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "record/record.h"
#include "record/record_det.h"
#include "record/record_plan.h"

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
	/* python's flags depend on its version: python_version() */
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
	/* Stock LuaJIT writes neither: cgjit's agent (docs/luajit.md) writes the jitdump, its
	 * flags are made in record_plan_make(); dir=. over $JITDUMPDIR, as for java. */
	{ "luajit", { NULL }, { "-e" }, { "CGJIT_LUAJIT=dir=." }, RECORD_IN_CWD, NULL,
	  "cgjit's LuaJIT agent (cgjit_luajit.lua)" },
	{ "none", { NULL }, { NULL }, { NULL }, RECORD_IN_TMP, NULL, NULL },
};

/* Command basenames -> runtime (python's are matched by shape in record_runtime_of()). */
static const struct {
	const char *command, *runtime;
} aliases[] = {
	{ "node", "node" }, { "nodejs", "node" }, { "java", "java" },
	{ "rakudo", "moar" }, { "raku", "moar" }, { "perl6", "moar" }, { "moar", "moar" },
	{ "php", "php" }, { "mono", "mono" }, { "luajit", "luajit" },
};

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
	const char *b = record_base_name(command);
	int major, minor;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(b, aliases[i].command))
			return aliases[i].runtime;
	if (!strncmp(b, "luajit-", 7))   /* Debian's luajit-2.1.0-beta3, the link's target */
		return "luajit";
	return python_name(b, &major, &minor) ? "python" : NULL;
}

const char *record_runtime_names(void)
{
	return "node, java, python, moar, php, mono, luajit, none";
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

int record_runtime_known(const char *name)
{
	return find_runtime(name) != NULL;
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
static int python_version(const char *command, const struct record_plan_env *env,
			  struct record_plan *plan, struct diag *d)
{
	int major, minor;
	if (python_name(record_base_name(command), &major, &minor) && minor >= 0) {
		plan->py_major = major;
		plan->py_minor = minor;
		return 0;
	}
	char out[256];
	if (!env->probe || env->probe(env->probe_ctx, command, out, sizeof(out)) < 0) {
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

/* luajit -e 'dofile[==[AGENT]==]' ARGS: the agent runs before the script, whatever
 * LUA_INIT and LUA_PATH say (docs/luajit.md). */
static int luajit_flags(const char *agent, struct record_plan *plan, struct diag *d)
{
	if (strstr(agent, "]==]") || strchr(agent, '\n'))
		return diag_at(d, agent, 0, "the LuaJIT agent's path cannot be quoted for luajit -e");
	if ((size_t)snprintf(plan->agent_flag, sizeof(plan->agent_flag), "dofile[==[%s]==]",
			     agent) >= sizeof(plan->agent_flag))
		return diag_at(d, agent, 0, "the agent's path is too long");
	plan->flags[0] = "-e";
	plan->flags[1] = plan->agent_flag;
	plan->flags[2] = NULL;
	return 0;
}

int record_plan_make(const struct record_args *a, const struct record_plan_env *env,
		     struct record_plan *plan, struct diag *d)
{
	const char *jvmti_agent = env->jvmti_agent;
	memset(plan, 0, sizeof(*plan));
	const char *command = a->cmd[0];
	const char *name = a->runtime ? a->runtime : record_runtime_of(command);
	if (!name)
		return diag_at(d, command, 0, "cannot tell which JIT runtime '%s' is: name it with "
			       "--runtime NAME (%s; none adds no flags)", record_base_name(command),
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
		int rc = python_version(command, env, plan, d);
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
	int luajit = !strcmp(rt->name, "luajit");
	if (luajit && !env->luajit_agent)
		return diag_at(d, command, 0, "LuaJIT writes no perf map or jitdump by itself, and "
			       "cgjit's LuaJIT agent, cgjit_luajit.lua, was not found (make puts it "
			       "beside cgjit, make install into lib/cgjit; or set CGJIT_LUAJIT_AGENT)");
	if (luajit && a->symbols == RECORD_SYMBOLS_MAP)
		return diag_at(d, "--symbols", 0, "luajit writes no perf map here: cgjit's LuaJIT "
			       "agent writes a jitdump (its option map adds /tmp/perf-PID.map, "
			       "docs/luajit.md)");
	if (choose(rt, a->symbols, has_dump, plan, d) < 0)
		return -1;
	if (luajit && luajit_flags(env->luajit_agent, plan, d) < 0)
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
		record_det_add(plan, a->cmd + 1, env->envp);
	return 0;
}
