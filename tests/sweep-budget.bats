#!/usr/bin/env bats
# tests/sweep-budget.bats - tswap-sweep --budget (successive halving,
# docs/sweep.md "Budget") with real fio on a small file, its dry run and
# usage errors. The benchmark script tests/bench/tswap-bench-sweep:
# tests/sweep-budget-bench.bats; the planner on fixtures:
# tests/sweep-budget-plan.bats.
#
# No test asserts wall time (CI shares its machine): a budget run is
# checked by what the planner accounts, its rounds and their runtimes,
# budget.json's plan and re-plans; a run made slower than planned is a fio
# on PATH that sleeps before a point's run (slow_fio). Whether a run ends
# within its budget, idle and busy, is make bench-sweep's to measure
# (docs/performance.md). Needs the engine: tests that run fio skip,
# saying why, without it.
# shellcheck disable=SC2030,SC2031

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
	bats_load_library bats-file
fi

load budget

sweep() {
	run --separate-stderr timeout -k 10 300 "$SWEEP" "$@"
}

# slow_fio ROUNDS POINTS: a fio first on PATH that sleeps ROUNDS s before
# a pruning round's run (in rounds/), POINTS s before a final round's or
# a ceiling's (in points/), then runs the real fio
slow_fio() {
	local real
	real=$(command -v fio) || skip "requires fio"
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	# shellcheck disable=SC2016 # $PWD and $@ are the wrapper's
	printf '#!/bin/sh\ncase $PWD in */rounds/.tmp-*) sleep %s ;; */points/.tmp-*) sleep %s ;; esac\nexec %s "$@"\n' \
		"$1" "$2" "$real" >"$BATS_TEST_TMPDIR/bin/fio"
	chmod +x "$BATS_TEST_TMPDIR/bin/fio"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

show_sweep() {
	printf 'tswap-sweep exit %s\n--- stdout\n%s\n--- stderr\n%s\n---\n' \
		"$status" "$output" "${stderr:-}" >&2
}

@test "budget plan: the longest accepted runtime and budget plan at once (no scan over the seconds); longer ones are refused, the limit named" {
	# the planner itself at a week per point: tests/py/test_budget.py
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --runtime 604800 --ramp 604800 --budget 604800 --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'round 1( \(final\))?: read '
	local o
	for o in --runtime --ramp --budget; do
		sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" "$o" 9999999999 --dry-run
		assert_equal "$status" 2
		assert_equal "$stderr" "tswap-sweep: $o: at most 604800 s (a week): 9999999999 (see --help)"
	done
	# passes: at most 100 (999999999 once spun for minutes and ran out of
	# memory), from the options and from a grid
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --repeat 100 --budget 604800 --dry-run
	assert_equal "$status" 0
	for o in 101 999999999 99999999999999999999; do
		sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --repeat "$o" --dry-run
		assert_equal "$status" 2
		assert_equal "$stderr" "tswap-sweep: --repeat: at most 100 passes over the grid: $o (see --help)"
	done
	printf 'rw read\nrepeat 1000\n' >"$SCRATCH/many.grid"
	sweep --grid "$SCRATCH/many.grid" --target "$SCRATCH/t.swap" --dry-run
	assert_equal "$status" 2
	assert_equal "$stderr" "tswap-sweep: $SCRATCH/many.grid:2: repeat at most 100: 1000"
	assert_file_not_exist "$SCRATCH/t.swap"
}

@test "budget: --dry-run prints the rounds (runs, runtime, ramp, seconds) and the number of fio runs, runs nothing" {
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$SCRATCH/no" --budget 100 --dry-run
	assert_equal "$status" 0
	assert_output --partial 'budget 100 s: successive halving'
	assert_output --regexp '  round 1: read 4, write 4, 1 repeat\(s\), 8 run\(s\), runtime [0-9]+ s, ramp 1 s: about [0-9.]+ s'
	assert_output --regexp '  round 2 \(final\): read 2, write 2 \+ 2 ceiling\(s\), 3 repeat\(s\), 14 run\(s\), runtime 2 s, ramp 1 s: about [0-9.]+ s'
	assert_output --regexp '  22 fio run\(s\), about [0-9.]+ s of the [0-9]+ s left for runs'
	assert_output --partial 'dry run: the job file of each of the 10 point(s)'
	assert_file_not_exist "$SCRATCH/no"
	assert_file_not_exist "$SCRATCH/t.swap"
	# a budget that cannot give the final round its floor says so
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget 60 --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'the final round runs [0-9]+ repeat\(s\) of [0-9]+ s, below its floor of 3 x 2 s'
}

@test "budget: with steady state on, the final round's floor is fio's steady-state window; below it the plan says so and names the budget that gives it (dry run)" {
	# a 10 s runtime with no ramp: steady state on, a 7 s window (1 s +
	# 5 s of samples + 1 s), above the 5 s floor
	sed -i 's/^runtime .*/runtime      10/; s/^ramp .*/ramp         0/' "$SCRATCH/small.grid"
	local need
	# too small for the 5 s floor: both budgets are named
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget 60 --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'below its floor of 3 x 5 s: .* it needs a budget of about [0-9]+ s, the outputs included, and about [0-9]+ s for fio.s steady-state window of 7 s \(a shorter final run is fixed and ranks each point.s first seconds'
	# the 5 s floor fits, the window does not: the final round keeps the
	# reservation of the floor, and the plan says what the window needs
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget 120 --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'round [0-9] \(final\): read 2, write 2 \+ 2 ceiling\(s\), 3 repeat\(s\), 14 run\(s\), runtime [56] s, ramp 0 s'
	assert_output --regexp 'below fio.s steady-state window of 7 s .*: with the first round still to run at 1 s it needs a budget of about [0-9]+ s for the window'
	refute_output --partial 'below its floor'
	[[ $output =~ it\ needs\ a\ budget\ of\ about\ ([0-9]+)\ s\ for\ the\ window ]] || fail "no budget for the window: $output"
	need=${BASH_REMATCH[1]}
	# that budget (+1 s: this dry run starts a little later) gives the final
	# round the window, and nothing is said
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget "$((need + 1))" --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'round [0-9] \(final\): read 2, write 2 \+ 2 ceiling\(s\), 3 repeat\(s\), 14 run\(s\), runtime ([7-9]|10) s'
	refute_output --partial 'below'
	# --fixed-runtime: no window, the 5 s floor
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget 120 --dry-run --fixed-runtime
	assert_equal "$status" 0
	refute_output --partial 'below'
	assert_file_not_exist "$SCRATCH/t.swap"
}

@test "budget: a budget run on a small file reports the rounds it planned and ran, never picks a pruned point" {
	need_engine
	# 120 s: round 1 (1 s ramp), then the final round at the grid's 2 s
	# runtime and 2 s ramp with 3 repeats, reserved first (about 100 s of
	# runs); a loaded machine may re-plan it down to its 1 s floor
	local rd=$SCRATCH/run budget=120 rt reps
	sed -i 's/^ramp .*/ramp         2/' "$SCRATCH/small.grid"
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget "$budget"
	# 4: every point flagged (CV on a loaded machine) is a valid outcome
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || {
		show_sweep
		fail "exit $status"
	}
	# the progress line counts against the budget
	[[ $stderr == *"(budget $budget s: "*" s left)"* ]] || fail "no budget on the progress lines: $stderr"
	assert_output --partial "budget:     $budget s, used "
	# the first write into the new file is preparation, not round 1's
	# first write point (docs/sweep.md, Budget): the write ceiling once at
	# round 1's runtime into ceiling-prep/, a note
	run -0 jq -e '.status == "ok"' "$rd"/ceiling-prep/ceiling-write-*.prep/result.json
	# (round 1's ramp is 1 s, the final round's the grid's 2 s)
	rt=$(jq -r '.rounds[0] | "runtime=\(.runtime) ramp_time=\(.ramp)"' "$rd/budget.json")
	[ "$(grep -E '^(runtime|ramp_time)=' "$rd"/ceiling-prep/ceiling-write-*.prep/job.fio | paste -sd' ')" = "$rt" ] ||
		fail "the preparation did not run at round 1's $rt: $(grep -E '^(runtime|ramp_time)=' "$rd"/ceiling-prep/*/job.fio)"
	grep -q '^- note: the first write into the new target file ran before the write ceiling as preparation, not a repeat: [0-9.]* GB/s' \
		"$rd/report.md" || fail "report.md does not note the preparation"
	# a machine so busy that the final round was re-planned to run each
	# point once at a 1 s ramp (round 1 itself, when it left no time for
	# another: its own test below), or stopped where the next run no
	# longer fit: what budget.json accounts, the picks, nothing more
	if jq -e '.budget.rounds[-1] | .once or .stopped.fits == false' "$rd/aggregate.json" >/dev/null; then
		jq -e '.budget.rounds | .[-1].final and .[-1].ramp == (if .[-1].once then 1 else 2 end)
			and (.[-1].runs == .[-1].runs_planned or .[-1].stopped.fits == false)
			and all(.[]; .runs <= .runs_planned and .repeats <= .repeats_planned)' "$rd/aggregate.json" >/dev/null ||
			fail "rounds: $(jq -c '.budget.rounds' "$rd/aggregate.json")"
		# a pick is a point that ran, never a pruned one
		jq -e '[.points[] | select(.ok_runs > 0 and .status != "pruned") | .point] as $ran
			| [.best.read, .best.write | select(. != null) | .point | IN($ran[])] | all' "$rd/aggregate.json" >/dev/null ||
			fail "a pick did not run: $(jq -c '.best' "$rd/aggregate.json")"
		return 0
	fi
	# at least two rounds, the first prunes, the last is final with repeats
	jq -e '.budget.rounds | length >= 2 and .[0].final == false and (.[0].pruned | length) > 0
		and .[-1].final and .[-1].repeats >= 1' "$rd/aggregate.json" >/dev/null ||
		fail "rounds: $(jq -c '.budget.rounds' "$rd/aggregate.json")"
	jq -e '.budget.seconds == 120' "$rd/sweep.json" >/dev/null || fail "sweep.json has no budget"
	# budget.json: the first plan and, after each pruning round, a re-plan
	# that fits the time left (or says it does not); each round what it
	# planned and used
	jq -e '.plan.overhead_s == 1 and .plan.planned_s <= .plan.left_s
		and ([.rounds[] | select(.final | not) | .replan | .fits == false or .planned_s <= .left_s] | all)
		and ([.rounds[] | .planned_overhead_s > 0 and .overhead_s > 0 and .wall_s > 0 and .runs <= .runs_planned
			and .repeats <= .repeats_planned] | all)' "$rd/budget.json" >/dev/null ||
		fail "budget.json: $(jq -c 'del(.rounds[].kept, .rounds[].pruned)' "$rd/budget.json")"
	# the final round got its reserved runtime (the grid's 2 s, or its 1 s
	# floor when a loaded machine made it re-plan), the grid's ramp and
	# the repeats; the report's header and how-it-ran lines name it, not
	# round 1's
	# (a busy machine may re-plan it to fewer repeats, or drop one)
	jq -e '.budget.rounds[-1] | (.runtime == 2 or .runtime == 1) and .ramp == 2 and .repeats >= 1 and .repeats <= 3' "$rd/aggregate.json" >/dev/null ||
		fail "final round: $(jq -c '.budget.rounds[-1]' "$rd/aggregate.json")"
	rt=$(jq '.budget.rounds[-1].runtime' "$rd/aggregate.json")
	reps=$(jq '.budget.rounds[-1].repeats' "$rd/aggregate.json")
	grep -qE "^- grid: \*\*small\*\* .* x $reps repeat\(s\), $rt s per point after a 2 s ramp$" "$rd/report.md" ||
		fail "header: $(grep '^- grid' "$rd/report.md")"
	grep -qF -- "- fixed runtime: the $rt s runtime is shorter than a steady-state window needs" "$rd/report.md" ||
		fail "steady line: $(grep -A4 '^## How the points ran' "$rd/report.md")"
	grep -qE -- "^- budget: the pick is made from the final round \(round [0-9]+\): $reps repeat\(s\) of $rt s after a 2 s ramp; the [0-9]+ pruning round\(s\) before it ran each point once for [12] s" "$rd/report.md" ||
		fail "budget line: $(grep -A4 '^## How the points ran' "$rd/report.md")"
	grep -q '^## Budget: successive halving' "$rd/report.md" || fail "report.md has no Budget section"
	grep -qE '^\| 1 \| [12] \| 1 \| 1 \| read 4, write 4 \|' "$rd/report.md" ||
		fail "round 1 row: $(grep -A4 '^## Budget' "$rd/report.md")"
	# the ceilings run in the final round, at its runtime
	grep -qE "^\| [0-9]+ \(final\) \| $rt \| 2 \| $reps \| read 2, write 2 \+ 2 ceiling \|" "$rd/report.md" ||
		fail "final round row: $(grep -A6 '^## Budget' "$rd/report.md")"
	grep -q "^runtime=$rt\$" "$(ls -d "$rd"/points/ceiling-read-*.r1)/job.fio" ||
		fail "the read ceiling did not run at the final round's 2 s: $(grep '^runtime' "$rd"/points/ceiling-read-*.r1/job.fio)"
	# pruned points: status pruned, no runs in points/, never a pick
	jq -e '[.budget.rounds[].pruned[].point] as $p
		| ($p | length) > 0
		and ([.points[] | select(.point | IN($p[])) | .status == "pruned" and (.trusted | not)] | all)
		and ([.best[] | select(. != null) | .point | IN($p[])] | any | not)' "$rd/aggregate.json" >/dev/null ||
		fail "a pruned point is not marked, or is picked: $(jq -c '.best | map_values(.point?)' "$rd/aggregate.json")"
	local p
	for p in $(jq -r '.budget.rounds[].pruned[].point' "$rd/aggregate.json"); do
		assert_file_not_exist "$rd/points/$p.r1"
		assert_file_exist "$rd/rounds/$p.s1/result.json"
	done
	# the final round's points ran its repeats in points/; on a loaded
	# machine the budget can run out in the final round (a run that would
	# end past it is not started): then they ran at most its repeats and
	# the report says where it stopped
	if jq -e '.budget.rounds[-1].stopped != null' "$rd/aggregate.json" >/dev/null; then
		echo "# the budget ran out in the final round: $(jq -c '.budget.rounds[-1].stopped.why' "$rd/aggregate.json")" >&3
		jq -e '.budget.rounds[-1] as $f | [$f.kept[] as $k | .points[] | select(.point == $k) | (.runs // 0) <= $f.repeats] | all' \
			"$rd/aggregate.json" >/dev/null || fail "a final-round point ran more than its repeats"
		grep -q '^Stopped in round [0-9]*: ' "$rd/report.md" || fail "no stop in report.md"
	else
		jq -e '.budget.rounds[-1] as $f | [$f.kept[] as $k | .points[] | select(.point == $k) | .runs == $f.repeats] | all' \
			"$rd/aggregate.json" >/dev/null || fail "the final round's points did not run its repeats"
	fi
	# a budget run is not resumable
	sweep --resume "$rd"
	assert_equal "$status" 2
	[[ $stderr == *"is a --budget run"* ]] || fail "resume: $stderr"
}

@test "budget: a pruning round slower than planned (a fio that sleeps 5 s) becomes the final round when the rounds after it no longer fit; budget.json says so" {
	need_engine
	# 100 s: round 1 is planned at 3 s per run (1 s ramp, 1 s, 1 s of
	# start-up), then the final round; each run takes 7 s or more, so from
	# the third the rest of round 1 (6 x 7 s) and the final round at least
	# once (4 points and 2 ceilings x 7 s) need 84 s, more than is left
	local rd=$SCRATCH/run
	slow_fio 5 0
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget 100
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || {
		show_sweep
		fail "exit $status"
	}
	[[ $stderr == *"budget 100 s: round 1: this round becomes the final round"* ]] || fail "$stderr"
	jq -e '.plan.rounds | length == 2 and (.[0].final | not)' "$rd/budget.json" >/dev/null ||
		fail "first plan: $(jq -c .plan "$rd/budget.json")"
	# a machine so busy that the runs took longer still (10 s each beside
	# 6 bats files and 4 busy loops) stops this round too before its
	# ceilings: what the run accounts (a run that would end past the
	# budget is not started)
	if jq -e '.rounds[0].stopped' "$rd/budget.json" >/dev/null; then
		jq -e '.rounds | length == 1 and .[0].final and .[0].became_final.fits == false
			and .[0].stopped.fits == false and .[0].runs < .[0].runs_planned' "$rd/budget.json" >/dev/null ||
			fail "rounds: $(jq -c .rounds "$rd/budget.json")"
		[ "$(find "$rd/points" -name result.json | wc -l)" -eq "$(jq '.rounds[0].runs' "$rd/budget.json")" ] ||
			fail "$(ls "$rd/points")"
		return 0
	fi
	jq -e '.rounds | length == 1 and .[0].final and .[0].once and .[0].runs == 10 and .[0].ceilings == 2
		and .[0].became_final.per_run_s >= 7 and .[0].became_final.fits == false
		and .[0].became_final.need_s > .[0].became_final.left_s and .[0].pruned == []
		and (.[0].kept | length) == 8' "$rd/budget.json" >/dev/null ||
		fail "rounds: $(jq -c .rounds "$rd/budget.json")"
	# every point ran once into points/, the ceilings too; nothing pruned
	[ "$(find "$rd/points" -name result.json | wc -l)" -eq 10 ] || fail "$(ls "$rd/points")"
	[ -z "$(ls -A "$rd/rounds")" ] || fail "rounds/: $(ls "$rd/rounds")"
	jq -e '[.points[] | select(.kind == "tswap") | .runs == 1 and .status != "pruned"] | all and length == 8' \
		"$rd/aggregate.json" >/dev/null || fail "$(jq -c '[.points[] | {point, runs, status}]' "$rd/aggregate.json")"
	grep -qF -- '- note: budget: round 1: this round becomes the final round' "$rd/report.md" || fail "no note in report.md"
}

@test "budget: a final round slower than planned (a fio that sleeps 10 s) drops the repeat that no longer fits; budget.json says so" {
	need_engine
	# read only, 2 points: one round, the final, 2 or 3 repeats and the
	# ceiling (planned at 3-4 s per run); its runs take 13 s or more, so
	# after the first repeat (39 s or more) a second (2 x 13 s) does not
	# fit in 60 s
	local rd=$SCRATCH/run
	sed -i 's/^rw .*/rw           read/; s/^block .*/block        1m/' "$SCRATCH/small.grid"
	slow_fio 0 10
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget 60
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || {
		show_sweep
		fail "exit $status"
	}
	# a machine so loaded that the target's preparation and the ceiling
	# left too little for the first repeat stops before it (a run that
	# would end past the budget is not started): what that run accounts
	if jq -e '.rounds[0].stopped != null' "$rd/budget.json" >/dev/null; then
		echo "# stopped before the first repeat: $(jq -c '.rounds[0].stopped.why' "$rd/budget.json")" >&3
		[[ $stderr == *"budget 60 s: round 1: the next run needs about "*" s are left for runs: the run stops here"* ]] || fail "$stderr"
		jq -e '.rounds | length == 1 and .[0].stopped.fits == false and .[0].stopped.need_s > .[0].stopped.left_s' \
			"$rd/budget.json" >/dev/null || fail "rounds: $(jq -c .rounds "$rd/budget.json")"
		grep -q '^Stopped in round 1: the next run needs about' "$rd/report.md" || fail "no stop in report.md"
		return 0
	fi
	[[ $stderr =~ budget\ 60\ s:\ the\ final\ round\ ends\ after\ 1\ of\ its\ [23]\ repeat\(s\):\ one\ more\ needs\ about ]] || fail "$stderr"
	jq -e '.plan.rounds | length == 1 and .[0].final and .[0].repeats >= 2' \
		"$rd/budget.json" >/dev/null || fail "first plan: $(jq -c .plan "$rd/budget.json")"
	jq -e '.rounds | length == 1 and .[0].repeats == 1 and .[0].repeats_planned >= 2 and .[0].runs == 3
		and .[0].runs_planned >= 5 and .[0].overhead_s >= 10 and .[0].dropped.fits == false
		and .[0].dropped.need_s > .[0].dropped.left_s' "$rd/budget.json" >/dev/null ||
		fail "rounds: $(jq -c .rounds "$rd/budget.json")"
	# the report and the pick name the repeat made, not the plan's
	grep -qE -- '^- budget: the pick is made from the final round \(round 1\): 1 repeat\(s\) of [12] s after a 1 s ramp$' "$rd/report.md" ||
		fail "$(grep -- '- budget:' "$rd/report.md")"
	jq -e '[.points[] | select(.kind == "tswap") | .runs == 1] | all' "$rd/aggregate.json" >/dev/null ||
		fail "$(jq -c '[.points[] | {point, runs}]' "$rd/aggregate.json")"
}

@test "budget: a run that would end past the budget is not started: the run stops, the points not run are not picked, the pick says so" {
	need_engine
	# 45 s is accepted (round 1 planned at 3 s per run: 10 runs, 30 s);
	# every run takes 8 s or more (a fio that sleeps 6 s), so round 1
	# cannot finish: before the run that would end past the budget the
	# run stops
	local rd=$SCRATCH/run
	slow_fio 6 6
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget 45
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || {
		show_sweep
		fail "exit $status"
	}
	[[ $stderr == *"budget 45 s: round 1: the next run needs about "*" s are left for runs: the run stops here"* ]] || fail "$stderr"
	# what the run accounted: one round, made final, stopped before its
	# 10 runs, at a per-run cost that no longer fit what was left
	jq -e '.rounds | length == 1 and .[0].final and .[0].once and .[0].runs < 10
		and .[0].stopped.fits == false and .[0].stopped.need_s > .[0].stopped.left_s
		and .[0].stopped.per_run_s >= 8 and .[0].stopped.once_budget_s > 45' "$rd/budget.json" >/dev/null ||
		fail "rounds: $(jq -c .rounds "$rd/budget.json")"
	local ran
	ran=$(jq '.rounds[0].runs' "$rd/budget.json")
	[ "$(find "$rd/points" -name result.json | wc -l)" -eq "$ran" ] || fail "$ran runs, points/: $(ls "$rd/points")"
	[ -z "$(ls -A "$rd/rounds")" ] || fail "rounds/: $(ls "$rd/rounds")"
	# each point not run says why and is never picked; each pick says
	# how many points it is the best of
	jq -e --argjson ran "$ran" '[.points[] | select(.kind == "tswap" and .status == "not run")] as $nr
		| ($nr | length) >= 8 - $ran and ($nr | all(.errors == ["the budget ran out before it ran"] and (.trusted | not)))
		and ([.best.read, .best.write | select(. != null)] | all(.verdict | test("the budget ran out before [0-9]+ of the 8 points ran")))
		and ([.best.read, .best.write | select(. != null) | .point] - [.points[] | select(.status == "ok") | .point] == [])' \
		"$rd/aggregate.json" >/dev/null || fail "$(jq -c '[.points[] | {point, status, errors}], .best' "$rd/aggregate.json")"
	grep -q '^Stopped in round 1: the next run needs about' "$rd/report.md" || fail "no stop in report.md"
}

@test "budget: a budget too small for round 1 is refused in one line with the minimum, exit 2, nothing created" {
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$SCRATCH/no" --budget 10
	assert_equal "$status" 2
	assert_equal "$(grep -c . <<<"$stderr")" 1
	[[ $stderr == *"--budget 10: too small to run round 1 once (every point and ceiling once"*"at least "*" s"* ]] || fail "$stderr"
	# without ceiling runs, it names none
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$SCRATCH/no" --budget 5 --no-ceiling
	assert_equal "$status" 2
	[[ $stderr == *"too small to run round 1 once (every point once"* ]] || fail "$stderr"
	# and the budget that gives the final round its floor (the grid's 2 s)
	[[ $stderr =~ \;\ ([0-9]+)\ s\ gives\ the\ final\ round\ its\ 2\ s\ runtime ]] || fail "$stderr"
	# that budget plans the final round at its floor, 3 repeats. The
	# planner counts this script's own start-up (wall seconds) on the
	# budget's clock, and a second run on a busy machine may start a few
	# seconds slower (a CI run: 88 s named, 91 s needed): 10 s of slack,
	# which cannot change the final round (the grid's runtime, 3 repeats)
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget "$((BASH_REMATCH[1] + 10))" --dry-run
	assert_equal "$status" 0
	assert_output --regexp 'round 2 \(final\): read 2, write 2 \+ 2 ceiling\(s\), 3 repeat\(s\), 14 run\(s\), runtime 2 s'
	refute_output --partial 'below its floor' 
	assert_file_not_exist "$SCRATCH/no"
	assert_file_not_exist "$SCRATCH/t.swap"
}

@test "budget: bad values and combinations are usage errors" {
	local v
	for v in abc 0 -5 1.5 ''; do
		sweep --budget "$v" --dry-run
		assert_equal "$status" 2
		[[ $stderr == *"--budget"* ]] || fail "--budget '$v': $stderr"
	done
	sweep --budget 100 --exhaustive --dry-run
	assert_equal "$status" 2
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --budget 100 --io-size 8m --dry-run
	assert_equal "$status" 2
	[[ $stderr == *"no --io-size"* ]] || fail "$stderr"
}

@test "budget: a grid over an hour exhaustively runs with a budget by default (said on stderr); --exhaustive keeps every point" {
	sed -i 's/^runtime .*/runtime      600/' "$SCRATCH/small.grid"
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --dry-run
	assert_equal "$status" 0
	[[ $stderr == *"note: grid small is 10 fio run(s)"*"running it with --budget 3600"*"--exhaustive runs every point"* ]] || fail "$stderr"
	assert_output --partial 'budget 3600 s: successive halving'
	assert_output --partial 'round 1: read 4, write 4, 1 repeat(s)'
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --dry-run --exhaustive
	assert_equal "$status" 0
	[[ $stderr != *"note: grid"* ]] || fail "$stderr"
	refute_output --partial 'successive halving'
}

@test "budget: SIGTERM while a round's fio runs: exit 143, the budget's message, nothing half-written, no fio left" {
	need_engine
	local rd=$SCRATCH/run pid st=0 _
	# a pruning round's run sleeps 30 s in the fio on PATH: the signal
	# comes while it runs
	slow_fio 30 0
	timeout -k 10 120 "$SWEEP" --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget 100 \
		>"$SCRATCH/out" 2>"$SCRATCH/err" &
	pid=$!
	for _ in $(seq 1 600); do
		compgen -G "$rd/rounds/.tmp-*" >/dev/null && break
		sleep 0.1
	done
	compgen -G "$rd/rounds/.tmp-*" >/dev/null || fail "no round's run started: $(cat "$SCRATCH/err")"
	kill -TERM "$pid"
	wait "$pid" || st=$?
	assert_equal "$st" 143
	grep -qxF "tswap-sweep: interrupted: a --budget run cannot be resumed (its rounds are planned for one run's wall time); start a new run" \
		"$SCRATCH/err" || fail "$(cat "$SCRATCH/err")"
	! grep -q 'Traceback\|internal error' "$SCRATCH/err" || fail "$(cat "$SCRATCH/err")"
	[ -z "$(find "$rd" -name '.tmp-*' -o -name '*.tmp')" ] || fail "left: $(find "$rd" -name '.tmp-*' -o -name '*.tmp')"
	# the fio on PATH (and its sleep) ended with the sweep
	[ -z "$(pgrep -f -- "$BATS_TEST_TMPDIR/bin/fio" || :)" ] || fail "fio left: $(pgrep -af -- "$BATS_TEST_TMPDIR/bin/fio")"
}
