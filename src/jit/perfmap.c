/* perfmap.c - perf map reader: one pass, every line checked, entries into a symtab. */
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/scan.h"
#include "jit/perfmap.h"
#include "jit/symtab.h"

/* A hex digit's value, NOT_HEX (above 15) for other bytes, by byte: one load and one test
 * a digit. */
enum { NOT_HEX = 16 };
#define N NOT_HEX
static const unsigned char hex_value[256] = {
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, N, N, N, N, N, N,
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
};
#undef N

/* Hex digits with an optional 0x/0X; as scan_hexdigits(), -1 for none or past 64 bits.
 * Table-driven: a map of a million lines has 11 to 20 million digits, and on the
 * shuffled MoarVM map of scripts/bench this takes 194 instructions a line for both
 * numbers where the eight-at-a-time word arithmetic it replaces (issue 9) took 291 (and
 * two digits a step, 212). The value fits in 64 bits when at most 16 digits follow
 * the leading zeros, so the loops need no overflow test of their own. */
static int scan_maphex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	const char *first = s;
	while (s < end && *s == '0')
		s++;
	const char *sig = s;
	uint64_t x = 0;
	for (unsigned h; s < end && (h = hex_value[(unsigned char)*s]) < NOT_HEX; s++)
		x = x << 4 | h;
	if (s == first || s - sig > 16)
		return -1;
	*v = x;
	*p = s;
	return 0;
}

int perfmap_parse_line(const char *line, size_t len, struct symtab_entry *e, const char **what)
{
	const char *p = line, *end = line + len;
	scan_blanks(&p, end);
	if (scan_maphex(&p, end, &e->start) < 0) {
		*what = "expected 'START SIZE NAME' with START in hex";
		return -1;
	}
	if (scan_blanks(&p, end) == 0) {
		*what = "expected a space after START (hex digits only)";
		return -1;
	}
	if (scan_maphex(&p, end, &e->size) < 0) {
		*what = "expected SIZE in hex after START";
		return -1;
	}
	if (scan_blanks(&p, end) == 0 && p < end) {
		*what = "expected a space after SIZE (hex digits only)";
		return -1;
	}
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (p == end) {
		*what = "expected a symbol name after START and SIZE";
		return -1;
	}
	e->name = p;
	e->name_len = (size_t)(end - p);
	return 0;
}

int perfmap_read(struct symtab *st, const char *path, const char *object, size_t max_line,
		 struct perfmap_stats *stats, struct diag *d)
{
	memset(stats, 0, sizeof(*stats));
	struct input *in = input_open(path, d);
	if (!in)
		return -1;
	int rc = perfmap_read_input(st, in, object, max_line, stats, d);
	input_close(in);
	return rc;
}

int perfmap_read_input(struct symtab *st, struct input *in, const char *object, size_t max_line,
		       struct perfmap_stats *stats, struct diag *d)
{
	const char *path = input_name(in);
	memset(stats, 0, sizeof(*stats));
	uint32_t src = symtab_add_source(st, path, object, SYMTAB_PRIO_MAP);
	struct line_reader lr;
	line_reader_init(&lr, in, max_line);
	int rc = 0;
	const char *line;
	size_t len;
	for (;;) {
		int r = line_reader_next(&lr, &line, &len, d);
		if (r <= 0) {
			rc = r;
			break;
		}
		stats->lines++;
		if (memchr(line, '\0', len)) {
			rc = diag_at(d, path, lr.lineno, "NUL byte in a perf map line");
			break;
		}
		const char *p = line, *e = line + len;
		scan_blanks(&p, e);
		if (p == e) {
			stats->empty_lines++;
			continue;
		}
		struct symtab_entry ent = { .source_line = lr.lineno };
		const char *what;
		if (perfmap_parse_line(line, len, &ent, &what) < 0) {
			char q[100];
			rc = diag_at(d, path, lr.lineno, "%s, got '%s'", what,
				     diag_quote(q, sizeof(q), line, len));
			break;
		}
		if (ent.size == 0) {
			stats->zero_size++;
		} else {
			stats->entries++;
		}
		if (symtab_add(st, src, &ent, d) < 0) {
			rc = -1;
			break;
		}
		stats->unterminated = lr.missing_newline;
	}
	line_reader_free(&lr);
	return rc;
}
