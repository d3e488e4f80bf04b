// SPDX-License-Identifier: GPL-2.0-only
/*
 * pagemap-runs.c - how physically contiguous a process's I/O buffer is: a
 * measuring tool for the disk gap of docs/performance.md (issue 15).
 * Never installed.
 *
 *   pagemap-runs PID MIN_BYTES [BLOCK_BYTES]
 *
 * Takes the anonymous mapping of PID (no file, or [heap]) of at least
 * MIN_BYTES with the most resident pages (fio's io_u buffer region with
 * mem=malloc, or the DeepSpeed driver's tensor), reads the page frame
 * number of each of its pages from /proc/PID/pagemap (root: unprivileged
 * readers see PFN 0) and counts, in each block of BLOCK_BYTES (default
 * 1 MiB, DeepSpeed's aio block_size) from where the buffer starts: the
 * mapping's second page (glibc puts a large malloc or posix_memalign chunk
 * in a mapping of its own, its 16-byte header in the first page, so fio's
 * page-aligned buffer and the driver's start there), or its first when the
 * mapping is a whole number of blocks (an mlock of exactly the buffer
 * splits it off the header's page), the runs of physically
 * contiguous resident pages: one run is one bio segment of an O_DIRECT
 * request of that block (a block of 256 scattered 4 KiB pages is 256
 * segments; a disk with queue/max_segments 254 splits it in two).  Prints
 * one line, JSON:
 *   {"pid":P,"addr":"0x...","bytes":N,"resident":N,"locked_kib":N,
 *    "blocks":N,"runs_mean":M,"runs_min":N,"runs_max":N,"over_254":N}
 * (blocks counts the blocks with every page resident; over_254 those of
 * more than 254 runs; locked_kib is VmLck of /proc/PID/status).
 * Exit 0; 1 no such mapping or a read failed; 2 bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

static unsigned long long num(const char *what, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s) {
		fprintf(stderr, "pagemap-runs: %s %s: not a number\n", what, s);
		exit(2);
	}
	return v;
}

static long locked_kib(const char *pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	unsigned long long min, block, lo, hi, best_lo = 0, best_hi = 0, best_res = 0;
	unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
	unsigned long long blocks = 0, runs_sum = 0, runs_min = ~0ULL, runs_max = 0, over = 0;
	unsigned long long resident = 0, npages, i;
	char path[64], line[512], name[256];
	uint64_t *pm = NULL;
	FILE *maps;
	int fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: pagemap-runs PID MIN_BYTES [BLOCK_BYTES]\n");
		return 2;
	}
	min = num("MIN_BYTES", argv[2]);
	block = argc > 3 ? num("BLOCK_BYTES", argv[3]) : 1ULL << 20;
	if (!block || block % page) {
		fprintf(stderr, "pagemap-runs: BLOCK_BYTES %llu: a positive multiple of the page size\n", block);
		return 2;
	}

	snprintf(path, sizeof(path), "/proc/%s/pagemap", argv[1]);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "pagemap-runs: %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%s/maps", argv[1]);
	maps = fopen(path, "r");
	if (!maps) {
		fprintf(stderr, "pagemap-runs: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), maps)) {
		uint64_t *cand;

		name[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %255s", &lo, &hi, name) < 2)
			continue;
		if ((name[0] && strcmp(name, "[heap]")) || hi - lo < min)
			continue;
		npages = (hi - lo) / page;
		cand = calloc(npages, sizeof(*cand));
		if (!cand || pread(fd, cand, npages * sizeof(*cand), (off_t)(lo / page * sizeof(*cand))) !=
		    (ssize_t)(npages * sizeof(*cand))) {
			fprintf(stderr, "pagemap-runs: /proc/%s/pagemap: short read\n", argv[1]);
			return 1;
		}
		resident = 0;
		for (i = 0; i < npages; i++)
			resident += !!(cand[i] & PM_PRESENT);
		if (!pm || resident > best_res) {
			free(pm);
			pm = cand;
			best_lo = lo;
			best_hi = hi;
			best_res = resident;
		} else {
			free(cand);
		}
	}
	fclose(maps);
	close(fd);
	if (!pm) {
		fprintf(stderr, "pagemap-runs: pid %s has no anonymous mapping of %llu bytes or more\n",
			argv[1], min);
		return 1;
	}
	resident = best_res;

	for (lo = best_lo + ((best_hi - best_lo) % block ? page : 0); lo + block <= best_hi; lo += block) {
		unsigned long long first = (lo - best_lo) / page, n = block / page, runs = 0, j;
		int full = 1;

		for (j = 0; j < n; j++) {
			uint64_t e = pm[first + j];

			if (!(e & PM_PRESENT) || !(e & PM_PFN_MASK)) {
				full = 0;
				break;
			}
			if (!j || (e & PM_PFN_MASK) != (pm[first + j - 1] & PM_PFN_MASK) + 1)
				runs++;
		}
		if (!full)
			continue;
		blocks++;
		runs_sum += runs;
		runs_min = runs < runs_min ? runs : runs_min;
		runs_max = runs > runs_max ? runs : runs_max;
		over += runs > 254;
	}
	printf("{\"pid\":%s,\"addr\":\"0x%llx\",\"bytes\":%llu,\"resident\":%llu,\"locked_kib\":%ld,"
	       "\"blocks\":%llu,\"runs_mean\":%.1f,\"runs_min\":%llu,\"runs_max\":%llu,\"over_254\":%llu}\n",
	       argv[1], best_lo, best_hi - best_lo, resident * page, locked_kib(argv[1]), blocks,
	       blocks ? (double)runs_sum / (double)blocks : 0.0, blocks ? runs_min : 0, runs_max, over);
	free(pm);
	return 0;
}
