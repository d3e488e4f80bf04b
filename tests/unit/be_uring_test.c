// SPDX-License-Identifier: GPL-2.0-only
/*
 * be_uring_test.c - the io_uring backend (engine/be_uring.c) on real rings,
 * driven directly through struct tswap_backend: ring sizing, one SQE per
 * prep, submit counts, batch reaping, poll and timed waits, discard,
 * per-CQE errors and short transfers, registered buffers and files, IOPOLL
 * refusal, teardown with blocks in flight.
 *
 * Built as build/unit/test_be_uring (needs -luring and engine/be_uring.c,
 * see the Makefile).  The scratch file lives beside the binary, on the
 * repository's (block-backed) filesystem.  Every test skips when io_uring
 * is unavailable (kernel.io_uring_disabled, seccomp).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"

#define KiB 1024u
#define BS (64 * KiB)		/* block size of the tests */
#define NBUF 8			/* blocks of buffer */

static const struct tswap_backend *be = &tswap_be_uring;

struct fixture {
	char path[PATH_MAX + 32];
	int fd;
	char *buf;		/* NBUF * BS, page-aligned */
	struct tswap_be_conf conf;
	void *ctx;
};

static void scratch_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int w;
	char *slash;

	if (n <= 0) {
		snprintf(out, len, "./be_uring_test.XXXXXX");
		return;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	w = snprintf(out, len, "%s/be_uring_test.XXXXXX", exe);
	if (w < 0 || (size_t)w >= len)
		snprintf(out, len, "./be_uring_test.XXXXXX");
}

static int fx_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	int tmp;

	if (!fx)
		return -1;
	scratch_path(fx->path, sizeof(fx->path));
	tmp = mkstemp(fx->path);
	if (tmp < 0)
		return -1;
	close(tmp);
	fx->fd = open(fx->path, O_RDWR | O_DIRECT);
	if (fx->fd < 0 || posix_memalign((void **)&fx->buf, 4096, NBUF * BS))
		return -1;
	memset(fx->buf, 0, NBUF * BS);
	fx->conf.queue_depth = 4;
	fx->conf.fds = &fx->fd;
	fx->conf.nr_files = 1;
	fx->conf.buf_base = fx->buf;
	fx->conf.buf_len = NBUF * BS;
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->ctx)
		be->teardown(fx->ctx);
	close(fx->fd);
	unlink(fx->path);
	free(fx->buf);
	free(fx);
	return 0;
}

/* Set up the context, or skip the test when io_uring is unavailable. */
static void ring_up(struct fixture *fx)
{
	int ret = be->setup(&fx->conf, &fx->ctx);

	if (ret == -EPERM || ret == -ENOSYS) {
		fx->ctx = NULL;
		skip();
	}
	assert_int_equal(ret, 0);
	assert_non_null(fx->ctx);
}

static void fill(char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed * 131 + i * 7 + (i >> 12));
}

/* Reap exactly n completions (blocking), results into c[]. */
static void reap_n(struct fixture *fx, unsigned int n, struct tswap_cqe *c)
{
	unsigned int got = 0;
	int ret;

	while (got < n) {
		ret = be->reap(fx->ctx, n - got, n - got, NULL, c + got);
		assert_true(ret > 0);
		got += (unsigned int)ret;
	}
}

static void test_write_read_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[4];
	char *check;
	unsigned int i, seen = 0;

	ring_up(fx);
	fill(fx->buf, 4 * BS, 1);
	for (i = 0; i < 4; i++)
		be->prep(fx->ctx, i, TSWAP_WRITE, fx->fd, 0, fx->buf + i * BS,
			 BS, (uint64_t)i * BS);
	assert_int_equal(be->pending(fx->ctx), 4);
	assert_int_equal(be->submit(fx->ctx), 4);	/* one call, all four */
	assert_int_equal(be->pending(fx->ctx), 0);
	reap_n(fx, 4, c);
	for (i = 0; i < 4; i++) {
		assert_int_equal(c[i].res, BS);
		assert_true(c[i].slot < 4);
		seen |= 1u << c[i].slot;
	}
	assert_int_equal(seen, 0xf);

	/* Read back into the other half of the buffer, in reverse. */
	for (i = 0; i < 4; i++)
		be->prep(fx->ctx, i, TSWAP_READ, fx->fd, 0,
			 fx->buf + (4 + i) * BS, BS, (uint64_t)(3 - i) * BS);
	assert_int_equal(be->submit(fx->ctx), 4);
	reap_n(fx, 4, c);
	check = fx->buf + 4 * BS;
	for (i = 0; i < 4; i++)
		assert_memory_equal(check + i * BS, fx->buf + (3 - i) * BS, BS);
}

