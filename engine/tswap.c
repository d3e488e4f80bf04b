// SPDX-License-Identifier: GPL-2.0-only
/*
 * tswap.c - fio glue: the engine's hooks, io_u <-> tensor-swap operation.
 *
 * One fio io_u is one tensor-swap operation (design.md section 1): fio's
 * bs is the tensor size, its iodepth the operations queued to the engine,
 * and the engine cuts each operation into intra-op parts and blocks and
 * drives them through the scheduler (sched.c) over a backend (libaio,
 * io_uring).  fio's bandwidth is then the effective swap rate and its clat
 * the per-tensor latency.  The options are in options.c, the files' checks
 * in target.c, tswap_pin in pin.c, tswap_alloc in alloc.c, tswap_reopen in
 * reopen.c, the tswap_stats file in statspath.c.
 *
 * Messages go to stderr through log_err(), one line each, naming the option
 * and the rule; nothing is ever printed on stdout (fio's JSON goes there).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tswap.h"

#ifndef TSWAP_FIO_VERSION
#error "TSWAP_FIO_VERSION must name the fio version the engine is built for"
#endif

/* One line on stderr, prefixed with the job, and the job's error set. */
int tswap_fail(struct thread_data *td, int err, const char *fmt, ...)
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

static struct ioengine_ops ioengine_ds_alloc;
static void ds_alloc_ops_init(void);

