// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_plan.c - the arithmetic of one tensor-swap operation (plan.h):
 * parts, blocks, the unpadded tail, and the geometry / operation checks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define TiB (1024ull * GiB)

static void test_part_len_off(void **state)
{
	(void)state;

	assert_int_equal(tswap_part_len(12 * MiB, 1), 12 * MiB);
	assert_int_equal(tswap_part_len(12 * MiB, 3), 4 * MiB);
	assert_int_equal(tswap_part_len(64 * MiB, 8), 8 * MiB);

	assert_int_equal(tswap_part_off(12 * MiB, 1, 0), 0);
	assert_int_equal(tswap_part_off(12 * MiB, 3, 0), 0);
	assert_int_equal(tswap_part_off(12 * MiB, 3, 1), 4 * MiB);
	assert_int_equal(tswap_part_off(12 * MiB, 3, 2), 8 * MiB);
	assert_int_equal(tswap_part_off(64 * MiB, 8, 7), 56 * MiB);
}

static void test_part_large(void **state)
{
	(void)state;

	/* 64-bit sizes: no 32-bit truncation of i * len / P. */
	assert_int_equal(tswap_part_len(16 * TiB, 4), 4 * TiB);
	assert_int_equal(tswap_part_off(16 * TiB, 4, 3), 12 * TiB);
	assert_int_equal(tswap_part_off(6 * GiB, 3, 2), 4 * GiB);
	assert_int_equal(tswap_nblocks(4 * TiB, 1 * MiB), 4 * MiB);
	assert_int_equal(tswap_block_len(4 * TiB + 4 * KiB, 1 * MiB, 4 * MiB),
			 4 * KiB);
}

static void test_nblocks(void **state)
{
	const uint64_t B = 1 * MiB;

	(void)state;

	assert_int_equal(tswap_nblocks(0, B), 0);
	assert_int_equal(tswap_nblocks(4 * KiB, B), 1);
	assert_int_equal(tswap_nblocks(B - 4 * KiB, B), 1);
	assert_int_equal(tswap_nblocks(B, B), 1);
	assert_int_equal(tswap_nblocks(B + 4 * KiB, B), 2);
	assert_int_equal(tswap_nblocks(10 * B, B), 10);
	assert_int_equal(tswap_nblocks(10 * B + 4 * KiB, B), 11);
	assert_int_equal(tswap_nblocks(16 * MiB, 16 * MiB), 1);
	/* A block size that is not a power of two. */
	assert_int_equal(tswap_nblocks(1 * MiB, 12 * KiB), 86);
}

/* A block size near 2^64 (fio parses tswap_block_size=-4k to that): one
 * block per part, never 0 blocks by overflow in the ceiling division. */
static void test_nblocks_huge_block(void **state)
{
	const uint64_t huge = UINT64_MAX - 4095;

	(void)state;
	assert_int_equal(tswap_nblocks(1 * MiB, huge), 1);
	assert_int_equal(tswap_nblocks(1 * MiB, UINT64_MAX), 1);
	assert_int_equal(tswap_nblocks(4 * KiB, huge), 1);
	assert_int_equal(tswap_nblocks(0, huge), 0);
	assert_int_equal(tswap_block_len(1 * MiB, huge, 0), 1 * MiB);
}

static void test_block_len_tail(void **state)
{
	const uint64_t B = 1 * MiB;

	(void)state;

	/* Full blocks. */
	assert_int_equal(tswap_block_len(10 * B, B, 0), B);
	assert_int_equal(tswap_block_len(10 * B, B, 9), B);
	/* The last block is the unpadded remainder. */
	assert_int_equal(tswap_block_len(10 * B + 4 * KiB, B, 9), B);
	assert_int_equal(tswap_block_len(10 * B + 4 * KiB, B, 10), 4 * KiB);
	assert_int_equal(tswap_block_len(B + B / 2, B, 1), B / 2);
	/* A part smaller than a block is one short block. */
	assert_int_equal(tswap_block_len(64 * KiB, B, 0), 64 * KiB);
	/* 1 MiB in 12 KiB blocks: 85 full ones and a 4 KiB tail. */
	assert_int_equal(tswap_block_len(1 * MiB, 12 * KiB, 84), 12 * KiB);
	assert_int_equal(tswap_block_len(1 * MiB, 12 * KiB, 85), 4 * KiB);
}

