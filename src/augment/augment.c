/* augment.c - the run (README "What augment does"): open the outputs, read the profile's
 * first header up to events:, load the symbol files its pid: line points to (or those
 * named), stream the body part by part through resolve.c, rewrite.c and moves.c, verify
 * each part's totals, and commit every output or none. Owns the run: the input, the
 * outputs, the reader, the writer, the symbols and the stages of the stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment/augment.h"
#include "augment/augment_stats.h"
#include "augment/augment_stats_yaml.h"
#include "augment/moves.h"
#include "augment/resolve.h"
#include "augment/rewrite.h"
#include "augment/stream.h"
#include "augment/symbol_files.h"
#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/io_pump.h"
#include "core/xalloc.h"
#include "jit/elf_files.h"
#include "jit/jitdump.h"
#include "jit/symtab.h"

struct run {
	const struct augment_opts *o;
	struct augment_stats *rep;
	struct diag *d;
	char *defout;                /* the output's path when -o was not given */
	struct input *in;
	struct output *out, *stats;  /* the profile and --stats, until committed */
	const char **inputs;         /* every input, for output_check_clashes() */
	size_t ninputs;
	struct elf_files *ef;
	struct cg_reader *r;
	struct io_pump *pump;        /* the reads' and writes' shared thread, or NULL */
	size_t nsymfiles;            /* symbol files read (the symtab's sources) */
	struct stream s;             /* its symtab and writer are the run's */
	struct resolver res;
	struct moves mv;
	struct rewrite rw;
};

/* ---- the stream ---- */

static void begin_part(struct run *u)
{
	rewrite_end_part(&u->rw);
	cgw_part_begin(u->s.w);
	resolve_begin_part(&u->res);
	moves_reset(&u->mv);
	u->rep->parts++;
}

static void on_events(struct run *u, const struct cg_record *rec)
{
	stream_layout(&u->s, u->r);
	enum cg_pos_kind kinds[CG_MAX_POS];
	for (unsigned i = 0; i < u->s.npos; i++)
		kinds[i] = cg_reader_pos_kind(u->r, i);
	cgw_layout(u->s.w, u->s.npos, kinds, u->s.nevents);
	moves_reset(&u->mv);
	char note[600];
	int n = snprintf(note, sizeof(note),
			 "# cgjit: %llu JIT symbols from %s%s; JIT functions are named from them",
			 (unsigned long long)symtab_stats(u->s.st)->symbols,
			 symtab_source(u->s.st, 0)->path, u->nsymfiles > 1 ? " and more" : "");
	cgw_raw(u->s.w, note, (size_t)(n < (int)sizeof(note) ? n : (int)sizeof(note) - 1));
	cgw_raw(u->s.w, rec->text, rec->len);
}

/* The end of a part: the held pieces written, then the check that the output's self
 * costs are the input's (docs/formats.md 6.9). */
static int on_totals(struct run *u, const struct cg_record *rec)
{
	rewrite_end_part(&u->rw);
	if (cgw_number_new(u->s.w) < 0)
		return diag_at(u->d, u->o->profile, rec->line,
			       "the part's function ids reach 2^64 - 1: none is left for a function "
			       "without one (one cgjit adds for moved or unsymbolised code, or one the "
			       "input names without an id)");
	if (moves_end_part(&u->mv) < 0)
		return diag_at(u->d, u->o->profile, rec->line,
			       "the inclusive costs of the calls that moved out of one block add "
			       "up to more than 2^64 (a synthetic call's cost cannot be written)");
	const uint64_t *in = cg_reader_part_sums(u->r), *out = cgw_sums(u->s.w);
	for (unsigned i = 0; i < u->s.nevents; i++) {
		if (u->s.ev[i])
			u->s.ev[i]->total += in[i];
		if (!u->o->no_verify && in[i] != out[i])
			return diag_at(u->d, u->o->profile, rec->line,
				       "internal error: part %u's output self cost for %s is %llu, the input's "
				       "is %llu; nothing was written", cg_reader_part_count(u->r),
				       cg_reader_event_name(u->r, i), (unsigned long long)out[i],
				       (unsigned long long)in[i]);
	}
	cgw_raw(u->s.w, rec->text, rec->len);
	return 0;
}

