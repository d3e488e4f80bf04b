// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_sched.c - the scheduler (sched.h) over the fake backend: byte
 * coverage, the exact call shapes of every window x submit mode, FIFO
 * order, tails, errors, short transfers, EAGAIN / EINTR / partial submits,
 * setup failures and the stats counters (design.md section 1), inline and
 * with the hand-off to a worker thread at P == 1 (conf.handoff).
 *
 * Every test runs under a watchdog: a scheduler that hangs fails the binary
 * instead of stalling the suite.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_backend.h"
#include "sched.h"
#include "stats.h"

#define KiB 1024ull
#define B16 (16 * KiB)
#define ARENA_LEN (16 * 1024 * KiB)
#define TEST_FD 42
#define TEST_FIDX 3
#define WATCHDOG_S 30
#define MAX_EV 4096

/* --- per-test state ------------------------------------------------------- */

static uint8_t *arena;

static struct run {
	struct tswap_sched_conf conf;
	struct tswap_sched *s;
	bool timing;
	bool handoff;			/* conf.handoff, from the combo */
	uint64_t used;			/* arena bytes handed out */
	struct tswap_op ops[FAKE_MAX_OPS];
	unsigned int nops;
	unsigned int nqueued;
	struct tswap_op *got[FAKE_MAX_OPS];	/* in reap order */
	unsigned int ngot;
	struct tswap_stats st;
	bool st_init;
} R;

static void watchdog(int sig)
{
	static const char msg[] =
		"# test_sched: watchdog: a test ran for more than 30 s (scheduler hang?)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1))
		_exit(4);
	_exit(4);
}

struct combo;
static bool combo_handoff(const struct combo *cb);

static int setup(void **state)
{
	fake_reset();
	memset(&R, 0, sizeof(R));
	if (*state)
		R.handoff = combo_handoff(*state);
	alarm(WATCHDOG_S);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	if (R.st_init)
		tswap_stats_free(&R.st);
	/*
	 * A scheduler still here belongs to a failed test: it may be in any
	 * state, so it is leaked rather than destroyed.
	 */
	R.s = NULL;
	return 0;
}

/* --- driving the scheduler ------------------------------------------------ */

static void start(enum tswap_submit_mode sm, enum tswap_window win,
		  unsigned int P, unsigned int Q, uint64_t B)
{
	char err[256] = "";
	int ret;

	memset(&R.conf, 0, sizeof(R.conf));
	R.conf.be = &fake_backend;
	R.conf.be_conf.queue_depth = Q;
	R.conf.be_conf.buf_base = arena;
	R.conf.be_conf.buf_len = ARENA_LEN;
	R.conf.block_size = B;
	R.conf.threads = P;
	R.conf.handoff = R.handoff;
	R.conf.submit = sm;
	R.conf.window = win;
	R.conf.max_ops = FAKE_MAX_OPS;
	R.conf.timing = R.timing;
	ret = tswap_sched_create(&R.conf, &R.s, err, sizeof(err));
	if (ret)
		fail_msg("tswap_sched_create: %d (%s)", ret, err);
	assert_non_null(R.s);
}

/* A new op on file `fd` (job file index `fidx`), its buffer in the arena. */
static struct tswap_op *add_op_file(uint64_t off, uint64_t len,
				    enum tswap_dir dir, int fd,
				    unsigned int fidx)
{
	struct tswap_op *op;

	assert_true(R.nops < FAKE_MAX_OPS);
	assert_true(R.used + len <= ARENA_LEN);
	op = &R.ops[R.nops];
	memset(op, 0, sizeof(*op));
	op->buf = arena + R.used;
	op->offset = off;
	op->len = len;
	op->dir = dir;
	op->fd = fd;
	op->fidx = fidx;
	op->user = op;
	op->error = -1;		/* must be overwritten */
	op->done = UINT64_MAX;
	R.used += (len + 4095) & ~4095ull;
	assert_int_equal(fake_add_op(op), R.nops);
	R.nops++;
	return op;
}

/* A new operation of `len` bytes at file offset `off`. */
static struct tswap_op *add_op(uint64_t off, uint64_t len, enum tswap_dir dir)
{
	return add_op_file(off, len, dir, TEST_FD, TEST_FIDX);
}

/* Queue every operation added since the last call, then kick. */
static void queue_kick(void)
{
	while (R.nqueued < R.nops)
		tswap_sched_queue(R.s, &R.ops[R.nqueued++]);
	tswap_sched_kick(R.s);
}

/* tswap_sched_reap(min, max) without timeout: it must return min..max. */
static unsigned int reap(unsigned int min, unsigned int max)
{
	int n = tswap_sched_reap(R.s, min, max, NULL, R.got + R.ngot);

	if (n < (int)min || n > (int)max)
		fail_msg("tswap_sched_reap(min %u, max %u, NULL) returned %d",
			 min, max, n);
	R.ngot += (unsigned int)n;
	return (unsigned int)n;
}

static void reap_all(void)
{
	unsigned int want = R.nqueued - R.ngot;

	if (want)
		reap(want, want);
	assert_int_equal(tswap_sched_busy(R.s), 0);
}

/* Merge the stats, destroy the scheduler, check the fake saw no bug. */
static void finish(void)
{
	assert_int_equal(tswap_stats_init(&R.st, R.conf.be_conf.queue_depth), 0);
	R.st_init = true;
	tswap_sched_stats(R.s, &R.st);
	tswap_sched_destroy(R.s);
	R.s = NULL;
	fake_assert_clean();
	assert_int_equal(fake_live_ctx(), 0);
}

/* --- checks ----------------------------------------------------------------- */

/* Each queued op was returned by reap exactly once. */
static void check_got_once(void)
{
	assert_int_equal(R.ngot, R.nqueued);
	for (unsigned int i = 0; i < R.nqueued; i++) {
		unsigned int seen = 0;

		for (unsigned int j = 0; j < R.ngot; j++)
			seen += R.got[j] == &R.ops[i];
		if (seen != 1)
			fail_msg("op %u returned %u times by tswap_sched_reap", i,
				 seen);
	}
}

static void check_fifo_order(void)
{
	for (unsigned int i = 0; i < R.ngot; i++)
		if (R.got[i] != &R.ops[i])
			fail_msg("reap returned op %ld in position %u (want FIFO)",
				 (long)(R.got[i] - R.ops), i);
}

static void check_op_ok(const struct tswap_op *op)
{
	assert_int_equal(op->error, 0);
	assert_int_equal(op->done, op->len);
}

/* Part of byte `rel` of an op of `len` bytes cut in P parts. */
static unsigned int part_of(uint64_t rel, uint64_t len, unsigned int P)
{
	for (unsigned int i = 0; i < P; i++)
		if (rel < (i + 1) * len / P)
			return i;
	fail_msg("byte %llu outside an op of %llu bytes",
		 (unsigned long long)rel, (unsigned long long)len);
	return P;
}

/*
 * Every block the fake saw lies on the B grid of its part, with the right
 * length (B, or the unpadded rest of the part), buffer, direction and
 * file; no byte of any op is transferred twice, and every byte of the ops
 * in `full` (bit i: op i) is transferred exactly once.  Computed here
 * from design.md, not with plan.h.
 */
