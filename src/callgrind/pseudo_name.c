/* pseudo_name.c - strict recognition of "0x%016lx" (and "0x%08lx") names
 * (docs/formats.md 2.1, 2.6). */
#include "callgrind/pseudo_name.h"

#include <string.h>

/* CGJIT_NO_SWAR builds the loop below, as big-endian hosts do (to test it on this one) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(CGJIT_NO_SWAR)
/* The 8 bytes at S as lowercase hex digits, the first the highest: 1 with the value in
 * *V, or 0 if one is no such digit. All 8 at once in a word (0.4 million caller parts
 * on the big node profile are addresses of 16 digits; a table lookup a digit took 238
 * instructions a name). Each byte test is exact: a word with a byte of 0x80 or more is
 * refused first, and below 0x80, x + 0x76 has its high bit set exactly when x >= 10 and
 * carries into no other byte, and so on. */
static inline int hex8(const char *s, uint32_t *v)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x80 * ones;
	uint64_t w;
	memcpy(&w, s, 8);
	uint64_t x = w ^ 0x30 * ones, y = w ^ 0x60 * ones;
	uint64_t not_digit = (x + 0x76 * ones) & high;                   /* x >= 10 */
	uint64_t not_lower = ((y + 0x79 * ones) | ~(y + 0x7f * ones)) & high;   /* y >= 7 or 0 */
	if ((w & high) | (not_digit & not_lower))
		return 0;
	/* each byte's value: its low nibble, plus 9 for a letter (bit 6 set) */
	uint64_t d = (w & 0x0f * ones) + ((w >> 6) & ones) * 9;
	/* first byte lowest: pairs, then quads, then the two halves, the first one high */
	d = (d & 0x000f000f000f000fULL) << 4 | (d & 0x0f000f000f000f00ULL) >> 8;
	d = (d & 0x000000ff000000ffULL) << 8 | (d & 0x00ff000000ff0000ULL) >> 16;
	*v = (uint32_t)((d & 0xffff) << 16 | (d >> 32 & 0xffff));
	return 1;
}
#else
/* Lowercase hex digits, the only ones callgrind prints: their values plus one; 0 for any
 * other byte. */
static const unsigned char lower_hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

static inline int hex8(const char *s, uint32_t *v)
{
	uint32_t x = 0;
	unsigned bad = 0;
	for (int i = 0; i < 8; i++) {
		unsigned h = lower_hex1[(unsigned char)s[i]];
		bad |= h == 0;
		x = x << 4 | ((h - 1) & 15);
	}
	*v = x;
	return !bad;
}
#endif

int pseudo_name_parse(const char *name, size_t len, uint64_t *addr, size_t *head_len)
{
	if (len < 10 || name[0] != '0' || name[1] != 'x')
		return 0;
	/* 8 or 16 digits, then the end or a "'": which one the length says, then the digits
	 * are read 8 at a time (a "'" among them is no digit) */
	size_t n;
	if (len == 10 || name[10] == '\'')
		n = 10;
	else if (len == 18 || (len > 18 && name[18] == '\''))
		n = 18;
	else
		return 0;
	uint32_t hi, lo;
	if (!hex8(name + 2, &hi))
		return 0;
	if (n == 18) {
		if (!hex8(name + 10, &lo))
			return 0;
		*addr = (uint64_t)hi << 32 | lo;
	} else {
		*addr = hi;
	}
	*head_len = n;
	return 1;
}
