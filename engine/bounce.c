// SPDX-License-Identifier: GPL-2.0-only
/*
 * bounce.c - tswap_bounce: DeepSpeed's bounce buffer for a tensor that is
 * not page-locked, allocated, locked, copied through and freed per
 * operation.
 *
 * DeepSpeed v0.16.4, csrc/aio/py_lib/deepspeed_cpu_op.cpp: the constructor
 * of cpu_op_desc_t (made by deepspeed_io_handle_t::pread/pwrite in the
 * caller's thread, after the file's stat and open, before
 * _schedule_aio_work) sets _use_bounce_buffer when the tensor is neither
 * is_pinned() nor one of the handle's locked tensors, and then
 *   _alloc_bounce_buffer(): _pinned_tensor_mgr->alloc(numel) =
 *     deepspeed_pin_tensor_t::alloc (deepspeed_pin_tensor.cpp) ->
 *     ds_page_aligned_alloc(bytes, true) (csrc/aio/common/
 *     deepspeed_aio_utils.cpp): posix_memalign(sysconf(_SC_PAGESIZE),
 *     bytes), then mlock(ptr, bytes) (on failure: free, nullptr);
 *   writes: _cpu_buffer.copy_(_buffer), the tensor into the bounce buffer;
 * the workers' I/O then goes to and from the bounce buffer (data_ptr()).
 * deepspeed_io_handle_t::wait() (deepspeed_py_io_handle.cpp), in the
 * caller's thread, calls cpu_op_desc_t::finish():
 *   reads: _buffer.copy_(_cpu_buffer), the bounce buffer into the tensor;
 *   _free_bounce_buffer(): deepspeed_pin_tensor_t::free: munlock, free;
 * and then close()s the operation's file.
 *
 * tswap does the same with fio's io_u buffer as the tensor: get in
 * tswap_queue (fio's job thread, after tswap_reopen's stat/open), put in
 * tswap_event (fio's job thread, when fio reaps the operation, before
 * tswap_reopen's close).  torch's copy_ of a contiguous CPU tensor of one
 * dtype is a byte copy: memcpy here.  DeepSpeed asserts on a failed
 * allocation; tswap fails the operation with the errno instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tswap.h"

/*
 * The operation's bounce buffer: u->op.len bytes, page-aligned, locked,
 * holding the tensor for a write; u->op.buf points to it from here on.
 * Returns 0, or a positive errno with *call the call that failed (nothing
 * left allocated).
 */
int tswap_bounce_get(struct tswap_uop *u, const char **call)
{
	size_t len = u->op.len;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t t0 = tswap_now_ns(), t1;
	void *p = NULL;
	int err;

	*call = "sysconf(_SC_PAGESIZE)";
	if (page <= 0)
		return EINVAL;
	*call = "posix_memalign";
	err = posix_memalign(&p, (size_t)page, len);
	if (err)
		return err;
	*call = "mlock";
	if (mlock(p, len)) {
		err = errno;
		free(p);
		return err;
	}
	t1 = tswap_now_ns();
	u->bounce_alloc_ns = t1 - t0;
	u->bounce_copy_ns = 0;
	if (u->op.dir == TSWAP_WRITE) {
		memcpy(p, u->op.buf, len);
		u->bounce_copy_ns = tswap_now_ns() - t1;
	}
	u->bounce = p;
	u->op.buf = p;
	return 0;
}

/*
 * The operation is reaped: a read's bounce buffer copied into dst (fio's
 * buffer; the whole operation, whatever its result, as finish() copies the
 * whole tensor), then munlock and free.  Counted when the operation is
 * (op.measured).  Returns 0 or munlock's errno (the buffer is freed).
 */
int tswap_bounce_put(struct tswap_data *ld, struct tswap_uop *u, void *dst)
{
	size_t len = u->op.len;
	uint64_t t0, t1, t2;
	int ret = 0;

	if (!u->bounce)
		return 0;
	t0 = tswap_now_ns();
	if (u->op.dir == TSWAP_READ)
		memcpy(dst, u->bounce, len);
	t1 = tswap_now_ns();
	if (munlock(u->bounce, len))
		ret = errno;
	free(u->bounce);
	t2 = tswap_now_ns();
	u->bounce = NULL;
	u->op.buf = dst;
	if (u->op.measured) {
		ld->bounce.ops++;
		ld->bounce.bytes += len;
		ld->bounce.alloc_ns += u->bounce_alloc_ns;
		ld->bounce.copy_ns += u->bounce_copy_ns + (t1 - t0);
		ld->bounce.free_ns += t2 - t1;
	}
	return ret;
}

/* An operation fio never reaped, with no I/O left on it: freed, uncounted. */
void tswap_bounce_drop(struct thread_data *td, struct tswap_uop *u)
{
	if (!u->bounce)
		return;
	if (munlock(u->bounce, u->op.len))
		log_err("tswap: %s: tswap_bounce=1: munlock: %s\n", td->o.name,
			strerror(errno));
	free(u->bounce);
	u->bounce = NULL;
}

/* One line: why get failed for an operation of len bytes. */
void tswap_bounce_why(struct thread_data *td, uint64_t len, const char *call,
		      int err)
{
	struct rlimit rl;

	if (!strcmp(call, "mlock") && (err == ENOMEM || err == EPERM || err == EAGAIN) &&
	    !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		log_err("tswap: %s: tswap_bounce=1: cannot mlock a bounce buffer of %llu bytes (%s): RLIMIT_MEMLOCK (ulimit -l) is %llu bytes; raise it or lower bs or iodepth\n",
			td->o.name, (unsigned long long)len, strerror(err),
			(unsigned long long)rl.rlim_cur);
		return;
	}
	log_err("tswap: %s: tswap_bounce=1: %s of a bounce buffer of %llu bytes failed: %s\n",
		td->o.name, call, (unsigned long long)len, strerror(err));
}
