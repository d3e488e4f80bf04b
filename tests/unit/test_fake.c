// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_fake.c - the fake backend itself: its completion model, its scripts,
 * and that it catches each scheduler bug it is meant to catch (so that a
 * green test_sched means something).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_backend.h"

#define BS 4096u

static uint8_t arena[64 * BS] __attribute__((aligned(4096)));

static int setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

static void *new_ctx(unsigned int Q)
{
	struct tswap_be_conf conf = {
		.queue_depth = Q,
		.buf_base = arena,
		.buf_len = sizeof(arena),
	};
	void *ctx = NULL;

	assert_int_equal(fake_backend.setup(&conf, &ctx), 0);
	assert_non_null(ctx);
	return ctx;
}

/* An op of n blocks at file offset off, buffer at arena block `at`. */
static struct tswap_op mkop(unsigned int at, uint64_t off, unsigned int n)
{
	struct tswap_op op;

	memset(&op, 0, sizeof(op));
	op.buf = arena + at * BS;
	op.offset = off;
	op.len = (uint64_t)n * BS;
	op.dir = TSWAP_READ;
	op.fd = 5;
	return op;
}

static void prep(void *ctx, const struct tswap_op *op, uint32_t slot,
		 unsigned int k)
{
	fake_backend.prep(ctx, slot, op->dir, op->fd, 0,
			  (uint8_t *)op->buf + k * BS, BS, op->offset + k * BS);
}

static void test_model(void **state)
{
	struct tswap_op op = mkop(0, 1 << 20, 8);
	struct tswap_cqe cqe[4];
	const struct fake_ctx_rec *r;
	void *ctx;

	(void)state;
	fake_add_op(&op);
	fake_fault_block(op.offset + 2 * BS, -EIO);
	fake_fault_block(op.offset + 3 * BS, 100);
	fake_script_submit(0, 2, 1);
	fake_script_submit(0, 3, -EAGAIN);
	ctx = new_ctx(4);

	for (unsigned int k = 0; k < 4; k++)
		prep(ctx, &op, 3 - k, k);
	assert_int_equal(fake_backend.pending(ctx), 4);
	assert_int_equal(fake_backend.submit(ctx), 4);
	assert_int_equal(fake_backend.pending(ctx), 0);

	/* In submit order, with the scripted results. */
	assert_int_equal(fake_backend.reap(ctx, 1, 2, NULL, cqe), 2);
	assert_int_equal(cqe[0].slot, 3);
	assert_int_equal(cqe[0].res, BS);
	assert_int_equal(cqe[1].slot, 2);
	fake_set_reap_limit(1);
	assert_int_equal(fake_backend.reap(ctx, 1, 2, NULL, cqe), 1);
	assert_int_equal(cqe[0].slot, 1);
	assert_int_equal(cqe[0].res, -EIO);
	assert_int_equal(fake_backend.reap(ctx, 1, 1, NULL, cqe), 1);
	assert_int_equal(cqe[0].res, 100);

	/* Partial submit, then EAGAIN, then the rest. */
	prep(ctx, &op, 0, 4);
	prep(ctx, &op, 1, 5);
	assert_int_equal(fake_backend.submit(ctx), 1);
	assert_int_equal(fake_backend.pending(ctx), 1);
	assert_int_equal(fake_backend.submit(ctx), -EAGAIN);
	assert_int_equal(fake_backend.submit(ctx), 1);
	/* The limit never goes under min_nr. */
	assert_int_equal(fake_backend.reap(ctx, 2, 2, NULL, cqe), 2);
	assert_int_equal(cqe[0].slot, 0);
	assert_int_equal(cqe[1].slot, 1);

	/* discard() drops pending blocks and frees their slots. */
	prep(ctx, &op, 0, 6);
	fake_backend.discard(ctx);
	assert_int_equal(fake_backend.pending(ctx), 0);
	prep(ctx, &op, 0, 6);
	assert_int_equal(fake_backend.submit(ctx), 1);
	assert_int_equal(fake_backend.reap(ctx, 1, 1, NULL, cqe), 1);
	fake_backend.teardown(ctx);

	fake_assert_clean();
	r = fake_ctx(0);
	assert_int_equal(r->nsubmit, 5);
	assert_int_equal(r->submits[0].pending, 4);
	assert_int_equal(r->submits[0].inflight_after, 4);
	assert_int_equal(r->submits[2].ret, -EAGAIN);
	assert_int_equal(r->nreap, 5);
	assert_int_equal(r->reaps[1].inflight, 2);
	assert_int_equal(r->nblock, 7);
	assert_int_equal(r->blocks[6].off, op.offset + 6 * BS);
	assert_int_equal(r->blocks[6].op, 0);
	assert_int_equal(r->max_inflight, 4);
	assert_int_equal(r->ndiscard, 1);
	assert_int_equal(r->discarded, 1);
	assert_true(r->torn_down);
	assert_int_equal(fake_live_ctx(), 0);
}

