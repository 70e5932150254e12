/* io_pump.c - the helper thread shared by several streams' reads and writes (io_pump.h). */
#define _GNU_SOURCE   /* sched_getaffinity(), CPU_COUNT() */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/io_pump.h"
#include "core/quiet_thread.h"
#include "core/xalloc.h"

struct io_pump_client {
	int (*step)(void *ctx);
	void *ctx;
};

struct io_pump {
	long spin_ns;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;      /* the thread, asleep for work */
	pthread_cond_t idle;      /* a client leaving, for the thread's steps to end */
	struct io_pump_client *clients[IO_PUMP_MAX_CLIENTS];
	int nclients;
	int started, stop;
	int stepping;             /* the thread is calling steps of the clients it copied */
	unsigned long rounds;     /* rounds of steps ended */
	/* Kicks counted, so that the thread sees a kick that came while it looked for work. */
	atomic_uint kicks;
	/* The thread is asleep or about to be: a kick then takes the lock and signals. */
	atomic_int sleeping;
};

long io_pump_spin_ns_for(int cpus, double quota)
{
	return cpus >= 2 && (quota < 0 || quota >= 2) ? 2000000 : 0;
}

/* The CPUs that FILE's "QUOTA PERIOD" allow (cgroup v2's cpu.max: "max" is none), or -1. */
static double quota_of_cpu_max(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	char q[32];
	long long period;
	double r = -1;
	if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max") && period > 0)
		r = atof(q) / (double)period;
	fclose(f);
	return r;
}

/* The same of cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us in DIR (-1: none). */
static double quota_of_cfs(const char *dir)
{
	char file[4300];
	long long quota = -1, period = 0;
	snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &quota) != 1)
		quota = -1;
	fclose(f);
	snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
	if (!(f = fopen(file, "r")))
		return -1;
	if (fscanf(f, "%lld", &period) != 1)
		period = 0;
	fclose(f);
	return quota > 0 && period > 0 ? (double)quota / (double)period : -1;
}

/* The least CPU quota of this process's cgroup and its ancestors, in CPUs, or -1 for none
 * found: a container may see two CPUs and be allowed the time of one. Read as
 * /proc/self/cgroup names the cgroups, under /sys/fs/cgroup (v2: cpu.max; v1: the cpu
 * controller's cfs files). */
static double cgroup_cpu_quota(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	double least = -1;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		int v2 = !*ctl, v1 = 0;
		char *save = NULL;
		for (char *t = strtok_r(ctl, ",", &save); t; t = strtok_r(NULL, ",", &save))
			v1 |= !strcmp(t, "cpu");
		if (!v1 && !v2)
			continue;
		/* the cgroup and each ancestor: a limit above applies below */
		size_t len = strlen(path);
		while (len > 0 && path[len - 1] == '/')
			len--;
		for (;;) {
			char dir[4200];
			double q = -1;
			if (v2) {
				snprintf(dir, sizeof(dir), "/sys/fs/cgroup%.*s/cpu.max", (int)len, path);
				q = quota_of_cpu_max(dir);
			} else {
				snprintf(dir, sizeof(dir), "/sys/fs/cgroup/cpu%.*s", (int)len, path);
				q = quota_of_cfs(dir);
			}
			if (q >= 0 && (least < 0 || q < least))
				least = q;
			while (len > 0 && path[len - 1] != '/')
				len--;
			if (len == 0)
				break;
			len--;   /* the '/' before the last name: "" is the root */
		}
	}
	fclose(f);
	return least;
}

long io_pump_default_spin_ns(void)
{
	cpu_set_t set;
	int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	return io_pump_spin_ns_for(cpus, cpus >= 2 ? cgroup_cpu_quota() : -1);
}

