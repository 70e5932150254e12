/* tempfiles.h - the temporary files of a run's outputs: created under a name that says
 * whose they are (DIR/.cgjit-tmp.PID.XXXXXX) and locked while written, kept in a table
 * that exit() and the fatal signals (HUP INT QUIT TERM PIPE ALRM USR1 USR2 XCPU XFSZ
 * VTALRM PROF POLL PWR STKFLT, unless inherited as ignored or handled) empty by removing
 * every file in it, and removed by a later run when their process died (tempfiles.c,
 * "stale temporaries"). Used by output.c only. The table is changed by one thread; the writer's
 * flusher thread (callgrind_outbuf.c) starts with these signals blocked, so a handler only
 * ever runs in the thread that holds them (tempfiles_hold() blocks them there). */
#ifndef CGJIT_TEMPFILES_H
#define CGJIT_TEMPFILES_H

#include <signal.h>
#include <stddef.h>

/* The bytes of a temporary's name beside DEST (a path), with room for the ".old" that
 * output.c adds for the old file it keeps aside. */
size_t tempfiles_name_size(const char *dest);
/* Creates a new temporary file in DEST's directory, after removing the stale ones there
 * (once per directory and run): its name goes into NAME (SIZE bytes, at least
 * tempfiles_name_size(DEST)), it is opened O_EXCL|O_NOFOLLOW with mode 0666 (minus the
 * umask) and locked with flock(), and NAME is added to the table: NAME is borrowed, and
 * must stay at that address until tempfiles_forget(NAME). The first call installs the
 * signal handlers and the atexit() handler. Returns the descriptor, or -1 with errno set
 * (NAME then holds the last name tried and is not in the table). */
int tempfiles_create(const char *dest, char *name, size_t size);
/* Takes NAME (the pointer given to tempfiles_create) out of the table: the file was
 * renamed or removed. Call with the signals held. */
void tempfiles_forget(const char *name);
/* Blocks the signals whose handler is ours (*OLD: the mask before), so that the table and
 * the files named in it can change together. */
void tempfiles_hold(sigset_t *old);
/* Restores the mask of tempfiles_hold(): a signal that arrived meanwhile is delivered. */
void tempfiles_release(const sigset_t *old);
/* 1 if one of the signals whose handler is ours is waiting (held) to be delivered. */
int tempfiles_signal_waiting(void);

#endif