static void check_blocks(uint64_t B, unsigned int P, uint64_t full)
{
	uint8_t *cnt[FAKE_MAX_OPS];

	for (unsigned int i = 0; i < R.nops; i++) {
		cnt[i] = calloc(1, R.ops[i].len);
		assert_non_null(cnt[i]);
	}
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);

		for (unsigned int k = 0; k < r->nblock; k++) {
			const struct fake_block *b = &r->blocks[k];
			const struct tswap_op *op;
			uint64_t rel, pstart, pend, want;
			unsigned int p;

			assert_in_range(b->op, 0, R.nops - 1);
			op = &R.ops[b->op];
			assert_true(b->off >= op->offset);
			rel = b->off - op->offset;
			assert_true(rel + b->len <= op->len);
			p = part_of(rel, op->len, P);
			pstart = p * op->len / P;
			pend = (p + 1) * op->len / P;
			if ((rel - pstart) % B)
				fail_msg("op %d block at rel %llu not on the B grid of part %u",
					 b->op, (unsigned long long)rel, p);
			want = pend - rel < B ? pend - rel : B;
			if (b->len != want)
				fail_msg("op %d block at rel %llu: len %llu, want %llu",
					 b->op, (unsigned long long)rel,
					 (unsigned long long)b->len,
					 (unsigned long long)want);
			assert_ptr_equal(b->buf, (uint8_t *)op->buf + rel);
			assert_int_equal(b->dir, op->dir);
			assert_int_equal(b->fd, op->fd);
			assert_int_equal(b->fidx, op->fidx);
			for (uint64_t x = rel; x < rel + b->len; x++) {
				if (cnt[b->op][x]++)
					fail_msg("op %d byte %llu transferred twice",
						 b->op, (unsigned long long)x);
			}
		}
	}
	for (unsigned int i = 0; i < R.nops; i++) {
		if (full & (1ull << i)) {
			for (uint64_t x = 0; x < R.ops[i].len; x++)
				if (cnt[i][x] != 1)
					fail_msg("op %u byte %llu transferred %u times",
						 i, (unsigned long long)x, cnt[i][x]);
		}
		free(cnt[i]);
	}
}

static uint64_t all_ops(void)
{
	return R.nops >= 64 ? ~0ull : (1ull << R.nops) - 1;
}

/* P contexts, each always on the same part index, all indexes covered. */
static void check_ctx_parts(unsigned int P)
{
	bool taken[FAKE_MAX_CTX] = { false };

	assert_int_equal(fake_nctx(), P);
	for (unsigned int c = 0; c < P; c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);
		unsigned int part = P;

		for (unsigned int k = 0; k < r->nblock; k++) {
			const struct fake_block *b = &r->blocks[k];
			const struct tswap_op *op = &R.ops[b->op];
			unsigned int p = part_of(b->off - op->offset, op->len, P);

			if (part == P)
				part = p;
			else if (p != part)
				fail_msg("ctx %u does part %u and part %u", c,
					 part, p);
		}
		if (part < P) {
			if (taken[part])
				fail_msg("part %u done by two contexts", part);
			taken[part] = true;
		}
	}
}

/* Nothing left in flight or prepared, every submitted block reaped. */
static void check_drained(void)
{
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);

		assert_int_equal(r->inflight_at_teardown, 0);
		for (unsigned int k = 0; k < r->nblock; k++)
			assert_true(r->blocks[k].reaped);
	}
}

/*
 * The stats the scheduler kept agree with what the fake saw.  `exact_inflight`:
 * every submit succeeded, so inflight_at_submit can be compared too.
 */
static void check_stats(unsigned int P, bool exact_inflight)
{
	const struct tswap_stats *st = &R.st;
	unsigned int Q = R.conf.be_conf.queue_depth;
	uint64_t submits = 0, reaps = 0, eagain = 0, blocks = 0, bytes = 0;
	uint64_t errs = 0, shorts = 0;
	uint64_t *bps = calloc(Q + 1, sizeof(*bps));
	uint64_t *ifl = calloc(Q + 1, sizeof(*ifl));

	assert_non_null(bps);
	assert_non_null(ifl);
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);

		submits += r->nsubmit;
		reaps += r->nreap;
		for (unsigned int i = 0; i < r->nsubmit; i++) {
			int ret = r->submits[i].ret;

			if (ret == -EAGAIN || ret == 0)
				eagain++;
			assert_true(ret <= (int)Q);
			bps[ret > 0 ? ret : 0]++;
			if (ret > 0) {
				assert_true(r->submits[i].inflight_after <= Q);
				ifl[r->submits[i].inflight_after]++;
			}
		}
		for (unsigned int k = 0; k < r->nblock; k++) {
			const struct fake_block *b = &r->blocks[k];

			if (!b->reaped)
				continue;
			blocks++;
			if (b->res < 0)
				errs++;
			else
				bytes += (uint64_t)b->res;
			if (b->res >= 0 && (uint64_t)b->res < b->len)
				shorts++;
		}
	}
	assert_int_equal(st->queue_depth, Q);
	assert_int_equal(st->submit_calls, submits);
	assert_int_equal(st->wait_calls, reaps);
	assert_int_equal(st->submit_eagain, eagain);
	assert_int_equal(st->blocks, blocks);
	assert_int_equal(st->bytes, bytes);
	assert_int_equal(st->block_errors, errs);
	assert_int_equal(st->short_blocks, shorts);
	assert_int_equal(st->parts, (uint64_t)R.ngot * P);
	for (unsigned int n = 0; n <= Q; n++) {
		if (st->blocks_per_submit[n] != bps[n])
			fail_msg("blocks_per_submit[%u] = %llu, fake saw %llu calls",
				 n, (unsigned long long)st->blocks_per_submit[n],
				 (unsigned long long)bps[n]);
		if (exact_inflight && st->inflight_at_submit[n] != ifl[n])
			fail_msg("inflight_at_submit[%u] = %llu, fake saw %llu",
				 n, (unsigned long long)st->inflight_at_submit[n],
				 (unsigned long long)ifl[n]);
	}
	free(bps);
	free(ifl);
}

/* --- call shapes ------------------------------------------------------------ */

/* One backend call: 'S' submit(pending a, returned b), 'R' reap(min a, max b, returned c). */
struct ev {
	char t;
	unsigned int a, b;
	int c;
};

static unsigned int push(struct ev *e, unsigned int n, char t, unsigned int a,
			 unsigned int b, int c)
{
	if (n == MAX_EV)
		fail_msg("call model too long");
	e[n].t = t;
	e[n].a = a;
	e[n].b = b;
	e[n].c = c;
	return n + 1;
}

/*
 * The calls design.md section 1 prescribes for one part of `nb` blocks
 * when every block completes at once and each reap returns at most
 * max(min_nr, limit) of them (limit 0: all that are asked for).
 */
static unsigned int model_part(struct ev *e, unsigned int n, uint64_t nb,
			       unsigned int Q, enum tswap_submit_mode sm,
			       enum tswap_window win, unsigned int limit)
{
	uint64_t next = 0;
	unsigned int inflight = 0, k, r;

