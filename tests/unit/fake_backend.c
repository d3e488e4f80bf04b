// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_backend.c - a scripted, recording backend for the scheduler tests
 * (see fake_backend.h).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_backend.h"

#define FAKE_MAX_VIOL 32
#define FAKE_VIOL_LEN 256

struct fake_pending {
	uint64_t off;
	uint64_t len;
	void *buf;
	enum tswap_dir dir;
	int fd;
	unsigned int fidx;
	uint32_t slot;
	int op;
};

struct fake_ctx {
	struct fake_ctx_rec rec;
	unsigned int cap_submit;
	unsigned int cap_reap;
	unsigned int cap_block;
	struct fake_pending *pend;
	unsigned int npend;
	unsigned int cap_pend;
	unsigned int head;	/* rec.blocks[head, nblock) are in flight */
	bool *slot_busy;
	int last_op;
	uintptr_t buf_base;
	uint64_t buf_len;
};

struct fake_script {
	int ctx;
	unsigned int nth;
	int ret;
};

struct fake_fault {
	uint64_t off;
	int64_t res;
};

struct fake_opreg {
	uintptr_t buf;
	uint64_t off;
	uint64_t len;
	int fd;
	enum tswap_dir dir;
};

static struct {
	pthread_mutex_t lock;
	pthread_t main;
	struct fake_ctx *ctx[FAKE_MAX_CTX];
	unsigned int nctx;
	unsigned int setup_calls;
	unsigned int fail_setup_nth;
	int fail_setup_err;
	unsigned int reap_limit;
	struct fake_opreg ops[FAKE_MAX_OPS];
	unsigned int nops;
	struct fake_fault faults[FAKE_MAX_FAULTS];
	unsigned int nfaults;
	struct fake_script sub[FAKE_MAX_SCRIPT];
	unsigned int nsub;
	struct fake_script rp[FAKE_MAX_SCRIPT];
	unsigned int nrp;
	char viol[FAKE_MAX_VIOL][FAKE_VIOL_LEN];
	unsigned int nviol;
	unsigned int nviol_lost;
} F = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "fake_backend: out of memory\n");
		abort();
	}
	return q;
}

/* Grow *arr (of *cap elements of size sz) to hold at least n elements. */
static void grow(void **arr, unsigned int *cap, unsigned int n, size_t sz)
{
	unsigned int c = *cap ? *cap : 16;

	if (n <= *cap)
		return;
	while (c < n)
		c *= 2;
	*arr = xrealloc(*arr, (size_t)c * sz);
	*cap = c;
}

/*
 * Record a violation; called with F.lock held.  On the test's main thread
 * it fails the test at once (the lock is released first).  On a worker
 * thread it is only recorded, unless `fatal` (the worker could only hang):
 * then it is printed and the process exits non-zero.
 */
