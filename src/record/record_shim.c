/* record_shim.c - `cgjit record` refuses a command that is a version manager's shim or a
 * script rather than the runtime's program (docs/record.md): the #! line, the shims
 * directory and its manager, volta's shim program, and the message that says what to give
 * instead. Pure: reads the bytes the caller read; owns nothing. */
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "record/record.h"
#include "record/record_plan.h"
#include "record/record_shim.h"

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

int record_shim_check(const struct record_args *a, const struct record_shim_file *f,
		      struct record_shim *s, struct diag *d)
{
	memset(s, 0, sizeof(*s));
	const char *path = f->path, *real = f->real, *head = f->head;
	size_t len = f->len;
	const char *rt = record_runtime_of(a->cmd[0]);
	if (a->runtime || !rt)
		return 0;
	const char *name = record_base_name(a->cmd[0]);
	if (!strcmp(record_base_name(real), "volta-shim")) {
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
