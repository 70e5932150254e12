/* jitname.h - source file and line from a JIT symbol name, by the runtime's convention.
 * Runtimes put the source location into the names they write to perf maps:
 *   MoarVM   "name(file:line)", anonymous "(file:line)"     (src/jit/compile.c)
 *   V8/node  "JS:*name file:line:col", also "LazyCompile:" and friends; wasm code
 *            "JS:name-index-tier", no location (jitname_v8_wasm())
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
/* V8's name for a compiled WebAssembly function, PREFIX NAME-INDEX-TIER ("JS:fib-3-turbofan",
 * "JS:wasm-function[4]-4-liftoff"; V8's src/logging/log.cc, CodeEventLogger's
 * CodeCreateEvent for wasm code): NAME from the module's name section, else
 * "wasm-function[INDEX]"; INDEX the function's index, "<anonymous>" for code of no function;
 * TIER "liftoff", "turbofan" (V8's ExecutionTierToString: also "none", "interpreter").
 * It gives no source location (docs/formats.md 4.4, 5.11). */
struct jitname_wasm {
	const char *func;   /* NAME: points into the name, not NUL-terminated */
	size_t func_len;
	uint64_t index;     /* UINT64_MAX for "<anonymous>" */
	const char *tier;   /* TIER: points into the name */
	size_t tier_len;
};
/* Whether NAME is V8's name for wasm code; fills OUT (may be NULL) when it is. A JS
 * function's name cannot take this form: it ends in its location (":line:col").
 * Returns 1 or 0. */
int jitname_v8_wasm(const char *name, size_t len, struct jitname_wasm *out);
/* V8's code-kind marker in NAME, the character after its prefix ("JS:^f a.js:1:2"): '~'
 * interpreted, '^' Sparkplug baseline, '+' Maglev, '*' TurboFan (V8's
 * src/objects/code-kind.cc CodeKindToMarker). Returns it, or 0 when NAME has none, does
 * not start with one of V8's prefixes (whether or not a location follows) or is wasm code
 * (jitname_v8_wasm(): "JS:^f-0-liftoff" is wasm function "^f"). */
char jitname_v8_kind(const char *name, size_t len);
/* Whether FILE, less its extension, is the source path of the class that declares the
 * method in NAME, a JVM method name as the JVM's perf map and cgjit's agent write it
 * ("int com.acme.Shop.sum(java.util.List)": "com/acme/Shop.java"; a nested class
 * "com.acme.Shop$Cart.add()" is declared in the same file). Returns 1 or 0. */
int jitname_jvm_declared_in(const char *name, size_t len, const char *file, size_t flen);
/* The convention's short name ("moarvm", "v8", ...; "none"). */
const char *jitname_convention_name(enum jitname_convention c);

#endif
