/* doc_out.c - JSON (jansson) and YAML (libyaml) writers over one jansson tree, and number
 * formats shared by the text and Markdown renderers. The YAML emitter walks the JSON tree,
 * so the two formats cannot drift apart. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "core/xalloc.h"
#include "report/doc_out.h"

int doc_format_parse(const char *s, enum doc_format *out)
{
	static const struct { const char *name; enum doc_format f; } names[] = {
		{ "text", DOC_TEXT }, { "json", DOC_JSON }, { "markdown", DOC_MARKDOWN },
		{ "md", DOC_MARKDOWN }, { "yaml", DOC_YAML },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*out = names[i].f;
			return 0;
		}
	return -1;
}

int doc_write_json(const json_t *doc, FILE *f)
{
	if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

static int yaml_handler(void *data, unsigned char *buffer, size_t size)
{
	return fwrite(buffer, 1, size, data) == size;
}

static int emit_scalar(yaml_emitter_t *e, const char *v, int plain_ok)
{
	yaml_event_t ev;
	/* strings are quoted where a YAML reader would take them for another type */
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), plain_ok,
				     1, plain_ok ? YAML_ANY_SCALAR_STYLE
							: YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	return yaml_emitter_emit(e, &ev);
}

/* A string a YAML reader would take for a number, a boolean or null: written quoted, so
 * that it stays a string. libyaml quotes everything else that needs it by itself. */
static int looks_typed(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "~", "y",
					     "n", ".inf", "-.inf", "+.inf", ".nan" };
	if (!*s)
		return 1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(s, words[i]))
			return 1;
	char *end;
	strtod(s, &end);
	return !*end;
}

static int emit_value(yaml_emitter_t *e, const json_t *v)
{
	yaml_event_t ev;
	char buf[64];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
		if (!yaml_emitter_emit(e, &ev))
			return 0;
		const char *key;
		json_t *val;
		json_object_foreach((json_t *)v, key, val)
			if (!emit_scalar(e, key, !looks_typed(key)) || !emit_value(e, val))
				return 0;
		yaml_mapping_end_event_initialize(&ev);
		return yaml_emitter_emit(e, &ev);
	}
	case JSON_ARRAY: {
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(e, &ev))
			return 0;
		size_t i;
		json_t *val;
		json_array_foreach(v, i, val)
			if (!emit_value(e, val))
				return 0;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(e, &ev);
	}
	case JSON_STRING:
		return emit_scalar(e, json_string_value(v), !looks_typed(json_string_value(v)));
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return emit_scalar(e, buf, 1);
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		return emit_scalar(e, buf, 1);
	case JSON_TRUE:
		return emit_scalar(e, "true", 1);
	case JSON_FALSE:
		return emit_scalar(e, "false", 1);
	case JSON_NULL:
		return emit_scalar(e, "null", 1);
	}
	return 0;
}

int doc_write_yaml(const json_t *doc, FILE *f)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	if (!yaml_emitter_initialize(&e))
		return -1;
	yaml_emitter_set_output(&e, yaml_handler, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	int ok = 1;
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = ok && yaml_emitter_emit(&e, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
	ok = ok && yaml_emitter_emit(&e, &ev);
	ok = ok && emit_value(&e, doc);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&e, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&e, &ev);
	ok = ok && yaml_emitter_flush(&e);
	yaml_emitter_delete(&e);
	return ok ? 0 : -1;
}

json_t *doc_u64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

uint64_t doc_get_u64(const json_t *obj, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(obj, key));
	return v < 0 ? 0 : (uint64_t)v;
}

double doc_get_real(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

const char *doc_get_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : "";
}

const char *doc_commas(char *buf, uint64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), k = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

const char *doc_commas_signed(char *buf, int64_t v)
{
	if (v == 0)
		return strcpy(buf, "0");
	buf[0] = v < 0 ? '-' : '+';
	doc_commas(buf + 1, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	return buf;
}

/* Nanoseconds per count of a time unit ("10ns", "us", "ms", "s", "1000us"), or 0. */
static double unit_ns(const char *u)
{
	char *end;
	double mult = 1;
	if (*u >= '0' && *u <= '9') {
		mult = strtod(u, &end);
		u = end;
	}
	/* microseconds also as Xdebug 3.0 writes them (Time_(µs)): the micro sign and the Greek
	 * mu, in UTF-8 */
	static const struct { const char *name; double ns; } times[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 }, { "ms", 1e6 },
		{ "s", 1e9 },
	};
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (!strcmp(u, times[i].name))
			return mult * times[i].ns;
	return 0;
}

