// SPDX-License-Identifier: GPL-2.0-only
/*
 * sched.c - tensor-swap scheduler (see sched.h and design.md section 1).
 *
 * Each worker owns one backend context, a FIFO of operations and the state
 * of the part it is on.  The window loop is DeepSpeed's
 * do_aio_operation_sequential / do_aio_operation_overlap, written as steps
 * so that the same code runs inline in fio's job thread (P == 1 without
 * handoff) and in worker threads (P > 1, or handoff):
 *
 *   submit_round()  prepares and submits what the window allows,
 *   reap_once()     is one wait call with the window's min_nr / max_nr,
 *   finish_part()   hands the part back; the last part completes the op.
 *
 * Hot path: no allocation, no lock but the completion list (one per op,
 * and only with worker threads: inline, everything runs in the caller's
 * thread).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "plan.h"
#include "sched.h"

/* How long io_submit may keep answering EAGAIN with nothing in flight. */
#define TSWAP_EAGAIN_LIMIT_NS (30ull * 1000000000ull)
#define TSWAP_EAGAIN_SLEEP_US 100

struct slot {
	struct tswap_op *op;
	uint64_t rel;		/* block offset from the op's start */
	uint64_t len;
};

struct worker {
	struct tswap_sched *s;
	unsigned int idx;
	void *ctx;		/* backend context */

	/* FIFO of operations: single producer (caller), single consumer. */
	struct tswap_op **fifo;
	unsigned int fifo_mask;
	_Atomic unsigned int fifo_head;
	_Atomic unsigned int fifo_tail;

	/* The part being worked on. */
	struct tswap_op *cur;
	uint64_t part_off;
	uint64_t part_len;
	uint64_t nblocks;
	uint64_t next;		/* next block to prepare */
	uint64_t short_at;	/* lowest op-relative byte not transferred */
	unsigned int inflight;	/* accepted by the kernel, not reaped */
	int err;		/* first error of the part, positive errno */
	bool broken;		/* the context failed a wait: no more I/O */

	/* Slots: free stack, and prepared-not-accepted slots in order. */
	struct slot *slots;
	uint32_t *free_slots;
	unsigned int nfree;
	uint32_t *pend_slots;
	unsigned int npend;
	struct tswap_cqe *cqes;

	struct tswap_stats st;
	/*
	 * With conf.ramp, st counts from the first measured op this worker
	 * started (begin_measuring); what the backend and the kernel count
	 * from the start (system calls, thread CPU) is taken then as a base.
	 */
	bool measuring;
	uint64_t base_submits, base_waits;
	uint64_t base_usr_ns, base_sys_ns;

	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct tswap_sched {
	struct tswap_sched_conf conf;
	const struct tswap_backend *be;
	unsigned int nworkers;
	struct worker *w;
	bool threaded;
	_Atomic bool stop;

	/* Completed operations, in completion order. */
	pthread_mutex_t done_mu;
	pthread_cond_t done_cv;
	struct tswap_op *done_head;
	struct tswap_op *done_tail;
	unsigned int ndone;
	bool reaper_waiting;

	unsigned int busy;	/* queued, not reaped (caller thread only) */
	struct tswap_stats op_stats;	/* op latency (caller thread only) */
};

/* --- FIFO ----------------------------------------------------------------- */

static void fifo_push(struct worker *w, struct tswap_op *op)
{
	unsigned int t = atomic_load_explicit(&w->fifo_tail, memory_order_relaxed);

	w->fifo[t & w->fifo_mask] = op;
	atomic_store_explicit(&w->fifo_tail, t + 1, memory_order_release);
}

static bool fifo_empty(struct worker *w)
{
	return atomic_load_explicit(&w->fifo_head, memory_order_relaxed) ==
	       atomic_load_explicit(&w->fifo_tail, memory_order_acquire);
}

static struct tswap_op *fifo_pop(struct worker *w)
{
	unsigned int h = atomic_load_explicit(&w->fifo_head, memory_order_relaxed);
	struct tswap_op *op;

