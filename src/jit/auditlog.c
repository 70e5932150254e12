/* auditlog.c - a RaptorJIT auditlog's records (auditlog_walk.c) -> traces, aborts and
 * flushes for a visitor (docs/formats.md 7.3, 7.4). Keeps the latest memory snapshot per
 * address of the five kinds an event is resolved through; a trace_stop then reads its
 * GCtrace, the trace's prototype and chunk name, and its machine code, with the layouts of
 * the log's DWARF blob (auditlog_dwarf.c). Owns the snapshots until auditlog_read()
 * returns. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/idmap.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/auditlog.h"
#include "jit/auditlog_dwarf.h"
#include "jit/auditlog_walk.h"

enum snap_kind { SNAP_MCODE, SNAP_TRACE, SNAP_PROTO, SNAP_STR, SNAP_JIT, NSNAP };
static const char *const snap_hints[NSNAP] = { "MCode[]", "GCtrace", "GCproto", "GCstr", "jit_State" };

struct snap {
	unsigned char *data;
	size_t len;
};

struct al {
	struct auditlog_walk *w;
	const char *path;
	const struct auditlog_visitor *v;
	struct auditlog_stats *stats;
	struct diag *d;
	struct idmap by_addr[NSNAP];   /* address -> index in snaps */
	struct snap *snaps;
	size_t nsnaps, snaps_cap;
	struct auditlog_layout lay;
	int have_layout;
	const struct auditlog_record *r;   /* the record being read */
	char name[1024];
};

int auditlog_is_log(const unsigned char *p, size_t n)
{
	return auditlog_walk_is_log(p, n);
}

/* R's value of KEY of kind KIND into *V. Returns 0, or -1 with D set naming the key. */
static int need(struct al *a, const char *key, enum auditlog_kind kind, const struct auditlog_value **v)
{
	static const char *const kinds[] = { "a number", "a number", "a string", "bytes", "nil", "a boolean" };
	*v = auditlog_record_get(a->r, key);
	if (!*v || (*v)->kind != kind)
		return diag_byte(a->d, a->path, a->r->offset, "a record whose '%s' is %s, %s expected", key,
				 *v ? kinds[(*v)->kind] : "missing", kinds[kind]);
	return 0;
}

static int is_str(const struct auditlog_value *v, const char *s)
{
	return v && v->kind == AUDITLOG_STR && v->len == strlen(s) && !memcmp(v->p, s, v->len);
}

/* The latest snapshot of KIND at ADDR, or NULL. */
static const struct snap *snap_at(const struct al *a, enum snap_kind kind, uint64_t addr)
{
	uint32_t i = idmap_get(&a->by_addr[kind], addr);
	return i == UINT32_MAX ? NULL : &a->snaps[i];
}

static int on_memory(struct al *a)
{
	const struct auditlog_value *hint, *addr, *data;
	if (need(a, "hint", AUDITLOG_STR, &hint) < 0 || need(a, "address", AUDITLOG_UINT, &addr) < 0 ||
	    need(a, "data", AUDITLOG_BIN, &data) < 0)
		return -1;
	a->stats->memory++;
	for (int k = 0; k < NSNAP; k++) {
		if (!is_str(hint, snap_hints[k]))
			continue;
		uint32_t i = idmap_get(&a->by_addr[k], addr->u);
		if (i == UINT32_MAX) {   /* else the address was logged again: the new bytes win */
			XGROW(a->snaps, a->snaps_cap, a->nsnaps + 1);
			i = (uint32_t)a->nsnaps++;
			a->snaps[i].data = NULL;
			idmap_put(&a->by_addr[k], addr->u, i);
		}
		free(a->snaps[i].data);
		a->snaps[i].data = xmalloc(data->len ? data->len : 1);
		memcpy(a->snaps[i].data, data->p, data->len);
		a->snaps[i].len = data->len;
	}
	return 0;
}

