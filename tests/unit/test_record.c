/* Unit tests for src/record/ (record.c, record_plan.c, record_det.c, record_shim.c,
 * record_text.c, record_run.c, record_collect.c): the runtime named by a command (node,
 * /usr/bin/node, nodejs, java, python3.N, python3 through an injected version probe,
 * rakudo, php, mono, unknown), the exact flags and valgrind argv built for each, the
 * command line split (valgrind pass-through, --runtime, --symbols, the refused options),
 * `python --version` parsing, PATH lookup, the real probe, and the collection of a run's
 * files (moved only when this user's and new). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/diag.h"
#include "helpers.h"
#include "record/record.h"
#include "record/record_collect.h"
#include "record/record_plan.h"
#include "record/record_run.h"
#include "record/record_shim.h"
#include "record/record_text.h"
#include "augment/augment_stats.h"

/* An injected `python --version`: CTX is the text it prints, NULL when it cannot run. */
static int fake_probe(void *ctx, const char *command, char *out, size_t outsz)
{
	(void)command;
	if (!ctx)
		return -1;
	snprintf(out, outsz, "%s", (const char *)ctx);
	return 0;
}

static int no_probe(void *ctx, const char *command, char *out, size_t outsz)
{
	(void)ctx;
	(void)command;
	(void)out;
	(void)outsz;
	fail_msg("the version was in the name: no probe expected");
	return -1;
}

static void assert_list(const char *const *got, const char *const *want)
{
	size_t i = 0;
	for (; want[i]; i++) {
		assert_non_null(got[i]);
		assert_string_equal(got[i], want[i]);
	}
	assert_null(got[i]);
}

/* Parses ARGV (NULL-terminated, without "record"). */
static int parse(const char *const *words, struct record_args *a, const char **vg, struct diag *d)
{
	static char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)"record";
	for (; words[argc - 1]; argc++)
		argv[argc] = (char *)words[argc - 1];
	argv[argc] = NULL;
	d->set = 0;
	return record_parse_args(argc, argv, vg, a, d);
}

/* No environment: no setting of the user's. */
static const char *const no_env[] = { NULL };

/* What record_plan_make() is given of the system: the JVMTI agent, the CPython probe (with
 * its CTX) and the environment. */
#define ENV(agent, probe, ctx, envp) (&(const struct record_plan_env){ (envp), (agent), (probe), (ctx), NULL })
/* ... and cgjit's LuaJIT agent at LUA */
#define ENV_LUA(lua) (&(const struct record_plan_env){ no_env, NULL, no_probe, NULL, (lua) })
/* ... none of them: a name that says the version, and no setting of the user's */
#define PLAIN ENV(NULL, no_probe, NULL, no_env)

/* record_plan_make() for the command line WORDS (record's options and the command, NULL-
 * terminated), with ENV. */
static int plan_for(const char *const *words, const struct record_plan_env *env,
		    struct record_plan *p, struct diag *d)
{
	static struct record_args a;
	static const char *vg[32];
	assert_int_equal(parse(words, &a, vg, d), 0);
	d->set = 0;
	return record_plan_make(&a, env, p, d);
}

/* The command's file for record_shim_check(): PATH, REAL, and LEN bytes of HEAD. */
static const struct record_shim_file *shim_file(const char *path, const char *real, const char *head,
						size_t len)
{
	static struct record_shim_file f;
	memset(&f, 0, sizeof(f));
	f.path = path;
	snprintf(f.real, sizeof(f.real), "%s", real);
	memcpy(f.head, head, len);
	f.len = len;
	return &f;
}

/* WORDS as a NULL-terminated list */
#define W(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_record__runtime_of(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "node", "node" }, { "/usr/bin/node", "node" }, { "nodejs", "node" },
		{ "./bin/nodejs", "node" }, { "java", "java" }, { "/usr/lib/jvm/bin/java", "java" },
		{ "python3.12", "python" }, { "python3.13", "python" }, { "python3", "python" },
		{ "python", "python" }, { "/root/.pyenv/versions/3.13.0/bin/python3.13", "python" },
		{ "python3.13t", "python" }, { "rakudo", "moar" }, { "raku", "moar" },
		{ "moar", "moar" }, { "php", "php" }, { "mono", "mono" }, { "luajit", "luajit" },
		{ "/usr/bin/luajit-2.1.0-beta3", "luajit" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *rt = record_runtime_of(cases[i][0]);
		assert_non_null(rt);
		assert_string_equal(rt, cases[i][1]);
	}
	static const char *const unknown[] = { "ruby", "nodemon", "javac", "pythonista",
					       "python3-config", "python3.x", "", "/usr/bin/" };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		assert_null(record_runtime_of(unknown[i]));
}

static void test_record__python_version(void **state)
{
	(void)state;
	int major = 0, minor = 0;
	assert_int_equal(record_python_version("Python 3.11.7\n", &major, &minor), 0);
	assert_int_equal(major, 3);
	assert_int_equal(minor, 11);
	assert_int_equal(record_python_version("Python 3.13.0rc1", &major, &minor), 0);
	assert_int_equal(minor, 13);
	assert_int_equal(record_python_version("\nPython 2.7.18\n", &major, &minor), 0);
	assert_int_equal(major, 2);
	assert_int_equal(record_python_version("Python 3", &major, &minor), -1);
	assert_int_equal(record_python_version("pyenv: python3: command not found", &major, &minor), -1);
	assert_int_equal(record_python_version("", &major, &minor), -1);
}

