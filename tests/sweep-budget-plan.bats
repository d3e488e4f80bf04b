#!/usr/bin/env bats
# tests/sweep-budget-plan.bats - the --budget planner on fixtures: the
# report's section and the re-plan below the minimum. The rules
# themselves (the rounds planned, what a round keeps, the checks while a
# round runs, a round's record, the re-plans and the progress lines) are
# pytest units: tests/py/test_budget.py, tests/py/test_budget_run.py.
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

# report_lines FUNC AGGREGATE: report.md's lines of the section
# tswap.report.head/sections FUNC (report_pick, report_budget) of
# AGGREGATE ("-": stdin), as report.md has them.
report_lines() {
	python3 -I -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.cli import read_json
from tswap.report import head, sections
f = getattr(head, sys.argv[2], None) or getattr(sections, sys.argv[2])
print("\n".join(f(read_json(sys.argv[3], "aggregate"))))' "$SWEEP_REPO/sweep" "$@"
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
	run -0 report_lines report_budget - <<<"$agg"
	# shellcheck disable=SC2016 # backticks are markdown
	assert_output --partial '| 1 | 1 | 1 | 1 | read 3 | 3 | 9 | 8 | 0.5 | `e` 2.5 (tied, costlier), `d` 1.9, `f` - (failed) |'
	assert_output --partial '| 2 (final) | 5 | 2 | 3 | read 2 + 1 ceiling | 7 | 56 | 52 | 0.5 | - |'
	assert_output --partial 'the fastest, then the points tied with it within that run'"'"'s noise'
	assert_output --partial 'the device ceilings at the same runtime'
}

@test "budget report: a final round shorter than the steady-state window gives a caution line under the pick, with the budget for the window" {
	local agg='{"best": {}, "trust": {"trusted": 0, "flagged": 0, "libaio_with_result": 0},
		"budget": {"seconds": 120, "steady_window_s": 9, "steady_budget_s": 247, "rounds": [{"runtime": 1}, {"runtime": 3}]}}'
	run -0 report_lines report_pick - <<<"$agg"
	assert_line "- caution: the budget's final round ran 3 s per run, fixed: shorter than fio's steady-state window (9 s), so the pick ranks each point's first seconds (such as a write cache's burst) and no point could be flagged not steady; --budget 247 gives the final round the window"
	# at the window, without one (steady state off), or without a budget: none
	local a
	for a in "$(jq -c '.budget.rounds[-1].runtime = 9' <<<"$agg")" "$(jq -c '.budget.steady_window_s = null' <<<"$agg")" \
		"$(jq -c 'del(.budget)' <<<"$agg")"; do
		run -0 report_lines report_pick - <<<"$a"
		refute_output --partial 'caution'
	done
}

# fitted LEFT: tswap.stats.budget_run.fitted's plan (JSON) on stdout and its
# messages on stderr, for a re-plan after round 1 of a final round of 4
# points and 2 ceilings at 3.68 s of start-up a run (ramp 2 s, runtime 2 s)
fitted() {
	python3 -I -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap import jqjson
from tswap.plan import budget_start as bs
from tswap.stats import budget_run as br
pts = [{"point": "c%d" % i, "kind": "ceiling", "rw": "read", "ckey": "read"} for i in range(2)]
pts += [{"point": "%s%d" % (d, i), "kind": "tswap", "rw": d, "ckey": d, "ranks": 1}
        for d in ("read", "write") for i in range(4)]
shape = [{"final": True, "groups": {"read": 2, "write": 2}, "ceilings": 2}]
p, msgs = br.fitted(lambda left: bs.plan_at(pts, left, False, 2, 2, 1, 3.68, 1, shape),
                    float(sys.argv[2]), "120", 3, 6, 60)
for kind, m in msgs:
    print(kind, m, file=sys.stderr)
print(jqjson.dumps(p, compact=True))' "$SWEEP_REPO/sweep" "$1"
}

@test "budget_fitted_plan: below the minimum, the plan made at the minimum keeps fits false (planned_s over left_s), with a warning" {
	local p
	# a re-plan with 34 s left of a final round of 6 runs at 3.68 s of
	# start-up each: 6 x (1 + 1 + 3.68) = 34.08 s even at its minimum (a
	# loaded machine's budget run, issue 25)
	p=$(fitted 34 2>"$BATS_TEST_TMPDIR/err")
	jq -e '.fits == false and .left_s == 34 and .planned_s > .left_s and (.rounds | length) == 1' <<<"$p" >/dev/null || fail "$p"
	grep -q "34 s left for the runs, below the" "$BATS_TEST_TMPDIR/err" || fail "no warning: $(cat "$BATS_TEST_TMPDIR/err")"
	# with the time it needs, the plan fits
	p=$(fitted 60 2>/dev/null)
	jq -e '.fits and .left_s == 60 and .planned_s <= .left_s' <<<"$p" >/dev/null || fail "$p"
}
