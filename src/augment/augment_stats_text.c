/* augment_stats_text.c - renders struct augment_stats as the short summary augment prints
 * on stderr: the symbol files read, what the rewrite did, and each event's JIT share. */
#include <inttypes.h>
#include <string.h>

#include "augment/augment_stats.h"
#include "augment/augment_stats_text.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The lines under a jitdump's own: what its records gave and what was refused. */
static void write_jitdump(const struct jitdump_stats *j, FILE *f)
{
	fprintf(f, "             %" PRIu64 " loads, %" PRIu64 " moves, ", j->loads, j->moves);
	/* a bias is only found from line rows: without debug records there is none */
	if (j->debug_records)
		fprintf(f, "%" PRIu64 " of %" PRIu64 " debug records used (%" PRIu64 " line rows), "
			   "debug bias 0x%" PRIx64 " (%s)", j->debug_used, j->debug_records,
			j->debug_entries, (uint64_t)j->bias, j->bias_detected ? "detected" : "given");
	else
		fputs("no debug records (no line numbers)", f);
	fprintf(f, ", %" PRIu64 " unwinding records skipped", j->unwinding);
	if (j->reused)
		fprintf(f, ", %" PRIu64 " loads reuse addresses", j->reused);
	fputc('\n', f);
	if (j->debug_recovered)
		fprintf(f, "             %" PRIu64 " debug records with overwritten file names read at "
			   "their fixed stride (node 20), file from the function's name\n",
			j->debug_recovered);
	if (j->not_code_baseline + j->not_code_prefix)
		fprintf(f, "             %" PRIu64 " debug records ignored (%" PRIu64 " rows): not machine-code "
			   "offsets (%" PRIu64 " of V8 baseline code 'JS:^', %" PRIu64 " with every row in the "
			   "first quarter of the code); the line comes from the function's name\n",
			j->not_code_baseline + j->not_code_prefix, j->not_code_rows, j->not_code_baseline,
			j->not_code_prefix);
	if (j->bad_debug)
		fprintf(f, "             %" PRIu64 " debug records dropped: first: %s\n", j->bad_debug,
			j->bad_debug_reason);
	if (j->no_elf)
		fprintf(f, "             %" PRIu64 " loads reuse addresses more than %d times: no ELF "
			   "file for them\n", j->no_elf, JITDUMP_MAX_GENERATIONS);
	if (j->bad_loads)
		fprintf(f, "             %" PRIu64 " code loads refused (sizes do not fit the record, or "
			   "the code passes the end of the address space)\n", j->bad_loads);
	if (j->moves_bare)
		fprintf(f, "             %" PRIu64 " moves of functions moved more than %d times: "
			   "name only (no line rows, no machine code)\n", j->moves_bare, JITDUMP_MAX_MOVES);
	if (j->bad_moves)
		fprintf(f, "             %" PRIu64 " code moves refused (the code would pass the end of "
			   "the address space)\n", j->bad_moves);
	if (j->truncated_bytes)
		fprintf(f, "             warning: the last %" PRIu64 " bytes are a record cut off "
			   "(dump copied while the JIT was writing?)\n", j->truncated_bytes);
	if (j->unknown)
		fprintf(f, "             %" PRIu64 " records of unknown kinds skipped\n", j->unknown);
}

static void write_auditlog(const struct auditlog_symbols_stats *a, FILE *f)
{
	fprintf(f, "             %" PRIu64 " records: %" PRIu64 " traces, %" PRIu64 " aborts, %" PRIu64
		   " flushes\n", a->log.records, a->log.traces, a->log.aborts, a->log.flushes);
	if (a->log.no_code)
		fprintf(f, "             %" PRIu64 " traces without their machine code in the log: "
			   "named, no ELF code\n", a->log.no_code);
	if (a->reused)
		fprintf(f, "             %" PRIu64 " traces at addresses of earlier ones (after a flush): "
			   "the later one names them\n", a->reused);
	if (a->no_elf)
		fprintf(f, "             %" PRIu64 " traces reuse addresses more than %d times: no ELF "
			   "file for them\n", a->no_elf, CODE_GEN_MAX);
	if (a->log.size_limit)
		fprintf(f, "             warning: the log stopped at its size limit: later traces are "
			   "not in it\n");
	if (a->log.truncated_bytes)
		fprintf(f, "             warning: the last %" PRIu64 " bytes are a record cut off "
			   "(the process died before the log was flushed?)\n", a->log.truncated_bytes);
}

