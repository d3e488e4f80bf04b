// SPDX-License-Identifier: GPL-2.0-only
/*
 * tswap.c - fio glue: options, hooks, io_u <-> tensor-swap operation.
 *
 * One fio io_u is one tensor-swap operation (design.md section 1): fio's
 * bs is the tensor size, its iodepth the operations queued to the engine,
 * and the engine cuts each operation into intra-op parts and blocks and
 * drives them through the scheduler (sched.c) over a backend (libaio,
 * io_uring).  fio's bandwidth is then the effective swap rate and its clat
 * the per-tensor latency.
 *
 * Messages go to stderr through log_err(), one line each, naming the option
 * and the rule; nothing is ever printed on stdout (fio's JSON goes there).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "fio.h"
#include "optgroup.h"

#include "backend.h"
#include "plan.h"
#include "sched.h"
#include "stats.h"

#ifndef TSWAP_FIO_VERSION
#error "TSWAP_FIO_VERSION must name the fio version the engine is built for"
#endif
#ifndef TSWAP_VERSION
#define TSWAP_VERSION "unknown"
#endif
#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

/* A limit of plan.h or backend.h as a string, for help texts and rules. */
#define TSWAP_STR_(x) #x
#define TSWAP_STR(x) TSWAP_STR_(x)

_Static_assert(TSWAP_MAX_QUEUE_DEPTH == INT_MAX && TSWAP_MAX_SQPOLL_IDLE == INT_MAX,
	       "io_setup and sq_thread_idle take an int");

enum { TSWAP_BE_LIBAIO = 0, TSWAP_BE_IO_URING = 1 };
enum { TSWAP_HANDOFF_WORKER = 0, TSWAP_HANDOFF_INLINE = 1 };
/* tswap_pin: the oval is the value's index in pin_names. */
enum { TSWAP_PIN_OFF = 0, TSWAP_PIN_ON = 1, TSWAP_PIN_AUTO = 2 };

struct tswap_options {
	void *pad;			/* fio overwrites this with td */
	unsigned int backend;
	unsigned long long block_size;
	unsigned int queue_depth;
	unsigned int submit;
	unsigned int window;
	unsigned int threads;
	unsigned int handoff;
	unsigned int reopen;
	unsigned int pin;
	char *stats;
	unsigned int sqpoll;
	unsigned int sqpoll_idle;
	bool sqpoll_idle_set;		/* given in the job (default 1000) */
	unsigned int iopoll;
	unsigned int fixedbufs;
	unsigned int registerfiles;
};

struct tswap_file {
	uint32_t dio_align;		/* DIO offset alignment, bytes */
	uint32_t mem_align;		/* DIO memory alignment, bytes */
	struct tswap_geom geom;		/* the job's geometry on this file */
	bool checked;			/* geometry checked against it */
};

/*
 * fio's io_u->engine_data: the operation, and the descriptor tswap_reopen
 * opened for it (slot in tswap_data.rfds, -1 when none).
 */
struct tswap_uop {
	struct tswap_op op;		/* first: engine_data points here */
	int rslot;
};

struct tswap_data {
	struct tswap_sched *sched;
	const struct tswap_backend *be;
	struct io_u **pending;		/* queued, not committed */
	unsigned int npending;
	struct tswap_op **events;	/* reaped by getevents() */
	struct tswap_file *files;	/* by fileno */
	unsigned int nfiles;
	int *fds;			/* registered files (io_uring) */
	bool files_registered;
	bool warned_op;
	int *rfds;			/* tswap_reopen: per-op fds, -1 free */
	unsigned int *rfree;		/* free slots of rfds (a stack) */
	unsigned int nrfree;
	bool pinned;			/* tswap_pin: fio's buffers mlock'd now */
	bool pin_locked;		/* they were locked for the job (stats) */
	uint64_t ops, op_errors, op_short;
	uint64_t t_first_ns, t_last_ns;
	char stats_path[PATH_MAX];
};

static const char *const submit_names[] = { "block", "single" };
static const char *const window_names[] = { "overlap", "sequential" };
static const char *const pin_names[] = { "0", "1", "auto" };

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

static struct fio_option options[] = {
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
		.help	= "mlock fio's I/O buffers once before the first I/O, as DeepSpeed's swap buffers are page-locked (new_cpu_locked_tensor: posix_memalign + mlock; CUDA pin_memory); needs RLIMIT_MEMLOCK of the buffers' size unless CAP_IPC_LOCK",
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