	while (next < nb || inflight) {
		k = Q - inflight;
		if (k > nb - next)
			k = (unsigned int)(nb - next);
		if (win == TSWAP_WINDOW_SEQUENTIAL && inflight)
			k = 0;
		if (k && sm == TSWAP_SUBMIT_BLOCK)
			n = push(e, n, 'S', k, k, 0);
		for (unsigned int i = 0; k && sm == TSWAP_SUBMIT_SINGLE && i < k;
		     i++)
			n = push(e, n, 'S', 1, 1, 0);
		inflight += k;
		next += k;
		if (win == TSWAP_WINDOW_SEQUENTIAL) {
			n = push(e, n, 'R', inflight, inflight, (int)inflight);
			inflight = 0;
			continue;
		}
		r = inflight;
		if (limit && r > limit)
			r = limit;
		n = push(e, n, 'R', 1, inflight, (int)r);
		inflight -= r;
	}
	return n;
}

/* The calls a context made, in order. */
static unsigned int actual_calls(const struct fake_ctx_rec *r, struct ev *e)
{
	unsigned int n = 0, i = 0, j = 0;

	while (i < r->nsubmit || j < r->nreap) {
		if (j == r->nreap ||
		    (i < r->nsubmit && r->submits[i].seq < r->reaps[j].seq)) {
			n = push(e, n, 'S', r->submits[i].pending,
				 (unsigned int)r->submits[i].ret, 0);
			i++;
		} else {
			n = push(e, n, 'R', r->reaps[j].min_nr,
				 r->reaps[j].max_nr, r->reaps[j].ret);
			j++;
		}
	}
	return n;
}

static void print_calls(const char *what, const struct ev *e, unsigned int n)
{
	char line[512];
	size_t len = 0;

	print_message("# %s (%u calls):\n", what, n);
	for (unsigned int i = 0; i < n; i++) {
		if (e[i].t == 'S')
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" S%u=%d", e[i].a, (int)e[i].b);
		else
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" R(%u,%u)=%d", e[i].a, e[i].b,
						e[i].c);
		if (len > sizeof(line) - 40 || i + 1 == n) {
			print_message("#  %s\n", line);
			len = 0;
			line[0] = '\0';
		}
	}
}

static bool same_calls(const struct ev *a, unsigned int na, const struct ev *b,
		       unsigned int nb)
{
	if (na != nb)
		return false;
	for (unsigned int i = 0; i < na; i++) {
		if (a[i].t != b[i].t || a[i].a != b[i].a || a[i].b != b[i].b)
			return false;
		if (a[i].t == 'R' && a[i].c != b[i].c)
			return false;
	}
	return true;
}

static void check_calls(unsigned int ctx, const struct ev *want,
			unsigned int nwant)
{
	static struct ev got[MAX_EV];
	unsigned int ngot = actual_calls(fake_ctx(ctx), got);

	if (!same_calls(got, ngot, want, nwant)) {
		print_calls("expected", want, nwant);
		print_calls("scheduler made", got, ngot);
		fail_msg("ctx %u: backend calls differ from the model", ctx);
	}
}

/* Every context made exactly the calls of the model for its parts. */
static void check_shape(unsigned int limit)
{
	static struct ev want[MAX_EV];
	unsigned int P = R.conf.threads, Q = R.conf.be_conf.queue_depth;

	for (unsigned int c = 0; c < fake_nctx(); c++) {
		unsigned int n = 0;

		for (unsigned int i = 0; i < R.nqueued; i++) {
			uint64_t plen = R.ops[i].len / P;

			n = model_part(want, n,
				       (plen + R.conf.block_size - 1) /
					       R.conf.block_size,
				       Q, R.conf.submit, R.conf.window, limit);
		}
		check_calls(c, want, n);
	}
}

/* Invariants of any run: in flight <= Q; the window and submit rules. */
static void check_rules(void)
{
	unsigned int Q = R.conf.be_conf.queue_depth;

	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);

		assert_true(r->max_inflight <= Q);
		assert_true(r->max_busy <= Q);
		for (unsigned int i = 0; i < r->nsubmit; i++) {
			if (R.conf.submit == TSWAP_SUBMIT_SINGLE &&
			    r->submits[i].pending != 1)
				fail_msg("ctx %u submit call %u with %u pending in single mode",
					 c, i + 1, r->submits[i].pending);
		}
		for (unsigned int j = 0; j < r->nreap; j++) {
			const struct fake_reap *p = &r->reaps[j];

			/* Failed calls; polls ({0, 0}) may ask for min_nr 0. */
			if (p->ret < 0 || p->timeout)
				continue;
			assert_true(p->max_nr == p->inflight);
			if (R.conf.window == TSWAP_WINDOW_OVERLAP)
				assert_int_equal(p->min_nr, 1);
			else
				assert_int_equal(p->min_nr, p->max_nr);
		}
	}
}

/* --- the matrix: every submit x window x threads ------------------------------ */

enum variant {
	V_PLAIN,	/* blocks complete at once, reap returns all */
	V_SLOW,		/* reap returns one completion at a time */
	V_FAULTS,	/* partial submits, EAGAIN, EINTR on every context */
};

struct combo {
	enum tswap_submit_mode submit;
	enum tswap_window window;
	unsigned int threads;
	enum variant var;
	bool handoff;		/* conf.handoff (set by setup()) */
};

static bool combo_handoff(const struct combo *cb)
{
	return cb->handoff;
}

/*
 * Where the I/O ran: every backend call on the test's (the caller's)
 * thread inline, none of them with a worker thread (P > 1, or handoff).
 */
static void check_thread_placement(void)
{
	bool threaded = R.conf.threads > 1 || R.conf.handoff;

	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);
		unsigned int calls = r->nprep + r->nsubmit + r->nreap;

		if (r->main_calls != (threaded ? 0 : calls))
			fail_msg("ctx %u: %u of %u backend calls on the caller's thread, want %s",
				 c, r->main_calls, calls, threaded ? "none" : "all");
	}
}

/*
 * Three ops per run, queued before one kick: a write of 10 full blocks per
 * part, a read of 9 blocks and a 4 KiB tail per part at a lower offset, and
 * a read of fewer blocks than Q per part.  Q = 4, B = 16 KiB.
 */
