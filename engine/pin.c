// SPDX-License-Identifier: GPL-2.0-only
/*
 * pin.c - tswap_pin: fio's I/O buffers page-locked for the job, as
 * DeepSpeed's swap buffers are.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "tswap.h"

/*
 * tswap_pin=1|auto: page-lock fio's I/O buffer region (every io_u's buffer)
 * once, before the first I/O, as DeepSpeed's swap buffers are locked when
 * they are allocated: deepspeed_pin_tensor_t::alloc
 * (csrc/aio/py_lib/deepspeed_pin_tensor.cpp, behind the handle's
 * new_cpu_locked_tensor) calls ds_page_aligned_alloc
 * (csrc/aio/common/deepspeed_aio_utils.cpp: posix_memalign + mlock), and on
 * CUDA the swappers' buffers are torch pin_memory() tensors
 * (deepspeed/runtime/swap_tensor/utils.py SwapBufferPool,
 * partitioned_param_swapper.py), page-locked host memory.  mlock faults
 * every page in at once, before any I/O, and keeps it resident; unlocked,
 * fio's read buffers are faulted in by the first O_DIRECT reads
 * (get_user_pages).  It does not choose which physical pages the buffer
 * gets (measured: docs/performance.md, the disk gap).  tswap_io_u_free
 * munlocks (tswap_unpin_buffers), before fio frees the buffers.
 *
 * RLIMIT_MEMLOCK is the usual reason mlock fails for a user without
 * CAP_IPC_LOCK (mm/mlock.c: EPERM with a limit of 0, ENOMEM past it;
 * EAGAIN when some pages cannot be locked).  tswap_pin=1 fails the job;
 * tswap_pin=auto (the default) prints one note and runs unlocked, since
 * CUDA's pinned memory (cudaHostAlloc) is not charged to that limit and the
 * lock does not change the I/O itself.  With no limit, ENOMEM is memory
 * that is really short: both fail.
 */
/*
 * The bytes this process has locked now (VmLck of /proc/self/status,
 * proc(5)), or -1 if it cannot be read: with thread=1 every job's
 * buffers count against the one RLIMIT_MEMLOCK.
 */
static long long locked_now(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmLck: %lld kB", &kb) == 1)
			break;
		kb = -1;
	}
	fclose(f);
	return kb >= 0 ? kb * 1024 : -1;
}

void tswap_locked_held(char *buf, size_t len)
{
	long long locked = locked_now();

	buf[0] = '\0';
	if (locked > 0)
		snprintf(buf, len,
			 ", of which this process already locks %lld (other jobs' buffers, thread=1)",
			 locked);
}

int tswap_pin_buffers(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_options *o = td->eo;
	const char *mode = tswap_pin_names[o->pin];
	char held[TSWAP_HELD_LEN];
	struct rlimit rl = { 0, 0 };
	int err;

	if (!td->orig_buffer || !td->orig_buffer_size)
		return 0;
	if (!mlock(td->orig_buffer, td->orig_buffer_size)) {
		ld->pinned = true;
		ld->pin_locked = true;
		return 0;
	}
	err = errno;
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		rl.rlim_cur = 0;
	if (err == ENOMEM || err == EPERM || err == EAGAIN) {
		if (rl.rlim_cur == RLIM_INFINITY)
			return tswap_fail(td, err,
					  "tswap_pin=%s: cannot mlock %zu bytes of I/O buffers (%s; RLIMIT_MEMLOCK is unlimited: out of memory); lower iodepth or bs, or set tswap_pin=0",
					  mode, td->orig_buffer_size, strerror(err));
		tswap_locked_held(held, sizeof(held));
		if (o->pin == TSWAP_PIN_AUTO) {
			log_err("tswap: %s: tswap_pin=auto: I/O buffers not locked: cannot mlock %zu bytes (%s), RLIMIT_MEMLOCK (ulimit -l) is %llu bytes%s; running unlocked (tswap_pin=1 requires the lock, tswap_pin=0 silences this)\n",
				td->o.name, td->orig_buffer_size, strerror(err),
				(unsigned long long)rl.rlim_cur, held);
			return 0;
		}
		return tswap_fail(td, err,
				  "tswap_pin=%s: cannot mlock %zu bytes of I/O buffers (%s): RLIMIT_MEMLOCK (ulimit -l) is %llu bytes%s; raise it or set tswap_pin=0",
				  mode, td->orig_buffer_size, strerror(err),
				  (unsigned long long)rl.rlim_cur, held);
	}
	return tswap_fail(td, err, "tswap_pin=%s: cannot mlock %zu bytes of I/O buffers: %s",
			  mode, td->orig_buffer_size, strerror(err));
}

/* fio frees the buffers right after the io_us (cleanup_io_u) and before
 * the engine's cleanup: tswap_io_u_free unlocks them here, once. */
void tswap_unpin_buffers(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_options *o = td->eo;

	if (!ld || !ld->pinned)
		return;
	if (munlock(td->orig_buffer, td->orig_buffer_size))
		log_err("tswap: %s: tswap_pin=%s: munlock: %s\n", td->o.name,
			tswap_pin_names[o->pin], strerror(errno));
	ld->pinned = false;
}