/*
 * Walk the parts and blocks of one operation as the scheduler does: they
 * must tile [0, len) exactly, in order, with only the last block of a part
 * shorter than B and never empty.
 */
static void check_tiling(uint64_t len, uint64_t B, unsigned int P)
{
	uint64_t pos = 0;

	for (unsigned int i = 0; i < P; i++) {
		uint64_t plen = tswap_part_len(len, P);
		uint64_t poff = tswap_part_off(len, P, i);
		uint64_t nb = tswap_nblocks(plen, B), sum = 0;

		assert_int_equal(poff, pos);
		assert_int_equal(plen * P, len);
		assert_int_equal(nb, (plen + B - 1) / B);
		for (uint64_t k = 0; k < nb; k++) {
			uint64_t bl = tswap_block_len(plen, B, k);

			assert_true(bl > 0);
			assert_true(bl <= B);
			if (k + 1 < nb)
				assert_int_equal(bl, B);
			sum += bl;
		}
		assert_int_equal(sum, plen);
		pos += plen;
	}
	assert_int_equal(pos, len);
}

static void test_tiling(void **state)
{
	static const uint64_t lens[] = {
		4 * KiB, 64 * KiB, 1 * MiB, 3 * MiB, 10 * MiB + 16 * KiB,
		12 * MiB, 64 * MiB, 96 * MiB + 48 * KiB,
	};
	static const uint64_t bss[] = {
		4 * KiB, 12 * KiB, 128 * KiB, 1 * MiB, 3 * MiB, 16 * MiB,
		128 * MiB,
	};
	static const unsigned int ps[] = { 1, 2, 3, 4, 8, 16 };

	(void)state;

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (size_t bi = 0; bi < sizeof(bss) / sizeof(bss[0]); bi++) {
			for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]);
			     pi++) {
				if (lens[li] % ps[pi] == 0)
					check_tiling(lens[li], bss[bi], ps[pi]);
			}
		}
	}
}

/* `rule` is read here, after the call in the argument list set it. */
static void assert_rule(int ret, const char *const *rule)
{
	assert_int_equal(ret, -EINVAL);
	assert_non_null(*rule);
	assert_true(strlen(*rule) > 0);
}

static void test_geom_check(void **state)
{
	struct tswap_geom g = { .block_size = 1 * MiB, .threads = 1,
				.dio_align = 4096 };
	const char *rule;

	(void)state;

	rule = NULL;
	assert_int_equal(tswap_geom_check(&g, &rule), 0);
	g.block_size = 4096;
	assert_int_equal(tswap_geom_check(&g, &rule), 0);
	g.block_size = 12 * KiB;	/* a multiple, not a power of two */
	assert_int_equal(tswap_geom_check(&g, &rule), 0);
	g.block_size = 512;
	g.dio_align = 512;
	assert_int_equal(tswap_geom_check(&g, &rule), 0);
	g.threads = 8;
	g.block_size = 128 * MiB;
	assert_int_equal(tswap_geom_check(&g, &rule), 0);

	/* B = 0. */
	g.block_size = 0;
	g.dio_align = 4096;
	rule = NULL;
	assert_rule(tswap_geom_check(&g, &rule), &rule);

	/* B not a multiple of the DIO alignment. */
	g.block_size = 1000;
	rule = NULL;
	assert_rule(tswap_geom_check(&g, &rule), &rule);
	g.block_size = 1 * MiB + 512;
	rule = NULL;
	assert_rule(tswap_geom_check(&g, &rule), &rule);
	g.block_size = 2048;
	rule = NULL;
	assert_rule(tswap_geom_check(&g, &rule), &rule);
}

