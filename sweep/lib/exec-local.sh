# shellcheck shell=bash
# exec-local.sh - the executor that runs each point with fio on this host
# (pipeline.sh names the exec_* hooks), and the fio process it runs.
#
# A point runs in RUN/points/.tmp-RUNKEY.PID and is renamed to
# RUN/points/RUNKEY (KEY.rREPEAT) when its result.json is written, so a
# point directory is either whole or absent; --resume skips runs whose
# result.json says ok.
#
# Owns: the exec_* hooks, point_args, point_stage, run_fio, run_point (a
# point and fio's process control: python3 -m tswap point,
# tswap/cli/point.py). Reads: ENGINE, TARGET, SIZE, RUN, FINISHED, the
# settings. Writes: FIO_PID, TMP_POINT, DROP_NOTED, POINT_REPLY; (through
# the stage) RUN/points/RUNKEY/ (job.fio, run.sh, fio.json, fio.stderr,
# stats.json, result.json), RUN/cache-dropped, RUN/notes.txt.
# shellcheck disable=SC2153 # ENGINE, TARGET: globals of state.sh

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
	# the point stage's reply ("WALL NOTED": run_point), on a pipe this
	# shell holds both ends of, made once before any point (not inside a
	# call with redirections of its own, which may close it on return)
	[ -n "$POINT_REPLY" ] || exec {POINT_REPLY}<> <(:)
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

# exec_stop SIGNAL: the point stage (fio's process control) gets SIGNAL
# and is gone when this returns, fio and its job processes before it
# (tswap/executor/fioproc.py); a point's directory is removed.
# shellcheck disable=SC2317 # called from the signal trap
exec_stop() {
	if [ -n "$FIO_PID" ]; then
		kill -s "$1" "$FIO_PID" 2>/dev/null || true
		wait "$FIO_PID" 2>/dev/null || true
		FIO_PID=
	fi
	if [ -n "$TMP_POINT" ]; then
		if [ -e "$TMP_POINT" ] || [ -L "$TMP_POINT" ]; then rm -rf -- "$TMP_POINT"; fi
		TMP_POINT=
	fi
}

# exec_finish_args VAR: report.md's lines on how the points ran
# (steady.sh, bwlog.sh, precondition.sh).
exec_finish_args() {
	local -n _fa=$1
	_fa=(--steady="$(steady_line)" --bwlog="$(bwlog_line)" --precondition="$(precondition_line)")
}

# point_args VAR DEPTH: the point stage's options on fio's environment
# (tswap/cli/point.py, from a directory DEPTH levels below the run
# directory): this shell's pid (the stage dies with it), the engine, the
# targets, the rank slots of the plan (ranks.sh plan_facts) and the
# descriptors target_fds_open checked, into array VAR.
point_args() {
	local -n _pa=$1
	local h p facts
	local -a f=()
	_pa=(--parent "$BASHPID" --run-dir "$RUN" --depth "$2" --engine "$ENGINE" --target-now "$TARGET"
		--size "$SIZE" --prog "$PROG")
	for h in "${!TARGETS[@]}"; do
		_pa+=(--target="${TARGETS[h]}" --kind="${TARGET_KINDS[h]:-file}")
	done
	for p in "${!TARGET_FDS[@]}"; do
		_pa+=(--fd="${TARGET_FDS[$p]}=$p")
	done
	if [ -n "$PLAN_FACTS" ] && [ "$PLAN_FACTS_OF" = "$PLAN_TEXT" ]; then
		facts=$PLAN_FACTS
	else
		facts=$(plan_facts)
	fi
	mapfile -t f <<<"$facts"
	for p in "${f[@]:2}"; do
		_pa+=(--slot="${p/$'\t'/:}")
	done
}

# point_stage VAR ARGS...: python3 -m tswap point ARGS, a child of this
# shell (py_exec: no shell between them), its exit status into VAR;
# FIO_PID is its pid while it runs (exec_stop).
point_stage() {
	local -n _rc=$1
	shift
	_rc=0
	py_exec point "$@" &
	FIO_PID=$!
	wait "$FIO_PID" || _rc=$?
	FIO_PID=
}

