/* Unit tests for the shared I/O thread (io_pump.c): every unit of work handed over is done,
 * whether the thread polls or sleeps between them (a kick lost between its last look and
 * its sleep leaves a unit undone, which fails the handshake test after 20 s); clients
 * take turns, one unit each; a client that leaves is never stepped again, and leaving waits
 * for its step under way; and augment's shape, a read-ahead and an output buffer on one
 * pump, copies a file byte for byte to a reader slower than the reads. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "callgrind/callgrind_outbuf.h"
#include "core/diag.h"
#include "core/io.h"
#include "core/io_pump.h"
#include "core/readahead.h"
#include "helpers.h"

/* A client whose work is a count of units handed over and done; each unit is logged with
 * its client's tag in a shared order log. */
struct counter {
	atomic_uint given, done;
	atomic_int in_step;
	unsigned step_ns;         /* how long a unit takes */
	char tag;
	char *log;                /* shared by the clients of a test, or NULL */
	atomic_uint *logged;
};

static int counter_step(void *arg)
{
	struct counter *c = arg;
	unsigned done = atomic_load(&c->done);
	if (done == atomic_load(&c->given))
		return 0;
	atomic_store(&c->in_step, 1);
	if (c->step_ns)
		nanosleep(&(struct timespec){ 0, (long)c->step_ns }, NULL);
	if (c->log)
		c->log[atomic_fetch_add(c->logged, 1)] = c->tag;
	atomic_store(&c->in_step, 0);
	atomic_store(&c->done, done + 1);
	return 1;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Waits until C has done N units, polling (NAP 0) or napping between looks; fails after
 * 20 s. */
static void wait_done_nap(struct counter *c, unsigned n, long nap_ns)
{
	double until = now_s() + 20;
	for (unsigned i = 0; atomic_load(&c->done) < n; i++) {
		if (!(i & 1023) && now_s() > until)
			fail_msg("the pump did %u of %u units", atomic_load(&c->done), n);
		if (nap_ns)
			nanosleep(&(struct timespec){ 0, nap_ns }, NULL);
	}
}

static void wait_done(struct counter *c, unsigned n)
{
	wait_done_nap(c, n, 1000);
}

/* Units handed over one at a time, each waited for before the next: the thread goes back
 * to its look for work, or (spin 0, and spin 20 us where the handover is slower than that)
 * to sleep, after every one. The hand-overs come at once after the last unit is seen done
 * (the caller polls), so that a kick often lands while the thread is on its way to sleep:
 * a kick lost there (the sleeping flag read before the count is raised, or the count
 * looked at before the flag is set) leaves a unit undone and fails the wait; and now and
 * then after a pause, so that the thread is asleep. */
static void handoffs(long spin_ns, unsigned n)
{
	struct io_pump *p = io_pump_new(spin_ns);
	struct counter c = { 0 };
	struct io_pump_client *cl = io_pump_join(p, counter_step, &c);
	assert_non_null(cl);
	for (unsigned i = 1; i <= n; i++) {
		atomic_store(&c.given, i);
		io_pump_kick(p);
		if (i % 16 == 0)
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
		wait_done_nap(&c, i, 0);
	}
	io_pump_leave(p, cl);
	io_pump_free(p);
}

static void test_io_pump__every_handoff_done(void **state)
{
	(void)state;
	alarm(120);   /* a hang fails the test */
	handoffs(0, 20000);
	handoffs(20000, 20000);
	handoffs(2000000, 20000);
	alarm(0);
}

/* Two clients with 50 units each, handed over at once: the thread takes one of each in
 * turn (a pump that emptied one client's queue first would write all the output before it
 * read on). */
static void test_io_pump__clients_take_turns(void **state)
{
	(void)state;
	char log[101] = { 0 };
	atomic_uint logged = 0;
	struct counter a = { .tag = 'a', .log = log, .logged = &logged };
	struct counter b = { .tag = 'b', .log = log, .logged = &logged };
	alarm(120);   /* a hang fails the test */
	struct io_pump *p = io_pump_new(2000000);
	struct io_pump_client *ca = io_pump_join(p, counter_step, &a);
	struct io_pump_client *cb = io_pump_join(p, counter_step, &b);
	assert_non_null(ca);
	assert_non_null(cb);
	atomic_store(&b.given, 50);
	atomic_store(&a.given, 50);
	io_pump_kick(p);
	wait_done(&a, 50);
	wait_done(&b, 50);
	io_pump_leave(p, ca);
	io_pump_leave(p, cb);
	io_pump_free(p);
	alarm(0);
	/* a round that came between the two stores may take one of B's alone */
	int repeats = 0;
	for (int i = 1; i < 100; i++)
		repeats += log[i] == log[i - 1];
	if (repeats > 1)
		fail_msg("the clients did not take turns: %s", log);
}

/* A client leaves while its step runs (a unit of 100 ms): io_pump_leave() returns after
 * the step, and later kicks with work still given never step it again. */
static void test_io_pump__leave_waits_for_step(void **state)
{
	(void)state;
	alarm(120);   /* a hang fails the test */
	struct io_pump *p = io_pump_new(2000000);
	struct counter c = { .step_ns = 100000000 };
	struct counter other = { 0 };
	struct io_pump_client *cl = io_pump_join(p, counter_step, &c);
	struct io_pump_client *co = io_pump_join(p, counter_step, &other);
	atomic_store(&c.given, 1000);
	io_pump_kick(p);
	while (!atomic_load(&c.in_step))
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	io_pump_leave(p, cl);
	assert_int_equal(atomic_load(&c.in_step), 0);
	unsigned done = atomic_load(&c.done);
	assert_true(done >= 1 && done < 1000);
	/* the pump still serves the other client, and C no more */
	for (unsigned i = 1; i <= 20; i++) {
		atomic_store(&other.given, i);
		io_pump_kick(p);
		wait_done(&other, i);
	}
	assert_int_equal(atomic_load(&c.done), done);
	io_pump_leave(p, co);
	io_pump_free(p);
	alarm(0);
}

/* A pump never joined starts no thread; one with IO_PUMP_MAX_CLIENTS refuses another;
 * the spin rule: polling only with two CPUs and no quota below two. */
static void test_io_pump__limits(void **state)
{
	(void)state;
	assert_int_equal(io_pump_spin_ns_for(1, -1), 0);
	assert_int_equal(io_pump_spin_ns_for(2, -1), 2000000);
	assert_int_equal(io_pump_spin_ns_for(8, 1.5), 0);
	assert_int_equal(io_pump_spin_ns_for(8, 0.5), 0);
	assert_int_equal(io_pump_spin_ns_for(8, 2), 2000000);
	assert_int_equal(io_pump_spin_ns_for(1, 4), 0);
	io_pump_free(io_pump_new(0));
	io_pump_free(NULL);
	struct io_pump *p = io_pump_new(0);
	struct counter c[IO_PUMP_MAX_CLIENTS + 1];
	struct io_pump_client *cl[IO_PUMP_MAX_CLIENTS];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < IO_PUMP_MAX_CLIENTS; i++)
		assert_non_null(cl[i] = io_pump_join(p, counter_step, &c[i]));
	assert_null(io_pump_join(p, counter_step, &c[IO_PUMP_MAX_CLIENTS]));
	assert_int_equal(io_pump_clients(p), IO_PUMP_MAX_CLIENTS);
	for (int i = 0; i < IO_PUMP_MAX_CLIENTS; i++)
		io_pump_leave(p, cl[i]);
	io_pump_free(p);
	assert_true(io_pump_default_spin_ns() >= 0);
}