static void test_record__plan_node_java(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	assert_int_equal(plan_for(W("--no-deterministic", "/usr/bin/node"), PLAIN, &p, &d), 0);
	assert_string_equal(p.runtime, "node");
	assert_list(p.flags, (const char *const[]){ "--perf-prof", "--interpreted-frames-native-stack", NULL });
	assert_null(p.env[0]);
	assert_int_equal(p.writes, RECORD_SYMBOLS_JITDUMP);
	assert_int_equal(p.where, RECORD_IN_CWD);

	assert_int_equal(plan_for(W("--no-deterministic", "--symbols=map", "nodejs"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "--perf-basic-prof", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_MAP);
	assert_int_equal(p.where, RECORD_IN_TMP);

	assert_int_equal(plan_for(W("--no-deterministic", "java"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-XX:+UnlockDiagnosticVMOptions",
						    "-XX:+DumpPerfMapAtExit", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_MAP);
	assert_int_equal(p.where, RECORD_IN_TMP);

	assert_int_equal(plan_for(W("--no-deterministic", "--symbols=jitdump", "java"), PLAIN, &p, &d), -1);
	assert_non_null(strstr(d.msg, "--symbols: java writes a jitdump only with cgjit's JVMTI agent"));

	/* with cgjit's JVMTI agent java writes ./jit-PID.dump, the default then */
	const char *agent = "/opt/cgjit/lib/cgjit/libcgjit-jvmti.so";
	assert_int_equal(plan_for(W("--no-deterministic", "java"), ENV(agent, no_probe, NULL, no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-agentpath:/opt/cgjit/lib/cgjit/libcgjit-jvmti.so=dir=.", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_JITDUMP);
	assert_int_equal(p.where, RECORD_IN_CWD);
	assert_int_equal(plan_for(W("--no-deterministic", "--symbols=map", "/usr/lib/jvm/x/bin/java"), ENV(agent, no_probe, NULL, no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-XX:+UnlockDiagnosticVMOptions",
						    "-XX:+DumpPerfMapAtExit", NULL });
	/* the agent is java's only: node ignores it */
	assert_int_equal(plan_for(W("--no-deterministic", "node"), ENV(agent, no_probe, NULL, no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "--perf-prof", "--interpreted-frames-native-stack", NULL });
}

/* luajit: cgjit's agent through -e before the script, its dump in the current directory
 * (CGJIT_LUAJIT=dir=. unless set); without the agent, an error that says how to get it. */
static void test_record__plan_luajit(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	assert_int_equal(plan_for(W("--no-deterministic", "/usr/bin/luajit"), PLAIN, &p, &d), -1);
	assert_non_null(strstr(d.msg, "cgjit's LuaJIT agent, cgjit_luajit.lua, was not found"));
	const char *lua = "/opt/cgjit/lib/cgjit/cgjit_luajit.lua";
	assert_int_equal(plan_for(W("--no-deterministic", "luajit"), ENV_LUA(lua), &p, &d), 0);
	assert_string_equal(p.runtime, "luajit");
	assert_list(p.flags, W("-e", "dofile[==[/opt/cgjit/lib/cgjit/cgjit_luajit.lua]==]"));
	assert_list(p.env, W("CGJIT_LUAJIT=dir=."));
	assert_int_equal(p.writes, RECORD_SYMBOLS_JITDUMP);
	assert_int_equal(p.where, RECORD_IN_CWD);
	/* with the determinism settings: none are needed, none are added */
	assert_int_equal(plan_for(W("luajit"), ENV_LUA(lua), &p, &d), 0);
	assert_list(p.flags, W("-e", "dofile[==[/opt/cgjit/lib/cgjit/cgjit_luajit.lua]==]"));
	assert_null(p.det[0]);
	/* the agent writes no map for record, and a path luajit -e cannot quote is refused */
	assert_int_equal(plan_for(W("--symbols=map", "luajit"), ENV_LUA(lua), &p, &d), -1);
	assert_non_null(strstr(d.msg, "luajit writes no perf map"));
	assert_int_equal(plan_for(W("luajit"), ENV_LUA("/a]==]b/cgjit_luajit.lua"), &p, &d), -1);
	assert_non_null(strstr(d.msg, "cannot be quoted"));
	/* --runtime luajit for a wrapper */
	assert_int_equal(plan_for(W("--runtime", "luajit", "./run"), ENV_LUA(lua), &p, &d), 0);
	assert_string_equal(p.runtime, "luajit");
}

static void test_record__plan_python(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	assert_int_equal(plan_for(W("--no-deterministic", "python3.13"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf_jit", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_JITDUMP);
	assert_int_equal(p.where, RECORD_IN_TMP);
	assert_int_equal(p.py_minor, 13);

	assert_int_equal(plan_for(W("--no-deterministic", "--symbols=map", "python3.13"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf", NULL });

	assert_int_equal(plan_for(W("--no-deterministic", "python3.12"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_MAP);

	assert_int_equal(plan_for(W("--no-deterministic", "--symbols=jitdump", "python3.12"), PLAIN, &p, &d), -1);
	assert_string_equal(d.msg, "--symbols: python writes no jitdump before CPython 3.13");

	/* no version in the name: the probe says */
	assert_int_equal(plan_for(W("--no-deterministic", "python3"), ENV(NULL, fake_probe, "Python 3.13.0\n", no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf_jit", NULL });
	assert_int_equal(plan_for(W("--no-deterministic", "/usr/bin/python3"), ENV(NULL, fake_probe, "Python 3.12.1\n", no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf", NULL });
	assert_int_equal(p.py_major, 3);
	assert_int_equal(p.py_minor, 12);

	d.set = 0;
	assert_int_equal(plan_for(W("--no-deterministic", "python3"), ENV(NULL, fake_probe, "Python 3.11.7\n", no_env), &p, &d), -1);
	assert_string_equal(d.msg, "python3: CPython 3.11 cannot write a perf map: -X perf needs 3.12 "
			    "or later (-X perf_jit, a jitdump, 3.13)");
	d.set = 0;
	assert_int_equal(plan_for(W("--no-deterministic", "python3"), ENV(NULL, fake_probe, "Python 2.7.18\n", no_env), &p, &d), -1);
	d.set = 0;
	assert_int_equal(plan_for(W("--no-deterministic", "python3"), ENV(NULL, fake_probe, NULL, no_env), &p, &d), -2);
	assert_string_equal(d.msg, "python3: could not run 'python3 --version' to learn the CPython version");
	d.set = 0;
	assert_int_equal(plan_for(W("--no-deterministic", "python3"), ENV(NULL, fake_probe, "pyenv: python3: command not found\n", no_env), &p, &d), -1);
	assert_string_equal(d.msg, "python3: 'python3 --version' said 'pyenv: python3: command not "
			    "found', expected 'Python 3.N...'");
}

static void test_record__plan_others(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	assert_int_equal(plan_for(W("--no-deterministic", "rakudo"), PLAIN, &p, &d), 0);
	assert_string_equal(p.runtime, "moar");
	assert_null(p.flags[0]);
	assert_list(p.env, (const char *const[]){ "MVM_JIT_PERF_MAP=1", "MVM_SPESH_BLOCKING=1", NULL });
	assert_int_equal(p.writes, RECORD_SYMBOLS_MAP);

	assert_int_equal(plan_for(W("--no-deterministic", "php"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing",
		"-d", "opcache.jit_buffer_size=32M", "-d", "opcache.jit_debug=0x10", "-d",
		"opcache.file_update_protection=0", NULL });
	assert_int_equal(p.where, RECORD_IN_TMP);

	assert_int_equal(plan_for(W("--no-deterministic", "mono"), PLAIN, &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "--jitmap", NULL });

	assert_int_equal(plan_for(W("--no-deterministic", "ruby"), PLAIN, &p, &d), -1);
	assert_string_equal(d.msg, "ruby: cannot tell which JIT runtime 'ruby' is: name it with "
			    "--runtime NAME (node, java, python, moar, php, mono, luajit, none; none adds no flags)");
}

static void test_record__plan_forced(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	/* --runtime wins over the name */
	assert_int_equal(plan_for(W("--no-deterministic", "--runtime", "node", "/bin/true"), PLAIN, &p, &d), 0);
	assert_string_equal(p.runtime, "node");
	assert_list(p.flags, (const char *const[]){ "--perf-prof", "--interpreted-frames-native-stack", NULL });
	assert_int_equal(plan_for(W("--no-deterministic", "--runtime", "java", "node"), PLAIN, &p, &d), 0);
	assert_string_equal(p.runtime, "java");
	assert_int_equal(plan_for(W("--no-deterministic", "--runtime", "none", "./run-tests.sh"), PLAIN, &p, &d), 0);
	assert_string_equal(p.runtime, "none");
	assert_null(p.flags[0]);
	assert_null(p.env[0]);
	/* a forced python with a name that says nothing: probed */
	assert_int_equal(plan_for(W("--no-deterministic", "--runtime", "python", "./venv/bin/py"), ENV(NULL, fake_probe, "Python 3.12.0", no_env), &p, &d), 0);
	assert_list(p.flags, (const char *const[]){ "-X", "perf", NULL });
}

/* #22.1: each runtime's determinism settings, added after the symbol file's flags (or to the
 * environment), and shown in plan.det */
static void test_record__plan_deterministic(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	assert_int_equal(plan_for(W("node"), PLAIN, &p, &d), 0);
	assert_int_equal(p.deterministic, 1);
	assert_list(p.flags, W("--perf-prof", "--interpreted-frames-native-stack", "--single-threaded",
			       "--predictable", "--hash-seed=1", "--random-seed=1"));
	assert_list(p.det, W("--single-threaded", "--predictable", "--hash-seed=1", "--random-seed=1"));
	assert_null(p.det_yours[0]);
	assert_null(p.env[0]);

	/* java: the perf map's -XX:+UnlockDiagnosticVMOptions serves the diagnostic flag too */
	assert_int_equal(plan_for(W("java"), PLAIN, &p, &d), 0);
	assert_list(p.flags, W("-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-Xbatch",
			       "-XX:-UsePerfData", "-XX:GuaranteedSafepointInterval=0",
			       "-XX:-UseDynamicNumberOfCompilerThreads", "-XX:-UseDynamicNumberOfGCThreads"));
	assert_list(p.det, W("-Xbatch", "-XX:-UsePerfData", "-XX:GuaranteedSafepointInterval=0",
			     "-XX:-UseDynamicNumberOfCompilerThreads", "-XX:-UseDynamicNumberOfGCThreads"));
	/* ... with the agent it is added before it */
	assert_int_equal(plan_for(W("java"), ENV("/a/libcgjit-jvmti.so", no_probe, NULL, no_env), &p, &d), 0);
	assert_list(p.flags, W("-agentpath:/a/libcgjit-jvmti.so=dir=.", "-Xbatch", "-XX:-UsePerfData",
			       "-XX:+UnlockDiagnosticVMOptions", "-XX:GuaranteedSafepointInterval=0",
			       "-XX:-UseDynamicNumberOfCompilerThreads", "-XX:-UseDynamicNumberOfGCThreads"));
	assert_list(p.det, W("-Xbatch", "-XX:-UsePerfData", "-XX:+UnlockDiagnosticVMOptions",
			     "-XX:GuaranteedSafepointInterval=0", "-XX:-UseDynamicNumberOfCompilerThreads",
			     "-XX:-UseDynamicNumberOfGCThreads"));

	/* CPython 3.12 and 3.13: the environment, not the command line */
	assert_int_equal(plan_for(W("python3.13"), PLAIN, &p, &d), 0);
	assert_list(p.flags, W("-X", "perf_jit"));
	assert_list(p.env, W("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1"));
	assert_list(p.det, W("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1"));
	assert_int_equal(plan_for(W("python3.12"), PLAIN, &p, &d), 0);
	assert_list(p.flags, W("-X", "perf"));
	assert_list(p.env, W("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1"));

	/* php (not installed here: these are the flags, unmeasured) */
	assert_int_equal(plan_for(W("php"), PLAIN, &p, &d), 0);
	assert_list(p.det, W("-d", "opcache.validate_timestamps=0", "-d", "realpath_cache_ttl=86400"));
	assert_string_equal(p.flags[10], "-d");
	assert_string_equal(p.flags[11], "opcache.validate_timestamps=0");
	assert_null(p.flags[14]);

	/* none known: rakudo keeps its environment, mono and none get nothing */
	assert_int_equal(plan_for(W("rakudo"), PLAIN, &p, &d), 0);
	assert_list(p.env, W("MVM_JIT_PERF_MAP=1", "MVM_SPESH_BLOCKING=1"));
	assert_null(p.det[0]);
	assert_int_equal(plan_for(W("mono"), PLAIN, &p, &d), 0);
	assert_list(p.flags, W("--jitmap"));
	assert_null(p.det[0]);
	assert_int_equal(plan_for(W("--runtime=none", "./run.sh"), PLAIN, &p, &d), 0);
	assert_null(p.flags[0]);
	assert_null(p.det[0]);
	assert_int_equal(p.deterministic, 1);

	/* --no-deterministic adds none */
	assert_int_equal(plan_for(W("--no-deterministic", "node", "x.js"), PLAIN, &p, &d), 0);
	assert_int_equal(p.deterministic, 0);
	assert_list(p.flags, W("--perf-prof", "--interpreted-frames-native-stack"));
	assert_null(p.det[0]);
	assert_int_equal(plan_for(W("--no-deterministic", "python3.13"), PLAIN, &p, &d), 0);
	assert_null(p.env[0]);
	assert_int_equal(plan_for(W("--no-deterministic", "java"), PLAIN, &p, &d), 0);
	assert_list(p.flags, W("-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"));
}

/* #22.1: a setting the command gives itself wins: nothing that contradicts it is added */
static void test_record__plan_deterministic_yours(void **state)
{
	(void)state;
	struct record_plan p;
	struct diag d = { 0 };
	/* V8 takes '_' for '-', "--no-X" and "--noX"; a value or none */
	assert_int_equal(plan_for(W("node", "--random_seed=7", "--no-predictable", "x.js"), PLAIN, &p, &d), 0);
	assert_list(p.det, W("--single-threaded", "--hash-seed=1"));
	assert_list(p.det_yours, W("--no-predictable", "--random_seed=7"));
	assert_list(p.flags, W("--perf-prof", "--interpreted-frames-native-stack", "--single-threaded",
			       "--hash-seed=1"));
	assert_int_equal(plan_for(W("node", "--nosingle_threaded", "--hash-seed", "3", "--predictable",
				    "x.js"), PLAIN, &p, &d), 0);
	assert_list(p.det, W("--random-seed=1"));
	assert_list(p.det_yours, W("--nosingle_threaded", "--predictable", "--hash-seed"));
	/* look-alikes are not the flag: --single-threaded-gc is another */
	assert_int_equal(plan_for(W("node", "--single-threaded-gc", "--predictable-gc-schedule", "x.js"), PLAIN, &p, &d), 0);
	assert_list(p.det, W("--single-threaded", "--predictable", "--hash-seed=1", "--random-seed=1"));
	assert_null(p.det_yours[0]);

	/* java: -XX:+BackgroundCompilation is the user's answer to -Xbatch; the options
	 * variables count as the command line */
	static const char *const jenv[] = { "HOME=/root", "JAVA_TOOL_OPTIONS=-Xmx1g  -XX:+UsePerfData",
					    "JDK_JAVA_OPTIONS=-XX:GuaranteedSafepointInterval=1000", NULL };
	assert_int_equal(plan_for(W("java", "-XX:+BackgroundCompilation", "-cp", ".", "Main"), ENV(NULL, no_probe, NULL, jenv), &p, &d), 0);
	assert_list(p.det, W("-XX:-UseDynamicNumberOfCompilerThreads", "-XX:-UseDynamicNumberOfGCThreads"));
	assert_list(p.det_yours, W("-XX:+BackgroundCompilation", "JAVA_TOOL_OPTIONS=-Xmx1g  -XX:+UsePerfData",
				   "JDK_JAVA_OPTIONS=-XX:GuaranteedSafepointInterval=1000"));
	/* ... but an unrelated variable of that shape does not */
	static const char *const other[] = { "MY_JAVA_OPTIONS=-XX:+UsePerfData", "JAVA_TOOL_OPTIONSX=-Xbatch",
					     NULL };
	assert_int_equal(plan_for(W("java", "Main"), ENV(NULL, no_probe, NULL, other), &p, &d), 0);
	assert_null(p.det_yours[0]);
	assert_string_equal(p.det[0], "-Xbatch");

	/* CPython: the user's PYTHONHASHSEED or PYTHONDONTWRITEBYTECODE, -E/-I (which ignore
	 * the environment), -R, -B */
	static const char *const penv[] = { "PATH=/bin", "PYTHONHASHSEED=123", NULL };
	assert_int_equal(plan_for(W("python3.13", "p.py"), ENV(NULL, no_probe, NULL, penv), &p, &d), 0);
	assert_list(p.env, W("PYTHONDONTWRITEBYTECODE=1"));
	assert_list(p.det, W("PYTHONDONTWRITEBYTECODE=1"));
	assert_list(p.det_yours, W("PYTHONHASHSEED=123"));
	static const char *const penv2[] = { "PYTHONDONTWRITEBYTECODE=", "PYTHONHASHSEED=0", NULL };
	assert_int_equal(plan_for(W("python3.13", "p.py"), ENV(NULL, no_probe, NULL, penv2), &p, &d), 0);
	assert_null(p.env[0]);
	assert_null(p.det[0]);
	assert_list(p.det_yours, W("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE="));
	static const char *const both[] = { "-E", "-I", "-sE", "-BIu" };
	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		assert_int_equal(plan_for(W("python3.12", both[i], "p.py"), PLAIN,
					  &p, &d), 0);
		assert_null(p.env[0]);
		assert_list(p.det_yours, W(both[i]));
	}
	assert_int_equal(plan_for(W("python3.12", "-R", "p.py"), PLAIN, &p, &d), 0);
	assert_list(p.env, W("PYTHONDONTWRITEBYTECODE=1"));
	assert_list(p.det_yours, W("-R"));
	assert_int_equal(plan_for(W("python3.12", "-B", "p.py"), PLAIN, &p, &d), 0);
	assert_list(p.env, W("PYTHONHASHSEED=0"));
	assert_list(p.det_yours, W("-B"));
	assert_int_equal(plan_for(W("python3.12", "-u", "--help-env", "p.py"), PLAIN, &p, &d), 0);
	assert_list(p.env, W("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1"));

	/* php: -d NAME=VALUE in two words or one */
	assert_int_equal(plan_for(W("php", "-d", "opcache.validate_timestamps=1",
				    "-drealpath_cache_ttl=5", "x.php"), PLAIN, &p, &d), 0);
	assert_null(p.det[0]);
	assert_list(p.det_yours, W("opcache.validate_timestamps=1", "-drealpath_cache_ttl=5"));
}

static void test_record__parse_args(void **state)
{
	(void)state;
	struct record_args a;
	const char *vg[32];
	struct diag d = { 0 };
	assert_int_equal(parse((const char *[]){ "--", "node", "app.js", NULL }, &a, vg, &d), 0);
	assert_int_equal(a.ncmd, 2);
	assert_string_equal(a.cmd[0], "node");
	assert_string_equal(a.cmd[1], "app.js");
	assert_null(a.cmd[2]);
	assert_int_equal(a.nvg, 0);
	assert_null(a.out_dir);
	assert_null(a.runtime);

	/* valgrind's options pass through in order, among record's own */
	assert_int_equal(parse((const char *[]){ "--branch-sim=yes", "-d", "out", "--runtime", "node",
		"-q", "--separate-threads=yes", "--tool=callgrind", "--", "./run.sh", "-x", NULL },
		&a, vg, &d), 0);
	assert_int_equal(a.nvg, 3);
	assert_string_equal(a.vg_opts[0], "--branch-sim=yes");
	assert_string_equal(a.vg_opts[1], "--separate-threads=yes");
	assert_string_equal(a.vg_opts[2], "--tool=callgrind");
	assert_string_equal(a.out_dir, "out");
	assert_string_equal(a.runtime, "node");
	assert_int_equal(a.quiet, 1);
	assert_int_equal(a.ncmd, 2);
	assert_string_equal(a.cmd[1], "-x");

	/* without "--": the first word that is no option; the program's options stay its own */
	assert_int_equal(parse((const char *[]){ "--out-dir=o", "--symbols=map", "--error-limit=no", "java",
		"-Xint", "Prog", NULL }, &a, vg, &d), 0);
	assert_string_equal(a.out_dir, "o");
	assert_int_equal(a.symbols, RECORD_SYMBOLS_MAP);
	assert_int_equal(a.nvg, 1);
	assert_string_equal(a.vg_opts[0], "--error-limit=no");
	assert_int_equal(a.verbose, 0);
	assert_int_equal(a.no_deterministic, 0);
	assert_int_equal(a.ncmd, 3);
	assert_string_equal(a.cmd[1], "-Xint");

	assert_int_equal(parse((const char *[]){ "-dX", "--symbols", "jitdump", "--runtime=python",
		"--no-augment", "p.py", NULL }, &a, vg, &d), 0);
	assert_string_equal(a.out_dir, "X");
	assert_int_equal(a.symbols, RECORD_SYMBOLS_JITDUMP);
	assert_string_equal(a.runtime, "python");
	assert_int_equal(a.no_augment, 1);
	assert_null(a.root);
	assert_int_equal(a.no_root, 0);

	/* --root DIR (augment's, default: the current directory), --no-root */
	assert_int_equal(parse((const char *[]){ "--root", "/ci", "--no-root", "--root=src", "node", NULL },
		&a, vg, &d), 0);
	assert_string_equal(a.root, "src");
	assert_int_equal(a.no_root, 1);
	assert_int_equal(a.nvg, 0);

	/* #22: -v and --no-deterministic are record's (valgrind's own -v is not passed on) */
	assert_int_equal(parse((const char *[]){ "-v", "--no-deterministic", "node", "x.js", NULL }, &a, vg,
		&d), 0);
	assert_int_equal(a.verbose, 1);
	assert_int_equal(a.no_deterministic, 1);
	assert_int_equal(a.nvg, 0);
	assert_int_equal(parse((const char *[]){ "--verbose", "node", NULL }, &a, vg, &d), 0);
	assert_int_equal(a.verbose, 1);

	assert_int_equal(parse((const char *[]){ "-h", "--tool=bogus", NULL }, &a, vg, &d), 0);
	assert_int_equal(a.help, 1);
}

static void test_record__parse_errors(void **state)
{
	(void)state;
	struct record_args a;
	const char *vg[32];
	struct diag d = { 0 };
	static const struct {
		const char *argv[6];
		const char *msg;
	} cases[] = {
		{ { NULL }, "record: no command to run: cgjit record [options] -- COMMAND ARGS..." },
		{ { "-q", "--", NULL }, "record: no command to run: cgjit record [options] -- COMMAND ARGS..." },
		{ { "--tool=memcheck", "node", NULL },
		  "--tool=memcheck: record runs callgrind only (use valgrind directly for other tools)" },
		{ { "--callgrind-out-file=x", "node", NULL }, "--callgrind-out-file=x: record names the "
		  "profiles callgrind.out.PID itself: use -d DIR to choose their directory" },
		{ { "--runtime", NULL }, "--runtime: needs a value" },
		{ { "--runtime=ruby", "ruby", NULL }, "--runtime: unknown runtime 'ruby', expected one of "
		  "node, java, python, moar, php, mono, luajit, none" },
		{ { "--symbols", "both", "node", NULL }, "--symbols: expected 'map' or 'jitdump', got 'both'" },
		{ { "-d", "", "node", NULL }, "--out-dir: '' is an empty directory name" },
		{ { "-d", NULL }, "-d: needs a value" },
		{ { "--root", "", "node", NULL }, "--root: '' is an empty directory name" },
		{ { "--root", NULL }, "--root: needs a value" },
		{ { "--", "--dump-line=no", "node", NULL },
		  "--dump-line=no: is not a command: valgrind's options go before '--'" },
		{ { "-q", "-v", "node", NULL }, "-q: and -v ask for less and for more: give one" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].argv, &a, vg, &d), -1);
		assert_string_equal(d.msg, cases[i].msg);
	}
}

static void test_record__valgrind_argv(void **state)
{
	(void)state;
	struct record_args a;
	const char *vg[32];
	struct diag d = { 0 };
	struct record_plan p;
	/* valgrind gets -q (no banner) unless -v; the determinism flags follow the symbol
	 * file's, before the program's arguments */
	assert_int_equal(parse((const char *[]){ "--dump-instr=no", "-d", "o", "node", "app.js", "1",
		NULL }, &a, vg, &d), 0);
	assert_int_equal(record_plan_make(&a, PLAIN, &p, &d), 0);
	char **v = record_valgrind_argv(&a, &p, "/abs/o");
	assert_list((const char *const *)v, (const char *const[]){ "valgrind", "--tool=callgrind",
		"--dump-instr=yes", "--trace-children=yes", "--callgrind-out-file=/abs/o/callgrind.out.%p",
		"-q", "--dump-instr=no", "node", "--perf-prof", "--interpreted-frames-native-stack",
		"--single-threaded", "--predictable", "--hash-seed=1", "--random-seed=1", "app.js", "1", NULL });
	record_argv_free(v);

	assert_int_equal(parse((const char *[]){ "-q", "--", "/opt/py/bin/python3.13", "-c", "pass",
		NULL }, &a, vg, &d), 0);
	assert_int_equal(record_plan_make(&a, PLAIN, &p, &d), 0);
	v = record_valgrind_argv(&a, &p, "/w");
	assert_list((const char *const *)v, (const char *const[]){ "valgrind", "--tool=callgrind",
		"--dump-instr=yes", "--trace-children=yes", "--callgrind-out-file=/w/callgrind.out.%p", "-q",
		"/opt/py/bin/python3.13", "-X", "perf_jit", "-c", "pass", NULL });
	record_argv_free(v);

	assert_int_equal(parse((const char *[]){ "--no-deterministic", "java", "Prog", NULL }, &a, vg, &d), 0);
	assert_int_equal(record_plan_make(&a, PLAIN, &p, &d), 0);
	v = record_valgrind_argv(&a, &p, "/w");
	assert_list((const char *const *)v, (const char *const[]){ "valgrind", "--tool=callgrind",
		"--dump-instr=yes", "--trace-children=yes", "--callgrind-out-file=/w/callgrind.out.%p", "-q",
		"java", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "Prog", NULL });
	record_argv_free(v);

	/* moar: nothing on the command line (the environment does it); -v: no -q */
	assert_int_equal(parse((const char *[]){ "-v", "rakudo", "prog.raku", NULL }, &a, vg, &d), 0);
	assert_int_equal(record_plan_make(&a, PLAIN, &p, &d), 0);
	v = record_valgrind_argv(&a, &p, "/w");
	assert_list((const char *const *)v, (const char *const[]){ "valgrind", "--tool=callgrind",
		"--dump-instr=yes", "--trace-children=yes", "--callgrind-out-file=/w/callgrind.out.%p",
		"rakudo", "prog.raku", NULL });
	record_argv_free(v);
	record_argv_free(NULL);
}

/* #22.6: a version manager's shim or a script in place of the runtime is refused, named,
 * with what to give instead; --runtime NAME lets it through */
static void test_record__shim(void **state)
{
	(void)state;
	struct record_args a;
	const char *vg[32];
	struct diag d = { 0 };
	struct record_shim s;
	static const char pyenv[] = "#!/usr/bin/env bash\nset -e\n[ -n \"$PYENV_DEBUG\" ] && set -x\n";
	assert_int_equal(parse(W("python3", "p.py"), &a, vg, &d), 0);
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/root/.pyenv/shims/python3", "/root/.pyenv/shims/python3",
							 pyenv, sizeof(pyenv) - 1), &s, &d), -1);
	assert_string_equal(s.manager, "pyenv");
	assert_string_equal(s.interp, "/usr/bin/env bash");
	assert_string_equal(d.msg, "python3: is a pyenv shim (/root/.pyenv/shims/python3, a bash script), "
			    "not python itself: valgrind would profile bash and pyenv too, a profile for "
			    "each process, and their counts would vary with the shim's work; give the "
			    "program itself, \"$(pyenv which python3)\", or --runtime python to record "
			    "through the shim anyway");

	/* asdf, mise: the directory above shims; a #! line with options and CR */
	static const char sh[] = "#! /bin/bash -e\r\nexec asdf exec node \"$@\"\n";
	assert_int_equal(parse(W("node", "x.js"), &a, vg, &d), 0);
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/home/u/.asdf/shims/node", "/home/u/.asdf/shims/node",
							 sh, sizeof(sh) - 1), &s, &d), -1);
	assert_string_equal(s.manager, "asdf");
	assert_string_equal(s.interp, "/bin/bash -e");
	assert_non_null(strstr(d.msg, "\"$(asdf which node)\", or --runtime node"));
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/home/u/.local/share/mise/shims/node", "/x/node",
							 sh, sizeof(sh) - 1), &s, &d), -1);
	assert_string_equal(s.manager, "mise");

	/* volta: a program, volta-shim, under the runtime's name */
	static const char elf[] = "\177ELF\2\1\1";
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/home/u/.volta/bin/node", "/home/u/.volta/bin/volta-shim",
							 elf, sizeof(elf) - 1), &s, &d), -1);
	assert_string_equal(s.manager, "volta");
	assert_non_null(strstr(d.msg, "\"$(volta which node)\""));

	/* any other #! script under the runtime's name */
	static const char wrap[] = "#!/bin/sh\nexec /opt/node/bin/node \"$@\"\n";
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/usr/local/bin/node", "/usr/local/bin/node",
							 wrap, sizeof(wrap) - 1), &s, &d), -1);
	assert_string_equal(s.manager, "");
	assert_string_equal(d.msg, "node: is a script (/usr/local/bin/node, run by sh), not node itself: "
			    "valgrind would profile sh and every process it starts; give the program the "
			    "script runs, or --runtime node to record through the script anyway");

	/* programs are not checked further; nor is a command --runtime names, nor an unknown one */
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/usr/bin/node", "/usr/bin/node",
							 elf, sizeof(elf) - 1), &s, &d), 0);
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/usr/bin/node", "/usr/bin/node",
							 "", 0), &s, &d), 0);
	assert_int_equal(parse(W("--runtime", "python", "python3", "p.py"), &a, vg, &d), 0);
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("/root/.pyenv/shims/python3", "/root/.pyenv/shims/python3",
							 pyenv, sizeof(pyenv) - 1), &s, &d), 0);
	assert_int_equal(parse(W("--runtime=none", "./run.sh"), &a, vg, &d), 0);
	d.set = 0;
	assert_int_equal(record_shim_check(&a, shim_file("./run.sh", "/w/run.sh",
							 wrap, sizeof(wrap) - 1), &s, &d), 0);
}

