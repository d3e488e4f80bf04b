# shellcheck shell=bash
# exec-local.sh - the executor that runs each point with fio on this host
# (pipeline.sh names the exec_* hooks), and the fio process it runs.
#
# A point runs in RUN/points/.tmp-RUNKEY.PID and is renamed to
# RUN/points/RUNKEY (KEY.rREPEAT) when its result.json is written, so a
# point directory is either whole or absent; --resume skips runs whose
# result.json says ok.
#
# Owns: the exec_* hooks, drop_caches, run_fio, run_point (fio's process
# control: fioproc.sh). Reads: ENGINE, TARGET, SIZE, RUN, FINISHED. Writes:
# FIO_PID, FIO_TAG, TMP_POINT, DROP_NOTED; RUN/points/RUNKEY/ (job.fio, run.sh, fio.json,
# fio.stderr, stats.json, result.json), RUN/cache-dropped.
# shellcheck disable=SC2153 # ENGINE, TARGET: globals of state.sh
# shellcheck disable=SC2164 # cd in a subshell under the entry point's set -e

exec_check_targets() { check_targets "$1"; }
exec_ready() {
	[ -f "$ENGINE" ] || die "$EXIT_ERROR" "the tswap engine $ENGINE does not exist (run make, or pass --engine)"
}
exec_new_run() { write_meta; }
exec_places() { :; }
exec_place_names() { :; }

# exec_dry_head TOTAL
exec_dry_head() {
	if [ -n "$BUDGET" ]; then
		say "dry run: the job file of each of the $1 point(s) at the grid's runtime (a round runs it with its own runtime and ramp) on $TARGET ($TARGET_KIND, $SIZE), grid $G_NAME; nothing is run"
	else
		say "dry run: $1 fio run(s) on $TARGET ($TARGET_KIND, $SIZE), grid $G_NAME; nothing is run"
	fi
	local engine target
	engine=$(fio_path "$ENGINE" engine.so 2)
	target=$(fio_path "$TARGET" target 2)
	say "environment: TSWAP_ENGINE=$engine TSWAP_TARGET=$target TSWAP_SIZE=$SIZE"
}

exec_head() {
	say "tswap-sweep: grid $G_NAME on $TARGET ($TARGET_KIND, $SIZE); run directory $RUN"
	prepare_targets
}
# exec_begin: no point of an earlier sweep half-done (rm only if one is)
exec_begin() {
	local -a tmp=("$RUN"/points/.tmp-*)
	[ -e "${tmp[0]:-}" ] || [ -L "${tmp[0]:-}" ] || return 0
	rm -rf -- "${tmp[@]}"
}
exec_todo() { [ -n "${FINISHED[$1]+set}" ] || printf '0\n'; }
exec_done_text() { printf 'done earlier: %s GB/s\n' "${FINISHED[$1]}"; }
# exec_run WALLVAR LINE RUNKEY REP LABEL
exec_run() {
	ceiling_prep "$2" "$4" "$5"
	run_point "$1" "$2" "$3" "$4" points "$5"
}

# ceiling_prep LINE REP LABEL: the first write into a fresh file is
# preparation, not a repeat (docs/sweep.md, What a run does, step 2):
# before the first repeat of the first ceiling that writes the single
# target, when this run created and filled that file (RUN/prepare/done)
# and does not precondition it, the ceiling runs once more into
# RUN/ceiling-prep/ (not points/: no result, no repeat); notes.txt gets
# its GB/s.
ceiling_prep() {
	local key kind rw n wall res dir=$RUN/ceiling-prep
	IFS=$'\t' read -r key kind rw _ _ _ _ _ _ _ _ n <<<"$1"
	[ "$kind" = ceiling ] && [ "$rw" = write ] && [ "${n:-1}" = 1 ] && [ "$2" = 1 ] || return 0
	[ "$TARGET_KIND" = file ] && [ -f "$RUN/prepare/done" ] && [ ! -e "$dir" ] || return 0
	! precondition_wanted || return 0
	run_point wall "$1" "$key.prep" 0 ceiling-prep "$3 (preparation)"
	IFS=$'\t' read -r res _ <"$dir/$key.prep/progress.txt" || res='no result'
	note "the first write into the new target file ran before the write ceiling as preparation, not a repeat: $res in $wall s (ceiling-prep/)"
}

# exec_result_text RUNKEY LABEL ETA (the run's progress.txt: result_json)
exec_result_text() {
	local res
	IFS= read -r res <"$RUN/points/$1/progress.txt"
	printf '%s  %s  (eta %s)\n' "$2" "${res/$'\t'/  }" "$3"
}