static void test_submit_nothing_is_zero(void **state)
{
	struct fixture *fx = *state;

	ring_up(fx);
	assert_int_equal(be->pending(fx->ctx), 0);
	assert_int_equal(be->submit(fx->ctx), 0);
}

static void test_poll_and_timeout(void **state)
{
	struct fixture *fx = *state;
	const struct timespec zero = { 0, 0 }, ms10 = { 0, 10 * 1000 * 1000 };
	struct tswap_cqe c[4];
	int ret;

	ring_up(fx);
	/* Nothing in flight: a poll and a timed wait both return 0. */
	assert_int_equal(be->reap(fx->ctx, 0, 4, &zero, c), 0);
	assert_int_equal(be->reap(fx->ctx, 1, 4, &zero, c), 0);
	assert_int_equal(be->reap(fx->ctx, 1, 4, &ms10, c), 0);

	/* One block: a timed wait of a second gets it. */
	fill(fx->buf, BS, 2);
	be->prep(fx->ctx, 2, TSWAP_WRITE, fx->fd, 0, fx->buf, BS, 0);
	assert_int_equal(be->submit(fx->ctx), 1);
	{
		const struct timespec s1 = { 1, 0 };

		ret = be->reap(fx->ctx, 1, 4, &s1, c);
	}
	assert_int_equal(ret, 1);
	assert_int_equal(c[0].slot, 2);
	assert_int_equal(c[0].res, BS);
}

static void test_max_nr_bounds_the_batch(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[4];
	unsigned int i, got = 0;
	int ret;

	ring_up(fx);
	fill(fx->buf, 4 * BS, 3);
	for (i = 0; i < 4; i++)
		be->prep(fx->ctx, i, TSWAP_WRITE, fx->fd, 0, fx->buf + i * BS,
			 BS, (uint64_t)i * BS);
	assert_int_equal(be->submit(fx->ctx), 4);
	/* At most 2 per call even when all 4 are done. */
	while (got < 4) {
		ret = be->reap(fx->ctx, 1, 2, NULL, c);
		assert_true(ret >= 1 && ret <= 2);
		got += (unsigned int)ret;
	}
	assert_int_equal(got, 4);
}

static void test_discard(void **state)
{
	struct fixture *fx = *state;
	const struct timespec zero = { 0, 0 };
	struct tswap_cqe c[4];
	int round;

	ring_up(fx);
	fill(fx->buf, 4 * BS, 4);
	for (round = 0; round < 3; round++) {
		be->prep(fx->ctx, 0, TSWAP_WRITE, fx->fd, 0, fx->buf, BS, 0);
		be->prep(fx->ctx, 1, TSWAP_WRITE, fx->fd, 0, fx->buf + BS, BS, BS);
		be->prep(fx->ctx, 2, TSWAP_WRITE, fx->fd, 0, fx->buf + 2 * BS, BS, 2 * BS);
		be->discard(fx->ctx);
		assert_int_equal(be->pending(fx->ctx), 0);
		/* The discarded SQEs never reach the kernel. */
		be->prep(fx->ctx, 3, TSWAP_WRITE, fx->fd, 0, fx->buf + 3 * BS, BS, 3 * BS);
		assert_int_equal(be->submit(fx->ctx), 1);
		reap_n(fx, 1, c);
		assert_int_equal(c[0].slot, 3);
		assert_int_equal(c[0].res, BS);
		assert_int_equal(be->reap(fx->ctx, 0, 4, &zero, c), 0);
	}
}

