/* name_scan.c - a name's end, fingerprint and "'0x" parts in one pass (name_scan.h): 64
 * bytes a round with AVX2 where the processor has it, else 32 with SSE2 (every x86-64),
 * else a byte at a time; the three give the same results. */
#include <string.h>

#include "callgrind/name_scan.h"
#include "core/xalloc.h"

/* CGJIT_NO_SWAR builds the byte loop only, as other hosts do (to test it on this one) */
#if defined(__x86_64__) && !defined(CGJIT_NO_SWAR)
#define NAME_SCAN_X86 1
#include <immintrin.h>
#else
#define NAME_SCAN_X86 0
#endif

enum { BLOCK = 32, ROT = 23 };

static inline uint64_t rotl(uint64_t x, unsigned k)
{
	return x << k | x >> (64 - k);
}

/* The 32 bytes at B, a block of the name (bytes past its end zero), into the lanes. */
static inline void sum_block(struct name_sum *s, const char *b)
{
	for (int j = 0; j < 4; j++) {
		uint64_t w;
		memcpy(&w, b + 8 * j, 8);
		s->lane[j] = rotl(s->lane[j], ROT) ^ w;
	}
}

static void add_part(struct name_parts *parts, size_t at)
{
	XGROW(parts->at, parts->cap, parts->n + 1);
	parts->at[parts->n++] = at;
}

/* The blocks of the N-byte name P from offset FROM (a multiple of BLOCK) on. */
static void sum_from(struct name_sum *s, const char *p, size_t from, size_t n)
{
	for (; from + BLOCK <= n; from += BLOCK)
		sum_block(s, p + from);
	if (from < n) {
		char b[BLOCK] = { 0 };
		memcpy(b, p + from, n - from);
		sum_block(s, b);
	}
}

/* The parts of the N-byte name P whose "x" is at offset FROM or later. */
static void parts_from(struct name_parts *parts, const char *p, size_t from, size_t n)
{
	for (size_t i = from < 2 ? 2 : from; i < n; i++) {
		const char *x = memchr(p + i, 'x', n - i);
		if (!x)
			return;
		i = (size_t)(x - p);
		if (p[i - 1] == '0' && p[i - 2] == '\'')
			add_part(parts, i - 2);
	}
}

void name_scan_len(const char *p, size_t n, struct name_sum *sum, struct name_parts *parts)
{
	memset(sum, 0, sizeof(*sum));
	sum_from(sum, p, 0, n);
	parts_from(parts, p, 0, n);
}

/* The rest of name_scan_line() byte by byte, from offset FROM (a multiple of BLOCK: SUM
 * holds the blocks before it, PARTS their parts). */
static const char *scan_bytes(const char *p, size_t from, struct name_sum *sum,
			      struct name_parts *parts)
{
	size_t n = from;
	while (p[n] != '\n' && p[n] != '\0')
		n++;
	sum_from(sum, p, from, n);
	parts_from(parts, p, from, n);
	return p + n;
}

uint32_t name_scan_fp(const struct name_sum *sum, size_t len, uint32_t obj, uint32_t file)
{
	/* each step a bijection of H: names apart stay apart but for the final cut to 32 bits */
	uint64_t h = (uint64_t)len * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)obj << 32 | file);
	for (int j = 0; j < 4; j++) {
		h = (h ^ sum->lane[j]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return (uint32_t)(h >> 32);
}

#if NAME_SCAN_X86
/* A block at B, offset OFF of the name at P, with "\n" or NUL at the bits of STOP and an
 * "x" after a "0" at those of CAND: adds the parts (a "'" before the "0") before the first
 * stop and returns its offset in the block, or BLOCK if there is none. Out of line: the
 * vector loops keep their constants in registers. */
static __attribute__((noinline)) unsigned block_marks(struct name_parts *parts, const char *p,
						      size_t off, uint32_t stop, uint32_t cand)
{
	if (off == 0)
		cand &= ~3u;   /* an "x" at 0 or 1 has no "'0" of the name before it */
	unsigned e = stop ? (unsigned)__builtin_ctz(stop) : BLOCK;
	if (e < BLOCK)
		cand &= (1u << e) - 1;
	for (; cand; cand &= cand - 1) {
		size_t at = off + (unsigned)__builtin_ctz(cand) - 2;
		if (p[at] == '\'')
			add_part(parts, at);
	}
	return e;
}

static inline __m128i rot128(__m128i a)
{
	return _mm_or_si128(_mm_slli_epi64(a, ROT), _mm_srli_epi64(a, 64 - ROT));
}

/* the bytes at B that are an "x" after a "0" */
static inline __m128i cand128(const char *b, __m128i w)
{
	__m128i z = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(b - 1)), _mm_set1_epi8('0'));
	return _mm_and_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('x')), z);
}

