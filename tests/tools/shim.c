// SPDX-License-Identifier: GPL-2.0-only
/*
 * shim.c - a test tool, LD_PRELOADed into fio by tests/faults-sys.bats, for
 * the faults the kernel will not produce on demand.  Never installed,
 * never loaded outside the tests.
 *
 * It wraps the library calls tswap.so makes (libaio's io_submit and
 * io_getevents, liburing's io_uring_submit) and, when asked through the
 * environment, answers some of them with an error instead of calling the
 * real function (so nothing is submitted or reaped by that call):
 *
 *   TSWAP_SHIM_IO_SUBMIT_EAGAIN=K       every K-th io_submit: -EAGAIN
 *   TSWAP_SHIM_IO_GETEVENTS_EINTR=K     every K-th io_getevents: -EINTR
 *   TSWAP_SHIM_URING_SUBMIT_EAGAIN=K    every K-th io_uring_submit: -EAGAIN
 *
 * (real EAGAIN from io_submit needs the kernel out of request memory;
 * EINTR needs a signal landing inside the wait).  Calls are counted per
 * process.  With TSWAP_SHIM_LOG=FILE every injected error appends one
 * line "PID CALL ERROR" to FILE, so a test can tell that the fault really
 * happened (fio's job processes leave with _exit: no destructor runs).
 *
 * Build: cc -shared -fPIC shim.c -ldl -Wl,--no-as-needed -laio -luring (linking both
 * libraries puts them after the shim in the global scope, where
 * dlsym(RTLD_NEXT) finds the real functions even though fio loads them
 * only later, with the engine, through dlopen).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <libaio.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

enum { SUBMIT, GETEVENTS, URING_SUBMIT, NCALLS };

static const char *const env_names[NCALLS] = {
	"TSWAP_SHIM_IO_SUBMIT_EAGAIN",
	"TSWAP_SHIM_IO_GETEVENTS_EINTR",
	"TSWAP_SHIM_URING_SUBMIT_EAGAIN",
};
static const char *const labels[NCALLS] = {
	"io_submit EAGAIN", "io_getevents EINTR", "io_uring_submit EAGAIN",
};

static atomic_ulong calls[NCALLS];

static void log_injection(int which)
{
	const char *path = getenv("TSWAP_SHIM_LOG");
	char line[96];
	int fd, n;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), labels[which]);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		n = -1;
	close(fd);
}

/* Whether this call (counted) is one to fail. */
static int inject(int which)
{
	const char *v = getenv(env_names[which]);
	unsigned long k = v ? strtoul(v, NULL, 10) : 0, n;

	n = atomic_fetch_add(&calls[which], 1) + 1;
	if (!k || n % k)
		return 0;
	log_injection(which);
	return 1;
}

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "tswap-shim: cannot find %s: %s\n", name, dlerror());
		abort();
	}
	return f;
}

int io_submit(io_context_t ctx, long nr, struct iocb **iocbs)
{
	static int (*fn)(io_context_t, long, struct iocb **);

	if (inject(SUBMIT))
		return -EAGAIN;
	if (!fn)
		fn = real("io_submit");
	return fn(ctx, nr, iocbs);
}

int io_getevents(io_context_t ctx, long min_nr, long nr,
		 struct io_event *events, struct timespec *timeout)
{
	static int (*fn)(io_context_t, long, long, struct io_event *,
			 struct timespec *);

	if (inject(GETEVENTS))
		return -EINTR;
	if (!fn)
		fn = real("io_getevents");
	return fn(ctx, min_nr, nr, events, timeout);
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*fn)(struct io_uring *);

	if (inject(URING_SUBMIT))
		return -EAGAIN;
	if (!fn)
		fn = real("io_uring_submit");
	return fn(ring);
}