static void test_matrix(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;
	uint64_t l0 = P * 10 * B16, l1 = P * (9 * B16 + 4096), l2 = P * 3 * B16;

	if (cb->var == V_SLOW)
		fake_set_reap_limit(1);
	if (cb->var == V_FAULTS) {
		fake_script_submit(FAKE_ANY_CTX, 1, 1);
		fake_script_submit(FAKE_ANY_CTX, 2, -EAGAIN);
		fake_script_submit(FAKE_ANY_CTX, 3, -EINTR);
		fake_script_submit(FAKE_ANY_CTX, 5, 2);
		fake_script_submit(FAKE_ANY_CTX, 6, -EAGAIN);
		fake_script_submit(FAKE_ANY_CTX, 7, 0);
		fake_script_reap(FAKE_ANY_CTX, 2, -EINTR);
	}
	R.timing = cb->var == V_SLOW;
	start(cb->submit, cb->window, P, 4, B16);
	add_op(1024 * KiB * P, l0, TSWAP_WRITE);
	add_op(0, l1, TSWAP_READ);
	add_op(64 * 1024 * KiB, l2, TSWAP_READ);
	queue_kick();
	assert_int_equal(tswap_sched_busy(R.s), 3);
	reap_all();
	finish();

	check_got_once();
	if (P == 1)
		check_fifo_order();
	for (unsigned int i = 0; i < R.nops; i++)
		check_op_ok(&R.ops[i]);
	check_blocks(B16, P, all_ops());
	check_ctx_parts(P);
	check_drained();
	check_rules();
	check_thread_placement();
	check_stats(P, cb->var != V_FAULTS);
	if (cb->var != V_FAULTS)
		check_shape(cb->var == V_SLOW ? 1 : 0);
	if (R.timing) {
		assert_int_equal(R.st.submit_lat.count, R.st.submit_calls);
		assert_int_equal(R.st.wait_lat.count, R.st.wait_calls);
		assert_int_equal(R.st.op_lat.count, R.nops);
	}
}

/* --- exact shapes, spelled out ------------------------------------------------ */

static void run_one_op(enum tswap_submit_mode sm, enum tswap_window win,
		       unsigned int Q, uint64_t len)
{
	start(sm, win, 1, Q, B16);
	add_op(0, len, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_drained();
	check_stats(1, true);
}

/* Q = 4, 10 blocks, sequential, block: submits of 4, 4, 2, each waited for. */
static void test_shape_seq_block(void **state)
{
	static const struct ev want[] = {
		{ 'S', 4, 4, 0 }, { 'R', 4, 4, 4 },
		{ 'S', 4, 4, 0 }, { 'R', 4, 4, 4 },
		{ 'S', 2, 2, 0 }, { 'R', 2, 2, 2 },
	};

	(void)state;
	run_one_op(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 4, 10 * B16);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(R.st.blocks_per_submit[4], 2);
	assert_int_equal(R.st.blocks_per_submit[2], 1);
}

/* Q = 4, 10 blocks, sequential, single: one block per submit call. */
static void test_shape_seq_single(void **state)
{
	static const struct ev want[] = {
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'S', 1, 1, 0 },
		{ 'S', 1, 1, 0 }, { 'R', 4, 4, 4 },
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'S', 1, 1, 0 },
		{ 'S', 1, 1, 0 }, { 'R', 4, 4, 4 },
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'R', 2, 2, 2 },
	};

	(void)state;
	run_one_op(TSWAP_SUBMIT_SINGLE, TSWAP_WINDOW_SEQUENTIAL, 4, 10 * B16);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(R.st.blocks_per_submit[1], 10);
}

/* Overlap, reap returning one at a time: the window is refilled to Q. */
static void test_shape_overlap_refill(void **state)
{
	static const struct ev want[] = {
		{ 'S', 4, 4, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },
		{ 'R', 1, 3, 1 }, { 'R', 1, 2, 1 }, { 'R', 1, 1, 1 },
	};

	(void)state;
	fake_set_reap_limit(1);
	run_one_op(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 4, 10 * B16);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(fake_ctx(0)->max_inflight, 4);
}

/* Overlap, reap returning two at a time, single submit. */
static void test_shape_overlap_single(void **state)
{
	static const struct ev want[] = {
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'S', 1, 1, 0 },
		{ 'R', 1, 3, 2 },
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'R', 1, 3, 2 },
		{ 'S', 1, 1, 0 }, { 'S', 1, 1, 0 }, { 'R', 1, 3, 2 },
		{ 'R', 1, 1, 1 },
	};

	(void)state;
	fake_set_reap_limit(2);
	run_one_op(TSWAP_SUBMIT_SINGLE, TSWAP_WINDOW_OVERLAP, 3, 7 * B16);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
}

/* Q = 1: strictly one block at a time in every mode. */
static void test_shape_q1(void **state)
{
	static const struct ev want[] = {
		{ 'S', 1, 1, 0 }, { 'R', 1, 1, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 1, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 1, 1 },
	};

	(void)state;
	run_one_op(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 2 * B16 + 4096);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
}

/* Q larger than the part: one round of all blocks. */
static void test_shape_q_over_blocks(void **state)
{
	static const struct ev want[] = {
		{ 'S', 3, 3, 0 }, { 'R', 3, 3, 3 },
	};

	(void)state;
	run_one_op(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 8, 3 * B16);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
}

/* With P == 1, kick() submits the first round and waits for nothing. */
static void test_kick_submits_first_round(void **state)
{
	(void)state;
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	queue_kick();
	assert_int_equal(fake_ctx(0)->nsubmit, 1);
	assert_int_equal(fake_ctx(0)->submits[0].pending, 4);
	assert_int_equal(fake_ctx(0)->nreap, 0);
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
}

/*
 * The hand-off (DeepSpeed's async_pread/async_pwrite at
 * intra_op_parallelism=1): kick() only wakes the worker, which makes every
 * backend call; the call shapes are those of the inline run; the worker's
 * CPU time is counted (never with the inline worker, whose CPU is fio's).
 */
static void test_handoff_one_worker(void **state)
{
	static struct ev inl[MAX_EV];
	unsigned int ninl;

	(void)state;
	/* Inline first: the reference shape, all calls on this thread. */
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, 7 * B16 + 4096, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_thread_placement();
	assert_int_equal(R.st.worker_usr_ns + R.st.worker_sys_ns, 0);
	ninl = actual_calls(fake_ctx(0), inl);
	assert_true(ninl > 2);

	tswap_stats_free(&R.st);
	fake_reset();
	memset(&R, 0, sizeof(R));
	R.handoff = true;
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, 7 * B16 + 4096, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	assert_int_equal(fake_nctx(), 1);
	assert_int_equal(fake_ctx(0)->main_calls, 0);
	check_thread_placement();
	check_got_once();
	check_fifo_order();
	check_op_ok(&R.ops[0]);
	check_op_ok(&R.ops[1]);
	check_blocks(B16, 1, all_ops());
	check_stats(1, true);
	check_calls(0, inl, ninl);
}

/*
 * The worker's waits are DeepSpeed's (deepspeed_aio_common.cpp,
 * _do_io_complete called from do_aio_operation_overlap and
 * do_aio_operation_sequential): io_pgetevents with a NULL timeout,
 * min_nr 1 and max_nr = blocks in flight (overlap) or min_nr = max_nr =
 * the batch (sequential), and after each overlap wait ONE refill of
 * exactly what was reaped (prep_iocbs(request_iocbs - n_pending_iocbs)),
 * in one call with block submit.  A timeout the caller gives
 * tswap_sched_reap() (fio's getevents) is never passed on to the backend:
 * issue 15 compared the two sides' wait counts on a disk.  Q = 32,
 * 64 blocks (tensor 64 x B), reaps returning at most 5.
 */
