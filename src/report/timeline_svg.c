/* timeline_svg.c - the timeline document as an SVG chart (timeline_svg.h). Every number
 * drawn comes from the document, so the chart shows what the text and JSON say. Bar
 * heights use timeline_log_scale(): start-up loads thousands of functions in its first
 * bucket, and the late loads the chart is for would be invisible next to it linearly. */
#include <inttypes.h>
#include <string.h>

#include "report/doc_out.h"
#include "report/timeline.h"
#include "report/timeline_svg.h"

enum {
	WIDTH = 1200, LEFT = 96, RIGHT = 24, PLOT_W = WIDTH - LEFT - RIGHT,
	LOADS_Y = 96, LOADS_H = 200, BYTES_Y = 336, BYTES_H = 150, MOVES_Y = 526, MOVES_H = 50,
	LATE_Y = 612, LATE_H = 24, AXIS_Y = 652, HEIGHT = 700,
};

/* S with XML's special characters escaped (the document's strings are valid UTF-8
 * without control characters: doc_clean_utf8()). */
static void xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

static double x_of(uint64_t t, uint64_t span)
{
	return LEFT + (span ? (double)PLOT_W * (double)t / (double)span : 0.0);
}

/* 1, 10, 100, 1k, 10k, 100k, 1M, ... */
static const char *short_num(char *buf, uint64_t v)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T", "P", "E" };
	int k = 0;
	while (v >= 1000 && v % 1000 == 0 && k < 6) {
		v /= 1000;
		k++;
	}
	snprintf(buf, 32, "%" PRIu64 "%s", v, suffix[k]);
	return buf;
}

/* One panel of bars: a bucket's field and where and how the panel draws it. */
struct panel {
	const char *key;     /* the buckets' field: "loads", "bytes", "moves" or "aborts" */
	const char *title, *color;
	int y, h;            /* the plot's top and height */
};

static const struct panel panels[] = {
	{ "loads", "code loads per bucket", "#2e6fb5", LOADS_Y, LOADS_H },
	{ "bytes", "bytes of code loaded per bucket", "#e08a1e", BYTES_Y, BYTES_H },
	{ "moves", "code moves (CODE_MOVE) per bucket", "#6d6d6d", MOVES_Y, MOVES_H },
};
/* An auditlog has no moves: its aborted recordings take the third panel. */
static const struct panel aborts_panel = { "aborts", "aborted trace recordings (trace_abort) per bucket",
	"#6d6d6d", MOVES_Y, MOVES_H };

static int is_auditlog(const json_t *doc)
{
	return !strcmp(doc_get_str(doc, "source"), "auditlog");
}

/* Panel P: frame, title, log grid lines at powers of ten, and one bar per bucket. */
static void panel(FILE *f, const json_t *doc, const struct panel *p)
{
	const char *key = p->key, *color = p->color, *third = is_auditlog(doc) ? "aborts" : "moves";
	int y = p->y, h = p->h;
	const json_t *bk = json_object_get(doc, "buckets"), *b;
	size_t i, nb = json_array_size(bk);
	uint64_t max = 0, span = doc_get_u64(doc, "span");
	json_array_foreach(bk, i, b)
		max = doc_get_u64(b, key) > max ? doc_get_u64(b, key) : max;
	char num[32];
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"h\">%s (largest bucket %s; log scale)</text>\n",
		LEFT, y - 8, p->title, doc_commas(num, max));
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", LEFT, y, PLOT_W, h);
	if (max == 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">none</text>\n", LEFT + PLOT_W / 2, y + h / 2 + 4);
	for (uint64_t g = 1; max && g <= max; g *= 10) {
		double gy = y + h - h * timeline_log_scale(g, max);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>\n",
			LEFT, LEFT + PLOT_W, gy, gy, LEFT - 6, gy + 4, short_num(num, g));
		if (g > UINT64_MAX / 10)
			break;
	}
	json_array_foreach(bk, i, b) {
		uint64_t v = doc_get_u64(b, key);
		if (!v)
			continue;
		double x0 = x_of(doc_get_u64(b, "start"), span), x1 = x_of(doc_get_u64(b, "end"), span);
		if (span == 0) {   /* every record at one time: one full-width bucket */
			x0 = LEFT + (double)PLOT_W * (double)i / (double)nb;
			x1 = LEFT + (double)PLOT_W * (double)(i + 1) / (double)nb;
		}
		double w = x1 - x0 > 3 ? x1 - x0 - 1 : x1 - x0, bh = h * timeline_log_scale(v, max);
		char t0[48], t1[48], l[32], by[32];
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" class=\"bar\">"
			"<title>%s to %s: %s loads, %s bytes, %" PRIu64 " %s</title></rect>\n",
			x0, y + h - bh, w > 0.5 ? w : 0.5, bh, color, timeline_time(t0, doc, doc_get_u64(b, "start")),
			timeline_time(t1, doc, doc_get_u64(b, "end")), doc_commas(l, doc_get_u64(b, "loads")),
			doc_commas(by, doc_get_u64(b, "bytes")), doc_get_u64(b, third), third);
	}
}

