/* java_names.h - the JVMTI agent's pure parts that need no JVM: Java names in the form of
 * HotSpot's own perf map (-XX:+DumpPerfMapAtExit), source paths as javac records them,
 * line lookup by bytecode index, and the DEBUG_INFO rows of one compiled method.
 * docs/jvmti.md describes what the agent writes; agent/jvmti_agent.c feeds these from
 * JVMTI. Every function returning a string returns it malloc'd, or NULL for malformed input
 * or no memory. */
#ifndef CGJIT_JAVA_NAMES_H
#define CGJIT_JAVA_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct jd_row;

/* "Lcom/acme/Inventory;" -> "com.acme.Inventory"; nested classes keep their '$'
 * ("java.util.HashMap$Node"); a hidden class's signature "Lp/Foo$MH.0x1234;" becomes
 * "p.Foo$MH/0x1234", as HotSpot prints it. A field descriptor of an array or primitive type
 * is written as Java spells it ("[I" -> "int[]"). */
char *jn_class_name(const char *class_sig);

/* The perf-map form of a method: "RET CLASS.NAME(PARAM, PARAM)", e.g. class
 * "Lcom/acme/Inventory;", name "total", signature "(Ljava/util/List;[I)J" ->
 * "long com.acme.Inventory.total(java.util.List, int[])". Constructors stay "<init>". */
char *jn_method_name(const char *class_sig, const char *name, const char *method_sig);

/* HotSpot's method handle intrinsics (the native MethodHandle.invokeBasic, linkToStatic,
 * ... adapters, one per signature) all come to JVMTI as one jmethodID of one signature, so
 * their names would be wrong: 1 when CLASS_SIG and IS_NATIVE say the method is one; the
 * agent then names the code JN_MH_INTRINSIC. */
#define JN_MH_INTRINSIC "java.lang.invoke.MethodHandle intrinsic"
int jn_is_mh_intrinsic(const char *class_sig, int is_native);

/* The source file as javac records it, relative to a source root: the class's package
 * path and its SourceFile attribute: ("Lcom/acme/Outer$In;", "Outer.java") ->
 * "com/acme/Outer.java"; no package -> "Outer.java". NULL when SOURCE_FILE is NULL or
 * empty. */
char *jn_source_path(const char *class_sig, const char *source_file);

/* One entry of a method's line number table (JVMTI GetLineNumberTable). */
struct jn_line {
	int64_t bci;      /* start_location */
	int line;
};

/* The line of bytecode index BCI: the entry with the greatest start at or below BCI (the
 * table need not be sorted); 0 when there is none. */
int jn_line_at(const struct jn_line *tab, size_t n, int64_t bci);

/* One pc of a compiled method with the source position of its innermost frame. */
struct jn_pc {
	uint64_t pc;
	const char *file;   /* NULL: no position (the pc is skipped) */
	int line;
};

/* Builds the DEBUG_INFO rows of the code [CODE_ADDR, CODE_ADDR+SIZE) from N pcs (sorted
 * here, in place) into ROWS (room for N + 1). With PC_IS_END (HotSpot's inline info: a pc
 * descriptor's pc is the address just after the instruction it describes, the return
 * address of a call) the code from the previous pc up to a pc gets that pc's position;
 * otherwise (an address-location map) a pc starts its position's code. Pcs outside the
 * code are dropped and neighbouring rows of the same file and line merged; the last row
 * reaches to the end of the code. Returns the number of rows. */
size_t jn_rows(uint64_t code_addr, uint64_t size, struct jn_pc *pcs, size_t n, int pc_is_end,
	       struct jd_row *rows);

#endif