static void write_source(const struct augment_stats_source *s, FILE *f)
{
	if (!strcmp(s->kind, "empty")) {
		fprintf(f, "  empty      %s: no bytes (the runtime wrote nothing to it: killed "
			   "before it flushed?)\n", s->path);
		return;
	}
	fprintf(f, "  %-10s %s: %" PRIu64 " symbols", s->kind, s->path, s->symbols);
	if (s->skipped)
		fprintf(f, ", %" PRIu64 " of size 0 ignored", s->skipped);
	if (s->unterminated)
		fprintf(f, ", last line unterminated (map still being written?)");
	fputc('\n', f);
	if (s->is_jitdump)
		write_jitdump(&s->jd, f);
	if (s->is_auditlog)
		write_auditlog(&s->al, f);
}

/* What the rewrite did: one line per kind of change that happened. */
static void write_rewrite(const struct augment_stats *r, FILE *f)
{
	for (unsigned i = 0; i < r->nskipped; i++)
		fprintf(f, "  skipped    %s; found from the pid: line (name it after the profile to "
			   "use it)\n", r->skipped[i]);
	fprintf(f, "  pseudo-functions  %" PRIu64 " in object ???, %" PRIu64 " named from symbols, %" PRIu64
		   " left as addresses (not JIT code, or not in any map)\n",
		r->pseudo_functions, r->resolved, r->pseudo_functions - r->resolved);
	fprintf(f, "  rewritten         %" PRIu64 " pseudo-calls folded, %" PRIu64 " cost lines moved to their "
		   "owner, %" PRIu64 " synthetic calls added\n",
		r->pseudo_calls_removed, r->lines_moved, r->synthetic_calls);
	if (r->lines_to_elf_functions)
		fprintf(f, "  ELF functions     %" PRIu64 " of the moved lines lie in functions the profile "
			   "already names in ELF objects: they went there (rule 9)\n", r->lines_to_elf_functions);
	if (r->returns_as_calls)
		fprintf(f, "  returns           %" PRIu64 " returns that callgrind recorded as calls into a JIT "
			   "function dropped (rule 6)\n", r->returns_as_calls);
	if (r->renamed_callers)
		fprintf(f, "  caller contexts   %" PRIu64 " names with JIT callers renamed\n", r->renamed_callers);
	if (r->paths_mapped || r->paths_mapped_files)
		fprintf(f, "  paths             %" PRIu64 " symbol names and %" PRIu64 " line-table files "
			   "with their path made relative to --root or mapped by --path-map\n",
			r->paths_mapped, r->paths_mapped_files);
	if (r->jumps_dropped)
		fprintf(f, "  jumps             %" PRIu64 " jump records across objects dropped (they carry no cost)\n",
			r->jumps_dropped);
	if (r->map_overlaps)
		fprintf(f, "  overlaps          %" PRIu64 " symbol entries shadowed by later ones of the "
			   "same kind, map by map or dump by dump (%" PRIu64 " by another name); the later "
			   "entry wins\n", r->map_overlaps, r->map_conflicts);
	if (r->map_superseded)
		fprintf(f, "  map and dump      %" PRIu64 " perf-map entries for code a jitdump also "
			   "describes: the jitdump's entry is used\n", r->map_superseded);
	if (r->elf_files)
		fprintf(f, "  machine code      %u ELF file%s with the JIT code for kcachegrind and objdump: %s%s\n",
			r->elf_files, r->elf_files > 1 ? "s" : "", r->elf_first, r->elf_files > 1 ? ", ..." : "");
	if (!r->instr_positions)
		fprintf(f, "  note: no instruction positions; JIT code is named per function "
			   "(record with --dump-instr=yes for per-instruction attribution)\n");
}

void augment_stats_text_write(const struct augment_stats *r, FILE *f)
{
	fprintf(f, "cgjit: wrote %s\n", r->output);
	for (unsigned i = 0; i < r->nsources; i++)
		write_source(&r->sources[i], f);
	write_rewrite(r, f);
	fprintf(f, "  %-12s %20s %9s %9s %9s\n", "event", "total", "JIT", "unnamed", "contested");
	for (unsigned i = 0; i < r->nevents; i++) {
		const struct augment_stats_event *e = &r->events[i];
		fprintf(f, "  %-12s %20" PRIu64 " %8.2f%% %8.2f%% %8.2f%%\n", e->name, e->total,
			pct(e->jit, e->total), pct(e->unknown, e->total), pct(e->contested, e->total));
	}
}
