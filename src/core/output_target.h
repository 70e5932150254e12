/* output_target.h - where an output path leads, decided before anything is opened: stdout,
 * a process's descriptor (/dev/stdout, /dev/fd/N), a device or FIFO written in place, or a
 * regular file (new or replaced), reached through its symbolic links, which are followed
 * one at a time and refused when another user planted them in a shared directory
 * (output_target.c, "shared directories"). Used by output.c. */
#ifndef CGJIT_OUTPUT_TARGET_H
#define CGJIT_OUTPUT_TARGET_H

#include <sys/stat.h>

struct diag;

enum output_kind { OUT_STDOUT, OUT_FD, OUT_DEVICE, OUT_FILE };

struct output_target {
	enum output_kind kind;
	char *path;          /* OUT_FILE: the destination; OUT_FD, OUT_DEVICE: what to open */
	long fd_pid;         /* OUT_FD: the process, and its descriptor */
	int fd_num;
	int exists;          /* OUT_FILE: a regular file is there */
	struct stat st;      /* OUT_FILE that exists, OUT_DEVICE: what lstat() said */
};

/* Follows PATH ("-" is stdout, "" an error) one symbolic link at a time: lstat() says what
 * is there, readlink() where a link goes, realpath() of each directory whether it is a
 * descriptor directory. Returns 0 with T filled (T->path malloc'd, the caller's to free;
 * NULL for stdout), or -1 with D set ("PATH: is a directory, expected a file"). */
int output_target_resolve(const char *path, struct output_target *t, struct diag *d);

#endif