/* #22.6: the progress line: what is known, cut to the terminal's width */
static void test_record__progress_line(void **state)
{
	(void)state;
	char out[512];
	struct record_progress p = { .seconds = 0, .running = 1 };
	record_progress_line(&p, 200, out, sizeof(out));
	assert_string_equal(out, "cgjit: 0 s under callgrind: 1 process, 0 profiles written");
	p = (struct record_progress){ .seconds = 75, .running = 2, .written = 1, .nfiles = 2,
				      .bytes = 1234567 + 999,
				      .files = { { "jit-1234.dump", 1234567 }, { "perf-1240.map", 999 } } };
	record_progress_line(&p, 200, out, sizeof(out));
	assert_string_equal(out, "cgjit: 75 s under callgrind: 2 processes, 1 profile written; "
			    "jit-1234.dump 1.2 MB, perf-1240.map 999 B");
	p.nfiles = 5;
	p.bytes = 4500000000u;
	snprintf(p.files[2].name, sizeof(p.files[2].name), "perf-1300.map");
	p.files[2].bytes = 12000;
	record_progress_line(&p, 200, out, sizeof(out));
	assert_string_equal(out, "cgjit: 75 s under callgrind: 2 processes, 1 profile written; "
			    "jit-1234.dump 1.2 MB, perf-1240.map 999 B, perf-1300.map 12 KB (5 files, "
			    "4.5 GB in all)");
	/* one column less than the terminal's */
	record_progress_line(&p, 40, out, sizeof(out));
	assert_string_equal(out, "cgjit: 75 s under callgrind: 2 processe");
	record_progress_line(&p, 0, out, sizeof(out));
	assert_string_equal(out, "");
}