static int tswap_init(struct thread_data *td)
{
	static pthread_once_t ds_alloc_once = PTHREAD_ONCE_INIT;
	struct tswap_options *o = td->eo;
	struct tswap_data *ld;
	int ret;

	if (check_fio_version(td) || tswap_check_options(td))
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
	if (o->reopen && tswap_reopen_init(ld, td->o.iodepth))
		return tswap_fail(td, ENOMEM, "out of memory");
	if (o->stats && *o->stats && tswap_check_stats_path(td, ld, o->stats))
		return 1;
	if (o->alloc == TSWAP_ALLOC_DEEPSPEED) {
		ret = pthread_once(&ds_alloc_once, ds_alloc_ops_init);
		if (ret)
			return tswap_fail(td, ret, "tswap_alloc=deepspeed: pthread_once: %s",
					  strerror(ret));
		td->io_ops = &ioengine_ds_alloc;
	}
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
	tf = tswap_file_slot(ld, f);
	if (tf && tf->checked)
		return 0;
	/* Created after post_init (create_serialize=0): check it now. */
	if (tswap_check_file(td, ld, f)) {
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
		ret = tswap_check_file(td, ld, f);
		if (ret > 0)
			return 1;
	}

	/* tswap_alloc=deepspeed: tswap_iomem_alloc locked them or failed,
	 * and fio 3.33 goes on (init_io_u ignores init_io_u_buffers). */
	if (ld->alloc_failed)
		return 1;
	/* tswap_bounce: fio's buffers are the tensor that is not locked. */
	if (o->alloc == TSWAP_ALLOC_FIO && o->pin != TSWAP_PIN_OFF && !o->bounce &&
	    tswap_pin_buffers(td, ld))
		return 1;

	if (o->fill != TSWAP_FILL_NONE && tswap_fill_init(td, ld))
		return 1;

	/* IOPOLL needs the files too: setup checks they can be polled. */
	if (o->registerfiles || o->iopoll) {
		ret = tswap_open_registered_files(td, ld);
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
				  tswap_read_ulong("/proc/sys/fs/aio-max-nr"),
				  tswap_read_ulong("/proc/sys/fs/aio-nr"));
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
	struct tswap_data *ld = td->io_ops_data;
	struct tswap_uop *u = io_u->engine_data;

	tswap_unpin_buffers(td, ld);
	/* Never reaped (an aborted job): free its bounce buffer unless a
	 * worker may still do I/O into it (then it is left allocated). */
	if (u && u->bounce && !(ld && ld->sched && tswap_sched_busy(ld->sched)))
		tswap_bounce_drop(td, u);
	free(io_u->engine_data);	/* the tswap_uop: op is its first member */
	io_u->engine_data = NULL;
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

/*
 * queue_failed - an operation that fails before it reaches the scheduler
 * (geometry, tswap_reopen's open, tswap_bounce's buffer): fio completes it
 * with err and counts it in total_ios, so the tswap_stats file counts it
 * too, in operations and op_errors.
 */
static enum fio_q_status queue_failed(struct thread_data *td, struct io_u *io_u,
				      int err)
{
	struct tswap_data *ld = td->io_ops_data;

	if (fio_measuring(td)) {
		ld->ops++;
		ld->op_errors++;
	}
	io_u->error = err;
	return FIO_Q_COMPLETED;
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
		   (!((struct tswap_options *)td->eo)->bounce && !ld->fill.buf &&
		    ((uintptr_t)io_u->xfer_buf & (tf->mem_align - 1)))) {
		/* bsrange/bssplit and offsets can break the geometry here;
		 * fio's buffer only when the I/O goes to it (tswap_bounce,
		 * tswap_fill: to the page-aligned bounce or fill buffer,
		 * whatever the tensor's address, as in DeepSpeed). */
		if (!ld->warned_op) {
			log_err("tswap: %s: operation of %llu bytes at offset %llu: %s\n",
				td->o.name, io_u->xfer_buflen, io_u->offset,
				rule ? rule : "the I/O buffer is not aligned for direct I/O");
			ld->warned_op = true;
		}
		return queue_failed(td, io_u, EINVAL);
	}

	op->buf = io_u->xfer_buf;
	op->offset = io_u->offset;
	op->len = io_u->xfer_buflen;
	op->dir = io_u->ddir == DDIR_READ ? TSWAP_READ : TSWAP_WRITE;
	op->fd = io_u->file->fd;
	op->fidx = (unsigned int)io_u->file->fileno;
	op->measured = fio_measuring(td);
	if (ld->rfds) {
		int err = tswap_reopen_open(ld, (struct tswap_uop *)op, io_u->file);

		if (err) {
			if (!ld->warned_op) {
				log_err("tswap: %s: tswap_reopen=1: cannot %s %s: %s\n",
					td->o.name, err == EBUSY ? "track" : "stat/open",
					io_u->file->file_name, strerror(err));
				ld->warned_op = true;
			}
			return queue_failed(td, io_u, err);
		}
	}
	if (ld->fill.buf)
		tswap_fill_queue(ld, (struct tswap_uop *)op, io_u->xfer_buf,
				 (size_t)((char *)io_u->xfer_buf - (char *)io_u->buf));
	if (((struct tswap_options *)td->eo)->bounce) {
		const char *call;
		int err = tswap_bounce_get((struct tswap_uop *)op, &call);

		if (err) {
			int cerr = tswap_reopen_close(ld, (struct tswap_uop *)op);

			if (!ld->warned_op)
				tswap_bounce_why(td, op->len, call, err);
			if (cerr)
				log_err("tswap: %s: tswap_reopen=1: close: %s\n", td->o.name,
					strerror(cerr));
			ld->warned_op = true;
			return queue_failed(td, io_u, err);
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
	/* tswap_fill=double: the next half filled while this write is in
	 * flight (iodepth=1: the one io_u just committed). */
	if (((struct tswap_options *)td->eo)->fill == TSWAP_FILL_DOUBLE)
		tswap_fill_ahead(ld, ld->pending[0]->xfer_buf,
				 td->o.time_based ? 0 : td->total_io_size);
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
	if (((struct tswap_uop *)op)->bounce) {
		int err = tswap_bounce_put(ld, (struct tswap_uop *)op, io_u->xfer_buf);

		if (err && !io_u->error)
			io_u->error = err;
	}
	if (ld->rfds) {
		int err = tswap_reopen_close(ld, (struct tswap_uop *)op);

		if (err && !io_u->error)
			io_u->error = err;
	}
	if (io_u->error && !op->error && op->measured)
		ld->op_errors++;	/* the bounce's munlock, the reopen's close */
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

static void tswap_cleanup(struct thread_data *td)
{
	struct tswap_data *ld = td->io_ops_data;
	bool busy = false;

	if (!ld)
		return;
	if (ld->sched) {
		tswap_sched_quiesce(ld->sched);
		busy = tswap_sched_busy(ld->sched);
		if (ld->stats_path[0] && !busy)
			tswap_write_stats(td, ld);
		tswap_sched_destroy(ld->sched);	/* joins the workers */
	}
	tswap_reopen_cleanup(td, ld);
	/* I/O left in flight by an aborted job: the buffer stays. */
	if (!busy)
		tswap_fill_cleanup(td, ld);
	tswap_close_registered_files(td, ld);
	free(ld->fds);
	free(ld->files);
	free(ld->pending);
	free(ld->events);
	free(ld);
	td->io_ops_data = NULL;
}

/*
 * The engine's operations, twice: `ioengine`, what fio loads, and the same
 * with fio's iomem_alloc/iomem_free hooks (alloc.c), which tswap_init
 * gives a tswap_alloc=deepspeed job (td->io_ops) before fio allocates its
 * buffers (backend.c: td_io_init, then init_io_u).  fio reads the hooks
 * from the operations (memory.c allocate_io_mem), and with them refuses
 * iomem=: a tswap_alloc=fio job keeps fio's allocation and iomem= as they
 * are.  `ioengine` is fio's, shared by every job of the process, so it is
 * never changed; the second copy is static and complete in every process
 * (fio's thread_data, in shared memory, is read by fio's main process).
 *
 * FIO_NO_OFFLOAD: io_submit_mode=offload runs queue/getevents in fio's
 * workqueue threads over copies of the job, which never get this engine's
 * post_init (no files, no scheduler) and share none of its state: fio
 * refuses it at load in one line, as it does for its own io_uring engine.
 */
#define TSWAP_IOENGINE_OPS						\
	.name			= "tswap",				\
	.version		= FIO_IOOPS_VERSION,			\
	.flags			= FIO_ASYNCIO_SYNC_TRIM | FIO_ASYNCIO_SETS_ISSUE_TIME | \
				  FIO_NO_OFFLOAD,			\
	.init			= tswap_init,				\
	.post_init		= tswap_post_init,			\
	.queue			= tswap_queue,				\
	.commit			= tswap_commit,				\
	.getevents		= tswap_getevents,			\
	.event			= tswap_event,				\
	.cleanup		= tswap_cleanup,			\
	.open_file		= tswap_open_file,			\
	.close_file		= tswap_close_file,			\
	.get_file_size		= generic_get_file_size,		\
	.io_u_init		= tswap_io_u_init,			\
	.io_u_free		= tswap_io_u_free,			\
	.options		= tswap_option_table,			\
	.option_struct_size	= sizeof(struct tswap_options)

__attribute__((visibility("default")))
struct ioengine_ops ioengine = {
	TSWAP_IOENGINE_OPS,
};

static struct ioengine_ops ioengine_ds_alloc = {
	TSWAP_IOENGINE_OPS,
	.iomem_alloc		= tswap_iomem_alloc,
	.iomem_free		= tswap_iomem_free,
};

/* fio sets dlhandle on `ioengine` when it loads the engine (and adds
 * FIO_RAWIO to its flags with direct=1), before any job starts, and
 * dlclose()s td->io_ops->dlhandle when the job ends. */
static void ds_alloc_ops_init(void)
{
	ioengine_ds_alloc.dlhandle = ioengine.dlhandle;
	ioengine_ds_alloc.flags = ioengine.flags;
}