# exec_stop SIGNAL: fio gets SIGNAL and is gone when this returns
# (fioproc.sh fio_stop).
# shellcheck disable=SC2317 # called from the signal trap
exec_stop() {
	status_stop
	if [ -n "$FIO_PID" ]; then
		fio_stop "$FIO_PID" "$FIO_TAG" "$1"
		FIO_PID=
	fi
	if [ -n "$TMP_POINT" ]; then
		rm -rf -- "$TMP_POINT"
		TMP_POINT=
	fi
}

# exec_finish_args VAR: report.md's lines on how the points ran
# (steady.sh, bwlog.sh, precondition.sh).
exec_finish_args() {
	local -n _fa=$1
	_fa=(--steady="$(steady_line)" --bwlog="$(bwlog_line)" --precondition="$(precondition_line)")
}

drop_caches() {
	local why
	sync
	if [ "$EUID" -ne 0 ]; then
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

# run_fio DIR DEPTH [LABEL]: run DIR/job.fio in DIR (DEPTH levels below the
# run directory); stdout -> fio.stdout, stderr -> fio.stderr. With LABEL, a
# status line every STATUS_EVERY seconds while fio runs (status.sh). fio
# runs in its own process group under a guard that kills it and its job
# processes if the sweep dies (fioproc.sh); FIO_PID is the group. Once
# the targets are prepared, fio gets them as descriptors the sweep opened
# and checked just before (target_fds_open: a target that changed stops
# the sweep, exit 2): it writes the checked file or device, whatever the
# paths name meanwhile.
run_fio() {
	local dir=$1 depth=$2 label=${3:-} rc=0 engine target parent=$BASHPID
	engine=$(fio_path "$ENGINE" engine.so "$depth")
	target=$(fio_path "$TARGET" target "$depth")
	if ! target_fds_open; then
		# a point is whole or absent
		[ -z "$TMP_POINT" ] || rm -rf -- "$TMP_POINT"
		exit "$EXIT_USAGE"
	fi
	fio_new_tag FIO_TAG
	(
		cd "$dir"
		export TSWAP_ENGINE="$engine" TSWAP_TARGET="$target" TSWAP_SIZE="$SIZE"
		rank_env_export "$depth"
		target_refs_close
		target_fds_export
		fio_exec "$parent" "$FIO_TAG" fio --output-format=json --eta=never job.fio \
			>fio.stdout 2>fio.stderr </dev/null
	) &
	FIO_PID=$!
	target_fds_close # fio has its own
	[ -z "$label" ] || status_start "$FIO_PID" "$label"
	wait "$FIO_PID" || rc=$?
	# a job process that outlived fio: gone first. A guard that exited by
	# itself (status 128 or less: fio's, or 125) has done this already,
	# after fio ended (fioproc.sh fio_guard); one killed, or fio killed by
	# a signal, is followed by the sweep's own look.
	((rc <= 128)) || fio_reap_tagged "$FIO_TAG"
	FIO_PID=
	status_stop
	return "$rc"
}

# run_point WALLVAR PLANLINE RUNKEY REPEAT DIR [LABEL]: run one point once
# (the settings of now: RUNTIME, RAMP) into RUN/DIR/RUNKEY (DIR one level
# below the run directory), via RUN/DIR/.tmp-RUNKEY.PID; fio's wall seconds
# into WALLVAR; LABEL for the status line while it runs. The first write
# point preconditions the target first (precondition.sh). A failed fio is a
# result (result.json says error), not a return status.
run_point() {
	local -n _wall=$1
	local line=$2 runkey=$3 rep=$4 dir="$RUN/$5" label=${6:-} tmp rw t0 rc=0
	IFS=$'\t' read -r _ _ rw _ <<<"$line"
	precondition_before "$rw"
	check_run_space
	jobs_ready "$line"
	tmp="$dir/.tmp-$runkey.$$"
	TMP_POINT=$tmp
	# (rm only if there is one: exec_begin removed the earlier sweeps')
	if [ -e "$tmp" ] || [ -L "$tmp" ]; then rm -rf -- "$tmp"; fi
	mkdir -p "$tmp"
	point_job "$line" >"$tmp/job.fio"
	write_run_sh "$tmp" 2
	[ "$rw" = read ] && drop_caches
	t0=$EPOCHREALTIME
	run_fio "$tmp" 2 "$label" || rc=$?
	since_into _wall "$t0"
	result_json "$tmp" "$runkey" "$rep" "$rc" "$_wall" "$line"
	# an earlier run of RUNKEY that did not say ok (--resume runs it
	# again): removed first (rm only if there is one)
	if [ -e "${dir:?}/$runkey" ] || [ -L "$dir/$runkey" ]; then rm -rf -- "${dir:?}/$runkey"; fi
	mv -T -- "$tmp" "$dir/$runkey"
	TMP_POINT=
}