/* #22.6: augment's summary as one line */
static void test_record__summary_line(void **state)
{
	(void)state;
	struct augment_stats r;
	memset(&r, 0, sizeof(r));
	snprintf(r.output, sizeof(r.output), "out/callgrind.out.jit.1234");
	r.pseudo_functions = 246;
	r.resolved = 211;
	r.nevents = 2;
	r.events[0] = (struct augment_stats_event){ "Ir", 1000000, 470200, 1, 0 };
	r.events[1] = (struct augment_stats_event){ "Dr", 10, 1, 0, 0 };
	char out[1024];
	record_summary_line(&r, out, sizeof(out));
	assert_string_equal(out, "out/callgrind.out.jit.1234: Ir 47.02% JIT, 0.00% unknown (211 of 246 "
			    "pseudo-functions named)");
	r.elf_files = 1;
	snprintf(r.elf_first, sizeof(r.elf_first), "/abs/out/jit-1234.dump.elf");
	record_summary_line(&r, out, sizeof(out));
	assert_string_equal(out, "out/callgrind.out.jit.1234: Ir 47.02% JIT, 0.00% unknown (211 of 246 "
			    "pseudo-functions named, machine code in jit-1234.dump.elf)");
	r.nevents = 0;
	record_summary_line(&r, out, sizeof(out));
	assert_non_null(strstr(out, ": cost 0.00% JIT"));
}

