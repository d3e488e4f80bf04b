#!/usr/bin/env bats
# tests/drive-sweep.bats - sweep/tswap-sweep on the reference drives
# (tests/drive/): on each profile's grid (tests/drive/profiles/*.grid) the
# pick is in the best set the formula computes (tests/drive/expect.jq), a
# point clearly below the best is never called tied with it, and the
# measured medians match the formula; the write cliff is flagged and judged
# at its post-cliff rate, --precondition moves the write result there, and
# a --budget run picks from the best set. Root only; skipped with the
# reason elsewhere. About 2-3 s per point run.

# '$...' in single quotes are jq's.
# shellcheck disable=SC2016
# The repository's shell style is [ ] and $var, not [[ ]] and ${var}:
# shellcheck disable=SC2250,SC2292

bats_require_minimum_version 1.5.0

load helpers
load drive

SWEEP=$REPO/sweep/tswap-sweep

setup() {
	common_setup
	RUN=$BATS_TEST_TMPDIR/run
}

teardown() {
	drive_teardown
	common_teardown
}

# sweep_on ARGS...: tswap-sweep on the drive ($DEV), in its cgroup, into
# $RUN (removed first), quiet; fails unless it exits 0. Then EXPECT: the
# formula's view of the run (expect.jq on aggregate.json, $PHASE: pre or
# post the cliff, default pre).
sweep_on() {
	rm -rf "$RUN"
	run --separate-stderr "$DRIVE" run "$STATE" timeout -k 10 600 "$SWEEP" --target "$DEV" --destructive \
		--out "$RUN" -q "$@"
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	[ "$status" -eq 0 ] || fail "tswap-sweep $* exited $status: $stderr"
	EXPECT=$(jq -c -L "$REPO/tests/drive" --slurpfile state "$STATE" --arg phase "${PHASE:-pre}" \
		-f "$REPO/tests/drive/expect.jq" "$RUN/aggregate.json")
	# measured against the formula, for the log
	jq -r '.points[] | select(.gbs != null) | "\(.point): median \(.gbs * 1000 | round / 1000) GB/s, formula \(.expected_gbs), ratio \(.gbs / .expected_gbs * 1000 | round / 1000)"' <<<"$EXPECT" >&2
	jq -r '.best | to_entries[] | "best \(.key) set: \(.value.set | join(" ")); below: \(.value.below | join(" "))"' <<<"$EXPECT" >&2
	jq -r '.best.read, .best.write | select(. != null) | "pick \(.rw): \(.point) (\(.confidence)), tied: \(.tied | join(" "))"' "$RUN/aggregate.json" >&2
}

# assert_pick RW: the run's best RW point is in the formula's best set and
# no point the formula puts clearly below it (> 10% under) is tied with
# it; the grid leaves no point in between and every expected GB/s is exact.
assert_pick() {
	local rw=$1
	run -0 jq -e --arg rw "$rw" '.best[$rw].between == [] and all(.points[]; .exact)' <<<"$EXPECT"
	run -0 jq -n -e --arg rw "$rw" --argjson e "$EXPECT" --slurpfile a "$RUN/aggregate.json" \
		'$a[0].best[$rw] as $b | $b != null and ($e.best[$rw].set | index($b.point) != null)'
	run -0 jq -n -e --arg rw "$rw" --argjson e "$EXPECT" --slurpfile a "$RUN/aggregate.json" \
		'[$a[0].best[$rw].tied[] | select(. as $p | $e.best[$rw].below | index($p))] == []'
}

# assert_block RW BYTES [tie]: the RW pick is the point of block BYTES
# (and a tie, with "tie"). A busy machine can make that point's repeats
# noisy: when this run flagged it "cv" (its own account of the noise) it
# cannot be picked, and the run must say why: the pick is then another
# point of the best set (assert_pick) and the flagged one is untrusted.
assert_block() {
	local rw=$1 block=$2
	if jq -e --arg rw "$rw" --argjson b "$block" \
		'any(.points[]; .kind == "tswap" and .rw == $rw and .block == $b and (.flags | index("cv")))' \
		"$RUN/aggregate.json" >/dev/null; then
		run -0 jq -e --arg rw "$rw" --argjson b "$block" \
			'.best[$rw].block != $b and all(.points[]; .rw != $rw or .block != $b or .trusted == false)' \
			"$RUN/aggregate.json"
		echo "$rw block $block flagged cv by this run (noisy repeats): not picked, as it must not be" >&2
		return 0
	fi
	run -0 jq -e --arg rw "$rw" --argjson b "$block" --arg tie "${3:-}" \
		'.best[$rw].block == $b and ($tie == "" or .best[$rw].tie == true)' "$RUN/aggregate.json"
}

