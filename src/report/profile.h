/* profile.h - a callgrind or cachegrind profile summed per function, for the commands that
 * read profiles rather than rewrite them (report, diff, check). A function is what
 * kcachegrind keys it by: (object, file of its fn= line, name). Each has its self cost and,
 * for callgrind files, its inclusive cost and the calls into it, computed from the call
 * arcs (docs/reports.md, "Inclusive cost"). Memory grows with the number of functions and
 * call arcs, not with the size of the file. */
#ifndef CGJIT_PROFILE_H
#define CGJIT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/slot_index.h"
#include "core/strtab.h"

struct diag;
struct input;
struct pathmap;

/* A call arc: CALLER called CALLEE COUNT times (summed over the file, or the part read). */
struct prof_arc {
	uint32_t caller, callee;   /* indices into fns; equal for a self-call */
	uint64_t count;
};

/* What kind of code a function is, from its object and name (docs/reports.md section 1). */
enum prof_kind {
	PROF_NATIVE,        /* named code of an ELF file (any named code of a cachegrind file) */
	PROF_JIT,           /* named by cgjit augment: its object is a perf map, a jitdump or
	                       the ELF file made from one */
	PROF_UNNAMED_JIT,   /* callgrind's 0x... name in object ???: code in no ELF file that no
	                       symbol names (JIT code before augment, or that no map covers) */
	PROF_NO_SYMBOL,     /* a 0x... name in an ELF file (or in a cachegrind file, which
	                       names no objects): code without symbols, e.g. a stripped library */
};

/* A function, in 16 bytes: its name, object and file are in the profile's keys
 * (profile_name(), profile_obj(), profile_file()), its costs in the cost pool
 * (profile_self(), profile_incl()), since a report holds one per function of profiles with
 * a million (docs/design.md, "Memory"). */
struct prof_fn {
	uint64_t calls;     /* calls into it from other functions */
	unsigned jit : 1;       /* kind == PROF_JIT */
	unsigned kind : 2;      /* enum prof_kind */
	unsigned self_calls : 1;   /* it calls itself (direct recursion) */
	unsigned in_cycle : 1;     /* it is on a cycle of calls through other functions */
};

/* How a profile made by prof_scope_make() was cut from the profile it was read as
 * (docs/reports.md section 2.1). */
struct profile_scope {
	int jit_only;           /* the documents list and match JIT functions only */
	int focused;            /* costs are those under a focus, and the totals the focus's */
	char *match, *pattern;  /* the focus: "name" or "glob", and the name or pattern */
	char *object, *file;    /* ... its patterns on the object and the file, or NULL */
	size_t nfocus;
	uint32_t *focus;        /* the focus functions: indices into fns */
	uint64_t calls;         /* calls into the focus from functions outside it */
	uint64_t *profile_totals;   /* per event: the whole profile's totals */
};

/* A node of the names' tree (profile_name.c): a part, under the node of the parts after it. */
struct prof_name_node {
	uint32_t parent;   /* node 0 is the root, which has no part */
	uint32_t part;     /* its index in the profile's name_parts */
};

/* A function's identity: its name's node, its object and file (indices in objs, files). */
struct prof_key {
	uint32_t node, obj, file;
};

/* The functions' names as a tree of their parts, read from the last, so that the calling
 * contexts callgrind's --separate-callers names repeat are kept once; the indices that
 * find nodes and functions exist only while the profile is built. */
struct prof_names {
	struct prof_name_node *nodes;
	size_t nnodes, nodes_cap;
	struct prof_key *keys;         /* per function */
	size_t keys_cap;
	struct slot_index node_index, key_index;   /* nodes by (parent, part), functions by key */
};

