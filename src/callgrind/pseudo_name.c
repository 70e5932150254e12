/* pseudo_name.c - strict recognition of "0x%016lx" (and "0x%08lx") names
 * (docs/formats.md 2.1, 2.6). */
#include "callgrind/pseudo_name.h"

/* Lowercase hex digits, the only ones callgrind prints: their values plus one; 0 for any
 * other byte. A table rather than hexval(): 0.4 million caller parts on the big profile
 * are addresses, and each has 16 digits. */
static const unsigned char lower_hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

int pseudo_name_parse(const char *name, size_t len, uint64_t *addr, size_t *head_len)
{
	if (len < 10 || name[0] != '0' || name[1] != 'x')
		return 0;
	/* 8 or 16 digits, then the end or a "'": which one the length says, then the digits
	 * are read without a test each (a "'" among them is no digit) */
	size_t n;
	if (len == 10 || name[10] == '\'')
		n = 10;
	else if (len == 18 || (len > 18 && name[18] == '\''))
		n = 18;
	else
		return 0;
	uint64_t v = 0;
	unsigned bad = 0;
	for (size_t i = 2; i < n; i++) {
		unsigned h = lower_hex1[(unsigned char)name[i]];
		bad |= h == 0;
		v = v << 4 | (uint64_t)((h - 1) & 15);
	}
	if (bad)
		return 0;
	*addr = v;
	*head_len = n;
	return 1;
}
