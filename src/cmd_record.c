/* cmd_record.c - `cgjit record`: argv -> record_args (record.c), then valgrind run with the
 * runtime's flags (record_run.c), the maps and dumps moved beside the profiles, and every
 * profile augmented (augment_run()). Messages and the exit status (docs/record.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "augment.h"
#include "cmd.h"
#include "diag.h"
#include "io.h"
#include "record.h"
#include "record_run.h"
#include "report.h"
#include "report_text.h"
#include "xalloc.h"

extern char **environ;

static const char usage_line[] =
	"usage: cgjit record [-d DIR] [--runtime NAME] [--symbols map|jitdump] [-q]\n"
	"                    [--no-deterministic] [--no-augment] [valgrind options] [--] COMMAND ARGS...\n";

static const char usage_text[] =
	"\n"
	"Runs COMMAND under valgrind's callgrind with the flags that make its JIT runtime write a\n"
	"perf map or a jitdump and its counts repeatable, moves the maps and dumps of every\n"
	"process the run started beside the profiles, and augments each profile into\n"
	"callgrind.out.jit.PID. Exit status: the program's; else 1 when recording or augmenting\n"
	"failed (docs/record.md).\n"
	"\n"
	"  -d, --out-dir DIR        where the profiles, maps and dumps go (default: the current\n"
	"                           directory; created if missing)\n"
	"      --runtime NAME       node, java, python, moar, php, mono, or none (no flags added);\n"
	"                           default: from COMMAND's name (python: its version too)\n"
	"      --symbols KIND       map or jitdump, where the runtime can write both (default:\n"
	"                           jitdump for node and CPython 3.13+)\n"
	"      --no-deterministic   add none of the runtime's determinism flags (node's\n"
	"                           --predictable..., java's -Xbatch..., PYTHONHASHSEED=0)\n"
	"  -q, --quiet              no summaries (valgrind gets -q too)\n"
	"      --no-augment         record and collect only\n"
	"  -h, --help               this text\n"
	"\n"
	"Every other option before the command is valgrind's (--name=value), passed on after\n"
	"record's own --tool=callgrind --dump-instr=yes --trace-children=yes, so that yours win.\n"
	"'--' ends the options; without it the first argument not starting with '-' does.\n";

/* The directory for the profiles, made if missing, as an absolute path (valgrind and the
 * program may change directories). Returns a malloc'd path, or NULL after a message. */
static char *out_dir_path(const char *dir)
{
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "cgjit: cannot create the output directory '%s': %s\n", dir, strerror(errno));
		return NULL;
	}
	/* valgrind and the moves use the real path: no link another user planted in a shared
	 * directory may choose it (after mkdir(), which never follows a final link) */
	struct diag d = { 0 };
	if (output_check_links(dir, &d) < 0) {
		fprintf(stderr, "cgjit: output directory %s\n", d.msg);
		return NULL;
	}
	char *abs = realpath(dir, NULL);
	if (!abs)
		fprintf(stderr, "cgjit: output directory '%s': %s\n", dir, strerror(errno));
	return abs;
}

/* "(deterministic: --single-threaded ...; yours: --random-seed=7)" into OUT. */
static void det_note(const struct record_plan *plan, char *out, size_t outsz)
{
	size_t n = 0;
	if (!plan->deterministic) {
		snprintf(out, outsz, " (--no-deterministic: counts may differ from run to run)");
		return;
	}
	if (!strcmp(plan->runtime, "none")) {
		snprintf(out, outsz, " (--runtime none: no flags added)");
		return;
	}
	if (!plan->det[0] && !plan->det_yours[0]) {
		snprintf(out, outsz, " (deterministic: no settings known for %s)", plan->runtime);
		return;
	}
	n += (size_t)snprintf(out + n, outsz - n, " (deterministic:");
	for (size_t i = 0; plan->det[i] && n < outsz; i++)
		n += (size_t)snprintf(out + n, outsz - n, " %s", plan->det[i]);
	for (size_t i = 0; plan->det_yours[i] && n < outsz; i++)
		n += (size_t)snprintf(out + n, outsz - n, "%s%s", i ? " " : plan->det[0] ? "; yours: " :
				      " yours: ", plan->det_yours[i]);
	if (n < outsz)
		snprintf(out + n, outsz - n, ")");
}

