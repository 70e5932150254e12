/* auditlog_walk.c - msgpack records of a RaptorJIT auditlog, read one at a time from a
 * stream (docs/formats.md 7.2). Only what a log can hold is decoded: a map per record, its
 * string keys and scalar values; every msgpack form of those is taken, not only the four
 * RaptorJIT writes. A record's keys and payloads are copied into one buffer that the walker
 * owns and reuses, so memory follows the largest record, not the file. Written here rather
 * than through msgpack-c: that library builds every record as an object tree in a zone and,
 * on malformed input, does not say at which byte; the subset needed is a few forms. */
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/xalloc.h"
#include "jit/auditlog_walk.h"

struct auditlog_walk {
	struct input *in;
	unsigned char buf[1 << 16];
	size_t pos, len;
	int eof;
	uint64_t offset;           /* of buf[pos] in the file */
	uint64_t start;            /* of the record being read */
	unsigned char *rec;        /* the record's keys and payloads */
	size_t rec_len, rec_cap;
	uint64_t truncated;
	struct auditlog_record *r; /* being filled */
	size_t at[AUDITLOG_MAX_PAIRS][2];   /* offsets in rec of each key and payload */
};

struct auditlog_walk *auditlog_walk_new(struct input *in)
{
	struct auditlog_walk *w = xcalloc(1, sizeof(*w));
	w->in = in;
	return w;
}

void auditlog_walk_free(struct auditlog_walk *w)
{
	if (!w)
		return;
	free(w->rec);
	free(w);
}

uint64_t auditlog_walk_truncated(const struct auditlog_walk *w)
{
	return w->truncated;
}

/* Refills the buffer. Returns 1 with bytes, 0 at the end, -1 with D set. */
static int fill(struct auditlog_walk *w, struct diag *d)
{
	if (w->pos < w->len)
		return 1;
	if (w->eof)
		return 0;
	ssize_t got = input_read(w->in, w->buf, sizeof(w->buf), d);
	if (got < 0)
		return -1;
	w->pos = 0;
	w->len = (size_t)got;
	w->eof = got == 0;
	return got > 0;
}

/* N bytes into DST (NULL: into the record buffer). Returns 1, 0 when the file ends first
 * (the record is cut), -1 with D set. */
static int take(struct auditlog_walk *w, void *dst, size_t n, struct diag *d)
{
	if (!dst) {
		if ((uint64_t)w->rec_len + n > AUDITLOG_MAX_RECORD)
			return diag_byte(d, input_name(w->in), w->start, "a record of more than %u bytes "
					 "(an auditlog stops at 100 MB)", AUDITLOG_MAX_RECORD);
	}
	unsigned char *out = dst;
	while (n) {
		int rc = fill(w, d);
		if (rc <= 0)
			return rc;
		size_t k = w->len - w->pos < n ? w->len - w->pos : n;
		if (dst) {
			memcpy(out, w->buf + w->pos, k);
			out += k;
		} else {
			/* grown as bytes arrive, so a cut file claiming 4 GB allocates what it has */
			XGROW(w->rec, w->rec_cap, w->rec_len + k);
			memcpy(w->rec + w->rec_len, w->buf + w->pos, k);
			w->rec_len += k;
		}
		w->pos += k;
		w->offset += k;
		n -= k;
	}
	return 1;
}