static void test_deepspeed_waits(void **state)
{
	const struct combo *cb = *state;
	static const struct timespec fio_timeout = { 5, 0 };
	unsigned int Q = 32;

	fake_set_reap_limit(5);
	start(cb->submit, cb->window, 1, Q, B16);
	add_op(0, 64 * B16, TSWAP_READ);
	add_op(64 * B16, 64 * B16, TSWAP_WRITE);
	queue_kick();
	while (R.ngot < R.nqueued) {
		int n = tswap_sched_reap(R.s, 1, R.nqueued - R.ngot, &fio_timeout,
					 R.got + R.ngot);

		assert_true(n >= 0);
		R.ngot += (unsigned int)n;
	}
	finish();
	check_op_ok(&R.ops[0]);
	check_op_ok(&R.ops[1]);
	check_rules();
	check_shape(5);
	for (unsigned int j = 0; j < fake_ctx(0)->nreap; j++) {
		const struct fake_reap *p = &fake_ctx(0)->reaps[j];

		if (p->timeout)
			fail_msg("wait %u was given a timeout (DeepSpeed: nullptr)", j + 1);
	}
	if (cb->window == TSWAP_WINDOW_OVERLAP && cb->submit == TSWAP_SUBMIT_BLOCK) {
		const struct fake_ctx_rec *r = fake_ctx(0);

		unsigned int full = 0;

		/* Per op of 64 blocks: 32, then refills of the 5 reaped. */
		for (unsigned int i = 0; i < r->nsubmit; i++) {
			full += r->submits[i].pending == Q;
			assert_true(r->submits[i].pending == Q || r->submits[i].pending <= 5);
		}
		assert_int_equal(full, 2);
	}
}

/* --- tails ------------------------------------------------------------------- */

static void test_tail_block(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	start(cb->submit, cb->window, P, 4, B16);
	/* Parts of 2 blocks + 4 KiB, and parts smaller than one block. */
	add_op(0, P * (2 * B16 + 4096), TSWAP_READ);
	add_op(1024 * KiB, P * 8192, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	for (unsigned int i = 0; i < R.nops; i++)
		check_op_ok(&R.ops[i]);
	check_blocks(B16, P, all_ops());
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);

		/* 2 full blocks and a tail, then one short part-sized block. */
		assert_int_equal(r->nblock, 4);
		assert_int_equal(r->blocks[0].len, B16);
		assert_int_equal(r->blocks[1].len, B16);
		assert_int_equal(r->blocks[2].len, 4096);
		assert_int_equal(r->blocks[3].len, 8192);
	}
	check_shape(0);
}

/* --- FIFO -------------------------------------------------------------------- */

/* Eight ops of different sizes at descending offsets, reaped one by one. */
static void test_fifo_many_ops(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	start(cb->submit, cb->window, P, 4, B16);
	for (unsigned int i = 0; i < 8; i++)
		add_op_file((8 - i) * 1024 * KiB, P * (i + 1) * 12 * KiB,
			    i % 2 ? TSWAP_READ : TSWAP_WRITE, TEST_FD + i % 3,
			    i % 3);
	queue_kick();
	for (unsigned int i = 0; i < 8; i++) {
		reap(1, 1);
		assert_int_equal(tswap_sched_busy(R.s), 7 - i);
	}
	finish();
	check_got_once();
	/* With P > 1, the fake checked FIFO order on every context. */
	if (P == 1)
		check_fifo_order();
	for (unsigned int i = 0; i < R.nops; i++)
		check_op_ok(&R.ops[i]);
	check_blocks(B16, P, all_ops());
	check_ctx_parts(P);
	check_stats(P, true);
	check_shape(0);
}

/* fio's pattern: queue, commit, getevents some, queue more, commit. */
static void test_queue_while_busy(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	start(cb->submit, cb->window, P, 4, B16);
	add_op(0, P * 6 * B16, TSWAP_WRITE);
	add_op(4096 * KiB, P * 5 * B16, TSWAP_WRITE);
	queue_kick();
	reap(1, 2);
	add_op(8192 * KiB, P * 7 * B16, TSWAP_READ);
	add_op(2048 * KiB, P * 4 * B16, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	if (P == 1)
		check_fifo_order();
	for (unsigned int i = 0; i < R.nops; i++)
		check_op_ok(&R.ops[i]);
	check_blocks(B16, P, all_ops());
	check_ctx_parts(P);
	check_stats(P, true);
}

/* Swap-out then swap-in of the same tensor: same file range, two buffers. */
static void test_same_offset_write_read(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	start(cb->submit, cb->window, P, 4, B16);
	add_op(4096 * KiB, P * 5 * B16, TSWAP_WRITE);
	add_op(4096 * KiB, P * 5 * B16, TSWAP_READ);
	add_op(4096 * KiB, P * 5 * B16, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	if (P == 1)
		check_fifo_order();
	for (unsigned int i = 0; i < R.nops; i++)
		check_op_ok(&R.ops[i]);
	check_blocks(B16, P, all_ops());
	check_ctx_parts(P);
	check_shape(0);
}

/* --- errors ------------------------------------------------------------------ */

/*
 * EIO on block 5 of the last part of op 0 (Q = 4, sequential): the batch
 * holding it (blocks 4-7) is drained, blocks 8-9 of that part are never
 * submitted, the other parts and the next op complete normally.
 */
static void test_eio_middle(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;
	uint64_t plen = 10 * B16;
	struct tswap_op *op0, *op1;

	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, P, 4, B16);
	op0 = add_op(1024 * KiB, P * plen, TSWAP_READ);
	op1 = add_op(8192 * KiB, P * plen, TSWAP_READ);
	fake_fault_block(op0->offset + (P - 1) * plen + 5 * B16, -EIO);
	queue_kick();
	reap_all();
	finish();

	check_got_once();
	assert_int_equal(op0->error, EIO);
	check_op_ok(op1);
	check_blocks(B16, P, 1ull << 1);
	check_drained();
	check_stats(P, true);
	assert_int_equal(R.st.block_errors, 1);
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		const struct fake_ctx_rec *r = fake_ctx(c);
		unsigned int n0 = 0;
		bool bad = false;

		for (unsigned int k = 0; k < r->nblock; k++) {
			n0 += r->blocks[k].op == 0;
			bad |= r->blocks[k].res == -EIO;
		}
		assert_int_equal(n0, bad ? 8 : 10);
	}
}

/* Overlap: after an error no block is submitted, those in flight are reaped. */
static void test_error_drains_inflight(void **state)
{
	static const struct ev want[] = {
		{ 'S', 4, 4, 0 }, { 'R', 1, 4, 1 },
		{ 'S', 1, 1, 0 }, { 'R', 1, 4, 1 },	/* block 1: EIO */
		{ 'R', 1, 3, 1 }, { 'R', 1, 2, 1 }, { 'R', 1, 1, 1 },
	};

	(void)state;
	fake_set_reap_limit(1);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	fake_fault_block(1 * B16, -EIO);
	queue_kick();
	reap_all();
	finish();
	assert_int_equal(R.ops[0].error, EIO);
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
	check_drained();
	check_stats(1, true);
}

/* The first error reaped is the one reported. */
static void test_first_error_wins(void **state)
{
	(void)state;
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	fake_fault_block(1 * B16, -ENOSPC);
	fake_fault_block(2 * B16, -EIO);
	queue_kick();
	reap_all();
	finish();
	assert_int_equal(R.ops[0].error, ENOSPC);
	assert_int_equal(fake_ctx(0)->nblock, 4);
	assert_int_equal(R.st.block_errors, 2);
	check_stats(1, true);
}