int io_pump_clients(struct io_pump *p)
{
	pthread_mutex_lock(&p->mu);
	int n = p->nclients;
	pthread_mutex_unlock(&p->mu);
	return n;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Waits for a kick after SEEN: polls up to the spin time, then sleeps. Returns 0, or -1 if
 * the pump stops. */
static int wait_for_kick(struct io_pump *p, unsigned seen)
{
	if (p->spin_ns > 0) {
		long long until = now_ns() + p->spin_ns;
		for (unsigned i = 1;; i++) {
			if (atomic_load_explicit(&p->kicks, memory_order_acquire) != seen)
				return 0;
			cpu_relax();
			/* the clock every 256 pauses, each some 40 to 140 cycles */
			if (!(i & 255) && now_ns() > until)
				break;
		}
	}
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->sleeping, 1);
	/* sequentially consistent with io_pump_kick(): either it sees SLEEPING, or this sees
	 * its kick */
	while (atomic_load(&p->kicks) == seen && !p->stop)
		pthread_cond_wait(&p->wake, &p->mu);
	atomic_store(&p->sleeping, 0);
	int stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	return stop ? -1 : 0;
}

static void *pump_main(void *arg)
{
	struct io_pump *p = arg;
	for (;;) {
		unsigned seen = atomic_load(&p->kicks);
		struct io_pump_client *c[IO_PUMP_MAX_CLIENTS];
		pthread_mutex_lock(&p->mu);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		int n = p->nclients;
		for (int i = 0; i < n; i++)
			c[i] = p->clients[i];
		p->stepping = 1;
		pthread_mutex_unlock(&p->mu);
		int worked = 0;
		for (int i = 0; i < n; i++)
			worked |= c[i]->step(c[i]->ctx);
		pthread_mutex_lock(&p->mu);
		p->stepping = 0;
		p->rounds++;
		pthread_cond_broadcast(&p->idle);
		pthread_mutex_unlock(&p->mu);
		/* after work, look again at once: a step does one unit, more may be waiting */
		if (!worked && wait_for_kick(p, seen) < 0)
			break;
	}
	return NULL;
}

struct io_pump *io_pump_new(long spin_ns)
{
	struct io_pump *p = xcalloc(1, sizeof(*p));
	p->spin_ns = spin_ns;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->idle, NULL);
	atomic_init(&p->kicks, 0);
	atomic_init(&p->sleeping, 0);
	return p;
}

void io_pump_free(struct io_pump *p)
{
	if (!p)
		return;
	if (p->nclients)
		abort();   /* the caller's error: a client's step would run on freed memory */
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->mu);
		atomic_fetch_add(&p->kicks, 1);   /* a thread polling looks at STOP now */
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->idle);
	free(p);
}

struct io_pump_client *io_pump_join(struct io_pump *p, int (*step)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&p->mu);
	if (p->nclients == IO_PUMP_MAX_CLIENTS) {
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	if (!p->started) {
		static const int own[] = { SIGPIPE, SIGXFSZ, SIGTTIN };
		if (quiet_thread_start(&p->thread, pump_main, p, own,
				       sizeof(own) / sizeof(own[0])) < 0) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		p->started = 1;
	}
	struct io_pump_client *c = xmalloc(sizeof(*c));
	c->step = step;
	c->ctx = ctx;
	p->clients[p->nclients++] = c;
	pthread_mutex_unlock(&p->mu);
	io_pump_kick(p);
	return c;
}

void io_pump_kick(struct io_pump *p)
{
	atomic_fetch_add(&p->kicks, 1);
	if (atomic_load(&p->sleeping)) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->mu);
	}
}

void io_pump_leave(struct io_pump *p, struct io_pump_client *c)
{
	pthread_mutex_lock(&p->mu);
	for (int i = 0; i < p->nclients; i++)
		if (p->clients[i] == c) {
			p->clients[i] = p->clients[--p->nclients];
			break;
		}
	/* the thread may hold a copy of the list with C in it until its round ends; the
	 * rounds after it have none */
	if (p->stepping)
		for (unsigned long r = p->rounds; p->rounds == r;)
			pthread_cond_wait(&p->idle, &p->mu);
	pthread_mutex_unlock(&p->mu);
	free(c);
}
