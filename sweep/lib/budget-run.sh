# shellcheck shell=bash
# budget-run.sh - the rounds of a --budget run (budget.sh plans them;
# docs/sweep.md "Budget"), re-planned from the wall time they use.
#
# Owns: run_budget and its helpers. Reads: BUDGET, BUDGET_AUTO, BUDGET_T0,
# PLAN_TEXT, STEADY, RAMP, RUNTIME, REPEAT, RUN, CV_FLAG. Writes (through
# tswap.cli.budget_run): RUN/budget.json, RUN/rounds/KEY.sN/, RUN/points/.
# shellcheck disable=SC2034 # RUNTIME, RAMP for run_point, ceiling_prep

# budget_run_point RUNTIME RAMP ARGS...: run_point ARGS at a round's
# runtime and ramp (the grid's RUNTIME and RAMP stay as they are).
budget_run_point() {
	local RUNTIME=$1 RAMP=$2
	shift 2
	run_point "$@"
}

# budget_prep RUNTIME RAMP CEILING_LINE...: before a write, the first
# write into a file this run created is preparation, not a measurement
# (exec-local.sh ceiling_prep, once a run): the write ceiling runs once
# into ceiling-prep/ at the round's runtime and ramp. Round 1's writes
# come before the ceilings: the first would be pruned on a fresh file's
# first-write rate (docs/sweep.md, Budget).
budget_prep() {
	local RUNTIME=$1 RAMP=$2 line label
	shift 2
	[ ! -e "$RUN/ceiling-prep" ] || return 0
	for line in "$@"; do
		point_label label "$line"
		ceiling_prep "$line" 1 "$label"
	done
}

# run_budget: the rounds (replaces run_plan when BUDGET is set). What
# runs next, the checks before each run, the re-plans, the pruning,
# budget.json and the progress lines are one Python process's
# (tswap.cli.budget_run, beside this loop for the whole run: one start):
# it gets the plan's lines, then after each run the seconds it took; it
# answers with lines to eval (say/warn/note, then B_ACT=run with the run's
# B_I, B_DIR, B_KEY, B_REP, B_RT, B_RAMP, B_HEAD, B_TAIL, or B_ACT=end).
# Here: the runs, and the preconditioning and preparation before them.
# A failure of the stage is an internal error (run.sh on_err).
run_budget() {
	local cmd line kind label wall pre cost r0 dir pid bin bout
	local B_ACT='' B_I B_DIR B_KEY B_REP B_RT B_RAMP B_HEAD B_TAIL
	local -a lines=() clines=()
	mkdir -p "$RUN/points" "$RUN/rounds"
	rm -rf -- "$RUN"/points/.tmp-* "$RUN"/rounds/.tmp-*
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		lines+=("$line")
		IFS=$'\t' read -r _ kind _ <<<"$line"
		[ "$kind" != ceiling ] || clines+=("$line")
	done <<<"$PLAN_TEXT"
	dir=$(mktemp -d)
	mkfifo -m 0600 "$dir/in" "$dir/out"
	# its failure is said here, by wait (an ERR in it would be said twice,
	# and once more when it ends after the sweep, after a signal)
	(
		trap - ERR
		py budget-run "$RUN" --budget "$BUDGET" --auto "$BUDGET_AUTO" --t0 "$BUDGET_T0" \
			--steady "$STEADY" --ramp "${RAMP:-0}" --runtime "$RUNTIME" --repeat "$REPEAT" \
			--cvflag "$CV_FLAG"
	) <"$dir/in" >"$dir/out" &
	pid=$!
	exec {bout}>"$dir/in" {bin}<"$dir/out"
	rm -rf -- "$dir"
	printf '%s\n' "${lines[@]}" . >&"$bout"
	while IFS= read -r cmd <&"$bin"; do
		B_ACT=
		eval "$cmd"
		[ "$B_ACT" = run ] || continue
		line=${lines[B_I]}
		point_label label "$line"
		label="$B_HEAD $label$B_TAIL"
		# the pipes are this loop's: not fio's, nor any process it starts
		budget_one "$line" "$label" {bin}<&- {bout}>&-
		printf '%s %s %s %s\n' "$pre" "$cost" "$wall" "$label" >&"$bout"
	done
	exec {bout}>&- {bin}<&-
	wait "$pid"
	[ "$B_ACT" = end ] || die "$EXIT_ERROR" "internal error: the --budget rounds ended early"
}

# budget_one LINE LABEL: run_budget's run B_KEY of LINE into RUN/B_DIR at
# the round's B_RT and B_RAMP: before a write, the preconditioning and
# the preparation (timed apart into PRE: not a cost per run), then the
# run (its seconds into COST, fio's into WALL).
budget_one() {
	local rw
	IFS=$'\t' read -r _ _ rw _ <<<"$1"
	r0=$EPOCHREALTIME
	precondition_before "$rw"
	[ "$rw" != write ] || budget_prep "$B_RT" "$B_RAMP" "${clines[@]}"
	pre=$(since "$r0")
	r0=$EPOCHREALTIME
	budget_run_point "$B_RT" "$B_RAMP" wall "$1" "$B_KEY" "$B_REP" "$B_DIR" "$2"
	cost=$(since "$r0")
}
