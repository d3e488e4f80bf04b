// SPDX-License-Identifier: GPL-2.0-only
/*
 * options.c - tswap's fio options: the option table, the numeric parser and
 * its callbacks, and the checks of the job's options at init.
 *
 * Each limit is taken from the define that owns it (plan.h, backend.h):
 * the option's maxval, its parse_num rule and its help text, where fio
 * --enghelp shows it as "(MIN..MAX)" for tswap-sweep to read.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tswap.h"
#include "optgroup.h"	/* after fio.h: it needs its types */
#include "verify.h"	/* VERIFY_NONE */

/* A limit of plan.h or backend.h as a string, for help texts and rules. */
#define TSWAP_STR_(x) #x
#define TSWAP_STR(x) TSWAP_STR_(x)

_Static_assert(TSWAP_MAX_QUEUE_DEPTH == INT_MAX && TSWAP_MAX_SQPOLL_IDLE == INT_MAX,
	       "io_setup and sq_thread_idle take an int");

const char *const tswap_submit_names[] = { "block", "single" };
const char *const tswap_window_names[] = { "overlap", "sequential" };
const char *const tswap_pin_names[] = { "0", "1", "auto" };
const char *const tswap_alloc_names[] = { "fio", "deepspeed" };
const char *const tswap_fill_names[] = { "none", "single", "double" };

static const struct fio_option *tswap_find_option(const char *name);

/*
 * Numeric options are parsed here, not by fio's FIO_OPT_INT/STR_VAL: those
 * keep the low 32 bits of 4294967297 (1), read 1.5 and 1.5k as 1 and -4k as
 * 2^64 - 4096, all silently.  The value is fio's size notation (decimal or
 * 0x hex, with fio's k/m/g/t/p suffixes and kb_base; a parenthesised
 * expression is left to fio's parser), checked against the option's
 * minval/maxval (fio --enghelp=ENGINE,OPTION shows them as "range"); a
 * negative, fractional, unknown or out-of-range value is refused with one
 * line, then fio's own "failed parsing" line.
 */
static bool known_suffix(const char *sfx)
{
	static const char *const ok[] = {
		"k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib",
		"t", "tb", "tib", "p", "pb", "pib",
	};
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcasecmp(sfx, ok[i]))
			return true;
	return false;
}

