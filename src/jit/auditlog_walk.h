/* auditlog_walk.h - one pass over a RaptorJIT auditlog's records (docs/formats.md 7.2):
 * msgpack maps one after another, each decoded with its keys and its scalar values (numbers,
 * strings, byte strings), every length checked against the file. Used by auditlog.c, which
 * gives the records their meaning. A record cut off by the end of the file (a process that
 * died before stdio flushed its log: formats.md 7.1) ends the walk cleanly and is counted
 * (auditlog_walk_truncated()), as a jitdump's is. */
#ifndef CGJIT_AUDITLOG_WALK_H
#define CGJIT_AUDITLOG_WALK_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct input;
struct auditlog_walk;

/* Keys per record, at most: RaptorJIT writes up to 5; the limit bounds a hostile map. */
enum { AUDITLOG_MAX_PAIRS = 64 };
/* A record's bytes, at most: RaptorJIT's whole log stops at 100 MB (formats.md 7.1). */
#define AUDITLOG_MAX_RECORD (256u << 20)

enum auditlog_kind { AUDITLOG_UINT, AUDITLOG_INT, AUDITLOG_STR, AUDITLOG_BIN, AUDITLOG_NIL,
		     AUDITLOG_BOOL };

struct auditlog_value {
	enum auditlog_kind kind;
	uint64_t u;                /* UINT, BOOL; INT as two's complement */
	const unsigned char *p;    /* STR, BIN: LEN bytes (not NUL-terminated) */
	size_t len;
};

struct auditlog_record {
	uint64_t offset;           /* the file offset of its first byte, for messages */
	size_t npairs;
	struct {
		const char *key;   /* KEY_LEN bytes, not NUL-terminated */
		size_t key_len;
		struct auditlog_value v;
	} pairs[AUDITLOG_MAX_PAIRS];
};

/* 1 if the N (at least 4) bytes at P start like an auditlog: a fixmap whose first key is
 * "type" (formats.md 7.7: there is no magic), as far as N bytes show, 0 if not. */
int auditlog_walk_is_log(const unsigned char *p, size_t n);

/* A walker over IN (not closed here; its name is used in messages). Never NULL. */
struct auditlog_walk *auditlog_walk_new(struct input *in);
void auditlog_walk_free(struct auditlog_walk *w);   /* NULL is a no-op */

/* The next record into *R; its strings and bytes are valid until the next call or
 * auditlog_walk_free(). Returns 1, 0 at the end (a clean one, or a record cut off), or -1
 * with D set ("FILE: byte N: ..."): a record that is not a map, a key that is not a string,
 * a nested map or array, a form msgpack does not define, more than AUDITLOG_MAX_PAIRS keys
 * or AUDITLOG_MAX_RECORD bytes, a read error. */
int auditlog_walk_next(struct auditlog_walk *w, struct auditlog_record *r, struct diag *d);

/* The value of KEY in R, or NULL. */
const struct auditlog_value *auditlog_record_get(const struct auditlog_record *r, const char *key);

/* Bytes of the record the file ended inside (0: it ended between records). */
uint64_t auditlog_walk_truncated(const struct auditlog_walk *w);

#endif
