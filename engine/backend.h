/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * backend.h - the I/O backend interface under the tswap scheduler.
 *
 * A backend is one kernel async I/O interface (libaio, io_uring, a fake one
 * in the unit tests).  It knows nothing of windows, submit modes or fio: the
 * scheduler (sched.c) decides what to prepare, when to submit and how many
 * completions to wait for, and the backend turns each decision into exactly
 * one system call, so that strace of a run shows the pattern the scheduler
 * chose.
 *
 * One backend context per worker thread: never shared between threads.
 * Blocks are named by a slot number in [0, queue_depth), chosen by the
 * scheduler; a slot is busy from prep() until its completion is reaped.
 *
 * All functions return 0 or a count on success and a negative errno on
 * failure, like the kernel interfaces they wrap.
 */
#ifndef TSWAP_BACKEND_H
#define TSWAP_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum tswap_dir {
	TSWAP_READ = 0,		/* swap-in: file -> memory */
	TSWAP_WRITE = 1,	/* swap-out: memory -> file */
};

/*
 * Limits of the backends, each written only here: options.c takes the
 * options' maxval, their fio --enghelp text "(MIN..MAX)" (which tswap-sweep
 * reads) and their error lines from these.  Plain decimal literals, so that
 * they can be stringified.
 */
#define TSWAP_MAX_QUEUE_DEPTH 2147483647	/* INT_MAX: io_setup(int nr_events) */
#define TSWAP_MAX_URING_DEPTH 32768	/* the kernel's IORING_MAX_ENTRIES */
#define TSWAP_MAX_SQPOLL_IDLE 2147483647	/* ms, INT_MAX */
#define TSWAP_SQPOLL_IDLE_DEFAULT 1000	/* ms, tswap_sqpoll_idle not given */

/* Per-worker backend configuration. */
struct tswap_be_conf {
	unsigned int queue_depth;	/* blocks in flight per context (Q) */
	/* The job's files, for io_uring registered files (index = fidx). */
	const int *fds;
	unsigned int nr_files;
	/* fio's I/O buffer area, for io_uring registered buffers. */
	void *buf_base;
	uint64_t buf_len;
	/* io_uring options (tswap_sqpoll, ...); ignored by libaio. */
	bool sqpoll;
	unsigned int sqpoll_idle_ms;
	bool iopoll;
	bool fixedbufs;
	bool registerfiles;
};

/* One completion: the slot given to prep() and the kernel's result. */
struct tswap_cqe {
	uint32_t slot;
	int64_t res;		/* bytes transferred, or -errno */
};

struct tswap_backend {
	const char *name;

	/*
	 * setup - create one I/O context of conf->queue_depth entries
	 * (io_setup / io_uring_queue_init).  Returns 0 and *ctxp, or -errno.
	 */
	int (*setup)(const struct tswap_be_conf *conf, void **ctxp);

	/*
	 * prep - append one block to the context's pending batch: `len`
	 * bytes at file offset `off` of file `fd` (index `fidx` in
	 * conf->fds), into/from `buf`.  No system call.  The scheduler never
	 * has more than queue_depth slots busy, so this cannot fail.
	 */
	void (*prep)(void *ctx, uint32_t slot, enum tswap_dir dir, int fd,
		     unsigned int fidx, void *buf, uint64_t len, uint64_t off);

	/*
	 * submit - hand the whole pending batch to the kernel in ONE call
	 * (io_submit / io_uring_submit).  Returns the number of blocks
	 * accepted (the rest stay pending, in order, for the next call), or
	 * -errno (-EAGAIN, -EINTR: nothing accepted, try again later).
	 */
	int (*submit)(void *ctx);

	/* pending - blocks prepared but not yet accepted by submit(). */
	unsigned int (*pending)(void *ctx);

	/*
	 * discard - forget every pending block (after submit() failed hard,
	 * e.g. -EINVAL): they are never sent to the kernel and their slots
	 * are free again.  No system call.
	 */
	void (*discard)(void *ctx);

	/*
	 * reap - wait, in ONE call (io_getevents / io_uring_enter), for at
	 * least min_nr and at most max_nr completions, or until *timeout if
	 * not NULL ({0, 0} polls).  Stores them in cqes[] and returns their
	 * number, or -errno (-EINTR: nothing reaped, try again).
	 */
	int (*reap)(void *ctx, unsigned int min_nr, unsigned int max_nr,
		    const struct timespec *timeout, struct tswap_cqe *cqes);

	/*
	 * syscalls - optional: the system calls this context really made to
	 * submit and to wait, when they can differ from the submit() and
	 * reap() calls (io_uring: SQPOLL submits without entering the
	 * kernel, CQEs already posted are reaped without one).  NULL when
	 * every submit() and reap() is one system call (libaio).
	 */
	void (*syscalls)(void *ctx, uint64_t *submits, uint64_t *waits);

	/* teardown - destroy the context; in-flight blocks are waited for. */
	void (*teardown)(void *ctx);
};

extern const struct tswap_backend tswap_be_libaio;
extern const struct tswap_backend tswap_be_uring;

#endif