/* An error on every part of an op, the op after it is clean. */
static void test_error_every_part(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;
	uint64_t plen = 6 * B16;
	struct tswap_op *op0;

	if (cb->window == TSWAP_WINDOW_OVERLAP)
		fake_set_reap_limit(1);	/* errors land with blocks in flight */
	start(cb->submit, cb->window, P, 4, B16);
	op0 = add_op(0, P * plen, TSWAP_WRITE);
	add_op(4096 * KiB, P * plen, TSWAP_WRITE);
	for (unsigned int i = 0; i < P; i++)
		fake_fault_block(op0->offset + i * plen + i % 6 * B16, -EIO);
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	assert_int_equal(op0->error, EIO);
	check_op_ok(&R.ops[1]);
	check_blocks(B16, P, 1ull << 1);
	check_drained();
	check_rules();
	check_stats(P, true);
	assert_int_equal(R.st.block_errors, P);
}

/* A hard submit error (-EINVAL): the op fails, prepared blocks discarded. */
static void test_submit_hard_error(void **state)
{
	(void)state;
	fake_script_submit(0, 2, -EINVAL);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, 10 * B16, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	check_fifo_order();
	assert_int_equal(R.ops[0].error, EINVAL);
	check_op_ok(&R.ops[1]);
	assert_true(fake_ctx(0)->ndiscard >= 1);
	assert_int_equal(fake_ctx(0)->discarded, 4);
	check_blocks(B16, 1, 1ull << 1);
	check_drained();
	check_stats(1, true);
}

/* A hard submit error with blocks in flight: they are drained first. */
static void test_submit_hard_error_inflight(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	fake_set_reap_limit(1);
	fake_script_submit(FAKE_ANY_CTX, 3, -EINVAL);
	start(TSWAP_SUBMIT_SINGLE, TSWAP_WINDOW_OVERLAP, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, P * 4 * B16, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	assert_int_equal(R.ops[0].error, EINVAL);
	check_op_ok(&R.ops[1]);
	check_blocks(B16, P, 1ull << 1);
	check_drained();
	check_rules();
	check_stats(P, true);
	for (unsigned int c = 0; c < fake_nctx(); c++) {
		/* Two blocks of op 0 accepted, the third discarded. */
		assert_int_equal(fake_ctx(c)->discarded, 1);
		assert_int_equal(fake_ctx(c)->nblock, 2 + 4);
	}
}

/* A hard reap error: the op fails, nothing hangs. */
static void test_reap_hard_error(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	fake_script_reap(FAKE_ANY_CTX, 1, -EFAULT);
	start(cb->submit, cb->window, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_READ);
	add_op(1024 * KiB, P * 10 * B16, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	assert_int_equal(R.ops[0].error, EFAULT);
	check_blocks(B16, P, 0);
}

/*
 * A hard error on the only queued op: tswap_sched_reap(1, 1, NULL) must
 * still return that op (with its error), not 0.
 */
static void test_submit_hard_error_last_op(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	fake_script_submit(FAKE_ANY_CTX, 2, -EINVAL);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_WRITE);
	queue_kick();
	reap(1, 1);
	finish();
	assert_int_equal(R.ops[0].error, EINVAL);
	check_blocks(B16, P, 0);
	check_drained();
	check_stats(P, true);
}

static void test_reap_hard_error_last_op(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	fake_script_reap(FAKE_ANY_CTX, 2, -EFAULT);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_READ);
	queue_kick();
	reap(1, 1);
	finish();
	assert_int_equal(R.ops[0].error, EFAULT);
	check_blocks(B16, P, 0);
}

/* --- timeouts, polling, destroy while busy -------------------------------------- */

/*
 * A generous timeout only bounds the wait: reap(min 1) returns the op once
 * it is done, well before the timeout, and never 0 before the timeout.
 */
static void test_reap_timeout_waits(void **state)
{
	const struct combo *cb = *state;
	const struct timespec ts = { 5, 0 };
	unsigned int P = cb->threads;
	uint64_t t0;
	int n;

	start(cb->submit, cb->window, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_READ);
	add_op(1024 * KiB, P * 10 * B16, TSWAP_READ);
	queue_kick();
	t0 = tswap_now_ns();
	n = tswap_sched_reap(R.s, 2, 2, &ts, R.got);
	if (n != 2)
		fail_msg("reap(min 2, max 2, timeout 5 s) returned %d after %llu us, want 2",
			 n, (unsigned long long)(tswap_now_ns() - t0) / 1000);
	R.ngot = 2;
	assert_true(tswap_now_ns() - t0 < 4000000000ull);
	finish();
	check_got_once();
	check_op_ok(&R.ops[0]);
	check_op_ok(&R.ops[1]);
	check_blocks(B16, P, all_ops());
}

/* Polling ({0, 0}) never blocks and eventually returns every op. */
static void test_reap_poll(void **state)
{
	const struct combo *cb = *state;
	const struct timespec zero = { 0, 0 };
	unsigned int P = cb->threads, polls = 0;
	uint64_t t0 = tswap_now_ns();

	start(cb->submit, cb->window, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, P * 3 * B16, TSWAP_READ);
	queue_kick();
	while (R.ngot < 2) {
		int n = tswap_sched_reap(R.s, 0, 2 - R.ngot, &zero,
					 R.got + R.ngot);

		assert_in_range(n, 0, 2 - R.ngot);
		R.ngot += (unsigned int)n;
		polls++;
		if (tswap_now_ns() - t0 > 5000000000ull)
			fail_msg("polling: %u ops after %u polls in 5 s", R.ngot,
				 polls);
		if (!n)
			usleep(100);
	}
	finish();
	check_got_once();
	if (P == 1)
		check_fifo_order();
	check_op_ok(&R.ops[0]);
	check_op_ok(&R.ops[1]);
	check_blocks(B16, P, all_ops());
	check_rules();
}

/* Destroying a scheduler with ops queued and in flight does not hang. */
static void test_destroy_busy(void **state)
{
	const struct combo *cb = *state;
	unsigned int P = cb->threads;

	start(cb->submit, cb->window, P, 4, B16);
	add_op(0, P * 10 * B16, TSWAP_WRITE);
	add_op(1024 * KiB, P * 10 * B16, TSWAP_WRITE);
	add_op(2048 * KiB, P * 10 * B16, TSWAP_WRITE);
	queue_kick();
	tswap_sched_destroy(R.s);
	R.s = NULL;
	fake_assert_clean();
	assert_int_equal(fake_live_ctx(), 0);
	check_blocks(B16, P, 0);
}

/* --- short transfers ----------------------------------------------------------- */

