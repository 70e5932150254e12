/* jitdump_writer.c - jitdump records into a buffer, then a sink (jitdump_writer.h).
 * Layouts: docs/formats.md 5.1 (header), 5.2 (prefix), 5.3 (CODE_LOAD), 5.5 (DEBUG_INFO),
 * 5.6 (CODE_CLOSE). Fields in the host's byte order, no padding. */
#include "jitdump_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int jd_init(struct jd_writer *w, jd_sink_fn sink, void *ctx, size_t bufsize)
{
	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->ctx = ctx;
	w->next_index = 1;
	w->cap = bufsize ? bufsize : 1;
	w->buf = malloc(w->cap);
	return w->buf ? 0 : -1;
}

void jd_free(struct jd_writer *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static int sink_error(struct jd_writer *w)
{
	w->failed = 1;
	w->err = errno ? errno : EIO;
	return -1;
}

int jd_flush(struct jd_writer *w)
{
	if (w->failed)
		return -1;
	if (w->len && w->sink(w->ctx, w->buf, w->len) != 0)
		return sink_error(w);
	w->len = 0;
	return 0;
}

static int put(struct jd_writer *w, const void *p, size_t n)
{
	if (w->failed)
		return -1;
	if (w->len + n > w->cap && jd_flush(w) != 0)
		return -1;
	if (n > w->cap)
		return w->sink(w->ctx, p, n) == 0 ? 0 : sink_error(w);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

static int put32(struct jd_writer *w, uint32_t v)
{
	return put(w, &v, 4);
}

static int put64(struct jd_writer *w, uint64_t v)
{
	return put(w, &v, 8);
}

/* The 16-byte prefix of a record of TOTAL bytes (checked by the caller). */
static int prefix(struct jd_writer *w, uint32_t id, uint64_t total, uint64_t timestamp)
{
	w->records++;
	w->bytes += total;
	if (put32(w, id) || put32(w, (uint32_t)total))
		return -1;
	return put64(w, timestamp);
}

int jd_header(struct jd_writer *w, uint32_t elf_mach, uint32_t pid, uint64_t timestamp)
{
	if (w->failed)
		return -1;
	w->bytes += JD_HEADER_SIZE;
	if (put32(w, JD_MAGIC) || put32(w, JD_VERSION) || put32(w, JD_HEADER_SIZE) ||
	    put32(w, elf_mach) || put32(w, 0) || put32(w, pid) || put64(w, timestamp))
		return -1;
	return put64(w, 0);   /* flags: timestamps are CLOCK_MONOTONIC, not the CPU's counter */
}

int jd_code_load(struct jd_writer *w, uint64_t timestamp, uint32_t pid, uint32_t tid,
		 uint64_t addr, const void *code, uint64_t size, const char *name)
{
	if (w->failed)
		return -1;
	size_t name_len = strlen(name) + 1;
	uint64_t total = JD_LOAD_FIXED + (uint64_t)name_len + size;
	if (size > UINT32_MAX || total > UINT32_MAX)
		return 1;
	if (prefix(w, JD_CODE_LOAD, total, timestamp) || put32(w, pid) || put32(w, tid) ||
	    put64(w, addr) || put64(w, addr) || put64(w, size) || put64(w, w->next_index++) ||
	    put(w, name, name_len) || put(w, code, (size_t)size))
		return -1;
	return 0;
}

int jd_debug_info(struct jd_writer *w, uint64_t timestamp, uint64_t code_addr,
		  const struct jd_row *rows, size_t n)
{
	if (w->failed)
		return -1;
	uint64_t total = JD_DEBUG_FIXED;
	for (size_t i = 0; i < n && total <= UINT32_MAX; i++)
		total += JD_ENTRY_FIXED + strlen(rows[i].file) + 1;
	if (total > UINT32_MAX)
		return 1;
	if (prefix(w, JD_DEBUG_INFO, total, timestamp) || put64(w, code_addr) || put64(w, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (put64(w, rows[i].addr) || put32(w, rows[i].line) || put32(w, rows[i].discrim) ||
		    put(w, rows[i].file, strlen(rows[i].file) + 1))
			return -1;
	return 0;
}

int jd_code_close(struct jd_writer *w, uint64_t timestamp)
{
	if (w->failed)
		return -1;
	return prefix(w, JD_CODE_CLOSE, JD_PREFIX_SIZE, timestamp);
}

uint32_t jd_host_elf_machine(void)
{
#if defined(__x86_64__)
	return 62;    /* EM_X86_64 */
#elif defined(__i386__)
	return 3;     /* EM_386 */
#elif defined(__aarch64__)
	return 183;   /* EM_AARCH64 */
#elif defined(__arm__)
	return 40;    /* EM_ARM */
#elif defined(__powerpc64__)
	return 21;    /* EM_PPC64 */
#elif defined(__s390x__)
	return 22;    /* EM_S390 */
#elif defined(__riscv)
	return 243;   /* EM_RISCV */
#elif defined(__loongarch__)
	return 258;   /* EM_LOONGARCH */
#else
	return 0;
#endif
}