static void print_command(const struct record_plan *plan, char *const *argv)
{
	fputs("cgjit: running", stderr);
	for (size_t i = 0; plan->env[i]; i++)
		fprintf(stderr, " %s", plan->env[i]);
	for (size_t i = 0; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	char note[1024];
	det_note(plan, note, sizeof(note));
	fprintf(stderr, "%s\n", note);
}

/* "node wrote no jitdump: expected /dir/jit-PID.dump (from --perf-prof)". */
static void no_symbols_message(const struct record_plan *plan, const char *cmd, long pid)
{
	if (!strcmp(plan->runtime, "none")) {
		fprintf(stderr, "cgjit: no process of the run wrote a perf map or jitdump (looked for "
			"/tmp/perf-PID.map and jit-PID.dump in /tmp and the current directory)\n");
		return;
	}
	char cwd[PATH_MAX];
	const char *dir = plan->where == RECORD_IN_CWD && getcwd(cwd, sizeof(cwd)) ? cwd : "/tmp";
	int dump = plan->writes == RECORD_SYMBOLS_JITDUMP;
	fprintf(stderr, "cgjit: %s wrote no perf map or jitdump: expected %s/%s-%ld.%s (from %s) "
		"for '%s', pid %ld\n", plan->runtime, dir, dump ? "jit" : "perf", pid,
		dump ? "dump" : "map", plan->made_by, cmd, pid);
}

/* Augments each profile with its process's maps and dumps. Returns 0, or -1 if one
 * failed or the program's own process wrote none. */
static int augment_all(const struct record_args *a, const struct record_plan *plan,
		       const struct record_found *f, long main_pid)
{
	int rc = 0, any = 0;
	for (size_t i = 0; i < f->nprofiles; i++)
		any |= f->profiles[i].nsymfiles > 0;
	for (size_t i = 0; i < f->nprofiles; i++) {
		const struct record_profile *p = &f->profiles[i];
		if (!p->nsymfiles) {
			/* A child that is no JIT (a shell, a compiler) has none: that is fine. */
			if (p->pid == main_pid && (strcmp(plan->runtime, "none") || !any)) {
				no_symbols_message(plan, a->cmd[0], p->pid);
				rc = -1;
			} else if (!a->quiet) {
				fprintf(stderr, "cgjit: %s: process %ld wrote no perf map or jitdump, not "
					"augmented\n", p->path, p->pid);
			}
			continue;
		}
		if (a->no_augment)
			continue;
		struct augment_opts o;
		augment_opts_init(&o);
		o.profile = p->path;
		o.symfiles = (const char *const *)p->symfiles;
		o.nsymfiles = p->nsymfiles;
		struct report rep;
		struct diag d = { 0 };
		if (augment_run(&o, &rep, &d) < 0) {
			fprintf(stderr, "cgjit: augmenting %s failed: %s\n", p->path, d.msg);
			rc = -1;
		} else if (!a->quiet) {
			report_text_write(&rep, stderr);
		}
	}
	return rc;
}

/* Checks and plans before anything runs. Returns 0, or the exit status after a message. */
static int prepare(const struct record_args *a, struct record_plan *plan)
{
	char path[PATH_MAX];
	if (record_which("valgrind", path, sizeof(path)) < 0) {
		fputs("cgjit: valgrind is not installed: 'valgrind' not found on PATH (Debian: "
		      "apt-get install valgrind)\n", stderr);
		return 127;
	}
	const char *rt = a->runtime ? a->runtime : record_runtime_of(a->cmd[0]);
	if (record_which(a->cmd[0], path, sizeof(path)) < 0) {
		if (rt && strcmp(rt, "none"))
			fprintf(stderr, "cgjit: %s is not installed: '%s' not found %s\n", rt, a->cmd[0],
				strchr(a->cmd[0], '/') ? "or not executable" : "on PATH");
		else
			fprintf(stderr, "cgjit: '%s' not found %s\n", a->cmd[0],
				strchr(a->cmd[0], '/') ? "or not executable" : "on PATH");
		return 127;
	}
	struct diag d = { 0 };
	char agent[PATH_MAX];
	int has_agent = record_find_jvmti_agent(agent, sizeof(agent)) == 0;
	if (record_plan_make(a, (const char *const *)environ, has_agent ? agent : NULL,
			     record_probe_version, NULL, plan, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return rt ? 1 : 2;   /* not knowing the runtime is a usage error */
	}
	return 0;
}

/* record_spawn_wait()'s note that the program's own process has ended and others of the
 * run still run: said, since cgjit then waits for them (their profiles are written when
 * they end). CTX is the struct record_args. */
static void say_waiting(void *ctx, const long *pids, size_t n)
{
	const struct record_args *a = ctx;
	if (a->quiet)
		return;
	fprintf(stderr, "cgjit: '%s' has ended; waiting for the processes it started that still "
		"run", a->cmd[0]);
	for (size_t i = 0; i < n && i < 10; i++)
		fprintf(stderr, "%s%ld", i ? ", " : " (pid ", pids[i]);
	fprintf(stderr, "%s: callgrind writes their profiles when they end (SIGTERM or SIGINT to "
		"cgjit passes it on to them)\n", n > 10 ? ", ...)" : n ? ")" : "");
}

/* Collects and augments after the run. Returns 0, or 1 after a message. */
static int finish(const struct record_args *a, const struct record_plan *plan,
		  const char *stage, const char *dir, const struct timespec *since, long pid)
{
	struct record_found f;
	struct diag d = { 0 };
	int rc = 0;
	if (record_collect(stage, dir, since, &f, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		rc = 1;
	}
	if (!f.nprofiles) {
		fprintf(stderr, "cgjit: valgrind wrote no profile in '%s'\n", dir);
		record_found_free(&f);
		return 1;
	}
	for (size_t i = 0; !a->quiet && i < f.nmoved; i++)
		fprintf(stderr, "cgjit: %s\n", f.moved[i]);
	for (size_t i = 0; i < f.nempty; i++)
		fprintf(stderr, "cgjit: process %ld left an empty profile (it was killed before "
			"callgrind could write it, by SIGKILL?): nothing to collect or augment\n",
			f.empty[i]);
	if (augment_all(a, plan, &f, pid) < 0)
		rc = 1;
	record_found_free(&f);
	return rc;
}

/* Runs valgrind, then collects and augments. Returns the exit status. */
static int run(const struct record_args *a, const struct record_plan *plan)
{
	/* valgrind gets the absolute path (the program may change directories); the
	 * messages and augment's outputs use the user's spelling */
	const char *dir = a->out_dir ? a->out_dir : ".";
	char *abs = out_dir_path(dir);
	if (!abs)
		return 1;
	/* callgrind writes into a directory of this run's own, so that runs into one DIR at
	 * the same time keep their profiles apart; they move into DIR when it is done */
	char *stage = xmalloc(strlen(abs) + 32);
	sprintf(stage, "%s/.cgjit-record.XXXXXX", abs);
	if (!mkdtemp(stage)) {
		fprintf(stderr, "cgjit: cannot create a directory in '%s': %s\n", dir, strerror(errno));
		free(stage);
		free(abs);
		return 1;
	}
	char **vargv = record_valgrind_argv(a, plan, stage);
	if (!a->quiet)
		print_command(plan, vargv);
	struct timespec since;
	record_now(&since);
	long pid = 0;
	int status = 0, rc;
	struct diag d = { 0 };
	if (record_spawn_wait(vargv, plan->env, say_waiting, (void *)a, &pid, &status, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		rc = 1;
	} else {
		/* The program's failure is the news; ours only when it succeeded. */
		int prog = record_exit_code(status);
		if (WIFSIGNALED(status) && !a->quiet)
			fprintf(stderr, "cgjit: '%s' was killed by signal %d (under valgrind)\n",
				a->cmd[0], WTERMSIG(status));
		else if (prog && !a->quiet)
			fprintf(stderr, "cgjit: '%s' exited with status %d (under valgrind)\n",
				a->cmd[0], prog);
		rc = finish(a, plan, stage, dir, &since, pid);
		if (prog)
			rc = prog;
	}
	/* empty unless a profile could not be moved (then it stays there, and was said) */
	if (rmdir(stage) < 0 && errno != ENOENT && !a->quiet)
		fprintf(stderr, "cgjit: left %s (files that could not be moved into '%s')\n", stage, dir);
	record_argv_free(vargv);
	free(stage);
	free(abs);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	const char **vg = xmalloc((size_t)argc * sizeof(*vg));
	struct record_args a;
	struct record_plan plan;
	struct diag d = { 0 };
	int rc;
	if (record_parse_args(argc, argv, vg, &a, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n%s", d.msg, usage_line);
		rc = 2;
	} else if (a.help) {
		printf("%s%s", usage_line, usage_text);
		rc = 0;
	} else if ((rc = prepare(&a, &plan)) == 0) {
		rc = run(&a, &plan);
	}
	free(vg);
	return rc;
}