static void run_short(unsigned int P, uint64_t plen, const uint64_t *rel,
		      const int64_t *res, unsigned int n, uint64_t want_done)
{
	struct tswap_op *op;
	uint64_t lost = 0;

	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, P, 4, B16);
	op = add_op(2048 * KiB, P * plen, TSWAP_READ);
	add_op(0, P * plen, TSWAP_READ);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t bl = plen - rel[i] % plen < B16 ? plen - rel[i] % plen
							   : B16;

		fake_fault_block(op->offset + rel[i], res[i]);
		lost += bl - (uint64_t)res[i];
	}
	queue_kick();
	reap_all();
	finish();
	check_got_once();
	assert_int_equal(op->error, 0);
	if (op->done != want_done)
		fail_msg("short op: done %llu, want %llu (resid %llu)",
			 (unsigned long long)op->done,
			 (unsigned long long)want_done,
			 (unsigned long long)(op->len - want_done));
	check_op_ok(&R.ops[1]);
	check_blocks(B16, P, 1ull << 1);
	check_drained();
	check_stats(P, true);
	assert_int_equal(R.st.short_blocks, n);
	assert_int_equal(R.st.block_errors, 0);
	assert_int_equal(R.st.bytes, R.ops[0].len + R.ops[1].len - lost);
}

static void test_short_block(void **state)
{
	static const uint64_t rel[] = { 6 * B16 };
	static const int64_t res[] = { 2048 };

	(void)state;
	run_short(1, 10 * B16, rel, res, 1, 6 * B16 + 2048);
}

static void test_short_zero(void **state)
{
	static const uint64_t rel[] = { 3 * B16 };
	static const int64_t res[] = { 0 };

	(void)state;
	run_short(1, 10 * B16, rel, res, 1, 3 * B16);
}

static void test_short_tail(void **state)
{
	static const uint64_t rel[] = { 4 * B16 };
	static const int64_t res[] = { 1024 };

	(void)state;
	/* The tail block of 4 KiB transfers only 1 KiB. */
	run_short(1, 4 * B16 + 4096, rel, res, 1, 4 * B16 + 1024);
}

/* Two short blocks in different parts: done is the lower gap. */
static void test_short_two_parts(void **state)
{
	const uint64_t plen = 10 * B16;
	const uint64_t rel[] = { plen + 1 * B16, 7 * B16 };
	const int64_t res[] = { 4096, 0 };

	(void)state;
	run_short(2, plen, rel, res, 2, 7 * B16);
}

static void test_short_last_part(void **state)
{
	const uint64_t plen = 5 * B16;
	const uint64_t rel[] = { 3 * plen + 2 * B16 };
	const int64_t res[] = { 512 };

	(void)state;
	run_short(4, plen, rel, res, 1, 3 * plen + 2 * B16 + 512);
}

/* --- EAGAIN, EINTR, partial submits --------------------------------------------- */

/* The reap call right after submit call `i` (from 0), or NULL. */
static const struct fake_reap *reap_after(const struct fake_ctx_rec *r,
					  unsigned int i)
{
	for (unsigned int j = 0; j < r->nreap; j++)
		if (r->reaps[j].seq == r->submits[i].seq + 1)
			return &r->reaps[j];
	return NULL;
}

/* EAGAIN with blocks in flight: reap first, then retry. */
static void test_eagain_inflight(void **state)
{
	const struct fake_ctx_rec *r;

	(void)state;
	fake_set_reap_limit(1);
	fake_script_submit(0, 2, -EAGAIN);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_drained();
	check_stats(1, false);
	assert_int_equal(R.st.submit_eagain, 1);
	r = fake_ctx(0);
	assert_int_equal(r->submits[1].ret, -EAGAIN);
	assert_true(r->submits[1].inflight_before > 0);
	if (!reap_after(r, 1))
		fail_msg("submit returned EAGAIN with %u in flight, the next call was not a reap",
			 r->submits[1].inflight_before);
}

/* EAGAIN with nothing in flight: retried (after a short sleep). */
static void test_eagain_idle(void **state)
{
	const struct fake_ctx_rec *r;
	uint64_t t0;

	(void)state;
	fake_script_submit(0, 2, -EAGAIN);
	fake_script_submit(0, 3, -EAGAIN);
	fake_script_submit(0, 4, -EAGAIN);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	t0 = tswap_now_ns();
	queue_kick();
	reap_all();
	assert_true(tswap_now_ns() - t0 < 2000000000ull);
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_stats(1, false);
	assert_int_equal(R.st.submit_eagain, 3);
	r = fake_ctx(0);
	assert_int_equal(r->nsubmit, 6);
	for (unsigned int i = 1; i <= 4; i++) {
		assert_int_equal(r->submits[i].inflight_before, 0);
		assert_int_equal(r->submits[i].pending, 4);
		assert_int_equal(r->submits[i].seq, r->submits[i - 1].seq +
							     (i == 1 ? 2 : 1));
	}
}

/* EAGAIN in single mode: the same one block is retried. */
static void test_eagain_single(void **state)
{
	(void)state;
	fake_set_reap_limit(1);
	fake_script_submit(0, 3, -EAGAIN);
	fake_script_submit(0, 6, -EAGAIN);
	start(TSWAP_SUBMIT_SINGLE, TSWAP_WINDOW_OVERLAP, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_drained();
	check_rules();
	check_stats(1, false);
	assert_int_equal(R.st.submit_eagain, 2);
}

/* A partial submit goes on with the rest, before any wait. */
static void test_partial_submit(void **state)
{
	static const struct ev want[] = {
		{ 'S', 4, 1, 0 }, { 'S', 3, 2, 0 }, { 'S', 1, 1, 0 },
		{ 'R', 4, 4, 4 },
		{ 'S', 4, 4, 0 }, { 'R', 4, 4, 4 },
		{ 'S', 2, 2, 0 }, { 'R', 2, 2, 2 },
	};

	(void)state;
	fake_script_submit(0, 1, 1);
	fake_script_submit(0, 2, 2);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 1, 4, B16);
	add_op(0, 10 * B16, TSWAP_WRITE);
	queue_kick();
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_calls(0, want, sizeof(want) / sizeof(want[0]));
	check_stats(1, true);
	assert_int_equal(R.st.blocks_per_submit[1], 2);
	assert_int_equal(R.st.blocks_per_submit[2], 2);
	assert_int_equal(R.st.blocks_per_submit[4], 1);
}

/* EINTR from submit and from reap: retried, nothing lost. */
static void test_eintr(void **state)
{
	const struct fake_ctx_rec *r;

	(void)state;
	fake_script_submit(0, 1, -EINTR);
	fake_script_reap(0, 1, -EINTR);
	fake_script_reap(0, 2, -EINTR);
	start(TSWAP_SUBMIT_BLOCK, TSWAP_WINDOW_SEQUENTIAL, 1, 4, B16);
	add_op(0, 6 * B16, TSWAP_READ);
	queue_kick();
	reap_all();
	finish();
	check_op_ok(&R.ops[0]);
	check_blocks(B16, 1, all_ops());
	check_drained();
	check_stats(1, false);
	r = fake_ctx(0);
	assert_int_equal(r->submits[1].pending, 4);
	assert_int_equal(r->submits[1].ret, 4);
	assert_int_equal(R.st.submit_eagain, 0);
	assert_int_equal(R.st.wait_calls, r->nreap);
}

/* --- setup ---------------------------------------------------------------------- */