static int on_blob(struct al *a)
{
	const struct auditlog_value *name = auditlog_record_get(a->r, "name"), *data;
	a->stats->blobs++;
	if (!is_str(name, "lj_dwarf.dwo"))
		return 0;
	if (need(a, "data", AUDITLOG_BIN, &data) < 0)
		return -1;
	char why[256];
	if (auditlog_dwarf_layout(data->p, data->len, &a->lay, why, sizeof(why)) < 0)
		return diag_byte(a->d, a->path, a->r->offset, "the blob lj_dwarf.dwo cannot give the "
				 "struct layouts: %s", why);
	a->have_layout = 1;
	return 0;
}

/* The little-endian number of field F in the snapshot S at BASE: the caller has checked
 * that S holds the struct there (need_snap()), and auditlog_dwarf.c that F lies inside it. */
static uint64_t field(const struct snap *s, size_t base, struct auditlog_field f)
{
	uint64_t v = 0;
	for (uint32_t i = f.size; i-- > 0;)
		v = v << 8 | s->data[base + f.off + i];
	return v;
}

static int fits(const struct snap *s, size_t base, size_t size)
{
	return base <= s->len && size <= s->len - base;
}

/* Snapshot KIND at ADDR at least SIZE bytes long; else -1 with D set, naming WHAT. */
static int need_snap(struct al *a, enum snap_kind kind, uint64_t addr, uint64_t size, const char *what,
		     const struct snap **out)
{
	*out = snap_at(a, kind, addr);
	if (*out && size <= (*out)->len)
		return 0;
	return diag_byte(a->d, a->path, a->r->offset, "%s at 0x%" PRIx64 ": the log has %s", what, addr,
			 *out ? "a shorter snapshot of it than its struct" : "no snapshot of it before this event");
}

/* How LuaJIT shows a chunk (LuaJIT's agent, agent/cgjit_luajit.lua chunk_of): "@file" and
 * "=name" as they are, a string chunk as [string "its first line"]; control bytes as '_'. */
static size_t chunk_show(char *out, size_t cap, const unsigned char *s, size_t n)
{
	size_t k = 0;
	int plain = n > 0 && (s[0] == '@' || s[0] == '=');
	size_t line = 0;
	while (line < n && s[line] != '\n')
		line++;
	size_t take = plain ? n : line > 40 ? 40 : line;
	k += (size_t)snprintf(out + k, cap - k, "%s", plain ? "" : "[string \"");
	for (size_t i = 0; i < take && k + 1 < cap; i++)
		out[k++] = s[i] < 0x20 || s[i] == 0x7f ? '_' : (char)s[i];
	out[k < cap ? k : cap - 1] = 0;
	if (!plain && k < cap)
		k += (size_t)snprintf(out + k, cap - k, "%s", take < n ? "...\"]" : "\"]");
	return k < cap ? k : cap - 1;
}

/* "CHUNK:LINE" of the bytecode at PC of the prototype at PT, into a->name + AT. Returns the
 * length written, or -1 with D set. */
