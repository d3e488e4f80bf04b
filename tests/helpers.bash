# shellcheck shell=bash
# Variables set here are used by the .bats files; status/output/stderr are
# set by bats' run.
# shellcheck disable=SC2034,SC2154
#
# tests/helpers.bash - shared setup for the tswap bats integration tests.
#
# Every test file does:
#
#   load helpers
#   setup()    { common_setup; }
#   teardown() { common_teardown; }
#
# and then uses:
#
#   requires root|loopdev|ramfs|strace|io_uring|wrongver   skip, saying why
#   $SCRATCH           a per-test directory on a block-backed filesystem
#                      (never tmpfs/ramfs: O_DIRECT alignment must be real)
#   run_fio ARGS...    `run --separate-stderr` of
#                      `timeout fio $FIO_COMMON --name=swap
#                       --ioengine=external:$ENGINE --direct=1 ARGS...`:
#                      engine options go in ARGS, so they always come after
#                      --ioengine= (design.md 3)
#   fio_ok ARGS...     run_fio, and fail with fio's stdout/stderr unless 0
#   psync_ok ARGS...   the same job with fio's psync engine (cross-checks)
#   run_jobs ARGS...   several jobs, each named and with its engine, in one
#                      fio run (--stonewall between them); jobs_bytes checks
#                      each job's error and bytes in its JSON
#   cross_verify WHAT TARGET SIZE_KB IODEPTH JOB... -- TSWAP...   tswap and
#                      psync verify each other's data both ways
#   assert_rejected OPTION [TEXT...]  a bad-input run failed cleanly with a
#                      stderr line naming OPTION (and TEXT)
#   strace_fio, aio_records, aio_check, iocb_records ...   tracing fio's
#                      AIO calls and checking them (tests/strace.bash,
#                      loaded here)
#   loop_setup, loop_attach, full_loop, mount_scratch   loop devices and
#                      mounts, undone in teardown (tests/devices.bash,
#                      loaded here)
#   fio_version        `fio --version`, or "unknown"
#
# Nothing here may hang: every fio run has a timeout ($FIO_TIMEOUT seconds).

bats_require_minimum_version 1.5.0

if ! bats_load_library bats-support 2>/dev/null; then
	load /usr/lib/bats/bats-support/load
fi
if ! bats_load_library bats-assert 2>/dev/null; then
	load /usr/lib/bats/bats-assert/load
fi
if ! bats_load_library bats-file 2>/dev/null; then
	load /usr/lib/bats/bats-file/load
fi

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
ENGINE=${TSWAP_ENGINE:-$REPO/build/tswap.so}
WRONGVER_ENGINE=$REPO/build/tswap-wrongver.so
FIO_TIMEOUT=${TSWAP_FIO_TIMEOUT:-120}

# Every option the engine must offer (docs/engine.md, Options).
TSWAP_OPTIONS=(tswap_backend tswap_block_size tswap_queue_depth tswap_submit
	tswap_window tswap_threads tswap_handoff tswap_reopen tswap_pin tswap_alloc
	tswap_bounce tswap_fill tswap_stats tswap_sqpoll tswap_sqpoll_idle tswap_iopoll
	tswap_fixedbufs tswap_registerfiles)

# fio options for the helpers' runs. A clocksource given skips fio's
# start-up test of the CPU clock on every CPU (about 60 ms of CPU and of
# wall time per run): these runs check bytes, errors and the engine's
# calls, not latency; the sweep's own runs keep fio's default. No verify
# state file (fio writes HOST-JOB-N-verify.state into the working
# directory, the repository, after a verifying write job).
FIO_COMMON=(--clocksource=clock_gettime --verify_state_save=0)

# fio_version - `fio --version` (fio-3.33), or "unknown". A function, not a
# variable set at load: the file is loaded once per test, and fio's start-up
# (64 shared libraries) costs about 36 ms of CPU each time.
fio_version() {
	fio --version 2>/dev/null || echo unknown
}

# --- skips ----------------------------------------------------------------

