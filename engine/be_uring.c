/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * be_uring.c - io_uring backend (liburing), behind backend.h.
 *
 * One ring per worker thread, SQ sized from the queue depth Q (the kernel
 * rounds it up to a power of two; the CQ is twice that), so that the at most
 * Q blocks the scheduler keeps busy always find an SQE and a CQE slot.
 *
 * Every scheduler decision is one liburing call, so strace of a run shows
 * the pattern:
 *
 *   prep()    io_uring_get_sqe + io_uring_prep_read/write (_fixed): no
 *             system call, the SQE waits in the SQ ring;
 *   submit()  one io_uring_submit: one io_uring_enter(to_submit = all
 *             pending SQEs, min_complete = 0) - or, with SQPOLL, none at all
 *             while the kernel's SQ thread is awake;
 *   reap()    first take the CQEs already posted in the CQ ring
 *             (io_uring_peek_batch_cqe + io_uring_cq_advance, no system
 *             call); if fewer than min_nr, one io_uring_wait_cqes:
 *             io_uring_enter(to_submit = 0, min_complete = min_nr - got,
 *             GETEVENTS), then take what it made available.
 *
 * Options (struct tswap_be_conf): sqpoll (IORING_SETUP_SQPOLL,
 * sq_thread_idle = sqpoll_idle_ms), iopoll (IORING_SETUP_IOPOLL),
 * fixedbufs (fio's I/O buffer area registered once per ring,
 * IORING_OP_READ_FIXED / WRITE_FIXED), registerfiles (the job's fds
 * registered, IOSQE_FIXED_FILE).
 *
 * Nothing on the hot path allocates: the CQE pointer array used for batch
 * reaping is allocated in setup().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "backend.h"

/*
 * The kernel refuses to register a single buffer larger than 1 GiB
 * (io_buffer_validate()).  A larger fio buffer area is registered as
 * overlapping 1 GiB windows every 512 MiB, so that any block of up to
 * 512 MiB lies entirely inside window (offset / 512 MiB); a block that fits
 * in no window (only possible with blocks above 512 MiB in an area above
 * 1 GiB) falls back to a plain, unregistered read/write.
 */
#define URING_BUF_MAX		(1ull << 30)
#define URING_BUF_STRIDE	(URING_BUF_MAX / 2)

struct uring_ctx {
	struct io_uring ring;
	struct io_uring_cqe **cqes;	/* batch of peeked CQEs, nr_cqes long */
	unsigned int nr_cqes;
	unsigned int pending;		/* prepared, not accepted by submit() */
	unsigned int inflight;		/* accepted, completion not reaped */
	/* io_uring_enter calls made to submit / to wait (for the stats). */
	uint64_t submit_enters;
	uint64_t wait_enters;
	bool sqpoll;
	bool iopoll;
	bool fixedbufs;
	bool registerfiles;
	unsigned int nr_files;
	char *buf_base;			/* registered area (fixedbufs) */
	unsigned int nr_bufs;		/* registered windows */
	struct iovec *bufs;
};

/* Ring flags the backend would like but can live without. */
#define URING_OPTIONAL_FLAGS	IORING_SETUP_SUBMIT_ALL

/*
 * Whether the block device under `fd` (the device itself, or the one
 * holding the file) polls: its queue/io_poll in sysfs, read from the device
 * or, for a partition, its parent.  1 yes, 0 no, -1 cannot tell (e.g. a
 * filesystem without a single backing device).
 */
static int uring_dev_polls(int fd)
{
	static const char *const fmt[] = {
		"/sys/dev/block/%u:%u/queue/io_poll",
		"/sys/dev/block/%u:%u/../queue/io_poll",
	};
	char path[64], c;
	struct stat st;
	unsigned int i;
	dev_t dev;
	int sfd;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -1;
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(path, sizeof(path), fmt[i], major(dev), minor(dev));
		sfd = open(path, O_RDONLY | O_CLOEXEC);
		if (sfd < 0)
			continue;
		n = read(sfd, &c, 1);
		close(sfd);
		if (n == 1)
			return c != '0';
	}
	return -1;
}

/*
 * IOPOLL completes I/O only by polling the device's poll queues.  On a
 * device without them the kernel fails reads (and some writes) with
 * -EOPNOTSUPP per CQE or busy-polls an interrupt-driven queue: refuse it at
 * setup instead, with -EOPNOTSUPP.
 */
static int uring_check_iopoll(const struct tswap_be_conf *conf)
{
	unsigned int i;

	for (i = 0; conf->fds && i < conf->nr_files; i++) {
		if (conf->fds[i] >= 0 && uring_dev_polls(conf->fds[i]) == 0)
			return -EOPNOTSUPP;
	}
	return 0;
}