	if (h == atomic_load_explicit(&w->fifo_tail, memory_order_acquire))
		return NULL;
	op = w->fifo[h & w->fifo_mask];
	atomic_store_explicit(&w->fifo_head, h + 1, memory_order_release);
	return op;
}

/* --- completion ----------------------------------------------------------- */

/* The completion list is shared only with worker threads. */
static void done_lock(struct tswap_sched *s)
{
	if (s->threaded)
		pthread_mutex_lock(&s->done_mu);
}

static void done_unlock(struct tswap_sched *s)
{
	if (s->threaded)
		pthread_mutex_unlock(&s->done_mu);
}

static void complete_op(struct tswap_sched *s, struct tswap_op *op)
{
	bool wake;

	op->error = atomic_load(&op->first_error);
	op->done = atomic_load(&op->short_at);
	if (s->conf.timing)
		op->t_done_ns = tswap_now_ns();
	op->next = NULL;

	done_lock(s);
	if (s->done_tail)
		s->done_tail->next = op;
	else
		s->done_head = op;
	s->done_tail = op;
	s->ndone++;
	wake = s->reaper_waiting;
	done_unlock(s);
	/*
	 * Signal after unlocking, so the reaper does not wake up only to
	 * block on done_mu; it was registered on done_cv before it let go
	 * of done_mu, so the signal is not lost.
	 */
	if (wake)
		pthread_cond_signal(&s->done_cv);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/*
 * The first measured op (fio's ramp_time is over): forget what the ramp's
 * ops cost.  Ops reach a worker in queue order and the worker runs one
 * part at a time, so every block and call before this point belongs to
 * the ramp and every one after it to the measured ops.  The worker is the
 * only writer of w->st: no race with the job thread, which reads it only
 * after tswap_sched_quiesce().
 */
static void begin_measuring(struct worker *w)
{
	const struct tswap_backend *be = w->s->be;
	struct rusage ru;

	tswap_stats_reset(&w->st);
	if (be->syscalls && w->ctx)
		be->syscalls(w->ctx, &w->base_submits, &w->base_waits);
	if (w->s->threaded && !getrusage(RUSAGE_THREAD, &ru)) {
		w->base_usr_ns = tv_ns(&ru.ru_utime);
		w->base_sys_ns = tv_ns(&ru.ru_stime);
	}
	w->measuring = true;
}

/* The backend's system call counts (absolute), less the ramp's. */
static void worker_syscalls(struct worker *w)
{
	const struct tswap_backend *be = w->s->be;
	uint64_t sub = 0, wait = 0;

	if (!be->syscalls || !w->ctx)
		return;
	be->syscalls(w->ctx, &sub, &wait);
	w->st.submit_calls = sub - w->base_submits;
	w->st.wait_calls = wait - w->base_waits;
}

static void start_part(struct worker *w, struct tswap_op *op)
{
	unsigned int P = op->parts;	/* set by tswap_sched_queue() */

	if (!w->measuring && op->measured)
		begin_measuring(w);
	w->cur = op;
	w->part_len = tswap_part_len(op->len, P);
	w->part_off = tswap_part_off(op->len, P, w->idx);
	w->nblocks = tswap_nblocks(w->part_len, w->s->conf.block_size);
	w->next = 0;
	w->err = w->broken ? EIO : 0;
	w->short_at = UINT64_MAX;
}

static void finish_part(struct worker *w)
{
	struct tswap_op *op = w->cur;
	uint64_t cur;

	if (w->err) {
		int zero = 0;

		atomic_compare_exchange_strong(&op->first_error, &zero, w->err);
	}
	if (w->short_at != UINT64_MAX) {
		cur = atomic_load(&op->short_at);
		while (w->short_at < cur &&
		       !atomic_compare_exchange_weak(&op->short_at, &cur, w->short_at))
			;
	}
	w->st.parts++;
	w->cur = NULL;
	if (atomic_fetch_sub(&op->parts_left, 1) == 1)
		complete_op(w->s, op);
}

static bool part_finished(const struct worker *w)
{
	return w->cur && !w->inflight && !w->npend &&
	       (w->next == w->nblocks || w->err);
}

/* --- submit ----------------------------------------------------------------- */

static void prep_block(struct worker *w)
{
	struct tswap_op *op = w->cur;
	uint64_t k = w->next++;
	uint64_t rel = w->part_off + k * w->s->conf.block_size;
	uint64_t len = tswap_block_len(w->part_len, w->s->conf.block_size, k);
	uint32_t slot = w->free_slots[--w->nfree];

	w->slots[slot].op = op;
	w->slots[slot].rel = rel;
	w->slots[slot].len = len;
	w->pend_slots[w->npend++] = slot;
	w->s->be->prep(w->ctx, slot, op->dir, op->fd, op->fidx,
		       (char *)op->buf + rel, len, op->offset + rel);
}

static void discard_pending(struct worker *w)
{
	w->s->be->discard(w->ctx);
	while (w->npend)
		w->free_slots[w->nfree++] = w->pend_slots[--w->npend];
}

/*
 * Hand every prepared block to the kernel, one backend call at a time.
 * Returns 0 when all were accepted, -EAGAIN when the kernel wants
 * completions reaped first (blocks stay prepared), or a hard -errno (the
 * prepared blocks are discarded and w->err set).
 */
static int flush_pending(struct worker *w)
{
	const struct tswap_backend *be = w->s->be;
	bool timing = w->s->conf.timing;
	uint64_t eagain_since = 0, t0 = 0;
	int ret;

	while (w->npend) {
		if (timing)
			t0 = tswap_now_ns();
		ret = be->submit(w->ctx);
		w->st.submit_calls++;
		if (timing)
			tswap_lat_add(&w->st.submit_lat, tswap_now_ns() - t0);
		if (ret > 0) {
			unsigned int n = (unsigned int)ret;

			w->npend -= n;
			memmove(w->pend_slots, w->pend_slots + n,
				w->npend * sizeof(*w->pend_slots));
			w->inflight += n;
			w->st.blocks_per_submit[n]++;
			w->st.inflight_at_submit[w->inflight]++;
			eagain_since = 0;
			continue;
		}
		w->st.blocks_per_submit[0]++;
		if (ret == -EINTR)
			continue;
		if (ret == -EAGAIN || ret == 0) {
			w->st.submit_eagain++;
			if (w->inflight)
				return -EAGAIN;
			/* Nothing to reap: the kernel is short of resources. */
			if (!eagain_since) {
				eagain_since = tswap_now_ns();
			} else if (tswap_now_ns() - eagain_since > TSWAP_EAGAIN_LIMIT_NS) {
				ret = -EAGAIN;
				goto hard;
			}
			usleep(TSWAP_EAGAIN_SLEEP_US);
			continue;
		}
hard:
		if (!w->err)
			w->err = -ret;
		discard_pending(w);
		return ret;
	}
	return 0;
}

/* Prepare and submit what the window allows now. */
static void submit_round(struct worker *w)
{
	struct tswap_sched *s = w->s;
	unsigned int Q = s->conf.be_conf.queue_depth;
	uint64_t left, n, i;

	if (w->npend && flush_pending(w))	/* left over from an EAGAIN */
		return;
	if (w->err || w->next == w->nblocks)
		return;
	if (s->conf.window == TSWAP_WINDOW_SEQUENTIAL && w->inflight)
		return;		/* the whole batch first */

	left = w->nblocks - w->next;
	n = Q - w->inflight;
	if (n > left)
		n = left;
	for (i = 0; i < n; i++) {
		prep_block(w);
		if (s->conf.submit == TSWAP_SUBMIT_SINGLE && flush_pending(w))
			return;
	}
	flush_pending(w);
}

/* --- reap ------------------------------------------------------------------- */

static void complete_block(struct worker *w, const struct tswap_cqe *c)
{
	struct slot *sl = &w->slots[c->slot];

	w->st.blocks++;
	if (c->res == (int64_t)sl->len) {
		w->st.bytes += sl->len;
	} else if (c->res < 0 || c->res > (int64_t)sl->len) {
		/* More than asked for is as wrong as an error (fio's libaio
		 * engine says the same). */
		w->st.block_errors++;
		if (!w->err)
			w->err = c->res < 0 ? (int)-c->res : EIO;
	} else {
		/* Short transfer: never taken as success (DeepSpeed #1070). */
		w->st.short_blocks++;
		w->st.bytes += (uint64_t)c->res;
		if (sl->rel + (uint64_t)c->res < w->short_at)
			w->short_at = sl->rel + (uint64_t)c->res;
	}
	sl->op = NULL;
	w->free_slots[w->nfree++] = c->slot;
}

/*
 * One wait call with the window's bounds: sequential waits for the rest of
 * the batch (min_nr == max_nr), overlap for at least one.  Returns the
 * number reaped, 0 on timeout or EINTR, or a hard -errno.
 */
static int reap_once(struct worker *w, const struct timespec *timeout)
{
	struct tswap_sched *s = w->s;
	unsigned int min_nr, i;
	uint64_t t0 = 0;
	int ret;

	min_nr = s->conf.window == TSWAP_WINDOW_SEQUENTIAL ? w->inflight : 1;
	if (timeout && !timeout->tv_sec && !timeout->tv_nsec)
		min_nr = 0;
	if (s->conf.timing)
		t0 = tswap_now_ns();
	ret = s->be->reap(w->ctx, min_nr, w->inflight, timeout, w->cqes);
	w->st.wait_calls++;
	if (s->conf.timing)
		tswap_lat_add(&w->st.wait_lat, tswap_now_ns() - t0);
	if (ret == -EINTR || ret == -ETIME)
		return 0;
	if (ret < 0) {
		/*
		 * The context cannot tell us about its blocks any more: fail
		 * the part, forget what is in flight (teardown waits for it)
		 * and refuse further I/O on this worker.
		 */
		if (!w->err)
			w->err = -ret;
		w->broken = true;
		w->inflight = 0;
		discard_pending(w);
		return ret;
	}
	if ((unsigned int)ret > w->inflight)
		ret = (int)w->inflight;	/* a backend bug must not corrupt us */
	for (i = 0; i < (unsigned int)ret; i++)
		complete_block(w, &w->cqes[i]);
	w->inflight -= (unsigned int)ret;
	return ret;
}

/*
 * Make progress on this worker: start the next op if idle, submit, and
 * (when `wait`) wait once.  Returns false when there is nothing to do.
 */
static bool worker_step(struct worker *w, bool wait, const struct timespec *timeout)
{
	struct tswap_op *op;

	for (;;) {
		if (!w->cur) {
			op = fifo_pop(w);
			if (!op)
				return false;
			start_part(w, op);
		}
		submit_round(w);
		if (part_finished(w)) {
			finish_part(w);
			continue;	/* on to the next op, if any */
		}
		if (wait && w->inflight) {
			reap_once(w, timeout);
			if (part_finished(w)) {
				finish_part(w);
				/* Start the next op before returning. */
				if (!fifo_empty(w))
					continue;
			}
		}
		return true;
	}
}

/* --- worker threads (P > 1, or handoff) ------------------------------------- */

/*
 * Destroy the worker's I/O context, after taking the system call counts
 * that live in it.  Worker threads do this themselves as they exit, so
 * that P contexts go down in parallel: io_destroy() waits for an RCU grace
 * period (about 30 ms here), which one after another in the job thread
 * made a 1024-thread job take 36 s to exit.
 */
static void worker_release_ctx(struct worker *w)
{
	const struct tswap_backend *be;

	if (!w->ctx)
		return;
	be = w->s->be;
	worker_syscalls(w);
	be->teardown(w->ctx);	/* waits for what is in flight */
	w->ctx = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tswap_sched *s = w->s;
	struct rusage ru;

	for (;;) {
		if (!w->cur && fifo_empty(w)) {
			pthread_mutex_lock(&w->mu);
			while (fifo_empty(w) && !atomic_load(&s->stop))
				pthread_cond_wait(&w->cv, &w->mu);
			pthread_mutex_unlock(&w->mu);
			if (fifo_empty(w) && atomic_load(&s->stop))
				break;
		}
		/* Runs the current part to completion (blocking waits). */
		while (worker_step(w, true, NULL) && w->cur)
			;
		if (atomic_load(&s->stop) && !w->cur)
			break;
	}
	worker_release_ctx(w);
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		w->st.worker_usr_ns = tv_ns(&ru.ru_utime) - w->base_usr_ns;
		w->st.worker_sys_ns = tv_ns(&ru.ru_stime) - w->base_sys_ns;
	}
	return NULL;
}

/* --- public ------------------------------------------------------------------ */

void tswap_sched_queue(struct tswap_sched *s, struct tswap_op *op)
{
	unsigned int i, n = op->parts;

	if (!n || n > s->nworkers)
		n = s->nworkers;
	op->parts = n;
	op->error = 0;
	op->done = 0;
	atomic_store_explicit(&op->parts_left, n, memory_order_relaxed);
	atomic_store_explicit(&op->first_error, 0, memory_order_relaxed);
	atomic_store_explicit(&op->short_at, op->len, memory_order_relaxed);
	if (s->conf.timing)
		op->t_queue_ns = tswap_now_ns();
	for (i = 0; i < n; i++)
		fifo_push(&s->w[i], op);
	s->busy++;
}

void tswap_sched_kick(struct tswap_sched *s)
{
	unsigned int i;

	if (!s->threaded) {
		worker_step(&s->w[0], false, NULL);
		return;
	}
	for (i = 0; i < s->nworkers; i++) {
		/*
		 * The empty critical section orders the push before a worker's
		 * last look at its FIFO, or after it waits on cv; signalling
		 * outside it spares the woken worker a wait for mu.
		 */
		pthread_mutex_lock(&s->w[i].mu);
		pthread_mutex_unlock(&s->w[i].mu);
		pthread_cond_signal(&s->w[i].cv);
	}
}

/* Move up to max completed ops into ops[]; caller holds done_lock(). */
static unsigned int take_done(struct tswap_sched *s, unsigned int max,
			      struct tswap_op **ops)
{
	unsigned int n = 0;
	struct tswap_op *op;

