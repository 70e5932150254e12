/* jitname.h - source file and line from a JIT symbol name, by the runtime's convention.
 * Runtimes put the source location into the names they write to perf maps:
 *   MoarVM   "name(file:line)", anonymous "(file:line)"     (src/jit/compile.c)
 *   V8/node  "JS:*name file:line:col", also "LazyCompile:" and friends
 *   CPython  "py::qualname:file"                            (Python/perf_trampoline.c)
 *   LuaJIT   "TRACE_n::chunk:line"                          (src/lj_trace.c)
 *   PHP      "TRACE-n$func$line", "JIT$func", "JIT$/path/file.php" (ext/opcache/jit/
 *            zend_jit_trace.c zend_jit_trace_name(), zend_jit.c zend_jit_func_name())
 * docs/formats.md 4.4 has the examples. Names matching none give no location.
 * A name that gives a file but no line (CPython, PHP's "JIT$/path/file.php") gets line 1:
 * line 0 is no line to callgrind_annotate, which then warns and shows the cost as
 * "<counts for unidentified lines>". */
#ifndef CGJIT_JITNAME_H
#define CGJIT_JITNAME_H

#include <stddef.h>
#include <stdint.h>

enum jitname_convention { JN_NONE, JN_MOARVM, JN_V8, JN_CPYTHON, JN_LUAJIT, JN_PHP };

struct jitname {
	enum jitname_convention convention;
	const char *file;   /* points into the name; not NUL-terminated */
	size_t file_len;
	uint64_t line;      /* 0 if the name gives none (1 if it gives a file but no line) */
};

/* Fills OUT from NAME. Returns the convention found (JN_NONE = 0 when none). */
enum jitname_convention jitname_parse(const char *name, size_t len, struct jitname *out);
/* V8's code-kind marker in NAME, the character after its prefix ("JS:^f a.js:1:2"): '~'
 * interpreted, '^' Sparkplug baseline, '+' Maglev, '*' TurboFan (V8's
 * src/objects/code-kind.cc CodeKindToMarker). Returns it, or 0 when NAME has none or does
 * not start with one of V8's prefixes (whether or not a location follows). */
char jitname_v8_kind(const char *name, size_t len);
/* Whether FILE, less its extension, is the source path of the class that declares the
 * method in NAME, a JVM method name as the JVM's perf map and cgjit's agent write it
 * ("int com.acme.Shop.sum(java.util.List)": "com/acme/Shop.java"; a nested class
 * "com.acme.Shop$Cart.add()" is declared in the same file). Returns 1 or 0. */
int jitname_jvm_declared_in(const char *name, size_t len, const char *file, size_t flen);
/* The convention's short name ("moarvm", "v8", ...; "none"). */
const char *jitname_convention_name(enum jitname_convention c);

#endif
