#!/usr/bin/env bats
# tests/sweep-budget-bench.bats - the benchmark script
# tests/bench/tswap-bench-sweep (make bench-sweep, docs/performance.md) at
# its smallest: it checks the script, never a speed; its usage errors. A
# file of its own (from tests/sweep-budget.bats, whose small grid it
# uses) so that its end-to-end run, the suite's longest test, runs beside
# the budget tests.
#
# No test asserts wall time (CI shares its machine). Needs the engine: the
# end-to-end test skips, saying why, without it.
# shellcheck disable=SC2154 # bats sets $stderr (run --separate-stderr)

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
	bats_load_library bats-file
fi

load budget

@test "bench-sweep: the script end to end at its smallest (one row, a tiny grid, one agreement pair, one A/A control): table and results.json; bad usage exit 2" {
	need_engine
	local out=$SCRATCH/bench
	run --separate-stderr "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --agree x
	assert_equal "$status" 2
	[[ $stderr == "tswap-bench-sweep: --agree: "* ]] || fail "$stderr"
	run --separate-stderr "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --control 11
	assert_equal "$status" 2
	[[ $stderr == "tswap-bench-sweep: --control: "* ]] || fail "$stderr"
	local b
	for b in 0 120,x 120,0 ''; do
		run --separate-stderr "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --budget-deepspeed "$b"
		assert_equal "$status" 2
		[[ $stderr == "tswap-bench-sweep: --budget-deepspeed, --budget-full: not positive whole numbers"* ]] || fail "$b: $stderr"
	done
	# the smallest grid that still has a pick to agree on: 2 points per
	# direction (1m blocks, qd 4 and 16) and the 2 ceilings at 1 s; each
	# of the row's 4 sweeps runs 6 points, not 10
	sed -i 's/^block .*/block        1m/; s/^runtime .*/runtime      1/' "$SCRATCH/small.grid"
	run --separate-stderr timeout -k 10 400 "$SWEEP_REPO/tests/bench/tswap-bench-sweep" --rows full --agree 1 \
		--grid-full "$SCRATCH/small.grid" --budget-full 45 --target "$SCRATCH/b.swap" --out "$out"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	assert_output --partial '| full | exhaustive |'
	assert_output --partial '| full | budget 45 s #2 |'
	# shellcheck disable=SC2016 # backticks are markdown
	assert_output --regexp '\| full \| exhaustive again #1 \(A/A\) \| [0-9.]+ \| `read-[^`]+` \| (same|tied|other) \|'
	assert_output --regexp 'A/A control \(the exhaustive run again\): lowest fraction of the first.s best [0-9.]+, agrees with it in [01] of 1'
	assert_output --regexp 'full, budget 45 s: consecutive budget runs agree .* in [01] of 1 pair'
	assert_output --regexp 'The exhaustive pick or tied with it in both directions: [0-2] of 2 run'
	jq -e '.rows[0] | .pairs == 1 and (.budget | length) == 2 and .exhaustive.wall_s > 0
		and ([.budget[].picks[] | .match | IN("same", "tied", "other", "none")] | all)
		and ([.budget[].picks[] | has("vs_pick")] | all) and (.match_count | IN(0, 1, 2))
		and (.control | length) == 1 and .control[0].wall_s > 0 and (.control[0].agree | type) == "boolean"
		and (.exhaustive.picks as $e | [.control[0].picks | to_entries[]
			| if $e[.key].point == null then .value.fraction == null else .value.fraction > 0 end] | all)' \
		"$out/results.json" >/dev/null || fail "$(cat "$out/results.json")"
	assert_file_exist "$out/full-exhaustive/report.md"
	assert_file_exist "$out/full-budget45-2/report.md"
	assert_file_exist "$out/full-control-1/report.md"
}

@test "bench-sweep: --profile and --load: --help names them; a bad profile, load or combination is one line, exit 2, nothing made" {
	local bench=$SWEEP_REPO/tests/bench/tswap-bench-sweep out=$SCRATCH/never args
	run -0 "$bench" --help
	assert_output --partial '--profile P[,P...]'
	assert_output --partial '--load N'
	assert_output --partial '--load-runs K'
	for args in "--profile nosuch" "--profile ../drive/profiles/iops-bound" "--profile iops-bound,"x \
		"--profile iops-bound --target $SCRATCH/t.swap" "--load 17" "--load x" "--load-runs 0" "--load-runs 21"; do
		# shellcheck disable=SC2086 # options and their values
		run -2 --separate-stderr "$bench" $args --out "$out"
		# shellcheck disable=SC2154 # set by bats' run --separate-stderr
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "$args: $stderr"
		case $args in
		*--target*) assert_regex "$stderr" '^tswap-bench-sweep: --profile, --target: one or the other' ;;
		--profile*) assert_regex "$stderr" "^tswap-bench-sweep: --profile: unknown profile '[^']*' \(asymmetric,bandwidth-bound,iops-bound,write-cliff\)" ;;
		--load-runs*) assert_regex "$stderr" '^tswap-bench-sweep: --load-runs: not a whole number from 1 to 20' ;;
		*) assert_regex "$stderr" '^tswap-bench-sweep: --load: not a whole number from 0 to 16' ;;
		esac
		[ -z "$output" ] || fail "$args printed on stdout: $output"
		assert_not_exist "$out"
	done
}
