// SPDX-License-Identifier: GPL-2.0-only
/*
 * fill.c - tswap_fill=single|double: DeepSpeed's FastPersist buffer fill,
 * each write's bytes copied into a page-locked I/O buffer before the
 * write, which then goes from that buffer.
 *
 * DeepSpeed >= 0.17.1, deepspeed/io/ (v0.19.5): FastCheckpointEngine.save
 * runs torch.save into a FastFileWriter (fast_file_writer.py), whose
 * write() hands the stream's bytes to _write_from_tensor: a loop of
 * _fill_io_buffer (Base_IO_Buffer.fill_buffer, base_io_buffer.py: a torch
 * copy_ of as many bytes as the buffer takes, in the caller's thread) and,
 * each time the buffer is full, _drain_io_buffer: one async_pwrite of it
 * through the aio handle.  The buffer is the pinned tensor of
 * checkpoint.writer.io_buffer_size bytes (writer_factory.py; ds_io takes
 * it from new_cpu_locked_tensor: posix_memalign to a page, then mlock):
 *   Single_IO_Buffer (single_io_buffer.py, io_buffer_double=false): the
 *     whole tensor; drain() writes it and waits (blocking=True): fill and
 *     write are serial;
 *   Double_IO_Buffer (double_io_buffer.py, io_buffer_double=true): two
 *     halves (_split_buffer); drain() waits for the write in flight
 *     (complete_ongoing_drain), submits this half (blocking=False) and
 *     switches to the other, which the caller fills while the write is in
 *     flight.  The first fill has nothing to overlap.
 *
 * tswap does the same with fio's io_u buffer as the stream (its bytes are
 * what fio writes) and iodepth=1 (one write in flight): at queue, a write
 * goes from the engine's buffer, filled there (memcpy: torch's copy_ of
 * two contiguous uint8 tensors is a byte copy) unless it was filled ahead;
 * with double, at commit, once the write is with the workers, fio's job
 * thread fills the other half from fio's buffer with the next write's
 * bytes (fio's buffer as it is then: fio's pattern unless refill_buffers,
 * hence no verify), up to the bytes the job has left.  The buffer is one
 * posix_memalign(page) + mlock of bs (single) or 2 x bs (double, the
 * halves), bs the job's largest.  Counted (tswap_stats), for the writes
 * fio measures: the writes that went from it, those filled ahead, the
 * bytes copied for them and the ns in memcpy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tswap.h"

/* post_init: the buffer, allocated and locked.  0 or 1 (one line said). */
int tswap_fill_init(struct thread_data *td, struct tswap_data *ld)
{
	unsigned int fill = ((struct tswap_options *)td->eo)->fill;
	struct tswap_fill *f = &ld->fill;
	long page = sysconf(_SC_PAGESIZE);
	size_t half = (size_t)td_max_bs(td);
	size_t len = fill == TSWAP_FILL_DOUBLE ? 2 * half : half;
	struct rlimit rl;
	void *p = NULL;
	int err;

	if (page <= 0)
		return tswap_fail(td, EINVAL, "tswap_fill=%s: sysconf(_SC_PAGESIZE) failed",
				  tswap_fill_names[fill]);
	err = posix_memalign(&p, (size_t)page, len);
	if (err)
		return tswap_fail(td, err,
				  "tswap_fill=%s: posix_memalign of a %zu-byte I/O buffer: %s; lower bs",
				  tswap_fill_names[fill], len, strerror(err));
	if (mlock(p, len)) {
		err = errno;
		free(p);
		if ((err == ENOMEM || err == EPERM || err == EAGAIN) &&
		    !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
			return tswap_fail(td, err,
					  "tswap_fill=%s: cannot mlock a %zu-byte I/O buffer (%s): RLIMIT_MEMLOCK (ulimit -l) is %llu bytes; raise it (DeepSpeed's new_cpu_locked_tensor fails the same way) or lower bs",
					  tswap_fill_names[fill], len, strerror(err),
					  (unsigned long long)rl.rlim_cur);
		return tswap_fail(td, err, "tswap_fill=%s: cannot mlock a %zu-byte I/O buffer: %s",
				  tswap_fill_names[fill], len, strerror(err));
	}
	f->buf = p;
	f->len = len;
	f->half = half;
	f->cur = 0;
	f->ahead = 0;
	f->queued = 0;
	f->due = false;
	return 0;
}

/*
 * queue: the write op (op->len bytes of fio's buffer src) goes from the
 * current half, filled now unless filled ahead.  A remainder fio requeues
 * after a short write (src past the io_u's start) goes from the same place
 * in the half its write used, already filled.
 */
void tswap_fill_queue(struct tswap_data *ld, struct tswap_uop *u,
		      const void *src, size_t skip)
{
	struct tswap_fill *f = &ld->fill;
	uint64_t ns = f->ahead_ns;
	bool ahead = f->ahead >= u->op.len;
	char *half;

	if (skip) {
		u->op.buf = u->fill_half + skip;
		f->due = false;
		return;
	}
	half = (char *)f->buf + (size_t)f->cur * f->half;
	if (!ahead) {
		uint64_t t0 = tswap_now_ns();

		memcpy(half, src, u->op.len);
		ns = tswap_now_ns() - t0;
	}
	f->ahead = 0;
	f->ahead_ns = 0;
	f->queued += u->op.len;
	f->due = true;
	u->fill_half = half;
	u->op.buf = half;
	if (u->op.measured) {
		f->ops++;
		f->ahead_ops += ahead;
		f->bytes += u->op.len;
		f->ns += ns;
	}
}

/*
 * commit, double only, the write just queued with the workers (not a
 * remainder): the other half filled from fio's buffer src with the next
 * write's bytes (at most bs, at most what the job has left; total 0:
 * unknown, a full half).
 */
void tswap_fill_ahead(struct tswap_data *ld, const void *src, uint64_t total)
{
	struct tswap_fill *f = &ld->fill;
	uint64_t n = f->half, t0;

	if (!f->due)
		return;
	f->due = false;
	if (total) {
		if (f->queued >= total)
			return;
		if (total - f->queued < n)
			n = total - f->queued;
	}
	f->cur ^= 1;
	t0 = tswap_now_ns();
	memcpy((char *)f->buf + (size_t)f->cur * f->half, src, (size_t)n);
	f->ahead_ns = tswap_now_ns() - t0;
	f->ahead = (size_t)n;
}

/* cleanup, the workers joined: munlock and free. */
void tswap_fill_cleanup(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_fill *f = &ld->fill;

	if (!f->buf)
		return;
	if (munlock(f->buf, f->len))
		log_err("tswap: %s: tswap_fill: munlock: %s\n", td->o.name, strerror(errno));
	free(f->buf);
	f->buf = NULL;
}
