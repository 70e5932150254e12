/* quiet_thread.c - helper threads with the process's signals blocked (quiet_thread.h). */
#include <signal.h>

#include "core/quiet_thread.h"

int quiet_thread_start(pthread_t *t, void *(*main)(void *), void *arg, const int *own, size_t n)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	sigset_t all, old;
	sigfillset(&all);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&all, faults[i]);
	for (size_t i = 0; i < n; i++)
		sigdelset(&all, own[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, main, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
}
