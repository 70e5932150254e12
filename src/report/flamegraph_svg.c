/* flamegraph_svg.c - writes the frames of flamegraph.c as one SVG file: a first walk
 * measures the depth (the root is drawn at the bottom), a second writes each frame as a
 * <g> nested in its parent's, with data-x/-v/-d (offset, width, depth in cost units) that
 * the inline script uses to zoom and the tests use to check widths. Names are escaped and
 * made valid UTF-8 here, so that the file is well-formed XML whatever the profile holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/doc_out.h"
#include "report/flamegraph.h"
#include "report/flamegraph_svg.h"
#include "report/prof_diff.h"
#include "report/prof_match.h"
#include "report/profile.h"

/* Layout, in pixels. The font is monospaced so that the C side and the script cut labels
 * alike: CHAR_W is a little more than 12px DejaVu Sans Mono's advance (7.22). */
#define SVG_W 1200.0
#define PAD 10.0
#define GRAPH_W (SVG_W - 2 * PAD)
#define FRAME_H 16.0
#define TOP 66.0
#define BOTTOM 34.0
#define CHAR_W 7.3
#define ELIDED_GREY 244

#define PUT(k, lit) flamegraph_sink_put(k, lit, sizeof(lit) - 1)

struct svg {
	struct flamegraph_sink sink;
	struct flamegraph *g;
	const struct profile *p;
	const struct flamegraph_base *base;   /* --diff, or NULL */
	unsigned ev;
	uint64_t total;
	unsigned max_depth;
	size_t frames;
	const struct profile *now;   /* --diff: whose self costs are compared: P or a scoped one */
	size_t *now_of;           /* each function of P's index in NOW (NULL: NOW is P) */
	unsigned now_ev;
	double max_change;        /* --diff: the largest |self change| among the frames drawn */
	double height;
	struct prof_name name;    /* the name of the function being drawn (profile_name()) */
};

static const char script[] =
	"var W = " "1180" ", X0 = 10, CW = 7.3, frames, details;\n"
	"function nameOf(g) { return g.querySelector('title').textContent.split('\\n')[0]; }\n"
	"function label(g, w) {\n"
	"  var n = Math.floor((w - 4) / CW), s = nameOf(g);\n"
	"  g.querySelector('text').textContent = n < 3 ? '' : s.length <= n ? s : s.slice(0, n - 2) + '..';\n"
	"}\n"
	"function zoom(z) {\n"
	"  var zx = +z.getAttribute('data-x'), zv = +z.getAttribute('data-v'), zd = +z.getAttribute('data-d');\n"
	"  frames.forEach(function (f) {\n"
	"    var x = +f.getAttribute('data-x'), v = +f.getAttribute('data-v'), d = +f.getAttribute('data-d');\n"
	"    if (x + v <= zx || x >= zx + zv) { f.style.display = 'none'; return; }\n"
	"    f.style.display = '';\n"
	"    var nx = X0, nw = W;\n"
	"    if (d < zd) f.classList.add('parent');\n"
	"    else { f.classList.remove('parent'); nx = X0 + (x - zx) / zv * W; nw = v / zv * W; }\n"
	"    var r = f.querySelector('rect');\n"
	"    r.setAttribute('x', nx.toFixed(2)); r.setAttribute('width', nw.toFixed(2));\n"
	"    f.querySelector('text').setAttribute('x', (nx + 3).toFixed(2));\n"
	"    label(f, nw);\n"
	"  });\n"
	"  document.getElementById('reset').style.display = zd ? '' : 'none';\n"
	"}\n"
	"function init() {\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  details = document.getElementById('details');\n"
	"  var all = document.getElementById('frames');\n"
	"  all.addEventListener('mouseover', function (e) {\n"
	"    var g = e.target.closest('g.f');\n"
	"    if (g) details.textContent = g.querySelector('title').textContent.replace(/\\n/g, '  |  ');\n"
	"  });\n"
	"  all.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  all.addEventListener('click', function (e) { var g = e.target.closest('g.f'); if (g) zoom(g); });\n"
	"  document.getElementById('reset').addEventListener('click', function () { zoom(frames[0]); });\n"
	"}\n";

static const char style[] =
	"text { font: 12px 'DejaVu Sans Mono', monospace; fill: #000; }\n"
	"#title { font-size: 16px; font-weight: bold; }\n"
	"#reset { cursor: pointer; fill: #0645ad; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.f:hover > rect { stroke: #000; stroke-width: 0.6; }\n"
	"g.parent > rect { opacity: 0.55; }\n";

/* The length of the UTF-8 sequence at P (at most N bytes), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* S as XML character data, at most MAX characters (then cut to MAX - 2 and ".."): markup
 * characters escaped, control characters (below 0x20, 0x7f) as spaces as in folded output,
 * bytes that are not UTF-8 as U+FFFD. */
