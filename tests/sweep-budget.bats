#!/usr/bin/env bats
# tests/sweep-budget.bats - tswap-sweep --budget (successive halving,
# docs/sweep.md "Budget") with real fio on a small file, and the
# benchmark script tests/bench/tswap-bench-sweep at its smallest (it checks
# the script, never a speed).
#
# Wall time: a budget run must end within its budget plus BUDGET_SLACK
# seconds. The sweep plans from the time left and re-plans after each
# round with the measured fio start-up cost, so on an idle machine it ends
# a few seconds early; the slack covers a loaded shared machine (runs of
# the final round slower than the round before them) and bats' own start.
# Needs the engine: tests that run fio skip, saying why, without it.
# shellcheck disable=SC2030,SC2031

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
	bats_load_library bats-file
fi

SWEEP_REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SWEEP=$SWEEP_REPO/sweep/tswap-sweep
SWEEP_ENGINE=${TSWAP_ENGINE:-$SWEEP_REPO/build/tswap.so}
BUDGET_SLACK=20

setup() {
	if declare -F common_setup >/dev/null; then
		common_setup
	else
		SCRATCH=$BATS_TEST_TMPDIR/scratch
		mkdir -p "$SCRATCH"
	fi
	export TSWAP_ENGINE=$SWEEP_ENGINE
	# 4 points per direction, 4 MiB tensors on a 32 MiB file
	cat >"$SCRATCH/small.grid" <<-'GRID'
		description  budget test
		rw           read write
		backend      libaio
		tensor       4m
		iodepth      1
		block        512k 1m
		qd           4 16
		window       overlap
		submit       block
		threads      1
		size         32m
		runtime      2
		ramp         1
		repeat       1
	GRID
}

teardown() {
	if declare -F common_teardown >/dev/null; then
		common_teardown
	fi
}

need_engine() {
	[ -f "$SWEEP_ENGINE" ] || skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
}

sweep() {
	run --separate-stderr timeout -k 10 300 "$SWEEP" "$@"
}

show_sweep() {
	printf 'tswap-sweep exit %s\n--- stdout\n%s\n--- stderr\n%s\n---\n' \
		"$status" "$output" "${stderr:-}" >&2
}

@test "budget: a budget run on a small file ends within budget + slack, reports its rounds, never picks a pruned point" {
	need_engine
	local rd=$SCRATCH/run t0 t1 budget=60
	t0=$(date +%s)
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$rd" --budget "$budget"
	t1=$(date +%s)
	# 4: every point flagged (CV on a loaded machine) is a valid outcome
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || {
		show_sweep
		fail "exit $status"
	}
	((t1 - t0 <= budget + BUDGET_SLACK)) || fail "took $((t1 - t0)) s for --budget $budget (slack $BUDGET_SLACK s)"
	# the progress line counts against the budget
	[[ $stderr == *"(budget $budget s: "*" s left)"* ]] || fail "no budget on the progress lines: $stderr"
	assert_output --partial "budget:     $budget s, used "
	# at least two rounds, the first prunes, the last is final with repeats
	jq -e '.budget.rounds | length >= 2 and .[0].final == false and (.[0].pruned | length) > 0
		and .[-1].final and .[-1].repeats >= 1' "$rd/aggregate.json" >/dev/null ||
		fail "rounds: $(jq -c '.budget.rounds' "$rd/aggregate.json")"
	jq -e '.budget.seconds == 60' "$rd/sweep.json" >/dev/null || fail "sweep.json has no budget"
	grep -q '^## Budget: successive halving' "$rd/report.md" || fail "report.md has no Budget section"
	grep -qE '^\| 1 \| 1 \| 1 \| 1 \| read 4, write 4 \+ 2 ceiling \|' "$rd/report.md" ||
		fail "round 1 row: $(grep -A4 '^## Budget' "$rd/report.md")"
	grep -qE '^\| [0-9]+ \(final\) \|' "$rd/report.md" || fail "no final round row"
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
	# the final round's points ran its repeats in points/
	jq -e '.budget.rounds[-1] as $f | [$f.kept[] as $k | .points[] | select(.point == $k) | .runs == $f.repeats] | all' \
		"$rd/aggregate.json" >/dev/null || fail "the final round's points did not run its repeats"
	# a budget run is not resumable
	sweep --resume "$rd"
	assert_equal "$status" 2
	[[ $stderr == *"is a --budget run"* ]] || fail "resume: $stderr"
}

@test "budget: a budget too small for round 1 is refused in one line with the minimum, exit 2, nothing created" {
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --out "$SCRATCH/no" --budget 10
	assert_equal "$status" 2
	assert_equal "$(grep -c . <<<"$stderr")" 1
	[[ $stderr == *"--budget 10: too small to run round 1 once"*"at least "*" s"* ]] || fail "$stderr"
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
	assert_output --partial 'round 1: read 4, write 4 + 2 ceiling(s)'
	sweep --grid "$SCRATCH/small.grid" --target "$SCRATCH/t.swap" --dry-run --exhaustive
	assert_equal "$status" 0
	[[ $stderr != *"note: grid"* ]] || fail "$stderr"
	refute_output --partial 'successive halving'
}

@test "bench-sweep: the script end to end at its smallest (one row, a tiny grid, one agreement pair): table and results.json; bad usage exit 2" {
	need_engine
	local out=$SCRATCH/bench
	run --separate-stderr "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --agree x
	assert_equal "$status" 2
	[[ $stderr == "tswap-bench-sweep: --agree: "* ]] || fail "$stderr"
	run --separate-stderr timeout -k 10 400 "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --rows full --agree 1 \
		--grid-full "$SCRATCH/small.grid" --budget-full 45 --target "$SCRATCH/b.swap" --out "$out"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	assert_output --partial '| full | exhaustive |'
	assert_output --partial '| full | budget 45 s #2 |'
	assert_output --regexp 'full: consecutive budget runs agree .* in [01] of 1 pair'
	jq -e '.rows[0] | .pairs == 1 and (.budget | length) == 2 and .exhaustive.wall_s > 0
		and ([.budget[].picks[] | .match | IN("same", "tied", "other", "none")] | all)' \
		"$out/results.json" >/dev/null || fail "$(cat "$out/results.json")"
	assert_file_exist "$out/full-exhaustive/report.md"
	assert_file_exist "$out/full-budget-2/report.md"
}