# run_fio DIR DEPTH: run DIR/job.fio in DIR (DEPTH levels below the run
# directory; the preparation, the preconditioning); stdout -> fio.stdout,
# stderr -> fio.stderr; fio's exit status. fio runs in its own process
# group under the point stage's process control (tswap/cli/point.py,
# tswap/executor/fioproc.py). Once the targets are prepared, fio gets them
# as descriptors the sweep opened and checked just before
# (target_fds_open: a target that changed stops the sweep, exit 2): it
# writes the checked file or device, whatever the paths name meanwhile.
run_fio() {
	local dir=$1 depth=$2 rc=0
	local -a args
	if ! target_fds_open; then
		# a point is whole or absent
		[ -z "$TMP_POINT" ] || rm -rf -- "$TMP_POINT"
		exit "$EXIT_USAGE"
	fi
	point_args args "$depth"
	point_stage rc "$dir" "${args[@]}"
	target_fds_close # fio has its own
	return "$rc"
}

# run_point WALLVAR PLANLINE RUNKEY REPEAT DIR [LABEL]: run one point once
# (the settings of now: RUNTIME, RAMP) into RUN/DIR/RUNKEY (DIR one level
# below the run directory), via RUN/DIR/.tmp-RUNKEY.PID; fio's wall seconds
# into WALLVAR; LABEL for the status line while it runs (status.sh). The
# first write point preconditions the target first (precondition.sh). The
# rest is one process, python3 -m tswap point (tswap/cli/point.py): the
# run directory's free space (space.sh's rule), the directory, job.fio
# and run.sh, the page cache dropped before a read
# point (its note once a sweep: DROP_NOTED), fio, result.json and
# progress.txt, the rename. A failed fio is a result (result.json says
# error), not a return status.
run_point() {
	local -n _wall=$1
	local line=$2 runkey=$3 rep=$4 dir="$RUN/$5" label=${6:-} rw rc=0 noted free
	local -a args
	IFS=$'\t' read -r _ _ rw _ <<<"$line"
	precondition_before "$rw"
	target_fds_open || exit "$EXIT_USAGE"
	point_args args 2
	status_args args "$label"
	args+=(--line "$line" --runkey "$runkey" --repeat "$rep" --final "$dir/$runkey" --grid "$G_NAME"
		--size-bytes "$SIZE_BYTES" --runtime="$RUNTIME" --ramp="${RAMP:-}" --io-size="$IO_SIZE"
		--steady="$STEADY" --ss-crit="$SS_CRIT" --ss-dur "$SS_DUR" --bwlog-msec "$BWLOG_MSEC"
		--bwlog-min "$BWLOG_MIN_SAMPLES" --drop-pct "$DROP_PCT" --drop-noted "$DROP_NOTED"
		--reply-fd "$POINT_REPLY" --space-min "$RUN_SPACE_MIN")
	[ "$rw" != read ] || args+=(--drop)
	TMP_POINT="$dir/.tmp-$runkey.$$"
	point_stage rc "$TMP_POINT" "${args[@]}"
	target_fds_close
	if [ "$rc" != 0 ]; then
		# a full run directory, before the point ("full FREE") or as it
		# was written, says so (space.sh); else the stage said its line
		if [ "$rc" = "$EXIT_ERROR" ]; then
			if read -r -t 0 -u "$POINT_REPLY" && IFS=' ' read -r -u "$POINT_REPLY" noted free &&
				[ "$noted" = full ]; then
				run_dir_full_exit "$free"
			fi
			# shellcheck disable=SC2310 # run_dir_free failing: the stage's status
			if free=$(run_dir_free) && ((free < RUN_SPACE_MIN)); then
				run_dir_full_exit "$free"
			fi
		fi
		exit "$rc"
	fi
	TMP_POINT=
	IFS=' ' read -r -t 5 -u "$POINT_REPLY" _wall noted ||
		die "$EXIT_ERROR" "internal error: no reply from the point stage for $runkey"
	[ "$noted" = 0 ] || DROP_NOTED=1
}
