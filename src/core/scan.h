/* scan.h - pointer-advancing number scanners with explicit ends (no NUL reliance, no
 * strtoull). Each returns 0 and advances *P past the digits, or -1 leaving *P unchanged
 * (no digits, or the value does not fit in 64 bits). */
#ifndef CGJIT_SCAN_H
#define CGJIT_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Decimal digits. */
static inline int scan_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p, *unchecked = end - s > 19 ? s + 19 : end;
	uint64_t x = 0;
	unsigned d;
	if (s >= end || (d = (unsigned)(*s - '0')) > 9)
		return -1;
	/* 19 digits cannot overflow 64 bits: no test on them (this is the hot path) */
	do {
		x = x * 10 + d;
		s++;
	} while (s < unchecked && (d = (unsigned)(*s - '0')) <= 9);
	/* checked arithmetic rather than a division per digit */
	for (; s < end && (d = (unsigned)(*s - '0')) <= 9; s++)
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)d, &x))
			return -1;
	*v = x;
	*p = s;
	return 0;
}

/* The value of each byte as a hex digit, either case; -1 for any other byte. */
extern const signed char scan_hex_value[256];

static inline int hexval(char c)
{
	return scan_hex_value[(unsigned char)c];
}

/* Hex digits without a prefix. */
static inline int scan_hexdigits(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int h;
	if (s >= end || (h = hexval(*s)) < 0)
		return -1;
	do {
		if (x >> 60)
			return -1;
		x = (x << 4) | (uint64_t)h;
		s++;
	} while (s < end && (h = hexval(*s)) >= 0);
	*v = x;
	*p = s;
	return 0;
}

/* Decimal, or hex with a 0x/0X prefix (callgrind's Number). */
static inline int scan_number(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexval(s[2]) >= 0) {
		s += 2;
		if (scan_hexdigits(&s, end, v) < 0)
			return -1;
		*p = s;
		return 0;
	}
	return scan_dec(p, end, v);
}

/* Skips spaces and tabs; returns the number skipped. */
static inline size_t scan_blanks(const char **p, const char *end)
{
	const char *s = *p;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	size_t n = (size_t)(s - *p);
	*p = s;
	return n;
}

/* Writes V in decimal at OUT (room for 20 bytes); returns the length. */
size_t fmt_dec(char *out, uint64_t v);
/* Writes V as 0x-prefixed lowercase hex at OUT (room for 18 bytes); returns the length. */
size_t fmt_hex(char *out, uint64_t v);

#endif
