/* jitprog.c - a tiny "JIT" for cgjit's tests (x86-64 Linux only).
 * Assembles a handful of functions into an anonymous RWX mapping (by default at
 * 0x10000000), writes a perf map for them and calls into them, so that callgrind
 * produces every JIT naming pattern described in
 * docs/formats.md section 2.4 (interior entries, tail
 * jumps, emulated calls through push+ret, recursion, calls into and out of C).
 * See README in this directory for the layout, the map names and what callgrind
 * makes of them. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* VALGRIND_DISCARD_TRANSLATIONS tells valgrind that code was replaced (what a
 * real JIT does). Without the header it is a no-op; valgrind's default
 * --smc-check=all-non-file notices the writes to anonymous memory anyway. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND_H 1
#endif
#endif
#ifndef HAVE_VALGRIND_H
#define VALGRIND_DISCARD_TRANSLATIONS(addr, len) ((void)(addr), (void)(len))
#endif

#if !defined(__x86_64__) || !defined(__linux__)
#error "jitprog generates x86-64 machine code and needs Linux"
#endif

#define DEFAULT_BASE 0x10000000UL
#define REGION_SIZE 0x1000UL

/* Offsets of the generated functions inside the region (see README). */
enum {
	FN_SLOTS = 24, /* room for every FN_* (see FN_ALL below) */
	OFF_A = 0x000, /* loop calling B, then D, C, C+4, F, H; tail jmp C+4 */
	OFF_B = 0x100, /* leaf */
	OFF_C = 0x200, /* entered at C+0 and at the interior address C+4 */
	OFF_D = 0x300, /* call rax into C code, then E */
	OFF_E = 0x400, /* recursive */
	OFF_F = 0x500, /* push G+8; ret */
	OFF_G = 0x600, /* only ever entered at G+8 */
	OFF_H = 0x700, /* not in the perf map; tail-jumps into C code */
	OFF_N = 0x800, /* in the perf map, never executed */
	OFF_R = 0x900, /* called once by main: calls A reps times */
	OFF_M = 0xa00, /* --move: loaded here, called, then moved to OFF_M2 */
	OFF_M2 = 0xb00,
	OFF_X = 0xc00, /* --reuse: X loaded here and called; then Y replaces it */
	OFF_T = 0xd00, /* --trampoline: in the map; jmp S, S jmps back into T */
	OFF_U = 0xd80, /* --trampoline: in the map; tail jmp V, V returns for U */
	OFF_S = 0xe00, /* --trampoline: NOT in the map, reached only by T's jmp */
	OFF_V = 0xe80, /* --trampoline: NOT in the map, reached only by U's jmp */
	SLOT_SIZE = 0x100,
	C_INTERIOR = 4,
	G_INTERIOR = 8,
	A_LOOP_COUNT = 100, /* calls A->B per call of A */
	CALLBACK_ARG = 4,   /* calls callback->B per call of D */
	E_DEPTH = 5,        /* E(5): 1 call from D plus 5 recursive calls */
	M_CALLS_BEFORE = 100, /* --move: calls of M at OFF_M, then at OFF_M2 */
	M_CALLS_AFTER = 200,
	X_CALLS = 100,        /* --reuse: calls of X, then of Y at the same address */
	Y_CALLS = 300,
	TRAMP_CALLS = 200,    /* --trampoline: calls of T, then of U, from main */
	T_ARG = 7,            /* S calls B(T_ARG) = 22, then jitprog_tramp_c(22) = 44 */
	U_ARG = 4,            /* V calls B(U_ARG) = 13, then jitprog_tramp_c(13) = 26 */
};

/* ---- a minimal assembler: bytes at a cursor, rel32/rel8 to region offsets ---- */

struct code {
	uint8_t *mem;     /* start of the region (writable view) */
	uint64_t rt;      /* runtime address of mem[0] */
	size_t pos;       /* cursor, offset from mem */
	size_t start[FN_SLOTS]; /* function starts, for sizes (index: FN_*) */
	size_t end[FN_SLOTS];
};

static void emit1(struct code *c, uint8_t b)
{
	if (c->pos >= REGION_SIZE) {
		fprintf(stderr, "jitprog: code overflows the region\n");
		exit(1);
	}
	c->mem[c->pos++] = b;
}

static void emitn(struct code *c, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		emit1(c, b[i]);
}

static void emit32(struct code *c, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		emit1(c, (uint8_t)(v >> (8 * i)));
}

static void emit64(struct code *c, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		emit1(c, (uint8_t)(v >> (8 * i)));
}

/* Start function slot K at region offset OFF; the gap is filled with int3. */
static void begin(struct code *c, int k, size_t off)
{
	while (c->pos < off)
		emit1(c, 0xcc);
	c->pos = off;
	c->start[k] = off;
}

static void finish(struct code *c, int k)
{
	c->end[k] = c->pos;
}

static void rel32_to(struct code *c, size_t target)
{
	int64_t d = (int64_t)target - (int64_t)(c->pos + 4);
	emit32(c, (uint32_t)(int32_t)d);
}

static void call_off(struct code *c, size_t target) /* call rel32 */
{
	emit1(c, 0xe8);
	rel32_to(c, target);
}

static void jmp_off(struct code *c, size_t target) /* jmp rel32 */
{
	emit1(c, 0xe9);
	rel32_to(c, target);
}

/* Short conditional jump (opcode OP, e.g. 0x75 jnz) to an earlier label. */
static void jcc8_back(struct code *c, uint8_t op, size_t target)
{
	int64_t d = (int64_t)target - (int64_t)(c->pos + 2);
	if (d < -128 || d > 127) {
		fprintf(stderr, "jitprog: rel8 out of range\n");
		exit(1);
	}
	emit1(c, op);
	emit1(c, (uint8_t)(int8_t)d);
}

