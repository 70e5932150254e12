/* jitdump_writer.h - writes jitdump records (docs/formats.md 5; the layout of perf's
 * jitdump-specification.txt) in the host's byte order through a buffer to a sink function,
 * so the same code writes a file (agent/jvmti_agent.c) or memory (the unit tests).
 * Not thread-safe: the caller holds its lock around every call. After a sink error every
 * call fails: the writer stops for good. */
#ifndef CGJIT_JITDUMP_WRITER_H
#define CGJIT_JITDUMP_WRITER_H

#include <stddef.h>
#include <stdint.h>

enum {
	JD_CODE_LOAD = 0,
	JD_CODE_MOVE = 1,
	JD_DEBUG_INFO = 2,
	JD_CODE_CLOSE = 3,
	JD_UNWINDING_INFO = 4,
};

#define JD_MAGIC 0x4A695444u
#define JD_VERSION 1u
#define JD_HEADER_SIZE 40u
#define JD_PREFIX_SIZE 16u
#define JD_LOAD_FIXED 56u      /* CODE_LOAD bytes before the name */
#define JD_DEBUG_FIXED 32u     /* DEBUG_INFO bytes before the entries */
#define JD_ENTRY_FIXED 16u     /* entry bytes before the file name */

/* Writes LEN bytes; returns 0, or -1 with errno set. */
typedef int (*jd_sink_fn)(void *ctx, const void *data, size_t len);

struct jd_row {
	uint64_t addr;
	uint32_t line;
	uint32_t discrim;      /* 0: no discriminator or column */
	const char *file;
};

struct jd_writer {
	jd_sink_fn sink;
	void *ctx;
	unsigned char *buf;
	size_t len, cap;
	uint64_t next_index;   /* code_index of the next CODE_LOAD, from 1 */
	uint64_t records, bytes;
	int failed;            /* a sink error: nothing more is written */
	int err;               /* its errno */
};

/* Returns 0, or -1 when the buffer (BUFSIZE bytes, at least 1) cannot be allocated. */
int jd_init(struct jd_writer *w, jd_sink_fn sink, void *ctx, size_t bufsize);
void jd_free(struct jd_writer *w);   /* no flush */

/* Each returns 0; 1 when the record is refused (its size does not fit the u32 total_size;
 * nothing written); -1 after a sink error, now or before. */
int jd_header(struct jd_writer *w, uint32_t elf_mach, uint32_t pid, uint64_t timestamp);
/* CODE_LOAD: vma = code_addr = ADDR, the next code_index, NAME, SIZE bytes of CODE. */
int jd_code_load(struct jd_writer *w, uint64_t timestamp, uint32_t pid, uint32_t tid,
		 uint64_t addr, const void *code, uint64_t size, const char *name);
/* DEBUG_INFO for the CODE_LOAD that follows: N rows, full file names (no "\xff" repeats,
 * which perf's ELF writer does not expand). */
int jd_debug_info(struct jd_writer *w, uint64_t timestamp, uint64_t code_addr,
		  const struct jd_row *rows, size_t n);
int jd_code_close(struct jd_writer *w, uint64_t timestamp);
/* Hands the buffered bytes to the sink. */
int jd_flush(struct jd_writer *w);

/* The ELF e_machine of the code this file was compiled for (62 on x86-64), 0 if unknown. */
uint32_t jd_host_elf_machine(void);

#endif
