# shellcheck shell=bash
# steady.sh - fio's steady-state detection for each point (fio HOWTO
# "Steady state", fio steadystate.c), capped by the runtime.
#
# A point runs with steadystate=SS_CRIT, ss_dur=SS_DUR and ss_ramp=RAMP on
# top of time_based, runtime and ramp_time: fio samples the job's bandwidth
# once a second (steadystate.c steadystate_check), fits a line through the
# last SS_DUR samples and ends the job as soon as the slope is within the
# limit; a job that never gets there runs to the runtime and is "not
# steady" (tswap.stats.pick flags, never picked). result_json records steady and
# steady_s per run.
#
# fio 3.33 facts this follows:
# - ss_ramp counts from the job's epoch, which fio resets when ramp_time
#   ends (libfio.c reset_all_stats), but not the steady-state byte counter:
#   a sample taken across that reset is an unsigned underflow. ss_ramp =
#   ramp_time keeps every sample after the reset, so sampling starts
#   ramp_time + 1 s into the measured runtime, and the first verdict comes
#   SS_DUR - 1 s later.
# - Without group_reporting each job of a group is judged and ended on its
#   own. A point of several handles (ranks > 1, readwrite) would then lose
#   handles one by one and measure less contention than it set out to, so
#   those points keep the fixed runtime (steady null).
# - The external engine needs nothing: fio counts its completions.
#
# A point's steady-state options: tswap.plan.jobs steady_options (jobs.sh
# point_job), with the window of tswap.plan.expand steady_window.
#
# Owns: steady_window_at, steady_line.
# Reads: FIXED_RUNTIME, IO_SIZE, STEADY, RUNTIME, RAMP, FLEET, BUDGET, SS_CRIT,
# SS_DUR.

# steady_window_at RAMP: the shortest runtime (s) that gives fio two
# verdicts after a RAMP s ramp_time: ramp_time + 1 s before the first
# sample, SS_DUR samples, one more (tswap.plan.expand steady_window, for
# the report's line and budget.sh).
steady_window_at() {
	printf '%s\n' "$((10#$1 + SS_DUR + 2))"
}

# steady_line: the report's line on how each point was timed (a --budget
# run's: its final round's, RUN/budget.json).
steady_line() {
	local rt=$RUNTIME ramp=${RAMP:-0} final='' w how=--fixed-runtime
	if [ -n "$BUDGET" ] && [ -f "$RUN/budget.json" ]; then
		final=$(jq -r '.rounds[-1] // empty | "\(.runtime) \(.ramp)"' "$RUN/budget.json")
	fi
	[ -z "$final" ] || read -r rt ramp <<<"$final"
	w=$(steady_window_at "$ramp")
	if [ -n "$IO_SIZE" ]; then
		return 0
	elif [ "$STEADY" = on ] && ((10#$rt >= w)); then
		printf -- '- steady state: fio steadystate=%s, ss_dur=%s s, ss_ramp=%s s, capped by the %s s runtime; a point that does not attain it, and whose last window moved by more than one tensor op (docs/sweep.md, steady within one op), is flagged "not steady" (points of several handles keep the fixed runtime)\n' \
			"$SS_CRIT" "$SS_DUR" "$ramp" "$rt"
	elif [ "$STEADY" = on ] && [ -n "$BUDGET" ]; then
		printf -- '- fixed runtime: the budget'"'"'s final round of %s s is shorter than a steady-state window needs (%s s: ramp + 1 s + %s s of samples + 1 s); a larger --budget gives it one (the caution at the top)\n' \
			"$rt" "$w" "$SS_DUR"
	elif [ "$FIXED_RUNTIME" = 1 ] || [ "$FLEET" = 1 ]; then
		[ "$FLEET" = 0 ] || how='fleet mode'
		printf -- '- fixed runtime: no steady-state detection (%s)\n' "$how"
	else
		printf -- '- fixed runtime: the %s s runtime is shorter than a steady-state window needs (%s s: ramp + 1 s + %s s of samples + 1 s); --runtime %s or more turns it on\n' \
			"$rt" "$w" "$SS_DUR" "$w"
	fi
}