static void movabs_rax(struct code *c, uint64_t v) /* mov rax, imm64 */
{
	emit1(c, 0x48);
	emit1(c, 0xb8);
	emit64(c, v);
}

static void mov_ecx(struct code *c, uint32_t v) /* mov ecx, imm32 */
{
	emit1(c, 0xb9);
	emit32(c, v);
}

static void mov_edi(struct code *c, uint32_t v) /* mov edi, imm32 */
{
	emit1(c, 0xbf);
	emit32(c, v);
}

/* dec ecx; jnz back to the dec: a small counted loop */
static void spin_ecx(struct code *c, uint32_t n)
{
	mov_ecx(c, n);
	size_t l = c->pos;
	emitn(c, (const uint8_t[]){0xff, 0xc9}, 2); /* dec ecx */
	jcc8_back(c, 0x75, l);                      /* jnz l */
}

/* ---- the C side that JIT code calls into ---- */

static int (*jit_b)(int);       /* B, called from C code (C -> JIT) */
static volatile int callback_sum; /* result of the last jitprog_callback */
static volatile int tail_hits;   /* how often H tail-jumped into C code */
static volatile int tramp_hits;  /* --trampoline: calls of jitprog_tramp_c */

/* Called by D via `call rax` (JIT -> C); calls B back (C -> JIT).
 * The system call matters: callgrind checks --dump-every-bb only when valgrind's
 * scheduler resumes the program, e.g. after a system call, so this is where dumps
 * happen while main -> A -> D -> here is on the stack (calls=0 records). */
int jitprog_callback(int n)
{
	(void)getppid();
	int s = 0;
	for (int i = 0; i < n; i++)
		s += jit_b(i);
	callback_sum = s;
	return s;
}

/* Reached from H by `jmp rax` (a jump across objects: an emulated call).
 * Returns straight to A, H's caller. */
int jitprog_tail_target(void)
{
	tail_hits++;
	return tail_hits;
}

/* Called from the unmapped stubs S and V (--trampoline), by `call rax`: a call
 * from code that no map covers, which callgrind charges to T or U. */
int jitprog_tramp_c(int n)
{
	tramp_hits++;
	return 2 * n;
}

enum { FN_A, FN_B, FN_C, FN_D, FN_E, FN_F, FN_G, FN_H, FN_N, FN_R, FN_COUNT,
       /* only with --move / --reuse / --trampoline (S and V: never in the map): */
       FN_M = FN_COUNT, FN_X, FN_Y, FN_T, FN_U, FN_S, FN_V, FN_ALL };
_Static_assert((int)FN_ALL <= (int)FN_SLOTS, "struct code has a slot for every function");

