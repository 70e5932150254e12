/* perfmap.c - perf map reader: one pass, every line checked, entries into a symtab. */
#include <string.h>

#include "core/diag.h"
#include "core/io.h"
#include "core/linereader.h"
#include "core/scan.h"
#include "jit/perfmap.h"
#include "jit/symtab.h"

/* A hex digit's value + 1, 0 for other bytes. */
static const unsigned char hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES 0x0101010101010101ULL
/* 0x80 in each byte B of X with LO < B < HI (LO, HI <= 128; exact: no carry crosses a
 * byte). */
static uint64_t bytes_between(uint64_t x, unsigned lo, unsigned hi)
{
	uint64_t low7 = x & 0x7f * ONES;
	return (ONES * (127 + hi) - low7) & ~x & (low7 + ONES * (127 - lo)) & 0x80 * ONES;
}

/* Up to eight hex digits at S (eight bytes readable) as a number; *N gets how many there
 * were. A map of a million lines has 20 million digits: one at a time, they took a
 * quarter of the parsing. */
static uint64_t hex8(const char *s, unsigned *n)
{
	uint64_t x;
	memcpy(&x, s, 8);
	uint64_t hex = bytes_between(x, '0' - 1, '9' + 1) | bytes_between(x, 'a' - 1, 'f' + 1) |
		       bytes_between(x, 'A' - 1, 'F' + 1);
	uint64_t other = ~hex & 0x80 * ONES;
	unsigned k = other ? (unsigned)__builtin_ctzll(other) / 8 : 8;
	*n = k;
	if (k == 0)
		return 0;
	/* a digit's value: its low nibble, + 9 for letters (bit 6); the first digit is the
	 * lowest byte, so reverse the bytes before packing nibbles pairwise */
	uint64_t v = (x & 0x0f * ONES) + 9 * ((x >> 6) & ONES);
	if (k < 8)
		v &= (1ULL << (8 * k)) - 1;
	v = __builtin_bswap64(v);
	v = (v | v >> 4) & 0x00ff00ff00ff00ffULL;
	v = (v | v >> 8) & 0x0000ffff0000ffffULL;
	v = (v | v >> 16) & 0xffffffffULL;
	return v >> (4 * (8 - k));
}
#endif

/* Hex digits with an optional 0x/0X; as scan_hexdigits(), -1 for none or past 64 bits. */
static int scan_maphex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t x = 0;
	const char *first = s;
#ifdef ONES
	while (end - s >= 8) {
		unsigned k;
		uint64_t d = hex8(s, &k);
		if (k == 0)
			break;
		if (x >> (64 - 4 * k))   /* digits would be shifted out */
			return -1;
		x = x << (4 * k) | d;
		s += k;
		if (k < 8)
			goto done;
	}
#endif
	for (unsigned h; s < end && (h = hex1[(unsigned char)*s]) != 0; s++) {
		if (x >> 60)
			return -1;
		x = (x << 4) | (h - 1);
	}
#ifdef ONES
done:
#endif
	if (s == first)
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
