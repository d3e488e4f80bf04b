#!/usr/bin/env bats
# tests/sweep-budget-plan.bats - the --budget planner on fixtures: the
# rounds it plans (jq/budget-plan.jq), what a round keeps
# (jq/budget-prune.jq), its checks while a round runs and what a round
# used (jq/budget-check.jq, jq/budget-round.jq), the report's section.
# No fio, no wall clock: the seconds are given. The real runs:
# tests/sweep-budget.bats.

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
fi

SWEEP_REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# plan LEFT [SHAPE FIRST]: jq/budget-plan.jq for the deepspeed grid's
# shape (8 points per direction, 2 ceilings, 10 s runtime, 2 s ramp, 3
# final repeats, 1 s of fio start-up per run, a 5 s floor): a new plan,
# or a re-plan of SHAPE after FIRST rounds.
plan() {
	local groups='{"read": 8, "write": 8}'
	[ -z "${2:-}" ] || groups=null
	jq -n --argjson groups "$groups" --argjson shape "${2:-null}" --argjson ceilings 2 \
		--argjson left "$1" --argjson ramp 2 --argjson over 1 --argjson tmax 10 --argjson reps 3 \
		--argjson floor 5 --argjson first "${3:-0}" -f "$SWEEP_REPO/sweep/jq/budget-plan.jq"
}

@test "budget plan: the final round is reserved first (the grid's runtime, else down to its 5 s floor, 3 repeats, the grid's ramp); the pruning rounds get what is left" {
	local p
	# 160 s: round 1 at 1 s (16 points, 48 s) and the final round at its
	# floor with the 2 ceilings (14 runs x 8 s); the old planner gave round
	# 2 8 s and the final round 3 s, and ran the ceilings in round 1 at 1 s
	p=$(plan 160)
	jq -e '.fits and (.below_floor | not) and .floor_s == 160 and .min_s == 54 and (.rounds | length) == 2
		and .rounds[0].runtime == 1 and .rounds[0].runs == 16 and .rounds[0].ceilings == 0
		and .rounds[-1].final and .rounds[-1].runtime == 5 and .rounds[-1].repeats == 3 and .rounds[-1].ramp == 2
		and .rounds[-1].ceilings == 2 and .rounds[-1].runs == 14
		and .planned_s <= 160' <<<"$p" >/dev/null || fail "$p"
	# 300 s: the final round at the grid's 10 s first, then both pruning
	# rounds, at most 10 s, doubling
	p=$(plan 300)
	jq -e '(.rounds | length) == 3 and .rounds[-1].runtime == 10 and .rounds[-1].repeats == 3
		and .rounds[0].runtime >= 1 and .rounds[1].runtime >= .rounds[0].runtime and .rounds[1].runtime <= 10
		and .planned_s <= 300' <<<"$p" >/dev/null || fail "$p"
	# never more than the grid's runtime, however large the budget
	jq -e '[.rounds[].runtime] | max == 10' <<<"$(plan 5000)" >/dev/null || fail "$(plan 5000)"
}

@test "budget plan: a re-plan after round 1 keeps the final round's reservation and the grid's ramp" {
	local p rest
	p=$(plan 300)
	rest=$(jq -c '.rounds[1:]' <<<"$p")
	# measured start-up as planned, 210 s left: the final round keeps 10 s
	# and its ceilings (14 runs x 13 s), round 2 runs at 1 s
	p=$(plan 210 "$rest" 1)
	jq -e '.fits and .rounds[-1].runtime == 10 and .rounds[-1].ramp == 2 and .rounds[-1].repeats == 3
		and .rounds[-1].ceilings == 2 and .planned_s <= 210' \
		<<<"$p" >/dev/null || fail "$p"
	# only the final round left: its ramp is the grid's (the old planner
	# ramped a final round left alone at 1 s), its runtime what fits
	rest=$(jq -c '.rounds[-1:]' <<<"$p")
	p=$(plan 112 "$rest" 2)
	jq -e '(.rounds | length) == 1 and .rounds[0].final and .rounds[0].ramp == 2 and .rounds[0].runtime == 5
		and (.below_floor | not)' <<<"$p" >/dev/null || fail "$p"
}

