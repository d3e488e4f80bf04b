/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats.h - tswap's own counters: DeepSpeed's deepspeed_aio_perf_t figures,
 * made real (design.md section 2, option tswap_stats).
 *
 * Each worker owns one struct tswap_stats and is its only writer; the fio
 * job thread merges them at the end of the job (tswap_stats_merge) and
 * writes one JSON file (tswap_stats_write_json).  No atomics, no locks on
 * the hot path.
 */
#ifndef TSWAP_STATS_H
#define TSWAP_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*
 * Log-linear latency histogram in nanoseconds: 2^TSWAP_LAT_SUB sub-buckets
 * per power of two (about 3% relative error on percentiles), exact
 * min, max and mean.
 */
#define TSWAP_LAT_SUB_BITS 5
#define TSWAP_LAT_SUB (1u << TSWAP_LAT_SUB_BITS)
#define TSWAP_LAT_BUCKETS ((64 - TSWAP_LAT_SUB_BITS + 1) * TSWAP_LAT_SUB)

struct tswap_lat {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t bucket[TSWAP_LAT_BUCKETS];
};

struct tswap_stats {
	unsigned int queue_depth;	/* histogram size - 1 */
	uint64_t parts;			/* operation parts completed */
	uint64_t blocks;		/* blocks completed (any result) */
	uint64_t bytes;			/* bytes transferred (sum of good res) */
	uint64_t block_errors;		/* blocks with res < 0 */
	uint64_t short_blocks;		/* blocks with 0 <= res < len */
	uint64_t submit_calls;		/* io_submit / submitting io_uring_enter */
	uint64_t submit_eagain;		/* of which returned -EAGAIN */
	uint64_t wait_calls;		/* io_getevents / waiting io_uring_enter */
	uint64_t *blocks_per_submit;	/* [Q + 1]: blocks accepted per call */
	uint64_t *inflight_at_submit;	/* [Q + 1]: blocks in flight after it */
	uint64_t worker_usr_ns;		/* CPU of worker threads (P > 1): */
	uint64_t worker_sys_ns;		/* fio's cpu line does not see it */
	struct tswap_lat submit_lat;	/* time in the submit call */
	struct tswap_lat wait_lat;	/* time in the wait call */
	struct tswap_lat op_lat;	/* queue -> completion of an operation */
};

/* Allocate the histograms for queue depth Q; 0 or -ENOMEM. */
int tswap_stats_init(struct tswap_stats *s, unsigned int queue_depth);
void tswap_stats_free(struct tswap_stats *s);
/* Zero every counter and histogram; keeps the queue depth and memory. */
void tswap_stats_reset(struct tswap_stats *s);

void tswap_lat_add(struct tswap_lat *l, uint64_t ns);
/* Value (ns) at percentile p in [0, 100]; 0 for an empty histogram. */
uint64_t tswap_lat_percentile(const struct tswap_lat *l, double p);

/* Add every counter of `src` into `dst` (same queue depth). */
void tswap_stats_merge(struct tswap_stats *dst, const struct tswap_stats *src);

static inline uint64_t tswap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What the JSON file says about the job besides the counters. */
struct tswap_stats_meta {
	const char *tswap_version;
	const char *fio_version;
	const char *job_name;
	int job_number;
	long pid;
	const char *backend;
	const char *submit;
	const char *window;
	uint64_t block_size;
	unsigned int queue_depth;
	unsigned int threads;
	const char *pin;		/* tswap_pin: "auto", "1" or "0" */
	bool pinned;			/* fio's I/O buffers were mlock'd */
	const char *alloc;		/* tswap_alloc: "fio" or "deepspeed" */
	bool bounce;			/* tswap_bounce=1 */
	uint64_t bounce_ops;		/* operations through a bounce buffer */
	uint64_t bounce_bytes;		/* their bytes */
	uint64_t bounce_alloc_ns;	/* in posix_memalign + mlock */
	uint64_t bounce_copy_ns;	/* in memcpy */
	uint64_t bounce_free_ns;	/* in munlock + free */
	const char *fill;		/* tswap_fill: "none", "single", "double" */
	uint64_t fill_ops;		/* writes from the fill buffer */
	uint64_t fill_ahead_ops;	/* of which filled during the last write */
	uint64_t fill_bytes;		/* bytes copied into it for them */
	uint64_t fill_ns;		/* in memcpy */
	uint64_t operations;		/* fio I/O units completed */
	uint64_t op_errors;		/* of which with an error */
	uint64_t op_short;		/* of which short (resid > 0) */
	double elapsed_s;		/* first queue -> last completion */
};

/*
 * tswap_stats_write_json - write the stats as one JSON object to `path`,
 * atomically: to a temporary file in the same directory, fsync'd, then
 * renamed over `path`.  Returns 0 or -errno.
 */
int tswap_stats_write_json(const char *path, const struct tswap_stats_meta *m,
			   const struct tswap_stats *s);

/* What a tswap_stats path template expands to (tswap_stats_expand_path). */
struct tswap_stats_names {
	const char *job_name;	/* %j, $jobname: fio's job name, as is */
	int job_number;		/* %n: fio's thread number - 1 (from 0, all jobs) */
	int clone_number;	/* $jobnum: the clone of the job, 0 .. numjobs-1 */
	const char *file_name;	/* $filename: the job's first file (NULL: none) */
	long pid;		/* %p */
};

/*
 * tswap_stats_expand_path - expand `tmpl` into `out` (size `outlen`):
 * %j (job name), %n (job number), %p (pid), %% (a %); and fio's own
 * filename_format keywords (fio HOWTO, init.c make_filename; matched
 * without regard to case, as fio does) $jobname, $jobnum (the clone number,
 * as fio's), and tswap's $filename: the job's first file with every '/'
 * replaced by '_' and leading ones dropped (/dev/nvme0n1 -> dev_nvme0n1),
 * so it names a file in the directory the template gives, never a path
 * elsewhere.  Any other '$' is kept, as fio keeps it.  Returns 0, or
 * -EINVAL for an unknown %-escape or $filename without a file,
 * -ENAMETOOLONG if it does not fit.
 */
int tswap_stats_expand_path(const char *tmpl, const struct tswap_stats_names *v,
			    char *out, size_t outlen);

#endif