static int dispatch(struct run *u, const struct cg_record *rec)
{
	for (unsigned i = 0; i < rec->ndefs; i++)
		resolve_define(&u->res, &rec->defs[i]);
	switch (rec->kind) {
	case CG_HEADER:
		if (rec->new_part)
			begin_part(u);
		if (rec->key == HK_EVENTS) {
			on_events(u, rec);
			return 0;
		}
		cgw_raw(u->s.w, rec->text, rec->len);
		return 0;
	case CG_COMMENT:
		cgw_raw(u->s.w, rec->text, rec->len);
		return 0;
	case CG_FN:
		rewrite_begin_block(&u->rw, rec->fn);
		return 0;
	case CG_COST:
		rewrite_cost(&u->rw, rec);
		return 0;
	case CG_CALL:
		rewrite_call(&u->rw, rec);
		return 0;
	case CG_JUMP:
		rewrite_jump(&u->rw, rec);
		return 0;
	case CG_TOTALS:
		return on_totals(u, rec);
	}
	return 0;
}

/* ---- the run ---- */

/* One thread for the reads ahead and the output's writes, polling between them (io_pump.h),
 * where the main thread would otherwise wake the two that sleep between buffers some 600
 * times in a 300 MB profile (README, "Performance", the tenth session). Only where both
 * are copies, with two CPUs or more: a compressed stream's work is more than one thread
 * can do beside the other's, a pipe's read may never end (readahead.h), and on one CPU a
 * polling thread takes the main thread's time. */
static void run_share_io(struct run *u)
{
	long spin = io_pump_default_spin_ns();
	if (u->o->separate_io || spin <= 0 || !input_is_plain_file(u->in) || output_is_zstd(u->out))
		return;
	u->pump = io_pump_new(spin);
	cg_reader_share_pump(u->r, u->pump);
	cgw_share_pump(u->s.w, u->pump);
}

/* Opens the profile and the outputs and sets up the stream. Returns 0, -1 with the diag
 * set, or -2 when an output is an input or the other output. */
static int run_open(struct run *u, const struct augment_opts *o, struct augment_stats *rep,
		    struct diag *d)
{
	memset(u, 0, sizeof(*u));
	u->o = o;
	u->rep = rep;
	u->d = d;
	resolve_init(&u->res, &u->s, o->keep_addresses);
	moves_init(&u->mv, &u->s, &u->res);
	memset(rep, 0, sizeof(*rep));
	const char *outpath = o->output;
	if (!outpath && !(outpath = u->defout = augment_default_output(o->profile)))
		return diag_at(d, "-", 0, "reading the profile from stdin needs -o FILE (or -o -)");
	snprintf(rep->input, sizeof(rep->input), "%s", o->profile);
	snprintf(rep->output, sizeof(rep->output), "%s", outpath);
	u->ef = elf_files_new(o->elf_dir, outpath);
	if (!(u->in = input_open(o->profile, d)) || !(u->out = output_open(outpath, d)) ||
	    (o->stats_path && !(u->stats = output_open(o->stats_path, d))))
		return -1;
	/* An output that is an input (by device and inode: any spelling or link of it), or the
	 * other output, is refused before any work; symbol files found from the pid: line and
	 * the ELF files are checked again before the commit. */
	u->inputs = xmalloc((1 + o->nsymfiles) * sizeof(*u->inputs));
	u->inputs[u->ninputs++] = o->profile;
	for (size_t i = 0; i < o->nsymfiles; i++)
		u->inputs[u->ninputs++] = o->symfiles[i];
	struct output *const first[2] = { u->out, u->stats };
	if (output_check_clashes(first, 2, u->inputs, u->ninputs, d) < 0)
		return -2;
	struct symtab *st = symtab_new();
	symtab_set_paths(st, o->paths);
	u->r = cg_reader_new(u->in, o->max_line);
	stream_init(&u->s, st, u->r, cgw_new(u->out), rep);
	rewrite_init(&u->rw, &u->s, &u->res, &u->mv, u->r);
	run_share_io(u);
	return 0;
}

