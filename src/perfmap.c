/* perfmap.c - perf map reader: one pass, every line checked, entries into a symtab. */
#include <string.h>

#include "diag.h"
#include "io.h"
#include "linereader.h"
#include "perfmap.h"
#include "scan.h"
#include "symtab.h"

static int scan_maphex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (scan_hexdigits(&s, end, v) < 0)
		return -1;
	*p = s;
	return 0;
}

int perfmap_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
		       const char **name, size_t *name_len, const char **what)
{
	const char *p = line, *end = line + len;
	scan_blanks(&p, end);
	if (scan_maphex(&p, end, start) < 0) {
		*what = "expected 'START SIZE NAME' with START in hex";
		return -1;
	}
	if (scan_blanks(&p, end) == 0) {
		*what = "expected a space after START (hex digits only)";
		return -1;
	}
	if (scan_maphex(&p, end, size) < 0) {
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
	*name = p;
	*name_len = (size_t)(end - p);
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
		uint64_t start, size;
		const char *name, *what;
		size_t nlen;
		if (perfmap_parse_line(line, len, &start, &size, &name, &nlen, &what) < 0) {
			char q[100];
			rc = diag_at(d, path, lr.lineno, "%s, got '%s'", what,
				     diag_quote(q, sizeof(q), line, len));
			break;
		}
		if (size == 0) {
			stats->zero_size++;
		} else {
			stats->entries++;
		}
		if (symtab_add(st, src, start, size, name, nlen, lr.lineno, d) < 0) {
			rc = -1;
			break;
		}
		stats->unterminated = lr.missing_newline;
	}
	line_reader_free(&lr);
	return rc;
}
