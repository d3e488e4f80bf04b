# shellcheck shell=bash
# shellcheck disable=SC2034  # CPU_USR_MS / CPU_SYS_MS are read by the caller
# tests/bench/bench-lib.bash - functions shared by tests/bench/tswap-bench,
# tests/bench/tswap-bench-deepspeed and tests/bench/tswap-bench-sweep
# (sourced, never run).  The caller sets PROG and EXIT_USAGE before using
# die/usage_error/need_arg, TIMES_FILE before cpu_snapshot, RUNS_JSONL
# before record.

say() { printf '%s\n' "$*"; }
note() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { # die CODE MESSAGE...
	local code=$1
	shift
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit "$code"
}
usage_error() { die "$EXIT_USAGE" "$* (see --help)"; }
# need_arg OPTION [VALUE...]: usage_error unless OPTION has a value (call
# it with the parser's "$@").
need_arg() { [ $# -ge 2 ] || usage_error "$1 needs a value"; }
# check_disk_file PATH: usage_error unless PATH is absent or a regular file
# (the bench writes it whole): never a symlink, device node, FIFO or
# directory.
check_disk_file() {
	if [ -L "$1" ] || { [ -e "$1" ] && [ ! -f "$1" ]; }; then
		usage_error "--disk-file $1: not a regular file (a symlink, device, FIFO or directory): the bench writes the whole file"
	fi
}

size_bytes() { # size_bytes 128k -> 131072
	local n=${1%[kmgKMG]}
	case ${1: -1} in
	k | K) echo $((n << 10)) ;;
	m | M) echo $((n << 20)) ;;
	g | G) echo $((n << 30)) ;;
	*) echo "$1" ;;
	esac
}

# cpu_snapshot: CPU_USR_MS and CPU_SYS_MS of every child this shell has
# waited for (bash `times`, milliseconds).  fio's job
# processes and threads, tswap's workers and io_uring's io-wq threads all
# end up there once fio is reaped.
to_ms() { # to_ms 1m2.345s -> 62345
	[[ $1 =~ ^([0-9]+)m([0-9]+)[.]([0-9]+)s$ ]] || {
		echo 0
		return
	}
	local frac=${BASH_REMATCH[3]}000
	echo $((10#${BASH_REMATCH[1]} * 60000 + 10#${BASH_REMATCH[2]} * 1000 + 10#${frac:0:3}))
}
cpu_snapshot() {
	local l1 l2 u s
	times >"$TIMES_FILE"
	{
		read -r l1
		read -r l2
	} <"$TIMES_FILE"
	: "$l1"
	read -r u s <<<"$l2"
	CPU_USR_MS=$(to_ms "$u")
	CPU_SYS_MS=$(to_ms "$s")
}

# busy_ms: CPU time of the whole machine that was not idle, in ms (from
# /proc/stat, all CPUs; 10 ms resolution).  Around a run, minus fio's own
# CPU, it is what other processes took from the benchmark.
busy_ms() {
	local cpu user nice system idle iowait irq softirq steal rest
	read -r cpu user nice system idle iowait irq softirq steal rest </proc/stat
	: "$cpu" "$idle" "$iowait" "$rest"
	echo $(((user + nice + system + irq + softirq + steal) * 1000 / $(getconf CLK_TCK)))
}

# fio_summary JSON: "bytes runtime_ms bw_bytes" of the job in fio's JSON.
fio_summary() {
	jq -r '.jobs[0] | [(.read.io_bytes + .write.io_bytes),
		.job_runtime, (.read.bw_bytes + .write.bw_bytes)] | @tsv' "$1"
}

# record KEY=VALUE...: one line of runs.jsonl (numbers stay numbers).
record() {
	local kv k v
	local -a jqargs=()
	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		if [[ $v =~ ^-?[0-9]+([.][0-9]+)?$ ]]; then
			jqargs+=(--argjson "$k" "$v")
		else
			jqargs+=(--arg "$k" "$v")
		fi
	done
	jq -cn "${jqargs[@]}" '$ARGS.named' >>"$RUNS_JSONL"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# stop_hogs FILE: end the CPU hogs whose pids FILE lists (each a timeout
# of ours running a busy loop), then remove FILE.
stop_hogs() {
	local pid ppid rest
	[ -f "$1" ] || return 0
	while read -r pid; do
		# only a child of this shell that is still the hog
		read -r _ _ _ ppid rest 2>/dev/null <"/proc/$pid/stat" || continue
		: "$rest"
		if [ "$ppid" = "$$" ] && grep -qa 'while :' "/proc/$pid/cmdline" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done <"$1"
	wait 2>/dev/null || true
	rm -f -- "$1"
}

# start_hogs N SECONDS FILE: N busy loops, each ended by timeout after
# SECONDS at most; their pids in FILE.
start_hogs() {
	local i
	: >"$3"
	for ((i = 0; i < $1; i++)); do
		timeout -k 2 "$2" bash -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
		printf '%s\n' "$!" >>"$3"
	done
}
