/* record_shim.h - whether `cgjit record`'s command is the runtime's program or a version
 * manager's shim or a script that would start it (every process of which valgrind would
 * profile). Pure: the caller reads the command's file (record_command_head()). */
#ifndef CGJIT_RECORD_SHIM_H
#define CGJIT_RECORD_SHIM_H

#include <limits.h>
#include <stddef.h>

struct diag;
struct record_args;

/* The command's file, as record_command_head() (record_run.h) reads it. */
struct record_shim_file {
	const char *path;         /* where it was found (record_which()); the caller's */
	char real[PATH_MAX];      /* PATH with the links resolved */
	char head[256];           /* its first bytes, LEN of them */
	size_t len;
};

/* A command that is a version manager's shim or a script, not the runtime's program. */
struct record_shim {
	char manager[32];         /* "pyenv", "asdf", "volta"...; "" for a plain script */
	char interp[128];         /* its #! line without "#!" ("/usr/bin/env bash"), or "" */
};

/* Checks, before the run, that A's command is the runtime's program and not a shim or a
 * script that would start it: under valgrind --trace-children=yes every process the shim
 * runs (bash, pyenv, ...) is profiled, and its counts are added to the program's. F is the
 * command's file. A script is a file starting with "#!"; a shim is a script in a directory
 * named "shims" (pyenv, rbenv, nodenv, jenv, asdf, mise: the manager named by the directory
 * above it), or volta's volta-shim program. Only a runtime told by the command's name is
 * checked: --runtime NAME says that the command is what it should be (a wrapper that passes
 * the flags on). Returns 0 when it is a program (or not checked), or -1 with S filled and D
 * set to the message that names it and says what to give instead. */
int record_shim_check(const struct record_args *a, const struct record_shim_file *f,
		      struct record_shim *s, struct diag *d);

#endif