static void put_text(struct flamegraph_sink *k, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), chars = 0;
	for (size_t i = 0; i < n; chars++) {
		size_t l = utf8_len(p + i, n - i);
		i += l ? l : 1;
	}
	size_t keep = chars > max ? (max >= 2 ? max - 2 : 0) : chars;
	for (size_t i = 0, c = 0; i < n && c < keep; c++) {
		size_t l = utf8_len(p + i, n - i);
		switch (l ? p[i] : 0) {
		case 0: PUT(k, "\xef\xbf\xbd"); break;
		case '&': PUT(k, "&amp;"); break;
		case '<': PUT(k, "&lt;"); break;
		case '>': PUT(k, "&gt;"); break;
		case '"': PUT(k, "&quot;"); break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f)
				PUT(k, " ");
			else
				flamegraph_sink_put(k, s + i, l);
		}
		i += l ? l : 1;
	}
	if (keep < chars)
		PUT(k, "..");
}

/* --jit-only's stand-in for the code JIT functions call that is not JIT (flamegraph.h). */
static int is_not_jit(struct svg *v, size_t fn)
{
	return !*profile_obj(v->p, fn) && !*profile_file(v->p, fn) && !strcmp(profile_name(v->p, fn, &v->name), FLAMEGRAPH_NOT_JIT_NAME);
}

/* A function's frame, not the root or an elision frame. */
static int is_fn(size_t fn)
{
	return fn != FLAMEGRAPH_ROOT && fn != FLAMEGRAPH_ELIDED;
}

/* FN's function in NOW, or SIZE_MAX. */
static size_t now_index(const struct svg *v, size_t fn)
{
	return v->now_of ? v->now_of[fn] : fn;
}

static uint64_t self_now(const struct svg *v, size_t fn)
{
	size_t i = now_index(v, fn);
	return i == SIZE_MAX ? 0 : profile_self(v->now, i)[v->now_ev];
}

/* FN's self cost in BASE into *WAS (0 where BASE has no such function); returns whether
 * BASE has it. */
static int self_was(const struct svg *v, size_t fn, uint64_t *was)
{
	size_t i = now_index(v, fn);
	int in = i != SIZE_MAX && v->base->in_base[i];
	*was = in ? v->base->self[i] : 0;
	return in;
}