static const char *unit_of(const json_t *doc, const char *event)
{
	const char *u = json_string_value(json_object_get(json_object_get(doc, "units"), event));
	return u ? u : "";
}

/* |V| in UNIT after SIGN ("", "+" or "-"); 0 when UNIT is no time or byte unit. */
static int cost_in_unit(char *buf, const char *sign, uint64_t v, const char *unit)
{
	double ns = unit_ns(unit);
	if (ns > 0) {
		double t = (double)v * ns;
		if (t < 1e3)
			snprintf(buf, 48, "%s%.0f ns", sign, t);
		else if (t < 1e6)
			snprintf(buf, 48, "%s%.3f us", sign, t / 1e3);
		else if (t < 1e9)
			snprintf(buf, 48, "%s%.3f ms", sign, t / 1e6);
		else
			snprintf(buf, 48, "%s%.3f s", sign, t / 1e9);
		return 1;
	}
	if (!strcmp(unit, "bytes") || !strcmp(unit, "B")) {
		char n[32];
		snprintf(buf, 48, "%s%s B", sign, doc_commas(n, v));
		return 1;
	}
	return 0;
}

const char *doc_cost(char *buf, uint64_t v, const json_t *doc, const char *event)
{
	return cost_in_unit(buf, "", v, unit_of(doc, event)) ? buf : doc_commas(buf, v);
}

const char *doc_cost_json(char *buf, const json_t *v, const json_t *doc, const char *event)
{
	json_int_t x = json_integer_value(v);
	if (x >= 0)
		return doc_cost(buf, (uint64_t)x, doc, event);
	uint64_t mag = (uint64_t)0 - (uint64_t)x;
	if (cost_in_unit(buf, "-", mag, unit_of(doc, event)))
		return buf;
	buf[0] = '-';
	doc_commas(buf + 1, mag);
	return buf;
}

const char *doc_cost_signed(char *buf, int64_t v, const json_t *doc, const char *event)
{
	if (v == 0)
		return strcpy(buf, "0");
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	return cost_in_unit(buf, v < 0 ? "-" : "+", mag, unit_of(doc, event)) ? buf : doc_commas_signed(buf, v);
}

const char *doc_percent(char *buf, double share)
{
	snprintf(buf, 32, "%.2f%%", share * 100.0);
	return buf;
}

void doc_md_cell(FILE *f, const char *s)
{
	fputc('`', f);
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '`')
			fputc('\'', f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('`', f);
}

void doc_md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*_[]<>|~", *s))
			fputc('\\', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
}

char *doc_clean_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc(4 * len + 1), *o = out;
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		int ok = n > 0 && n <= len - i && !(c < 0x20 || c == 0x7f);
		for (size_t k = 1; ok && k < n; k++)
			ok = (p[i + k] & 0xc0) == 0x80;
		/* overlong 3/4-byte forms, UTF-16 surrogates, past U+10FFFF */
		if (ok && n == 3)
			ok = !(c == 0xe0 && p[i + 1] < 0xa0) && !(c == 0xed && p[i + 1] >= 0xa0);
		if (ok && n == 4)
			ok = !(c == 0xf0 && p[i + 1] < 0x90) && !(c == 0xf4 && p[i + 1] >= 0x90);
		if (!ok) {
			o += sprintf(o, "\\x%02x", c);
			i++;
			continue;
		}
		memcpy(o, p + i, n);
		o += n;
		i += n;
	}
	*o = '\0';
	return out;
}

json_t *doc_string(const char *s)
{
	char *clean = doc_clean_utf8(s, strlen(s));
	json_t *j = json_string(clean);
	free(clean);
	return j;
}

void doc_set_key(json_t *obj, const char *key, json_t *v)
{
	char *clean = doc_clean_utf8(key, strlen(key));
	json_object_set_new(obj, clean, v);
	free(clean);
}