# assert_medians: every trusted point's median GB/s is within the
# tolerance of the formula's (drive.bash within).
assert_medians() {
	local point gbs exp
	while read -r point gbs exp; do
		within "$gbs" "$exp" || fail "$point: median $gbs GB/s, formula $exp GB/s: outside $DRIVE_TOL_LO..$DRIVE_TOL_HI"
	done < <(jq -r --slurpfile a "$RUN/aggregate.json" \
		'.points[] | . as $p | select($a[0].points[] | select(.point == $p.point) | .trusted)
		 | "\(.point) \(.gbs) \(.expected_gbs)"' <<<"$EXPECT")
}

@test "iops-bound: small blocks lose; the pick is in the best set, no slower point tied with it; medians match the formula" {
	requires_drive
	drive_up iops-bound
	sweep_on --grid "$PROFILES/iops-bound.grid" --no-ceiling
	assert_pick read
	assert_medians
	run -0 jq -e '.best.read.below | length == 2' <<<"$EXPECT"
	# best-aio.json carries the pick
	run -0 jq -n -e --slurpfile a "$RUN/aggregate.json" --slurpfile b "$RUN/best-aio.json" \
		'$b[0].aio.block_size == $a[0].best.read.block'
}

@test "bandwidth-bound: a plateau of ties; the pick is its cheapest member, the slower point is not tied" {
	requires_drive
	drive_up bandwidth-bound
	sweep_on --grid "$PROFILES/bandwidth-bound.grid" --no-ceiling
	assert_pick read
	assert_medians
	run -0 jq -e '.best.read.set | length == 3' <<<"$EXPECT"
	assert_block read 262144 tie
}

@test "asymmetric: the read and write picks are each in their own best set, and differ" {
	requires_drive
	drive_up asymmetric
	sweep_on --grid "$PROFILES/asymmetric.grid" --no-ceiling --no-precondition
	assert_pick read
	assert_pick write
	assert_medians
	assert_block read 131072
	assert_block write 1048576
}

@test "write-cliff: the cliff drops during the run; with steady state the point is judged at its post-cliff rate" {
	requires_drive
	drive_up write-cliff
	# 600 MB at 300 MB/s: the cliff comes 1 s into the measured run; fio
	# finds the 100 MB/s steady after 5 more samples and ends the job
	"$DRIVE" cliff "$STATE"
	PHASE=post sweep_on --grid "$PROFILES/write-cliff.grid" --no-ceiling --no-precondition
	local point
	point=$(jq -r '.points[0].point' "$RUN/aggregate.json")
	run -0 jq -e '.points[0] | .drops == true and .steady == true and .trusted' "$RUN/aggregate.json"
	run -0 grep -F -- "- $point: drops during the run" "$RUN/report.md"
	assert_medians
}

@test "write-cliff: --precondition moves the write result to the post-cliff rate" {
	requires_drive
	drive_up write-cliff
	local post
	post=$(expect_point '{"rw": "write", "tensor": 2097152, "block": 1048576, "threads": 1}' post | jq .expected_gbs)
	# without: the cliff comes 1 s into a 3 s measured run
	"$DRIVE" cliff "$STATE"
	sweep_on --grid "$PROFILES/write-cliff.grid" --no-ceiling --no-precondition --fixed-runtime --runtime 3
	run -0 jq -e --argjson post "$post" '.points[0].gbs > 1.3 * $post' "$RUN/aggregate.json"
	# with: the fill (2 x 512 MiB) uses up the 600 MB before the point
	"$DRIVE" cliff "$STATE" --reset
	"$DRIVE" cliff "$STATE"
	PHASE=post sweep_on --grid "$PROFILES/write-cliff.grid" --no-ceiling --precondition --fixed-runtime --runtime 3
	run -0 jq -e '.targets[0].bytes >= 1073741824' "$RUN/precondition.json"
	run -0 jq -e '.phase == "post"' "$STATE"
	assert_medians
	run -0 jq -e '.points[0].drops != true' "$RUN/aggregate.json"
}

@test "iops-bound --budget: the pick is in the best set, no slower point tied with it" {
	requires_drive
	drive_up iops-bound
	sweep_on --grid "$PROFILES/iops-bound.grid" --budget 50
	run -0 jq -e '.budget != null' "$RUN/aggregate.json"
	# On a loaded machine runs take longer than planned, and a run that
	# would end past the budget is not started (docs/sweep.md, Budget):
	# then the read pick, if any, is the best of the points that ran, and
	# its verdict says so; the report says where the run stopped.
	if jq -e 'any(.points[]; .status == "not run")' "$RUN/aggregate.json" >/dev/null; then
		echo "# the budget ran out: $(jq -c '[.budget.rounds[] | select(.stopped) | {round, why: .stopped.why}]' "$RUN/aggregate.json")" >&3
		run -0 jq -e '.best.read == null or (.best.read.verdict | test("the budget ran out before [0-9]+ of the [0-9]+ points ran"))' "$RUN/aggregate.json"
		run -0 grep -q '^Stopped in round [0-9]*: ' "$RUN/report.md"
	else
		assert_pick read
	fi
}