static int uring_init_ring(struct uring_ctx *ctx,
			   const struct tswap_be_conf *conf)
{
	struct io_uring_params p;
	unsigned int optional = URING_OPTIONAL_FLAGS;
	int ret;

	for (;;) {
		memset(&p, 0, sizeof(p));
		/*
		 * SUBMIT_ALL: a block that fails at submission (e.g. a bad
		 * fd) still gets its CQE, and the rest of the batch is
		 * submitted in the same io_uring_enter.
		 */
		p.flags = optional;
		if (conf->sqpoll) {
			p.flags |= IORING_SETUP_SQPOLL;
			p.sq_thread_idle = conf->sqpoll_idle_ms;
		}
		if (conf->iopoll)
			p.flags |= IORING_SETUP_IOPOLL;

		ret = io_uring_queue_init_params(conf->queue_depth,
						 &ctx->ring, &p);
		/* Kernels before 5.18 reject flags they don't know. */
		if (ret == -EINVAL && optional) {
			optional = 0;
			continue;
		}
		break;
	}
	if (ret < 0)
		return ret;

	ctx->nr_cqes = p.cq_entries;
	return 0;
}

static int uring_register_bufs(struct uring_ctx *ctx,
			       const struct tswap_be_conf *conf)
{
	uint64_t off, len;
	unsigned int n = 0;
	int ret;

	if (!conf->buf_base || !conf->buf_len)
		return -EINVAL;

	for (off = 0;; off += URING_BUF_STRIDE) {
		n++;
		if (conf->buf_len - off <= URING_BUF_MAX)
			break;
	}
	ctx->bufs = calloc(n, sizeof(*ctx->bufs));
	if (!ctx->bufs)
		return -ENOMEM;

	for (off = 0; ctx->nr_bufs < n; off += URING_BUF_STRIDE) {
		len = conf->buf_len - off;
		if (len > URING_BUF_MAX)
			len = URING_BUF_MAX;
		ctx->bufs[ctx->nr_bufs].iov_base = (char *)conf->buf_base + off;
		ctx->bufs[ctx->nr_bufs].iov_len = len;
		ctx->nr_bufs++;
	}

	/*
	 * Pins the pages and, without CAP_IPC_LOCK, charges them to
	 * RLIMIT_MEMLOCK: -ENOMEM when over the limit.
	 */
	ret = io_uring_register_buffers(&ctx->ring, ctx->bufs, ctx->nr_bufs);
	if (ret < 0)
		return ret;

	ctx->buf_base = conf->buf_base;
	ctx->fixedbufs = true;
	return 0;
}

static int uring_register_files(struct uring_ctx *ctx,
				const struct tswap_be_conf *conf)
{
	int ret;

	if (!conf->fds || !conf->nr_files)
		return -EINVAL;

	ret = io_uring_register_files(&ctx->ring, conf->fds, conf->nr_files);
	if (ret < 0)
		return ret;

	ctx->nr_files = conf->nr_files;
	ctx->registerfiles = true;
	return 0;
}

static void uring_free(struct uring_ctx *ctx, bool ring)
{
	if (ring)
		io_uring_queue_exit(&ctx->ring);
	free(ctx->bufs);
	free(ctx->cqes);
	free(ctx);
}

static int uring_setup(const struct tswap_be_conf *conf, void **ctxp)
{
	struct uring_ctx *ctx;
	int ret;

	*ctxp = NULL;
	if (!conf->queue_depth)
		return -EINVAL;
	if (conf->iopoll) {
		ret = uring_check_iopoll(conf);
		if (ret < 0)
			return ret;
	}

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;

	ret = uring_init_ring(ctx, conf);
	if (ret < 0) {
		uring_free(ctx, false);
		return ret;
	}
	ctx->sqpoll = conf->sqpoll;
	ctx->iopoll = conf->iopoll;

	ctx->cqes = calloc(ctx->nr_cqes, sizeof(*ctx->cqes));
	if (!ctx->cqes) {
		ret = -ENOMEM;
		goto err;
	}

	if (conf->fixedbufs) {
		ret = uring_register_bufs(ctx, conf);
		if (ret < 0)
			goto err;
	}
	if (conf->registerfiles) {
		ret = uring_register_files(ctx, conf);
		if (ret < 0)
			goto err;
	}

	*ctxp = ctx;
	return 0;
err:
	uring_free(ctx, true);
	return ret;
}