@test "budget plan: below the floor the old rule runs (below_floor, the final round shorter or fewer repeats); below round 1 once, fits is false with the minimum" {
	local p
	p=$(plan 114)
	jq -e '.fits and .below_floor and .floor_s == 160 and .final_floor == 5 and .rounds[-1].final
		and (.rounds[-1].runtime < 5 or .rounds[-1].repeats < 3) and .planned_s <= 114' <<<"$p" >/dev/null || fail "$p"
	p=$(plan 40)
	jq -e '(.fits | not) and .min_s == 54 and .below_floor' <<<"$p" >/dev/null || fail "$p"
}

# prune RESULTS KEEP: budget-prune.jq over result objects of the plan $planj
prune() {
	jq -s -c -L "$SWEEP_REPO/sweep/jq" --slurpfile plan <(printf '%s' "$planj") --argjson keep "$2" \
		--argjson noise 0.05 -f "$SWEEP_REPO/sweep/jq/budget-prune.jq" <<<"$1"
}

@test "budget prune: the fastest, then its ties within 5% by the cost order, then GB/s; failed last" {
	local planj out
	planj='[{"point":"a","kind":"tswap","ckey":"read","threads":1,"qd":8,"block":1048576,"submit":"block"},
		{"point":"b","kind":"tswap","ckey":"read","threads":1,"qd":8,"block":1048576,"submit":"block"},
		{"point":"d","kind":"tswap","ckey":"read","threads":1,"qd":8,"block":1048576,"submit":"block"},
		{"point":"e","kind":"tswap","ckey":"read","threads":8,"qd":8,"block":1048576,"submit":"block"},
		{"point":"f","kind":"tswap","ckey":"read","threads":1,"qd":8,"block":1048576,"submit":"block"}]'
	out=$(prune '{"point":"a","status":"ok","gbs":2.5} {"point":"b","status":"ok","gbs":2.6}
		{"point":"d","status":"ok","gbs":1.9} {"point":"e","status":"ok","gbs":2.5}
		{"point":"f","status":"error","gbs":null}' '{"read": 2}')
	# b fastest; a and e within 5% of it, a first by the cost order (1
	# thread before 8); d outside; the failed point last
	jq -e '.kept == ["a", "b"]' <<<"$out" >/dev/null || fail "$out"
	jq -e '[.pruned[] | [.point, .why]] == [["e", "tied, costlier"], ["d", "slower"], ["f", "failed"]]' \
		<<<"$out" >/dev/null || fail "$out"
}

@test "budget prune: one run's band is one tensor op of it + 5%: a cheap point 19% slower after 6 ops goes on, after 600 ops it does not" {
	local planj t=419430400 out
	planj='[{"point":"fast","kind":"tswap","ckey":"write","threads":8,"qd":128,"block":8388608,"submit":"block"},
		{"point":"next","kind":"tswap","ckey":"write","threads":8,"qd":32,"block":8388608,"submit":"block"},
		{"point":"cheap","kind":"tswap","ckey":"write","threads":1,"qd":32,"block":1048576,"submit":"block"}]'
	res() { # OPS: the three runs, each OPS tensor ops of $t (one handle)
		printf '{"point":"%s","status":"ok","gbs":%s,"tensor":%s,"handles":[{"bytes":%s}]}\n' \
			fast 2.6 "$t" $(($1 * t)) next 2.5 "$t" $(($1 * t)) cheap 2.1 "$t" $(($1 * t))
	}
	# 6 ops: +-(1/6 + 5%) = 22%: cheap (2.1 x 1.22 = 2.56) overlaps fast
	# (2.6 x 0.78 = 2.03) and goes on before the faster but costlier next
	out=$(prune "$(res 6)" '{"write": 2}')
	jq -e '.kept == ["cheap", "fast"] and .pruned == [{"point": "next", "ckey": "write", "gbs": 2.5, "why": "tied, costlier"}]' \
		<<<"$out" >/dev/null || fail "$out"
	# 600 ops: +-5.2%: cheap is slower, GB/s decides
	out=$(prune "$(res 600)" '{"write": 2}')
	jq -e '.kept == ["fast", "next"] and .pruned == [{"point": "cheap", "ckey": "write", "gbs": 2.1, "why": "slower"}]' \
		<<<"$out" >/dev/null || fail "$out"
}