# requires NEED... - skip the test, saying why, unless every need is met.
requires() {
	local need
	for need in "$@"; do
		case "$need" in
		root)
			if [ "$(id -u)" -ne 0 ]; then
				skip "requires root (running as uid $(id -u))"
			fi
			;;
		loopdev)
			if [ "$(id -u)" -ne 0 ]; then
				skip "requires root to set up loop devices (running as uid $(id -u))"
			fi
			if ! command -v losetup >/dev/null; then
				skip "requires loop devices: losetup not installed (util-linux)"
			fi
			if [ ! -e /dev/loop-control ]; then
				skip "requires loop devices: no /dev/loop-control (modprobe loop)"
			fi
			if ! losetup --find >/dev/null 2>&1; then
				skip "requires loop devices: losetup --find finds no free one"
			fi
			;;
		ramfs)
			if [ "$(id -u)" -ne 0 ]; then
				skip "requires root to mount ramfs (running as uid $(id -u))"
			fi
			if ! grep -qw ramfs /proc/filesystems; then
				skip "requires ramfs in /proc/filesystems"
			fi
			;;
		strace)
			if ! command -v strace >/dev/null; then
				skip "requires strace (make deps)"
			fi
			if ! strace -qq -e trace=none -o /dev/null true 2>/dev/null; then
				skip "requires strace to be able to ptrace (seccomp/yama/container?)"
			fi
			;;
		io_uring)
			local disabled
			disabled=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)
			if [ "$disabled" != 0 ]; then
				skip "requires io_uring: kernel.io_uring_disabled=$disabled"
			fi
			;;
		wrongver)
			if [ ! -f "$WRONGVER_ENGINE" ]; then
				skip "requires $WRONGVER_ENGINE (make build/tswap-wrongver.so)"
			fi
			;;
		*)
			fail "BUG: unknown requirement '$need'"
			;;
		esac
	done
}

# no_ipc_lock [BYTES] - LIMITED, a command prefix that runs fio with
# RLIMIT_MEMLOCK at BYTES (default 1 MiB) and without CAP_IPC_LOCK, with
# which root ignores the limit (dropped from the bounding and inheritable
# sets, so fio's exec keeps none); skips, saying why, where it cannot.
no_ipc_lock() {
	requires root
	command -v setpriv >/dev/null || skip "requires setpriv (util-linux)"
	command -v prlimit >/dev/null || skip "requires prlimit (util-linux)"
	LIMITED=(prlimit --memlock="${1:-1048576}:${1:-1048576}" setpriv
		--bounding-set=-ipc_lock --inh-caps=-ipc_lock)
	"${LIMITED[@]}" true || skip "cannot drop CAP_IPC_LOCK here (setpriv)"
}

# --- per-test setup/teardown ----------------------------------------------

# is_block_backed DIR - DIR's filesystem is not tmpfs/ramfs and takes an
# aligned O_DIRECT write.
is_block_backed() {
	local dir=$1 fstype
	fstype=$(stat -f -c %T "$dir" 2>/dev/null) || return 1
	case "$fstype" in
	tmpfs | ramfs) return 1 ;;
	esac
	dd if=/dev/zero of="$dir/.odirect-probe" bs=4096 count=1 oflag=direct \
		status=none 2>/dev/null || { rm -f "$dir/.odirect-probe"; return 1; }
	rm -f "$dir/.odirect-probe"
}

common_setup() {
	if [ ! -f "$ENGINE" ]; then
		fail "engine not built: $ENGINE is missing (run 'make' first)"
	fi
	SCRATCH_OWNED=
	if [ -n "${BATS_TEST_TMPDIR:-}" ] && is_block_backed "$BATS_TEST_TMPDIR"; then
		SCRATCH=$BATS_TEST_TMPDIR/scratch
		mkdir -p "$SCRATCH"
	else
		mkdir -p "$REPO/build/test-scratch"
		SCRATCH=$(mktemp -d "$REPO/build/test-scratch/t.XXXXXX")
		SCRATCH_OWNED=1
	fi
	# Teardown bookkeeping lives beside, not inside, the scratch directory.
	CLEANUP_LIST=$SCRATCH.cleanup
	: >"$CLEANUP_LIST"
	LOOPDEV=
	export SCRATCH
}

common_teardown() {
	local kind what
	if [ -n "${CLEANUP_LIST:-}" ] && [ -f "$CLEANUP_LIST" ]; then
		# Undo in reverse order: mounts on top of loops on top of files.
		while IFS=$'\t' read -r kind what; do
			case "$kind" in
			mount) umount "$what" 2>/dev/null || umount -l "$what" 2>/dev/null || true ;;
			loop) loop_detach_file "$what" ;;
			esac
		done < <(tac "$CLEANUP_LIST")
		rm -f "$CLEANUP_LIST"
	fi
	if [ -n "${SCRATCH_OWNED:-}" ] && [ -n "${SCRATCH:-}" ]; then
		rm -rf "$SCRATCH"
	fi
}

# --- running fio ------------------------------------------------------------

