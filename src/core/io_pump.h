/* io_pump.h - one helper thread that does the reads and writes of several streams and
 * polls for the next one, a while, before it sleeps.
 * Why: on a VM (the development machine's two vCPUs) waking a thread that sleeps on the
 * other CPU costs the waker 21 to 27 us, and augment's main thread woke its read-ahead and
 * output threads about 600 times a run, each time it handed one of them a buffer: 10 to 66
 * ms of a 0.36 to 0.5 s run (README, "Performance", the tenth session). A pump that is
 * polling is handed work under the stream's own lock, which it does not take while it
 * polls, and a raised counter: no system call. It is woken only after it has been idle
 * for its spin time. One thread for both streams, not two that poll: two
 * polling helpers and the main thread are three runnable threads on two CPUs, and the main
 * thread then shares its CPU (README, "Tried and not kept", the ninth session).
 * A client is a step function that does one unit of work if it has one (a read into a
 * buffer given, a write of a buffer filled), without waiting for work, and returns 1, else 0.
 * The pump calls its clients' steps in turn, one unit each, so a read never waits for more
 * than one write. A client leaving waits for its step to return: a read that can block for
 * ever (from a pipe whose writer stays) does not belong on a shared pump, as its reader
 * could not stop. A write to a pipe or terminal may block as long as its reader does not
 * read, and the reads wait behind it; the writer waits for its writes at the end anyway.
 * Owns the thread; the clients own their state. */
#ifndef CGJIT_IO_PUMP_H
#define CGJIT_IO_PUMP_H

struct io_pump;
struct io_pump_client;

/* The spin time that suits this process: 2 ms when it may run on two CPUs or more (longer
 * than the main thread's gaps between buffers on the bench profile, about 1 ms), else 0: on
 * one CPU a polling pump takes the time of the thread it waits for. The CPUs are those of
 * its affinity mask, and a cgroup's CPU quota below two (cgroup v2's cpu.max, v1's cfs
 * quota, of its cgroup or an ancestor) counts as one. */
long io_pump_default_spin_ns(void);
/* The rule of io_pump_default_spin_ns() for CPUS in the mask and a QUOTA in CPUs (-1:
 * none). */
long io_pump_spin_ns_for(int cpus, double quota);
/* How many clients P has (for tests). */
int io_pump_clients(struct io_pump *p);
/* A pump that polls for SPIN_NS nanoseconds before it sleeps (0: it sleeps at once). The
 * thread starts with the first client. */
struct io_pump *io_pump_new(long spin_ns);
/* Stops the thread; every client must have left. NULL is a no-op. */
void io_pump_free(struct io_pump *p);
/* Adds a client whose STEP(CTX) the thread calls from now on. Returns NULL if the thread
 * cannot be started or the pump has IO_PUMP_MAX_CLIENTS already (the caller then makes a
 * thread of its own). The thread has the process's signals blocked but those a read or
 * write raises (SIGPIPE, SIGXFSZ, SIGTTIN: quiet_thread.h). */
enum { IO_PUMP_MAX_CLIENTS = 4 };
struct io_pump_client *io_pump_join(struct io_pump *p, int (*step)(void *ctx), void *ctx);
/* Tells the thread that a client may have work: after it is made visible to the step. */
void io_pump_kick(struct io_pump *p);
/* Removes C: when this returns, its step is not running and is never called again. */
void io_pump_leave(struct io_pump *p, struct io_pump_client *c);

#endif
