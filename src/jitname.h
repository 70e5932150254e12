/* jitname.h - source file and line from a JIT symbol name, by the runtime's convention.
 * Runtimes put the source location into the names they write to perf maps:
 *   MoarVM   "name(file:line)", anonymous "(file:line)"     (src/jit/compile.c)
 *   V8/node  "JS:*name file:line:col", also "LazyCompile:" and friends
 *   CPython  "py::qualname:file"                            (Python/perf_trampoline.c)
 *   LuaJIT   "TRACE_n::chunk:line"                          (src/lj_trace.c)
 * jit-formats.md section 1 has the examples. Names matching none give no location. */
#ifndef CGJIT_JITNAME_H
#define CGJIT_JITNAME_H

#include <stddef.h>
#include <stdint.h>

enum jitname_convention { JN_NONE, JN_MOARVM, JN_V8, JN_CPYTHON, JN_LUAJIT };

struct jitname {
	enum jitname_convention convention;
	const char *file;   /* points into the name; not NUL-terminated */
	size_t file_len;
	uint64_t line;      /* 0 if the convention has none */
};

/* Fills OUT from NAME. Returns the convention found (JN_NONE = 0 when none). */
enum jitname_convention jitname_parse(const char *name, size_t len, struct jitname *out);
/* The convention's short name ("moarvm", "v8", ...; "none"). */
const char *jitname_convention_name(enum jitname_convention c);

#endif