static void assemble(struct code *c)
{
	/* A: entry rsp = 8 mod 16; push rbx re-aligns for the calls below. */
	begin(c, FN_A, OFF_A);
	emit1(c, 0x53);                             /* push rbx */
	emit1(c, 0xbb);                             /* mov ebx, A_LOOP_COUNT */
	emit32(c, A_LOOP_COUNT);
	size_t a_loop = c->pos;
	emitn(c, (const uint8_t[]){0x89, 0xdf}, 2); /* mov edi, ebx */
	call_off(c, OFF_B);                         /* call B */
	emitn(c, (const uint8_t[]){0xff, 0xcb}, 2); /* dec ebx */
	jcc8_back(c, 0x75, a_loop);                 /* jnz loop */
	call_off(c, OFF_D);                         /* call D */
	call_off(c, OFF_C);                         /* call C */
	call_off(c, OFF_C + C_INTERIOR);            /* call C+4 (interior entry) */
	call_off(c, OFF_F);                         /* call F */
	call_off(c, OFF_H);                         /* call H (not in the map) */
	emit1(c, 0x5b);                             /* pop rbx */
	jmp_off(c, OFF_C + C_INTERIOR);             /* tail jmp C+4: C's ret returns from A */
	finish(c, FN_A);

	/* B(x) = 3x + 1, a leaf */
	begin(c, FN_B, OFF_B);
	emitn(c, (const uint8_t[]){0x8d, 0x04, 0x7f}, 3); /* lea eax, [rdi+rdi*2] */
	emitn(c, (const uint8_t[]){0x83, 0xc0, 0x01}, 3); /* add eax, 1 */
	emit1(c, 0xc3);                                   /* ret */
	finish(c, FN_B);

	/* C: a 4-byte nop, then at C+4 the body: eax = 10+9+...+1 = 55 */
	begin(c, FN_C, OFF_C);
	emitn(c, (const uint8_t[]){0x0f, 0x1f, 0x40, 0x00}, 4); /* nopl 0(rax) */
	emitn(c, (const uint8_t[]){0x31, 0xc0}, 2);             /* C+4: xor eax, eax */
	mov_ecx(c, 10);
	size_t c_loop = c->pos;
	emitn(c, (const uint8_t[]){0x01, 0xc8}, 2); /* add eax, ecx */
	emitn(c, (const uint8_t[]){0xff, 0xc9}, 2); /* dec ecx */
	jcc8_back(c, 0x75, c_loop);                 /* jnz */
	emit1(c, 0xc3);                             /* ret */
	finish(c, FN_C);

	/* D: calls jitprog_callback(CALLBACK_ARG) through rax, then E(E_DEPTH) */
	begin(c, FN_D, OFF_D);
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xec, 0x08}, 4); /* sub rsp, 8 */
	mov_edi(c, CALLBACK_ARG);
	movabs_rax(c, (uint64_t)(uintptr_t)&jitprog_callback);
	emitn(c, (const uint8_t[]){0xff, 0xd0}, 2); /* call rax */
	mov_edi(c, E_DEPTH);
	call_off(c, OFF_E);                                     /* call E */
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xc4, 0x08}, 4); /* add rsp, 8 */
	emit1(c, 0xc3);                                         /* ret */
	finish(c, FN_D);

	/* E(n) = n == 0 ? 0 : n + E(n-1) */
	begin(c, FN_E, OFF_E);
	emitn(c, (const uint8_t[]){0x85, 0xff}, 2); /* test edi, edi */
	emitn(c, (const uint8_t[]){0x74, 0x0f}, 2); /* jz base (+15) */
	size_t e_nz = c->pos;
	emit1(c, 0x53);                                   /* push rbx */
	emitn(c, (const uint8_t[]){0x89, 0xfb}, 2);       /* mov ebx, edi */
	emitn(c, (const uint8_t[]){0x8d, 0x7f, 0xff}, 3); /* lea edi, [rdi-1] */
	call_off(c, OFF_E);                               /* call E */
	emitn(c, (const uint8_t[]){0x01, 0xd8}, 2);       /* add eax, ebx */
	emit1(c, 0x5b);                                   /* pop rbx */
	emit1(c, 0xc3);                                   /* ret */
	if (c->pos - e_nz != 0x0f) {
		fprintf(stderr, "jitprog: E's jz offset is wrong\n");
		exit(1);
	}
	emitn(c, (const uint8_t[]){0x31, 0xc0}, 2); /* base: xor eax, eax */
	emit1(c, 0xc3);                             /* ret */
	finish(c, FN_E);

	/* F: spin, then "return" into G+8: an unmatched ret */
	begin(c, FN_F, OFF_F);
	spin_ecx(c, 20);
	movabs_rax(c, c->rt + OFF_G + G_INTERIOR);
	emit1(c, 0x50); /* push rax */
	emit1(c, 0xc3); /* ret -> G+8 */
	finish(c, FN_F);

	/* G: 8 bytes never executed, then at G+8 a spin; its ret returns to A */
	begin(c, FN_G, OFF_G);
	emitn(c, (const uint8_t[]){0xb8, 0x01, 0x00, 0x00, 0x00}, 5); /* mov eax, 1 */
	emitn(c, (const uint8_t[]){0x0f, 0x1f, 0x00}, 3);             /* nopl (rax) */
	spin_ecx(c, 30);                                              /* G+8 */
	emitn(c, (const uint8_t[]){0xb8, 0x07, 0x00, 0x00, 0x00}, 5); /* mov eax, 7 */
	emit1(c, 0xc3);                                               /* ret */
	finish(c, FN_G);

	/* H: anonymous code that is NOT in the map; spins, then jmp rax into C */
	begin(c, FN_H, OFF_H);
	spin_ecx(c, 15);
	movabs_rax(c, (uint64_t)(uintptr_t)&jitprog_tail_target);
	emitn(c, (const uint8_t[]){0xff, 0xe0}, 2); /* jmp rax */
	finish(c, FN_H);

	/* N: in the map, never called */
	begin(c, FN_N, OFF_N);
	emitn(c, (const uint8_t[]){0x31, 0xc0}, 2); /* xor eax, eax */
	emit1(c, 0xc3);                             /* ret */
	finish(c, FN_N);
	/* R(n): calls A n times, returns the sum of A's results. Entered once by
	 * main, so its call record is still open at every --dump-every-bb dump. */
	begin(c, FN_R, OFF_R);
	emit1(c, 0x53);                                         /* push rbx */
	emit1(c, 0x55);                                         /* push rbp */
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xec, 0x08}, 4); /* sub rsp, 8 */
	emitn(c, (const uint8_t[]){0x89, 0xfb}, 2);             /* mov ebx, edi */
	emitn(c, (const uint8_t[]){0x31, 0xed}, 2);             /* xor ebp, ebp */
	emitn(c, (const uint8_t[]){0x85, 0xdb}, 2);             /* test ebx, ebx */
	emitn(c, (const uint8_t[]){0x74, 0x0b}, 2);             /* jz done (+11) */
	size_t r_loop = c->pos;
	call_off(c, OFF_A);                                     /* call A */
	emitn(c, (const uint8_t[]){0x01, 0xc5}, 2);             /* add ebp, eax */
	emitn(c, (const uint8_t[]){0xff, 0xcb}, 2);             /* dec ebx */
	jcc8_back(c, 0x75, r_loop);                             /* jnz loop */
	if (c->pos - r_loop != 0x0b) {
		fprintf(stderr, "jitprog: R's jz offset is wrong\n");
		exit(1);
	}
	emitn(c, (const uint8_t[]){0x89, 0xe8}, 2);             /* done: mov eax, ebp */
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xc4, 0x08}, 4); /* add rsp, 8 */
	emit1(c, 0x5d);                                         /* pop rbp */
	emit1(c, 0x5b);                                         /* pop rbx */
	emit1(c, 0xc3);                                         /* ret */
	finish(c, FN_R);

	while (c->pos < REGION_SIZE)
		emit1(c, 0xcc);
}

/* --move: M(x) = x + 1 after a short spin. Position independent, so moving
 * its bytes moves the function. */
static void assemble_m(struct code *c)
{
	begin(c, FN_M, OFF_M);
	spin_ecx(c, 10);
	emitn(c, (const uint8_t[]){0x8d, 0x47, 0x01}, 3); /* lea eax, [rdi+1] */
	emit1(c, 0xc3);                                   /* ret */
	finish(c, FN_M);
}

/* --reuse: X() = 1 after a short spin (15 bytes) ... */
static void assemble_x(struct code *c)
{
	begin(c, FN_X, OFF_X);
	spin_ecx(c, 5);
	emitn(c, (const uint8_t[]){0xb8, 0x01, 0x00, 0x00, 0x00}, 5); /* mov eax, 1 */
	emit1(c, 0xc3);                                               /* ret */
	finish(c, FN_X);
}

