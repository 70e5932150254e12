/* io.c - input by magic (plain | zstd | stdin) and atomic output (temp file, rename).
 * The temporary file's name is also kept in a signal-safe slot so that SIGINT/SIGTERM
 * remove it before the process dies (nothing partial is ever left under any name). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "io_zstd.h"
#include "xalloc.h"

struct input {
	char *name;
	int fd;
	int own_fd;
	const unsigned char *mem;    /* input_open_mem: the bytes and how many are left */
	size_t mem_left;
	struct zstd_in *z;
	unsigned char prefix[4];
	size_t prefix_len, prefix_pos;
};

static ssize_t read_fd(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

struct input *input_open(const char *path, struct diag *d)
{
	int fd = 0;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			diag_at(d, path, 0, "cannot open: %s", strerror(errno));
			return NULL;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			diag_at(d, path, 0, "is a directory, expected a file");
			return NULL;
		}
	}
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(path, strlen(path));
	in->fd = fd;
	in->own_fd = fd != 0;
	/* Read up to 4 bytes to look for the zstd magic; short inputs are plain. */
	while (in->prefix_len < 4) {
		ssize_t r = read_fd(fd, in->prefix + in->prefix_len, 4 - in->prefix_len);
		if (r < 0) {
			diag_at(d, path, 0, "read error: %s", strerror(errno));
			input_close(in);
			return NULL;
		}
		if (r == 0)
			break;
		in->prefix_len += (size_t)r;
	}
	if (in->prefix_len == 4 && zstd_is_magic(in->prefix)) {
		in->z = zstd_in_new(fd, in->prefix, 4, in->name);
		if (!in->z) {
			diag_at(d, path, 0, "cannot create a zstd decompression context");
			input_close(in);
			return NULL;
		}
		in->prefix_len = 0;
	}
	return in;
}


struct input *input_open_mem(const void *data, size_t n, const char *name)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->name = xstrndup(name, strlen(name));
	in->fd = -1;
	in->mem = data;
	in->mem_left = n;
	if (n >= 4 && zstd_is_magic(data)) {
		/* zstd reads from a descriptor: hand it the bytes through a pipe-free path by
		 * giving the whole buffer as the prefix. */
		in->z = zstd_in_new(-1, data, n, in->name);
		in->mem_left = 0;
	}
	return in;
}

ssize_t input_read(struct input *in, void *buf, size_t n, struct diag *d)
{
	if (in->mem && !in->z) {
		size_t k = n < in->mem_left ? n : in->mem_left;
		memcpy(buf, in->mem, k);
		in->mem += k;
		in->mem_left -= k;
		return (ssize_t)k;
	}
	if (in->z)
		return zstd_in_read(in->z, buf, n, d);
	if (in->prefix_pos < in->prefix_len) {
		size_t k = in->prefix_len - in->prefix_pos;
		if (k > n)
			k = n;
		memcpy(buf, in->prefix + in->prefix_pos, k);
		in->prefix_pos += k;
		return (ssize_t)k;
	}
	ssize_t r = read_fd(in->fd, buf, n);
	if (r < 0)
		return diag_at(d, in->name, 0, "read error: %s", strerror(errno));
	return r;
}

const char *input_name(const struct input *in)
{
	return in->name;
}

int input_is_zstd(const struct input *in)
{
	return in->z != NULL;
}

void input_close(struct input *in)
{
	if (!in)
		return;
	zstd_in_free(in->z);
	if (in->own_fd)
		close(in->fd);
	free(in->name);
	free(in);
}

/* ---- output ---- */

struct output {
	char *final;       /* NULL for stdout and devices */
	char *tmp;
	char *name;        /* a device's path, for messages */
	int fd;
	int own_fd;        /* a device opened here */
	struct zstd_out *z;
};

static const char *output_name(const struct output *o)
{
	return o->final ? o->final : o->name ? o->name : "<stdout>";
}

/* Temporary files not yet renamed, kept in signal-safe slots so that SIGINT/SIGTERM/SIGHUP
 * remove them before the process dies. A run has a few at most (profile, ELF files, stats);
 * beyond the slots a file is still removed on every path but a signal. */