static inline __m128i stop128(__m128i w)
{
	return _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('\n')),
			    _mm_cmpeq_epi8(w, _mm_setzero_si128()));
}

static const char *scan_sse2(const char *p, const char *limit, struct name_sum *sum,
			     struct name_parts *parts)
{
	const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	__m128i lo = _mm_setzero_si128(), hi = _mm_setzero_si128();
	size_t off = 0, avail = (size_t)(limit - p) + 1;
	for (; off + BLOCK <= avail; off += BLOCK) {
		const char *b = p + off;
		__m128i w0 = _mm_loadu_si128((const __m128i *)b);
		__m128i w1 = _mm_loadu_si128((const __m128i *)(b + 16));
		__m128i s0 = stop128(w0), s1 = stop128(w1);
		__m128i c0 = cand128(b, w0), c1 = cand128(b + 16, w1);
		unsigned e = BLOCK;
		if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(s0, c0), _mm_or_si128(s1, c1)))) {
			uint32_t stop = (uint32_t)_mm_movemask_epi8(s0) |
					(uint32_t)_mm_movemask_epi8(s1) << 16;
			uint32_t cand = (uint32_t)_mm_movemask_epi8(c0) |
					(uint32_t)_mm_movemask_epi8(c1) << 16;
			e = block_marks(parts, p, off, stop, cand);
			if (e < BLOCK) {
				/* the bytes from the end on are not the name's */
				w0 = _mm_and_si128(w0, _mm_cmpgt_epi8(_mm_set1_epi8((char)e), iota));
				w1 = _mm_and_si128(w1, _mm_cmpgt_epi8(_mm_set1_epi8((char)(e - 16)), iota));
			}
		}
		if (e > 0) {
			lo = _mm_xor_si128(rot128(lo), w0);
			hi = _mm_xor_si128(rot128(hi), w1);
		}
		if (e < BLOCK) {
			_mm_storeu_si128((__m128i *)&sum->lane[0], lo);
			_mm_storeu_si128((__m128i *)&sum->lane[2], hi);
			return b + e;
		}
	}
	_mm_storeu_si128((__m128i *)&sum->lane[0], lo);
	_mm_storeu_si128((__m128i *)&sum->lane[2], hi);
	return scan_bytes(p, off, sum, parts);
}

#define AVX2 __attribute__((target("avx2"))) static inline

AVX2 __m256i rot256(__m256i a)
{
	return _mm256_or_si256(_mm256_slli_epi64(a, ROT), _mm256_srli_epi64(a, 64 - ROT));
}

/* The constants of the bytes looked for. */
struct avx2_bytes {
	__m256i nl, nul, x, zero;
};

/* the bytes of the block W that end the name ("\n", NUL) */
AVX2 __m256i stop256(const struct avx2_bytes *k, __m256i w)
{
	return _mm256_or_si256(_mm256_cmpeq_epi8(w, k->nl), _mm256_cmpeq_epi8(w, k->nul));
}

/* the bytes of the block W at B that are an "x" after a "0" */
AVX2 __m256i cand256(const struct avx2_bytes *k, const char *b, __m256i w)
{
	__m256i z = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(b - 1)), k->zero);
	return _mm256_and_si256(_mm256_cmpeq_epi8(w, k->x), z);
}

/* The parts of the pairs of blocks at AT[0..N) in the name at P, whose bytes that are an
 * "x" after a "0" are the bits of CAND: those with a "'" before the "0". */
static __attribute__((noinline)) void note_parts(struct name_parts *parts, const char *p,
						 const char *const *at, const uint64_t *cand,
						 unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t c = cand[i];
		if (at[i] == p)
			c &= ~(uint64_t)3;   /* an "x" at 0 or 1 has no "'0" of the name before it */
		for (; c; c &= c - 1) {
			size_t x = (size_t)(at[i] - p) + (unsigned)__builtin_ctzll(c);
			if (p[x - 2] == '\'')
				add_part(parts, x - 2);
		}
	}
}

enum { PAIR = 2 * BLOCK, NOTED = 16 };

/* 64 bytes at a time: the two blocks' bytes compared at once, the "0x" of a pair noted
 * without a branch and their parts found after the loop, so that the loop leaves only at
 * the name's end (once a name: the bench profile's names hold 1.4 "0x" each). */
