/* jvmti_agent.c - libcgjit-jvmti.so, a JVMTI agent that writes a jitdump (jit-PID.dump) of
 * the JVM's compiled methods and generated code, for `cgjit augment` and `cgjit timeline`.
 * Usage and what it writes: docs/jvmti.md. The pure parts (names, rows, record layout) are
 * in java_names.c and jitdump_writer.c, unit-tested without a JVM.
 *
 * Events: CompiledMethodLoad (CODE_LOAD, preceded by DEBUG_INFO from the inline info),
 * DynamicCodeGenerated (CODE_LOAD), CompiledMethodUnload (counted only: the jitdump format
 * has no unload record; a later CODE_LOAD at the same addresses replaces the freed code for
 * every reader), VMInit (GenerateEvents: code that existed before the events were
 * enabled), VMDeath (CODE_CLOSE). Each event's records are written to the file when the
 * event ends, so that a JVM killed by SIGKILL loses none. Events come on many threads: one
 * mutex guards the writer, and the JVMTI look-ups happen before it is taken.
 *
 * Never harms the JVM: no signal handlers, no executable mapping of the dump (perf's
 * agents map it for `perf record` to notice; valgrind runs do not need that), no abort. On
 * the first error writing, the agent says so once on stderr and writes nothing more; a
 * method whose names cannot be had is skipped and counted. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include "java_names.h"
#include "jitdump_writer.h"

#define BUF_SIZE (256 * 1024)

enum state { OFF, WRITING, FAILED, CLOSED };

/* Read without the lock as a quick test; changed only with the lock held. */
static _Atomic int state = OFF;

static struct {
	pthread_mutex_t lock;
	int fd;
	struct jd_writer w;
	char path[PATH_MAX];
	int verbose;
	uint64_t methods, stubs, unloads, rows, skipped, no_lines;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* printf-checked, which also tells clang's -Wformat-nonliteral that FMT is a format */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cgjit-jvmti: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int sink_fd(void *ctx, const void *data, size_t len)
{
	int fd = *(int *)ctx;
	const char *p = data;
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* With the lock held: after a writer call that returned RC. The first failure stops
 * the writing for good, said once. */
static void check(int rc)
{
	if (rc < 0 && state == WRITING) {
		state = FAILED;
		say("writing %s failed: %s; no more records are written", g.path, strerror(g.w.err));
	}
}

/* With the lock held, at the end of every event that wrote records: they go to the file
 * now, one write() per event (a DEBUG_INFO with its CODE_LOAD together). A JVM killed
 * by SIGKILL, or one that crashes, then loses nothing it reported, however long it runs
 * after its last compilation; the hot methods of a long run are compiled early. The cost
 * is a system call per compiled method or stub (docs/jvmti.md, "Buffering"). */
static void flush_event(void)
{
	if (state == WRITING)
		check(jd_flush(&g.w));
}

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* --- JVMTI helpers: names and line tables --- */

static jvmtiEnv *jvmti;

static void dealloc(void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, p);
}

/* Per event: each distinct method of an nmethod (itself and what it inlined) once. */
struct minfo {
	jmethodID m;
	char *file;              /* package path + SourceFile, or NULL */
	struct jn_line *lines;
	size_t nlines;
};

struct mcache {
	struct minfo *v;
	size_t n, cap;
};

static void minfo_load(struct minfo *mi)
{
	jclass k = NULL;
	char *csig = NULL, *src = NULL;
	jint n = 0;
	jvmtiLineNumberEntry *tab = NULL;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, mi->m, &k) != JVMTI_ERROR_NONE)
		return;
	if ((*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetSourceFileName(jvmti, k, &src) == JVMTI_ERROR_NONE)
		mi->file = jn_source_path(csig, src);
	if (mi->file && (*jvmti)->GetLineNumberTable(jvmti, mi->m, &n, &tab) == JVMTI_ERROR_NONE &&
	    n > 0) {
		mi->lines = malloc((size_t)n * sizeof(*mi->lines));
		if (mi->lines) {
			for (jint i = 0; i < n; i++)
				mi->lines[i] = (struct jn_line){ tab[i].start_location, tab[i].line_number };
			mi->nlines = (size_t)n;
		}
	}
	dealloc(tab);
	dealloc(src);
	dealloc(csig);
}