	while (n < max && s->done_head) {
		op = s->done_head;
		s->done_head = op->next;
		if (!s->done_head)
			s->done_tail = NULL;
		s->ndone--;
		ops[n++] = op;
		if (s->conf.timing && (op->measured || !s->conf.ramp))
			tswap_lat_add(&s->op_stats.op_lat, op->t_done_ns - op->t_queue_ns);
	}
	return n;
}

static void deadline_from(struct timespec *dl, const struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, dl);
	dl->tv_sec += t->tv_sec;
	dl->tv_nsec += t->tv_nsec;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

int tswap_sched_reap(struct tswap_sched *s, unsigned int min, unsigned int max,
		     const struct timespec *timeout, struct tswap_op **ops)
{
	static const struct timespec poll = { 0, 0 };
	bool nowait = timeout && !timeout->tv_sec && !timeout->tv_nsec;
	struct timespec dl;
	unsigned int n;
	int ret = 0;

	if (min > max)
		min = max;
	if (min > s->busy)
		min = s->busy;	/* never wait for what was not queued */

	done_lock(s);
	n = take_done(s, max, ops);
	done_unlock(s);

	if (!s->threaded) {
		struct worker *w = &s->w[0];
		struct timespec now;
		bool more;

		if (timeout && !nowait)
			deadline_from(&dl, timeout);
		while (n < min || (!n && nowait)) {
			more = worker_step(w, true, nowait ? &poll : timeout);
			n += take_done(s, max - n, ops + n);	/* our thread only */
			if (!more || nowait)
				break;
			if (timeout) {
				clock_gettime(CLOCK_MONOTONIC, &now);
				if (now.tv_sec > dl.tv_sec ||
				    (now.tv_sec == dl.tv_sec && now.tv_nsec >= dl.tv_nsec))
					break;
			}
		}
		s->busy -= n;
		return (int)n;
	}

	if (n < min) {
		if (timeout)
			deadline_from(&dl, timeout);
		pthread_mutex_lock(&s->done_mu);
		while (n < min) {
			n += take_done(s, max - n, ops + n);
			if (n >= min)
				break;
			s->reaper_waiting = true;
			if (timeout)
				ret = pthread_cond_timedwait(&s->done_cv, &s->done_mu, &dl);
			else
				ret = pthread_cond_wait(&s->done_cv, &s->done_mu);
			s->reaper_waiting = false;
			if (ret == ETIMEDOUT) {
				n += take_done(s, max - n, ops + n);
				break;
			}
		}
		pthread_mutex_unlock(&s->done_mu);
	}
	s->busy -= n;
	return (int)n;
}

unsigned int tswap_sched_busy(const struct tswap_sched *s)
{
	return s->busy;
}

void tswap_sched_stats(struct tswap_sched *s, struct tswap_stats *out)
{
	unsigned int i;

	for (i = 0; i < s->nworkers; i++) {
		struct worker *w = &s->w[i];

		/* A worker that never started a measured op worked only
		 * during fio's ramp_time. */
		if (!w->measuring)
			continue;
		/* Count system calls, not backend calls, where they differ. */
		worker_syscalls(w);
		tswap_stats_merge(out, &w->st);
	}
	tswap_stats_merge(out, &s->op_stats);
}

static void worker_free(struct worker *w)
{
	worker_release_ctx(w);
	tswap_stats_free(&w->st);
	free(w->fifo);
	free(w->slots);
	free(w->free_slots);
	free(w->pend_slots);
	free(w->cqes);
}

void tswap_sched_quiesce(struct tswap_sched *s)
{
	unsigned int i;

	atomic_store(&s->stop, true);
	/* Wake them all first: they drain and tear down in parallel. */
	for (i = 0; i < s->nworkers; i++) {
		struct worker *w = &s->w[i];

		if (!w->started)
			continue;
		pthread_mutex_lock(&w->mu);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (i = 0; i < s->nworkers; i++) {
		struct worker *w = &s->w[i];

		if (!w->started)
			continue;
		pthread_join(w->thread, NULL);
		w->started = false;
	}
}

void tswap_sched_destroy(struct tswap_sched *s)
{
	unsigned int i;

	if (!s)
		return;
	tswap_sched_quiesce(s);
	/* Inline worker: drain the part it is on before its buffers go. */
	if (!s->threaded && s->nworkers && s->w[0].cur) {
		struct worker *w = &s->w[0];

		while (w->cur && (w->inflight || w->npend) && !w->broken)
			if (reap_once(w, NULL) < 0)
				break;
	}
	for (i = 0; i < s->nworkers; i++) {
		worker_free(&s->w[i]);
		pthread_mutex_destroy(&s->w[i].mu);
		pthread_cond_destroy(&s->w[i].cv);
	}
	tswap_stats_free(&s->op_stats);
	pthread_mutex_destroy(&s->done_mu);
	pthread_cond_destroy(&s->done_cv);
	free(s->w);
	free(s);
}

static int worker_init(struct tswap_sched *s, struct worker *w, unsigned int idx,
		       char *err, size_t errlen)
{
	unsigned int Q = s->conf.be_conf.queue_depth, size = 2, i;
	int ret;

	w->s = s;
	w->idx = idx;
	w->measuring = !s->conf.ramp;
	while (size <= s->conf.max_ops)
		size <<= 1;
	w->fifo = calloc(size, sizeof(*w->fifo));
	w->fifo_mask = size - 1;
	w->slots = calloc(Q, sizeof(*w->slots));
	w->free_slots = calloc(Q, sizeof(*w->free_slots));
	w->pend_slots = calloc(Q, sizeof(*w->pend_slots));
	w->cqes = calloc(Q, sizeof(*w->cqes));
	if (!w->fifo || !w->slots || !w->free_slots || !w->pend_slots || !w->cqes ||
	    tswap_stats_init(&w->st, Q)) {
		snprintf(err, errlen, "out of memory for worker %u", idx);
		return -ENOMEM;
	}
	for (i = 0; i < Q; i++)
		w->free_slots[i] = Q - 1 - i;
	w->nfree = Q;

	ret = s->be->setup(&s->conf.be_conf, &w->ctx);
	if (ret < 0) {
		w->ctx = NULL;
		snprintf(err, errlen, "%s context %u of %u (queue depth %u): %s",
			 s->be->name, idx + 1, s->nworkers, Q, strerror(-ret));
		return ret;
	}
	return 0;
}

int tswap_sched_create(const struct tswap_sched_conf *conf,
		       struct tswap_sched **out, char *err, size_t errlen)
{
	struct tswap_sched *s;
	pthread_condattr_t ca;
	unsigned int i;
	int ret;

	*out = NULL;
	if (!conf->threads || !conf->be_conf.queue_depth || !conf->block_size ||
	    !conf->max_ops) {
		snprintf(err, errlen, "threads, queue depth, block size and max ops must be > 0");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->conf = *conf;
	s->be = conf->be;
	s->nworkers = conf->threads;
	/*
	 * DeepSpeed's handle always runs an async operation on its worker
	 * threads, one per intra-op part, even when there is one
	 * (deepspeed_io_handle_t::pread/pwrite -> _schedule_aio_work ->
	 * deepspeed_aio_thread_t::run); handoff models that for P == 1.
	 */
	s->threaded = conf->threads > 1 || conf->handoff;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->done_mu, NULL);
	pthread_cond_init(&s->done_cv, &ca);
	s->w = calloc(s->nworkers, sizeof(*s->w));
	if (!s->w)
		s->nworkers = 0;
	if (!s->w || tswap_stats_init(&s->op_stats, conf->be_conf.queue_depth)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < s->nworkers; i++) {
		pthread_mutex_init(&s->w[i].mu, NULL);
		pthread_cond_init(&s->w[i].cv, NULL);
	}
	for (i = 0; i < s->nworkers; i++) {
		ret = worker_init(s, &s->w[i], i, err, errlen);
		if (ret)
			goto fail;
	}
	for (i = 0; s->threaded && i < s->nworkers; i++) {
		ret = -pthread_create(&s->w[i].thread, NULL, worker_main, &s->w[i]);
		if (ret) {
			snprintf(err, errlen, "cannot start worker thread %u: %s", i + 1,
				 strerror(-ret));
			goto fail;
		}
		s->w[i].started = true;
	}
	pthread_condattr_destroy(&ca);
	*out = s;
	return 0;
fail:
	pthread_condattr_destroy(&ca);
	tswap_sched_destroy(s);
	return ret;
}