static uint64_t be(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* A big-endian number of N bytes. Returns take()'s result. */
static int take_be(struct auditlog_walk *w, size_t n, uint64_t *v, struct diag *d)
{
	unsigned char b[8];
	int rc = take(w, b, n, d);
	*v = rc > 0 ? be(b, n) : 0;
	return rc;
}

/* The length of a str or bin form B (its length bytes read here) into *LEN; 0 in *IS if B is
 * neither. Returns take()'s result. */
static int string_len(struct auditlog_walk *w, unsigned b, int *is, uint64_t *len, struct diag *d)
{
	*is = 1;
	if (b >= 0xa0 && b <= 0xbf) {
		*len = b & 0x1f;
		return 1;
	}
	switch (b) {
	case 0xd9: case 0xc4: return take_be(w, 1, len, d);
	case 0xda: case 0xc5: return take_be(w, 2, len, d);
	case 0xdb: case 0xc6: return take_be(w, 4, len, d);
	}
	*is = 0;
	return 1;
}

static const char *form_name(unsigned b)
{
	if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3))
		return "a number";
	if ((b >= 0xa0 && b <= 0xbf) || (b >= 0xd9 && b <= 0xdb))
		return "a string";
	if (b >= 0xc4 && b <= 0xc6)
		return "bytes";
	if (b == 0xc0)
		return "nil";
	if (b == 0xc2 || b == 0xc3)
		return "a boolean";
	if ((b >= 0x90 && b <= 0x9f) || b == 0xdc || b == 0xdd)
		return "an array";
	if ((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf)
		return "a map";
	if (b == 0xca || b == 0xcb)
		return "a float";
	if ((b >= 0xd4 && b <= 0xd8) || (b >= 0xc7 && b <= 0xc9))
		return "an extension";
	return "a byte msgpack does not define";
}

/* A scalar value into *V (a payload's offset in the record buffer in *AT). Returns take()'s
 * result, or -1 with D set for a form a log cannot hold. */
static int read_value(struct auditlog_walk *w, struct auditlog_value *v, size_t *at, struct diag *d)
{
	uint64_t off = w->offset;
	unsigned char b;
	int rc = take(w, &b, 1, d), is;
	uint64_t len;
	if (rc <= 0)
		return rc;
	memset(v, 0, sizeof(*v));
	if (b <= 0x7f || b >= 0xe0) {
		v->kind = b <= 0x7f ? AUDITLOG_UINT : AUDITLOG_INT;
		v->u = b <= 0x7f ? b : (uint64_t)(int64_t)(int8_t)b;
		return 1;
	}
	if ((rc = string_len(w, b, &is, &len, d)) <= 0)
		return rc;
	if (is) {
		v->kind = b >= 0xc4 && b <= 0xc6 ? AUDITLOG_BIN : AUDITLOG_STR;
		v->len = (size_t)len;
		*at = w->rec_len;
		return take(w, NULL, (size_t)len, d);
	}
	if (b >= 0xcc && b <= 0xcf) {
		v->kind = AUDITLOG_UINT;
		return take_be(w, (size_t)1 << (b - 0xcc), &v->u, d);
	}
	if (b >= 0xd0 && b <= 0xd3) {
		size_t n = (size_t)1 << (b - 0xd0);
		v->kind = AUDITLOG_INT;
		if ((rc = take_be(w, n, &v->u, d)) > 0 && n < 8 && (v->u >> (8 * n - 1)))
			v->u |= ~0ull << (8 * n);   /* sign-extended */
		return rc;
	}
	if (b == 0xc0 || b == 0xc2 || b == 0xc3) {
		v->kind = b == 0xc0 ? AUDITLOG_NIL : AUDITLOG_BOOL;
		v->u = b == 0xc3;
		return 1;
	}
	return diag_byte(d, input_name(w->in), off, "a value of msgpack form 0x%02x (%s), where an "
			 "auditlog has numbers, strings and bytes", b, form_name(b));
}

/* The map header starting a record into *N. Returns take()'s result, or -1 with D set. */
static int read_map_header(struct auditlog_walk *w, uint64_t *n, struct diag *d)
{
	unsigned char b;
	int rc = take(w, &b, 1, d);
	if (rc <= 0)
		return rc;
	if (b >= 0x80 && b <= 0x8f) {
		*n = b & 0x0f;
		rc = 1;
	} else if (b == 0xde || b == 0xdf) {
		rc = take_be(w, b == 0xde ? 2 : 4, n, d);
	} else {
		return diag_byte(d, input_name(w->in), w->start, "a record must be a msgpack map, got "
				 "form 0x%02x (%s)", b, form_name(b));
	}
	if (rc > 0 && *n > AUDITLOG_MAX_PAIRS)
		return diag_byte(d, input_name(w->in), w->start, "a record of %llu keys (at most %d)",
				 (unsigned long long)*n, AUDITLOG_MAX_PAIRS);
	return rc;
}

