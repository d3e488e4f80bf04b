/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tswap.h - what the fio glue files share: the job's options and state, and
 * what each glue file gives the hooks of tswap.c.
 *
 * Only the files that include this header include fio's headers (tswap.c,
 * options.c, target.c, pin.c, alloc.c, reopen.c, bounce.c, fill.c,
 * statspath.c);
 * plan, sched, stats and the backends know nothing of fio (design.md
 * section 4).
 * Every function here that can fail says why in one line on stderr
 * (tswap_fail) unless its comment says otherwise.
 */
#ifndef TSWAP_TSWAP_H
#define TSWAP_TSWAP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "fio.h"

#include "backend.h"
#include "plan.h"
#include "sched.h"

enum { TSWAP_BE_LIBAIO = 0, TSWAP_BE_IO_URING = 1 };
enum { TSWAP_HANDOFF_WORKER = 0, TSWAP_HANDOFF_INLINE = 1 };
/* tswap_pin: the oval is the value's index in tswap_pin_names. */
enum { TSWAP_PIN_OFF = 0, TSWAP_PIN_ON = 1, TSWAP_PIN_AUTO = 2 };
/* tswap_alloc: who allocates fio's I/O buffers (tswap_alloc_names). */
enum { TSWAP_ALLOC_FIO = 0, TSWAP_ALLOC_DEEPSPEED = 1 };
/* tswap_fill: FastPersist's buffer fill (tswap_fill_names). */
enum { TSWAP_FILL_NONE = 0, TSWAP_FILL_SINGLE = 1, TSWAP_FILL_DOUBLE = 2 };

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
	unsigned int alloc;
	unsigned int bounce;
	unsigned int fill;
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
 * fio's io_u->engine_data: the operation, the descriptor tswap_reopen
 * opened for it (slot in tswap_data.rfds, -1 when none), and tswap_bounce's
 * buffer (NULL when none) with what it cost so far.
 */
struct tswap_uop {
	struct tswap_op op;		/* first: engine_data points here */
	int rslot;
	void *bounce;
	uint64_t bounce_alloc_ns, bounce_copy_ns;
	char *fill_half;		/* tswap_fill: where its write went from */
};

/* tswap_bounce's counters (stats): operations reaped with a bounce buffer. */
struct tswap_bounce_stats {
	uint64_t ops, bytes;
	uint64_t alloc_ns;		/* posix_memalign + mlock */
	uint64_t copy_ns;		/* memcpy to or from fio's buffer */
	uint64_t free_ns;		/* munlock + free */
};

/* tswap_fill's buffer: one locked region, one half (single) or two. */
struct tswap_fill {
	void *buf;			/* NULL when tswap_fill=none */
	size_t len;			/* bytes locked: half or 2 x half */
	size_t half;			/* bytes of a half: the largest bs */
	unsigned int cur;		/* the half the next write goes from */
	size_t ahead;			/* bytes of it filled ahead, 0: none */
	uint64_t queued;		/* bytes of writes queued (not remainders) */
	bool due;			/* a write queued, its fill-ahead not done */
	uint64_t ahead_ns;		/* the fill-ahead's memcpy */
	uint64_t ops, ahead_ops;	/* counted (stats): writes, filled ahead */
	uint64_t bytes, ns;		/* their bytes copied, ns in memcpy */
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
	void *alloc_buf;		/* tswap_alloc=deepspeed: the buffers */
	size_t alloc_len;		/* the bytes locked: the region fio carves */
	bool alloc_failed;		/* tswap_iomem_alloc failed (post_init) */
	struct tswap_bounce_stats bounce;
	struct tswap_fill fill;
	uint64_t ops, op_errors, op_short;
	uint64_t t_first_ns, t_last_ns;
	char stats_path[PATH_MAX];
};

/* tswap.c: one line on stderr, prefixed with the job; the job's error set
 * to err.  Returns 1, what fio's hooks return on failure. */