/* The byte at offset I of the copy test's file. */
static char pattern(size_t i)
{
	return (char)('a' + (i * 11 + i / 8191) % 26);
}

/* Augment's shape: a file read ahead and written back out through one pump, to a FIFO
 * whose reader (a child) takes 64 KiB every 2 ms, so that the pump's writes wait while
 * reads are due. The reads come back in order and the copy is byte-exact. */
static void copy_through_pump(long spin_ns)
{
	enum { HEAD = 64, CHUNK = 100000 };
	const size_t total = 6u << 20;
	char *s = malloc(total);
	for (size_t i = 0; i < total; i++)
		s[i] = pattern(i);
	char *src = tmp_file_n(s, total), *dir = tmp_dir(), fifo[256], copy[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(120);   /* a hang fails the test */
	pid_t pid = spawn_slow_fifo_reader(fifo, copy);
	assert_true(pid > 0);
	struct diag d = { 0 };
	struct io_pump *p = io_pump_new(spin_ns);
	struct input *in = input_open(src, &d);
	struct output *o = output_open(fifo, &d);
	assert_non_null(in);
	assert_non_null(o);
	struct cg_outbuf b;
	cg_outbuf_init(&b, o);
	cg_outbuf_share_pump(&b, p);
	struct readahead *ra = readahead_start(in, HEAD, CHUNK, p);
	assert_non_null(ra);
	for (int i = 0; i < 3; i++)
		readahead_give(ra, malloc(HEAD + CHUNK + 1), HEAD + CHUNK + 1);
	size_t at = 0;
	for (;;) {
		char *buf;
		size_t cap;
		ssize_t r = readahead_take(ra, &buf, &cap, &d);
		assert_true(r >= 0);
		if (r == 0) {
			free(buf);
			break;
		}
		assert_memory_equal(buf + HEAD, s + at, (size_t)r);
		cg_outbuf_put(&b, buf + HEAD, (size_t)r);
		cg_outbuf_maybe_flush(&b);
		at += (size_t)r;
		readahead_give(ra, buf, cap);
	}
	assert_int_equal(at, total);
	readahead_stop(ra);
	assert_true(b.flusher.client != NULL);   /* the pump wrote, not a thread of B's own */
	assert_int_equal(cg_outbuf_flush(&b, &d), 0);
	cg_outbuf_free(&b);
	io_pump_free(p);
	assert_int_equal(output_commit(o, &d), 0);
	input_close(in);
	assert_int_equal(child_exit_status(pid), 0);
	alarm(0);
	size_t got, bad = copy_mismatches(copy, pattern, &got);
	assert_int_equal(got, total);
	assert_int_equal(bad, 0);
	unlink(copy);
	unlink(fifo);
	rmdir(dir);
	unlink(src);
	free(src);
	free(dir);
	free(s);
}

static void test_io_pump__read_ahead_and_write_on_one_pump(void **state)
{
	(void)state;
	copy_through_pump(2000000);
	copy_through_pump(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_pump__every_handoff_done),
		cmocka_unit_test(test_io_pump__clients_take_turns),
		cmocka_unit_test(test_io_pump__leave_waits_for_step),
		cmocka_unit_test(test_io_pump__limits),
		cmocka_unit_test(test_io_pump__read_ahead_and_write_on_one_pump),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
