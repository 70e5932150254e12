/* diag.c - first-error-wins messages with file and line or byte offset. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/diag.h"

__attribute__((format(printf, 3, 0)))
static int diag_vset(struct diag *d, const char *prefix, const char *fmt, va_list ap)
{
	if (!d || d->set)
		return -1;
	size_t n = (size_t)snprintf(d->msg, sizeof(d->msg), "%s", prefix);
	if (n < sizeof(d->msg))
		vsnprintf(d->msg + n, sizeof(d->msg) - n, fmt, ap);
	d->set = 1;
	return -1;
}

int diag_at(struct diag *d, const char *file, uint64_t line, const char *fmt, ...)
{
	char prefix[512];
	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%llu: ", file, (unsigned long long)line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", file);
	va_list ap;
	va_start(ap, fmt);
	diag_vset(d, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

int diag_at_col(struct diag *d, const char *file, uint64_t line, uint64_t column,
		const char *fmt, ...)
{
	char prefix[512];
	snprintf(prefix, sizeof(prefix), "%s:%llu:%llu: ", file, (unsigned long long)line,
		 (unsigned long long)column);
	va_list ap;
	va_start(ap, fmt);
	diag_vset(d, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

int diag_byte(struct diag *d, const char *file, uint64_t offset, const char *fmt, ...)
{
	char prefix[512];
	snprintf(prefix, sizeof(prefix), "%s: byte %llu: ", file, (unsigned long long)offset);
	va_list ap;
	va_start(ap, fmt);
	diag_vset(d, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

const char *diag_quote(char *out, size_t outsz, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < len && o + 5 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
		if (i + 1 < len && o + 5 >= outsz && o + 3 < outsz) {
			out[o++] = '.';
			out[o++] = '.';
			out[o++] = '.';
			break;
		}
	}
	out[o < outsz ? o : outsz - 1] = '\0';
	return out;
}