int tswap_fail(struct thread_data *td, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* options.c: the option table, and the job's options checked against each
 * other, fio's own options and the system, at init.  0 or 1. */
extern struct fio_option tswap_option_table[];
extern const char *const tswap_submit_names[];
extern const char *const tswap_window_names[];
extern const char *const tswap_pin_names[];
extern const char *const tswap_alloc_names[];
extern const char *const tswap_fill_names[];
int tswap_check_options(struct thread_data *td);
/* The number in a /proc file, 0 when it cannot be read. */
unsigned long tswap_read_ulong(const char *path);

/* target.c: the job's files (DIO alignment, geometry, registered files). */
struct tswap_file *tswap_file_slot(struct tswap_data *ld, struct fio_file *f);
/* 0, 1 after a one-line error, or -ENOENT when the file does not exist yet. */
int tswap_check_file(struct thread_data *td, struct tswap_data *ld,
		     struct fio_file *f);
/* 0 or -errno, no message. */
int tswap_open_registered_files(struct thread_data *td, struct tswap_data *ld);
void tswap_close_registered_files(struct thread_data *td, struct tswap_data *ld);

/* pin.c: tswap_pin, fio's I/O buffers page-locked.  0 or 1. */
int tswap_pin_buffers(struct thread_data *td, struct tswap_data *ld);
/* The tail of an mlock failure's line: ", of which this process already
 * locks N (...)" from VmLck when N > 0 (thread=1: the other jobs'
 * buffers), else "".  len: TSWAP_HELD_LEN. */
#define TSWAP_HELD_LEN 128
void tswap_locked_held(char *buf, size_t len);
void tswap_unpin_buffers(struct thread_data *td, struct tswap_data *ld);

/* alloc.c: tswap_alloc=deepspeed, fio's I/O buffers allocated and locked
 * as DeepSpeed's pinned-tensor manager does: fio's iomem_alloc (0 or 1)
 * and iomem_free hooks, in the operations tswap_init gives such a job. */
int tswap_iomem_alloc(struct thread_data *td, size_t total_mem);
void tswap_iomem_free(struct thread_data *td);

/* reopen.c: tswap_reopen, a descriptor per operation.  init: 0 or -ENOMEM;
 * open, close: 0 or a positive errno, no message. */
int tswap_reopen_init(struct tswap_data *ld, unsigned int depth);
int tswap_reopen_open(struct tswap_data *ld, struct tswap_uop *u,
		      const struct fio_file *f);
int tswap_reopen_close(struct tswap_data *ld, struct tswap_uop *u);
void tswap_reopen_cleanup(struct thread_data *td, struct tswap_data *ld);

/* bounce.c: tswap_bounce, DeepSpeed's bounce buffer per operation.  get,
 * put: 0 or a positive errno, no message; get names the failed call in
 * *call for tswap_bounce_why's one line. */
int tswap_bounce_get(struct tswap_uop *u, const char **call);
int tswap_bounce_put(struct tswap_data *ld, struct tswap_uop *u, void *dst);
void tswap_bounce_why(struct thread_data *td, uint64_t len, const char *call,
		      int err);
void tswap_bounce_drop(struct thread_data *td, struct tswap_uop *u);

/* fill.c: tswap_fill, FastPersist's fill of a locked I/O buffer.  init:
 * 0 or 1 (one line said); queue: the write op goes from the buffer (skip:
 * bytes into its io_u of a requeued remainder, 0 for a write); ahead: at
 * commit, double only, the other half filled with the next write's bytes
 * (total: the job's bytes, 0 unknown). */
int tswap_fill_init(struct thread_data *td, struct tswap_data *ld);
void tswap_fill_queue(struct tswap_data *ld, struct tswap_uop *u,
		      const void *src, size_t skip);
void tswap_fill_ahead(struct tswap_data *ld, const void *src, uint64_t total);
void tswap_fill_cleanup(struct thread_data *td, struct tswap_data *ld);

/* statspath.c: the tswap_stats file, checked at init, written at cleanup. */
int tswap_check_stats_path(struct thread_data *td, struct tswap_data *ld,
			   const char *tmpl);
void tswap_write_stats(struct thread_data *td, struct tswap_data *ld);

#endif
