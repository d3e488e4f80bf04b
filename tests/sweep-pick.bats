#!/usr/bin/env bats
# tests/sweep-pick.bats - tswap-sweep's exit code of a run without a
# trustworthy pick, and its --ds-version refusals. The pick itself and its
# confidence (flags, CV limits, ties, cost order, best-aio.json, report.md's
# lines, the summary and the verdict) are tests/py/test_pick_grid.py.

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert

SCRIPT_DIR=$(cd "$BATS_TEST_DIRNAME/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR

@test "pick: no trustworthy point is exit code 4, as --help says" {
	# the run without a trustworthy point: tests/py/test_pick_grid.py; its
	# exit 4 from real sweeps: sweep-steady.bats, sweep-budget.bats
	# shellcheck disable=SC2016 # "$1" is bash -c's
	run -0 bash -c '"$1" --help' _ "$SWEEP_HOME/tswap-sweep"
	assert_output --partial '4 no trustworthy'
}

@test "--ds-version: a string that is not a release, or a release without an aio section, is one line and exit 2" {
	local v
	for v in '' 0 v0.16.4 0.16.4.1 0.16.x 0.16.04 '0.16 ' $'0.15.0\n0.16' 0.3 0.3.14; do
		run -2 --separate-stderr "$SWEEP_HOME/tswap-sweep" --ds-version "$v" --dry-run
		# shellcheck disable=SC2154 # stderr_lines: set by bats' run --separate-stderr
		assert_equal "${#stderr_lines[@]}" 1
		assert_output ''
		# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
		[[ $stderr == *--ds-version* ]] || fail "no option named for '$v': $stderr"
	done
	assert_equal "$stderr" "tswap-sweep: --ds-version: DeepSpeed 0.3.14 has no aio section (it appears in 0.3.15) (see --help)"
}

@test "--ds-version: a release newer than the newest tswap knows (0.19.5) is refused in one line, exit 2" {
	local v
	for v in 0.19.6 0.20 1.0.0; do
		run -2 --separate-stderr "$SWEEP_HOME/tswap-sweep" --ds-version "$v" --dry-run
		assert_output ''
		assert_equal "$stderr" "tswap-sweep: --ds-version: DeepSpeed $v is newer than 0.19.5, the newest release tswap knows (its aio keys and rules are unchecked) (see --help)"
	done
	# the newest known release itself is taken
	run -0 --separate-stderr "$SWEEP_HOME/tswap-sweep" --ds-version 0.19.5 --dry-run --grid quick --target "$BATS_TEST_TMPDIR/t.swap"
}