struct profile {
	char *path;
	char *cmd;              /* the command the profile ran (its cmd: line), or NULL */
	int cachegrind;         /* a cachegrind file: self cost only */
	int folded;             /* recursion copies name'N were read as name */
	struct profile_scope *scope;   /* NULL: the whole profile, as read */
	unsigned nevents;
	char **events;
	uint64_t *totals;       /* per event: the sum of every function's self cost */
	int negative;           /* a cachegrind file with negative counts (cg_diff's output): every
	                           cost is then a signed 64-bit number in two's complement, and
	                           the documents show it so (docs/reports.md section 1) */
	int totals_calculated;  /* a part read has neither totals: nor summary: (pprof's
	                           files): its total is only the cost lines' sum, which
	                           callgrind_annotate calls "PROGRAM TOTALS (calculated)" */
	uint64_t *summary;      /* per event: the summary: lines of the parts read, where
	                           every one has one (callgrind_annotate's PROGRAM TOTALS;
	                           Xdebug's exceeds the cost lines' sum); else NULL */
	unsigned parts;         /* parts in the file */
	unsigned part;          /* the part read (from 1), or 0 when all were summed */
	size_t nfns;
	struct prof_fn *fns;
	uint64_t *cost_pool;    /* self and incl of every function */
	struct prof_names names;    /* per function: its name, object and file (profile_name.c) */
	struct strtab name_parts;   /* the names' parts: the texts between their "'"s */
	struct strtab objs, files;
	uint64_t narcs;         /* distinct call arcs between functions */
	struct prof_arc *arcs;  /* narcs, in the order of their first call line; none for cachegrind */
	uint64_t *arc_costs;    /* narcs * nevents: the inclusive cost of each arc's calls */
	int arcs_dropped;       /* profile_drop_arcs(): ARCS and ARC_COSTS are NULL */
};

struct profile_opts {
	unsigned part;          /* read only this part (from 1); 0: sum all parts */
	int fold_recursion;     /* name'N (callgrind's --separate-recs copies) counts as name */
	const struct pathmap *paths;   /* --path-map: the paths in every name and file mapped
	                                  as they are read (pathmap.h), so that profiles from
	                                  two checkouts match; NULL: as written */
	size_t max_line;        /* 0: 64 MiB */
	int drop_arcs;          /* free the call arcs once the inclusive costs are made: for a
	                           document that reads no arcs (no focus, no flame graph), so
	                           that a second profile is read beside less memory */
};

/* Reads PATH ("-" for stdin; plain or zstd) into P. Returns 0, or -1 with D set (the
 * file cannot be read, is neither format, has no such part, or parts with other events).
 * P is empty after an error and must be freed either way. */
int profile_load(struct profile *p, const char *path, const struct profile_opts *o,
		 struct diag *d);
/* The same from an open input (not closed here), named by input_name(IN). */
int profile_load_input(struct profile *p, struct input *in, const struct profile_opts *o,
		       struct diag *d);
void profile_free(struct profile *p);
/* Frees P's call arcs (narcs stays what it was); nothing may read them after. */
void profile_drop_arcs(struct profile *p);

/* A function's name as text, in storage the caller owns, so that no call of the
 * profile's can move it: S is NUL-terminated, LEN bytes long, and changes only when the
 * caller writes the same buffer again. Zero-initialise; free with prof_name_free(). */
struct prof_name {
	char *s;
	size_t len, cap;
};
/* Writes function FN's name into BUF. Returns BUF->s. */
const char *profile_name(const struct profile *p, size_t fn, struct prof_name *buf);
void prof_name_free(struct prof_name *buf);
/* The length of FN's name, without making it. */
size_t profile_name_len(const struct profile *p, size_t fn);
/* strcmp()'s order of the names of function A of PA and function B of PB (the same
 * profile or two), without making them: <0, 0 or >0. */
int profile_name_cmp(const struct profile *pa, size_t a, const struct profile *pb, size_t b);
/* FN's name as profile_name_key_cmp() reads it: its node in P's names. A sort keeps it in
 * its items so that a comparison reads no function table. */
struct prof_name_key {
	uint32_t node;
};
struct prof_name_key profile_name_key(const struct profile *p, size_t fn);
/* profile_name_cmp() on keys from profile_name_key(): A's from PA, B's from PB. */
int profile_name_key_cmp(const struct profile *pa, const struct prof_name_key *a,
			 const struct profile *pb, const struct prof_name_key *b);
/* The parts of FN's name (the texts between its "'"s; at least one, maybe empty): how
 * many, and the index in P->name_parts of part I (found in I steps). Equal indices are
 * equal texts in one profile. */
size_t profile_name_parts(const struct profile *p, size_t fn);
uint32_t profile_name_part(const struct profile *p, size_t fn, size_t i);
/* The indices of FN's parts, in order, into IDS (room for CAP of them). Returns how many
 * parts the name has: with more than CAP, only the first CAP are written. */
size_t profile_name_part_ids(const struct profile *p, size_t fn, uint32_t *ids, size_t cap);
/* The indices in P->objs and P->files of FN's object and file. */
void profile_key_where(const struct profile *p, size_t fn, uint32_t *obj, uint32_t *file);
/* For the builder (profile.c): the index of the function named NAME (LEN bytes) with
 * object OBJ and file FILE (indices in P->objs, P->files), its parts interned in
 * P->name_parts and its name in P->names; *ADDED tells whether it is new (then its index
 * is P->nfns, which the caller counts). Not after profile_names_seal(). */