static int place(struct al *a, uint64_t pt, uint64_t pc, size_t at)
{
	const struct auditlog_layout *l = &a->lay;
	const struct snap *p, *s;
	if (need_snap(a, SNAP_PROTO, pt, l->proto_size, "the trace's prototype (GCproto)", &p) < 0 ||
	    need_snap(a, SNAP_STR, field(p, 0, l->chunkname), l->str_size, "its chunk name (GCstr)", &s) < 0)
		return -1;
	uint64_t len = field(s, 0, l->str_len);
	if (!fits(s, l->str_size, len))
		return diag_byte(a->d, a->path, a->r->offset, "the chunk name at 0x%" PRIx64 " is %" PRIu64
				 " bytes long, more than its snapshot holds", field(p, 0, l->chunkname), len);
	/* RaptorJIT keeps one 32-bit line per bytecode (formats.md 7.4); the bytecode follows
	 * the GCproto struct */
	uint64_t li = field(p, 0, l->lineinfo), first_bc = pt + l->proto_size;
	/* each step checked against the snapshot, so that hostile addresses cannot wrap */
	uint64_t lines_at = li - pt, index = (pc - first_bc) / 4;
	if (pc < first_bc || first_bc < pt || li < pt || lines_at > p->len || p->len - lines_at < 4 ||
	    index > (p->len - lines_at - 4) / 4)
		return diag_byte(a->d, a->path, a->r->offset, "the trace's start (pc 0x%" PRIx64 ") has no "
				 "line in its prototype's snapshot at 0x%" PRIx64, pc, pt);
	struct auditlog_field f32 = { (uint32_t)(lines_at + 4 * index), 4 };
	size_t k = chunk_show(a->name + at, sizeof(a->name) - at - 24, s->data + l->str_size, len);
	k += (size_t)snprintf(a->name + at + k, sizeof(a->name) - at - k, ":%" PRIu64, field(p, 0, f32));
	return (int)k;
}

/* The kind as LuaJIT's -jv shows it (and the LuaJIT agent names traces): "(P/E)" for a side
 * trace, then how it ends. */
static size_t kind_show(char *out, size_t cap, const struct auditlog_trace *t)
{
	static const char *const types[] = { "none", "root", "loop", "tail-recursion", "up-recursion",
		"down-recursion", "interpreter", "return", "stitch" };
	char lt[24];
	if (t->linktype < sizeof(types) / sizeof(types[0]))
		snprintf(lt, sizeof(lt), "%s", types[t->linktype]);
	else
		snprintf(lt, sizeof(lt), "linktype-%u", t->linktype);
	size_t k = 0;
	if (t->parent)
		k += (size_t)snprintf(out, cap, "(%u/%u) ", t->parent, t->exitno);
	if (!strcmp(lt, "interpreter") || !strcmp(lt, "stitch") || t->link == t->traceno || t->link == 0)
		k += (size_t)snprintf(out + k, cap - k, "%s", lt);
	else if (t->linktype == 1)
		k += (size_t)snprintf(out + k, cap - k, "-> %u", t->link);
	else
		k += (size_t)snprintf(out + k, cap - k, "-> %u %s", t->link, lt);
	return k;
}

static int on_trace_stop(struct al *a, uint64_t time)
{
	const struct auditlog_value *tv;
	const struct auditlog_layout *l = &a->lay;
	const struct snap *s;
	if (need(a, "GCtrace", AUDITLOG_UINT, &tv) < 0 ||
	    need_snap(a, SNAP_TRACE, tv->u, l->trace_size, "the stopped trace (GCtrace)", &s) < 0)
		return -1;
	struct auditlog_trace t = { .time = time, .offset = a->r->offset };
	t.traceno = (uint32_t)field(s, 0, l->traceno);
	t.parent = (uint32_t)field(s, 0, l->parent);
	t.exitno = (uint32_t)field(s, 0, l->exitno);
	t.link = (uint32_t)field(s, 0, l->link);
	t.linktype = (uint32_t)field(s, 0, l->linktype);
	t.addr = field(s, 0, l->mcode);
	t.size = field(s, 0, l->szmcode);
	const struct snap *mc = snap_at(a, SNAP_MCODE, t.addr);
	t.code = mc && mc->len >= t.size ? mc->data : NULL;
	a->stats->no_code += !t.code;
	int n = snprintf(a->name, sizeof(a->name), "TRACE_%u ", t.traceno);
	n += (int)kind_show(a->name + n, 200, &t);
	n += snprintf(a->name + n, sizeof(a->name) - (size_t)n, "::");
	int k = place(a, field(s, 0, l->startpt), field(s, 0, l->startpc), (size_t)n);
	if (k < 0)
		return -1;
	t.name = a->name;
	t.name_len = (size_t)(n + k);
	a->stats->traces++;
	if (a->v->trace)
		a->v->trace(a->v->ctx, &t);
	return 0;
}

