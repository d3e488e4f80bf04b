# shellcheck shell=bash
# tests/bench/lib/measure.bash - one fio run of a tswap-bench side, measured
# (bytes, bandwidth, CPU from bash `times`, other processes' CPU from
# /proc/stat) or with its I/O system calls counted (perf syscall
# tracepoints, else strace -c -f; tswap_stats for tswap), each appended to
# runs.jsonl.  Sourced by tests/bench/tswap-bench, never run.
#
# Reads: RUNTIME, OUT, RUNS_JSONL, TIMES_FILE.  Writes: COUNTER,
# FIO_TIMEOUT (measure_init), OUT/runs/*, runs.jsonl.  A run that fails
# three times is fatal: its stderr and stdout, exit EXIT_ERROR (3).

readonly ATTEMPTS=3
readonly SYSCALLS=(io_submit io_getevents io_uring_enter)

# measure_init: FIO_TIMEOUT (seconds, --runtime + 120) and COUNTER, how the
# syscalls of fio's engines are counted: perf's syscall tracepoints (no
# timing distortion to speak of), else strace -c -f (slows the run down),
# else none.
measure_init() {
	FIO_TIMEOUT=$((RUNTIME + 120))
	COUNTER=none
	if command -v perf >/dev/null &&
		perf stat -x, -o /dev/null -e syscalls:sys_enter_io_submit true 2>/dev/null; then
		COUNTER=perf
	elif command -v strace >/dev/null; then
		COUNTER=strace
	fi
}

# try_fio WHAT BASE [--before FUNCTION] COMMAND...: run a fio command line
# with stdout/stderr in BASE.out/BASE.err, calling FUNCTION (in this shell)
# before every attempt; a failure is retried twice, 2 s apart (another job
# on the machine can hold fs.aio-max-nr or memory for a moment), then fatal.
try_fio() {
	local what=$1 base=$2 before=: i
	shift 2
	if [ "$1" = --before ]; then
		before=$2
		shift 2
	fi
	for ((i = 1; i <= ATTEMPTS; i++)); do
		"$before"
		if timeout -k 10 "$FIO_TIMEOUT" "$@" >"$base.out" 2>"$base.err"; then
			return 0
		fi
		if [ "$i" -lt "$ATTEMPTS" ]; then
			note "$what failed ($(head -c 200 "$base.err" | tr '\n' ' ')); retrying"
			sleep 2
		fi
	done
	note "$what failed $ATTEMPTS times:"
	cat "$base.err" "$base.out" >&2
	exit "$EXIT_ERROR"
}

# run_measured KIND TARGET ROW SIDE N ARGS...: one fio run, CPU from
# `times` around it, appended to runs.jsonl.  KIND: timed (time based) or
# null (one operation: the setup cost that is subtracted).
run_measured() {
	local kind=$1 target=$2 row=$3 side=$4 n=$5
	shift 5
	local base=$OUT/runs/$target.$row.$side.$kind.$n u0 s0 bytes rt bw
	local b0 t0 fio_ms
	try_fio "$target $row $side $kind run $n" "$base" --before measure_start \
		fio --output-format=json --output="$base.json" "$@"
	cpu_snapshot
	fio_ms=$((CPU_USR_MS - u0 + CPU_SYS_MS - s0))
	read -r bytes rt bw < <(fio_summary "$base.json")
	record kind="$kind" target="$target" row="$row" side="$side" run="$n" \
		bytes="$bytes" runtime_ms="$rt" bw_bytes="$bw" \
		cpu_usr_ms=$((CPU_USR_MS - u0)) cpu_sys_ms=$((CPU_SYS_MS - s0)) \
		wall_ms=$(((${EPOCHREALTIME/./} - t0) / 1000)) \
		other_cpu_ms=$(($(busy_ms) - b0 - fio_ms))
}

# measure_start: run_measured's starting points (its locals u0, s0, b0, t0)
# before each attempt, so a failed attempt is not counted.
measure_start() {
	cpu_snapshot
	u0=$CPU_USR_MS
	s0=$CPU_SYS_MS
	b0=$(busy_ms)
	t0=${EPOCHREALTIME/./}
}

# run_counted TARGET ROW SIDE ARGS...: one run with its I/O system calls
# counted (perf tracepoints or strace), plus tswap_stats for tswap.
run_counted() {
	local target=$1 row=$2 side=$3
	shift 3
	local base=$OUT/runs/$target.$row.$side.count bytes rt bw calls=-1 ts=-1
	local -a pre=() stats=()
	case $side in
	tswap*) stats=(--tswap_stats="$base.tswap.json") ;;
	esac
	case $COUNTER in
	perf)
		pre=(perf stat -x ',' -o "$base.syscalls")
		local s
		for s in "${SYSCALLS[@]}"; do pre+=(-e "syscalls:sys_enter_$s"); done
		pre+=(--)
		;;
	strace)
		pre=(strace -f -c -o "$base.syscalls" -e "trace=$(
			IFS=,
			echo "${SYSCALLS[*]}"
		)")
		;;
	esac
	try_fio "$target $row $side counting run" "$base" "${pre[@]}" fio \
		--output-format=json --output="$base.json" "$@" "${stats[@]}"
	read -r bytes rt bw < <(fio_summary "$base.json")
	case $COUNTER in
	perf) calls=$(awk -F, '$3 ~ /^syscalls:sys_enter_/ && $1 ~ /^[0-9]+$/ { n += $1 } END { print n + 0 }' "$base.syscalls") ;;
	strace) calls=$(awk '$NF ~ /^(io_submit|io_getevents|io_uring_enter)$/ { n += $4 } END { print n + 0 }' "$base.syscalls") ;;
	esac
	if [ "${#stats[@]}" -gt 0 ]; then
		ts=$(jq '.submit_calls + .wait_calls' "$base.tswap.json")
	fi
	record kind=count target="$target" row="$row" side="$side" run=1 \
		bytes="$bytes" runtime_ms="$rt" bw_bytes="$bw" \
		syscalls="$calls" tswap_syscalls="$ts"
}