uint32_t profile_name_intern(struct profile *p, const char *name, size_t len, uint32_t obj,
			     uint32_t file, int *added);
/* No more functions come: the indices that found names are freed. */
void profile_names_seal(struct profile *p);
void profile_names_free(struct profile *p);

/* Function FN's self and inclusive cost, per event (inclusive equals self for cachegrind:
 * no calls there). */
static inline const uint64_t *profile_self(const struct profile *p, size_t fn)
{
	return p->cost_pool + fn * p->nevents;
}
static inline const uint64_t *profile_incl(const struct profile *p, size_t fn)
{
	return p->cost_pool + (p->nfns + fn) * p->nevents;
}
/* The same to be written, for those who make a profile (prof_scope.c). */
static inline uint64_t *profile_incl_w(struct profile *p, size_t fn)
{
	return p->cost_pool + (p->nfns + fn) * p->nevents;
}
/* Function FN's object ("" when the profile names none: cachegrind) and file. */
const char *profile_obj(const struct profile *p, size_t fn);
const char *profile_file(const struct profile *p, size_t fn);

/* The name of KIND as the documents write it: "native", "jit", "unnamed_jit", "no_symbol". */
const char *profile_kind_name(enum prof_kind kind);
/* Sets P's command (a cmd: line's value, LEN bytes; blanks around it removed); the first
 * one given is kept. */
void profile_set_cmd(struct profile *p, const char *cmd, size_t len);

/* 0 when FN is not to be listed or matched in P's documents (a scope of JIT code only and
 * FN is not JIT), else 1. */
int profile_listed(const struct profile *p, size_t fn);

/* The index of event NAME, or -1. */
int profile_event(const struct profile *p, const char *name);

/* The strongly connected components of P's call graph (self-calls left out, Tarjan's
 * algorithm): COMP[f], an array of nfns entries from the caller, gets the number of f's
 * component. Returns the number of components. */
uint32_t profile_components(const struct profile *p, uint32_t *comp);
/* The same for N functions and the arcs ARCS[0..NARCS) between them (a subset of a
 * profile's: the flame graph cuts the arcs into a focus). */
uint32_t profile_components_of(size_t n, const struct prof_arc *arcs, size_t narcs, uint32_t *comp);
/* The same, and SIZE[c] (NULL: not wanted), an array of nfns entries, gets the number of
 * functions in component c (prof_components.c). */
uint32_t prof_components(size_t n, const struct prof_arc *arcs, size_t narcs, uint32_t *comp,
			 uint32_t *size);

/* Builds the per-function sums from self costs and call arcs: used by the loaders and by
 * tests that construct profiles directly. */
struct profile_builder;
struct profile_builder *profile_builder_new(struct profile *p, unsigned nevents,
					    const char *const *events);
/* From now on name'N (a --separate-recs copy) is added as name. */
void profile_builder_fold(struct profile_builder *b, int fold);
/* From now on every function's name (each of its "'" parts: pathmap_callgrind_name())
 * and file (pathmap_path()) is added with its path mapped by PM, which must outlive B;
 * functions that then agree are one. NULL: as given. */
void profile_builder_paths(struct profile_builder *b, const struct pathmap *pm);
/* A function as a loader names it: its object, file and name, each LEN bytes long (not
 * NUL-terminated where they point into a line being read). */
struct prof_fn_key {
	const char *obj;
	size_t olen;
	const char *file;
	size_t flen;
	const char *name;
	size_t nlen;
};
/* The function K names, added if new (its strings copied); returns its index. */
uint32_t profile_builder_fn(struct profile_builder *b, const struct prof_fn_key *k);
/* The same for function FN of profile FROM (another than B's), by its name, object and
 * file. */
uint32_t profile_builder_copy_fn(struct profile_builder *b, const struct profile *from, size_t fn);
void profile_builder_self(struct profile_builder *b, uint32_t fn, const uint64_t *costs);
/* CALLER called CALLEE COUNT times, with inclusive cost COSTS. */
void profile_builder_call(struct profile_builder *b, uint32_t caller, uint32_t callee,
			  uint64_t count, const uint64_t *costs);
/* Computes inclusive costs and flags into P and frees B. */
void profile_builder_finish(struct profile_builder *b);
void profile_builder_abort(struct profile_builder *b);   /* NULL is a no-op */

#endif
