// SPDX-License-Identifier: GPL-2.0-only
/*
 * be_libaio.c - Linux native AIO backend (libaio), DeepSpeed's own path.
 *
 * One io_context_t of queue_depth events per worker.  prep() fills the iocb
 * of the slot and appends it to the pending batch; submit() is exactly one
 * io_submit(2) of the whole batch; reap() is exactly one io_getevents(2).
 */
#include <errno.h>
#include <libaio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

struct aio_be {
	io_context_t ctx;
	unsigned int depth;
	unsigned int npend;		/* pending iocbs: pend[0 .. npend) */
	struct iocb **pend;
	struct iocb *iocbs;		/* one per slot */
	struct io_event *events;
};

static void aio_teardown(void *p)
{
	struct aio_be *b = p;

	if (!b)
		return;
	/* io_destroy() waits for the iocbs still in flight. */
	if (b->ctx)
		io_destroy(b->ctx);
	free(b->pend);
	free(b->iocbs);
	free(b->events);
	free(b);
}

static int aio_setup(const struct tswap_be_conf *conf, void **ctxp)
{
	struct aio_be *b;
	int ret;

	*ctxp = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->depth = conf->queue_depth;
	b->pend = calloc(b->depth, sizeof(*b->pend));
	b->iocbs = calloc(b->depth, sizeof(*b->iocbs));
	b->events = calloc(b->depth, sizeof(*b->events));
	if (!b->pend || !b->iocbs || !b->events) {
		aio_teardown(b);
		return -ENOMEM;
	}
	ret = io_setup((int)b->depth, &b->ctx);
	if (ret < 0) {
		b->ctx = 0;
		aio_teardown(b);
		return ret;
	}
	*ctxp = b;
	return 0;
}

static void aio_prep(void *p, uint32_t slot, enum tswap_dir dir, int fd,
		     unsigned int fidx, void *buf, uint64_t len, uint64_t off)
{
	struct aio_be *b = p;
	struct iocb *iocb = &b->iocbs[slot];

	(void)fidx;
	if (dir == TSWAP_READ)
		io_prep_pread(iocb, fd, buf, (size_t)len, (long long)off);
	else
		io_prep_pwrite(iocb, fd, buf, (size_t)len, (long long)off);
	iocb->data = (void *)(uintptr_t)slot;
	b->pend[b->npend++] = iocb;
}

static int aio_submit(void *p)
{
	struct aio_be *b = p;
	int ret;

	ret = io_submit(b->ctx, (long)b->npend, b->pend);
	if (ret <= 0)
		return ret;
	b->npend -= (unsigned int)ret;
	if (b->npend)	/* partial submit: keep the rest, in order */
		memmove(b->pend, b->pend + ret, b->npend * sizeof(*b->pend));
	return ret;
}

static unsigned int aio_pending(void *p)
{
	return ((struct aio_be *)p)->npend;
}

static void aio_discard(void *p)
{
	((struct aio_be *)p)->npend = 0;
}

static int aio_reap(void *p, unsigned int min_nr, unsigned int max_nr,
		    const struct timespec *timeout, struct tswap_cqe *cqes)
{
	struct aio_be *b = p;
	struct timespec ts, *tsp = NULL;
	int ret, i;

	if (timeout) {
		ts = *timeout;
		tsp = &ts;
	}
	ret = io_getevents(b->ctx, (long)min_nr, (long)max_nr, b->events, tsp);
	for (i = 0; i < ret; i++) {
		cqes[i].slot = (uint32_t)(uintptr_t)b->events[i].data;
		cqes[i].res = (int64_t)(long)b->events[i].res;
	}
	return ret;
}

const struct tswap_backend tswap_be_libaio = {
	.name = "libaio",
	.setup = aio_setup,
	.prep = aio_prep,
	.submit = aio_submit,
	.pending = aio_pending,
	.discard = aio_discard,
	.reap = aio_reap,
	.teardown = aio_teardown,
};
