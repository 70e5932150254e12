/* symbol_files.c - every perf map and jitdump of a run into the symtab (augment.c calls it
 * when the profile's events: line comes, before any cost): the files named by the user, or
 * those the profile's pid: line points to. Each input is opened once and told apart by
 * content, so that pipes, FIFOs and stdin work. Fills the report's sources and skipped
 * files; owns nothing past the call. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "augment/augment_stats.h"
#include "augment/symbol_files.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/auditlog_symbols.h"
#include "jit/elf_files.h"
#include "jit/jitdump.h"
#include "jit/perfmap.h"
#include "jit/symtab.h"

struct loader {
	const struct symbol_files_opts *o;
	struct symtab *st;
	struct elf_files *ef;
	struct augment_stats *rep;
	struct diag *d;
	size_t nread;            /* files read */
};

enum kind { KIND_MAP, KIND_JITDUMP, KIND_AUDITLOG };

/* What IN is from its first bytes (after zstd decompression): a jitdump (its magic), a
 * RaptorJIT auditlog (a msgpack map keyed "type"), else a perf map; -1 on error. Peeks, so
 * that the reader then gets the stream from its first byte. */
static int kind_of(struct input *in, struct diag *d)
{
	unsigned char m[INPUT_PEEK_MAX];   /* 4 bytes tell the three apart */
	ssize_t got = input_peek(in, m, sizeof(m), d);
	if (got < 0)
		return -1;
	if (got >= 4 && jitdump_is_magic(m))
		return KIND_JITDUMP;
	return auditlog_is_log(m, (size_t)got) ? KIND_AUDITLOG : KIND_MAP;
}

static struct augment_stats_source *add_source(struct augment_stats *rep, const char *path, const char *kind)
{
	if (rep->nsources == AUGMENT_STATS_MAX_SOURCES)
		return NULL;
	struct augment_stats_source *rs = &rep->sources[rep->nsources++];
	memset(rs, 0, sizeof(*rs));
	snprintf(rs->path, sizeof(rs->path), "%s", path);
	snprintf(rs->kind, sizeof(rs->kind), "%s", kind);
	return rs;
}

/* A RaptorJIT auditlog's traces, with their code in ELF files as a jitdump's. Their object
 * is named LOG.auditlog (the ELF files LOG.auditlog.elf, LOG.auditlog.gN.elf), which `cgjit
 * report` knows for JIT code as it knows jit-PID.dump: a log's own name can be anything. */
static int load_auditlog(struct loader *u, const char *path, struct input *in)
{
	struct auditlog_symbols_stats as;
	size_t first = symtab_count(u->st);
	const char *base = strcmp(path, "-") ? path : "stdin";
	size_t n = strlen(base);
	n = input_name_stem(base, n);
	int named = n >= 9 && !strncmp(base + n - 9, ".auditlog", 9);
	char *object = xmalloc(n + 10);
	snprintf(object, n + 10, "%.*s%s", (int)n, base, named ? "" : ".auditlog");
	int rc = auditlog_symbols_read(u->st, in, object, &as, u->d) < 0 ||
		 (!u->o->no_elf && elf_files_write(u->ef, u->st, object, first, AUDITLOG_SYMBOLS_ELF_MACHINE,
						   u->d) < 0) ? -1 : 0;
	free(object);
	if (rc < 0)
		return -1;
	struct augment_stats_source *rs = add_source(u->rep, path, "auditlog");
	if (rs) {
		rs->symbols = as.log.traces;
		rs->al = as;
		rs->is_auditlog = 1;
	}
	return 0;
}

/* Reads the perf map, jitdump or auditlog PATH, told apart by content. IN is PATH already open
 * (discover()), or NULL to open it here. Either way the file is opened once and read from
 * its first byte, so pipes, FIFOs and stdin work; closed here. */