static struct minfo *minfo_get(struct mcache *c, jmethodID m)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].m == m)
			return &c->v[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct minfo *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	struct minfo *mi = &c->v[c->n++];
	*mi = (struct minfo){ .m = m };
	minfo_load(mi);
	return mi;
}

static void mcache_free(struct mcache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].file);
		free(c->v[i].lines);
	}
	free(c->v);
}

/* The source position of one frame; 0 when it has none. */
static int frame_pos(struct mcache *c, jmethodID m, jlocation bci, const char **file)
{
	struct minfo *mi = minfo_get(c, m);
	if (!mi || !mi->file || !mi->nlines)
		return 0;
	int line = jn_line_at(mi->lines, mi->nlines, bci);
	if (line > 0)
		*file = mi->file;
	return line;
}

static char *method_name(jmethodID m)
{
	jclass k = NULL;
	char *csig = NULL, *name = NULL, *sig = NULL, *out = NULL;
	jboolean native = JNI_FALSE;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
		(*jvmti)->IsMethodNative(jvmti, m, &native);
		out = jn_is_mh_intrinsic(csig, native == JNI_TRUE) ? strdup(JN_MH_INTRINSIC)
								  : jn_method_name(csig, name, sig);
	}
	dealloc(sig);
	dealloc(name);
	dealloc(csig);
	return out;
}

/* The pcs of an nmethod with their innermost frame's position (the innermost frame that
 * has one: a JDK method without line numbers gives way to its caller). */
static size_t inline_pcs(const void *compile_info, struct mcache *c, struct jn_pc **out)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	for (; h; h = h->next) {
		if (h->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
		if (r->numpcs <= 0 || !r->pcinfo)
			return 0;
		struct jn_pc *pcs = malloc((size_t)r->numpcs * sizeof(*pcs));
		if (!pcs)
			return 0;
		for (jint i = 0; i < r->numpcs; i++) {
			const PCStackInfo *p = &r->pcinfo[i];
			pcs[i] = (struct jn_pc){ (uint64_t)(uintptr_t)p->pc, NULL, 0 };
			for (jint f = 0; f < p->numstackframes && !pcs[i].file; f++)
				pcs[i].line = frame_pos(c, p->methods[f], p->bcis[f], &pcs[i].file);
		}
		*out = pcs;
		return (size_t)r->numpcs;
	}
	return 0;
}

/* --- events --- */

static void JNICALL on_compiled_load(jvmtiEnv *env, jmethodID method, jint code_size,
				     const void *code_addr, jint map_length,
				     const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)env;
	if (state != WRITING || code_size <= 0 || !code_addr)
		return;
	uint64_t addr = (uint64_t)(uintptr_t)code_addr, size = (uint64_t)code_size;
	char *name = method_name(method);
	struct mcache c = { 0 };
	struct jn_pc *pcs = NULL;
	size_t npcs = inline_pcs(compile_info, &c, &pcs), nrows = 0;
	int pc_is_end = 1;
	if (!npcs && map && map_length > 0 && (pcs = malloc((size_t)map_length * sizeof(*pcs)))) {
		/* No inline info: the address-location map of the method itself. */
		for (jint i = 0; i < map_length; i++) {
			pcs[i] = (struct jn_pc){ (uint64_t)(uintptr_t)map[i].start_address, NULL, 0 };
			pcs[i].line = frame_pos(&c, method, map[i].location, &pcs[i].file);
		}
		npcs = (size_t)map_length;
		pc_is_end = 0;
	}
	struct jd_row *rows = npcs ? malloc((npcs + 1) * sizeof(*rows)) : NULL;
	if (rows)
		nrows = jn_rows(addr, size, pcs, npcs, pc_is_end, rows);

	pthread_mutex_lock(&g.lock);
	if (state == WRITING) {
		if (!name) {
			g.skipped++;
		} else {
			uint64_t t = now();
			if (nrows) {
				int rc = jd_debug_info(&g.w, t, addr, rows, nrows);
				check(rc);
				if (rc == 0)
					g.rows += nrows;
			} else {
				g.no_lines++;
			}
			check(jd_code_load(&g.w, t, (uint32_t)getpid(), tid(), addr, code_addr, size, name));
			g.methods++;
			flush_event();
		}
	}
	pthread_mutex_unlock(&g.lock);
	free(rows);
	free(pcs);
	mcache_free(&c);
	free(name);
}