/* Reads the first part's header up to its events: line, which REC then holds, not yet
 * written: the note that names the symbol files goes before it. Returns 0, or -1 with the
 * diag set. */
static int run_read_header(struct run *u, struct cg_record *rec)
{
	int r;
	while ((r = cg_reader_next(u->r, rec, u->d)) == 1 &&
	       !(rec->kind == CG_HEADER && rec->key == HK_EVENTS)) {
		/* our own note (on_events): its JIT code is named already, and a second run
		 * would only report 0% JIT and write callgrind.out.jit.jit.PID */
		if (rec->kind == CG_COMMENT && rec->len >= 9 && !memcmp(rec->text, "# cgjit: ", 9))
			return diag_at(u->d, u->o->profile, rec->line, "this profile was written by cgjit "
				       "augment already (its JIT code has names): augment the profile "
				       "callgrind wrote");
		/* Xdebug's profile (creator: xdebug ...) costs PHP functions, not machine code:
		 * there are no JIT addresses to name, and its calls= lines are not callgrind's */
		if (rec->kind == CG_HEADER && rec->key == HK_CREATOR && rec->len >= 15 &&
		    !memcmp(rec->text, "creator: xdebug", 15))
			return diag_at(u->d, u->o->profile, rec->line, "this profile was written by Xdebug: "
				       "it costs PHP functions, not machine code, so there is no JIT code "
				       "to name and nothing to augment; cgjit report, diff, check and "
				       "flamegraph read it as it is");
		if (dispatch(u, rec) < 0)
			return -1;
	}
	if (r == 0)   /* the reader reports this itself; a message if that ever changes */
		return diag_at(u->d, u->o->profile, 0, "the profile ends before its events: line");
	return r == 1 ? 0 : -1;
}

/* Loads the symbol files (symbol_files.h) with the profile's pid: line. */
static int run_load_symbols(struct run *u)
{
	const struct augment_opts *o = u->o;
	struct symbol_files_opts so = {
		.profile = o->profile, .paths = o->symfiles, .npaths = o->nsymfiles,
		.pid = cg_reader_pid(u->r), .map_dir = o->map_dir, .debug_bias = o->debug_bias,
		.no_elf = o->no_elf, .max_line = o->max_line,
	};
	return symbol_files_load(&so, u->s.st, u->ef, u->rep, &u->nsymfiles, u->d);
}

/* Streams the body from REC, the events: line, to the end, each part checked at its
 * totals: line, and flushes the writer. Returns 0, or -1 with the diag set. */
static int run_stream_body(struct run *u, struct cg_record *rec)
{
	const struct augment_opts *o = u->o;
	uint64_t at, size;
	int r = 1, tell = o->progress && input_position(u->in, &at, &size) == 0;
	for (unsigned long n = 0; r == 1; r = cg_reader_next(u->r, rec, u->d)) {
		if (dispatch(u, rec) < 0)
			return -1;
		cgw_settle(u->s.w);
		/* every 1024 records (most cost lines are copied without one): two system calls */
		if (tell && !(++n & 0x3ff) && input_position(u->in, &at, &size) == 0)
			o->progress(o->progress_ctx, at, size);
	}
	if (tell && r == 0)
		o->progress(o->progress_ctx, size, size);
	if (r < 0 || u->d->set || cgw_flush(u->s.w, u->d) < 0)
		return -1;
	u->rep->bytes_out = cgw_bytes(u->s.w);
	return 0;
}

/* Commits the ELF files, --stats, then the profile, which names the ELF files and decides:
 * output_commit_all() renames none of them unless every one is written, and if a later
 * rename fails or a signal comes, puts back what the earlier ones replaced. Nothing that
 * this run did not create is removed. Returns 0, -1 or -2 (an output is an input). */
