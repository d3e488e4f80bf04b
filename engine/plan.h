/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plan.h - the pure arithmetic of one tensor-swap operation.
 *
 * One fio I/O unit is one tensor-swap operation of `len` bytes at file
 * offset `off` (design.md section 1).  It is cut into P = tswap_threads
 * contiguous parts of len/P bytes (DeepSpeed intra_op_parallelism), and each
 * part into ceil(part_len / B) blocks of B = tswap_block_size bytes, the last
 * one being the unpadded remainder.  Every part offset, block offset and
 * block length must be a multiple of the DIO offset alignment.
 *
 * Nothing here does I/O, allocates or knows of fio: the unit tests drive it
 * directly.
 */
#ifndef TSWAP_PLAN_H
#define TSWAP_PLAN_H

#include <stdint.h>

#define TSWAP_DEFAULT_DIO_ALIGN 4096u	/* when the kernel tells us nothing */
/*
 * The most parts P per operation (tswap_threads, one worker thread each),
 * written only here: options.c derives the option's maxval, help text and
 * error line from it.  A plain decimal literal, so that it can be
 * stringified.
 */
#define TSWAP_MAX_THREADS 1024

struct tswap_geom {
	uint64_t block_size;	/* B, bytes; DeepSpeed aio.block_size */
	unsigned int threads;	/* P; DeepSpeed aio.intra_op_parallelism */
	uint32_t dio_align;	/* DIO offset alignment of the target, bytes, a power of two */
};

/*
 * tswap_geom_check - validate B against the target's DIO alignment.
 * Returns 0, or -EINVAL with *rule set to a static one-line description of
 * the rule broken (e.g. "tswap_block_size must be a multiple of the DIO
 * offset alignment").
 */
int tswap_geom_check(const struct tswap_geom *g, const char **rule);

/*
 * tswap_op_check - validate one operation of `len` bytes at file offset
 * `off` against the geometry: len > 0, len % P == 0, len/P and off
 * multiples of the DIO alignment.  Returns 0 or -EINVAL with *rule set.
 */
int tswap_op_check(const struct tswap_geom *g, uint64_t off, uint64_t len,
		   const char **rule);

/*
 * tswap_remainder_parts - parts for the remainder of a short transfer that
 * fio resubmits (io_u->xfer_buflen = resid, any size): the most parts p <=
 * P with len % p == 0 and len / p a multiple of the DIO alignment, else 1
 * (one worker takes it whole; the kernel then judges its alignment, as it
 * does for fio's libaio engine).
 */
unsigned int tswap_remainder_parts(const struct tswap_geom *g, uint64_t len);

/* Bytes of each part of an operation of `len` bytes (len / P). */
static inline uint64_t tswap_part_len(uint64_t len, unsigned int threads)
{
	return len / threads;
}

/* Offset of part `i` inside the operation. */
static inline uint64_t tswap_part_off(uint64_t len, unsigned int threads,
				      unsigned int i)
{
	return (uint64_t)i * (len / threads);
}

/* Number of blocks of a part: ceil(part_len / B); 0 for an empty part.
 * (No part_len + B - 1: B near 2^64, e.g. tswap_block_size=-4k, would
 * wrap to 0 blocks and an operation that moves nothing.) */
static inline uint64_t tswap_nblocks(uint64_t part_len, uint64_t block_size)
{
	return part_len / block_size + (part_len % block_size != 0);
}

/* Length of block `k` of a part: B, or the remainder for the last block. */
static inline uint64_t tswap_block_len(uint64_t part_len, uint64_t block_size,
				       uint64_t k)
{
	uint64_t start = k * block_size;

	return part_len - start < block_size ? part_len - start : block_size;
}

#endif
