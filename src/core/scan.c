/* scan.c - number formatting for the writer's hot path. */
#include <string.h>

#include "core/scan.h"

/* A table, not three range tests a byte: the reader reads every address of a profile's
 * calls and block starts with it. */
const signed char scan_hex_value[256] = {
#define X16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
	X16, X16, X16,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,           /* '0' to '9' */
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,   /* 'A' to 'F' */
	X16,
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,   /* 'a' to 'f' */
	X16, X16, X16, X16, X16, X16, X16, X16, X16,
#undef X16
};

size_t fmt_dec(char *out, uint64_t v)
{
	/* Two digits a division, written from the end once the length is known: the writer
	 * formats millions of ids and positions (on the big node profile 2.9 million numbers,
	 * 173 M instructions one digit at a time, 94 M two at a time with a loop for the
	 * length). The length comes from the bit length (log10(2) is about 1233 / 4096) and
	 * one comparison; below 2^32 the divisions are 32-bit ones. */
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
		100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
	};
	/* most numbers are costs and line numbers of one or two digits */
	if (v < 100) {
		if (v < 10) {
			out[0] = (char)('0' + v);
			return 1;
		}
		memcpy(out, pairs + 2 * v, 2);
		return 2;
	}
	unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	size_t n = t + (v >= pow10[t]);
	char *p = out + n;
	while (v >> 32) {
		uint64_t q = v / 100;
		memcpy(p -= 2, pairs + 2 * (v - q * 100), 2);
		v = q;
	}
	uint32_t u = (uint32_t)v;
	while (u >= 100) {
		uint32_t q = u / 100;
		memcpy(p -= 2, pairs + 2 * (u - q * 100), 2);
		u = q;
	}
	if (u >= 10)
		memcpy(p - 2, pairs + 2 * u, 2);
	else
		p[-1] = (char)('0' + u);
	return n;
}

size_t fmt_hex(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	/* the digits from the bit length, written from the end: no reversal */
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	char *p = out + 2 + n;
	out[0] = '0';
	out[1] = 'x';
	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v);
	return n + 2;
}