static void JNICALL on_compiled_unload(jvmtiEnv *env, jmethodID method, const void *code_addr)
{
	(void)env, (void)method, (void)code_addr;
	pthread_mutex_lock(&g.lock);
	g.unloads++;
	pthread_mutex_unlock(&g.lock);
}

/* Stubs already written, by a hash of address, length and name: GenerateEvents at VMInit
 * reports again every stub announced since the agent was loaded. With the lock held;
 * returns 1 when KEY was there, else adds it and returns 0 (also when it cannot be
 * remembered: the stub is then written, at worst twice, which readers take as a repeat). */
static struct {
	uint64_t *v;
	size_t n, cap;
} seen;

static int seen_before(uint64_t key)
{
	key |= 1;   /* 0 marks a free slot */
	if (2 * (seen.n + 1) > seen.cap) {
		size_t cap = seen.cap ? 2 * seen.cap : 4096;
		uint64_t *v = calloc(cap, sizeof(*v));
		if (!v)
			return 0;
		for (size_t i = 0; i < seen.cap; i++)
			if (seen.v[i])
				for (size_t j = seen.v[i] & (cap - 1);; j = (j + 1) & (cap - 1))
					if (!v[j]) {
						v[j] = seen.v[i];
						break;
					}
		free(seen.v);
		seen.v = v;
		seen.cap = cap;
	}
	for (size_t j = key & (seen.cap - 1);; j = (j + 1) & (seen.cap - 1)) {
		if (seen.v[j] == key)
			return 1;
		if (!seen.v[j]) {
			seen.v[j] = key;
			seen.n++;
			return 0;
		}
	}
}

static uint64_t stub_key(const char *name, uint64_t addr, uint64_t len)
{
	uint64_t h = 1469598103934665603u;   /* FNV-1a */
	for (int i = 0; i < 8; i++)
		h = (h ^ ((addr >> (8 * i)) & 0xff)) * 1099511628211u;
	for (int i = 0; i < 8; i++)
		h = (h ^ ((len >> (8 * i)) & 0xff)) * 1099511628211u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211u;
	return h;
}

static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name, const void *address,
				    jint length)
{
	(void)env;
	if (state != WRITING || length <= 0 || !address)
		return;
	uint64_t addr = (uint64_t)(uintptr_t)address;
	if (!name)
		name = "";
	pthread_mutex_lock(&g.lock);
	if (state == WRITING && !seen_before(stub_key(name, addr, (uint64_t)length))) {
		check(jd_code_load(&g.w, now(), (uint32_t)getpid(), tid(), addr, address,
				   (uint64_t)length, name));
		g.stubs++;
		flush_event();
	}
	pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
	(void)jni, (void)thread;
	/* Code generated before the events were enabled, and methods compiled before VMInit.
	 * A CODE_LOAD repeated for the same code is harmless: readers take the later one. */
	(*env)->GenerateEvents(env, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	(*env)->GenerateEvents(env, JVMTI_EVENT_COMPILED_METHOD_LOAD);
}

static void finish(void)
{
	pthread_mutex_lock(&g.lock);
	if (state == WRITING) {
		check(jd_code_close(&g.w, now()));
		check(jd_flush(&g.w));
		if (state == WRITING) {
			state = CLOSED;
			if (g.verbose)
				say("%s: %llu compiled methods (%llu with line rows, %llu rows), %llu stubs, "
				    "%llu unloads, %llu skipped, %llu bytes", g.path,
				    (unsigned long long)g.methods,
				    (unsigned long long)(g.methods - g.no_lines),
				    (unsigned long long)g.rows, (unsigned long long)g.stubs,
				    (unsigned long long)g.unloads, (unsigned long long)g.skipped,
				    (unsigned long long)g.w.bytes);
		}
	}
	pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
	(void)env, (void)jni;
	finish();
}

/* --- loading --- */

/* Options: "dir=PATH" and "verbose", separated by commas. Returns 0, or -1 (said). */
static int parse_options(const char *opts, char *dir, size_t dirsize)
{
	if (!opts)
		return 0;
	const char *p = opts;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > 4 && strncmp(p, "dir=", 4) == 0) {
			if (n - 4 >= dirsize) {
				say("dir= is too long");
				return -1;
			}
			memcpy(dir, p + 4, n - 4);
			dir[n - 4] = '\0';
		} else if (n == 7 && strncmp(p, "verbose", 7) == 0) {
			g.verbose = 1;
		} else if (n) {
			say("unknown option '%.*s' (options: dir=DIR, verbose)", (int)n, p);
			return -1;
		}
		p += n + (end ? 1 : 0);
	}
	return 0;
}