__attribute__((target("avx2"))) static const char *scan_avx2(const char *p, const char *limit,
							    struct name_sum *sum,
							    struct name_parts *parts)
{
	const __m256i iota = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
					      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
					      29, 30, 31);
	struct avx2_bytes k = { _mm256_set1_epi8('\n'), _mm256_setzero_si256(),
				_mm256_set1_epi8('x'), _mm256_set1_epi8('0') };
	__m256i a = _mm256_setzero_si256();
	size_t avail = (size_t)(limit - p) + 1, off = 0;
	const char *at[NOTED];
	uint64_t cand[NOTED];
	for (;;) {
		/* the constants in registers through the loop below (GCC 12 made them anew in
		 * each round, as the call after it clobbers every vector register) */
		__asm__("" : "+x"(k.nl), "+x"(k.nul), "+x"(k.x), "+x"(k.zero));
		/* at most NOTED pairs a round: one test ends the loop */
		size_t pairs = (avail - off) / PAIR;
		const char *b = p + off, *end = b + (pairs < NOTED ? pairs : NOTED) * PAIR;
		unsigned n = 0;
		__m256i w0 = k.nul, w1 = k.nul, s0 = k.nul, s1 = k.nul;
		int ended = 0;
		for (; b < end; b += PAIR) {
			w0 = _mm256_loadu_si256((const __m256i *)b);
			w1 = _mm256_loadu_si256((const __m256i *)(b + BLOCK));
			s0 = stop256(&k, w0);
			s1 = stop256(&k, w1);
			if (_mm256_movemask_epi8(_mm256_or_si256(s0, s1))) {
				ended = 1;
				break;
			}
			uint64_t c = (uint32_t)_mm256_movemask_epi8(cand256(&k, b, w0)) |
				     (uint64_t)(uint32_t)_mm256_movemask_epi8(cand256(&k, b + BLOCK, w1))
					     << 32;
			at[n] = b;
			cand[n] = c;
			n += c != 0;
			a = _mm256_xor_si256(rot256(_mm256_xor_si256(rot256(a), w0)), w1);
		}
		off = (size_t)(b - p);
		if (n)
			note_parts(parts, p, at, cand, n);
		if (ended) {
			/* the pair at B holds the end: the parts before it, the bytes before it */
			uint64_t stop = (uint32_t)_mm256_movemask_epi8(s0) |
					(uint64_t)(uint32_t)_mm256_movemask_epi8(s1) << 32;
			unsigned e = (unsigned)__builtin_ctzll(stop);
			uint64_t c = (uint32_t)_mm256_movemask_epi8(cand256(&k, b, w0)) |
				     (uint64_t)(uint32_t)_mm256_movemask_epi8(cand256(&k, b + BLOCK, w1))
					     << 32;
			c &= ((uint64_t)1 << e) - 1;   /* E is below 64 */
			if (c)
				note_parts(parts, p, &b, &c, 1);
			if (e > 0)
				a = _mm256_xor_si256(rot256(a), _mm256_and_si256(w0, _mm256_cmpgt_epi8(
					_mm256_set1_epi8((char)(e < BLOCK ? e : BLOCK)), iota)));
			if (e > BLOCK)
				a = _mm256_xor_si256(rot256(a), _mm256_and_si256(w1, _mm256_cmpgt_epi8(
					_mm256_set1_epi8((char)(e - BLOCK)), iota)));
			_mm256_storeu_si256((__m256i *)sum->lane, a);
			return b + e;
		}
		if (off + PAIR > avail)
			break;
	}
	/* the last bytes of the buffer */
	_mm256_storeu_si256((__m256i *)sum->lane, a);
	return scan_bytes(p, off, sum, parts);
}
#endif

const char *name_scan_line_impl(int impl, const char *p, const char *limit, struct name_sum *sum,
				struct name_parts *parts)
{
	(void)limit;   /* (the byte loop's end is the name's) */
	switch (impl) {
	case 0:
		memset(sum, 0, sizeof(*sum));
		return scan_bytes(p, 0, sum, parts);
#if NAME_SCAN_X86
	case 1:
		return scan_sse2(p, limit, sum, parts);
	case 2:
		return __builtin_cpu_supports("avx2") ? scan_avx2(p, limit, sum, parts) : NULL;
#endif
	default:
		return NULL;
	}
}

const char *name_scan_line(const char *p, const char *limit, struct name_sum *sum,
			   struct name_parts *parts)
{
#if NAME_SCAN_X86
	int impl = __builtin_cpu_supports("avx2") ? 2 : 1;
#else
	int impl = 0;
#endif
	return name_scan_line_impl(impl, p, limit, sum, parts);
}