static void test_record__which_and_probe(void **state)
{
	(void)state;
	char path[4096];
	assert_int_equal(record_which("sh", path, sizeof(path)), 0);
	assert_non_null(strchr(path, '/'));
	assert_int_equal(record_which("/bin/sh", path, sizeof(path)), 0);
	assert_string_equal(path, "/bin/sh");
	assert_int_equal(record_which("cgjit-no-such-program", path, sizeof(path)), -1);
	assert_int_equal(record_which("/nonexistent/node", path, sizeof(path)), -1);
	assert_int_equal(record_which("/etc/passwd", path, sizeof(path)), -1);   /* not executable */
	assert_int_equal(record_which("", path, sizeof(path)), -1);

	char out[64];
	/* coreutils' echo answers --version; a program that cannot run fails */
	if (access("/bin/echo", X_OK) == 0) {
		assert_int_equal(record_probe_version(NULL, "/bin/echo", out, sizeof(out)), 0);
		assert_true(strlen(out) > 0 && strlen(out) < sizeof(out));
	}
	assert_int_equal(record_probe_version(NULL, "cgjit-no-such-program", out, sizeof(out)), -1);
	assert_int_equal(record_probe_version(NULL, "false", out, sizeof(out)), -1);
}

/* A pid no process can have (above Linux's largest pid_max, 2^22). */
enum { FAKE_PID = 9999991 };

