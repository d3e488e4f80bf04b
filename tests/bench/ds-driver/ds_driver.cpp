// SPDX-License-Identifier: GPL-2.0-only
/*
 * ds_driver.cpp - drive DeepSpeed's own, unmodified AIO handle
 * (deepspeed_aio_handle_t from csrc/aio/py_lib, over csrc/aio/common) the
 * way a ZeRO-Infinity swapper does, without Python or torch (the stand-in
 * torch/extension.h next to this file), for tests/bench/tswap-bench-deepspeed.
 *
 * One handle, one tensor buffer, one operation in flight.  The buffer is
 * page-locked, as the ZeRO-Infinity swappers' buffers are (CUDA:
 * get_accelerator().pin_memory(torch.zeros(...)) in
 * deepspeed/runtime/swap_tensor/utils.py, SwapBufferPool, and
 * partitioned_param_swapper.py: cudaHostAlloc'd, page-locked memory; XPU:
 * the handle's new_cpu_locked_tensor): --buffer locked (the default) takes
 * it from the handle's own new_cpu_locked_tensor (deepspeed_pin_tensor_t::
 * alloc: ds_page_aligned_alloc, posix_memalign + mlock, which faults every
 * page in at once, in order), then fills it; --buffer plain is
 * posix_memalign only, filled (faulted in) by the pattern loop, and marked
 * pinned so that both take DeepSpeed's no-bounce-buffer branch.  For each
 * tensor in turn:
 *   --mode async:  async_pread/async_pwrite(buffer, FILE, offset); wait()
 *                  (the handle's worker threads run the loop; pread stats
 *                  the file, both open it per call and wait() closes it);
 *   --mode sync:   read/write(buffer, FILE, false, offset) (the loop on the
 *                  handle's own context in this thread; read() reads the
 *                  whole file: --size must equal --tensor).
 * Tensors are taken in file order, from offset 0, wrapping at --size, like
 * fio's rw=read/write with bs=TENSOR.  Writes send a buffer filled with the
 * 32-bit --pattern, most significant byte first (fio's buffer_pattern);
 * --check compares every tensor read with it.  DeepSpeed's messages go to stdout (as in a real run); the
 * result is one JSON object in --json:
 *   {"ops":N,"bytes":N,"seconds":S,"gbs":G,"check_errors":N}
 * Exit 0; 1 on a failed call or check; 2 on bad usage (one line on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deepspeed_py_aio_handle.h"

namespace {

struct args {
	const char *file = nullptr;
	const char *json = nullptr;
	bool read = true;
	bool async = true;
	long long tensor = 0, size = 0, block = 1 << 20;
	int qd = 8, threads = 1;
	bool single = false, overlap = true, check = false, locked = true;
	double runtime = 0;
	long long ops = 0;
	unsigned int pattern = 0;
};

[[noreturn]] void usage(const char *msg)
{
	fprintf(stderr, "ds_driver: %s\n"
		"usage: ds_driver --file PATH --rw read|write --tensor BYTES --size BYTES\n"
		"       --block BYTES --qd N --single 0|1 --overlap 0|1 --threads P\n"
		"       --mode async|sync (--runtime SEC | --ops N) --json PATH\n"
		"       [--pattern 0xHEX] [--check] [--buffer locked|plain]\n", msg);
	exit(2);
}

long long num(const char *opt, const char *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 0);
	if (errno || *end || n < 0)
		usage((std::string(opt) + " " + v + ": not a non-negative integer").c_str());
	return n;
}

double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

args parse(int argc, char **argv)
{
	args a;

	for (int i = 1; i < argc; i++) {
		std::string o = argv[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= argc)
				usage((o + " needs a value").c_str());
			return argv[++i];
		};
		if (o == "--file") a.file = val();
		else if (o == "--json") a.json = val();
		else if (o == "--rw") {
			std::string v = val();
			if (v != "read" && v != "write")
				usage("--rw: read or write");
			a.read = v == "read";
		} else if (o == "--mode") {
			std::string v = val();
			if (v != "async" && v != "sync")
				usage("--mode: async or sync");
			a.async = v == "async";
		}
		else if (o == "--tensor") a.tensor = num("--tensor", val());
		else if (o == "--size") a.size = num("--size", val());
		else if (o == "--block") a.block = num("--block", val());
		else if (o == "--qd") a.qd = (int)num("--qd", val());
		else if (o == "--threads") a.threads = (int)num("--threads", val());
		else if (o == "--single") a.single = num("--single", val()) != 0;
		else if (o == "--overlap") a.overlap = num("--overlap", val()) != 0;
		else if (o == "--runtime") a.runtime = (double)num("--runtime", val());
		else if (o == "--ops") a.ops = num("--ops", val());
		else if (o == "--pattern") a.pattern = (unsigned int)num("--pattern", val());
		else if (o == "--check") a.check = true;
		else if (o == "--buffer") {
			std::string v = val();
			if (v != "locked" && v != "plain")
				usage("--buffer: locked or plain");
			a.locked = v == "locked";
		}
		else usage(("unknown argument " + o).c_str());
	}
	if (!a.file || !a.json)
		usage("--file and --json are required");
	if (a.tensor <= 0 || a.size < a.tensor || a.size % a.tensor)
		usage("--size must be a positive multiple of --tensor");
	if (a.block <= 0 || a.block > INT32_MAX || a.qd <= 0 || a.threads <= 0)
		usage("--block, --qd and --threads must be positive (block < 2 GiB)");
	if (a.tensor % a.threads)
		usage("--tensor must be divisible by --threads (DeepSpeed's _is_valid_parallel_aio_op)");
	if ((a.runtime > 0) == (a.ops > 0))
		usage("give exactly one of --runtime and --ops");
	if (!a.async && a.read && a.size != a.tensor)
		usage("--mode sync --rw read: DeepSpeed's read() reads the whole file (get_file_size): --size must equal --tensor");
	return a;
}

} // namespace

int main(int argc, char **argv)
{
	args a = parse(argc, argv);
	void *mem = nullptr;
	long long ops = 0, bad = 0, nslots = a.size / a.tensor;
	double t0 = 0, t1 = 0;
	int ret = 0;
	/* The pattern's bytes in fio's order (buffer_pattern=0xdeadbeef
	 * writes de ad be ef), so both sides write the same bytes. */
	unsigned char pat[4] = { (unsigned char)(a.pattern >> 24), (unsigned char)(a.pattern >> 16),
				 (unsigned char)(a.pattern >> 8), (unsigned char)a.pattern };

	{
		deepspeed_aio_handle_t h((int)a.block, a.qd, a.single, a.overlap, a.threads);
		torch::Tensor buf;

		if (a.locked) {
			/* A failed mlock: DeepSpeed prints its message and asserts
			 * (compiled out with -DNDEBUG, as setuptools builds it: a
			 * null tensor); say why and stop. */
			buf = h.new_cpu_locked_tensor(a.tensor, torch::Tensor());
			mem = buf.data_ptr();
			if (!mem) {
				fprintf(stderr, "ds_driver: --buffer locked: cannot mlock a %lld-byte tensor (RLIMIT_MEMLOCK, ulimit -l)\n",
					a.tensor);
				return 1;
			}
		} else {
			if (posix_memalign(&mem, (size_t)sysconf(_SC_PAGESIZE), (size_t)a.tensor)) {
				fprintf(stderr, "ds_driver: out of memory for a %lld-byte tensor\n", a.tensor);
				return 1;
			}
			buf = torch::Tensor(mem, a.tensor, true);
		}
		for (long long i = 0; i < a.tensor; i++)
			((unsigned char *)mem)[i] = pat[i % 4];

		t0 = now_s();
		for (;;) {
			long long off = (ops % nslots) * a.tensor;

			if (a.async) {
				ret = a.read ? h.async_pread(buf, a.file, off)
					     : h.async_pwrite(buf, a.file, off);
				if (ret == 0)
					ret = h.wait() == 1 ? 0 : -1;
			} else {
				ret = a.read ? h.read(buf, a.file, false, off)
					     : h.write(buf, a.file, false, off);
			}
			if (ret) {
				fprintf(stderr, "ds_driver: operation %lld at offset %lld failed\n",
					ops, off);
				break;
			}
			ops++;
			if (a.check && a.read) {
				for (long long i = 0; i < a.tensor; i++) {
					if (((unsigned char *)mem)[i] != pat[i % 4]) {
						bad++;
						break;
					}
				}
				memset(mem, 0, (size_t)a.tensor);
			}
			if (a.ops ? ops >= a.ops : now_s() - t0 >= a.runtime)
				break;
		}
		t1 = now_s();
		if (!a.locked)
			free(mem);
	}	/* the handle's destructor joins its threads, and its
		 * deepspeed_pin_tensor_t munlocks and frees a locked buffer */

	FILE *f = fopen(a.json, "w");
	if (!f) {
		fprintf(stderr, "ds_driver: %s: %s\n", a.json, strerror(errno));
		return 1;
	}
	fprintf(f, "{\"ops\":%lld,\"bytes\":%lld,\"seconds\":%.6f,\"gbs\":%.6f,\"check_errors\":%lld}\n",
		ops, ops * a.tensor, t1 - t0,
		t1 > t0 ? (double)(ops * a.tensor) / (t1 - t0) / 1e9 : 0.0, bad);
	if (fclose(f)) {
		fprintf(stderr, "ds_driver: %s: %s\n", a.json, strerror(errno));
		return 1;
	}
	return ret || bad ? 1 : 0;
}