/* Index of the registered window holding [buf, buf + len), or -1. */
static int uring_buf_index(const struct uring_ctx *ctx, const char *buf,
			   uint64_t len)
{
	const struct iovec *iov;
	uint64_t off;
	unsigned int i;

	if (buf < ctx->buf_base)
		return -1;
	off = buf - ctx->buf_base;
	i = off / URING_BUF_STRIDE;
	if (i >= ctx->nr_bufs)
		i = ctx->nr_bufs - 1;
	iov = &ctx->bufs[i];
	if (off + len > (uint64_t)((char *)iov->iov_base - ctx->buf_base) +
			iov->iov_len)
		return -1;
	return i;
}

static void uring_prep(void *vctx, uint32_t slot, enum tswap_dir dir, int fd,
		       unsigned int fidx, void *buf, uint64_t len, uint64_t off)
{
	struct uring_ctx *ctx = vctx;
	struct io_uring_sqe *sqe;
	/* The kernel caps one read/write at MAX_RW_COUNT: a short result. */
	unsigned int nbytes = len > UINT_MAX ? UINT_MAX : (unsigned int)len;
	int bidx = -1;

	/*
	 * Cannot fail: at most queue_depth slots are busy and the SQ ring
	 * has at least queue_depth entries, each freed by the kernel before
	 * the CQE that frees its slot is posted.
	 */
	sqe = io_uring_get_sqe(&ctx->ring);
	if (!sqe)
		abort();

	if (ctx->registerfiles && fidx < ctx->nr_files)
		fd = fidx;
	else
		fidx = UINT_MAX;
	if (ctx->fixedbufs)
		bidx = uring_buf_index(ctx, buf, len);

	if (dir == TSWAP_WRITE) {
		if (bidx >= 0)
			io_uring_prep_write_fixed(sqe, fd, buf, nbytes, off,
						  bidx);
		else
			io_uring_prep_write(sqe, fd, buf, nbytes, off);
	} else {
		if (bidx >= 0)
			io_uring_prep_read_fixed(sqe, fd, buf, nbytes, off,
						 bidx);
		else
			io_uring_prep_read(sqe, fd, buf, nbytes, off);
	}
	if (fidx != UINT_MAX)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, slot);
	ctx->pending++;
}

static int uring_submit(void *vctx)
{
	struct uring_ctx *ctx = vctx;
	int ret;

	if (!ctx->pending)
		return 0;

	/* liburing enters the kernel unless an awake SQ thread will see it. */
	if (!ctx->sqpoll ||
	    (IO_URING_READ_ONCE(*ctx->ring.sq.kflags) & IORING_SQ_NEED_WAKEUP))
		ctx->submit_enters++;
	ret = io_uring_submit(&ctx->ring);
	if (ret < 0) {
		/*
		 * -EBUSY: the CQ ring overflowed and the kernel wants it
		 * reaped first; -EAGAIN: no memory for requests right now.
		 * Either way nothing was taken: reap, then submit again.
		 */
		if (ret == -EBUSY)
			ret = -EAGAIN;
		return ret;
	}

	/*
	 * With SQPOLL, io_uring_submit only publishes the SQ tail (and wakes
	 * the SQ thread if it sleeps); it returns the SQEs not yet consumed,
	 * which may include earlier ones.  Everything pending is now the
	 * kernel's.  Without SQPOLL, the kernel took `ret` SQEs, the rest
	 * stay in the SQ ring and the next io_uring_submit offers them again.
	 */
	if (ctx->sqpoll || (unsigned int)ret > ctx->pending)
		ret = ctx->pending;
	ctx->pending -= ret;
	ctx->inflight += ret;
	return ret;
}

static unsigned int uring_pending(void *vctx)
{
	struct uring_ctx *ctx = vctx;

	return ctx->pending;
}

/*
 * Forget every pending block after a hard submit() error: the SQEs not yet
 * published (sqe_head..sqe_tail) and, without SQPOLL, those published in a
 * partial submit but not consumed (khead..ktail).  Without SQPOLL the kernel
 * reads the SQ ring only inside io_uring_enter, which only this thread
 * calls, so moving the tail back to the head is safe.  With SQPOLL nothing
 * stays published-and-pending (submit() hands all of it over) and a hard
 * error means the SQ thread is gone.  Uses liburing 2.x's documented SQ
 * ring fields; no system call.
 */
static void uring_discard(void *vctx)
{
	struct uring_ctx *ctx = vctx;
	struct io_uring_sq *sq = &ctx->ring.sq;
	unsigned int head;

	sq->sqe_tail = sq->sqe_head;
	if (!ctx->sqpoll) {
		head = io_uring_smp_load_acquire(sq->khead);
		io_uring_smp_store_release(sq->ktail, head);
		sq->sqe_head = head;
		sq->sqe_tail = head;
	}
	ctx->pending = 0;
}

