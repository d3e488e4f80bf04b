# shellcheck shell=bash
# shellcheck disable=SC2034 # sets the options, read by the other modules
# tests/bench/lib/args.bash - tswap-bench's options: usage, the defaults
# (each from its BENCH_* environment variable), parse_args and its checks.
# Sourced by tests/bench/tswap-bench, never run.
#
# Reads: ROOT, and PROG/EXIT_USAGE through need_arg and usage_error
# (bench-lib.bash).
# Writes: RUNS, RUNTIME, TARGETS, TARGET_LIST, ROWS_RE, SIZE, TENSOR,
# TSWAP_IODEPTH, RAM_DIR, DISK_FILE, ENGINE, OUT, LIST_ONLY, REPORT_ONLY.
# Bad usage: one line on stderr, exit EXIT_USAGE (2).

usage() {
	cat <<'EOF'
Usage: tests/bench/tswap-bench [OPTIONS]      (or: make bench)

tswap vs fio's own libaio / io_uring engines, same target, equivalent
settings, alternating A B A B; medians and A/B ratios of GB/s, CPU s/GB
and syscalls/GB. Method and equivalences: docs/performance.md.

  --targets LIST   comma separated, in order (default: ram,disk):
                     ram   a file on tmpfs (--ram-dir)
                     loop  root: a loop device, --direct-io=on, over a
                           tmpfs file
                     zram  root: a new zram device
                     disk  a file on the repository's filesystem
                           (--disk-file)
  --runs N         runs of each side per row, alternating (default 5;
                   env BENCH_RUNS)
  --runtime SEC    seconds per run, time based (default 1; BENCH_RUNTIME)
  --rows REGEX     only rows whose id matches (grep -E), e.g.
                   'read-128k-q64-libaio' (default: all; BENCH_ROWS)
  --size SIZE      bytes of each target to use (default 1g; BENCH_SIZE)
  --tensor SIZE    tswap's bs, the tensor size (default auto: Q x B x
                   tswap_threads on RAM-backed targets, 256m on the disk;
                   BENCH_TENSOR)
  --tswap-iodepth N  fio iodepth of the tswap side: tensors queued to the
                   engine (default auto: 1 on RAM-backed targets, 2 on the
                   disk and for the threads2 row; BENCH_TSWAP_IODEPTH)
  --ram-dir DIR    tmpfs directory for ram and loop (default /dev/shm)
  --disk-file PATH (default build/scratch/bench.swap)
  --engine PATH    tswap.so (default: $TSWAP_ENGINE or build/tswap.so)
  --out DIR        output directory (default build/bench/DATE-TIME;
                   BENCH_OUT)
  --list           print the rows and exit
  --report DIR     only rebuild the table and results.{md,json} of the
                   finished run in DIR
  -h, --help       this help

Row ids: RW-B-qQ-BACKEND[-VARIANT], VARIANT one of seq (window=sequential
~ iodepth_batch_complete_min=Q), single (submit=single ~
iodepth_batch_submit=1), fixedbufs (registered buffers on both sides),
threads2 (tswap_threads=2 vs tswap_threads=1, both tswap), aa (fio's
libaio against itself: how far from 1.00 a ratio of two identical sides
lands on this machine now).
EOF
}

# --- options -------------------------------------------------------------------
RUNS=${BENCH_RUNS:-5}
RUNTIME=${BENCH_RUNTIME:-1}
TARGETS=${BENCH_TARGETS:-ram,disk}
ROWS_RE=${BENCH_ROWS:-.}
SIZE=${BENCH_SIZE:-1g}
TENSOR=${BENCH_TENSOR:-auto}
TSWAP_IODEPTH=${BENCH_TSWAP_IODEPTH:-auto}
RAM_DIR=${BENCH_RAM_DIR:-/dev/shm}
DISK_FILE=${BENCH_DISK_FILE:-$ROOT/build/scratch/bench.swap}
ENGINE=${TSWAP_ENGINE:-$ROOT/build/tswap.so}
OUT=${BENCH_OUT:-}
LIST_ONLY=
REPORT_ONLY=

# parse_args ARG...: the command line over the defaults above, checked.
parse_args() {
	local t
	while [ $# -gt 0 ]; do
		case $1 in
		--targets) need_arg "$@"; TARGETS=$2; shift 2 ;;
		--runs) need_arg "$@"; RUNS=$2; shift 2 ;;
		--runtime) need_arg "$@"; RUNTIME=$2; shift 2 ;;
		--rows) need_arg "$@"; ROWS_RE=$2; shift 2 ;;
		--size) need_arg "$@"; SIZE=$2; shift 2 ;;
		--tensor) need_arg "$@"; TENSOR=$2; shift 2 ;;
		--tswap-iodepth) need_arg "$@"; TSWAP_IODEPTH=$2; shift 2 ;;
		--ram-dir) need_arg "$@"; RAM_DIR=$2; shift 2 ;;
		--disk-file) need_arg "$@"; DISK_FILE=$2; shift 2 ;;
		--engine) need_arg "$@"; ENGINE=$2; shift 2 ;;
		--out) need_arg "$@"; OUT=$2; shift 2 ;;
		--list) LIST_ONLY=1; shift ;;
		--report) need_arg "$@"; OUT=$2; REPORT_ONLY=1; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage_error "unknown argument: $1" ;;
		esac
	done

	[[ $RUNS =~ ^[1-9][0-9]*$ ]] || usage_error "--runs $RUNS: a positive integer"
	[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || usage_error "--runtime $RUNTIME: whole seconds, >= 1"
	[[ $SIZE =~ ^[1-9][0-9]*[kmgKMG]$ ]] || usage_error "--size $SIZE: like 1g or 512m"
	[[ $TENSOR =~ ^([1-9][0-9]*[kmgKMG]|auto)$ ]] || usage_error "--tensor $TENSOR: like 64m, or auto"
	[[ $TSWAP_IODEPTH =~ ^([1-9][0-9]*|auto)$ ]] ||
		usage_error "--tswap-iodepth $TSWAP_IODEPTH: a positive integer, or auto"

	IFS=', ' read -r -a TARGET_LIST <<<"$TARGETS"
	[ "${#TARGET_LIST[@]}" -gt 0 ] || usage_error "--targets: empty list"
	for t in "${TARGET_LIST[@]}"; do
		case $t in
		ram | loop | zram | disk) ;;
		*) usage_error "--targets: unknown target '$t' (ram, loop, zram, disk)" ;;
		esac
	done
}