static void test_op_check_ok(void **state)
{
	struct tswap_geom g = { .block_size = 1 * MiB, .threads = 4,
				.dio_align = 4096 };
	const char *rule = NULL;

	(void)state;

	assert_int_equal(tswap_op_check(&g, 0, 16 * MiB, &rule), 0);
	assert_int_equal(tswap_op_check(&g, 1 * GiB, 16 * MiB, &rule), 0);
	/* Parts with an aligned tail block are fine. */
	assert_int_equal(tswap_op_check(&g, 4096, 4 * (3 * MiB + 4096), &rule),
			 0);
	/* Parts smaller than a block. */
	assert_int_equal(tswap_op_check(&g, 8192, 4 * 4096, &rule), 0);
	g.threads = 3;
	assert_int_equal(tswap_op_check(&g, 0, 12 * MiB, &rule), 0);
	g.threads = 1;
	g.dio_align = 512;
	assert_int_equal(tswap_op_check(&g, 512, 1536, &rule), 0);
	/* Beyond 4 GiB. */
	g.dio_align = 4096;
	assert_int_equal(tswap_op_check(&g, 5 * TiB, 8 * GiB, &rule), 0);
}

static void test_op_check_bad(void **state)
{
	struct tswap_geom g = { .block_size = 1 * MiB, .threads = 4,
				.dio_align = 4096 };
	const char *rule;

	(void)state;

	/* len == 0. */
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 0, &rule), &rule);

	/* len % P != 0. */
	g.threads = 3;
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 16 * MiB, &rule), &rule);
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 4096, &rule), &rule);

	/* len % P == 0 but a part is not DIO-aligned. */
	g.threads = 2;
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 3 * 4096, &rule), &rule);
	g.threads = 4;
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 4 * 4096 + 4 * 512, &rule), &rule);

	/* Unaligned offset. */
	g.threads = 1;
	rule = NULL;
	assert_rule(tswap_op_check(&g, 512, 1 * MiB, &rule), &rule);
	rule = NULL;
	assert_rule(tswap_op_check(&g, 1 * GiB + 1, 1 * MiB, &rule), &rule);

	/* Unaligned length with P = 1 (the tail block would be unaligned). */
	rule = NULL;
	assert_rule(tswap_op_check(&g, 0, 1 * MiB + 512, &rule), &rule);
}

/* The rest of a short transfer fio resubmits: any size, fewest parts lost. */
static void test_remainder_parts(void **state)
{
	struct tswap_geom g = { .block_size = 256 * KiB, .threads = 3, .dio_align = 4096 };
	unsigned int P;

	(void)state;
	/* 3 MiB op short at 1 MiB + 4 KiB: 511 pages split over nothing. */
	assert_int_equal(tswap_remainder_parts(&g, 3 * MiB - (MiB + 4096)), 1);
	/* Short at 1.5 MiB: 384 pages, 128 each over 3 workers. */
	assert_int_equal(tswap_remainder_parts(&g, 3 * MiB / 2), 3);
	/* 2 pages over 3 threads: 2 parts of one page. */
	assert_int_equal(tswap_remainder_parts(&g, 8192), 2);
	/* Not a whole page (a short count at an unaligned EOF): one part,
	 * the kernel judges it. */
	assert_int_equal(tswap_remainder_parts(&g, 1000), 1);
	assert_int_equal(tswap_remainder_parts(&g, 1), 1);
	/* Every answer divides the length into aligned parts, at most P. */
	for (P = 1; P <= 8; P++) {
		uint64_t len;

		g.threads = P;
		for (len = 512; len <= 64 * KiB; len += 512) {
			unsigned int p = tswap_remainder_parts(&g, len);

			assert_true(p >= 1 && p <= P);
			if (p > 1) {
				assert_int_equal(len % p, 0);
				assert_int_equal((len / p) % g.dio_align, 0);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_part_len_off),
		cmocka_unit_test(test_part_large),
		cmocka_unit_test(test_nblocks),
		cmocka_unit_test(test_nblocks_huge_block),
		cmocka_unit_test(test_block_len_tail),
		cmocka_unit_test(test_tiling),
		cmocka_unit_test(test_geom_check),
		cmocka_unit_test(test_op_check_ok),
		cmocka_unit_test(test_op_check_bad),
		cmocka_unit_test(test_remainder_parts),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