static void test_setup_script(void **state)
{
	struct tswap_be_conf conf = { .queue_depth = 2 };
	void *a = NULL, *b = NULL;

	(void)state;
	fake_fail_setup(2, -EAGAIN);
	assert_int_equal(fake_backend.setup(&conf, &a), 0);
	assert_int_equal(fake_backend.setup(&conf, &b), -EAGAIN);
	assert_null(b);
	assert_int_equal(fake_setup_calls(), 2);
	assert_int_equal(fake_nctx(), 1);
	assert_int_equal(fake_live_ctx(), 1);
	fake_backend.teardown(a);
	assert_int_equal(fake_live_ctx(), 0);
}

/* --- each bug is caught (on a worker thread, where it is only recorded) --- */

typedef void (*bug_fn)(void *ctx, struct tswap_op *ops);

struct bug {
	bug_fn fn;
	void *ctx;
	struct tswap_op *ops;
};

static void *bug_thread(void *arg)
{
	struct bug *b = arg;

	b->fn(b->ctx, b->ops);
	return NULL;
}

static void expect_caught(bug_fn fn, const char *what)
{
	struct tswap_op ops[2] = { mkop(0, 0, 8), mkop(16, 1 << 20, 8) };
	struct bug b = { .fn = fn, .ops = ops };
	pthread_t t;
	bool found = false;

	fake_reset();
	fake_add_op(&ops[0]);
	fake_add_op(&ops[1]);
	b.ctx = new_ctx(4);
	assert_int_equal(pthread_create(&t, NULL, bug_thread, &b), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (fake_nviolations() == 0)
		fail_msg("fake did not catch: %s", what);
	for (unsigned int i = 0; i < fake_nviolations(); i++) {
		const char *v = fake_violation(i);

		if (v && strstr(v, what))
			found = true;
	}
	if (!found)
		fail_msg("fake caught something, but not \"%s\": %s", what,
			 fake_violation(0));
}

static void bug_slot_reuse(void *ctx, struct tswap_op *ops)
{
	prep(ctx, &ops[0], 1, 0);
	prep(ctx, &ops[0], 1, 1);
}

static void bug_slot_range(void *ctx, struct tswap_op *ops)
{
	prep(ctx, &ops[0], 4, 0);
}

static void bug_over_q(void *ctx, struct tswap_op *ops)
{
	for (unsigned int k = 0; k < 4; k++)
		prep(ctx, &ops[0], k, k);
	fake_backend.submit(ctx);
	prep(ctx, &ops[0], 0, 4);
}

static void bug_buf_outside(void *ctx, struct tswap_op *ops)
{
	(void)ops;
	fake_backend.prep(ctx, 0, TSWAP_READ, 5, 0, arena + sizeof(arena) - BS / 2,
			  BS, 0);
}

static void bug_wrong_buf(void *ctx, struct tswap_op *ops)
{
	/* Block 1 of op 0 read into block 2's memory. */
	fake_backend.prep(ctx, 0, ops[0].dir, ops[0].fd, 0,
			  (uint8_t *)ops[0].buf + 2 * BS, BS,
			  ops[0].offset + BS);
}

static void bug_no_op(void *ctx, struct tswap_op *ops)
{
	(void)ops;
	fake_backend.prep(ctx, 0, TSWAP_READ, 5, 0, arena, BS, 1ull << 40);
}

static void bug_wrong_dir(void *ctx, struct tswap_op *ops)
{
	fake_backend.prep(ctx, 0, TSWAP_WRITE, ops[0].fd, 0, ops[0].buf, BS,
			  ops[0].offset);
}

static void bug_mixed_ops(void *ctx, struct tswap_op *ops)
{
	prep(ctx, &ops[0], 0, 0);
	fake_backend.submit(ctx);
	prep(ctx, &ops[1], 1, 0);
}

static void bug_not_fifo(void *ctx, struct tswap_op *ops)
{
	struct tswap_cqe cqe[1];

	prep(ctx, &ops[1], 0, 0);
	fake_backend.submit(ctx);
	fake_backend.reap(ctx, 1, 1, NULL, cqe);
	prep(ctx, &ops[0], 0, 0);
}

static void bug_empty_submit(void *ctx, struct tswap_op *ops)
{
	(void)ops;
	fake_backend.submit(ctx);
}

static void bug_reap_too_many(void *ctx, struct tswap_op *ops)
{
	struct tswap_cqe cqe[4];

	prep(ctx, &ops[0], 0, 0);
	fake_backend.submit(ctx);
	fake_backend.reap(ctx, 2, 4, NULL, cqe);
}

static void bug_reap_bounds(void *ctx, struct tswap_op *ops)
{
	struct tswap_cqe cqe[4];

	prep(ctx, &ops[0], 0, 0);
	fake_backend.submit(ctx);
	fake_backend.reap(ctx, 2, 1, NULL, cqe);
}

static void bug_teardown_pending(void *ctx, struct tswap_op *ops)
{
	prep(ctx, &ops[0], 0, 0);
	fake_backend.teardown(ctx);
}

static void bug_teardown_twice(void *ctx, struct tswap_op *ops)
{
	(void)ops;
	fake_backend.teardown(ctx);
	fake_backend.teardown(ctx);
}

static void test_catches(void **state)
{
	(void)state;
	expect_caught(bug_slot_reuse, "while it is busy");
	expect_caught(bug_slot_range, "out of range");
	expect_caught(bug_over_q, "> queue depth");
	expect_caught(bug_buf_outside, "outside buf_base");
	expect_caught(bug_wrong_buf, "want op buf");
	expect_caught(bug_no_op, "in no queued operation");
	expect_caught(bug_wrong_dir, "has dir");
	expect_caught(bug_mixed_ops, "in flight");
	expect_caught(bug_not_fifo, "not FIFO");
	expect_caught(bug_empty_submit, "nothing pending");
	expect_caught(bug_reap_too_many, "would block forever");
	expect_caught(bug_reap_bounds, "min_nr 2 max_nr 1");
	expect_caught(bug_teardown_pending, "never submitted");
	expect_caught(bug_teardown_twice, "torn down twice");
	/* The leaked contexts of this test are not torn down: reset. */
	fake_reset();
}

/* A reap that could only hang, on a worker thread: the process exits. */
static void bug_reap_hang(void *ctx, struct tswap_op *ops)
{
	struct tswap_cqe cqe[1];

	(void)ops;
	fake_backend.reap(ctx, 1, 1, NULL, cqe);
}

static void test_hang_exits(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tswap_op ops[2] = { mkop(0, 0, 8), mkop(16, 1 << 20, 8) };
		struct bug b = { .fn = bug_reap_hang, .ops = ops };
		pthread_t t;

		/* Keep the child's message out of the TAP stream. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(1);
		fake_reset();
		b.ctx = new_ctx(4);
		pthread_create(&t, NULL, bug_thread, &b);
		pthread_join(t, NULL);
		_exit(0);	/* not reached: the fake exits with 3 */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_model, setup),
		cmocka_unit_test_setup(test_setup_script, setup),
		cmocka_unit_test_setup(test_catches, setup),
		cmocka_unit_test_setup(test_hang_exits, setup),
	};

	return cmocka_run_group_tests_name("fake_backend", tests, NULL, NULL);
}
