/* quiet_thread.h - starting a helper thread that leaves the process's signals alone.
 * The signals sent to the process are the main thread's to handle (output.c puts outputs
 * back, tempfiles.c removes temporaries): a helper thread starts with them blocked. */
#ifndef CGJIT_QUIET_THREAD_H
#define CGJIT_QUIET_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* Starts MAIN(ARG) in *T with every signal blocked but faults (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL) and the N signals in OWN, those its own system calls raise. Returns 0, or -1 if
 * no thread can be started. */
int quiet_thread_start(pthread_t *t, void *(*main)(void *), void *arg, const int *own, size_t n);

#endif