static int on_trace_abort(struct al *a, uint64_t time)
{
	const struct auditlog_value *jv, *err = auditlog_record_get(a->r, "TraceError");
	const struct auditlog_layout *l = &a->lay;
	const struct snap *s;
	if (need(a, "jit_State", AUDITLOG_UINT, &jv) < 0 ||
	    need_snap(a, SNAP_JIT, jv->u, (uint64_t)l->cur.off + l->trace_size, "the JIT state (jit_State)", &s) < 0)
		return -1;
	struct auditlog_abort ab = { .time = time, .offset = a->r->offset };
	ab.traceno = (uint32_t)field(s, l->cur.off, l->traceno);
	ab.error = err && err->kind == AUDITLOG_UINT ? err->u : UINT64_MAX;
	int k = place(a, field(s, l->cur.off, l->startpt), field(s, l->cur.off, l->startpc), 0);
	if (k < 0)
		return -1;
	ab.where = a->name;
	ab.where_len = (size_t)k;
	a->stats->aborts++;
	if (a->v->abort)
		a->v->abort(a->v->ctx, &ab);
	return 0;
}

static int on_event(struct al *a)
{
	const struct auditlog_value *time, *ev;
	if (need(a, "nanotime", AUDITLOG_UINT, &time) < 0 || need(a, "event", AUDITLOG_STR, &ev) < 0)
		return -1;
	a->stats->events++;
	if (a->v->event)
		a->v->event(a->v->ctx, time->u);
	int stop = is_str(ev, "trace_stop"), abort = is_str(ev, "trace_abort");
	if ((stop || abort) && !a->have_layout)
		return diag_byte(a->d, a->path, a->r->offset, "a %s event before the blob lj_dwarf.dwo that "
				 "describes its structs", stop ? "trace_stop" : "trace_abort");
	if (stop)
		return on_trace_stop(a, time->u);
	if (abort)
		return on_trace_abort(a, time->u);
	if (is_str(ev, "trace_flushall")) {
		a->stats->flushes++;
		if (a->v->flush)
			a->v->flush(a->v->ctx, time->u);
	}
	a->stats->size_limit |= is_str(ev, "auditlog_size_limit_reached");
	return 0;
}

static int read_records(struct al *a)
{
	struct auditlog_record *r = xmalloc(sizeof(*r));
	int rc;
	a->r = r;
	while ((rc = auditlog_walk_next(a->w, r, a->d)) == 1) {
		a->stats->records++;
		const struct auditlog_value *type;
		if (need(a, "type", AUDITLOG_STR, &type) < 0)
			rc = -1;
		else if (is_str(type, "memory"))
			rc = on_memory(a);
		else if (is_str(type, "event"))
			rc = on_event(a);
		else if (is_str(type, "blob"))
			rc = on_blob(a);
		if (rc < 0)
			break;
	}
	free(r);
	return rc < 0 ? -1 : 0;
}

int auditlog_read(struct input *in, const struct auditlog_visitor *v, struct auditlog_stats *stats,
		  struct diag *d)
{
	memset(stats, 0, sizeof(*stats));
	struct al a = { .w = auditlog_walk_new(in), .path = input_name(in), .v = v, .stats = stats, .d = d };
	for (int k = 0; k < NSNAP; k++)
		idmap_init(&a.by_addr[k]);
	int rc = read_records(&a);
	stats->truncated_bytes = auditlog_walk_truncated(a.w);
	for (size_t i = 0; i < a.nsnaps; i++)
		free(a.snaps[i].data);
	free(a.snaps);
	for (int k = 0; k < NSNAP; k++)
		idmap_free(&a.by_addr[k]);
	auditlog_walk_free(a.w);
	return rc;
}
