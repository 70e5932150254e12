/* varint.h - numbers in a byte stream: 7 bits a byte, low first (at most VARINT_MAX
 * bytes for 64 bits), and differences coded so that a small step down costs as little as
 * a small step up. For streams a module writes and reads back itself (the symbols'
 * entries, augment's held calls): nothing here checks a stream it did not write. */
#ifndef CGJIT_VARINT_H
#define CGJIT_VARINT_H

#include <stdint.h>

enum { VARINT_MAX = 10 };

static inline unsigned char *varint_put(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline const unsigned char *varint_get(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0;; shift += 7) {
		unsigned char b = *p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*v = x;
	return p;
}

/* Past the number at P. */
static inline const unsigned char *varint_skip(const unsigned char *p)
{
	while (*p++ >= 0x80)
		;
	return p;
}

/* NOW less BEFORE, mod 2^64, as a small number when they are close either way. */
static inline uint64_t varint_diff(uint64_t now, uint64_t before)
{
	uint64_t d = now - before;
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

/* The number varint_diff(NOW, BEFORE) gave: NOW. */
static inline uint64_t varint_undiff(uint64_t z, uint64_t before)
{
	return before + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

#endif