enum { TMP_SLOTS = 64 };
static char pending_tmp[TMP_SLOTS][4096];
static volatile sig_atomic_t pending_set[TMP_SLOTS];

static void on_signal(int sig)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (pending_set[i])
			unlink(pending_tmp[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void track_tmp(const char *path, int on)
{
	static int installed;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		installed = 1;
	}
	if (strlen(path) >= sizeof(pending_tmp[0]))
		return;
	for (int i = 0; i < TMP_SLOTS; i++) {
		if (on && !pending_set[i]) {
			strcpy(pending_tmp[i], path);
			pending_set[i] = 1;
			return;
		}
		if (!on && pending_set[i] && strcmp(pending_tmp[i], path) == 0) {
			pending_set[i] = 0;
			return;
		}
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

struct output *output_open(const char *path, struct diag *d)
{
	struct output *o = xcalloc(1, sizeof(*o));
	struct stat st;
	if (strcmp(path, "-") == 0) {
		o->fd = 1;
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or pipe (/dev/null, a FIFO): written in place, never replaced by
		 * a rename. Nothing partial can be avoided there, as with stdout. */
		o->fd = open(path, O_WRONLY);
		if (o->fd < 0) {
			diag_at(d, path, 0, "cannot open for writing: %s", strerror(errno));
			free(o);
			return NULL;
		}
		o->own_fd = 1;
		o->name = xstrndup(path, strlen(path));
	} else {
		o->final = xstrndup(path, strlen(path));
		size_t n = strlen(path);
		o->tmp = xmalloc(n + 16);
		/* Same directory as the destination, so rename() is atomic. The name does not
		 * start with the destination's, so kcachegrind's prefix loading never sees it. */
		const char *slash = strrchr(path, '/');
		size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
		memcpy(o->tmp, path, dirlen);
		sprintf(o->tmp + dirlen, ".cgjit-tmp.XXXXXX");
		o->fd = mkstemp(o->tmp);
		if (o->fd < 0) {
			diag_at(d, path, 0, "cannot create a temporary file in its directory: %s",
				strerror(errno));
			free(o->final);
			free(o->tmp);
			free(o);
			return NULL;
		}
		fchmod(o->fd, 0644 & ~(mode_t)0);
		track_tmp(o->tmp, 1);
	}
	if (ends_with(path, ".zst")) {
		o->z = zstd_out_new(o->fd, output_name(o));
		if (!o->z) {
			diag_at(d, path, 0, "cannot create a zstd compression context");
			output_abort(o);
			return NULL;
		}
	}
	return o;
}

int output_write(struct output *o, const void *p, size_t n, struct diag *d)
{
	const char *name = output_name(o);
	if (o->z)
		return zstd_out_write(o->z, p, n, d);
	return write_all(o->fd, p, n, name, d);
}

/* Forgets O's temporary file (renamed or removed by now) and frees O. */
static void output_free(struct output *o)
{
	if (o->tmp)
		track_tmp(o->tmp, 0);
	zstd_out_free(o->z);
	free(o->final);
	free(o->tmp);
	free(o->name);
	free(o);
}

int output_commit(struct output *o, struct diag *d)
{
	const char *name = output_name(o);
	int rc = 0;
	if (o->z && zstd_out_finish(o->z, d) < 0)
		rc = -1;
	if (rc == 0 && o->final && fsync(o->fd) < 0 && errno != EINVAL)
		rc = diag_at(d, name, 0, "write error: %s", strerror(errno));
	if ((o->final || o->own_fd) && close(o->fd) < 0 && rc == 0)
		rc = diag_at(d, name, 0, "write error: %s", strerror(errno));
	o->fd = -1;
	if (rc == 0 && o->final && rename(o->tmp, o->final) < 0)
		rc = diag_at(d, name, 0, "cannot rename the temporary file into place: %s",
			     strerror(errno));
	if (rc < 0 && o->tmp)
		unlink(o->tmp);
	output_free(o);
	return rc;
}

void output_abort(struct output *o)
{
	if (!o)
		return;
	if ((o->final || o->own_fd) && o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	output_free(o);
}