static int read_pairs(struct auditlog_walk *w, uint64_t n, struct diag *d)
{
	struct auditlog_record *r = w->r;
	for (r->npairs = 0; r->npairs < n; r->npairs++) {
		size_t i = r->npairs;
		uint64_t off = w->offset;
		unsigned char b;
		int rc = take(w, &b, 1, d), is = 0;
		uint64_t len = 0;
		if (rc > 0)
			rc = string_len(w, b, &is, &len, d);
		if (rc > 0 && (!is || (b >= 0xc4 && b <= 0xc6)))
			return diag_byte(d, input_name(w->in), off, "a key of msgpack form 0x%02x, where an "
					 "auditlog has strings", b);
		w->at[i][0] = w->rec_len;
		r->pairs[i].key_len = rc > 0 ? (size_t)len : 0;
		if (rc > 0)
			rc = take(w, NULL, (size_t)len, d);
		if (rc > 0)
			rc = read_value(w, &r->pairs[i].v, &w->at[i][1], d);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

int auditlog_walk_next(struct auditlog_walk *w, struct auditlog_record *r, struct diag *d)
{
	int rc = fill(w, d);
	if (rc <= 0)
		return rc;
	w->start = r->offset = w->offset;
	w->rec_len = 0;
	XGROW(w->rec, w->rec_cap, 64);   /* never NULL, even for a record of empty strings */
	w->r = r;
	uint64_t n = 0;
	rc = read_map_header(w, &n, d);
	if (rc > 0)
		rc = read_pairs(w, n, d);
	if (rc == 0) {
		w->truncated = w->offset - w->start;
		return 0;
	}
	if (rc < 0)
		return -1;
	/* the buffer is final: point into it */
	for (size_t i = 0; i < r->npairs; i++) {
		r->pairs[i].key = (const char *)w->rec + w->at[i][0];
		struct auditlog_value *v = &r->pairs[i].v;
		if (v->kind == AUDITLOG_STR || v->kind == AUDITLOG_BIN)
			v->p = w->rec + w->at[i][1];
	}
	return 1;
}

const struct auditlog_value *auditlog_record_get(const struct auditlog_record *r, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; i < r->npairs; i++)
		if (r->pairs[i].key_len == n && !memcmp(r->pairs[i].key, key, n))
			return &r->pairs[i].v;
	return NULL;
}

int auditlog_walk_is_log(const unsigned char *p, size_t n)
{
	/* RaptorJIT starts every record with a fixmap; its first key "type" in any string form.
	 * cgjit's inputs peek 4 bytes (after zstd), which tell a log from a perf map's text
	 * and a jitdump's magic; what more of the key N bytes show must match too. */
	if (n < 4 || p[0] < 0x81 || p[0] > 0x8f)
		return 0;
	unsigned char want[16] = { p[0] };
	size_t m = 1;
	if (p[1] == 0xa4) {
		want[m++] = 0xa4;
	} else if (p[1] == 0xd9 || p[1] == 0xda || p[1] == 0xdb) {
		size_t w = p[1] == 0xd9 ? 1 : p[1] == 0xda ? 2 : 4;
		want[m++] = p[1];
		want[m + w - 1] = 4;   /* the rest of the length's bytes are 0 */
		m += w;
	} else {
		return 0;
	}
	memcpy(want + m, "type", 4);
	m += 4;
	return !memcmp(p, want, n < m ? n : m);
}