# vmlck_peak FIO_OPTION... - the largest VmLck (kB) seen in fio's processes
# (the job runs in a child of fio's, under timeout) during the first 1.5 s
# of a 3-second read job with one 8m buffer and FIO_OPTIONs: the engine
# locks its buffers before the first I/O. Empty if no fio process was seen.
vmlck_peak() {
	local f=$SCRATCH/vmlck.file top p kb best=
	[ -f "$f" ] || psync_ok --filename="$f" --size=16m --bs=1m --rw=write
	fio_argv "$ENGINE" --filename="$f" --size=16m --bs=8m --rw=read \
		--time_based --runtime=3 "$@" --output=/dev/null
	"${FIO_ARGV[@]}" &
	top=$!
	for _ in $(seq 1 15); do
		sleep 0.1
		for p in $(pgrep -P "$top") $(pgrep -P "$(pgrep -P "$top" | head -n 1)"); do
			kb=$(awk '/^VmLck:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
			[ -n "$kb" ] || continue
			if [ -z "$best" ] || [ "$kb" -gt "$best" ]; then
				best=$kb
			fi
		done
	done
	wait "$top"
	printf '%s\n' "$best"
}

# fio_argv ENGINE_SO ARGS... - fills the array FIO_ARGV with the fio command
# line: job name and engine first, then ARGS (which may override --name and
# --direct, and carry the tswap_* engine options).
fio_argv() {
	local so=$1
	shift
	FIO_ARGV=(timeout -k 10 "$FIO_TIMEOUT" fio "${FIO_COMMON[@]}" --name=swap
		"--ioengine=external:$so" --direct=1 "$@")
}

# run_fio ARGS... - run fio with the engine; sets $status, $output (stdout)
# and $stderr.
run_fio() {
	fio_argv "$ENGINE" "$@"
	run --separate-stderr "${FIO_ARGV[@]}"
}

# run_fio_with ENGINE_SO ARGS... - the same with another build of the engine.
run_fio_with() {
	fio_argv "$@"
	run --separate-stderr "${FIO_ARGV[@]}"
}

# run_jobs ARGS... - run --separate-stderr of `timeout fio --direct=1
# ARGS...`: several jobs in one fio run, each from its --name= with its own
# --ioengine= (external:$ENGINE, then its tswap_* options), --stonewall to
# start after the ones before; one fio start-up for them all.
run_jobs() {
	FIO_ARGV=(timeout -k 10 "$FIO_TIMEOUT" fio "${FIO_COMMON[@]}" --direct=1 "$@")
	run --separate-stderr "${FIO_ARGV[@]}"
}

# jobs_bytes WHAT EXPECTED - fio's JSON of the last run_jobs ($output):
# each job's "NAME ERROR WRITE_BYTES READ_BYTES" (a verify_only job counts
# its pass as written, and its verify reads as read), joined by ", ", is
# EXPECTED; else fail, naming WHAT.
jobs_bytes() {
	local got
	got=$(jq -r '[.jobs[] | "\(.jobname) \(.error) \(.write.io_bytes) \(.read.io_bytes)"] | join(", ")' <<<"$output") ||
		fail "$1: fio's output is not JSON"
	[ "$got" = "$2" ] || fail "$1: fio's jobs (name, error, bytes written, bytes read): '$got', expected '$2'"
}

# cross_verify WHAT TARGET SIZE_KB IODEPTH JOB... -- TSWAP... - tswap and
# fio's psync engine check each other's data both ways, each way one fio
# run of two jobs, on a fresh target (fresh_target) each time: tswap
# writes and verifies, then psync verifies; psync writes, then tswap
# verifies (verify_only). JOB: the job options both engines take
# (--filename, --size, --bs, --randseed, the verify options); TSWAP: the
# tswap_* options. Fails naming WHAT, with fio's output.
cross_verify() {
	local what=$1 t=$2 size_kb=$3 iodepth=$4 n=$(($3 * 1024))
	local -a job=() tswap=()
	shift 4
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		job+=("$1")
		shift
	done
	[ "$#" -eq 0 ] || shift
	tswap=("$@")
	fresh_target "$t" "$size_kb"
	run_jobs --output-format=json \
		--name=swap "--ioengine=external:$ENGINE" "${job[@]}" --iodepth="$iodepth" --rw=write \
		--do_verify=1 "${tswap[@]}" \
		--name=psync-reads --stonewall --ioengine=psync "${job[@]}" --rw=write --verify_only
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "$what: tswap's write + verify, or psync's verify of it, failed (exit $status)"
	fi
	jobs_bytes "$what" "swap 0 $n $n, psync-reads 0 $n $n"
	fresh_target "$t" "$size_kb"
	run_jobs --output-format=json \
		--name=psync-writes --ioengine=psync "${job[@]}" --rw=write --do_verify=0 \
		--name=swap --stonewall "--ioengine=external:$ENGINE" "${job[@]}" --iodepth="$iodepth" --rw=write \
		--verify_only "${tswap[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "$what: psync's write, or tswap's verify_only of it, failed (exit $status)"
	fi
	jobs_bytes "$what" "psync-writes 0 $n 0, swap 0 $n $n"
}

# show_fio - print the last fio run, for a failing test's log (long
# outputs, e.g. fio's JSON, are cut to their head and tail).
show_fio() {
	{
		printf 'fio exit status: %s\n' "$status"
		printf 'command: %s\n' "${FIO_ARGV[*]}"
		printf -- '--- stdout\n'
		clip <<<"$output"
		printf -- '--- stderr\n'
		clip <<<"${stderr:-}"
		printf -- '---\n'
	} >&2
}

# clip - stdin to stdout, keeping the first 15 and last 25 lines of long text.
clip() {
	awk '{ l[NR] = $0 } END {
		for (i = 1; i <= NR; i++)
			if (NR <= 45 || i <= 15 || i > NR - 25) print l[i]
			else if (i == 16) printf "[... %d lines cut ...]\n", NR - 40
	}'
}

