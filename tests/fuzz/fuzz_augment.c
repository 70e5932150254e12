/* fuzz_augment.c - libFuzzer target for the whole augment pipeline (augment_run(): symbol
 * loading, resolution, rewriting, the writer, the ELF writer, the totals check).
 * The input is split at lines "%%": the first piece is the profile, each further piece a
 * symbol file (perf map or jitdump, told apart by content as augment does). With no "%%"
 * line there is no symbol file and augment looks for perf-PID.map in the temporary
 * directory. If any separator line is "%%elf", ELF files of jitdump code are written
 * (into the temporary directory, removed after each run); otherwise --no-elf.
 * The pieces are written to a per-process directory in /dev/shm (or $TMPDIR, /tmp). A run
 * that succeeds must have written a profile that the reader accepts again (ids defined
 * before use, costs adding up to totals:), so the output is read back. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "augment/augment.h"
#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "fuzz.h"
#include "core/io.h"
#include "jit/jitdump.h"
#include "augment/augment_stats.h"

enum { MAX_SYMFILES = 8 };

static char tmpdir[512];

static void clear_dir(const char *dirpath)
{
	DIR *dir = opendir(dirpath);
	if (!dir)
		return;
	struct dirent *e;
	char path[1024];
	while ((e = readdir(dir)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
		unlink(path);
	}
	closedir(dir);
}

static void remove_dir(void)
{
	clear_dir(tmpdir);
	rmdir(tmpdir);
}

/* A crash ends the process without atexit(): remove the directories of such processes
 * (named by their pid), so that a long -fork run does not fill /dev/shm. */
static void remove_stale(const char *base)
{
	DIR *dir = opendir(base);
	if (!dir)
		return;
	struct dirent *e;
	char path[1024];
	while ((e = readdir(dir)) != NULL) {
		char *end;
		if (strncmp(e->d_name, "cgjit-fuzz.", 11) != 0)
			continue;
		long pid = strtol(e->d_name + 11, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		clear_dir(path);
		rmdir(path);
	}
	closedir(dir);
}

static void make_dir(void)
{
	const char *bases[] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || access(bases[i], W_OK) != 0)
			continue;
		remove_stale(bases[i]);
		snprintf(tmpdir, sizeof(tmpdir), "%s/cgjit-fuzz.%ld", bases[i], (long)getpid());
		if (mkdir(tmpdir, 0700) == 0 || errno == EEXIST) {
			atexit(remove_dir);
			return;
		}
	}
	perror("fuzz_augment: cannot create a temporary directory");
	abort();
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

/* The next line "%%" or "%%elf" at or after P: its start (the byte after the "\n" before
 * it, or DATA itself), and where the piece after it starts. NULL if none. */
static const uint8_t *next_sep(const uint8_t *data, const uint8_t *p, const uint8_t *end,
			       const uint8_t **after, int *elf)
{
	for (const uint8_t *q = p; q < end; q++) {
		if (q != data && q[-1] != '\n')
			continue;
		size_t left = (size_t)(end - q);
		if (left >= 3 && !memcmp(q, "%%\n", 3)) {
			*after = q + 3;
			return q;
		}
		if (left >= 6 && !memcmp(q, "%%elf\n", 6)) {
			*after = q + 6;
			*elf = 1;
			return q;
		}
	}
	return NULL;
}

/* 1 if MSG is "PROFILE:LINE: internal error: ..." (not merely quoting those words from the
 * input). */
static int is_internal_error(const char *msg, const char *profile)
{
	size_t n = strlen(profile);
	if (strncmp(msg, profile, n) != 0 || msg[n] != ':')
		return 0;
	const char *p = msg + n + 1;
	while (*p >= '0' && *p <= '9')
		p++;
	return strncmp(p, ": internal error: ", 18) == 0;
}

/* Reads the output back; aborts with the reader's message if it refuses it. */
static void check_output(const char *path)
{
	struct diag d = { 0 };
	struct input *in = input_open(path, &d);
	FUZZ_CHECK(in != NULL);
	/* Output lines are input lines with names replaced by symbol names (each shorter
	 * than a map line): well within this. */
	struct cg_reader *r = cg_reader_new(in, 1 << 24);
	struct cg_record rec;
	int rc;
	while ((rc = cg_reader_next(r, &rec, &d)) > 0)
		;
	if (rc != 0)
		fprintf(stderr, "fuzz_augment: the output does not read back: %s\n", d.msg);
	FUZZ_CHECK(rc == 0);
	cg_reader_free(r);
	input_close(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!tmpdir[0])
		make_dir();
	clear_dir(tmpdir);
	const uint8_t *end = data + size, *after = NULL;
	int elf = 0;
	const uint8_t *sep = next_sep(data, data, end, &after, &elf);
	char profile[600];
	snprintf(profile, sizeof(profile), "%s/callgrind.out.fuzz", tmpdir);
	write_file(profile, data, sep ? (size_t)(sep - data) : size);

	char paths[MAX_SYMFILES][600];
	const char *symfiles[MAX_SYMFILES];
	size_t nsym = 0;
	while (sep && nsym < MAX_SYMFILES) {
		const uint8_t *start = after;
		sep = next_sep(data, start, end, &after, &elf);
		snprintf(paths[nsym], sizeof(paths[nsym]), "%s/sym%zu", tmpdir, nsym);
		write_file(paths[nsym], start, (size_t)((sep ? sep : end) - start));
		symfiles[nsym] = paths[nsym];
		nsym++;
	}

	struct augment_opts o;
	memset(&o, 0, sizeof(o));
	o.profile = profile;
	o.symfiles = symfiles;
	o.nsymfiles = nsym;
	char output[600];
	snprintf(output, sizeof(output), "%s/out", tmpdir);
	o.output = output;
	o.map_dir = tmpdir;
	o.debug_bias = JITDUMP_BIAS_AUTO;
	o.no_elf = !elf;
	o.elf_dir = tmpdir;
	o.max_line = 1 << 20;
	/* Static: struct augment_stats is large (64 sources of 512-byte paths). */
	static struct augment_stats rep;
	struct diag d = { 0 };
	int rc = augment_run(&o, &rep, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	/* The output's self costs are checked against the input's inside augment_run
	 * ("PROFILE:LINE: internal error: ..."): that is a bug, never bad input. */
	FUZZ_CHECK(!is_internal_error(d.msg, profile));
	if (rc == 0) {
		FUZZ_CHECK(rep.resolved <= rep.pseudo_functions);
		check_output(output);
	}
	return 0;
}