__attribute__((format(printf, 2, 3))) static void
violation(bool fatal, const char *fmt, ...)
{
	char msg[FAKE_VIOL_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (F.nviol < FAKE_MAX_VIOL)
		memcpy(F.viol[F.nviol++], msg, sizeof(msg));
	else
		F.nviol_lost++;

	if (pthread_equal(pthread_self(), F.main)) {
		pthread_mutex_unlock(&F.lock);
		fail_msg("fake_backend: %s", msg);
		abort(); /* not reached */
	}
	if (fatal) {
		fprintf(stderr, "# fake_backend: FATAL (worker thread): %s\n",
			msg);
		fflush(NULL);
		_exit(3);
	}
}

static unsigned int inflight(const struct fake_ctx *c)
{
	return c->rec.nblock - c->head;
}

static int script_find(const struct fake_script *s, unsigned int n, int ctx,
		       unsigned int nth, int *ret)
{
	for (unsigned int i = 0; i < n; i++) {
		if ((s[i].ctx == FAKE_ANY_CTX || s[i].ctx == ctx) &&
		    s[i].nth == nth) {
			*ret = s[i].ret;
			return 1;
		}
	}
	return 0;
}

/* --- the backend ---------------------------------------------------------- */

static int fake_setup(const struct tswap_be_conf *conf, void **ctxp)
{
	struct fake_ctx *c;

	pthread_mutex_lock(&F.lock);
	F.setup_calls++;
	if (F.setup_calls == F.fail_setup_nth) {
		int err = F.fail_setup_err;

		*ctxp = NULL;
		pthread_mutex_unlock(&F.lock);
		return err;
	}
	if (F.nctx == FAKE_MAX_CTX)
		violation(true, "more than %d contexts set up", FAKE_MAX_CTX);
	if (conf->queue_depth == 0)
		violation(true, "setup with queue_depth 0");

	c = xrealloc(NULL, sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->rec.id = F.nctx;
	c->rec.queue_depth = conf->queue_depth;
	c->slot_busy = xrealloc(NULL, conf->queue_depth * sizeof(bool));
	memset(c->slot_busy, 0, conf->queue_depth * sizeof(bool));
	c->last_op = -1;
	c->buf_base = (uintptr_t)conf->buf_base;
	c->buf_len = conf->buf_len;
	F.ctx[F.nctx++] = c;
	*ctxp = c;
	pthread_mutex_unlock(&F.lock);
	return 0;
}

static int find_op(int fd, void *buf, uint64_t len, uint64_t off)
{
	int any = -1;

	for (unsigned int i = 0; i < F.nops; i++) {
		const struct fake_opreg *o = &F.ops[i];

		if (o->fd != fd || off < o->off || off + len > o->off + o->len)
			continue;
		if ((uintptr_t)buf == o->buf + (off - o->off))
			return (int)i;
		if (any < 0)
			any = (int)i;
	}
	return any;
}

static void fake_prep(void *ctx, uint32_t slot, enum tswap_dir dir, int fd,
		      unsigned int fidx, void *buf, uint64_t len, uint64_t off)
{
	struct fake_ctx *c = ctx;
	struct fake_pending *p;
	unsigned int q, busy;
	uintptr_t b = (uintptr_t)buf;
	int op;

	pthread_mutex_lock(&F.lock);
	q = c->rec.queue_depth;
	c->rec.nprep++;
	if (pthread_equal(pthread_self(), F.main))
		c->rec.main_calls++;
	if (c->rec.torn_down)
		violation(true, "ctx %u: prep after teardown", c->rec.id);
	if (slot >= q) {
		violation(false, "ctx %u: prep slot %u out of range (Q %u)",
			  c->rec.id, slot, q);
	} else if (c->slot_busy[slot]) {
		violation(false, "ctx %u: prep slot %u while it is busy",
			  c->rec.id, slot);
	} else {
		c->slot_busy[slot] = true;
	}
	busy = c->npend + inflight(c);
	if (busy + 1 > q)
		violation(false,
			  "ctx %u: %u blocks busy (%u pending, %u in flight) > queue depth %u",
			  c->rec.id, busy + 1, c->npend + 1, inflight(c), q);
	if (busy + 1 > c->rec.max_busy)
		c->rec.max_busy = busy + 1;
	if (len == 0)
		violation(false, "ctx %u: prep of a 0-byte block at %llu",
			  c->rec.id, (unsigned long long)off);
	if (c->buf_base && (b < c->buf_base ||
			    b + len > c->buf_base + c->buf_len))
		violation(false,
			  "ctx %u: block buffer %p+%llu outside buf_base %p+%llu",
			  c->rec.id, buf, (unsigned long long)len,
			  (void *)c->buf_base, (unsigned long long)c->buf_len);

	op = find_op(fd, buf, len, off);
	if (F.nops && op < 0)
		violation(false,
			  "ctx %u: block off %llu len %llu fd %d in no queued operation",
			  c->rec.id, (unsigned long long)off,
			  (unsigned long long)len, fd);
	if (op >= 0) {
		const struct fake_opreg *o = &F.ops[op];

		if (b != o->buf + (off - o->off))
			violation(false,
				  "ctx %u: block off %llu of op %d has buf %p, want op buf + %llu = %p",
				  c->rec.id, (unsigned long long)off, op, buf,
				  (unsigned long long)(off - o->off),
				  (void *)(o->buf + (off - o->off)));
		if (dir != o->dir)
			violation(false, "ctx %u: block of op %d has dir %d, op has %d",
				  c->rec.id, op, (int)dir, (int)o->dir);
		if (op < c->last_op)
			violation(false,
				  "ctx %u: block of op %d after a block of op %d (not FIFO)",
				  c->rec.id, op, c->last_op);
		for (unsigned int i = 0; i < c->npend; i++)
			if (c->pend[i].op != op)
				violation(false,
					  "ctx %u: block of op %d prepared while op %d has a block pending",
					  c->rec.id, op, c->pend[i].op);
		for (unsigned int i = c->head; i < c->rec.nblock; i++)
			if (c->rec.blocks[i].op != op)
				violation(false,
					  "ctx %u: block of op %d prepared while op %d has a block in flight",
					  c->rec.id, op, c->rec.blocks[i].op);
		if (op > c->last_op)
			c->last_op = op;
	}

	grow((void **)&c->pend, &c->cap_pend, c->npend + 1, sizeof(*c->pend));
	p = &c->pend[c->npend++];
	p->off = off;
	p->len = len;
	p->buf = buf;
	p->dir = dir;
	p->fd = fd;
	p->fidx = fidx;
	p->slot = slot;
	p->op = op;
	pthread_mutex_unlock(&F.lock);
}

static int64_t block_res(uint64_t off, uint64_t len)
{
	for (unsigned int i = 0; i < F.nfaults; i++)
		if (F.faults[i].off == off)
			return F.faults[i].res;
	return (int64_t)len;
}

static int fake_submit(void *ctx)
{
	struct fake_ctx *c = ctx;
	struct fake_submit *r;
	unsigned int accept, callno;
	int ret, scripted;

	pthread_mutex_lock(&F.lock);
	if (pthread_equal(pthread_self(), F.main))
		c->rec.main_calls++;
	if (c->rec.torn_down)
		violation(true, "ctx %u: submit after teardown", c->rec.id);
	callno = c->rec.nsubmit + 1;
	grow((void **)&c->rec.submits, &c->cap_submit, callno,
	     sizeof(*c->rec.submits));
	r = &c->rec.submits[c->rec.nsubmit++];
	r->seq = c->rec.ncalls++;
	r->pending = c->npend;
	r->inflight_before = inflight(c);

	if (c->npend == 0)
		violation(false, "ctx %u: submit call %u with nothing pending",
			  c->rec.id, callno);

	accept = c->npend;
	ret = (int)accept;
	if (script_find(F.sub, F.nsub, (int)c->rec.id, callno, &scripted)) {
		ret = scripted;
		if (scripted < 0)
			accept = 0;
		else if ((unsigned int)scripted < accept)
			accept = (unsigned int)scripted;
		if (scripted >= 0)
			ret = (int)accept;
	}

	grow((void **)&c->rec.blocks, &c->cap_block, c->rec.nblock + accept,
	     sizeof(*c->rec.blocks));
	for (unsigned int i = 0; i < accept; i++) {
		struct fake_pending *p = &c->pend[i];
		struct fake_block *bl = &c->rec.blocks[c->rec.nblock++];

		bl->off = p->off;
		bl->len = p->len;
		bl->buf = p->buf;
		bl->dir = p->dir;
		bl->fd = p->fd;
		bl->fidx = p->fidx;
		bl->slot = p->slot;
		bl->op = p->op;
		bl->submit = c->rec.nsubmit - 1;
		bl->res = block_res(p->off, p->len);
		bl->reaped = false;
	}
	if (accept)
		memmove(c->pend, c->pend + accept,
			(c->npend - accept) * sizeof(*c->pend));
	c->npend -= accept;

	r->inflight_after = inflight(c);
	r->ret = ret;
	if (inflight(c) > c->rec.max_inflight)
		c->rec.max_inflight = inflight(c);
	pthread_mutex_unlock(&F.lock);
	return ret;
}

static unsigned int fake_pending(void *ctx)
{
	struct fake_ctx *c = ctx;
	unsigned int n;

	pthread_mutex_lock(&F.lock);
	n = c->npend;
	pthread_mutex_unlock(&F.lock);
	return n;
}

static void fake_discard(void *ctx)
{
	struct fake_ctx *c = ctx;

	pthread_mutex_lock(&F.lock);
	c->rec.ndiscard++;
	c->rec.discarded += c->npend;
	for (unsigned int i = 0; i < c->npend; i++)
		if (c->pend[i].slot < c->rec.queue_depth)
			c->slot_busy[c->pend[i].slot] = false;
	c->npend = 0;
	pthread_mutex_unlock(&F.lock);
}

static int fake_reap(void *ctx, unsigned int min_nr, unsigned int max_nr,
		     const struct timespec *timeout, struct tswap_cqe *cqes)
{
	struct fake_ctx *c = ctx;
	struct fake_reap *r;
	unsigned int callno, n, lim, inf;
	int scripted;

	pthread_mutex_lock(&F.lock);
	if (pthread_equal(pthread_self(), F.main))
		c->rec.main_calls++;
	if (c->rec.torn_down)
		violation(true, "ctx %u: reap after teardown", c->rec.id);
	inf = inflight(c);
	callno = c->rec.nreap + 1;
	grow((void **)&c->rec.reaps, &c->cap_reap, callno,
	     sizeof(*c->rec.reaps));
	r = &c->rec.reaps[c->rec.nreap++];
	r->seq = c->rec.ncalls++;
	r->min_nr = min_nr;
	r->max_nr = max_nr;
	r->inflight = inf;
	r->pending = c->npend;
	r->timeout = timeout != NULL;

	if (script_find(F.rp, F.nrp, (int)c->rec.id, callno, &scripted)) {
		r->ret = scripted;
		pthread_mutex_unlock(&F.lock);
		return scripted;
	}

	if (max_nr == 0 || min_nr > max_nr)
		violation(false, "ctx %u: reap call %u with min_nr %u max_nr %u",
			  c->rec.id, callno, min_nr, max_nr);
	if (!timeout && min_nr > inf)
		violation(inf == 0,
			  "ctx %u: reap call %u waits for min_nr %u (max_nr %u) with only %u in flight (%u pending): would block forever",
			  c->rec.id, callno, min_nr, max_nr, inf, c->npend);

	n = max_nr < inf ? max_nr : inf;
	lim = F.reap_limit;
	if (lim) {
		if (lim < min_nr)
			lim = min_nr;
		if (n > lim)
			n = lim;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct fake_block *bl = &c->rec.blocks[c->head++];

		bl->reaped = true;
		cqes[i].slot = bl->slot;
		cqes[i].res = bl->res;
		if (bl->slot < c->rec.queue_depth)
			c->slot_busy[bl->slot] = false;
	}
	r->ret = (int)n;
	pthread_mutex_unlock(&F.lock);
	return (int)n;
}

static void fake_teardown(void *ctx)
{
	struct fake_ctx *c = ctx;

	pthread_mutex_lock(&F.lock);
	if (c->rec.torn_down)
		violation(false, "ctx %u: torn down twice", c->rec.id);
	/* In-flight blocks are allowed (teardown waits for them). */
	c->rec.inflight_at_teardown = inflight(c);
	if (c->npend)
		violation(false,
			  "ctx %u: torn down with %u blocks prepared and never submitted or discarded",
			  c->rec.id, c->npend);
	c->rec.torn_down = true;
	pthread_mutex_unlock(&F.lock);
}

const struct tswap_backend fake_backend = {
	.name = "fake",
	.setup = fake_setup,
	.prep = fake_prep,
	.submit = fake_submit,
	.pending = fake_pending,
	.discard = fake_discard,
	.reap = fake_reap,
	.teardown = fake_teardown,
};

/* --- control -------------------------------------------------------------- */

static void ctx_free(struct fake_ctx *c)
{
	free(c->rec.submits);
	free(c->rec.reaps);
	free(c->rec.blocks);
	free(c->pend);
	free(c->slot_busy);
	free(c);
}

void fake_reset(void)
{
	pthread_mutex_lock(&F.lock);
	/*
	 * A context not torn down may still be used by a scheduler a failed
	 * test left behind: leak it rather than pull it from under it.
	 */
	for (unsigned int i = 0; i < F.nctx; i++)
		if (F.ctx[i]->rec.torn_down)
			ctx_free(F.ctx[i]);
	F.nctx = 0;
	F.setup_calls = 0;
	F.fail_setup_nth = 0;
	F.fail_setup_err = 0;
	F.reap_limit = 0;
	F.nops = 0;
	F.nfaults = 0;
	F.nsub = 0;
	F.nrp = 0;
	F.nviol = 0;
	F.nviol_lost = 0;
	F.main = pthread_self();
	pthread_mutex_unlock(&F.lock);
}

int fake_add_op(const struct tswap_op *op)
{
	int i;

	pthread_mutex_lock(&F.lock);
	if (F.nops == FAKE_MAX_OPS) {
		pthread_mutex_unlock(&F.lock);
		fail_msg("fake_add_op: more than %d operations", FAKE_MAX_OPS);
		return -1;
	}
	i = (int)F.nops++;
	F.ops[i].buf = (uintptr_t)op->buf;
	F.ops[i].off = op->offset;
	F.ops[i].len = op->len;
	F.ops[i].fd = op->fd;
	F.ops[i].dir = op->dir;
	pthread_mutex_unlock(&F.lock);
	return i;
}

void fake_fault_block(uint64_t off, int64_t res)
{
	pthread_mutex_lock(&F.lock);
	if (F.nfaults == FAKE_MAX_FAULTS) {
		pthread_mutex_unlock(&F.lock);
		fail_msg("fake_fault_block: too many faults");
		return;
	}
	F.faults[F.nfaults].off = off;
	F.faults[F.nfaults].res = res;
	F.nfaults++;
	pthread_mutex_unlock(&F.lock);
}

static void script_add(struct fake_script *s, unsigned int *n, int ctx,
		       unsigned int nth, int ret)
{
	pthread_mutex_lock(&F.lock);
	if (*n == FAKE_MAX_SCRIPT) {
		pthread_mutex_unlock(&F.lock);
		fail_msg("fake_backend: script too long");
		return;
	}
	s[*n].ctx = ctx;
	s[*n].nth = nth;
	s[*n].ret = ret;
	(*n)++;
	pthread_mutex_unlock(&F.lock);
}

void fake_script_submit(int ctx, unsigned int nth, int ret)
{
	script_add(F.sub, &F.nsub, ctx, nth, ret);
}

void fake_script_reap(int ctx, unsigned int nth, int ret)
{
	if (ret >= 0) {
		fail_msg("fake_script_reap: ret %d is not a negative errno", ret);
		return;
	}
	script_add(F.rp, &F.nrp, ctx, nth, ret);
}

void fake_fail_setup(unsigned int nth, int err)
{
	pthread_mutex_lock(&F.lock);
	F.fail_setup_nth = nth;
	F.fail_setup_err = err;
	pthread_mutex_unlock(&F.lock);
}

void fake_set_reap_limit(unsigned int limit)
{
	pthread_mutex_lock(&F.lock);
	F.reap_limit = limit;
	pthread_mutex_unlock(&F.lock);
}

unsigned int fake_nctx(void)
{
	unsigned int n;

	pthread_mutex_lock(&F.lock);
	n = F.nctx;
	pthread_mutex_unlock(&F.lock);
	return n;
}

const struct fake_ctx_rec *fake_ctx(unsigned int i)
{
	const struct fake_ctx_rec *r = NULL;

	pthread_mutex_lock(&F.lock);
	if (i < F.nctx)
		r = &F.ctx[i]->rec;
	pthread_mutex_unlock(&F.lock);
	return r;
}

unsigned int fake_setup_calls(void)
{
	unsigned int n;

	pthread_mutex_lock(&F.lock);
	n = F.setup_calls;
	pthread_mutex_unlock(&F.lock);
	return n;
}

unsigned int fake_live_ctx(void)
{
	unsigned int n = 0;

	pthread_mutex_lock(&F.lock);
	for (unsigned int i = 0; i < F.nctx; i++)
		if (!F.ctx[i]->rec.torn_down)
			n++;
	pthread_mutex_unlock(&F.lock);
	return n;
}

unsigned int fake_nviolations(void)
{
	unsigned int n;

	pthread_mutex_lock(&F.lock);
	n = F.nviol + F.nviol_lost;
	pthread_mutex_unlock(&F.lock);
	return n;
}

const char *fake_violation(unsigned int i)
{
	const char *s = NULL;

	pthread_mutex_lock(&F.lock);
	if (i < F.nviol)
		s = F.viol[i];
	pthread_mutex_unlock(&F.lock);
	return s;
}

void fake_assert_clean(void)
{
	unsigned int n = fake_nviolations();

	for (unsigned int i = 0; i < n && i < FAKE_MAX_VIOL; i++)
		print_error("# fake_backend violation: %s\n", fake_violation(i));
	if (n)
		fail_msg("fake_backend: %u violation(s) by the scheduler", n);
}
