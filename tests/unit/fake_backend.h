/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fake_backend.h - a scripted, recording backend for the scheduler tests.
 *
 * `fake_backend` implements struct tswap_backend without any I/O.  All its
 * contexts share one global, mutex-protected record and script, so a test
 * sets up faults before tswap_sched_create() and inspects what every worker
 * did after tswap_sched_destroy() (which joins the workers).
 *
 * Completion model: a block accepted by submit() completes at once, in
 * submit order, with res = len unless a fault is scripted for its file
 * offset.  reap() returns min(max_nr, completed-not-reaped) completions
 * (fewer with fake_set_reap_limit(), never fewer than min_nr).  It never
 * blocks: a reap() without timeout that asks for more completions than are
 * in flight is a scheduler bug, which fails the test.
 *
 * The fake also checks, on every call: slots in range and not reused while
 * busy, never more than queue_depth blocks busy (pending + in flight),
 * buffers inside conf->buf_base and inside the buffer of the operation
 * that owns the file range (fake_add_op()), one operation at a time per
 * context in FIFO order, and every context torn down exactly once with
 * nothing left prepared (in-flight blocks are allowed: teardown waits).
 * A violation seen on the test's main thread fails the test at once; one
 * seen on a worker thread is recorded and reported by fake_assert_clean()
 * (or, when the worker could only hang, printed before the process exits
 * non-zero).
 */
#ifndef TSWAP_FAKE_BACKEND_H
#define TSWAP_FAKE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "sched.h"

#define FAKE_MAX_CTX 16
#define FAKE_MAX_OPS 64
#define FAKE_MAX_SCRIPT 32
#define FAKE_MAX_FAULTS 32
#define FAKE_ANY_CTX (-1)

extern const struct tswap_backend fake_backend;

/* One block, as accepted by submit(). */
struct fake_block {
	uint64_t off;
	uint64_t len;
	void *buf;
	enum tswap_dir dir;
	int fd;
	unsigned int fidx;
	uint32_t slot;
	int op;			/* index from fake_add_op(), -1 if none */
	unsigned int submit;	/* index of the submit call that took it */
	int64_t res;		/* result it completed with */
	bool reaped;
};

/* One submit() call. */
struct fake_submit {
	unsigned int seq;		/* position among this ctx's calls */
	unsigned int pending;		/* pending() when called */
	unsigned int inflight_before;
	unsigned int inflight_after;
	int ret;			/* accepted count or -errno */
};

/* One reap() call. */
struct fake_reap {
	unsigned int seq;
	unsigned int min_nr;
	unsigned int max_nr;
	unsigned int inflight;		/* in flight when called */
	unsigned int pending;		/* pending when called */
	bool timeout;			/* a timeout was given */
	int ret;			/* completions returned or -errno */
};

/* Everything one context saw, in call order. */
struct fake_ctx_rec {
	unsigned int id;		/* order of setup() */
	unsigned int queue_depth;
	bool torn_down;
	unsigned int nsubmit;
	struct fake_submit *submits;
	unsigned int nreap;
	struct fake_reap *reaps;
	unsigned int nblock;		/* blocks accepted, in submit order */
	struct fake_block *blocks;
	unsigned int nprep;		/* prep() calls */
	unsigned int max_inflight;	/* accepted and not reaped */
	unsigned int max_busy;		/* pending + in flight */
	unsigned int ncalls;		/* submit + reap calls */
	unsigned int main_calls;	/* prep + submit + reap calls made on
					 * the test's main thread */
	unsigned int ndiscard;		/* discard() calls */
	unsigned int discarded;		/* blocks they dropped */
	unsigned int inflight_at_teardown;
};

/* Forget all records, scripts and ops; the caller becomes the main thread. */
void fake_reset(void);

/*
 * Register an operation (before queueing it) so the fake can check that
 * every block lies inside it with buf - op->buf == off - op->offset.
 * Returns its index (the FIFO order the scheduler must follow).
 */
int fake_add_op(const struct tswap_op *op);

/*
 * The block starting at file offset `off` (any fd) completes with `res`
 * (-errno, or a short byte count) instead of its length.
 */
void fake_fault_block(uint64_t off, int64_t res);

/*
 * Context `ctx`'s (FAKE_ANY_CTX: every context's) `nth` submit() call,
 * counted from 1, returns `ret`: a negative errno (nothing accepted), or
 * accepts only min(ret, pending) blocks when ret >= 0.
 */
void fake_script_submit(int ctx, unsigned int nth, int ret);

/* The same for reap(): `ret` must be a negative errno (e.g. -EINTR). */
void fake_script_reap(int ctx, unsigned int nth, int ret);

/* The `nth` setup() call (counted from 1, over all contexts) fails. */
void fake_fail_setup(unsigned int nth, int err);

/* Each reap() returns at most max(min_nr, limit) completions; 0: no limit. */
void fake_set_reap_limit(unsigned int limit);

/* Records; valid once the scheduler is destroyed (or idle). */
unsigned int fake_nctx(void);
const struct fake_ctx_rec *fake_ctx(unsigned int i);
unsigned int fake_setup_calls(void);
unsigned int fake_live_ctx(void);	/* set up and not torn down */

/* Violations recorded so far, and a cmocka check that there are none. */
unsigned int fake_nviolations(void);
const char *fake_violation(unsigned int i);
void fake_assert_clean(void);

#endif
