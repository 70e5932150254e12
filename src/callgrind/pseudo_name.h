/* pseudo_name.h - callgrind's names for code without symbols.
 * callgrind names such a function after the address of the basic block that created it,
 * printed "%#016lx": "0x" and 16 lowercase hex digits (8 on 32-bit hosts), then maybe
 * "'N" (recursion level, --separate-recs) and "'caller" parts (--separate-callers):
 * docs/formats.md 2.1 and 2.6. */
#ifndef CGJIT_PSEUDO_NAME_H
#define CGJIT_PSEUDO_NAME_H

#include <stddef.h>
#include <stdint.h>

/* If the first "'"-separated component of NAME is a pseudo address, stores it in *ADDR
 * and the length of that component in *HEAD_LEN (the rest, from the first "'", is the
 * suffix) and returns 1; else returns 0. */
int pseudo_name_parse(const char *name, size_t len, uint64_t *addr, size_t *head_len);

#endif
