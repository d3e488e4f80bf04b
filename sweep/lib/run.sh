# shellcheck shell=bash
# run.sh - running the points on one host: fio per point, interrupts,
# resuming.
#
# A point runs in RUN/points/.tmp-RUNKEY.PID and is renamed to
# RUN/points/RUNKEY (KEY.rREPEAT) when its result.json is written, so a
# point directory is either whole or absent; --resume skips runs whose
# result.json says ok.
#
# Owns: drop_caches, alive, stop_fio, on_signal (the INT/TERM/HUP trap, for
# the fleet too), run_fio, point_label, load_done, run_point, run_plan,
# dry_run.
# Reads: PLAN_TEXT, REPEAT, ENGINE, TARGET, SIZE, RUN. Writes: FIO_PID,
# TMP_POINT, FINISHED, DROP_NOTED; RUN/points/RUNKEY/ (job.fio, run.sh,
# fio.json, fio.stderr, stats.json, result.json), RUN/cache-dropped.
# shellcheck disable=SC2153 # ENGINE, TARGET: globals of state.sh
# shellcheck disable=SC2164 # cd in a subshell under the entry point's set -e

drop_caches() {
	local why
	sync
	if [ "$(id -u)" -ne 0 ]; then
		why="not root: the page cache was not dropped before read points (reads use O_DIRECT, but check the ceiling warnings)"
	elif ! { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
		why="could not write /proc/sys/vm/drop_caches: the page cache was not dropped before read points"
	else
		[ -f "$RUN/cache-dropped" ] || : >"$RUN/cache-dropped"
		return 0
	fi
	if [ "$DROP_NOTED" = 0 ]; then
		DROP_NOTED=1
		say "note: $why"
		note "$why"
	fi
	return 0
}

# alive PID: the process exists and is not a zombie.
# shellcheck disable=SC2317 # called from the signal trap
alive() {
	local st
	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# stop_fio PID: SIGTERM, up to 10 s for fio to wind down, then SIGKILL to it
# and its job processes (fio 3.33 can deadlock on a SIGTERM that arrives
# while it forks a job: never wait for it unbounded).
# shellcheck disable=SC2317 # called from the signal trap
stop_fio() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	if alive "$pid"; then
		warn "fio (pid $pid) did not stop on SIGTERM within 10 s: killing it"
		pkill -KILL -P "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

# shellcheck disable=SC2317 # invoked by trap
on_signal() {
	local pid tmp
	status_stop
	if [ -n "$FIO_PID" ]; then
		stop_fio "$FIO_PID"
		FIO_PID=
	fi
	if [ -n "$TMP_POINT" ]; then
		rm -rf -- "$TMP_POINT"
		TMP_POINT=
	fi
	# fleet: the fio clients (each under timeout, which passes SIGTERM on;
	# fio's client then asks its server to stop the job)
	for pid in "${FLEET_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${FLEET_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	FLEET_PIDS=()
	for tmp in "${FLEET_TMPS[@]}"; do
		rm -rf -- "$tmp"
	done
	FLEET_TMPS=()
	if [ -n "$BUDGET" ]; then
		warn "interrupted: a --budget run cannot be resumed (its rounds are planned for one run's wall time); start a new run"
	else
		warn "interrupted: finished points are kept; finish with: $PROG --resume $(printf '%q' "$RUN")"
	fi
	exit "${1:-$EXIT_INTERRUPTED}"
}

# run_fio DIR DEPTH [LABEL]: run DIR/job.fio in DIR (DEPTH levels below the
# run directory); stdout -> fio.stdout, stderr -> fio.stderr. With LABEL, a
# status line every STATUS_EVERY seconds while fio runs (status.sh).
run_fio() {
	local dir=$1 depth=$2 label=${3:-} rc=0 engine target
	engine=$(fio_path "$ENGINE" engine.so "$depth")
	target=$(fio_path "$TARGET" target "$depth")
	(
		cd "$dir"
		export TSWAP_ENGINE="$engine" TSWAP_TARGET="$target" TSWAP_SIZE="$SIZE"
		rank_env_export "$depth"
		exec fio --output-format=json --eta=never job.fio >fio.stdout 2>fio.stderr </dev/null
	) &
	FIO_PID=$!
	[ -z "$label" ] || status_start "$FIO_PID" "$label"
	wait "$FIO_PID" || rc=$?
	FIO_PID=
	status_stop
	return "$rc"
}

# point_label VAR PLANLINE: the progress label of a point, into VAR.
point_label() {
	local -n _label=$1
	local key kind rw be t b q s w p d n tn bn
	IFS=$'\t' read -r key kind rw be t b q s w p d n <<<"$2"
	szname tn "$t"
	if [ "$kind" = ceiling ]; then
		printf -v _label '%-5s ceiling (fio libaio bs=%s iodepth=%s%s)' "$rw" "$tn" "$q" "$( ((p > 1)) && printf ' over %s jobs' "$p")"
	else
		szname bn "$b"
		printf -v _label '%-5s %-8s t=%s b=%s q=%s %s/%s p=%s d=%s' "$rw" "$be" "$tn" "$bn" "$q" "$s" "$w" "$p" "$d"
	fi
	[ "${n:-1}" = 1 ] || _label="$_label n=$n"
}

# load_done: FINISHED[RUNKEY]=GB/s for every run whose result.json says ok
# (one jq for all of them: a resumed full grid has thousands).
load_done() {
	local k v
	FINISHED=()
	while IFS=$'\t' read -r k v; do
		# shellcheck disable=SC2004 # FINISHED is associative (state.sh)
		[ -n "$k" ] && FINISHED[$k]=$v
	done < <(find "$RUN/points" -mindepth 2 -maxdepth 2 -name result.json -exec \
		jq -r 'select(.status == "ok") | "\(.runkey)\t\((.gbs // 0) * 1000 | round / 1000)"' {} + 2>/dev/null || true)
}

# run_point WALLVAR PLANLINE RUNKEY REPEAT DIR [LABEL]: run one point once
# (the settings of now: RUNTIME, RAMP) into RUN/DIR/RUNKEY (DIR one level
# below the run directory), via RUN/DIR/.tmp-RUNKEY.PID; fio's wall seconds
# into WALLVAR; LABEL for the status line while it runs. The first write
# point preconditions the target first (precondition.sh). A failed fio is a
# result (result.json says error), not a return status.
run_point() {
	local -n _wall=$1
	local line=$2 runkey=$3 rep=$4 dir="$RUN/$5" label=${6:-} tmp rw start end rc=0
	IFS=$'\t' read -r _ _ rw _ <<<"$line"
	precondition_before "$rw"
	check_run_space
	tmp="$dir/.tmp-$runkey.$$"
	TMP_POINT=$tmp
	rm -rf -- "$tmp"
	mkdir -p "$tmp"
	point_job "$line" >"$tmp/job.fio"
	write_run_sh "$tmp" 2
	[ "$rw" = read ] && drop_caches
	start=$(date +%s.%N)
	run_fio "$tmp" 2 "$label" || rc=$?
	end=$(date +%s.%N)
	_wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
	result_json "$tmp" "$runkey" "$rep" "$rc" "$_wall" "$line"
	rm -rf -- "${dir:?}/$runkey"
	mv -T -- "$tmp" "$dir/$runkey"
	TMP_POINT=
}

run_plan() {
	local total=0 idx=0 line key kind rw rep runkey wall res label
	local spent=0 ran=0 left eta per
	total=$(($(grep -c . <<<"$PLAN_TEXT") * REPEAT))
	mkdir -p "$RUN/points"
	rm -rf -- "$RUN"/points/.tmp-*
	load_done
	# Repeats are whole passes over the grid, so that the CV of a point
	# includes the drift of the device over the sweep, not only noise.
	for ((rep = 1; rep <= REPEAT; rep++)); do
		while IFS= read -r line; do
			IFS=$'\t' read -r key kind rw _ <<<"$line"
			idx=$((idx + 1))
			runkey="$key.r$rep"
			point_label label "$line"
			[ "$REPEAT" -gt 1 ] && label="$label r$rep"
			if [ -n "${FINISHED[$runkey]+set}" ]; then
				printf '[%*d/%d] %s  done earlier: %s GB/s\n' "${#total}" "$idx" "$total" "$label" "${FINISHED[$runkey]}"
				continue
			fi
			run_point wall "$line" "$runkey" "$rep" points "$(printf '[%*d/%d] %s' "${#total}" "$idx" "$total" "$label")"
			ran=$((ran + 1))
			spent=$(awk -v s="$spent" -v w="$wall" 'BEGIN { printf "%.3f", s + w }')
			per=$(awk -v s="$spent" -v n="$ran" 'BEGIN { printf "%d", s / n + 0.5 }')
			left=$((total - idx))
			eta=$(fmt_secs "$((left * per))")
			res=$(jq -r 'if .status == "ok" then "\(.gbs * 1000 | round / 1000) GB/s  \(.ops_per_s * 10 | round / 10) op/s  p99 \(.clat_p99_us / 1000 * 100 | round / 100) ms" else "ERROR: \(.error)" end' "$RUN/points/$runkey/result.json")
			printf '[%*d/%d] %s  %s  (eta %s)\n' "${#total}" "$idx" "$total" "$label" "$res" "$eta"
		done <<<"$PLAN_TEXT"
	done
}

dry_run() {
	local line key total rep idx=0 reps=$REPEAT
	if [ -n "$BUDGET" ]; then
		# the rounds and their fio runs: budget_dry_run; each point once
		reps=1
	fi
	total=$(($(grep -c . <<<"$PLAN_TEXT") * reps))
	if [ -n "$BUDGET" ]; then
		say "dry run: the job file of each of the $total point(s) at the grid's runtime (a round runs it with its own runtime and ramp) on $TARGET ($TARGET_KIND, $SIZE), grid $G_NAME; nothing is run"
	else
		say "dry run: $total fio run(s) on $TARGET ($TARGET_KIND, $SIZE), grid $G_NAME; nothing is run"
	fi
	say "environment: TSWAP_ENGINE=$(fio_path "$ENGINE" engine.so 2) TSWAP_TARGET=$(fio_path "$TARGET" target 2) TSWAP_SIZE=$SIZE"
	while IFS= read -r line; do
		key=${line%%$'\t'*}
		for ((rep = 1; rep <= reps; rep++)); do
			idx=$((idx + 1))
			printf '\n### [%d/%d] %s.r%d\n' "$idx" "$total" "$key" "$rep"
			point_job "$line"
		done
	done <<<"$PLAN_TEXT"
}