static int parse_num(void *data, const char *name, const char *rule,
		     const char *str, unsigned long long *out)
{
	const struct fio_option *o = tswap_find_option(name);
	unsigned long long n = 0, mult = 1, min = 0, max = ULLONG_MAX;
	const char *p = str, *why = NULL;
	char one[32], *end;
	long long v = 0;

	if (o) {
		min = o->minval > 0 ? (unsigned long long)o->minval : 0;
		max = o->maxval ? o->maxval : ULLONG_MAX;
	}
	if (!str || !*str) {
		log_err("tswap: %s=: needs a value; must be %s\n", name, rule);
		return 1;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '(') {
		errno = 0;
		if (check_str_bytes(p, &v, data))
			why = "not a number";
		else if (v < 0)
			why = "negative";
		n = (unsigned long long)v;
	} else if (*p == '-') {
		why = "negative";
	} else if (!isdigit((unsigned char)*p)) {
		why = "not a number";
	} else {
		errno = 0;
		n = strtoull(p, &end, (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10);
		if (errno == ERANGE) {
			why = "out of range";
		} else if (*end == '.' || *end == ',') {
			why = "not a whole number";
		} else if (*end) {
			if (!known_suffix(end) ||
			    snprintf(one, sizeof(one), "1%s", end) >= (int)sizeof(one) ||
			    check_str_bytes(one, &v, data) || v <= 0)
				why = "not a number";
			else
				mult = (unsigned long long)v;
		}
		if (!why && __builtin_mul_overflow(n, mult, &n))
			why = "out of range";
	}
	if (!why && (n < min || n > max))
		why = "out of range";
	if (why) {
		log_err("tswap: %s=%s: %s; must be %s\n", name, str, why, rule);
		return 1;
	}
	*out = n;
	return 0;
}

static int opt_block_size(void *data, const char *str)
{
	unsigned long long v;

	if (parse_num(data, "tswap_block_size",
		      "a size in bytes, a positive multiple of the DIO offset alignment",
		      str, &v))
		return 1;
	((struct tswap_options *)data)->block_size = v;
	return 0;
}

static int opt_queue_depth(void *data, const char *str)
{
	unsigned long long v;

	if (parse_num(data, "tswap_queue_depth",
		      "an integer, at least 1 and at most " TSWAP_STR(TSWAP_MAX_QUEUE_DEPTH),
		      str, &v))
		return 1;
	((struct tswap_options *)data)->queue_depth = (unsigned int)v;
	return 0;
}

static int opt_threads(void *data, const char *str)
{
	unsigned long long v;

	if (parse_num(data, "tswap_threads", "an integer 1.." TSWAP_STR(TSWAP_MAX_THREADS),
		      str, &v))
		return 1;
	((struct tswap_options *)data)->threads = (unsigned int)v;
	return 0;
}

static int opt_sqpoll_idle(void *data, const char *str)
{
	struct tswap_options *o = data;
	unsigned long long v;

	if (parse_num(data, "tswap_sqpoll_idle",
		      "milliseconds, 0.." TSWAP_STR(TSWAP_MAX_SQPOLL_IDLE), str, &v))
		return 1;
	o->sqpoll_idle = (unsigned int)v;
	o->sqpoll_idle_set = true;
	return 0;
}

struct fio_option tswap_option_table[] = {
	{
		.name	= "tswap_backend",
		.lname	= "tswap I/O backend",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, backend),
		.help	= "Kernel async I/O interface under the tensor swaps (DeepSpeed uses libaio)",
		.def	= "libaio",
		.posval = {
			  { .ival = "libaio",
			    .oval = TSWAP_BE_LIBAIO,
			    .help = "Linux native AIO: io_submit/io_getevents, one io_context_t per worker",
			  },
			  { .ival = "io_uring",
			    .oval = TSWAP_BE_IO_URING,
			    .help = "io_uring through liburing: one ring per worker",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_block_size",
		.lname	= "tswap block size",
		.type	= FIO_OPT_STR,
		.cb	= opt_block_size,
		.off1	= offsetof(struct tswap_options, block_size),
		.minval	= 1,
		.help	= "Bytes per I/O block (iocb/SQE), a multiple of the DIO offset alignment, at most 2 GiB less a page (MAX_RW_COUNT); the last block of a part is the remainder (DeepSpeed aio.block_size)",
		.def	= "1M",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_queue_depth",
		.lname	= "tswap queue depth",
		.type	= FIO_OPT_STR,
		.cb	= opt_queue_depth,
		.off1	= offsetof(struct tswap_options, queue_depth),
		.minval	= 1,
		.maxval	= TSWAP_MAX_QUEUE_DEPTH,
		.help	= "Blocks in flight per I/O context (1.." TSWAP_STR(TSWAP_MAX_QUEUE_DEPTH)
			  "; io_uring 1.." TSWAP_STR(TSWAP_MAX_URING_DEPTH)
			  "); on libaio at most fs.aio-max-nr (DeepSpeed aio.queue_depth)",
		.def	= "8",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_submit",
		.lname	= "tswap submit mode",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, submit),
		.help	= "How blocks reach the kernel (DeepSpeed aio.single_submit: true = single)",
		.def	= "block",
		.posval = {
			  { .ival = "block",
			    .oval = TSWAP_SUBMIT_BLOCK,
			    .help = "All blocks of a round in one io_submit/io_uring_submit call",
			  },
			  { .ival = "single",
			    .oval = TSWAP_SUBMIT_SINGLE,
			    .help = "One block per io_submit/io_uring_submit call",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_window",
		.lname	= "tswap window",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, window),
		.help	= "How completions are awaited (DeepSpeed aio.overlap_events: true = overlap)",
		.def	= "overlap",
		.posval = {
			  { .ival = "overlap",
			    .oval = TSWAP_WINDOW_OVERLAP,
			    .help = "Keep up to tswap_queue_depth blocks in flight, wait for at least 1",
			  },
			  { .ival = "sequential",
			    .oval = TSWAP_WINDOW_SEQUENTIAL,
			    .help = "Submit min(queue depth, blocks left), wait for all of them",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_threads",
		.lname	= "tswap intra-op parallelism",
		.type	= FIO_OPT_STR,
		.cb	= opt_threads,
		.off1	= offsetof(struct tswap_options, threads),
		.minval	= 1,
		.maxval	= TSWAP_MAX_THREADS,
		.help	= "Worker threads per job (1.." TSWAP_STR(TSWAP_MAX_THREADS)
			  "), each with its own I/O context and one part of every operation; bs must be divisible by it (DeepSpeed aio.intra_op_parallelism)",
		.def	= "1",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_handoff",
		.lname	= "tswap hand-off",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, handoff),
		.help	= "Where the I/O of an operation runs when tswap_threads=1 (DeepSpeed: async_pread/async_pwrite = worker, read/write = inline)",
		.def	= "worker",
		.posval = {
			  { .ival = "worker",
			    .oval = TSWAP_HANDOFF_WORKER,
			    .help = "On a worker thread even with tswap_threads=1, as DeepSpeed's aio handle does (deepspeed_py_io_handle.cpp, _schedule_aio_work)",
			  },
			  { .ival = "inline",
			    .oval = TSWAP_HANDOFF_INLINE,
			    .help = "tswap_threads=1: in fio's job thread, no hand-off (DeepSpeed's synchronous read()/write(); fio's libaio engine)",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_reopen",
		.lname	= "tswap open per operation",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, reopen),
		.help	= "1: per operation, in fio's job thread, stat (reads) and open(O_DIRECT) the file, close it once the operation is reaped (DeepSpeed deepspeed_io_handle_t::pread/pwrite, wait)",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_pin",
		.lname	= "tswap page-locked buffers",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, pin),
		.help	= "mlock fio's I/O buffers once before the first I/O, as DeepSpeed's swap buffers are page-locked (new_cpu_locked_tensor: posix_memalign + mlock; CUDA pin_memory); needs RLIMIT_MEMLOCK of the buffers' size unless CAP_IPC_LOCK; with tswap_alloc=deepspeed the allocation locks them (0 refused, auto never runs unlocked)",
		.def	= "auto",
		.posval = {
			  { .ival = "auto",
			    .oval = TSWAP_PIN_AUTO,
			    .help = "Lock them; if RLIMIT_MEMLOCK (ulimit -l) is too small, one note on stderr and the job runs unlocked (stats: \"pinned\": false)",
			  },
			  { .ival = "1",
			    .oval = TSWAP_PIN_ON,
			    .help = "Lock them; the job fails before any I/O if they cannot be locked",
			  },
			  { .ival = "0",
			    .oval = TSWAP_PIN_OFF,
			    .help = "Never lock them",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_alloc",
		.lname	= "tswap I/O buffer allocator",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, alloc),
		.help	= "Who allocates fio's I/O buffers (one region, iodepth x bs): fio (iomem/mem), or deepspeed: the engine, as DeepSpeed 0.19.4+ allocates its swap buffers (PR #8212, the process-wide pinned-tensor manager: new_cpu_locked_tensor -> deepspeed_pin_tensor_t::alloc, csrc/aio/py_lib/deepspeed_pin_tensor.cpp -> ds_page_aligned_alloc, csrc/aio/common/deepspeed_aio_utils.cpp): page-aligned posix_memalign, then mlock of the buffers (iodepth x bs in whole pages, not fio's alignment slack); a failed mlock fails the job before any I/O, naming RLIMIT_MEMLOCK (the region's bytes unless CAP_IPC_LOCK); not with iomem/mem, tswap_pin=0, tswap_bounce=1",
		.def	= "fio",
		.posval = {
			  { .ival = "fio",
			    .oval = TSWAP_ALLOC_FIO,
			    .help = "fio allocates them as its iomem/mem option says (default malloc); tswap_pin locks them",
			  },
			  { .ival = "deepspeed",
			    .oval = TSWAP_ALLOC_DEEPSPEED,
			    .help = "The engine: posix_memalign (page) + mlock, as new_cpu_locked_tensor (DeepSpeed 0.19.4+); always locked; munlock + free at job end",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_bounce",
		.lname	= "tswap bounce buffer per operation",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, bounce),
		.help	= "1: DeepSpeed's path for a tensor that is not page-locked: per operation, in fio's job thread, posix_memalign (page-aligned) + mlock a buffer of the operation's bytes (bs), memcpy a write into it, do the I/O there, and when fio reaps the operation memcpy a read out, munlock, free (DeepSpeed csrc/aio/py_lib/deepspeed_cpu_op.cpp cpu_op_desc_t: _alloc_bounce_buffer, finish; csrc/aio/common/deepspeed_aio_utils.cpp ds_page_aligned_alloc); fio's buffers stay unlocked (tswap_pin=auto is off); each buffer counts against RLIMIT_MEMLOCK unless CAP_IPC_LOCK, a failure fails the operation with its errno; not with tswap_pin=1, tswap_alloc=deepspeed, tswap_fixedbufs=1, tswap_handoff=inline",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_fill",
		.lname	= "tswap FastPersist buffer fill",
		.type	= FIO_OPT_STR,
		.off1	= offsetof(struct tswap_options, fill),
		.help	= "Writes only, iodepth=1: DeepSpeed's FastPersist checkpoint writer (deepspeed/io/fast_file_writer.py _write_from_tensor: fill_buffer, then async_pwrite when full) copies each write's bytes, here fio's buffer, into its page-locked I/O buffer (checkpoint.writer.io_buffer_size: posix_memalign (page) + mlock, as new_cpu_locked_tensor) in fio's job thread with memcpy (base_io_buffer.py Base_IO_Buffer.fill_buffer, a torch copy_), and writes from it; the buffer is bs (single) or 2 x bs (double) bytes, bs the largest, locked for the job (RLIMIT_MEMLOCK unless CAP_IPC_LOCK; a failed mlock fails the job before any I/O); not with verify, tswap_bounce=1, tswap_fixedbufs=1",
		.def	= "none",
		.posval = {
			  { .ival = "none",
			    .oval = TSWAP_FILL_NONE,
			    .help = "No fill: the I/O goes from fio's buffer",
			  },
			  { .ival = "single",
			    .oval = TSWAP_FILL_SINGLE,
			    .help = "io_buffer_double=false (single_io_buffer.py Single_IO_Buffer): fill, then write, serially",
			  },
			  { .ival = "double",
			    .oval = TSWAP_FILL_DOUBLE,
			    .help = "io_buffer_double=true (double_io_buffer.py Double_IO_Buffer): two halves of bs; the first write's fill is serial, then once a write is with the workers fio's job thread fills the other half with the next write's bytes (up to the job's size) while it is in flight; not with tswap_handoff=inline",
			  },
		},
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_stats",
		.lname	= "tswap stats file",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct tswap_options, stats),
		.help	= "Write tswap's own counters as JSON to this path at job end (%j job name, %n job number, %p pid, %% a %; fio's $jobname, $jobnum; $filename, '/' made '_'); DeepSpeed deepspeed_aio_perf_t",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_sqpoll",
		.lname	= "tswap io_uring SQPOLL",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, sqpoll),
		.help	= "io_uring only: kernel SQ polling thread (IORING_SETUP_SQPOLL); burns a core",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_sqpoll_idle",
		.lname	= "tswap io_uring SQPOLL idle",
		.type	= FIO_OPT_STR,
		.cb	= opt_sqpoll_idle,
		.off1	= offsetof(struct tswap_options, sqpoll_idle),
		.minval	= 0,
		.maxval	= TSWAP_MAX_SQPOLL_IDLE,
		.help	= "io_uring only, with tswap_sqpoll=1: milliseconds the SQPOLL thread spins before sleeping (0.."
			  TSWAP_STR(TSWAP_MAX_SQPOLL_IDLE) "), default "
			  TSWAP_STR(TSWAP_SQPOLL_IDLE_DEFAULT),
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_iopoll",
		.lname	= "tswap io_uring IOPOLL",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, iopoll),
		.help	= "io_uring only: busy-poll completions (IORING_SETUP_IOPOLL); block devices with poll queues",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_fixedbufs",
		.lname	= "tswap io_uring registered buffers",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, fixedbufs),
		.help	= "io_uring only: register fio's I/O buffers once per ring, use READ_FIXED/WRITE_FIXED (counts against RLIMIT_MEMLOCK)",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "tswap_registerfiles",
		.lname	= "tswap io_uring registered files",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct tswap_options, registerfiles),
		.help	= "io_uring only: register the job's files, use IOSQE_FIXED_FILE",
		.def	= "0",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= NULL,
	},
};