/* Take up to `max` CQEs already in the CQ ring; no system call. */
static unsigned int uring_harvest(struct uring_ctx *ctx, unsigned int max,
				  struct tswap_cqe *out)
{
	unsigned int i, n, got = 0;

	if (max > ctx->nr_cqes)
		max = ctx->nr_cqes;
	if (!max)
		return 0;

	n = io_uring_peek_batch_cqe(&ctx->ring, ctx->cqes, max);
	for (i = 0; i < n; i++) {
		const struct io_uring_cqe *cqe = ctx->cqes[i];

		/* liburing's own timeout (kernels without EXT_ARG). */
		if (cqe->user_data == LIBURING_UDATA_TIMEOUT)
			continue;
		out[got].slot = (uint32_t)io_uring_cqe_get_data64(cqe);
		out[got].res = cqe->res;
		got++;
	}
	io_uring_cq_advance(&ctx->ring, n);
	ctx->inflight -= got;
	return got;
}

static int uring_reap(void *vctx, unsigned int min_nr, unsigned int max_nr,
		      const struct timespec *timeout, struct tswap_cqe *cqes)
{
	struct uring_ctx *ctx = vctx;
	struct __kernel_timespec kts, *kp = NULL;
	struct io_uring_cqe *cqe;
	unsigned int got;
	int ret;

	if (min_nr > max_nr)
		min_nr = max_nr;

	got = uring_harvest(ctx, max_nr, cqes);
	if (got >= min_nr) {
		/*
		 * An IOPOLL ring posts nothing unless someone polls the
		 * device: a caller that only wanted what is ready (min_nr 0)
		 * gets one polling pass.
		 */
		if (!got && max_nr && ctx->iopoll && !ctx->sqpoll) {
			ctx->wait_enters++;
			ret = io_uring_get_events(&ctx->ring);
			if (ret < 0)
				return ret;
			got = uring_harvest(ctx, max_nr, cqes);
		}
		return got;
	}

	if (timeout) {
		/* {0, 0}: poll. The CQ ring is the poll, unless IOPOLL. */
		if (!timeout->tv_sec && !timeout->tv_nsec) {
			if (ctx->iopoll && !ctx->sqpoll) {
				ctx->wait_enters++;
				ret = io_uring_get_events(&ctx->ring);
				if (ret < 0 && !got)
					return ret;
				got += uring_harvest(ctx, max_nr - got,
						     cqes + got);
			}
			return got;
		}
		kts.tv_sec = timeout->tv_sec;
		kts.tv_nsec = timeout->tv_nsec;
		kp = &kts;
	}

	for (;;) {
		/*
		 * One io_uring_enter(0, min_nr - got, GETEVENTS[|EXT_ARG]).
		 * liburing returns once at least one CQE is there, so loop
		 * (without a timeout) on the rare early wake-up.
		 */
		ctx->wait_enters++;
		ret = io_uring_wait_cqes(&ctx->ring, &cqe, min_nr - got, kp,
					 NULL);
		got += uring_harvest(ctx, max_nr - got, cqes + got);
		if (ret == -ETIME)
			return got;
		if (ret < 0)
			return got ? (int)got : ret;
		if (got >= min_nr || kp)
			return got;
	}
}

static void uring_teardown(void *vctx)
{
	struct uring_ctx *ctx = vctx;
	struct io_uring_cqe *cqe;
	int ret;

	if (!ctx)
		return;

	/*
	 * Closing the ring does not wait for in-flight I/O: the kernel would
	 * finish it in the background, into fio's buffers, after fio frees
	 * them.  Wait for every accepted block first.
	 */
	while (ctx->inflight) {
		ret = io_uring_wait_cqe(&ctx->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			break;
		while (io_uring_peek_cqe(&ctx->ring, &cqe) == 0) {
			if (cqe->user_data != LIBURING_UDATA_TIMEOUT)
				ctx->inflight--;
			io_uring_cqe_seen(&ctx->ring, cqe);
			if (!ctx->inflight)
				break;
		}
	}
	uring_free(ctx, true);
}

static void uring_syscalls(void *p, uint64_t *submits, uint64_t *waits)
{
	struct uring_ctx *ctx = p;

	*submits = ctx->submit_enters;
	*waits = ctx->wait_enters;
}

const struct tswap_backend tswap_be_uring = {
	.name = "io_uring",
	.setup = uring_setup,
	.prep = uring_prep,
	.submit = uring_submit,
	.pending = uring_pending,
	.discard = uring_discard,
	.reap = uring_reap,
	.syscalls = uring_syscalls,
	.teardown = uring_teardown,
};