static void test_setup_fails(void **state)
{
	const struct combo *cb = *state;
	struct tswap_sched_conf conf = {
		.be = &fake_backend,
		.be_conf = { .queue_depth = 4 },
		.block_size = B16,
		.threads = cb->threads,
		.max_ops = 4,
	};
	unsigned int nth = cb->threads > 2 ? 3 : cb->threads;
	struct tswap_sched *s = (struct tswap_sched *)&conf;
	char err[256] = "";
	int ret;

	fake_fail_setup(nth, -EAGAIN);
	ret = tswap_sched_create(&conf, &s, err, sizeof(err));
	assert_true(ret < 0);
	assert_null(s);
	assert_true(strlen(err) > 0);
	print_message("# setup failure %d: %s\n", ret, err);
	assert_int_equal(fake_setup_calls(), nth);
	/* The contexts set up before the failure are torn down. */
	assert_int_equal(fake_nctx(), nth - 1);
	assert_int_equal(fake_live_ctx(), 0);
	fake_assert_clean();
}

/* A configuration with a zero is refused with a reason, nothing set up. */
static void test_create_bad_conf(void **state)
{
	static const char *const what[] = { "threads", "queue_depth",
					    "block_size", "max_ops" };

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		struct tswap_sched_conf conf = {
			.be = &fake_backend,
			.be_conf = { .queue_depth = 4 },
			.block_size = B16,
			.threads = 2,
			.max_ops = 4,
		};
		struct tswap_sched *s = NULL;
		char err[256] = "";
		int ret;

		if (i == 0)
			conf.threads = 0;
		else if (i == 1)
			conf.be_conf.queue_depth = 0;
		else if (i == 2)
			conf.block_size = 0;
		else
			conf.max_ops = 0;
		ret = tswap_sched_create(&conf, &s, err, sizeof(err));
		if (ret >= 0 || !err[0])
			fail_msg("%s = 0: tswap_sched_create returned %d, err \"%s\"",
				 what[i], ret, err);
		assert_null(s);
		assert_int_equal(fake_live_ctx(), 0);
	}
	fake_assert_clean();
}

/* --- main ---------------------------------------------------------------------- */

#define SUB_block TSWAP_SUBMIT_BLOCK
#define SUB_single TSWAP_SUBMIT_SINGLE
#define WIN_seq TSWAP_WINDOW_SEQUENTIAL
#define WIN_ovl TSWAP_WINDOW_OVERLAP
#define VAR_plain V_PLAIN
#define VAR_slow V_SLOW
#define VAR_faults V_FAULTS

#define T(f, name, sub, win, p, var)                                        \
	{ #f "_" name, f, setup, teardown,                                   \
	  &(struct combo){ SUB_##sub, WIN_##win, p, VAR_##var, false } }
#define M(sub, win, p, var) \
	T(test_matrix, #sub "_" #win "_p" #p "_" #var, sub, win, p, var)
#define M_P(sub, win, var) \
	M(sub, win, 1, var), M(sub, win, 2, var), M(sub, win, 4, var)
#define M_ALL(var)                                                          \
	M_P(block, seq, var), M_P(block, ovl, var), M_P(single, seq, var),   \
		M_P(single, ovl, var)
#define BY_P(f, sub, win)                                                   \
	T(f, #sub "_" #win "_p1", sub, win, 1, plain),                      \
		T(f, #sub "_" #win "_p2", sub, win, 2, plain),              \
		T(f, #sub "_" #win "_p4", sub, win, 4, plain)
#define U(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
/* P == 1 with the hand-off to a worker thread. */
#define TH(f, name, sub, win, var)                                          \
	{ #f "_" name "_handoff", f, setup, teardown,                        \
	  &(struct combo){ SUB_##sub, WIN_##win, 1, VAR_##var, true } }
#define MH(sub, win, var) \
	TH(test_matrix, #sub "_" #win "_p1_" #var, sub, win, var)
#define MH_ALL(var)                                                         \
	MH(block, seq, var), MH(block, ovl, var), MH(single, seq, var),      \
		MH(single, ovl, var)
#define BY_H(f, sub, win) TH(f, #sub "_" #win "_p1", sub, win, plain)

int main(void)
{
	const struct CMUnitTest tests[] = {
		M_ALL(plain),
		M_ALL(slow),
		M_ALL(faults),
		MH_ALL(plain),
		MH_ALL(slow),
		MH_ALL(faults),
		U(test_handoff_one_worker),
		BY_H(test_deepspeed_waits, block, ovl),
		BY_H(test_deepspeed_waits, block, seq),
		BY_H(test_deepspeed_waits, single, ovl),
		BY_H(test_deepspeed_waits, single, seq),
		BY_H(test_fifo_many_ops, block, ovl),
		BY_H(test_queue_while_busy, single, ovl),
		BY_H(test_eio_middle, block, seq),
		BY_H(test_reap_hard_error_last_op, block, ovl),
		BY_H(test_reap_timeout_waits, single, ovl),
		BY_H(test_reap_poll, block, ovl),
		BY_H(test_destroy_busy, block, ovl),
		BY_H(test_destroy_busy, single, seq),
		BY_H(test_setup_fails, block, ovl),
		U(test_shape_seq_block),
		U(test_shape_seq_single),
		U(test_shape_overlap_refill),
		U(test_shape_overlap_single),
		U(test_shape_q1),
		U(test_shape_q_over_blocks),
		U(test_kick_submits_first_round),
		BY_P(test_tail_block, single, seq),
		BY_P(test_tail_block, block, ovl),
		BY_P(test_fifo_many_ops, block, ovl),
		BY_P(test_fifo_many_ops, single, seq),
		BY_P(test_same_offset_write_read, block, ovl),
		BY_P(test_queue_while_busy, block, seq),
		BY_P(test_queue_while_busy, single, ovl),
		BY_P(test_eio_middle, block, seq),
		U(test_error_drains_inflight),
		U(test_first_error_wins),
		BY_P(test_error_every_part, block, ovl),
		BY_P(test_error_every_part, single, seq),
		U(test_submit_hard_error),
		BY_P(test_reap_hard_error, block, seq),
		BY_P(test_submit_hard_error_last_op, block, seq),
		BY_P(test_submit_hard_error_inflight, single, ovl),
		BY_P(test_reap_hard_error_last_op, block, ovl),
		BY_P(test_reap_timeout_waits, block, seq),
		BY_P(test_reap_timeout_waits, single, ovl),
		BY_P(test_reap_poll, block, ovl),
		BY_P(test_reap_poll, single, seq),
		BY_P(test_destroy_busy, block, ovl),
		BY_P(test_destroy_busy, single, seq),
		U(test_short_block),
		U(test_short_zero),
		U(test_short_tail),
		U(test_short_two_parts),
		U(test_short_last_part),
		U(test_eagain_inflight),
		U(test_eagain_idle),
		U(test_eagain_single),
		U(test_partial_submit),
		U(test_eintr),
		BY_P(test_setup_fails, block, ovl),
		U(test_create_bad_conf),
	};
	int ret;

	signal(SIGALRM, watchdog);
	arena = aligned_alloc(4096, ARENA_LEN);
	if (!arena)
		return 1;
	ret = cmocka_run_group_tests_name("sched", tests, NULL, NULL);
	free(arena);
	return ret;
}