static const struct fio_option *tswap_find_option(const char *name)
{
	const struct fio_option *o;

	for (o = tswap_option_table; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

unsigned long tswap_read_ulong(const char *path)
{
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* bs values of the directions the job uses. */
static int check_bs(struct thread_data *td, unsigned int P)
{
	int ddir;

	for (ddir = DDIR_READ; ddir <= DDIR_WRITE; ddir++) {
		if ((ddir == DDIR_READ && !td_read(td)) ||
		    (ddir == DDIR_WRITE && !td_write(td)))
			continue;
		if (td->o.min_bs[ddir] % P || td->o.max_bs[ddir] % P)
			return tswap_fail(td, EINVAL,
					  "tswap_threads=%u: bs=%llu is not divisible by it (each intra-op part is bs/tswap_threads bytes)",
					  P, td->o.min_bs[ddir] % P ? td->o.min_bs[ddir] : td->o.max_bs[ddir]);
	}
	return 0;
}

int tswap_check_options(struct thread_data *td)
{
	struct tswap_options *o = td->eo;
	unsigned long aio_max;

	if (!td->o.odirect)
		return tswap_fail(td, EINVAL,
				  "direct=0: tswap always does O_DIRECT I/O (tensor swaps bypass the page cache); set direct=1");
	/* tswap_block_size, tswap_threads and tswap_queue_depth are in
	 * their ranges: parse_num, their only check, refused the rest. */
	if (o->backend == TSWAP_BE_IO_URING && o->queue_depth > TSWAP_MAX_URING_DEPTH)
		return tswap_fail(td, EINVAL,
				  "tswap_queue_depth=%u: above %u, the most SQ entries an io_uring ring can have",
				  o->queue_depth, (unsigned int)TSWAP_MAX_URING_DEPTH);
	if (o->backend == TSWAP_BE_LIBAIO) {
		static const char *const uring_only[] = {
			"tswap_sqpoll", "tswap_iopoll", "tswap_fixedbufs",
			"tswap_registerfiles", "tswap_sqpoll_idle",
		};
		unsigned int set[] = { o->sqpoll, o->iopoll, o->fixedbufs,
				       o->registerfiles, o->sqpoll_idle_set };
		unsigned int i;

		for (i = 0; i < sizeof(set) / sizeof(set[0]); i++)
			if (set[i])
				return tswap_fail(td, EINVAL,
						  "%s=%u: only with tswap_backend=io_uring",
						  uring_only[i], i == 4 ? o->sqpoll_idle : 1);
		aio_max = tswap_read_ulong("/proc/sys/fs/aio-max-nr");
		if (aio_max && o->queue_depth > aio_max)
			return tswap_fail(td, EINVAL,
					  "tswap_queue_depth=%u: above fs.aio-max-nr=%lu, the most io_setup can give (raise it with sysctl fs.aio-max-nr)",
					  o->queue_depth, aio_max);
	}
	/* tswap_pin=0 is only ever set explicitly: the default is auto. */
	if (o->alloc == TSWAP_ALLOC_DEEPSPEED && o->pin == TSWAP_PIN_OFF)
		return tswap_fail(td, EINVAL,
				  "tswap_alloc=deepspeed: not with tswap_pin=0 (new_cpu_locked_tensor always locks its buffers; leave tswap_pin unset or use tswap_alloc=fio)");
	if (o->alloc == TSWAP_ALLOC_DEEPSPEED && o->bounce)
		return tswap_fail(td, EINVAL,
				  "tswap_alloc=deepspeed: not with tswap_bounce=1 (DeepSpeed never bounces a buffer of its pinned-tensor manager: cpu_op_desc_t, is_managed)");
	if (o->alloc == TSWAP_ALLOC_DEEPSPEED && fio_option_is_set(&td->o, mem_type))
		return tswap_fail(td, EINVAL,
				  "tswap_alloc=deepspeed: not with iomem=/mem= (the engine allocates the I/O buffers; use tswap_alloc=fio to choose fio's allocator)");
	if (o->bounce && o->pin == TSWAP_PIN_ON)
		return tswap_fail(td, EINVAL,
				  "tswap_bounce=1: not with tswap_pin=1 (DeepSpeed bounces only a tensor that is not page-locked; set tswap_pin=0 or leave it auto)");
	if (o->bounce && o->fixedbufs)
		return tswap_fail(td, EINVAL,
				  "tswap_bounce=1: not with tswap_fixedbufs=1 (the I/O goes to a bounce buffer allocated per operation, never to fio's registered buffers)");
	if (o->bounce && o->handoff == TSWAP_HANDOFF_INLINE)
		return tswap_fail(td, EINVAL,
				  "tswap_bounce=1: not with tswap_handoff=inline (DeepSpeed's synchronous read()/write() do the I/O in the tensor itself; the bounce buffer is async_pread/async_pwrite's, tswap_handoff=worker)");
	if (o->fill != TSWAP_FILL_NONE) {
		const char *fill = tswap_fill_names[o->fill];

		if (td_read(td) || td_trim(td))
			return tswap_fail(td, EINVAL,
					  "tswap_fill=%s: writes only (rw=write: DeepSpeed's FastFileWriter fills its buffer to write it)",
					  fill);
		if (td->o.iodepth != 1)
			return tswap_fail(td, EINVAL,
					  "tswap_fill=%s: needs iodepth=1, not %u (FastFileWriter has at most one write in flight: single_io_buffer.py and double_io_buffer.py drain)",
					  fill, td->o.iodepth);
		if (td->o.verify != VERIFY_NONE)
			return tswap_fail(td, EINVAL,
					  "tswap_fill=%s: not with verify (a write goes from the fill buffer, filled from fio's buffer before fio sets the write's verify header)",
					  fill);
		if (o->bounce)
			return tswap_fail(td, EINVAL,
					  "tswap_fill=%s: not with tswap_bounce=1 (the fill buffer is page-locked: DeepSpeed never bounces it)",
					  fill);
		if (o->fixedbufs)
			return tswap_fail(td, EINVAL,
					  "tswap_fill=%s: not with tswap_fixedbufs=1 (the I/O goes from the fill buffer, never from fio's registered buffers)",
					  fill);
		if (o->fill == TSWAP_FILL_DOUBLE && o->handoff == TSWAP_HANDOFF_INLINE)
			return tswap_fail(td, EINVAL,
					  "tswap_fill=double: not with tswap_handoff=inline (the next half is filled while a worker writes this one: async_pwrite)");
	}
	if (o->reopen && o->registerfiles)
		return tswap_fail(td, EINVAL,
				  "tswap_reopen=1: not with tswap_registerfiles=1 (registered files are opened once per job)");
	return check_bs(td, o->threads);
}