static int open_dump(const char *dir)
{
	int n = snprintf(g.path, sizeof(g.path), "%s/jit-%ld.dump", dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(g.path)) {
		say("directory name too long: %s", dir);
		return -1;
	}
	/* O_EXCL: a dump left by an earlier process with the same pid is not ours to replace;
	 * 0666 less the umask, as any new file */
	g.fd = open(g.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (g.fd < 0) {
		say("cannot create %s: %s; no jitdump is written", g.path, strerror(errno));
		return -1;
	}
	const char *failed = NULL;
	if (jd_init(&g.w, sink_fd, &g.fd, BUF_SIZE) != 0)
		failed = "out of memory";
	else if (jd_header(&g.w, jd_host_elf_machine(), (uint32_t)getpid(), now()) != 0 ||
		 jd_flush(&g.w) != 0)
		failed = strerror(g.w.err);
	if (failed) {
		/* the file is ours and holds no dump: nothing is left behind */
		say("writing %s failed: %s; no jitdump is written", g.path, failed);
		close(g.fd);
		g.fd = -1;
		unlink(g.path);
		return -1;
	}
	return 0;
}

/* Starts the agent: options, the dump, the capabilities and events. *STARTED is 1 only
 * when this call began writing a dump (the caller may then ask for earlier code). */
static int start(JavaVM *vm, const char *opts, int *started)
{
	*started = 0;
	/* a second -agentpath or an attach to a JVM that has us already: the JVM loads the
	 * library once, so this is the same agent; one dump is enough, and a second start
	 * would reset the writer under the threads using it. This copy takes no JVMTI
	 * environment, enables no event and asks for none. */
	if (state != OFF) {
		say("already loaded; this copy writes nothing");
		return JNI_OK;
	}
	char dir[PATH_MAX] = "";
	if (parse_options(opts, dir, sizeof(dir)) != 0)
		return JNI_ERR;   /* a mistyped option stops the JVM before anything ran */
	if (!*dir) {
		const char *env = getenv("JITDUMPDIR");
		snprintf(dir, sizeof(dir), "%s", env && *env ? env : ".");
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		say("no JVMTI 1.2 environment; no jitdump is written");
		return JNI_OK;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		/* Lines are a bonus: without them the names and code are still written. */
		caps.can_get_line_numbers = caps.can_get_source_file_name = 0;
		if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
			say("the JVM cannot report compiled methods; no jitdump is written");
			return JNI_OK;
		}
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.CompiledMethodLoad = on_compiled_load;
	cb.CompiledMethodUnload = on_compiled_unload;
	cb.DynamicCodeGenerated = on_dynamic_code;
	if (open_dump(dir) != 0)
		return JNI_OK;
	state = WRITING;
	if (g.verbose)
		say("writing %s", g.path);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE) {
		say("cannot set event callbacks; no jitdump is written");
		state = FAILED;
		return JNI_OK;
	}
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
	};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
		    JVMTI_ERROR_NONE)
			say("cannot enable JVMTI event %d; the dump may miss code", (int)events[i]);
	*started = 1;
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved);
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm);

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	int started;
	return start(vm, options, &started);
}

/* Attached to a running JVM: VMInit has passed, so the code so far is asked for here, only
 * by the copy that started the dump (asked again, an agent already writing would write
 * every compiled method a second time). */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	int started;
	jint rc = start(vm, options, &started);
	if (rc == JNI_OK && started && state == WRITING) {
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	}
	return rc;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	finish();   /* when VMDeath did not come (the JVM failed to start) */
	pthread_mutex_lock(&g.lock);
	if (g.fd >= 0) {
		close(g.fd);
		g.fd = -1;
	}
	jd_free(&g.w);
	free(seen.v);
	seen.v = NULL;
	seen.n = seen.cap = 0;
	if (state == WRITING)
		state = CLOSED;
	pthread_mutex_unlock(&g.lock);
}