static int load_one(struct loader *u, const char *path, struct input *in)
{
	if (!in && !(in = input_open(path, u->d)))
		return -1;
	int rc = -1, kind = kind_of(in, u->d);
	if (kind == KIND_AUDITLOG) {
		rc = load_auditlog(u, path, in);
	} else if (kind == KIND_JITDUMP) {
		struct jitdump_stats js;
		size_t first = symtab_count(u->st);
		/* ob= is the dump's path; elf_files_write() points the functions with code at their
		 * ELF file */
		if (jitdump_read_input(u->st, in, path, u->o->debug_bias, &js, u->d) == 0 &&
		    (u->o->no_elf || elf_files_write(u->ef, u->st, path, first, js.elf_mach, u->d) == 0)) {
			struct augment_stats_source *rs = add_source(u->rep, path, "jitdump");
			if (rs) {
				rs->symbols = js.loads - js.bad_loads - js.zero_size;
				rs->skipped = js.zero_size;
				rs->jd = js;
				rs->is_jitdump = 1;
			}
			rc = 0;
		}
	} else if (kind == KIND_MAP) {
		struct perfmap_stats ps;
		if (perfmap_read_input(u->st, in, path, u->o->max_line, &ps, u->d) == 0) {
			/* a dump or map the runtime never wrote to (killed before it flushed) */
			struct augment_stats_source *rs = add_source(u->rep, path, ps.lines ? "perf-map" : "empty");
			if (rs) {
				rs->lines = ps.lines;
				rs->symbols = ps.entries;
				rs->skipped = ps.zero_size;
				rs->unterminated = ps.unterminated;
			}
			rc = 0;
		}
	}
	u->nread += rc == 0;
	input_close(in);
	return rc;
}

__attribute__((format(printf, 3, 4)))
static void skip_found(struct loader *u, const char *path, const char *fmt, ...)
{
	struct augment_stats *r = u->rep;
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (r->nskipped == AUGMENT_STATS_MAX_SKIPPED)
		return;
	snprintf(r->skipped[r->nskipped], sizeof(r->skipped[0]), "%.190s: %s", path, why);
	for (unsigned i = 0; i < r->nskipped; i++)
		if (!strcmp(r->skipped[i], r->skipped[r->nskipped]))
			return;   /* the same candidate twice (the profile's directory is ".") */
	r->nskipped++;
}

/* Opens PATH, found from the pid: line rather than named by the user, if it is safe to
 * read: a regular file owned by the user running cgjit or by root, as perf trusts
 * /tmp/perf-PID.map (tools/perf/util/symbol.c dso__load), since anyone can create files in
 * /tmp. Opened without blocking, so that a FIFO under the name cannot stall the run, and
 * checked on that descriptor, which is then read. Returns 1 with *IN set, 0 when PATH does
 * not exist or was skipped (the reason goes to the summary), -1 with the diag set. */
static int open_found(struct loader *u, const char *path, struct input **in)
{
	*in = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			skip_found(u, path, "cannot open: %s", strerror(errno));
		return 0;
	}
	struct stat st;
	int flags;
	if (fstat(fd, &st) < 0 || (flags = fcntl(fd, F_GETFL)) < 0) {
		skip_found(u, path, "cannot read its status: %s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		skip_found(u, path, "not a regular file (%s)",
			   S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" :
			   S_ISSOCK(st.st_mode) ? "a socket" : "a device");
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		skip_found(u, path, "owned by uid %lu, not by you (uid %lu) or root",
			   (unsigned long)st.st_uid, (unsigned long)geteuid());
	} else if (fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		skip_found(u, path, "cannot read it: %s", strerror(errno));
	} else {
		*in = input_open_fd(fd, path, u->d);
		return *in ? 1 : -1;
	}
	close(fd);
	return 0;
}

/* With no symbol file named: perf-PID.map in --map-dir, or else beside the profile and then
 * in /tmp; and jit-PID.dump in the
 * profile's directory, the current directory, $JITDUMPDIR and /tmp (where node, wasmtime,
 * CPython and the JVMTI agents put them: docs/formats.md 5.9). perf's own copies under
 * ~/.debug/jit/ are not searched: `perf inject` writes them, not the runtimes. */