static void make_file(const char *path, const char *text, int age_seconds)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	if (age_seconds) {
		struct timespec t[2];
		clock_gettime(CLOCK_REALTIME, &t[0]);
		t[0].tv_sec -= age_seconds;
		t[1] = t[0];
		assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
	}
}

static void test_record__collect(void **state)
{
	(void)state;
	char top[] = "/tmp/cgjit-test-record-XXXXXX";
	assert_non_null(mkdtemp(top));
	char old_cwd[4096], out[4096];
	assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
	assert_int_equal(chdir(top), 0);
	snprintf(out, sizeof(out), "%s/out", top);
	assert_int_equal(mkdir(out, 0777), 0);
	assert_int_equal(mkdir("out/stage", 0777), 0);

	/* before the run: an old profile and an old v8 log of another run */
	make_file("out/callgrind.out.123", "pid: 123\nevents: Ir\n", 100);
	make_file("isolate-0x1-7-v8.log", "", 100);
	struct timespec since;
	record_now(&since);
	/* the run: a profile per process in its own directory, the main one's dump here, its
	 * map in /tmp */
	char prof[64];
	snprintf(prof, sizeof(prof), "out/stage/callgrind.out.%d", FAKE_PID);
	make_file(prof, "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 9999991\n"
		  "cmd: node x.js\npart: 1\n\nevents: Ir\n", 0);
	make_file("out/stage/callgrind.out.9999992", "version: 1\nevents: Ir\n", 0);   /* no pid: line */
	make_file("out/stage/callgrind.out.jit.55", "pid: 55\n", 0);                     /* an output */
	make_file("jit-9999991.dump", "JiTD", 0);
	make_file("isolate-0x5875d00-9999991-v8.log", "v8-version", 0);
	make_file("/tmp/perf-9999991.map", "1000 10 f\n", 0);
	make_file("/tmp/jit-9999992.dump", "old", 100);   /* older than the run: not ours */

	struct record_found f;
	struct diag d = { 0 };
	assert_int_equal(record_collect("out/stage", "out", &since, &f, &d), 0);
	assert_int_equal(f.nprofiles, 2);
	assert_string_equal(f.profiles[0].path, "out/callgrind.out.9999991");   /* moved into out */
	assert_int_equal(f.profiles[0].pid, FAKE_PID);
	assert_int_equal(f.profiles[0].nsymfiles, 2);
	/* the cwd first, then /tmp */
	assert_string_equal(f.profiles[0].symfiles[0], "out/jit-9999991.dump");
	assert_string_equal(f.profiles[0].symfiles[1], "out/perf-9999991.map");
	assert_int_equal(f.profiles[1].pid, 9999992);   /* from the file name */
	assert_int_equal(f.profiles[1].nsymfiles, 0);
	assert_int_equal(f.nmoved, 5);
	int seen = 0;
	for (size_t i = 0; i < f.nmoved; i++) {
		const struct record_move *m = &f.moved[i];
		assert_false(m->kept);
		assert_int_equal(m->profile, !strncmp(m->from, "out/stage/", 10));
		seen += (!strcmp(m->from, "./jit-9999991.dump") && !strcmp(m->to, "out/jit-9999991.dump")) ||
			(!strcmp(m->from, "/tmp/perf-9999991.map") && !strcmp(m->to, "out/perf-9999991.map")) ||
			(!strcmp(m->from, prof) && !strcmp(m->to, "out/callgrind.out.9999991"));
	}
	assert_int_equal(seen, 3);
	record_found_free(&f);

	/* moved: gone from /tmp, the cwd and the run's directory; the rest untouched */
	assert_int_equal(access("/tmp/perf-9999991.map", F_OK), -1);
	assert_int_equal(access("jit-9999991.dump", F_OK), -1);
	assert_int_equal(access(prof, F_OK), -1);
	assert_int_equal(access("isolate-0x5875d00-9999991-v8.log", F_OK), -1);
	assert_int_equal(access("out/isolate-0x5875d00-9999991-v8.log", F_OK), 0);
	assert_int_equal(access("out/perf-9999991.map", F_OK), 0);
	assert_int_equal(access("out/stage/callgrind.out.jit.55", F_OK), 0);
	assert_int_equal(access("isolate-0x1-7-v8.log", F_OK), 0);
	assert_int_equal(access("/tmp/jit-9999992.dump", F_OK), 0);
	unlink("/tmp/jit-9999992.dump");

	/* a file of the same name already in out (an earlier run with the same pid) is never
	 * replaced: the new one is used where it is */
	make_file("out/perf-9999994.map", "old\n", 100);
	record_now(&since);
	make_file("out/stage/callgrind.out.9999994", "pid: 9999994\n", 0);
	make_file("/tmp/perf-9999994.map", "2000 10 g\n", 0);
	assert_int_equal(record_collect("out/stage", "out", &since, &f, &d), 0);
	assert_int_equal(f.nprofiles, 1);
	assert_int_equal(f.profiles[0].nsymfiles, 1);
	assert_string_equal(f.profiles[0].symfiles[0], "/tmp/perf-9999994.map");
	assert_int_equal(f.nmoved, 2);
	assert_string_equal(f.moved[1].from, "/tmp/perf-9999994.map");
	assert_null(f.moved[1].to);
	assert_true(f.moved[1].kept);
	assert_false(f.moved[1].profile);
	record_found_free(&f);
	char *kept = slurp("out/perf-9999994.map");
	assert_string_equal(kept, "old\n");
	free(kept);
	assert_int_equal(unlink("/tmp/perf-9999994.map"), 0);

	/* #19.3: an empty profile (a process killed before callgrind wrote it) is neither moved
	 * nor returned: removed, its pid listed, its map moved all the same; the empty base
	 * file of --separate-threads=yes beside its -01 file is no lost profile */
	record_now(&since);
	make_file("out/stage/callgrind.out.9999995", "", 0);
	make_file("/tmp/perf-9999995.map", "3000 10 h\n", 0);
	make_file("out/stage/callgrind.out.9999996", "", 0);
	make_file("out/stage/callgrind.out.9999996-01", "pid: 9999996\n", 0);
	assert_int_equal(record_collect("out/stage", "out", &since, &f, &d), 0);
	assert_int_equal(f.nprofiles, 1);
	assert_string_equal(f.profiles[0].path, "out/callgrind.out.9999996-01");
	assert_int_equal(f.nempty, 1);
	assert_int_equal(f.empty[0], 9999995);
	assert_int_equal(f.nmoved, 2);
	assert_string_equal(f.moved[1].from, "/tmp/perf-9999995.map");
	assert_string_equal(f.moved[1].to, "out/perf-9999995.map");
	record_found_free(&f);
	assert_int_equal(access("out/stage/callgrind.out.9999995", F_OK), -1);
	assert_int_equal(access("out/callgrind.out.9999995", F_OK), -1);
	assert_int_equal(access("out/stage/callgrind.out.9999996", F_OK), -1);
	assert_int_equal(unlink("out/perf-9999995.map"), 0);
	assert_int_equal(unlink("out/callgrind.out.9999996-01"), 0);

	/* out dir = cwd = the run's directory: everything stays where it is */
	record_now(&since);
	make_file("callgrind.out.9999993", "pid: 9999993\n", 0);
	make_file("jit-9999993.dump", "JiTD", 0);
	assert_int_equal(record_collect(".", ".", &since, &f, &d), 0);
	assert_int_equal(f.nprofiles, 1);
	assert_int_equal(f.nmoved, 0);
	assert_int_equal(f.profiles[0].nsymfiles, 1);
	assert_string_equal(f.profiles[0].symfiles[0], "./jit-9999993.dump");
	record_found_free(&f);

	assert_int_equal(record_collect("no-such-dir", ".", &since, &f, &d), -1);
	assert_string_equal(d.msg, "no-such-dir: cannot read the directory: No such file or directory");

	static const char *const made[] = { "out/callgrind.out.123", "out/callgrind.out.9999991",
		"out/callgrind.out.9999992", "out/stage/callgrind.out.jit.55", "out/jit-9999991.dump",
		"out/perf-9999991.map", "out/isolate-0x5875d00-9999991-v8.log", "isolate-0x1-7-v8.log",
		"out/callgrind.out.9999994", "out/perf-9999994.map",
		"callgrind.out.9999993", "jit-9999993.dump" };
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		assert_int_equal(unlink(made[i]), 0);
	assert_int_equal(rmdir("out/stage"), 0);
	assert_int_equal(rmdir("out"), 0);
	assert_int_equal(chdir(old_cwd), 0);
	assert_int_equal(rmdir(top), 0);
}