static int run_commit(struct run *u)
{
	size_t nelf = elf_files_count(u->ef);
	u->rep->elf_files = (unsigned)nelf;
	if (nelf)
		snprintf(u->rep->elf_first, sizeof(u->rep->elf_first), "%s", elf_files_path(u->ef, 0));
	struct output **all = xmalloc((nelf + 2) * sizeof(*all));
	elf_files_take(u->ef, all);
	all[nelf] = u->stats;
	all[nelf + 1] = u->out;
	u->inputs = xrealloc(u->inputs, (u->ninputs + u->nsymfiles) * sizeof(*u->inputs));
	for (size_t i = 0; i < u->nsymfiles; i++)
		u->inputs[u->ninputs++] = symtab_source(u->s.st, (uint32_t)i)->path;
	int rc = output_check_clashes(all, nelf + 2, u->inputs, u->ninputs, u->d) < 0 ? -2 : 0;
	if (rc == 0 && u->stats && augment_stats_yaml_emit(u->rep, u->stats, u->d) < 0)
		rc = -1;
	if (rc == 0) {
		u->stats = u->out = NULL;
		rc = output_commit_all(all, nelf + 2, u->d);   /* frees them all */
	} else {
		for (size_t i = 0; i < nelf; i++)
			output_abort(all[i]);
	}
	free(all);
	return rc;
}

/* Frees the run; the outputs not committed are removed. */
static void run_close(struct run *u, int rc)
{
	struct diag *d = u->d;
	if (rc < 0 && u->r && cg_reader_is_symbol_file(u->r)) {
		size_t n = strlen(d->msg);
		snprintf(d->msg + n, sizeof(d->msg) - n, "; the profile goes first: cgjit augment "
			 "PROFILE [PERF-MAP|JITDUMP...]");
	}
	/* The writer's flusher thread may still be writing to OUT: stop it first. */
	cgw_free(u->s.w);
	output_abort(u->out);
	output_abort(u->stats);
	free(u->inputs);
	elf_files_free(u->ef);
	cg_reader_free(u->r);
	io_pump_free(u->pump);   /* after its clients, the reader and the writer, left */
	symtab_free(u->s.st);
	input_close(u->in);
	moves_free(&u->mv);
	resolve_free(&u->res);
	free(u->defout);
}

int augment_run(const struct augment_opts *o, struct augment_stats *rep, struct diag *d)
{
	struct run u;
	struct cg_record rec;
	int rc = run_open(&u, o, rep, d);
	if (rc == 0)
		rc = run_read_header(&u, &rec);
	if (rc == 0)
		rc = run_load_symbols(&u);
	if (rc == 0)
		rc = run_stream_body(&u, &rec);   /* verified part by part (on_totals) */
	if (rc == 0)
		rc = run_commit(&u);
	run_close(&u, rc);
	return rc;
}

char *augment_default_output(const char *profile)
{
	if (strcmp(profile, "-") == 0)
		return NULL;
	const char *slash = strrchr(profile, '/');
	const char *base = slash ? slash + 1 : profile;
	size_t dirlen = (size_t)(base - profile);
	static const char stem[] = "callgrind.out.";
	size_t k = sizeof(stem) - 1;
	/* A compressed input (zstd, gzip) still gives a plain output without its suffix:
	 * callgrind_annotate and kcachegrind read only plain text (zstd output only when -o
	 * says .zst). */
	size_t blen = input_name_stem(base, strlen(base));
	char *out = xmalloc(strlen(profile) + 16);
	memcpy(out, profile, dirlen);
	if (blen > k && strncmp(base, stem, k) == 0)
		sprintf(out + dirlen, "%sjit.%.*s", stem, (int)(blen - k), base + k);
	else if (blen == k - 1 && strncmp(base, "callgrind.out", blen) == 0)
		sprintf(out + dirlen, "callgrind.jit.out");
	else
		sprintf(out + dirlen, "jit.%.*s", (int)blen, base);
	return out;
}

void augment_opts_init(struct augment_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_line = (size_t)64 << 20;
	o->debug_bias = JITDUMP_BIAS_AUTO;
}