@test "budget report: the Budget section lists each round, what it pruned at which GB/s, and the ceilings in the final round" {
	local agg
	agg='{"budget": {"seconds": 100, "chosen_by_default": false, "used_s": 90, "runs_start_s": 1, "overhead_estimate_s": 1,
		"rounds": [{"round": 1, "final": false, "runtime": 1, "ramp": 1, "repeats": 1, "groups": {"read": 3}, "ceilings": 0,
			"runs": 3, "planned_s": 9, "wall_s": 8, "overhead_s": 0.5, "kept": ["a", "b"],
			"pruned": [{"point": "e", "ckey": "read", "gbs": 2.5, "why": "tied, costlier"}, {"point": "d", "ckey": "read", "gbs": 1.9, "why": "slower"},
				{"point": "f", "ckey": "read", "gbs": null, "why": "failed"}]},
		{"round": 2, "final": true, "runtime": 5, "ramp": 2, "repeats": 3, "groups": {"read": 2}, "ceilings": 1,
			"runs": 7, "planned_s": 56, "wall_s": 52, "overhead_s": 0.5, "kept": ["a", "b"], "pruned": []}],
		"final_margins": {}}}'
	run -0 jq -r -L "$SWEEP_REPO/sweep/jq" -f "$SWEEP_REPO/sweep/jq/report-budget.jq" <<<"$agg"
	# shellcheck disable=SC2016 # backticks are markdown
	assert_output --partial '| 1 | 1 | 1 | 1 | read 3 | 3 | 9 | 8 | 0.5 | `e` 2.5 (tied, costlier), `d` 1.9, `f` - (failed) |'
	assert_output --partial '| 2 (final) | 5 | 2 | 3 | read 2 + 1 ceiling | 7 | 56 | 52 | 0.5 | - |'
	assert_output --partial 'the fastest, then the points tied with it within that run'"'"'s noise'
	assert_output --partial 'the device ceilings at the same runtime'
}

@test "budget report: a final round shorter than the steady-state window gives a caution line under the pick, with the budget for the window" {
	local agg='{"best": {}, "trust": {"trusted": 0, "flagged": 0, "libaio_with_result": 0},
		"budget": {"seconds": 120, "steady_window_s": 9, "steady_budget_s": 247, "rounds": [{"runtime": 1}, {"runtime": 3}]}}'
	run -0 jq -r -L "$SWEEP_REPO/sweep/jq" -f "$SWEEP_REPO/sweep/jq/report-pick.jq" <<<"$agg"
	assert_line "- caution: the budget's final round ran 3 s per run, fixed: shorter than fio's steady-state window (9 s), so the pick ranks each point's first seconds (such as a write cache's burst) and no point could be flagged not steady; --budget 247 gives the final round the window"
	# at the window, without one (steady state off), or without a budget: none
	local a
	for a in "$(jq -c '.budget.rounds[-1].runtime = 9' <<<"$agg")" "$(jq -c '.budget.steady_window_s = null' <<<"$agg")" \
		"$(jq -c 'del(.budget)' <<<"$agg")"; do
		run -0 jq -r -L "$SWEEP_REPO/sweep/jq" -f "$SWEEP_REPO/sweep/jq/report-pick.jq" <<<"$a"
		refute_output --partial 'caution'
	done
}

@test "budget plan: a final round left alone that does not fit at one repeat runs its points once; below that, fits is false with its minimum" {
	local p rest
	# a busy machine: round 1 ran at 8 s of start-up per run; the final
	# round (4 points, 2 ceilings) at 1 repeat of 1 s with the grid's 2 s
	# ramp needs 6 x 11 = 66 s, its points once ramped 1 s 6 x 10 = 60 s
	# (the old planner returned no rounds here, and the sweep failed)
	rest=$(jq -c '.rounds[1:]' <<<"$(plan 196)")
	p=$(jq -n --argjson groups null --argjson shape "$rest" --argjson ceilings 2 --argjson left 62 \
		--argjson ramp 2 --argjson over 8 --argjson tmax 10 --argjson reps 3 --argjson floor 5 \
		--argjson first 1 -f "$SWEEP_REPO/sweep/jq/budget-plan.jq")
	jq -e '.fits and .below_floor and (.rounds | length) == 1 and .rounds[0].final and .rounds[0].once
		and .rounds[0].repeats == 1 and .rounds[0].ramp == 1 and .rounds[0].runs == 6 and .planned_s <= 62
		and .min_runs == 6 and .min_ramp == 1 and .overhead_s == 8' <<<"$p" >/dev/null || fail "$p"
	p=$(jq -n --argjson groups null --argjson shape "$rest" --argjson ceilings 2 --argjson left 59 \
		--argjson ramp 2 --argjson over 8 --argjson tmax 10 --argjson reps 3 --argjson floor 5 \
		--argjson first 1 -f "$SWEEP_REPO/sweep/jq/budget-plan.jq")
	jq -e '(.fits | not) and .min_s == 60 and .rounds == []' <<<"$p" >/dev/null || fail "$p"
}