/* ... and Y() = 9+8+...+1 + 1 = 46 (17 bytes), written over X at the same
 * address once X is dead. Different instruction boundaries: X has
 * instructions at +0 +5 +7 +9 +14, Y at +0 +2 +7 +9 +11 +13 +16. */
static void assemble_y(struct code *c)
{
	c->pos = OFF_X;
	for (size_t i = 0; i < SLOT_SIZE; i++)
		emit1(c, 0xcc);
	begin(c, FN_Y, OFF_X);
	emitn(c, (const uint8_t[]){0x31, 0xc0}, 2); /* xor eax, eax */
	mov_ecx(c, 9);
	size_t l = c->pos;
	emitn(c, (const uint8_t[]){0x01, 0xc8}, 2);       /* add eax, ecx */
	emitn(c, (const uint8_t[]){0xff, 0xc9}, 2);       /* dec ecx */
	jcc8_back(c, 0x75, l);                            /* jnz */
	emitn(c, (const uint8_t[]){0x83, 0xc0, 0x01}, 3); /* add eax, 1 */
	emit1(c, 0xc3);                                   /* ret */
	finish(c, FN_Y);
}

/* --trampoline: two mapped functions that jump into code no map covers, as a
 * runtime's trampolines are (e.g. mono's rgctx trampolines, which JIT code
 * reaches by a jump and which are not in mono's perf map). Callgrind charges
 * every instruction of S and V, and the calls made from them, to T and U.
 *   T: push rbx; spin 10; jmp S
 *      T_back: add eax,1; pop rbx; ret         (returns B(7) + 2*B(7) + 1 = 67)
 *   S: spin 25; mov edi,T_ARG; call B; mov ebx,eax; mov edi,eax;
 *      movabs rax,&jitprog_tramp_c; call rax; add eax,ebx; jmp T_back
 *   U: spin 5; mov edi,U_ARG; jmp V            (a tail jump: U never returns itself)
 *   V: sub rsp,8; spin 12; call B; mov edi,eax; movabs rax,&jitprog_tramp_c;
 *      call rax; add rsp,8; ret                (returns to U's caller: 26)
 * T is entered with rsp = 8 mod 16 and pushes rbx, V subtracts 8: the calls
 * from S and V are made with an aligned stack. */
static void assemble_tramp(struct code *c)
{
	begin(c, FN_T, OFF_T);
	emit1(c, 0x53); /* push rbx */
	spin_ecx(c, 10);
	jmp_off(c, OFF_S); /* jmp S (not call) */
	size_t t_back = c->pos;
	emitn(c, (const uint8_t[]){0x83, 0xc0, 0x01}, 3); /* add eax, 1 */
	emit1(c, 0x5b);                                   /* pop rbx */
	emit1(c, 0xc3);                                   /* ret */
	finish(c, FN_T);

	begin(c, FN_U, OFF_U);
	spin_ecx(c, 5);
	mov_edi(c, U_ARG);
	jmp_off(c, OFF_V); /* tail jmp V */
	finish(c, FN_U);

	begin(c, FN_S, OFF_S);
	spin_ecx(c, 25);
	mov_edi(c, T_ARG);
	call_off(c, OFF_B);                         /* call B (JIT, in the map) */
	emitn(c, (const uint8_t[]){0x89, 0xc3}, 2); /* mov ebx, eax */
	emitn(c, (const uint8_t[]){0x89, 0xc7}, 2); /* mov edi, eax */
	movabs_rax(c, (uint64_t)(uintptr_t)&jitprog_tramp_c);
	emitn(c, (const uint8_t[]){0xff, 0xd0}, 2); /* call rax (C) */
	emitn(c, (const uint8_t[]){0x01, 0xd8}, 2); /* add eax, ebx */
	jmp_off(c, t_back);                         /* jmp back into T */
	finish(c, FN_S);

	begin(c, FN_V, OFF_V);
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xec, 0x08}, 4); /* sub rsp, 8 */
	spin_ecx(c, 12);
	call_off(c, OFF_B);                         /* call B (edi = U_ARG from U) */
	emitn(c, (const uint8_t[]){0x89, 0xc7}, 2); /* mov edi, eax */
	movabs_rax(c, (uint64_t)(uintptr_t)&jitprog_tramp_c);
	emitn(c, (const uint8_t[]){0xff, 0xd0}, 2);             /* call rax (C) */
	emitn(c, (const uint8_t[]){0x48, 0x83, 0xc4, 0x08}, 4); /* add rsp, 8 */
	emit1(c, 0xc3);                                         /* ret: for U */
	finish(c, FN_V);
}

/* Perf map names, one per convention cgjit must keep byte for byte (README).
 * The same names are used in the jitdump. */
static const char *const map_name[FN_ALL] = {
	[FN_A] = "jit_A(/src/a.raku:10)",                /* MoarVM: name(file:line) */
	[FN_B] = "JS:*jit_B /src/b.js:3:7",              /* V8: JS:* + space + file:line:col */
	[FN_C] = "int jit.Cls.c(int, java.lang.String)", /* OpenJDK: spaces, comma, parens */
	[FN_D] = "(/src/d.raku:42)",                     /* MoarVM anonymous frame: starts with '(' */
	[FN_E] = "py::jit_E:/src/e.py",                  /* CPython -X perf trampoline */
	[FN_F] = "TRACE_5::/src/f.lua:17",               /* LuaJIT trace */
	[FN_G] = "(7)jit_G",                             /* '(' + digit: looks like a compressed id */
	[FN_H] = NULL,                                   /* deliberately not in the map */
	[FN_N] = "jit_never_called(/src/n.raku:1)",      /* in the map, never executed */
	[FN_R] = "wasm[0]::function[3]::run_reps",       /* wasmtime: brackets */
	[FN_M] = "jit_M",                                /* --move: moved to OFF_M2 */
	[FN_X] = "jit_X",                                /* --reuse: the first code at OFF_X */
	[FN_Y] = "jit_Y",                                /* --reuse: the second code at OFF_X */
	[FN_T] = "jit_T(/src/t.raku:5)",                 /* --trampoline: jumps to S and back */
	[FN_U] = "jit_U(/src/u.raku:8)",                 /* --trampoline: tail-jumps to V */
	[FN_S] = NULL,                                   /* deliberately not in the map */
	[FN_V] = NULL,                                   /* deliberately not in the map */
};

