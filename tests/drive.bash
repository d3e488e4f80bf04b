# shellcheck shell=bash
# Variables set here are used by the .bats files; status/output/stderr are
# set by bats' run.
# shellcheck disable=SC2034,SC2154
#
# tests/drive.bash - reference drives (tests/drive/) for tests/drive*.bats,
# loaded after helpers:
#
#   requires_drive       skip, saying why, unless refdrive can make drives
#                        here (root, loop devices, a cgroup block throttle)
#   drive_up PROFILE     the drive of tests/drive/profiles/PROFILE.json:
#                        sets $STATE (its state.json) and $DEV; removed by
#                        drive_teardown
#   drive_teardown       refdrive down every drive the test made
#   expect_point JSON [PHASE]  the point with expected_gbs, expected_range,
#                        exact (tests/drive/expect.jq on $STATE)
#   within MEASURED EXPECTED  status 0 when MEASURED / EXPECTED is within
#                        DRIVE_TOL_LO..DRIVE_TOL_HI
#
# The repository's shell style is [ ] and $var, not [[ ]] and ${var}:
# shellcheck disable=SC2250,SC2292

DRIVE=$REPO/tests/drive/refdrive
PROFILES=$REPO/tests/drive/profiles
# measured GB/s over the formula's, 1 s ramp + 2 s runs: the throttle
# keeps within 0.5% of its caps; fio's figure runs 0-4% over them (I/O in
# flight when ramp_time ends is counted; tests/drive/README.md)
DRIVE_TOL_LO=0.97
DRIVE_TOL_HI=1.05

requires_drive() {
	local why
	why=$("$DRIVE" check 2>&1) && return 0
	skip "reference drives: ${why#refdrive: }"
}

drive_up() {
	local json
	json=$("$DRIVE" up "$PROFILES/$1.json") || fail "refdrive up $1 failed"
	STATE=$(jq -r .state <<<"$json")
	DEV=$(jq -r .dev <<<"$json")
	printf '%s\n' "$STATE" >>"$BATS_TEST_TMPDIR/drives"
}

drive_teardown() {
	local s
	[ -f "$BATS_TEST_TMPDIR/drives" ] || return 0
	while read -r s; do
		"$DRIVE" down "$s" || true
	done <"$BATS_TEST_TMPDIR/drives"
	rm -f "$BATS_TEST_TMPDIR/drives"
}

expect_point() {
	jq -c -L "$REPO/tests/drive" --slurpfile state "$STATE" --arg phase "${2:-pre}" \
		-f "$REPO/tests/drive/expect.jq" <<<"$1"
}

within() {
	jq -en --argjson m "$1" --argjson e "$2" --argjson lo "$DRIVE_TOL_LO" --argjson hi "$DRIVE_TOL_HI" \
		'$m / $e >= $lo and $m / $e <= $hi' >/dev/null
}
