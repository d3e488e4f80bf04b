// SPDX-License-Identifier: GPL-2.0-only
/*
 * plan.c - validation of a tensor-swap geometry (see plan.h).
 */
#include <errno.h>

#include "plan.h"

int tswap_geom_check(const struct tswap_geom *g, const char **rule)
{
	if (!g->block_size) {
		*rule = "tswap_block_size must be greater than 0";
		return -EINVAL;
	}
	if (!g->threads) {
		*rule = "tswap_threads must be at least 1";
		return -EINVAL;
	}
	if (!g->dio_align || (g->dio_align & (g->dio_align - 1))) {
		*rule = "the DIO offset alignment must be a power of two";
		return -EINVAL;
	}
	if (g->block_size % g->dio_align) {
		*rule = "tswap_block_size must be a multiple of the DIO offset alignment";
		return -EINVAL;
	}
	return 0;
}

unsigned int tswap_remainder_parts(const struct tswap_geom *g, uint64_t len)
{
	unsigned int p;

	for (p = g->threads; p > 1; p--)
		if (!(len % p) && g->dio_align && !((len / p) % g->dio_align))
			return p;
	return 1;
}

int tswap_op_check(const struct tswap_geom *g, uint64_t off, uint64_t len,
		   const char **rule)
{
	if (!len) {
		*rule = "an operation must move at least one byte";
		return -EINVAL;
	}
	if (len % g->threads) {
		*rule = "bs must be divisible by tswap_threads";
		return -EINVAL;
	}
	if (tswap_part_len(len, g->threads) % g->dio_align) {
		*rule = "bs / tswap_threads must be a multiple of the DIO offset alignment";
		return -EINVAL;
	}
	if (off % g->dio_align) {
		*rule = "the operation offset must be a multiple of the DIO offset alignment";
		return -EINVAL;
	}
	return 0;
}