	for (o = options; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static int tswap_fail(struct thread_data *td, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line on stderr, prefixed with the job, and the job's error set. */
static int tswap_fail(struct thread_data *td, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("tswap: %s: %s\n", td->o.name, msg);
	td_verror(td, err, "tswap");
	return 1;
}

/*
 * The loading fio must be the one the engine was compiled against: struct
 * layouts change between fio versions while FIO_IOOPS_VERSION does not
 * (design.md section 3).
 */
static int check_fio_version(struct thread_data *td)
{
	const char *loaded = dlsym(RTLD_DEFAULT, "fio_version_string");

	if (loaded && !strcmp(loaded, TSWAP_FIO_VERSION))
		return 0;
	return tswap_fail(td, EINVAL,
			  "tswap.so was built for %s but is loaded by %s; rebuild it with 'make' against this fio",
			  TSWAP_FIO_VERSION, loaded ? loaded : "an unknown fio");
}

static unsigned long read_ulong_file(const char *path)
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

static const char *file_type(mode_t m)
{
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "FIFO";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISDIR(m))
		return "directory";
	return "special file";
}

/*
 * The absolute name of `path` with its directory resolved (the last
 * component kept as it is, existing or not): two spellings of one file
 * name ("./f", "d/../f", a symlinked directory) compare equal.
 */
static bool canon_name(const char *path, char *out, size_t outlen)
{
	char d[PATH_MAX], b[PATH_MAX], rd[PATH_MAX];

	snprintf(d, sizeof(d), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	if (!realpath(dirname(d), rd))
		return false;
	return snprintf(out, outlen, "%s/%s", rd, basename(b)) < (int)outlen;
}

/* Is the stats file (stat `st` if `exists`) one of the job's files? */
static bool stats_is_target(struct thread_data *td, const char *path,
			    const struct stat *st, bool exists)
{
	char cs[PATH_MAX], cf[PATH_MAX];
	struct fio_file *f;
	struct stat fst;
	unsigned int i;
	bool have_cs = canon_name(path, cs, sizeof(cs));

	for_each_file(td, f, i) {
		if (!f->file_name)
			continue;
		if (exists && !stat(f->file_name, &fst) &&
		    fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
			return true;
		if (have_cs && canon_name(f->file_name, cf, sizeof(cf)) &&
		    !strcmp(cs, cf))
			return true;
	}
	return false;
}

/* The names a tswap_stats template expands to, for this job. */
static struct tswap_stats_names stats_names(struct thread_data *td)
{
	struct tswap_stats_names v = {
		.job_name = td->o.name,
		.job_number = (int)td->thread_number - 1,
		.clone_number = (int)td->subjob_number,
		.file_name = td->files_index && td->files && td->files[0] ?
			td->files[0]->file_name : NULL,
		.pid = (long)getpid(),
	};

	return v;
}

/*
 * numjobs > 1 with a path that is the same for every clone (no %n; %p
 * differs only between processes): each job renames its stats over the
 * same file and only the last one survives.  Said once, by the first job.
 */
static void warn_shared_stats(struct thread_data *td, const char *tmpl)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct tswap_stats_names v = stats_names(td);

	if (td->o.numjobs < 2 || td->subjob_number)
		return;
	v.job_number = 0;
	v.clone_number = 0;
	v.pid = 1;
	if (tswap_stats_expand_path(tmpl, &v, a, sizeof(a)))
		return;
	v.job_number = 1;
	v.clone_number = 1;
	v.pid = td->o.use_thread ? 1 : 2;
	if (tswap_stats_expand_path(tmpl, &v, b, sizeof(b)) || strcmp(a, b))
		return;
	log_err("tswap: %s: tswap_stats=%s: numjobs=%u jobs write this one file, the last to end wins; add %%n (job number) to the path\n",
		td->o.name, tmpl, td->o.numjobs);
}

/*
 * Every tswap_stats path that would fail at the end of the job fails here,
 * before any I/O, and nothing of the user's is ever replaced: the stats
 * are written to PATH.XXXXXX and renamed over PATH (stats.c), so PATH must
 * be new or a regular file (a symlink to one is followed, and stays), not
 * one of the job's own files, and PATH.XXXXXX must be creatable.
 */
static int check_stats_path(struct thread_data *td, struct tswap_data *ld,
			    const char *tmpl)
{
	char dir[PATH_MAX], probe[PATH_MAX + 16], real[PATH_MAX];
	const char *parent;
	struct stat st, lst;
	struct tswap_stats_names v = stats_names(td);
	bool exists;
	int ret, fd, flags;

	ret = tswap_stats_expand_path(tmpl, &v, ld->stats_path,
				      sizeof(ld->stats_path));
	if (ret == -EINVAL)
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: unknown %%-escape, or $filename of a job without a file name (use %%j job name, %%n job number, %%p pid, %%%% for %%; fio's $jobname, $jobnum; $filename)",
				  tmpl);
	if (ret)
		return tswap_fail(td, -ret, "tswap_stats=%.64s...: path too long (%zu bytes, at most %d)",
				  tmpl, strlen(tmpl), PATH_MAX - 1);
	warn_shared_stats(td, tmpl);
	exists = !lstat(ld->stats_path, &lst);
	st = lst;
	if (exists && S_ISLNK(lst.st_mode)) {
		if (stat(ld->stats_path, &st))
			return tswap_fail(td, errno,
					  "tswap_stats=%s: is a symbolic link to nothing (%s); name a regular file or a new path",
					  ld->stats_path, strerror(errno));
		if (S_ISREG(st.st_mode)) {
			/* Write the file it points to; the link stays. */
			if (!realpath(ld->stats_path, real))
				return tswap_fail(td, errno, "tswap_stats=%s: cannot resolve the symbolic link: %s",
						  ld->stats_path, strerror(errno));
			snprintf(ld->stats_path, sizeof(ld->stats_path), "%s", real);
		}
	}
	if (exists && S_ISDIR(st.st_mode))
		return tswap_fail(td, EISDIR, "tswap_stats=%s: is a directory; name a file in it",
				  ld->stats_path);
	if (exists && !S_ISREG(st.st_mode))
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: is a %s; the stats are written to a new file renamed over the path, which would replace it: name a regular file or a new path",
				  ld->stats_path, file_type(st.st_mode));
	if (stats_is_target(td, ld->stats_path, &st, exists))
		return tswap_fail(td, EINVAL,
				  "tswap_stats=%s: is a target file of the job; name another file",
				  ld->stats_path);
	if (exists) {
		/* rename() cannot replace an immutable or append-only file. */
		fd = open(ld->stats_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0) {
			flags = 0;
			ret = ioctl(fd, FS_IOC_GETFLAGS, &flags);
			close(fd);
			if (!ret && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
				return tswap_fail(td, EPERM,
						  "tswap_stats=%s: the file is %s (chattr); it cannot be replaced",
						  ld->stats_path,
						  flags & FS_IMMUTABLE_FL ? "immutable" : "append-only");
		}
	}
	/* The exact temporary name stats.c will use, with its length. */
	snprintf(dir, sizeof(dir), "%s", ld->stats_path);
	parent = dirname(dir);
	if (snprintf(probe, sizeof(probe), "%s.XXXXXX", ld->stats_path) >= PATH_MAX)
		return tswap_fail(td, ENAMETOOLONG,
				  "tswap_stats=%s: cannot create a file in %s: %s (the stats are written to PATH.XXXXXX, then renamed)",
				  ld->stats_path, parent, strerror(ENAMETOOLONG));
	fd = mkstemp(probe);
	if (fd < 0)
		return tswap_fail(td, errno,
				  "tswap_stats=%s: cannot create a file in %s: %s (the stats are written to PATH.XXXXXX, then renamed)",
				  ld->stats_path, parent, strerror(errno));
	close(fd);
	if (unlink(probe))
		return tswap_fail(td, errno,
				  "tswap_stats=%s: cannot remove a file in %s (%s): %s",
				  ld->stats_path, parent, probe, strerror(errno));
	return 0;
}

static int tswap_init(struct thread_data *td)
{
	struct tswap_options *o = td->eo;
	struct tswap_data *ld;
	unsigned long aio_max;

	if (check_fio_version(td))
		return 1;
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
		aio_max = read_ulong_file("/proc/sys/fs/aio-max-nr");
		if (aio_max && o->queue_depth > aio_max)
			return tswap_fail(td, EINVAL,
					  "tswap_queue_depth=%u: above fs.aio-max-nr=%lu, the most io_setup can give (raise it with sysctl fs.aio-max-nr)",
					  o->queue_depth, aio_max);
	}
	if (o->reopen && o->registerfiles)
		return tswap_fail(td, EINVAL,
				  "tswap_reopen=1: not with tswap_registerfiles=1 (registered files are opened once per job)");
	if (check_bs(td, o->threads))
		return 1;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return tswap_fail(td, ENOMEM, "out of memory");
	td->io_ops_data = ld;
	ld->be = o->backend == TSWAP_BE_IO_URING ? &tswap_be_uring : &tswap_be_libaio;
	ld->pending = calloc(td->o.iodepth, sizeof(*ld->pending));
	ld->events = calloc(td->o.iodepth, sizeof(*ld->events));
	if (!ld->pending || !ld->events)
		return tswap_fail(td, ENOMEM, "out of memory");
	if (o->reopen) {
		unsigned int i;

		ld->rfds = calloc(td->o.iodepth, sizeof(*ld->rfds));
		ld->rfree = calloc(td->o.iodepth, sizeof(*ld->rfree));
		if (!ld->rfds || !ld->rfree)
			return tswap_fail(td, ENOMEM, "out of memory");
		for (i = 0; i < td->o.iodepth; i++) {
			ld->rfds[i] = -1;
			ld->rfree[i] = td->o.iodepth - 1 - i;
		}
		ld->nrfree = td->o.iodepth;
	}
	if (o->stats && *o->stats && check_stats_path(td, ld, o->stats))
		return 1;
	return 0;
}

/* Registered files: opened here, before the rings exist (fio's io_uring
 * engine does the same). */
static int open_registered_files(struct thread_data *td, struct tswap_data *ld)
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

static struct tswap_file *file_slot(struct tswap_data *ld, struct fio_file *f)
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
static int check_file(struct thread_data *td, struct tswap_data *ld,
		      struct fio_file *f)
{
	struct tswap_options *o = td->eo;
	struct tswap_file *tf = file_slot(ld, f);
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

static int tswap_open_file(struct thread_data *td, struct fio_file *f)
{
	struct tswap_data *ld = td->io_ops_data;
	struct tswap_file *tf;

	if (ld && ld->files_registered && ld->fds[f->fileno] >= 0) {
		f->fd = ld->fds[f->fileno];
	} else if (generic_open_file(td, f)) {
		if (td->error == EINVAL)
			log_err("tswap: %s: %s refuses O_DIRECT (direct=1); use a file on a filesystem or a block device that supports direct I/O\n",
				td->o.name, f->file_name);
		return 1;
	}
	if (!ld)
		return 0;
	tf = file_slot(ld, f);
	if (tf && tf->checked)
		return 0;
	/* Created after post_init (create_serialize=0): check it now. */
	if (check_file(td, ld, f)) {
		if (!ld->files_registered) {
			int cret = generic_close_file(td, f);

			(void)cret;	/* already failing with the reason */
		} else {
			f->fd = -1;
		}
		return 1;
	}
	return 0;
}

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
 * munlocks, before fio frees the buffers.
 *
 * RLIMIT_MEMLOCK is the usual reason mlock fails for a user without
 * CAP_IPC_LOCK (mm/mlock.c: EPERM with a limit of 0, ENOMEM past it;
 * EAGAIN when some pages cannot be locked).  tswap_pin=1 fails the job;
 * tswap_pin=auto (the default) prints one note and runs unlocked, since
 * CUDA's pinned memory (cudaHostAlloc) is not charged to that limit and the
 * lock does not change the I/O itself.  With no limit, ENOMEM is memory
 * that is really short: both fail.
 */
static int pin_buffers(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_options *o = td->eo;
	const char *mode = pin_names[o->pin];
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
		if (o->pin == TSWAP_PIN_AUTO) {
			log_err("tswap: %s: tswap_pin=auto: I/O buffers not locked: cannot mlock %zu bytes (%s), RLIMIT_MEMLOCK (ulimit -l) is %llu bytes; running unlocked (tswap_pin=1 requires the lock, tswap_pin=0 silences this)\n",
				td->o.name, td->orig_buffer_size, strerror(err),
				(unsigned long long)rl.rlim_cur);
			return 0;
		}
		return tswap_fail(td, err,
				  "tswap_pin=%s: cannot mlock %zu bytes of I/O buffers (%s): RLIMIT_MEMLOCK (ulimit -l) is %llu bytes; raise it or set tswap_pin=0",
				  mode, td->orig_buffer_size, strerror(err),
				  (unsigned long long)rl.rlim_cur);
	}
	return tswap_fail(td, err, "tswap_pin=%s: cannot mlock %zu bytes of I/O buffers: %s",
			  mode, td->orig_buffer_size, strerror(err));
}

static int tswap_post_init(struct thread_data *td)
{
	struct tswap_options *o = td->eo;
	struct tswap_data *ld = td->io_ops_data;
	struct tswap_sched_conf c = {
		.be = ld->be,
		.be_conf = {
			.queue_depth = o->queue_depth,
			.buf_base = td->orig_buffer,
			.buf_len = td->orig_buffer_size,
			.sqpoll = o->sqpoll,
			.sqpoll_idle_ms = o->sqpoll_idle_set ? o->sqpoll_idle :
							       TSWAP_SQPOLL_IDLE_DEFAULT,
			.iopoll = o->iopoll,
			.fixedbufs = o->fixedbufs,
			.registerfiles = o->registerfiles,
		},
		.block_size = o->block_size,
		.threads = o->threads,
		.handoff = o->handoff == TSWAP_HANDOFF_WORKER,
		.submit = o->submit,
		.window = o->window,
		.max_ops = td->o.iodepth,
		.timing = o->stats && *o->stats,
		.ramp = td->o.ramp_time != 0,
	};
	struct fio_file *f;
	unsigned int i;
	char err[256];
	int ret;

	/* Geometry errors before any I/O context exists. */
	for_each_file(td, f, i) {
		ret = check_file(td, ld, f);
		if (ret > 0)
			return 1;
	}

	if (o->pin != TSWAP_PIN_OFF && pin_buffers(td, ld))
		return 1;

	/* IOPOLL needs the files too: setup checks they can be polled. */
	if (o->registerfiles || o->iopoll) {
		ret = open_registered_files(td, ld);
		if (ret)
			return tswap_fail(td, -ret, "%s=1: cannot open the job's files: %s",
					  o->registerfiles ? "tswap_registerfiles" : "tswap_iopoll",
					  strerror(-ret));
		c.be_conf.fds = ld->fds;
		c.be_conf.nr_files = td->o.nr_files;
	}

	ret = tswap_sched_create(&c, &ld->sched, err, sizeof(err));
	if (!ret)
		return 0;
	if (ld->be == &tswap_be_libaio && ret == -EAGAIN)
		return tswap_fail(td, EAGAIN,
				  "tswap_queue_depth=%u x tswap_threads=%u: io_setup failed, fs.aio-max-nr=%lu is exhausted (in use: %lu); lower them or raise fs.aio-max-nr",
				  o->queue_depth, o->threads,
				  read_ulong_file("/proc/sys/fs/aio-max-nr"),
				  read_ulong_file("/proc/sys/fs/aio-nr"));
	if (ld->be == &tswap_be_uring) {
		if (ret == -ENOSYS || ret == -EPERM)
			return tswap_fail(td, -ret,
					  "tswap_backend=io_uring: io_uring is not available here (%s; see kernel.io_uring_disabled or seccomp); use tswap_backend=libaio",
					  err);
		if (ret == -ENOMEM && o->fixedbufs)
			return tswap_fail(td, ENOMEM,
					  "tswap_fixedbufs=1: cannot register %zu bytes of I/O buffers (%s); raise RLIMIT_MEMLOCK (ulimit -l) or turn tswap_fixedbufs off",
					  td->orig_buffer_size, err);
		if (ret == -ENOMEM)
			return tswap_fail(td, ENOMEM,
					  "tswap_backend=io_uring: cannot allocate a ring of %u entries (%s); lower tswap_queue_depth or use tswap_backend=libaio",
					  o->queue_depth, err);
		if ((ret == -EOPNOTSUPP || ret == -EFAULT) && o->fixedbufs)
			return tswap_fail(td, -ret,
					  "tswap_fixedbufs=1: fio's I/O buffers cannot be registered (%s); use iomem=malloc or turn tswap_fixedbufs off",
					  err);
		if (ret == -EOPNOTSUPP && o->iopoll)
			return tswap_fail(td, EOPNOTSUPP,
					  "tswap_iopoll=1: the target cannot poll (%s); it needs a block device with poll queues",
					  err);
	}
	return tswap_fail(td, -ret, "tswap_backend=%s: %s", ld->be->name, err);
}

static int tswap_close_file(struct thread_data *td, struct fio_file *f)
{
	struct tswap_data *ld = td->io_ops_data;

	if (ld && ld->files_registered) {
		f->fd = -1;	/* closed in cleanup, after the rings */
		return 0;
	}
	return generic_close_file(td, f);
}

static int tswap_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct tswap_uop *u = calloc(1, sizeof(*u));

	(void)td;
	if (!u)
		return 1;
	u->op.user = io_u;
	u->rslot = -1;
	io_u->engine_data = &u->op;
	return 0;
}

static void tswap_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct tswap_options *o = td->eo;
	struct tswap_data *ld = td->io_ops_data;