/* #22.6: what the progress line counts: profiles begun (empty) and written in the run's
 * directory, and the maps and dumps of their pids that are new */
static void test_record__progress_scan(void **state)
{
	(void)state;
	char top[] = "/tmp/cgjit-test-progress-XXXXXX";
	assert_non_null(mkdtemp(top));
	char old_cwd[4096], stage[4096];
	assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
	assert_int_equal(chdir(top), 0);
	snprintf(stage, sizeof(stage), "%s/stage", top);
	assert_int_equal(mkdir(stage, 0777), 0);
	make_file("jit-9999981.dump", "old", 100);   /* before the run: not its */
	struct timespec since;
	record_now(&since);
	make_file("stage/callgrind.out.9999981", "", 0);              /* running */
	make_file("stage/callgrind.out.9999982", "pid: 9999982\n", 0); /* written */
	make_file("stage/callgrind.out.9999982.2", "part 2\n", 0);     /* a second part */
	make_file("stage/callgrind.out.jit.1", "x", 0);               /* no profile */
	make_file("/tmp/perf-9999982.map", "1000 10 f\n", 0);
	make_file("jit-9999982.dump", "JiTD1234", 0);
	struct record_progress p = { .seconds = 7 };
	record_progress_scan("stage", &since, &p);
	assert_int_equal(p.seconds, 7);
	assert_int_equal(p.running, 1);
	assert_int_equal(p.written, 2);
	assert_int_equal(p.nfiles, 2);          /* each counted once, for two parts */
	assert_int_equal(p.bytes, 10 + 8);
	assert_true((!strcmp(p.files[0].name, "jit-9999982.dump") && p.files[0].bytes == 8) ||
		    (!strcmp(p.files[1].name, "jit-9999982.dump") && p.files[1].bytes == 8));
	record_progress_scan("no-such-dir", &since, &p);
	assert_int_equal(p.running + p.written + p.nfiles, 0);
	static const char *const made[] = { "stage/callgrind.out.9999981", "stage/callgrind.out.9999982",
		"stage/callgrind.out.9999982.2", "stage/callgrind.out.jit.1", "/tmp/perf-9999982.map",
		"jit-9999982.dump", "jit-9999981.dump" };
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		assert_int_equal(unlink(made[i]), 0);
	assert_int_equal(rmdir("stage"), 0);
	assert_int_equal(chdir(old_cwd), 0);
	assert_int_equal(rmdir(top), 0);
}

