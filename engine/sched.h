/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sched.h - the tensor-swap scheduler: partitions, blocks, windows and
 * submit modes over a backend (design.md section 1).
 *
 * The scheduler knows nothing of fio.  Its caller (tswap.c, or the unit
 * tests) queues operations with tswap_sched_queue(), starts them with
 * tswap_sched_kick() (fio's commit), and collects finished operations with
 * tswap_sched_reap() (fio's getevents).
 *
 * Threads: with threads == P > 1, or with handoff, P worker threads each
 * own one backend context and process their part of each operation in FIFO
 * order, one operation at a time, as DeepSpeed's per-thread work queue does
 * (deepspeed_io_handle_t::_schedule_aio_work, deepspeed_aio_thread_t::run;
 * its async_pread/async_pwrite hand even a one-part operation to a thread).
 * With threads == 1 and no handoff the caller's thread is the only worker
 * and all I/O happens inside kick() and reap() (DeepSpeed's synchronous
 * deepspeed_io_handle_t::read/write; fio's libaio engine: no hand-off).
 */
#ifndef TSWAP_SCHED_H
#define TSWAP_SCHED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "backend.h"
#include "stats.h"

enum tswap_submit_mode {
	TSWAP_SUBMIT_BLOCK = 0,	/* all blocks of a round in one call */
	TSWAP_SUBMIT_SINGLE = 1,	/* one block per call */
};

enum tswap_window {
	TSWAP_WINDOW_OVERLAP = 0,	/* keep up to Q in flight, wait for >= 1 */
	TSWAP_WINDOW_SEQUENTIAL = 1,	/* submit n, wait for all n */
};

/* One tensor-swap operation (one fio io_u). */
struct tswap_op {
	/* Set by the caller before tswap_sched_queue(). */
	void *buf;		/* memory of the tensor, DIO-aligned */
	uint64_t offset;	/* file offset, bytes */
	uint64_t len;		/* bytes, len % threads == 0 */
	enum tswap_dir dir;
	int fd;
	unsigned int fidx;	/* index of the file in the job */
	void *user;		/* the caller's (the io_u) */
	unsigned int parts;	/* parts to cut it into, 1..P; 0 = P (the
				 * first `parts` workers take one each) */
	bool measured;		/* counted in the stats (with conf.ramp); false: fio's
				 * ramp_time (see tswap_sched_conf.ramp) */

	/* Results, valid once tswap_sched_reap() returned the operation. */
	int error;		/* first error, positive errno; 0 if none */
	uint64_t done;		/* bytes from the start without a gap:
				 * resid = len - done when error == 0 */

	/* Private to the scheduler. */
	atomic_uint parts_left;
	atomic_int first_error;
	_Atomic uint64_t short_at;	/* lowest offset not transferred */
	uint64_t t_queue_ns;
	uint64_t t_done_ns;
	struct tswap_op *next;
};

struct tswap_sched_conf {
	const struct tswap_backend *be;
	struct tswap_be_conf be_conf;	/* queue_depth is Q */
	uint64_t block_size;		/* B, bytes */
	unsigned int threads;		/* P >= 1 */
	bool handoff;			/* P == 1 too runs on a worker thread */
	enum tswap_submit_mode submit;
	enum tswap_window window;
	unsigned int max_ops;		/* operations queued at once (iodepth) */
	bool timing;			/* measure call latencies (tswap_stats) */
	bool ramp;			/* the first ops may be unmeasured: each
					 * worker counts from its first measured
					 * op on (fio ramp_time) */
};

struct tswap_sched;

/*
 * tswap_sched_create - set up P backend contexts (and P worker threads
 * when P > 1 or handoff).  Returns 0, or -errno with a one-line reason in
 * err.
 */
int tswap_sched_create(const struct tswap_sched_conf *conf,
		       struct tswap_sched **out, char *err, size_t errlen);

/* Append an operation to every worker's FIFO (no I/O yet). */
void tswap_sched_queue(struct tswap_sched *s, struct tswap_op *op);

/*
 * Start queued operations: inline (P == 1, no handoff) submit the first
 * round of the operation at the head of the FIFO; else wake the workers.
 */
void tswap_sched_kick(struct tswap_sched *s);

/*
 * tswap_sched_reap - collect between min and max finished operations into
 * ops[], waiting for them; a non-NULL timeout bounds the wait ({0, 0}:
 * don't wait).  Returns the number collected (may be < min only on
 * timeout) or -errno.
 */
int tswap_sched_reap(struct tswap_sched *s, unsigned int min, unsigned int max,
		     const struct timespec *timeout, struct tswap_op **ops);

/* Operations queued and not yet reaped. */
unsigned int tswap_sched_busy(const struct tswap_sched *s);

/*
 * tswap_sched_quiesce - stop and join the worker threads (each finishes the
 * part it is on); idempotent.  Call before tswap_sched_stats() so that the
 * workers' CPU time is in.
 */
void tswap_sched_quiesce(struct tswap_sched *s);

/*
 * tswap_sched_stats - merge every worker's counters into *out (which must
 * have been tswap_stats_init()ed with the same queue depth).  Call only when
 * no operation is in flight.
 */
void tswap_sched_stats(struct tswap_sched *s, struct tswap_stats *out);

/* Stop the workers (after draining the operation each one is on), join
 * them and tear the backend contexts down. */
void tswap_sched_destroy(struct tswap_sched *s);

#endif