	/* tswap_pin: fio frees the buffers right after the io_us
	 * (cleanup_io_u) and before the engine's cleanup: unlock them now. */
	if (ld && ld->pinned) {
		if (munlock(td->orig_buffer, td->orig_buffer_size))
			log_err("tswap: %s: tswap_pin=%s: munlock: %s\n", td->o.name,
				pin_names[o->pin],
				strerror(errno));
		ld->pinned = false;
	}
	free(io_u->engine_data);	/* the tswap_uop: op is its first member */
	io_u->engine_data = NULL;
}

/*
 * tswap_reopen=1: what deepspeed_io_handle_t::pread does before it hands
 * the operation over (deepspeed_py_io_handle.cpp): get_file_size() (a
 * stat() of the path, reads only; pwrite has none), then open_file()
 * (deepspeed_aio_common.cpp: O_RDONLY | O_DIRECT for reads, O_WRONLY |
 * O_CREAT | O_DIRECT, mode 0600, for writes), in the caller's thread.
 * The descriptor is the operation's; reopen_close() closes it when fio
 * collects the operation, as deepspeed_io_handle_t::wait() does.
 * Returns 0, or a positive errno (nothing left open).
 */
static int reopen_open(struct tswap_data *ld, struct tswap_uop *u,
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
static int reopen_close(struct tswap_data *ld, struct tswap_uop *u)
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

/*
 * fio_measuring - whether fio counts an io_u queued now in its report.
 * fio zeroes its counters once, when ramp_time ends (time.c,
 * ramp_time_over() -> reset_all_stats(), which zeroes total_io_u) and
 * counts an io_u in total_ios as td_io_queue() accepts it (ioengines.c):
 * an io_u fio counts is exactly one queued here after td->ramp_time_over
 * was set.  The tswap_stats file counts the same operations.
 */
static bool fio_measuring(const struct thread_data *td)
{
	return !td->o.ramp_time || td->ramp_time_over;
}

static enum fio_q_status tswap_queue(struct thread_data *td, struct io_u *io_u)
{
	struct tswap_data *ld = td->io_ops_data;
	struct tswap_op *op = io_u->engine_data;
	const struct tswap_file *tf;
	const char *rule = NULL;

	fio_ro_check(td, io_u);

	if (tswap_sched_busy(ld->sched) + ld->npending >= td->o.iodepth)
		return FIO_Q_BUSY;

	if (ddir_sync(io_u->ddir) || io_u->ddir == DDIR_TRIM) {
		/* Swap files need no ordering beyond fio's: like libaio,
		 * run them synchronously once nothing is in flight. */
		if (tswap_sched_busy(ld->sched) || ld->npending)
			return FIO_Q_BUSY;
		if (io_u->ddir == DDIR_TRIM) {
			do_io_u_trim(td, io_u);
			io_u_mark_submit(td, 1);
			io_u_mark_complete(td, 1);
		} else {
			do_io_u_sync(td, io_u);
		}
		return FIO_Q_COMPLETED;
	}

	tf = &ld->files[io_u->file->fileno];
	op->parts = 0;		/* tswap_threads parts */
	if (io_u->xfer_buf != io_u->buf && io_u->xfer_buflen < io_u->buflen) {
		/*
		 * fio resubmits the rest of a short transfer (io_u.c,
		 * io_completed: xfer_buf/offset advanced, xfer_buflen =
		 * resid), of whatever size the kernel left: cut it into as
		 * many DIO-aligned parts as divide it, or give it whole to
		 * one worker, and let the kernel judge it as fio's libaio
		 * engine does.
		 */
		op->parts = tswap_remainder_parts(&tf->geom, io_u->xfer_buflen);
	} else if (tswap_op_check(&tf->geom, io_u->offset, io_u->xfer_buflen, &rule) ||
		   ((uintptr_t)io_u->xfer_buf & (tf->mem_align - 1))) {
		/* bsrange/bssplit and offsets can break the geometry here. */
		if (!ld->warned_op) {
			log_err("tswap: %s: operation of %llu bytes at offset %llu: %s\n",
				td->o.name, io_u->xfer_buflen, io_u->offset,
				rule ? rule : "the I/O buffer is not aligned for direct I/O");
			ld->warned_op = true;
		}
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}

	op->buf = io_u->xfer_buf;
	op->offset = io_u->offset;
	op->len = io_u->xfer_buflen;
	op->dir = io_u->ddir == DDIR_READ ? TSWAP_READ : TSWAP_WRITE;
	op->fd = io_u->file->fd;
	op->fidx = (unsigned int)io_u->file->fileno;
	op->measured = fio_measuring(td);
	if (ld->rfds) {
		int err = reopen_open(ld, (struct tswap_uop *)op, io_u->file);

		if (err) {
			if (!ld->warned_op) {
				log_err("tswap: %s: tswap_reopen=1: cannot %s %s: %s\n",
					td->o.name, err == EBUSY ? "track" : "stat/open",
					io_u->file->file_name, strerror(err));
				ld->warned_op = true;
			}
			io_u->error = err;
			return FIO_Q_COMPLETED;
		}
	}
	ld->pending[ld->npending++] = io_u;
	return FIO_Q_QUEUED;
}

static int tswap_commit(struct thread_data *td)
{
	struct tswap_data *ld = td->io_ops_data;
	struct timespec now;
	unsigned int i;
	bool fill = fio_fill_issue_time(td);

	if (!ld->npending)
		return 0;
	if (fill) {
		fio_gettime(&now, NULL);
		if (td->o.read_iolog_file)
			memcpy(&td->last_issue, &now, sizeof(now));
	}
	for (i = 0; i < ld->npending; i++) {
		struct io_u *io_u = ld->pending[i];

		if (!ld->t_first_ns &&
		    ((struct tswap_op *)io_u->engine_data)->measured)
			ld->t_first_ns = tswap_now_ns();

		if (fill) {
			memcpy(&io_u->issue_time, &now, sizeof(now));
			io_u_queued(td, io_u);
		}
		tswap_sched_queue(ld->sched, io_u->engine_data);
	}
	io_u_mark_submit(td, ld->npending);
	ld->npending = 0;
	tswap_sched_kick(ld->sched);
	return 0;
}

static int tswap_getevents(struct thread_data *td, unsigned int min,
			   unsigned int max, const struct timespec *t)
{
	struct tswap_data *ld = td->io_ops_data;
	int n;

	n = tswap_sched_reap(ld->sched, min, max, t, ld->events);
	if (n > 0)
		ld->t_last_ns = tswap_now_ns();
	return n;
}

static struct io_u *tswap_event(struct thread_data *td, int event)
{
	struct tswap_data *ld = td->io_ops_data;
	struct tswap_op *op = ld->events[event];
	struct io_u *io_u = op->user;

	if (op->measured)
		ld->ops++;
	io_u->error = op->error;
	if (ld->rfds) {
		int err = reopen_close(ld, (struct tswap_uop *)op);

		if (err && !io_u->error)
			io_u->error = err;
	}
	if (op->error) {
		if (op->measured)
			ld->op_errors++;
		io_u->resid = 0;
		if (op->error == EOPNOTSUPP && !ld->warned_op &&
		    ((struct tswap_options *)td->eo)->iopoll) {
			log_err("tswap: %s: tswap_iopoll=1: %s cannot be polled (EOPNOTSUPP); IOPOLL needs a block device with poll queues (e.g. nvme poll_queues=N)\n",
				td->o.name, io_u->file->file_name);
			ld->warned_op = true;
		}
	} else {
		/* fio's contract: resid is the untransferred tail; fio
		 * requeues it (short_io_u) or stops at end of file. */
		io_u->resid = op->len - op->done;
		if (io_u->resid && op->measured)
			ld->op_short++;
	}
	return io_u;
}

static void write_stats(struct thread_data *td, struct tswap_data *ld)
{
	struct tswap_options *o = td->eo;
	struct tswap_stats st;
	struct tswap_stats_meta m = {
		.tswap_version = TSWAP_VERSION,
		.fio_version = TSWAP_FIO_VERSION,
		.job_name = td->o.name,
		.job_number = (int)td->thread_number - 1,
		.pid = (long)getpid(),
		.backend = ld->be->name,
		.submit = submit_names[o->submit],
		.window = window_names[o->window],
		.block_size = o->block_size,
		.queue_depth = o->queue_depth,
		.threads = o->threads,
		.pin = pin_names[o->pin],
		.pinned = ld->pin_locked,
		.operations = ld->ops,
		.op_errors = ld->op_errors,
		.op_short = ld->op_short,
		.elapsed_s = ld->t_first_ns && ld->t_last_ns > ld->t_first_ns ?
			(double)(ld->t_last_ns - ld->t_first_ns) / 1e9 : 0,
	};
	int ret;

	if (tswap_stats_init(&st, o->queue_depth)) {
		log_err("tswap: %s: tswap_stats=%s: out of memory\n", td->o.name,
			ld->stats_path);
		return;
	}
	tswap_sched_stats(ld->sched, &st);
	ret = tswap_stats_write_json(ld->stats_path, &m, &st);
	if (ret) {
		log_err("tswap: %s: tswap_stats=%s: cannot write: %s\n", td->o.name,
			ld->stats_path, strerror(-ret));
		td_verror(td, -ret, "tswap_stats");
	}
	tswap_stats_free(&st);
}

static void tswap_cleanup(struct thread_data *td)
{
	struct tswap_data *ld = td->io_ops_data;
	struct fio_file *f;
	unsigned int i;

	if (!ld)
		return;
	if (ld->sched) {
		tswap_sched_quiesce(ld->sched);
		if (ld->stats_path[0] && !tswap_sched_busy(ld->sched))
			write_stats(td, ld);
		tswap_sched_destroy(ld->sched);	/* joins the workers */
	}
	/* tswap_reopen: operations fio never collected (an aborted job). */
	for (i = 0; ld->rfds && i < td->o.iodepth; i++)
		if (ld->rfds[i] >= 0 && close(ld->rfds[i]))
			log_err("tswap: %s: tswap_reopen=1: close: %s\n", td->o.name,
				strerror(errno));
	if (ld->files_registered) {
		for_each_file(td, f, i) {
			if (ld->fds[i] >= 0)
				close(ld->fds[i]);
			f->fd = -1;
		}
	}
	free(ld->fds);
	free(ld->rfds);
	free(ld->rfree);
	free(ld->files);
	free(ld->pending);
	free(ld->events);
	free(ld);
	td->io_ops_data = NULL;
}

__attribute__((visibility("default")))
struct ioengine_ops ioengine = {
	.name			= "tswap",
	.version		= FIO_IOOPS_VERSION,
	/*
	 * FIO_NO_OFFLOAD: io_submit_mode=offload runs queue/getevents in
	 * fio's workqueue threads over copies of the job, which never get
	 * this engine's post_init (no files, no scheduler) and share none
	 * of its state: fio refuses it at load in one line, as it does for
	 * its own io_uring engine.
	 */
	.flags			= FIO_ASYNCIO_SYNC_TRIM | FIO_ASYNCIO_SETS_ISSUE_TIME |
				  FIO_NO_OFFLOAD,
	.init			= tswap_init,
	.post_init		= tswap_post_init,
	.queue			= tswap_queue,
	.commit			= tswap_commit,
	.getevents		= tswap_getevents,
	.event			= tswap_event,
	.cleanup		= tswap_cleanup,
	.open_file		= tswap_open_file,
	.close_file		= tswap_close_file,
	.get_file_size		= generic_get_file_size,
	.io_u_init		= tswap_io_u_init,
	.io_u_free		= tswap_io_u_free,
	.options		= options,
	.option_struct_size	= sizeof(struct tswap_options),
};