static void test_error_cqe_and_rest_of_batch(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[2];
	int bad = open("/dev/null", O_RDONLY);
	unsigned int i;

	ring_up(fx);
	assert_true(bad >= 0);
	close(bad);	/* a closed fd: EBADF for its block only */
	fill(fx->buf, BS, 5);
	be->prep(fx->ctx, 0, TSWAP_WRITE, bad, 0, fx->buf, BS, 0);
	be->prep(fx->ctx, 1, TSWAP_WRITE, fx->fd, 0, fx->buf, BS, 0);
	/* Both consumed by the kernel (SUBMIT_ALL, or the failing SQE is
	 * counted as submitted and the rest follows in a second call). */
	{
		int n = be->submit(fx->ctx);

		assert_true(n >= 1);
		if (n == 1)
			assert_int_equal(be->submit(fx->ctx), 1);
	}
	reap_n(fx, 2, c);
	for (i = 0; i < 2; i++) {
		if (c[i].slot == 0)
			assert_int_equal(c[i].res, -EBADF);
		else
			assert_int_equal(c[i].res, BS);
	}
}

static void test_short_read_at_eof(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[2];
	unsigned int i;

	ring_up(fx);
	fill(fx->buf, BS, 6);
	be->prep(fx->ctx, 0, TSWAP_WRITE, fx->fd, 0, fx->buf, BS, 0);
	assert_int_equal(be->submit(fx->ctx), 1);
	reap_n(fx, 1, c);
	assert_int_equal(ftruncate(fx->fd, BS), 0);
	/* 2 blocks read from BS/2: half a block, then nothing (EOF). */
	be->prep(fx->ctx, 0, TSWAP_READ, fx->fd, 0, fx->buf + 2 * BS, BS, BS / 2);
	be->prep(fx->ctx, 1, TSWAP_READ, fx->fd, 0, fx->buf + 3 * BS, BS, 2 * BS);
	assert_int_equal(be->submit(fx->ctx), 2);
	reap_n(fx, 2, c);
	for (i = 0; i < 2; i++)
		assert_int_equal(c[i].res, c[i].slot == 0 ? BS / 2 : 0);
}

static void test_fixed_buffers_and_files(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[4];
	unsigned int i;

	fx->conf.fixedbufs = true;
	fx->conf.registerfiles = true;
	ring_up(fx);
	fill(fx->buf, 4 * BS, 7);
	/* fidx 0 is the registered file; the fd is ignored. */
	for (i = 0; i < 2; i++)
		be->prep(fx->ctx, i, TSWAP_WRITE, -1, 0, fx->buf + i * BS, BS,
			 (uint64_t)i * BS);
	assert_int_equal(be->submit(fx->ctx), 2);
	reap_n(fx, 2, c);
	assert_int_equal(c[0].res, BS);
	assert_int_equal(c[1].res, BS);
	/* A buffer outside the registered area and an unregistered fidx
	 * fall back to a plain read of fd. */
	{
		char *other = NULL;

		assert_int_equal(posix_memalign((void **)&other, 4096, 2 * BS), 0);
		be->prep(fx->ctx, 0, TSWAP_READ, fx->fd, 7, other, 2 * BS, 0);
		assert_int_equal(be->submit(fx->ctx), 1);
		reap_n(fx, 1, c);
		assert_int_equal(c[0].res, 2 * BS);
		assert_memory_equal(other, fx->buf, 2 * BS);
		free(other);
	}
}