struct opts {
	const char *dir;   /* where perf-PID.map goes */
	unsigned long reps;
	int overlap_map;   /* also write perf-PID.overlap.map */
	int prefix_0x;     /* OpenJDK style 0x%016lx fields */
	const char *code_out; /* write the region's bytes here (for objdump -b binary) */
	uint64_t base;
	const char *jitdump_dir; /* --jitdump: also write DIR/jit-PID.dump */
	int move;          /* --move: load M, call it, move it, call it again */
	int reuse;         /* --reuse: load X, call it, replace it by Y at the same address */
	int tramp;         /* --trampoline: T and U jump into the unmapped stubs S and V */
};

static void map_line(FILE *f, const struct opts *o, uint64_t start, uint64_t size,
		     const char *name)
{
	if (o->prefix_0x)
		fprintf(f, "0x%016llx 0x%016llx %s\n", (unsigned long long)start,
			(unsigned long long)size, name);
	else
		fprintf(f, "%llx %llx %s\n", (unsigned long long)start,
			(unsigned long long)size, name);
}

static void map_entries(FILE *f, const struct opts *o, const struct code *c)
{
	for (int k = 0; k < FN_COUNT; k++)
		if (map_name[k])
			map_line(f, o, c->rt + c->start[k], c->end[k] - c->start[k], map_name[k]);
}