/* Ticks at 1, 2 or 5 times a power of ten of the document's unit, about 8 of them. */
static void time_axis(FILE *f, const json_t *doc)
{
	uint64_t span = doc_get_u64(doc, "span"), step = 1;
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" class=\"axis\"/>\n", LEFT, LEFT + PLOT_W,
		AXIS_Y, AXIS_Y);
	if (span == 0)
		return;
	uint64_t target = span / 8 ? span / 8 : 1;   /* the smallest 1, 2 or 5 x 10^k >= it */
	while (step < target && step <= UINT64_MAX / 10) {
		if (step * 2 >= target || step * 5 >= target) {
			step *= step * 2 >= target ? 2 : 5;
			break;
		}
		step *= 10;
	}
	for (uint64_t t = 0; t <= span; t += step) {
		char buf[48];
		double x = x_of(t, span);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"axis\"/>"
			"<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>\n",
			x, x, AXIS_Y, AXIS_Y + 5, x, AXIS_Y + 20, timeline_time(buf, doc, t));
		if (t > UINT64_MAX - step)
			break;
	}
}

/* The listed late loads as ticks on one strip, each with its name as hover title. */
static void late_strip(FILE *f, const json_t *doc)
{
	const json_t *late = json_object_get(doc, "late"), *list = json_object_get(late, "list"), *e;
	uint64_t span = doc_get_u64(doc, "span");
	size_t i;
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"h\">late loads (after the warm-up): %" PRIu64
		" in all, the last %zu as ticks (hover for names)</text>\n",
		LEFT, LATE_Y - 8, doc_get_u64(late, "loads"), json_array_size(list));
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", LEFT, LATE_Y, PLOT_W,
		LATE_H);
	json_array_foreach(list, i, e) {
		char t[48], s[32];
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"3\" height=\"%d\" class=\"late\"><title>%s: ",
			x_of(doc_get_u64(e, "time"), span) - 1.5, LATE_Y + 2, LATE_H - 4,
			timeline_time(t, doc, doc_get_u64(e, "time")));
		xml(f, doc_get_str(e, "name"));
		fprintf(f, " (%s bytes)</title></rect>\n", doc_commas(s, doc_get_u64(e, "size")));
	}
}

static void warmup_marker(FILE *f, const json_t *doc)
{
	const json_t *late = json_object_get(doc, "late");
	uint64_t span = doc_get_u64(doc, "span"), after = doc_get_u64(late, "after");
	double x = x_of(after, span);
	char t[48], n[32];
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"startup\"><title>start-up: "
		"until %s</title></rect>\n", LEFT, LOADS_Y, x - LEFT, AXIS_Y - LOADS_Y, timeline_time(t, doc, after));
	fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" class=\"warm\"><title>warm-up %s = %s: "
		"%s loads after it</title></line>\n", x, x, LOADS_Y - 20, AXIS_Y,
		doc_get_str(late, "warmup"), timeline_time(t, doc, after), doc_commas(n, doc_get_u64(late, "loads")));
	fprintf(f, "<text x=\"%.2f\" y=\"%d\" class=\"wl\">warm-up (%s = %s)</text>\n", x + 4, LOADS_Y - 24,
		doc_get_str(late, "warmup"), t);
}

void timeline_svg_render(const json_t *doc, FILE *f)
{
	char a[48], l[32], b[32];
	int arch = !strcmp(doc_get_str(doc, "clock"), "arch");
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT);
	fputs("<style>.h{font-weight:bold}.frame{fill:none;stroke:#bbb}.grid{stroke:#e4e4e4}"
	      ".axis{stroke:#444}.yl{text-anchor:end;fill:#555}.xl{text-anchor:middle;fill:#333}"
	      ".bar:hover,.late:hover{opacity:.6}.late{fill:#c0392b}.startup{fill:#f3f3f3}"
	      ".warm{stroke:#c0392b;stroke-width:2;stroke-dasharray:6 4}.wl{fill:#c0392b}</style>\n", f);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
	fputs("<text x=\"16\" y=\"26\" font-size=\"17\" class=\"h\">JIT code loaded over time: ", f);
	xml(f, doc_get_str(doc, "dump"));
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"26\" text-anchor=\"end\" fill=\"#555\">%s</text>\n", WIDTH - RIGHT,
		json_is_string(json_object_get(doc, "valgrind_profile"))
			? "recorded under valgrind (its profile is beside the dump): times are stretched"
			: "times as the run took them: under valgrind, many times a native run's");
	if (is_auditlog(doc))
		fprintf(f, "<text x=\"16\" y=\"46\">RaptorJIT auditlog: %s traces compiled, %s bytes, %" PRIu64
			" aborted over %s (clock: CLOCK_MONOTONIC; times from the first event)</text>\n",
			doc_commas(l, doc_get_u64(doc, "loads")), doc_commas(b, doc_get_u64(doc, "bytes")),
			doc_get_u64(json_object_get(doc, "aborts"), "count"), timeline_time(a, doc, doc_get_u64(doc, "span")));
	else
		fprintf(f, "<text x=\"16\" y=\"46\">pid %" PRIu64 ": %s code loads, %s bytes, %" PRIu64 " moves over %s "
			"(clock: %s; times from the first record)</text>\n", doc_get_u64(doc, "pid"),
			doc_commas(l, doc_get_u64(doc, "loads")), doc_commas(b, doc_get_u64(doc, "bytes")),
			doc_get_u64(doc, "moves"), timeline_time(a, doc, doc_get_u64(doc, "span")),
			arch ? "CPU counter ticks" : "CLOCK_MONOTONIC");
	warmup_marker(f, doc);
	for (size_t i = 0; i < sizeof(panels) / sizeof(panels[0]); i++)
		panel(f, doc, i == 2 && is_auditlog(doc) ? &aborts_panel : &panels[i]);
	late_strip(f, doc);
	time_axis(f, doc);
	fputs("</svg>\n", f);
}
