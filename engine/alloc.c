// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc.c - tswap_alloc=deepspeed: fio's I/O buffers allocated and
 * page-locked by the engine, as DeepSpeed's pinned-tensor manager
 * allocates its swap buffers since v0.19.4.
 *
 * DeepSpeed v0.19.4 (PR #8212, "Share DeepNVMe pinned-tensor manager and
 * route swap buffers through I/O handles"): every aio handle holds the one
 * process-wide deepspeed_pin_tensor_t (deepspeed_pin_tensor_t::shared(),
 * csrc/aio/py_lib/deepspeed_pin_tensor.cpp), and the swappers take their
 * buffers from it through the handle: new_cpu_locked_tensor
 * (csrc/aio/py_lib/deepspeed_py_io_handle.cpp) ->
 * deepspeed_pin_tensor_t::alloc -> ds_page_aligned_alloc(bytes, true)
 * (csrc/aio/common/deepspeed_aio_utils.cpp): posix_memalign with
 * sysconf(_SC_PAGESIZE), then mlock of the whole allocation; when mlock
 * fails it prints errno, frees and returns nullptr, and alloc asserts.
 * free_cpu_locked_tensor -> deepspeed_pin_tensor_t::free: munlock, free.
 * AsyncPartitionedParameterSwapper.__init__
 * (deepspeed/runtime/swap_tensor/partitioned_param_swapper.py) takes all
 * its buffer_count buffers as one such tensor (not zeroed) and narrows it
 * per buffer; is_managed recognises the narrows (a range check), so
 * cpu_op_desc_t (deepspeed_cpu_op.cpp) never bounces them.
 *
 * fio's equivalent of that one tensor is its I/O buffer region (one
 * buffer of max bs per io_u, memory.c allocate_io_mem, carved by
 * backend.c init_io_u_buffers): fio asks an engine with an iomem_alloc
 * hook for it instead of using iomem= (then refused by fio), and calls
 * iomem_free after every io_u_free.  Here: one posix_memalign of the size
 * fio asks (its total_mem: the region and its alignment slack), page
 * alignment, and one mlock of the region fio carves from it: on a
 * page-aligned buffer, mem_align + iodepth x max bs from its start
 * (init_io_u_buffers' PTR_ALIGN moves nothing), rounded up to a page;
 * DeepSpeed locks exactly its buffers' bytes too, and the slack would
 * count against RLIMIT_MEMLOCK for nothing.  Each result checked; fio
 * carves the buffers from td->orig_buffer as it does its own.  Neither
 * zeroed nor touched here (mlock faults the locked pages in); fio fills
 * write buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tswap.h"

/* One line: why mlock of len bytes failed with err. */
static int mlock_failed(struct thread_data *td, size_t len, int err)
{
	char held[TSWAP_HELD_LEN];
	struct rlimit rl;

	if (err != ENOMEM && err != EPERM && err != EAGAIN)
		return tswap_fail(td, err,
				  "tswap_alloc=deepspeed: cannot mlock %zu bytes of I/O buffers: %s",
				  len, strerror(err));
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return tswap_fail(td, err,
				  "tswap_alloc=deepspeed: cannot mlock %zu bytes of I/O buffers (%s), and RLIMIT_MEMLOCK cannot be read: %s",
				  len, strerror(err), strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY)
		return tswap_fail(td, err,
				  "tswap_alloc=deepspeed: cannot mlock %zu bytes of I/O buffers (%s; RLIMIT_MEMLOCK is unlimited: out of memory); lower iodepth or bs",
				  len, strerror(err));
	tswap_locked_held(held, sizeof(held));
	return tswap_fail(td, err,
			  "tswap_alloc=deepspeed: cannot mlock %zu bytes of I/O buffers (%s): RLIMIT_MEMLOCK (ulimit -l) is %llu bytes%s; raise it (DeepSpeed's new_cpu_locked_tensor fails the same way) or set tswap_alloc=fio",
			  len, strerror(err), (unsigned long long)rl.rlim_cur, held);
}

/*
 * fio's iomem_alloc: total_mem bytes for the I/O buffers in
 * td->orig_buffer, or 1 with the job's error set and the reason said once
 * (fio then adds its own "iomem allocation" error, and ignores the result
 * in 3.33: tswap_post_init fails the job on ld->alloc_failed).
 */
int tswap_iomem_alloc(struct thread_data *td, size_t total_mem)
{
	struct tswap_data *ld = td->io_ops_data;
	long page = sysconf(_SC_PAGESIZE);
	void *p = NULL;
	size_t len;
	int err;

	if (!ld)
		return tswap_fail(td, EINVAL, "tswap_alloc=deepspeed: the engine is not initialised");
	ld->alloc_failed = true;
	if (page <= 0)
		return tswap_fail(td, EINVAL, "tswap_alloc=deepspeed: sysconf(_SC_PAGESIZE) failed");
	err = posix_memalign(&p, (size_t)page, total_mem);
	if (err)
		return tswap_fail(td, err,
				  "tswap_alloc=deepspeed: posix_memalign of %zu bytes of I/O buffers: %s; lower iodepth or bs",
				  total_mem, strerror(err));
	/* the region fio uses (mem_align + iodepth x max bs), in whole pages */
	len = (size_t)td->o.mem_align + (size_t)td->o.iodepth * (size_t)td_max_bs(td);
	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	if (len > total_mem)
		len = total_mem;
	if (mlock(p, len)) {
		err = errno;
		free(p);
		return mlock_failed(td, len, err);
	}
	ld->alloc_buf = p;
	ld->alloc_len = len;
	ld->alloc_failed = false;
	ld->pin_locked = true;
	td->orig_buffer = p;
	return 0;
}

/*
 * fio's iomem_free, after every io_u_free and before the engine's cleanup:
 * munlock and free, as deepspeed_pin_tensor_t::free.  If an aborted job
 * left a worker with I/O into the buffers, they stay allocated (and
 * locked) rather than be reused under it; fio exits soon after.
 */
void tswap_iomem_free(struct thread_data *td)
{
	struct tswap_data *ld = td->io_ops_data;

	if (!ld || !ld->alloc_buf)
		return;
	if (ld->sched && tswap_sched_busy(ld->sched)) {
		log_err("tswap: %s: tswap_alloc=deepspeed: I/O still in flight; the %zu bytes of I/O buffers are not freed\n",
			td->o.name, ld->alloc_len);
		return;
	}
	if (munlock(ld->alloc_buf, ld->alloc_len))
		log_err("tswap: %s: tswap_alloc=deepspeed: munlock: %s\n", td->o.name,
			strerror(errno));
	free(ld->alloc_buf);
	ld->alloc_buf = NULL;
	ld->alloc_len = 0;
}
