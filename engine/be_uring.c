/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * be_uring.c - io_uring backend (placeholder until the io_uring issue
 * lands): setup fails with -ENOSYS so tswap_backend=io_uring is a clear
 * init error.
 */
#include <errno.h>
#include <stddef.h>

#include "backend.h"

static int uring_setup(const struct tswap_be_conf *conf, void **ctxp)
{
	(void)conf;
	*ctxp = NULL;
	return -ENOSYS;
}

const struct tswap_backend tswap_be_uring = {
	.name = "io_uring",
	.setup = uring_setup,
};