# fio_ok ARGS... - run_fio and fail unless fio exits 0.
fio_ok() {
	run_fio "$@"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "fio failed (exit $status)"
	fi
}

# psync_ok ARGS... - fio with the plain psync engine (for cross-checks).
psync_ok() {
	run_jobs --name=swap --ioengine=psync "$@"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "fio (psync) failed (exit $status)"
	fi
}

# assert_rejected OPTION [SUBSTRING...] - the last fio run exited non-zero
# (not killed, not timed out), one line of stderr names OPTION and
# contains every SUBSTRING (case-insensitive), and the engine printed at
# most one "tswap:" line.
assert_rejected() {
	local opt=$1 sub line found=
	shift
	if [ "$status" -eq 0 ]; then
		show_fio
		fail "fio accepted a bad input; expected an error naming '$opt'"
	fi
	if [ "$status" -ge 124 ]; then
		show_fio
		fail "fio was killed or timed out (exit $status); expected a clean error naming '$opt'"
	fi
	while IFS= read -r line; do
		case "$line" in
		*"$opt"*) ;;
		*) continue ;;
		esac
		found=1
		for sub in "$@"; do
			if ! grep -qiF -- "$sub" <<<"$line"; then
				found=
				break
			fi
		done
		if [ -n "$found" ]; then
			break
		fi
	done <<<"${stderr:-}"
	if [ -z "$found" ]; then
		show_fio
		fail "no stderr line names '$opt'${*:+ with: $*}"
	fi
	BAD_INPUT_LINE=$line
	# The engine says it once (fio may add its own lines around it).
	local n
	n=$(grep -c '^tswap:' <<<"${stderr:-}" || true)
	if [ "$n" -gt 1 ]; then
		show_fio
		fail "the engine printed $n error lines; expected one"
	fi
	# Echoed into the test log (shown with bats --verbose-run / on failure).
	printf 'rejected: %s\n' "$BAD_INPUT_LINE" >&2
}

# A verify run must start from a fresh or zeroed target: stale data from an
# earlier correct run can hide a misdirected write (design.md section 3).
# fresh_target T SIZE_KB - remove a file, or zero a block device's range.
fresh_target() {
	local t=$1 size_kb=$2
	if [ -b "$t" ]; then
		dd if=/dev/zero of="$t" bs=64k count=$(((size_kb + 63) / 64)) \
			oflag=direct conv=fsync status=none
	else
		rm -f "$t"
	fi
}

# --- loop devices and mounts; strace --------------------------------------------

load devices
load strace
load hide-tools

# meta_of ENGINE TARGET: TARGET's metadata object (meta.json) as a run on
# this host makes it: lib/meta-collect.sh's lines read by the package
# (tswap.results.meta), with the sweep's version; no fio run.
meta_of() {
	local kv
	kv=$(TSWAP_FIO_VERSION='' sh "$REPO/sweep/lib/meta-collect.sh" "$2")
	/usr/bin/python3 -I -B -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap import jqjson
from tswap.cli.run_fleet import version
from tswap.cli.sweep_host import home
from tswap.results.meta import kv_lines, meta
print(jqjson.dumps(meta(sys.argv[3], sys.argv[2], version(home(sys.argv[1], sys.argv[1])),
                        kv_lines(sys.stdin.read()))))' "$REPO/sweep" "$1" "$2" <<<"$kv"
}
