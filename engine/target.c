// SPDX-License-Identifier: GPL-2.0-only
/*
 * target.c - the job's files: their DIO alignment (statx STATX_DIOALIGN,
 * BLKSSZGET), the job's geometry checked against it (plan.c), and the
 * files registered with io_uring.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "tswap.h"

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

/* Registered files: opened here, before the rings exist (fio's io_uring
 * engine does the same). */
int tswap_open_registered_files(struct thread_data *td, struct tswap_data *ld)
{
	struct fio_file *f;
	unsigned int i;

	ld->fds = calloc(td->o.nr_files ? td->o.nr_files : 1, sizeof(int));
	if (!ld->fds)
		return -ENOMEM;
	for (i = 0; i < (td->o.nr_files ? td->o.nr_files : 1); i++)
		ld->fds[i] = -1;
	ld->files_registered = true;	/* cleanup closes what is in fds[] */
	for_each_file(td, f, i) {
		if (generic_open_file(td, f))
			return -(td->error ? td->error : EIO);
		ld->fds[i] = f->fd;
		/* fio opens it again through tswap_open_file(): to fio it
		 * is closed until then (as in fio's io_uring engine). */
		f->fd = -1;
	}
	return 0;
}

/* Close them, after the rings are gone (tswap_cleanup). */
void tswap_close_registered_files(struct thread_data *td, struct tswap_data *ld)
{
	struct fio_file *f;
	unsigned int i;

	if (!ld->files_registered)
		return;
	for_each_file(td, f, i) {
		if (ld->fds[i] >= 0)
			close(ld->fds[i]);
		f->fd = -1;
	}
}

/*
 * DIO alignment of a target, by path: statx(STATX_DIOALIGN) (Linux 6.1+),
 * else BLKSSZGET for a block device, else 4096.  -ENOENT if it does not
 * exist yet, -EOPNOTSUPP if the kernel says it cannot do direct I/O.
 */
static int dio_alignment(const char *path, struct tswap_file *tf)
{
	struct statx stx;
	int fd, lbs = 0;

	tf->dio_align = tf->mem_align = TSWAP_DEFAULT_DIO_ALIGN;
	memset(&stx, 0, sizeof(stx));
	if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_DIOALIGN, &stx))
		return -errno;
	if (stx.stx_mask & STATX_DIOALIGN) {
		if (!stx.stx_dio_offset_align)
			return -EOPNOTSUPP;
		tf->dio_align = stx.stx_dio_offset_align;
		tf->mem_align = stx.stx_dio_mem_align ? stx.stx_dio_mem_align :
							tf->dio_align;
		return 0;
	}
	if (S_ISBLK(stx.stx_mode)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (!ioctl(fd, BLKSSZGET, &lbs) && lbs > 0)
				tf->dio_align = tf->mem_align = (uint32_t)lbs;
			close(fd);
		}
	}
	return 0;
}

/*
 * The most one read/write/iocb/SQE transfers: the kernel caps every I/O at
 * MAX_RW_COUNT = INT_MAX & PAGE_MASK (include/linux/fs.h) and returns a
 * short count above it; in whole DIO blocks, so that it stays a legal
 * O_DIRECT length.
 */
static unsigned long long max_io_bytes(uint32_t dio_align)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long max = INT_MAX & ~((unsigned long long)(page > 0 ? page : 4096) - 1);

	return max & ~((unsigned long long)dio_align - 1);
}

struct tswap_file *tswap_file_slot(struct tswap_data *ld, struct fio_file *f)
{
	unsigned int n = (unsigned int)f->fileno + 1;
	struct tswap_file *nf;

	if (n > ld->nfiles) {
		nf = realloc(ld->files, n * sizeof(*nf));
		if (!nf)
			return NULL;
		memset(nf + ld->nfiles, 0, (n - ld->nfiles) * sizeof(*nf));
		ld->files = nf;
		ld->nfiles = n;
	}
	return &ld->files[f->fileno];
}

/*
 * Check the geometry against the file's DIO alignment: tswap_block_size,
 * and bs / tswap_threads for every bs the job can issue.  Returns 0, 1
 * after a one-line error, or -ENOENT when the file does not exist yet.
 */
int tswap_check_file(struct thread_data *td, struct tswap_data *ld,
		     struct fio_file *f)
{
	struct tswap_options *o = td->eo;
	struct tswap_file *tf = tswap_file_slot(ld, f);
	struct tswap_geom *gp;
	const char *rule;
	int ddir, ret;

	if (!tf)
		return tswap_fail(td, ENOMEM, "out of memory");
	gp = &tf->geom;
	ret = dio_alignment(f->file_name, tf);
	if (ret == -ENOENT)
		return ret;
	if (ret == -EOPNOTSUPP)
		return tswap_fail(td, EOPNOTSUPP,
				  "%s: the kernel reports no direct I/O support for it (direct=1); use a file on a filesystem or a block device that supports O_DIRECT",
				  f->file_name);
	gp->block_size = o->block_size;
	gp->threads = o->threads;
	gp->dio_align = tf->dio_align;
	if (tswap_geom_check(gp, &rule))
		return tswap_fail(td, EINVAL, "tswap_block_size=%llu: %s (%u bytes for %s)",
				  o->block_size, rule, tf->dio_align, f->file_name);
	if (o->block_size > max_io_bytes(tf->dio_align))
		return tswap_fail(td, EINVAL,
				  "tswap_block_size=%llu: above %llu, the most one read or write can move (the kernel's MAX_RW_COUNT, 2 GiB less a page, in whole DIO blocks of %u bytes for %s)",
				  o->block_size, max_io_bytes(tf->dio_align),
				  tf->dio_align, f->file_name);
	for (ddir = DDIR_READ; ddir <= DDIR_WRITE; ddir++) {
		unsigned long long bs = td->o.min_bs[ddir];

		if ((ddir == DDIR_READ && !td_read(td)) ||
		    (ddir == DDIR_WRITE && !td_write(td)))
			continue;
		ret = tswap_op_check(gp, 0, bs, &rule);
		if (!ret) {
			bs = td->o.max_bs[ddir];
			ret = tswap_op_check(gp, 0, bs, &rule);
		}
		if (ret)
			return tswap_fail(td, EINVAL, "bs=%llu, tswap_threads=%u: %s (%u bytes for %s)",
					  bs, o->threads, rule, tf->dio_align, f->file_name);
	}
	tf->checked = true;
	return 0;
}
