/* name_scan.h - one pass over a function name where the reader finds it, in its line
 * reader's buffer: the end of its line, its fingerprint (callgrind_names.h) and where its
 * caller parts that may be callgrind's "0x..." names begin ("'0x": --separate-callers
 * names, docs/formats.md 2.6). A name used to be read four times, by the line reader, the
 * fingerprint, the search for a "'" and the search for an "x" (README, issue 25): on the
 * bench profile 220 of its 317 MB are names. Owns nothing; the caller's part list grows. */
#ifndef CGJIT_NAME_SCAN_H
#define CGJIT_NAME_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Where the parts "'0x" of names begin: offsets in each name, appended. */
struct name_parts {
	size_t *at;
	size_t n, cap;
};

/* What the fingerprint keeps of a name's bytes: four lanes, one per 8 bytes of each block
 * of 32, each a rotate and an xor per block (no multiply on the chain). Linear: two
 * names can be built to collide (as with the fingerprint before this one), which an
 * input written by a profiler does not do by chance. */
struct name_sum {
	uint64_t lane[4];
};

/* Scans the name at P up to its end, the first "\n" or NUL, and returns that end. The line
 * reader's buffer ends in a NUL, at LIMIT at the latest; the byte before P (the
 * line's "=" or " ") and every byte up to LIMIT are readable, none after it is read.
 * SUM gets the name's lanes; PARTS the offset of the "'" of each "'0x" in it, in order. */
const char *name_scan_line(const char *p, const char *limit, struct name_sum *sum,
			   struct name_parts *parts);

/* The same for the name of N bytes at P, whatever they are (the general path, which has
 * found the line's end already). */
void name_scan_len(const char *p, size_t n, struct name_sum *sum, struct name_parts *parts);

/* The fingerprint of the name of LEN bytes whose lanes are SUM, in object OBJ and file
 * FILE: names that differ by chance get different ones but for a chance of 2^-32. */
uint32_t name_scan_fp(const struct name_sum *sum, size_t len, uint32_t obj, uint32_t file);

/* For the tests: name_scan_line() done the way IMPL says (0: byte by byte, 1: SSE2, 32
 * bytes a round, 2: AVX2, 64); NULL if this host cannot. */
const char *name_scan_line_impl(int impl, const char *p, const char *limit, struct name_sum *sum,
				struct name_parts *parts);

#endif
