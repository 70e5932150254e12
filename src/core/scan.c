/* scan.c - number formatting for the writer's hot path. */
#include <string.h>

#include "core/scan.h"

size_t fmt_dec(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

size_t fmt_hex(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;
	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < n; i++)
		out[2 + i] = tmp[n - 1 - i];
	return n + 2;
}