@test "budget plan: a re-plan at a measured start-up larger than planned fits the time left (planned_s <= left), shorter or with fewer rounds" {
	local first rest p left
	first=$(plan 300)
	rest=$(jq -c '.rounds[1:]' <<<"$first")
	# round 1 took 40 s more than planned: 4 s of start-up per run, not 1
	for left in 200 150 120 100; do
		p=$(jq -n --argjson groups null --argjson shape "$rest" --argjson ceilings 2 --argjson left "$left" \
			--argjson ramp 2 --argjson over 4 --argjson tmax 10 --argjson reps 3 --argjson floor 5 \
			--argjson first 1 -f "$SWEEP_REPO/sweep/jq/budget-plan.jq")
		jq -e --argjson left "$left" --argjson first "$first" '.fits and .planned_s <= $left and .overhead_s == 4
			and ([.rounds[] | .runs * (.runtime + .ramp + 4)] | add) <= $left
			and ([.rounds[] | .runtime * .repeats] | add) < ([$first.rounds[1:][] | .runtime * .repeats] | add)' \
			<<<"$p" >/dev/null || fail "left $left: $p"
	done
}

# check WHAT N COSTS ALLC ALLW NOW [LATER NDONE]: jq/budget-check.jq for a
# 60 s budget started at 0, a 5 s reserve, a round of 1 s after a 1 s
# ramp, the grid's ramp 2 s, 3 repeats planned
check() {
	jq -n -c --arg what "$1" --argjson n "$2" --argjson costs "$3" --argjson allc "$4" --argjson allw "$5" \
		--argjson budget 60 --argjson t0 0 --argjson now "$6" --argjson reserve 5 --argjson k 10 \
		--argjson rt 1 --argjson rramp 1 --argjson ramp 2 --argjson ndone "${8:-1}" --argjson reps 3 \
		--argjson later "${7:-[]}" -f "$SWEEP_REPO/sweep/jq/budget-check.jq"
}

@test "budget check: the final round's next repeat runs only when it fits the time left at the seconds per run the round took" {
	local c
	# 30 s used, 25 left: 2 runs of 10 s fit; of 15 s (a slow machine) not
	c=$(check repeat 2 '[10, 10]' '[10, 10]' '[9.9, 9.9]' 30)
	jq -e '.fits and .need_s == 20 and .left_s == 25 and .why == null' <<<"$c" >/dev/null || fail "$c"
	c=$(check repeat 2 '[15, 15]' '[15, 15]' '[14.9, 14.9]' 30)
	jq -e '(.fits | not) and .need_s == 30 and .per_run_s == 15 and .left_s == 25' <<<"$c" >/dev/null || fail "$c"
	assert_equal "$(jq -r .why <<<"$c")" "the final round ends after 1 of its 3 repeat(s): one more needs about 30 s (2 run(s) at 15 s each, as this round ran), 25 s are left for runs"
	# the sweep's own work of 2 s per run (run 10 s, fio 8 s) reserves
	# 10 x 2 = 20 s for the outputs, not 5: 10 s left
	c=$(check repeat 2 '[10, 10]' '[10, 10]' '[8, 8]' 30)
	jq -e '(.fits | not) and .left_s == 10' <<<"$c" >/dev/null || fail "$c"
}

