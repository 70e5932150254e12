/* augment_stats_yaml.c - libyaml emitter over struct augment_stats, written through struct output so
 * that a failed run leaves no half-written stats file either: augment commits it together
 * with the profile (io.h output_commit_all). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "augment/augment_stats.h"
#include "augment/augment_stats_yaml.h"
#include "core/diag.h"
#include "core/io.h"

struct sink {
	struct output *out;
	struct diag *d;
	int failed;
};

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	struct sink *s = data;
	if (output_write(s->out, buffer, size, s->d) < 0) {
		s->failed = 1;
		return 0;
	}
	return 1;
}

static int scalar(yaml_emitter_t *e, const char *v)
{
	yaml_event_t ev;
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), 1, 1,
				     YAML_ANY_SCALAR_STYLE);
	return yaml_emitter_emit(e, &ev);
}

static int kv_str(yaml_emitter_t *e, const char *k, const char *v)
{
	return scalar(e, k) && scalar(e, v);
}

static int kv_u64(yaml_emitter_t *e, const char *k, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	return scalar(e, k) && scalar(e, b);
}

static int kv_ratio(yaml_emitter_t *e, const char *k, uint64_t part, uint64_t whole)
{
	char b[32];
	snprintf(b, sizeof(b), "%.6f", whole ? (double)part / (double)whole : 0.0);
	return scalar(e, k) && scalar(e, b);
}

static int map_start(yaml_emitter_t *e)
{
	yaml_event_t ev;
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	return yaml_emitter_emit(e, &ev);
}

static int map_end(yaml_emitter_t *e)
{
	yaml_event_t ev;
	yaml_mapping_end_event_initialize(&ev);
	return yaml_emitter_emit(e, &ev);
}

static int seq(yaml_emitter_t *e, int start)
{
	yaml_event_t ev;
	if (start)
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	else
		yaml_sequence_end_event_initialize(&ev);
	return yaml_emitter_emit(e, &ev);
}

static int emit_report(yaml_emitter_t *e, const struct augment_stats *r)
{
	int ok = map_start(e) && kv_str(e, "input", r->input) && kv_str(e, "output", r->output) &&
		 kv_u64(e, "parts", r->parts) &&
		 kv_str(e, "instruction_positions", r->instr_positions ? "true" : "false") &&
		 kv_u64(e, "symbols", r->symbols) && kv_u64(e, "map_overlaps", r->map_overlaps) &&
		 kv_u64(e, "map_conflicts", r->map_conflicts) &&
		 kv_u64(e, "map_superseded", r->map_superseded) &&
		 kv_u64(e, "map_duplicates", r->map_duplicates) &&
		 kv_u64(e, "pseudo_functions", r->pseudo_functions) &&
		 kv_u64(e, "pseudo_functions_resolved", r->resolved) &&
		 kv_u64(e, "pseudo_calls_removed", r->pseudo_calls_removed) &&
		 kv_u64(e, "lines_moved", r->lines_moved) &&
		 kv_u64(e, "synthetic_calls", r->synthetic_calls) &&
		 kv_u64(e, "returns_as_calls", r->returns_as_calls) &&
		 kv_u64(e, "lines_to_elf_functions", r->lines_to_elf_functions) &&
		 kv_u64(e, "renamed_caller_contexts", r->renamed_callers) &&
		 kv_u64(e, "paths_mapped", r->paths_mapped) &&
		 kv_u64(e, "paths_mapped_files", r->paths_mapped_files) &&
		 kv_u64(e, "jumps_dropped", r->jumps_dropped) &&
		 kv_u64(e, "bytes_out", r->bytes_out) && kv_u64(e, "elf_files", r->elf_files);
	ok = ok && scalar(e, "sources") && seq(e, 1);
	for (unsigned i = 0; ok && i < r->nsources; i++) {
		const struct augment_stats_source *s = &r->sources[i];
		ok = map_start(e) && kv_str(e, "path", s->path) && kv_str(e, "kind", s->kind) &&
		     kv_u64(e, "lines", s->lines) && kv_u64(e, "symbols", s->symbols) &&
		     kv_u64(e, "skipped_size_0", s->skipped) &&
		     kv_str(e, "unterminated", s->unterminated ? "true" : "false");
		if (ok && s->is_jitdump) {
			const struct jitdump_stats *j = &s->jd;
			ok = kv_u64(e, "loads", j->loads) && kv_u64(e, "moves", j->moves) &&
			     kv_u64(e, "debug_records", j->debug_records) &&
			     kv_u64(e, "debug_records_used", j->debug_used) &&
			     kv_u64(e, "debug_rows", j->debug_entries) &&
			     kv_u64(e, "debug_records_recovered", j->debug_recovered) &&
			     kv_u64(e, "debug_records_not_code_baseline", j->not_code_baseline) &&
			     kv_u64(e, "debug_records_not_code_prefix", j->not_code_prefix) &&
			     kv_u64(e, "debug_rows_not_code", j->not_code_rows) &&
			     kv_u64(e, "debug_records_dropped", j->bad_debug) &&
			     kv_str(e, "debug_drop_reason", j->bad_debug_reason) &&
			     kv_u64(e, "debug_bias", (uint64_t)j->bias) &&
			     kv_str(e, "debug_bias_detected", j->bias_detected ? "true" : "false") &&
			     kv_u64(e, "unwinding_records", j->unwinding) &&
			     kv_u64(e, "loads_refused", j->bad_loads) &&
			     kv_u64(e, "moves_refused", j->bad_moves) &&
			     kv_u64(e, "moves_name_only", j->moves_bare) &&
			     kv_u64(e, "loads_reusing_addresses", j->reused) &&
			     kv_u64(e, "loads_without_elf", j->no_elf) &&
			     kv_u64(e, "unknown_records", j->unknown) &&
			     kv_u64(e, "truncated_tail_bytes", j->truncated_bytes);
		}
		if (ok && s->is_auditlog) {
			const struct auditlog_symbols_stats *a = &s->al;
			ok = kv_u64(e, "records", a->log.records) && kv_u64(e, "traces", a->log.traces) &&
			     kv_u64(e, "aborts", a->log.aborts) && kv_u64(e, "flushes", a->log.flushes) &&
			     kv_u64(e, "traces_without_code", a->log.no_code) &&
			     kv_u64(e, "traces_reusing_addresses", a->reused) &&
			     kv_u64(e, "traces_without_elf", a->no_elf) &&
			     kv_str(e, "size_limit_reached", a->log.size_limit ? "true" : "false") &&
			     kv_u64(e, "truncated_tail_bytes", a->log.truncated_bytes);
		}
		ok = ok && map_end(e);
	}
	ok = ok && seq(e, 0) && scalar(e, "discovery_skipped") && seq(e, 1);
	for (unsigned i = 0; ok && i < r->nskipped; i++)
		ok = scalar(e, r->skipped[i]);
	ok = ok && seq(e, 0) && scalar(e, "events") && map_start(e);
	for (unsigned i = 0; ok && i < r->nevents; i++) {
		const struct augment_stats_event *v = &r->events[i];
		ok = scalar(e, v->name) && map_start(e) && kv_u64(e, "total", v->total) &&
		     kv_u64(e, "jit", v->jit) && kv_u64(e, "unnamed_jit", v->unknown) &&
		     kv_u64(e, "contested", v->contested) && kv_ratio(e, "jit_share", v->jit, v->total) &&
		     kv_ratio(e, "unnamed_jit_share", v->unknown, v->total) && map_end(e);
	}
	return ok && map_end(e) && map_end(e);
}

int augment_stats_yaml_emit(const struct augment_stats *r, struct output *out, struct diag *d)
{
	struct sink s = { out, d, 0 };
	yaml_emitter_t e;
	yaml_event_t ev;
	yaml_emitter_initialize(&e);
	yaml_emitter_set_output(&e, write_handler, &s);
	yaml_emitter_set_unicode(&e, 1);
	int ok = 1;
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = ok && yaml_emitter_emit(&e, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&e, &ev);
	ok = ok && emit_report(&e, r);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&e, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
	if (!ok && !s.failed)
		diag_at(d, output_path(out), 0, "YAML emitter failed: %s",
			e.problem ? e.problem : "unknown error");
	yaml_emitter_delete(&e);
	return ok ? 0 : -1;
}

int augment_stats_yaml_write(const struct augment_stats *r, const char *path, struct diag *d)
{
	struct output *out = output_open(path, d);
	if (!out)
		return -1;
	if (augment_stats_yaml_emit(r, out, d) < 0) {
		output_abort(out);
		return -1;
	}
	return output_commit(out, d);
}
