// SPDX-License-Identifier: GPL-2.0-only
/*
 * reopen.c - tswap_reopen: a descriptor of its own for every operation,
 * from a pool of iodepth slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tswap.h"

/* The pool: iodepth slots, all free. */
int tswap_reopen_init(struct tswap_data *ld, unsigned int depth)
{
	unsigned int i;

	ld->rfds = calloc(depth, sizeof(*ld->rfds));
	ld->rfree = calloc(depth, sizeof(*ld->rfree));
	if (!ld->rfds || !ld->rfree) {
		/* calloc's zeros are not free slots: cleanup would close fd 0. */
		free(ld->rfds);
		free(ld->rfree);
		ld->rfds = NULL;
		ld->rfree = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < depth; i++) {
		ld->rfds[i] = -1;
		ld->rfree[i] = depth - 1 - i;
	}
	ld->nrfree = depth;
	return 0;
}

/*
 * tswap_reopen=1: what deepspeed_io_handle_t::pread does before it hands
 * the operation over (deepspeed_py_io_handle.cpp): get_file_size() (a
 * stat() of the path, reads only; pwrite has none), then open_file()
 * (deepspeed_aio_common.cpp: O_RDONLY | O_DIRECT for reads, O_WRONLY |
 * O_CREAT | O_DIRECT, mode 0600, for writes), in the caller's thread.
 * The descriptor is the operation's; tswap_reopen_close() closes it when fio
 * collects the operation, as deepspeed_io_handle_t::wait() does.
 * Returns 0, or a positive errno (nothing left open).
 */
int tswap_reopen_open(struct tswap_data *ld, struct tswap_uop *u,
		      const struct fio_file *f)
{
	bool rd = u->op.dir == TSWAP_READ;
	struct stat st;
	unsigned int slot;
	int fd;

	if (!ld->nrfree)
		return EBUSY;	/* more operations than iodepth: a bug */
	if (rd && stat(f->file_name, &st))
		return errno;
	fd = open(f->file_name, rd ? O_RDONLY | O_DIRECT :
				     O_WRONLY | O_CREAT | O_DIRECT, 0600);
	if (fd < 0)
		return errno;
	slot = ld->rfree[--ld->nrfree];
	ld->rfds[slot] = fd;
	u->rslot = (int)slot;
	u->op.fd = fd;
	return 0;
}

/* Close the operation's own descriptor; 0 or a positive errno. */
int tswap_reopen_close(struct tswap_data *ld, struct tswap_uop *u)
{
	int fd, ret = 0;

	if (u->rslot < 0)
		return 0;
	fd = ld->rfds[u->rslot];
	ld->rfds[u->rslot] = -1;
	ld->rfree[ld->nrfree++] = (unsigned int)u->rslot;
	u->rslot = -1;
	if (close(fd))
		ret = errno;
	return ret;
}

/* Operations fio never collected (an aborted job); the pool freed. */
void tswap_reopen_cleanup(struct thread_data *td, struct tswap_data *ld)
{
	unsigned int i;

	for (i = 0; ld->rfds && i < td->o.iodepth; i++)
		if (ld->rfds[i] >= 0 && close(ld->rfds[i]))
			log_err("tswap: %s: tswap_reopen=1: close: %s\n", td->o.name,
				strerror(errno));
	free(ld->rfds);
	free(ld->rfree);
	ld->rfds = NULL;
	ld->rfree = NULL;
}