@test "budget check: a pruning round becomes the final round when the rest of it and the least of the rounds after it no longer fit" {
	local later='[{"final": true, "groups": {"read": 2, "write": 2}, "ceilings": 2}]' c
	# 10 s used, 45 left; runs of 5 s (start-up 3 s): 4 runs still to
	# run (20 s) and the final round at least once, ramp 1 s, 1 s: 6 x 5 =
	# 30 s: 50 s > 45
	c=$(check round 4 '[5, 5]' '[5, 5]' '[4.5, 4.5]' 10 "$later")
	jq -e '(.fits | not) and .need_s == 50 and .left_s == 45' <<<"$c" >/dev/null || fail "$c"
	[[ $(jq -r .why <<<"$c") == "this round becomes the final round (its points once, then the ceilings; no pruning, no repeats): with 4 run(s) of it still to run at 5 s each"* ]] || fail "$c"
	# runs of 3 s (start-up 1 s): 12 + 6 x 3 = 30 s fit
	c=$(check round 4 '[3, 3]' '[3, 3]' '[2.5, 2.5]' 10 "$later")
	jq -e '.fits and .need_s == 30' <<<"$c" >/dev/null || fail "$c"
	# a later pruning round counts its points once (4 per direction)
	c=$(check round 4 '[3, 3]' '[3, 3]' '[2.5, 2.5]' 10 \
		'[{"final": false, "groups": {"read": 4, "write": 4}, "ceilings": 0}, {"final": true, "groups": {"read": 2, "write": 2}, "ceilings": 2}]')
	jq -e '.need_s == 42' <<<"$c" >/dev/null || fail "$c"
}

@test "budget round: a round's record has what it planned and used: the start-up per run measured without the preconditioning, the sweep's own seconds, a dropped repeat" {
	local spec='{"final": true, "runtime": 2, "ramp": 1, "repeats": 3, "groups": {"read": 2}, "ceilings": 1, "runs": 7, "planned_s": 28, "overhead_s": 1}' r
	# 3 runs in 40 s, 10 s of it preconditioning: 10 s per run, 3 s of
	# ramp and runtime: 7 s of start-up; the sweep's own work 0.5 s per run
	r=$(jq -n -c --argjson spec "$spec" --argjson n 1 --argjson wall 40 --argjson pre '[0, 10, 0]' --argjson ran 3 \
		--argjson reps 1 --argjson allc '[10, 10, 10]' --argjson allw '[9.5, 9.5, 9.5]' \
		--argjson pass '{"fits": false, "need_s": 20, "per_run_s": 10, "left_s": 4, "why": "x"}' \
		-f "$SWEEP_REPO/sweep/jq/budget-round.jq")
	jq -e '.overhead_s == 7 and .planned_overhead_s == 1 and .precondition_s == 10 and .wall_s == 40 and .sweep_s == 0.5
		and .repeats == 1 and .repeats_planned == 3 and .runs == 3 and .runs_planned == 7 and .planned_s == 28
		and .dropped == {"fits": false, "need_s": 20, "per_run_s": 10, "left_s": 4}' <<<"$r" >/dev/null || fail "$r"
}

@test "budget_fitted_plan: below the minimum, the plan made at the minimum keeps fits false (planned_s over left_s), with a warning" {
	local p shape
	SWEEP_HOME=$SWEEP_REPO/sweep
	# shellcheck source=../sweep/lib/state.sh
	. "$SWEEP_HOME/lib/state.sh"
	# shellcheck source=../sweep/lib/util.sh
	. "$SWEEP_HOME/lib/util.sh"
	# shellcheck source=../sweep/lib/budget.sh
	. "$SWEEP_HOME/lib/budget.sh"
	BUDGET=120 RAMP=2 RUNTIME=2 REPEAT=1 STEADY=off
	# a re-plan with 34 s left of a final round of 6 runs at 3.68 s of
	# start-up each: 6 x (1 + 1 + 3.68) = 34.08 s even at its minimum (a
	# loaded machine's budget run, issue 25)
	budget_left() { echo 34; }
	shape='[{"final": true, "groups": {"read": 2, "write": 2}, "ceilings": 2}]'
	p=$(budget_fitted_plan 1 3.68 "$shape" 2>"$BATS_TEST_TMPDIR/err")
	jq -e '.fits == false and .left_s == 34 and .planned_s > .left_s and (.rounds | length) == 1' <<<"$p" >/dev/null || fail "$p"
	grep -q "34 s left for the runs, below the" "$BATS_TEST_TMPDIR/err" || fail "no warning: $(cat "$BATS_TEST_TMPDIR/err")"
	# with the time it needs, the plan fits
	budget_left() { echo 60; }
	p=$(budget_fitted_plan 1 3.68 "$shape" 2>/dev/null)
	jq -e '.fits and .left_s == 60 and .planned_s <= .left_s' <<<"$p" >/dev/null || fail "$p"
}