static void test_bad_conf(void **state)
{
	struct fixture *fx = *state;
	void *ctx = NULL;

	fx->conf.queue_depth = 0;
	assert_int_equal(be->setup(&fx->conf, &ctx), -EINVAL);
	assert_null(ctx);
	/* Above IORING_MAX_ENTRIES (32768). */
	fx->conf.queue_depth = 65536;
	{
		int ret = be->setup(&fx->conf, &ctx);

		if (ret == -EPERM || ret == -ENOSYS)
			skip();
		assert_int_equal(ret, -EINVAL);
	}
	assert_null(ctx);
	/* fixedbufs without a buffer area, registerfiles without files. */
	fx->conf.queue_depth = 4;
	fx->conf.fixedbufs = true;
	fx->conf.buf_base = NULL;
	assert_int_equal(be->setup(&fx->conf, &ctx), -EINVAL);
	fx->conf.fixedbufs = false;
	fx->conf.registerfiles = true;
	fx->conf.nr_files = 0;
	assert_int_equal(be->setup(&fx->conf, &ctx), -EINVAL);
	assert_null(ctx);
}

static void test_iopoll_refused_without_poll_queues(void **state)
{
	struct fixture *fx = *state;
	char path[64], c = 0;
	struct stat st;
	int sfd, ret;

	assert_int_equal(fstat(fx->fd, &st), 0);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/io_poll",
		 major(st.st_dev), minor(st.st_dev));
	sfd = open(path, O_RDONLY);
	if (sfd < 0) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/io_poll",
			 major(st.st_dev), minor(st.st_dev));
		sfd = open(path, O_RDONLY);
	}
	if (sfd < 0)
		skip();		/* sysfs cannot tell for this filesystem */
	assert_int_equal(read(sfd, &c, 1), 1);
	close(sfd);
	if (c != '0')
		skip();		/* the device polls: nothing to refuse */

	fx->conf.iopoll = true;
	ret = be->setup(&fx->conf, &fx->ctx);
	if (ret == -EPERM || ret == -ENOSYS)
		skip();
	assert_int_equal(ret, -EOPNOTSUPP);
	assert_null(fx->ctx);
}

static void test_teardown_waits_for_inflight(void **state)
{
	struct fixture *fx = *state;
	char *check = NULL;
	unsigned int i;

	ring_up(fx);
	fill(fx->buf, 4 * BS, 8);
	for (i = 0; i < 4; i++)
		be->prep(fx->ctx, i, TSWAP_WRITE, fx->fd, 0, fx->buf + i * BS,
			 BS, (uint64_t)i * BS);
	assert_int_equal(be->submit(fx->ctx), 4);
	/* Never reaped: teardown must wait for all four. */
	be->teardown(fx->ctx);
	fx->ctx = NULL;
	assert_int_equal(posix_memalign((void **)&check, 4096, 4 * BS), 0);
	assert_int_equal(pread(fx->fd, check, 4 * BS, 0), (ssize_t)(4 * BS));
	assert_memory_equal(check, fx->buf, 4 * BS);
	free(check);
}

static void test_sqpoll_submit_counts_all(void **state)
{
	struct fixture *fx = *state;
	struct tswap_cqe c[4];
	unsigned int i;

	fx->conf.sqpoll = true;
	fx->conf.sqpoll_idle_ms = 100;
	ring_up(fx);
	fill(fx->buf, 4 * BS, 9);
	for (i = 0; i < 3; i++) {
		be->prep(fx->ctx, i, TSWAP_WRITE, fx->fd, 0, fx->buf + i * BS,
			 BS, (uint64_t)i * BS);
		/* One at a time: each submit hands over exactly its SQE,
		 * however far behind the SQ thread is. */
		assert_int_equal(be->submit(fx->ctx), 1);
	}
	reap_n(fx, 3, c);
	for (i = 0; i < 3; i++)
		assert_int_equal(c[i].res, BS);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_read_round_trip),
		T(test_submit_nothing_is_zero),
		T(test_poll_and_timeout),
		T(test_max_nr_bounds_the_batch),
		T(test_discard),
		T(test_error_cqe_and_rest_of_batch),
		T(test_short_read_at_eof),
		T(test_fixed_buffers_and_files),
		T(test_bad_conf),
		T(test_iopoll_refused_without_poll_queues),
		T(test_teardown_waits_for_inflight),
		T(test_sqpoll_submit_counts_all),
	};

	return cmocka_run_group_tests_name("be_uring", tests, NULL, NULL);
}