static int discover(struct loader *u)
{
	const struct symbol_files_opts *o = u->o;
	uint64_t pid = o->pid;
	if (!pid)
		return diag_at(u->d, o->profile, 0,
			       "no perf map or jitdump given and the profile has no 'pid:' line to find "
			       "them by; name them after the profile");
	char path[4096];
	int found = 0, r;
	struct input *in;
	char dirs[5][2048];
	size_t nd = 0;
	const char *slash = strrchr(o->profile, '/');
	snprintf(dirs[nd++], sizeof(dirs[0]), "%.*s", slash ? (int)(slash - o->profile) : 1,
		 slash ? o->profile : ".");
	/* the map: --map-dir if given; else beside the profile (where `cgjit record` and
	 * stored samples keep it), then /tmp, where runtimes write it */
	const char *map_dirs[2] = { o->map_dir ? o->map_dir : dirs[0], o->map_dir ? NULL : "/tmp" };
	for (size_t i = 0; i < 2 && map_dirs[i] && !found; i++) {
		snprintf(path, sizeof(path), "%.2047s/perf-%llu.map", map_dirs[i], (unsigned long long)pid);
		r = open_found(u, path, &in);
		if (r < 0 || (r > 0 && load_one(u, path, in) < 0))
			return -1;
		found += r;
	}
	snprintf(dirs[nd++], sizeof(dirs[0]), ".");
	if (getenv("JITDUMPDIR"))
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", getenv("JITDUMPDIR"));
	snprintf(dirs[nd++], sizeof(dirs[0]), "%s", o->map_dir ? o->map_dir : "/tmp");
	for (size_t i = 0; i < nd; i++) {
		snprintf(path, sizeof(path), "%.2047s/jit-%llu.dump", dirs[i], (unsigned long long)pid);
		r = open_found(u, path, &in);
		if (r < 0 || (r > 0 && load_one(u, path, in) < 0))
			return -1;
		if (r > 0) {
			found++;
			break;
		}
	}
	if (!found && u->rep->nskipped)
		return diag_at(u->d, o->profile, 0,
			       "no perf map or jitdump given, and what the pid: line points to was skipped: "
			       "%s%s; name a file after the profile to use it anyway",
			       u->rep->skipped[0], u->rep->nskipped > 1 ? " (and more)" : "");
	if (!found)
		return diag_at(u->d, o->profile, 0,
			       "no perf map or jitdump given, and neither perf-%llu.map (%s%s) nor "
			       "jit-%llu.dump (in the profile's directory, the current one, $JITDUMPDIR "
			       "or %s) exists", (unsigned long long)pid, o->map_dir ? o->map_dir :
			       "in the profile's directory or ", o->map_dir ? "" : "/tmp",
			       (unsigned long long)pid, o->map_dir ? o->map_dir : "/tmp");
	return 0;
}

int symbol_files_load(const struct symbol_files_opts *o, struct symtab *st, struct elf_files *ef,
		      struct augment_stats *rep, size_t *nread, struct diag *d)
{
	struct loader lu = { o, st, ef, rep, d, 0 };
	struct loader *u = &lu;
	if (o->npaths == 0) {
		if (discover(u) < 0)
			return -1;
	}
	/* stdin can be read once: by the profile or by one symbol file */
	int stdin_used = !strcmp(o->profile, "-");
	for (size_t i = 0; i < o->npaths; i++) {
		if (!strcmp(o->paths[i], "-") && stdin_used++)
			return diag_at(u->d, "-", 0, "stdin is already read as the %s; name this symbol "
				       "file by its path", strcmp(o->profile, "-") ? "symbol file before it" :
				       "profile");
		if (load_one(u, o->paths[i], NULL) < 0)
			return -1;
	}
	symtab_finish(u->st);
	const struct symtab_stats *ss = symtab_stats(u->st);
	u->rep->symbols = ss->symbols;
	u->rep->map_overlaps = ss->shadowed;
	u->rep->map_conflicts = ss->shadowed_other;
	u->rep->map_superseded = ss->superseded;
	u->rep->map_duplicates = ss->duplicates;
	u->rep->paths_mapped = ss->paths_mapped;
	u->rep->paths_mapped_files = ss->paths_mapped_files;
	*nread = u->nread;
	return 0;
}
