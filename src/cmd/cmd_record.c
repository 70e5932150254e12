/* cmd_record.c - `cgjit record`: argv -> record_args (record.c), the plan (record_plan.c),
 * then valgrind run with the runtime's flags (record_run.c), the maps and dumps moved beside
 * the profiles (record_collect.c), and every profile augmented (augment_run()). Messages,
 * the progress line and the exit status (docs/record.md 5). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "augment/augment.h"
#include "augment/augment_stats.h"
#include "augment/augment_stats_text.h"
#include "cmd/cmd.h"
#include "cmd/cmd_progress.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/pathmap.h"
#include "record/record.h"
#include "record/record_collect.h"
#include "record/record_plan.h"
#include "record/record_run.h"
#include "record/record_shim.h"
#include "record/record_text.h"

extern char **environ;

static const char usage_line[] =
	"usage: cgjit record [-d DIR] [--runtime NAME] [--symbols map|jitdump] [-q|-v]\n"
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
	"  -q, --quiet              only the final lines, which name the outputs (and errors)\n"
	"  -v, --verbose            valgrind's banner, its whole command line, every file moved,\n"
	"                           augment's whole summary\n"
	"      --no-augment         record and collect only\n"
	"      --root DIR           paths under DIR in JIT names become relative to it (default:\n"
	"                           the current directory, where COMMAND runs)\n"
	"      --no-root            JIT names keep the paths the runtime wrote\n"
	"  -h, --help               this text\n"
	"\n"
	"Every other option before the command is valgrind's (--name=value), passed on after\n"
	"record's own --tool=callgrind --dump-instr=yes --trace-children=yes, so that yours win.\n"
	"'--' ends the options; without it the first argument not starting with '-' does.\n";

/* One run of record: its options, plan and where its messages stand. */
struct rec {
	const struct record_args *a;
	const struct record_plan *plan;
	const char *stage;             /* the run's own directory, where callgrind writes */
	struct timespec since;         /* when the run began (record_now()) */
	int progress;                  /* a progress line may be drawn: stderr is a terminal */
	int shown;                     /* one is on the terminal now, to clear before a line */
};