/* #19.3: record_spawn_wait() waits for the processes the program leaves running. The
 * program (sh) starts a child that blocks on a FIFO and ends at once; WAITING is told of
 * the child, opens the FIFO, and only when the child has written its file and ended does
 * record_spawn_wait() return. No sleeps: the FIFO orders it. */
struct waited {
	const char *fifo;
	int calls;
	size_t n;
	int ticks;
	unsigned last;
};

/* #22.6: the tick comes at once (0 s), then with growing seconds; no timing asserted */
static void on_tick(void *ctx, unsigned seconds)
{
	struct waited *w = ctx;
	if (w->ticks)
		assert_true(seconds > w->last);
	else
		assert_int_equal(seconds, 0);
	w->ticks++;
	w->last = seconds;
}

static void on_waiting(void *ctx, const long *pids, size_t n)
{
	struct waited *w = ctx;
	w->calls++;
	w->n = n;
	for (size_t i = 0; i < n; i++)
		assert_true(pids[i] > 0);
	int fd = open(w->fifo, O_WRONLY);   /* the child has it open for reading, or will */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "go\n", 3), 3);
	close(fd);
}

static void test_record__spawn_waits_for_the_run(void **state)
{
	(void)state;
	char top[] = "/tmp/cgjit-test-spawn-XXXXXX";
	assert_non_null(mkdtemp(top));
	char fifo[128], done[128], script[512];
	snprintf(fifo, sizeof(fifo), "%s/go", top);
	snprintf(done, sizeof(done), "%s/done", top);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(script, sizeof(script), "(read x <'%s'; echo $x >'%s') & exit 7", fifo, done);
	char *const argv[] = { "sh", "-c", script, NULL };
	struct waited w = { fifo, 0, 0, 0, 0 };
	struct diag d = { 0 };
	long pid = 0;
	int status = 0;
	struct record_watch watch = { on_waiting, NULL, &w };
	assert_int_equal(record_spawn_wait(argv, NULL, &watch, &pid, &status, &d), 0);
	assert_true(pid > 0);
	assert_int_equal(record_exit_code(status), 7);    /* the program's own status */
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.n, 1);                         /* the background subshell */
	char *got = slurp(done);                          /* written before the return */
	assert_non_null(got);
	assert_string_equal(got, "go\n");
	free(got);
	/* a program that leaves nothing running: WAITING is not called */
	char *const quick[] = { "sh", "-c", "exit 0", NULL };
	w.calls = 0;
	assert_int_equal(record_spawn_wait(quick, NULL, &watch, &pid, &status, &d), 0);
	assert_int_equal(record_exit_code(status), 0);
	assert_int_equal(w.calls, 0);
	/* with a tick: told at once, whatever the run's length */
	watch.tick = on_tick;
	assert_int_equal(record_spawn_wait(quick, NULL, &watch, &pid, &status, &d), 0);
	assert_true(w.ticks >= 1);
	assert_int_equal(w.calls, 0);
	unlink(done);
	unlink(fifo);
	assert_int_equal(rmdir(top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record__runtime_of),
		cmocka_unit_test(test_record__python_version),
		cmocka_unit_test(test_record__plan_node_java),
		cmocka_unit_test(test_record__plan_luajit),
		cmocka_unit_test(test_record__plan_python),
		cmocka_unit_test(test_record__plan_others),
		cmocka_unit_test(test_record__plan_forced),
		cmocka_unit_test(test_record__plan_deterministic),
		cmocka_unit_test(test_record__plan_deterministic_yours),
		cmocka_unit_test(test_record__parse_args),
		cmocka_unit_test(test_record__parse_errors),
		cmocka_unit_test(test_record__valgrind_argv),
		cmocka_unit_test(test_record__shim),
		cmocka_unit_test(test_record__progress_line),
		cmocka_unit_test(test_record__summary_line),
		cmocka_unit_test(test_record__which_and_probe),
		cmocka_unit_test(test_record__collect),
		cmocka_unit_test(test_record__progress_scan),
		cmocka_unit_test(test_record__spawn_waits_for_the_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