static int64_t self_change(const struct svg *v, size_t fn)
{
	uint64_t now = self_now(v, fn), was;
	self_was(v, fn, &was);
	/* clamped as cgjit diff clamps: costs may pass 2^63, a difference in int64_t may not */
	if (now >= was)
		return now - was > INT64_MAX ? INT64_MAX : (int64_t)(now - was);
	return was - now > INT64_MAX ? -INT64_MAX : -(int64_t)(was - now);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;   /* FNV-1a: a function keeps its colour from run to run */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* By kind: JIT code green, code without a symbol grey, the rest warm (as flamegraph.pl);
 * the shade within a kind comes from the name. Elision frames are near white, with a
 * dashed outline (draw()), so that they read as no function's. */
static void kind_colour(struct svg *v, size_t fn, unsigned rgb[3])
{
	if (fn == FLAMEGRAPH_ROOT) {
		rgb[0] = rgb[1] = rgb[2] = 200;
		return;
	}
	if (fn == FLAMEGRAPH_ELIDED) {
		rgb[0] = rgb[1] = rgb[2] = ELIDED_GREY;
		return;
	}
	const struct prof_fn *f = &v->p->fns[fn];
	uint32_t h = name_hash(profile_name(v->p, fn, &v->name));
	if (is_not_jit(v, fn)) {
		rgb[0] = rgb[1] = rgb[2] = 222;
		return;
	}
	if (f->kind == PROF_UNNAMED_JIT || f->kind == PROF_NO_SYMBOL) {
		rgb[0] = rgb[1] = rgb[2] = 175 + h % 30;
	} else if (f->jit) {
		rgb[0] = 70 + h % 60;
		rgb[1] = 185 + (h >> 8) % 55;
		rgb[2] = 90 + (h >> 16) % 60;
	} else {
		rgb[0] = 225 + h % 30;
		rgb[1] = 95 + (h >> 8) % 130;
		rgb[2] = 35 + (h >> 16) % 45;
	}
}

/* --diff: from light grey (no change) to red (the largest growth among the frames drawn)
 * or blue (the largest shrink), in proportion to the change of the function's self cost. */
static void diff_colour(struct svg *v, size_t fn, unsigned rgb[3])
{
	static const double none[3] = { 232, 232, 232 }, more[3] = { 222, 36, 36 }, less[3] = { 40, 96, 232 };
	double r = 0;
	if (fn == FLAMEGRAPH_ELIDED) {
		rgb[0] = rgb[1] = rgb[2] = ELIDED_GREY;
		return;
	}
	int64_t c = is_fn(fn) ? self_change(v, fn) : 0;
	if (v->max_change > 0)
		r = (double)(c < 0 ? -c : c) / v->max_change;
	const double *to = c < 0 ? less : more;
	for (int i = 0; i < 3; i++)
		rgb[i] = (unsigned)(none[i] + (to[i] - none[i]) * r + 0.5);
}

static double px(const struct svg *v, uint64_t cost)
{
	return v->total ? GRAPH_W * ((double)cost / (double)v->total) : 0;
}

static double share(const struct svg *v, uint64_t cost)
{
	return v->total ? 100.0 * (double)cost / (double)v->total : 0;
}

static int measure(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct svg *v = ctx;
	if (leave)
		return 0;
	v->frames++;
	if (depth > v->max_depth)
		v->max_depth = depth;
	if (v->base && is_fn(stack[depth].fn)) {
		int64_t c = self_change(v, stack[depth].fn);
		double a = c < 0 ? -(double)c : (double)c;
		if (a > v->max_change)
			v->max_change = a;
	}
	return 0;
}

static const char *frame_name(struct svg *v, size_t fn)
{
	return fn == FLAMEGRAPH_ROOT ? "all" : fn == FLAMEGRAPH_ELIDED ? FLAMEGRAPH_ELIDED_NAME : profile_name(v->p, fn, &v->name);
}

/* The tooltip: name, then the frame's cost and share, then where the function is from
 * and, with --diff, how its self cost changed. Lines are split by the script. */
static void put_title(struct svg *v, const struct flamegraph_frame *fr)
{
	struct flamegraph_sink *k = &v->sink;
	char b1[32], b2[32], b3[32];
	const struct prof_fn *f = is_fn(fr->fn) ? &v->p->fns[fr->fn] : NULL;
	PUT(k, "<title>");
	put_text(k, frame_name(v, fr->fn), SIZE_MAX);
	flamegraph_sink_printf(k, "\n%s %s (%.2f%%), self %s", doc_commas(b1, fr->width),
			       v->p->events[v->ev], share(v, fr->width), doc_commas(b2, fr->self));
	if (fr->fn == FLAMEGRAPH_ELIDED)
		PUT(k, "\nframes cut here: narrower than the minimum width, or below --max-depth");
	if (f && is_not_jit(v, fr->fn)) {
		PUT(k, "\ncode that is not JIT, called from the JIT frame below (--jit-only)");
		f = NULL;
	}
	if (f) {
		PUT(k, "\n");
		if (f->jit)
			PUT(k, "JIT ");
		const char *obj = profile_obj(v->p, fr->fn);
		put_text(k, *obj ? obj : "-", SIZE_MAX);
		PUT(k, ", ");
		put_text(k, profile_file(v->p, fr->fn), SIZE_MAX);
	}
	if (f && v->base) {
		int64_t c = self_change(v, fr->fn);
		uint64_t was;
		if (!self_was(v, fr->fn, &was)) {
			flamegraph_sink_printf(k, "\nnot in the base profile (self %s)", doc_commas(b1, self_now(v, fr->fn)));
		} else {
			flamegraph_sink_printf(k, "\nself %s -> %s (%s", doc_commas(b1, was),
					       doc_commas(b2, self_now(v, fr->fn)), doc_commas_signed(b3, c));
			if (was)
				flamegraph_sink_printf(k, ", %+.2f%%", 100.0 * (double)c / (double)was);
			PUT(k, ")");
		}
	}
	PUT(k, "</title>");
}

static int draw(void *ctx, const struct flamegraph_frame *stack, unsigned depth, int leave)
{
	struct svg *v = ctx;
	struct flamegraph_sink *k = &v->sink;
	const struct flamegraph_frame *fr = &stack[depth];
	if (leave) {
		PUT(k, "</g>\n");
		return k->failed ? -1 : 0;
	}
	unsigned rgb[3];
	(v->base ? diff_colour : kind_colour)(v, fr->fn, rgb);
	double x = PAD + px(v, fr->x), w = px(v, fr->width);
	double y = v->height - BOTTOM - (depth + 1) * FRAME_H;
	flamegraph_sink_printf(k, "<g class=\"f\" data-x=\"%llu\" data-v=\"%llu\" data-d=\"%u\">",
			       (unsigned long long)fr->x, (unsigned long long)fr->width, depth);
	put_title(v, fr);
	flamegraph_sink_printf(k, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"2\" fill=\"rgb(%u,%u,%u)\"%s/>",
			       x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2],
			       fr->fn == FLAMEGRAPH_ELIDED ? " stroke=\"#888\" stroke-dasharray=\"3,2\"" : "");
	flamegraph_sink_printf(k, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
	double fit = (w - 4) / CHAR_W;
	if (fit >= 3)
		put_text(k, frame_name(v, fr->fn), (size_t)fit);
	PUT(k, "</text>\n");
	return k->failed ? -1 : 0;
}

static const char *base_name(const char *path)
{
	if (!path)   /* a profile built in memory */
		return "-";
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static void put_head(struct svg *v, const struct flamegraph_svg_opts *o)
{
	struct flamegraph_sink *k = &v->sink;
	char b[32];
	flamegraph_sink_printf(k, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
			       "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
			       "viewBox=\"0 0 %.0f %.0f\" onload=\"init()\" data-total=\"%llu\" data-event=\"",
			       SVG_W, v->height, SVG_W, v->height, (unsigned long long)v->total);
	put_text(k, v->p->events[v->ev], SIZE_MAX);
	flamegraph_sink_printf(k, "\">\n<style>\n%s</style>\n<script><![CDATA[\n%s]]></script>\n", style, script);
	flamegraph_sink_printf(k, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfbf7\"/>\n"
			       "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">%s",
			       SVG_W / 2, v->base ? "Differential flame graph: " : "Flame graph: ");
	put_text(k, o->title ? o->title : base_name(v->p->path), 80);
	if (v->base) {
		PUT(k, " against ");
		put_text(k, base_name(v->base->path), 60);
	}
	PUT(k, "</text>\n");
	flamegraph_sink_printf(k, "<text x=\"%.0f\" y=\"44\" text-anchor=\"middle\">", SVG_W / 2);
	put_text(k, v->p->events[v->ev], 40);
	/* a file without totals: (pprof's): callgrind_annotate's "(calculated)" */
	flamegraph_sink_printf(k, " %s in all%s; ", doc_commas(b, v->total),
			       v->p->totals_calculated ? " (calculated)" : "");
	if (v->base)
		PUT(k, "colour: change of the function's self cost (red more, blue less)");
	else
		PUT(k, "green: JIT code, grey: no symbol, warm: other code");
	PUT(k, "; dashed: " FLAMEGRAPH_ELIDED_NAME " (cut frames); stacks estimated from call arcs</text>\n");
	if (o->scope) {
		flamegraph_sink_printf(k, "<text x=\"%.0f\" y=\"58\" text-anchor=\"middle\">", SVG_W / 2);
		put_text(k, o->scope, 160);
		PUT(k, "</text>\n");
	}
	flamegraph_sink_printf(k, "<text id=\"reset\" x=\"%.0f\" y=\"24\" style=\"display:none\">Reset zoom</text>\n", PAD);
	flamegraph_sink_printf(k, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", PAD, v->height - 12);
}

int flamegraph_svg_write(struct flamegraph *g, const struct flamegraph_svg_opts *o,
			 struct output *out, struct diag *d)
{
	struct svg *v = xcalloc(1, sizeof(*v));
	v->sink.out = out;
	v->sink.d = d;
	v->g = g;
	v->p = flamegraph_profile(g);
	v->ev = flamegraph_event(g);
	v->total = flamegraph_total(g);
	v->base = o->base;
	v->now = o->now ? o->now : v->p;
	v->now_ev = o->now ? o->now_event : v->ev;
	if (o->base && o->now)
		v->now_of = prof_match(o->now, v->p);
	flamegraph_walk(g, measure, v);
	v->height = TOP + (v->max_depth + 1) * FRAME_H + BOTTOM;
	put_head(v, o);
	PUT(&v->sink, "<g id=\"frames\">\n");
	flamegraph_walk(g, draw, v);
	PUT(&v->sink, "</g>\n</svg>\n");
	int rc = flamegraph_sink_flush(&v->sink);
	free(v->now_of);
	prof_name_free(&v->name);
	free(v);
	return rc;
}

void flamegraph_base_make(struct flamegraph_base *fb, const struct profile *base, unsigned ev,
			  const struct profile *now)
{
	size_t *of = prof_match(base, now);
	fb->path = base->path ? xstrndup(base->path, strlen(base->path)) : NULL;
	fb->n = now->nfns;
	fb->self = xmalloc((fb->n + 1) * sizeof(*fb->self));
	fb->in_base = xmalloc(fb->n + 1);
	for (size_t i = 0; i < fb->n; i++) {
		fb->in_base[i] = of[i] != SIZE_MAX;
		fb->self[i] = of[i] != SIZE_MAX ? profile_self(base, of[i])[ev] : 0;
	}
	free(of);
}

void flamegraph_base_free(struct flamegraph_base *fb)
{
	free(fb->path);
	free(fb->self);
	free(fb->in_base);
	memset(fb, 0, sizeof(*fb));
}