/* Clears the progress line, if one is shown, so that the next line starts clean. */
static void clear_line(struct rec *r)
{
	if (!r->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	r->shown = 0;
}

/* "cgjit: " FMT... and a newline on stderr, the progress line cleared first. */
static void say(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct rec *r, const char *fmt, ...)
{
	clear_line(r);
	va_list ap;
	va_start(ap, fmt);
	fputs("cgjit: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

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
	if (!plan->det[0] && !plan->det_yours[0] && !strcmp(plan->runtime, "luajit")) {
		/* one thread, no clock in the JIT's decisions (docs/luajit.md) */
		snprintf(out, outsz, " (deterministic: nothing to add for luajit)");
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

/* The step that starts the run: "cgjit: running [ENV] COMMAND FLAGS ARGS under callgrind
 * (deterministic: ...)"; with -v valgrind's whole command line. */
static void print_command(struct rec *r, char *const *vargv)
{
	const struct record_plan *plan = r->plan;
	fputs("cgjit: running", stderr);
	for (size_t i = 0; plan->env[i]; i++)
		fprintf(stderr, " %s", plan->env[i]);
	/* the program's own command line: COMMAND, PLAN's flags and its arguments end valgrind's
	 * (record_valgrind_argv()) */
	size_t n = 0, nflags = 0;
	while (vargv[n])
		n++;
	while (plan->flags[nflags])
		nflags++;
	size_t first = r->a->verbose ? 0 : n - r->a->ncmd - nflags;
	for (size_t i = first; i < n; i++)
		fprintf(stderr, " %s", vargv[i]);
	char note[1024];
	det_note(plan, note, sizeof(note));
	fprintf(stderr, "%s%s\n", r->a->verbose ? "" : " under callgrind", note);
}

/* record_spawn_wait()'s tick: the progress line, redrawn in place. CTX is the struct rec. */
static void tick(void *ctx, unsigned seconds)
{
	struct rec *r = ctx;
	struct record_progress p = { .seconds = seconds };
	record_progress_scan(r->stage, &r->since, &p);
	struct winsize ws;
	size_t width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
	char line[512];
	record_progress_line(&p, width, line, sizeof(line));
	/* the program's own output may follow it on the same row: it is not ours to hold */
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	r->shown = 1;
}

/* record_spawn_wait()'s note that the program's own process has ended and others of the
 * run still run: said, since cgjit then waits for them (their profiles are written when
 * they end). CTX is the struct rec. */
static void say_waiting(void *ctx, const long *pids, size_t n)
{
	struct rec *r = ctx;
	if (r->a->quiet)
		return;
	clear_line(r);
	fprintf(stderr, "cgjit: '%s' has ended; waiting for the processes it started that still "
		"run", r->a->cmd[0]);
	for (size_t i = 0; i < n && i < 10; i++)
		fprintf(stderr, "%s%ld", i ? ", " : " (pid ", pids[i]);
	fprintf(stderr, "%s: callgrind writes their profiles when they end (SIGTERM or SIGINT to "
		"cgjit passes it on to them)\n", n > 10 ? ", ...)" : n ? ")" : "");
}

/* "node wrote no jitdump: expected /dir/jit-PID.dump (from --perf-prof)". */
static void no_symbols_message(struct rec *r, long pid)
{
	const struct record_plan *plan = r->plan;
	if (!strcmp(plan->runtime, "none")) {
		say(r, "no process of the run wrote a perf map or jitdump (looked for "
		    "/tmp/perf-PID.map and jit-PID.dump in /tmp and the current directory)");
		return;
	}
	char cwd[PATH_MAX];
	const char *dir = plan->where == RECORD_IN_CWD && getcwd(cwd, sizeof(cwd)) ? cwd : "/tmp";
	int dump = plan->writes == RECORD_SYMBOLS_JITDUMP;
	say(r, "%s wrote no perf map or jitdump: expected %s/%s-%ld.%s (from %s) for '%s', pid %ld",
	    plan->runtime, dir, dump ? "jit" : "perf", pid, dump ? "dump" : "map", plan->made_by,
	    r->a->cmd[0], pid);
}

/* The final line of a profile not augmented (--no-augment): it and its maps and dumps. */
static void say_recorded(struct rec *r, const struct record_profile *p)
{
	char files[2048] = "";
	size_t n = 0;
	for (size_t k = 0; k < p->nsymfiles && n < sizeof(files); k++)
		n += (size_t)snprintf(files + n, sizeof(files) - n, "%s%s",
				      k + 1 == p->nsymfiles && k ? " and " : k ? ", " : "", p->symfiles[k]);
	say(r, "wrote %s with %s (not augmented: --no-augment)", p->path, files);
}

/* Augments each profile with its process's maps and dumps: one line each ("cgjit: wrote
 * ..."), the final lines, which -q keeps; with -v augment's whole summary. Returns 0, or
 * -1 if one failed or the program's own process wrote none. */
static int augment_all(struct rec *r, const struct record_found *f, long main_pid)
{
	const struct record_args *a = r->a;
	int rc = 0, any = 0;
	for (size_t i = 0; i < f->nprofiles; i++)
		any |= f->profiles[i].nsymfiles > 0;
	/* names the same in every checkout: relative to the command's directory (README) */
	struct pathmap *paths = pathmap_new();
	struct diag pd = { 0 };
	if (!a->no_root && pathmap_add_root(paths, a->root ? a->root : ".", &pd) < 0) {
		fprintf(stderr, "cgjit: %s\n", pd.msg);
		pathmap_free(paths);
		return -1;
	}
	for (size_t i = 0; i < f->nprofiles; i++) {
		const struct record_profile *p = &f->profiles[i];
		if (!p->nsymfiles) {
			/* A child that is no JIT (a shell, a compiler) has none: that is fine. */
			if (p->pid == main_pid && (strcmp(r->plan->runtime, "none") || !any)) {
				no_symbols_message(r, p->pid);
				rc = -1;
			} else if (!a->quiet) {
				say(r, "%s: process %ld wrote no perf map or jitdump, not augmented", p->path,
				    p->pid);
			}
			continue;
		}
		if (a->no_augment) {
			say_recorded(r, p);
			continue;
		}
		struct augment_opts o;
		augment_opts_init(&o);
		o.profile = p->path;
		o.symfiles = (const char *const *)p->symfiles;
		o.nsymfiles = p->nsymfiles;
		o.paths = paths;
		struct cmd_progress prog;
		if (cmd_progress_init(&prog, p->path) && r->progress) {
			o.progress = cmd_progress_update;
			o.progress_ctx = &prog;
		}
		struct augment_stats rep;
		struct diag d = { 0 };
		xalloc_map_large_blocks();   /* as cgjit augment: the arrays moved, not copied */
		int ok = augment_run(&o, &rep, &d) == 0;
		if (o.progress)
			cmd_progress_end(&prog);
		if (!ok) {
			say(r, "augmenting %s failed: %s", p->path, d.msg);
			rc = -1;
		} else if (a->verbose) {
			augment_stats_text_write(&rep, stderr);
		} else {
			char line[2048];
			record_summary_line(&rep, line, sizeof(line));
			say(r, "wrote %s", line);
		}
	}
	pathmap_free(paths);
	return rc;
}

/* The collection step in one line: "collected 1 profile and 1 jitdump into DIR (moved
 * ./jit-1234.dump)"; with -v every file moved on a line of its own. A file left where it
 * is (its name taken in DIR) is always said. */
static void say_collected(struct rec *r, const struct record_found *f, const char *dir)
{
	for (size_t i = 0; i < f->nmoved; i++) {
		const struct record_move *m = &f->moved[i];
		if (m->kept)
			say(r, "kept %s where it is: a file of that name is already in %s", m->from, dir);
		else if (r->a->verbose)
			say(r, "moved %s -> %s", m->from, m->to);
	}
	if (r->a->verbose || r->a->quiet)
		return;
	size_t maps = 0, dumps = 0;
	for (size_t i = 0; i < f->nprofiles; i++)
		for (size_t k = 0; k < f->profiles[i].nsymfiles; k++) {
			const char *s = f->profiles[i].symfiles[k];
			size_t len = strlen(s);
			maps += len > 4 && !strcmp(s + len - 4, ".map");
			dumps += len > 5 && !strcmp(s + len - 5, ".dump");
		}
	char what[256], moved[1024] = "";
	size_t n = (size_t)snprintf(what, sizeof(what), "%zu profile%s", f->nprofiles,
				    f->nprofiles == 1 ? "" : "s");
	if (maps)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%zu perf map%s", dumps ? ", " : " and ",
				      maps, maps == 1 ? "" : "s");
	if (dumps && n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, " and %zu jitdump%s", dumps, dumps == 1 ? "" : "s");
	/* the files the run left elsewhere (/tmp, the current directory), by where they were */
	size_t shown = 0, m = 0;
	for (size_t i = 0; i < f->nmoved; i++) {
		if (f->moved[i].kept || f->moved[i].profile)
			continue;
		if (shown < 3 && m < sizeof(moved))
			m += (size_t)snprintf(moved + m, sizeof(moved) - m, "%s%s", shown ? ", " : " (moved ",
					      f->moved[i].from);
		shown++;
	}
	if (shown > 3 && m < sizeof(moved))
		m += (size_t)snprintf(moved + m, sizeof(moved) - m, " and %zu more", shown - 3);
	if (shown && m < sizeof(moved))
		snprintf(moved + m, sizeof(moved) - m, ")");
	say(r, "collected %s into %s%s", what, dir, moved);
}

/* Collects and augments after the run. Returns 0, or 1 after a message. */
static int finish(struct rec *r, const char *dir, long pid)
{
	struct record_found f;
	struct diag d = { 0 };
	int rc = 0;
	if (record_collect(r->stage, dir, &r->since, &f, &d) < 0) {
		say(r, "%s", d.msg);
		rc = 1;
	}
	if (!f.nprofiles) {
		say(r, "valgrind wrote no profile in '%s'", dir);
		record_found_free(&f);
		return 1;
	}
	say_collected(r, &f, dir);
	for (size_t i = 0; i < f.nempty; i++)
		say(r, "process %ld left an empty profile (it was killed before callgrind could write "
		    "it, by SIGKILL?): nothing to collect or augment", f.empty[i]);
	if (augment_all(r, &f, pid) < 0)
		rc = 1;
	record_found_free(&f);
	return rc;
}

/* Refuses a command that is a version manager's shim or a script, whose every process
 * valgrind would profile. Returns 0, or 2 after the message. */
static int check_shim(const struct record_args *a, const char *path)
{
	struct record_shim_file f;
	struct record_shim s;
	struct diag d = { 0 };
	if (record_command_head(path, &f) < 0 || record_shim_check(a, &f, &s, &d) == 0)
		return 0;
	fprintf(stderr, "cgjit: %s\n", d.msg);
	return 2;
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
	int rc = check_shim(a, path);
	if (rc)
		return rc;
	struct diag d = { 0 };
	char agent[PATH_MAX];
	char lua_agent[PATH_MAX];
	int has_agent = record_find_jvmti_agent(agent, sizeof(agent)) == 0;
	int has_lua = record_find_luajit_agent(lua_agent, sizeof(lua_agent)) == 0;
	struct record_plan_env env = { (const char *const *)environ, has_agent ? agent : NULL,
				       record_probe_version, NULL, has_lua ? lua_agent : NULL };
	if (record_plan_make(a, &env, plan, &d) < 0) {
		fprintf(stderr, "cgjit: %s\n", d.msg);
		return rt ? 1 : 2;   /* not knowing the runtime is a usage error */
	}
	return 0;
}

/* The program's end, one line: its status and how long it ran under valgrind. */
static void say_ended(struct rec *r, int status, const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long s = (long)(t1.tv_sec - t0->tv_sec);
	if (WIFSIGNALED(status))
		say(r, "'%s' was killed by signal %d after %ld s (under valgrind)", r->a->cmd[0],
		    WTERMSIG(status), s);
	else
		say(r, "'%s' exited with status %d after %ld s (under valgrind)%s", r->a->cmd[0],
		    record_exit_code(status), s, record_exit_code(status) == 127 ?
		    ": 127 is a shell's 'command not found'" : "");
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
	struct rec r = { .a = a, .plan = plan, .stage = stage,
			 .progress = !a->quiet && isatty(STDERR_FILENO) };
	char **vargv = record_valgrind_argv(a, plan, stage);
	if (!a->quiet)
		print_command(&r, vargv);
	record_now(&r.since);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long pid = 0;
	int status = 0, rc;
	struct diag d = { 0 };
	struct record_watch w = { say_waiting, r.progress ? tick : NULL, &r };
	if (record_spawn_wait(vargv, plan->env, &w, &pid, &status, &d) < 0) {
		say(&r, "%s", d.msg);
		rc = 1;
	} else {
		/* The program's failure is the news; ours only when it succeeded. */
		int prog = record_exit_code(status);
		if (!a->quiet)
			say_ended(&r, status, &t0);
		rc = finish(&r, dir, pid);
		if (prog)
			rc = prog;
	}
	clear_line(&r);
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