static FILE *open_map(const struct opts *o, const char *suffix, char *path, size_t cap)
{
	int n = snprintf(path, cap, "%s/perf-%ld%s", o->dir, (long)getpid(), suffix);
	if (n < 0 || (size_t)n >= cap) {
		fprintf(stderr, "jitprog: map directory name too long\n");
		exit(1);
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "jitprog: cannot write '%s': %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static void close_map(FILE *f, const char *path)
{
	if (fclose(f) != 0) {
		fprintf(stderr, "jitprog: error writing '%s'\n", path);
		exit(1);
	}
	printf("map %s\n", path);
}

/* The overlap map: what a real map looks like after code was replaced.
 * Resolved with "a later line wins", every executed address gets a defined name
 * (README, section "overlap map"). */
static void write_overlap_map(const struct opts *o, const struct code *c)
{
	char path[4096];
	FILE *f = open_map(o, ".overlap.map", path, sizeof path);
	uint64_t rt = c->rt;
	/* stale entries, all overridden by later lines */
	map_line(f, o, rt + OFF_A, OFF_H - OFF_A, "stale_region_A_to_G");
	map_line(f, o, rt + c->start[FN_B], c->end[FN_B] - c->start[FN_B],
		 "JS:~jit_B_stale /src/b.js:3:7");
	map_entries(f, o, c);
	/* exact duplicate of A's line */
	map_line(f, o, rt + c->start[FN_A], c->end[FN_A] - c->start[FN_A], map_name[FN_A]);
	/* same range as E, new name: E becomes py::jit_E_v2 */
	map_line(f, o, rt + c->start[FN_E], c->end[FN_E] - c->start[FN_E],
		 "py::jit_E_v2:/src/e.py");
	/* partial overlap: C+4 .. end of C gets a new name, C+0 .. C+3 keeps C's */
	map_line(f, o, rt + c->start[FN_C] + C_INTERIOR,
		 c->end[FN_C] - c->start[FN_C] - C_INTERIOR, "jit_C_osr(/src/c.raku:5)");
	close_map(f, path);
}

/* Appends one line to the main map (a runtime appends as it compiles). */
static void append_map_line(const struct opts *o, uint64_t start, uint64_t size, const char *name)
{
	char path[4096];
	int n = snprintf(path, sizeof path, "%s/perf-%ld.map", o->dir, (long)getpid());
	FILE *f = n > 0 && (size_t)n < sizeof path ? fopen(path, "a") : NULL;
	if (!f) {
		fprintf(stderr, "jitprog: cannot append to '%s'\n", path);
		exit(1);
	}
	map_line(f, o, start, size, name);
	if (fclose(f) != 0) {
		fprintf(stderr, "jitprog: error writing '%s'\n", path);
		exit(1);
	}
}

/* ---- jitdump: DIR/jit-PID.dump, laid out as wasmtime's jitdump agent writes it
 * (crates/jit-debug/src/perf_jitdump.rs): 40-byte header, then records without
 * padding, all fields in native (little-endian) byte order, timestamps from
 * CLOCK_MONOTONIC in ns, vma = code_addr, code_index from 0, and a 1 KiB
 * PROT_READ|PROT_EXEC mapping of the file as the marker perf inject looks for.
 * Record order: see README. ---- */

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_DEBUG_INFO = 2 };

struct jitdump {
	FILE *f;
	char path[4096];
	uint64_t next_index; /* code_index of the next CODE_LOAD */
	size_t len;          /* bytes of the record being built */
	uint8_t buf[4096];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void jd_put(struct jitdump *j, const void *p, size_t n)
{
	if (n > sizeof j->buf - j->len) {
		fprintf(stderr, "jitprog: jitdump record too long\n");
		exit(1);
	}
	memcpy(j->buf + j->len, p, n);
	j->len += n;
}

static void jd_u32(struct jitdump *j, uint32_t v) { jd_put(j, &v, 4); }
static void jd_u64(struct jitdump *j, uint64_t v) { jd_put(j, &v, 8); }
static void jd_str(struct jitdump *j, const char *s) { jd_put(j, s, strlen(s) + 1); }

/* Writes and flushes the bytes in buf, so the file is complete at any time. */
static void jd_flush(struct jitdump *j)
{
	if (fwrite(j->buf, 1, j->len, j->f) != j->len || fflush(j->f) != 0) {
		fprintf(stderr, "jitprog: error writing '%s'\n", j->path);
		exit(1);
	}
	j->len = 0;
}

/* Record prefix: u32 id, u32 total_size (filled in by jd_end), u64 timestamp. */
static void jd_begin(struct jitdump *j, uint32_t id)
{
	j->len = 0;
	jd_u32(j, id);
	jd_u32(j, 0);
	jd_u64(j, now_ns());
}

static void jd_end(struct jitdump *j)
{
	uint32_t total = (uint32_t)j->len;
	memcpy(j->buf + 4, &total, 4);
	jd_flush(j);
}

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static void jd_open(struct jitdump *j, const char *dir)
{
	int n = snprintf(j->path, sizeof j->path, "%s/jit-%ld.dump", dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof j->path) {
		fprintf(stderr, "jitprog: jitdump directory name too long\n");
		exit(1);
	}
	j->f = fopen(j->path, "w+"); /* readable too: the marker mmap needs it */
	if (!j->f) {
		fprintf(stderr, "jitprog: cannot write '%s': %s\n", j->path, strerror(errno));
		exit(1);
	}
	/* The marker: perf inject finds the dump through this mmap event. Kept
	 * mapped until exit, never touched. */
	if (mmap(NULL, 1024, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(j->f), 0) == MAP_FAILED) {
		fprintf(stderr, "jitprog: mmap of '%s': %s\n", j->path, strerror(errno));
		exit(1);
	}
	j->next_index = 0;
	j->len = 0;
	jd_u32(j, 0x4A695444); /* magic "JiTD"; on disk (little-endian): "DTiJ" */
	jd_u32(j, 1);          /* version */
	jd_u32(j, 40);         /* total_size of this header */
	jd_u32(j, 62);         /* elf_mach: EM_X86_64 */
	jd_u32(j, 0);          /* pad1 */
	jd_u32(j, (uint32_t)getpid());
	jd_u64(j, now_ns()); /* timestamp */
	jd_u64(j, 0);        /* flags */
	jd_flush(j);
	printf("jitdump %s\n", j->path);
}

/* One line-table entry: address = code_addr + off. */
struct dbg_entry {
	uint64_t off;
	uint32_t line;
	char file[32];
};

/* The made-up source positions of function K (README, "Jitdump"): entries at
 * +0, +4, +8 (as far as the function reaches), lines 10*(K+1) + 0, 1, 2, file
 * /src/jit_<letter>.wat; D's third entry is in /src/inline_D.wat. R has none
 * (no DEBUG_INFO record, as with wasmtime's current agent). */
static size_t debug_entries(int k, size_t size, struct dbg_entry *e)
{
	static const char letters[] = "ABCDEFGHNRMXYTUSV";
	if (k == FN_R)
		return 0;
	size_t n = 0;
	for (size_t off = 0; off < size && n < 3; off += 4, n++) {
		e[n].off = off;
		e[n].line = (uint32_t)(10 * (k + 1) + (int)n);
		snprintf(e[n].file, sizeof e[n].file, "/src/jit_%c.wat", letters[k]);
	}
	if (k == FN_D && n == 3)
		snprintf(e[2].file, sizeof e[2].file, "/src/inline_D.wat");
	return n;
}

/* DEBUG_INFO (if the function has entries), then CODE_LOAD for function K as
 * it is now in the region. Returns the code_index. */
static uint64_t jd_load(struct jitdump *j, const struct code *c, int k)
{
	uint64_t addr = c->rt + c->start[k];
	size_t size = c->end[k] - c->start[k];
	struct dbg_entry e[3];
	size_t n = debug_entries(k, size, e);
	if (n) {
		jd_begin(j, JIT_CODE_DEBUG_INFO);
		jd_u64(j, addr); /* code_addr */
		jd_u64(j, n);    /* nr_entry */
		for (size_t i = 0; i < n; i++) {
			jd_u64(j, addr + e[i].off);
			jd_u32(j, e[i].line);
			jd_u32(j, 0); /* discrim */
			jd_str(j, e[i].file);
		}
		jd_end(j);
	}
	uint64_t index = j->next_index++;
	jd_begin(j, JIT_CODE_LOAD);
	jd_u32(j, (uint32_t)getpid());
	jd_u32(j, tid());
	jd_u64(j, addr); /* vma */
	jd_u64(j, addr); /* code_addr */
	jd_u64(j, size); /* code_size */
	jd_u64(j, index);
	jd_str(j, map_name[k]);
	jd_put(j, c->mem + c->start[k], size);
	jd_end(j);
	return index;
}

static void jd_move(struct jitdump *j, uint64_t old_addr, uint64_t new_addr, uint64_t size,
		    uint64_t index)
{
	jd_begin(j, JIT_CODE_MOVE);
	jd_u32(j, (uint32_t)getpid());
	jd_u32(j, tid());
	jd_u64(j, new_addr); /* vma */
	jd_u64(j, old_addr);
	jd_u64(j, new_addr);
	jd_u64(j, size);
	jd_u64(j, index);
	jd_end(j);
}

static void write_code(const char *path, const struct code *c)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(c->mem, 1, REGION_SIZE, f) != REGION_SIZE || fclose(f) != 0) {
		fprintf(stderr, "jitprog: cannot write '%s'\n", path);
		exit(1);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: jitprog [-d DIR] [-n REPS] [-a ADDR] [--overlap-map] [--prefix-0x]\n"
		"               [--code-out FILE] [--jitdump DIR] [--move] [--reuse] [--trampoline]\n"
		"  -d, --map-dir DIR   write perf-PID.map into DIR (default $PERFMAP_DIR, else /tmp)\n"
		"  -n, --reps N        call A N times (default 10, at most 1000000)\n"
		"  -a, --base ADDR     map the code at ADDR (hex, default 0x10000000)\n"
		"  -o, --overlap-map   also write perf-PID.overlap.map with stale/duplicate entries\n"
		"  -x, --prefix-0x     write map fields as 0x%%016lx (OpenJDK style)\n"
		"  -c, --code-out FILE write the %#lx-byte code region to FILE\n"
		"  -j, --jitdump DIR   also write DIR/jit-PID.dump (jitdump, wasmtime layout)\n"
		"  -m, --move          also run M, move it to another address, run it there\n"
		"  -r, --reuse         also run X, replace it by Y at the same address, run Y\n"
		"  -t, --trampoline    also run T and U, which jump into the unmapped stubs S, V\n",
		REGION_SIZE);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"map-dir", required_argument, NULL, 'd'},
		{"reps", required_argument, NULL, 'n'},
		{"base", required_argument, NULL, 'a'},
		{"overlap-map", no_argument, NULL, 'o'},
		{"prefix-0x", no_argument, NULL, 'x'},
		{"code-out", required_argument, NULL, 'c'},
		{"jitdump", required_argument, NULL, 'j'},
		{"move", no_argument, NULL, 'm'},
		{"reuse", no_argument, NULL, 'r'},
		{"trampoline", no_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *env = getenv("PERFMAP_DIR");
	o->dir = env && *env ? env : "/tmp";
	o->reps = 10;
	o->overlap_map = 0;
	o->prefix_0x = 0;
	o->code_out = NULL;
	o->base = DEFAULT_BASE;
	o->jitdump_dir = NULL;
	o->move = 0;
	o->reuse = 0;
	o->tramp = 0;
	int ch;
	char *end;
	while ((ch = getopt_long(argc, argv, "d:n:a:oxc:j:mrth", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->dir = optarg;
			break;
		case 'n':
			o->reps = strtoul(optarg, &end, 10);
			if (*end || !*optarg || o->reps > 1000000) {
				usage(stderr);
				exit(2);
			}
			break;
		case 'a':
			o->base = strtoull(optarg, &end, 16);
			if (*end || !*optarg || (o->base & 0xfff)) {
				fprintf(stderr, "jitprog: bad base address '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'o':
			o->overlap_map = 1;
			break;
		case 'x':
			o->prefix_0x = 1;
			break;
		case 'c':
			o->code_out = optarg;
			break;
		case 'j':
			o->jitdump_dir = optarg;
			break;
		case 'm':
			o->move = 1;
			break;
		case 'r':
			o->reuse = 1;
			break;
		case 't':
			o->tramp = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
}

/* Prefer the fixed address (stable names in the profiles); otherwise take any
 * address: the code is position independent apart from the movabs immediates,
 * which are filled in for wherever it lands. */
static uint8_t *map_region(uint64_t base)
{
	void *p = mmap((void *)(uintptr_t)base, REGION_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		p = mmap((void *)(uintptr_t)base, REGION_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "jitprog: mmap: %s\n", strerror(errno));
		exit(1);
	}
	if ((uintptr_t)p != base)
		fprintf(stderr, "jitprog: warning: code at %p, not at 0x%llx\n", p,
			(unsigned long long)base);
	return p;
}

typedef int (*jit_fn)(int);

static jit_fn fn_at(void *p)
{
	jit_fn f;
	memcpy(&f, &p, sizeof f); /* object pointer -> function pointer, no cast warning */
	return f;
}

static void print_fn(const struct code *c, const char *label, int k, const char *note)
{
	printf("fn %s 0x%llx-0x%llx %s%s\n", label, (unsigned long long)(c->rt + c->start[k]),
	       (unsigned long long)(c->rt + c->end[k]), map_name[k] ? map_name[k] : "(not in map)",
	       note);
}

/* --move: M runs at OFF_M, then its bytes are copied to OFF_M2 (the old place is
 * filled with int3) and it runs there. Returns the sum of M's results. */
static int run_move(struct code *c, const struct opts *o, struct jitdump *jd, uint64_t m_index)
{
	size_t size = c->end[FN_M] - c->start[FN_M];
	jit_fn f = fn_at(c->mem + OFF_M);
	int s = 0;
	for (int i = 0; i < M_CALLS_BEFORE; i++)
		s += f(i); /* M at OFF_M */
	memcpy(c->mem + OFF_M2, c->mem + OFF_M, size);
	memset(c->mem + OFF_M, 0xcc, size);
	VALGRIND_DISCARD_TRANSLATIONS(c->mem + OFF_M, size);
	VALGRIND_DISCARD_TRANSLATIONS(c->mem + OFF_M2, size);
	if (jd)
		jd_move(jd, c->rt + OFF_M, c->rt + OFF_M2, size, m_index);
	append_map_line(o, c->rt + OFF_M2, size, map_name[FN_M]);
	printf("move M 0x%llx -> 0x%llx\n", (unsigned long long)(c->rt + OFF_M),
	       (unsigned long long)(c->rt + OFF_M2));
	fflush(stdout);
	f = fn_at(c->mem + OFF_M2);
	for (int i = 0; i < M_CALLS_AFTER; i++)
		s += f(i); /* M at OFF_M2 */
	return s;
}

/* --reuse: X runs at OFF_X; then Y is written over it and runs at the same
 * address. Returns 1 if both computed what they should. */
static int run_reuse(struct code *c, const struct opts *o, struct jitdump *jd)
{
	jit_fn f = fn_at(c->mem + OFF_X);
	int sx = 0, sy = 0;
	for (int i = 0; i < X_CALLS; i++)
		sx += f(i); /* X */
	assemble_y(c);
	VALGRIND_DISCARD_TRANSLATIONS(c->mem + OFF_X, SLOT_SIZE);
	if (jd)
		jd_load(jd, c, FN_Y);
	append_map_line(o, c->rt + c->start[FN_Y], c->end[FN_Y] - c->start[FN_Y], map_name[FN_Y]);
	print_fn(c, "Y", FN_Y, " (reuses X's address)");
	fflush(stdout);
	f = fn_at(c->mem + OFF_X);
	for (int i = 0; i < Y_CALLS; i++)
		sy += f(i); /* Y, same address */
	return sx == X_CALLS && sy == 46 * Y_CALLS;
}

/* --trampoline: main calls T, then U, TRAMP_CALLS times each. Returns 1 if
 * both computed what they should. */
static int run_tramp(const struct code *c)
{
	jit_fn t = fn_at(c->mem + OFF_T), u = fn_at(c->mem + OFF_U);
	int st = 0, su = 0;
	tramp_hits = 0;
	for (int i = 0; i < TRAMP_CALLS; i++)
		st += t(i); /* T -> S -> B, jitprog_tramp_c -> T */
	for (int i = 0; i < TRAMP_CALLS; i++)
		su += u(i); /* U -> V -> B, jitprog_tramp_c -> U's caller */
	return st == 67 * TRAMP_CALLS && su == 26 * TRAMP_CALLS && tramp_hits == 2 * TRAMP_CALLS;
}

int main(int argc, char **argv)
{
	struct opts o;
	parse_opts(argc, argv, &o);

	struct code c = {0};
	c.mem = map_region(o.base);
	c.rt = (uint64_t)(uintptr_t)c.mem;
	assemble(&c);
	if (o.move)
		assemble_m(&c);
	if (o.reuse)
		assemble_x(&c);
	if (o.tramp)
		assemble_tramp(&c);

	char path[4096];
	FILE *f = open_map(&o, ".map", path, sizeof path);
	map_entries(f, &o, &c);
	if (o.move)
		map_line(f, &o, c.rt + c.start[FN_M], c.end[FN_M] - c.start[FN_M], map_name[FN_M]);
	if (o.reuse)
		map_line(f, &o, c.rt + c.start[FN_X], c.end[FN_X] - c.start[FN_X], map_name[FN_X]);
	if (o.tramp)
		for (int k = FN_T; k <= FN_U; k++)
			map_line(f, &o, c.rt + c.start[k], c.end[k] - c.start[k], map_name[k]);
	close_map(f, path);
	if (o.overlap_map)
		write_overlap_map(&o, &c);
	if (o.code_out)
		write_code(o.code_out, &c);

	/* The jitdump: every function of the perf map (so not H), in region order,
	 * then M and X; later the move of M and the load of Y. */
	static struct jitdump jd_store;
	struct jitdump *jd = NULL;
	uint64_t m_index = 0;
	if (o.jitdump_dir) {
		jd = &jd_store;
		jd_open(jd, o.jitdump_dir);
		for (int k = 0; k < FN_COUNT; k++)
			if (map_name[k])
				jd_load(jd, &c, k);
		if (o.move)
			m_index = jd_load(jd, &c, FN_M);
		if (o.reuse)
			jd_load(jd, &c, FN_X);
		if (o.tramp) {
			jd_load(jd, &c, FN_T);
			jd_load(jd, &c, FN_U);
		}
	}

	printf("pid %ld\nbase 0x%llx\n", (long)getpid(), (unsigned long long)c.rt);
	static const char letters[] = "ABCDEFGHNR";
	for (int k = 0; k < FN_COUNT; k++)
		print_fn(&c, (const char[]){letters[k], 0}, k, "");
	if (o.move)
		print_fn(&c, "M", FN_M, "");
	if (o.reuse)
		print_fn(&c, "X", FN_X, "");
	if (o.tramp) {
		print_fn(&c, "T", FN_T, "");
		print_fn(&c, "U", FN_U, "");
		print_fn(&c, "S", FN_S, " (reached by T's jmp)");
		print_fn(&c, "V", FN_V, " (reached by U's jmp)");
	}
	fflush(stdout);

	jit_fn fr = fn_at(c.mem + OFF_R);
	jit_b = fn_at(c.mem + OFF_B);

	/* A returns what C+4 computes (it ends in a tail jump): 10+9+...+1 = 55 */
	int bad = fr((int)o.reps) != 55 * (int)o.reps;
	/* B(0..3) = 1+4+7+10 */
	if (o.reps && (callback_sum != 22 || tail_hits != (int)o.reps))
		bad = 1;
	/* M(i) = i + 1: 1+...+100 before the move, 1+...+200 after */
	if (o.move && run_move(&c, &o, jd, m_index) != 5050 + 20100)
		bad = 1;
	if (o.reuse && !run_reuse(&c, &o, jd))
		bad = 1;
	if (o.tramp && !run_tramp(&c))
		bad = 1;
	if (jd && fclose(jd->f) != 0) {
		fprintf(stderr, "jitprog: error writing '%s'\n", jd->path);
		bad = 1;
	}
	printf("reps %lu result %s\n", o.reps, bad ? "WRONG" : "ok");
	return bad;
}
