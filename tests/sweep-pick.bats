#!/usr/bin/env bats
# tests/sweep-pick.bats - the pick and its confidence (tswap.stats through
# aggregate_json, best-aio.json and report.md's lines: tswap.report) on fixture
# result.json arrays, with the modules of sweep/lib/ sourced directly (no
# target; the plan from tests/plan.bash): flagged points are never picked,
# ties within noise are declared and resolved by the cost order, and a run
# without a trustworthy point has no aio block and exits 4. About a second.

# '$...' in single quotes are jq's.
# shellcheck disable=SC2016,SC2034 # RUN, PLAN_TEXT: globals the modules read

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert

SCRIPT_DIR=$(cd "$BATS_TEST_DIRNAME/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR
# shellcheck source=../sweep/lib/state.sh
. "$SWEEP_HOME/lib/state.sh"
# shellcheck source=../sweep/lib/util.sh
. "$SWEEP_HOME/lib/util.sh"
# shellcheck source=../sweep/lib/results.sh
. "$SWEEP_HOME/lib/results.sh"
# grid_from, expand_grid, add_ceilings, aggregate_json, run_verdict,
# write_best_aio
# shellcheck source=plan.bash
. "$BATS_TEST_DIRNAME/plan.bash"

setup() {
	TMP=$BATS_TEST_TMPDIR
	RUN=$TMP
}

# report_lines FUNC AGGREGATE [CVFLAG]: report.md's lines of the section
# tswap.report.head/sections FUNC (report_pick, report_warnings,
# report_budget, ...) of AGGREGATE ("-": stdin), as report.md has them.
report_lines() {
	python3 -I -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.cli import read_json
from tswap.report import head, sections
f = getattr(head, sys.argv[2], None) or getattr(sections, sys.argv[2])
print("\n".join(f(read_json(sys.argv[3], "aggregate"), *map(float, sys.argv[4:]))))' "$SWEEP_HOME" "$@"
}

# runs POINT GBS...: one ok result.json per GB/s (repeats 1..n) of POINT;
# a GB/s of "x" is a failed run; POINT may carry steady=false as STEADY.
runs() {
	local point=$1 rep=0 g
	shift
	for g in "$@"; do
		rep=$((rep + 1))
		jq -n --arg point "$point" --argjson repeat "$rep" --arg g "$g" --arg steady "${STEADY:-null}" \
			--slurpfile plan <(plan_json) '
			($plan[0][] | select(.point == $point)) + {runkey: "\($point).r\($repeat)", repeat: $repeat,
			 status: (if $g == "x" then "error" else "ok" end), error: (if $g == "x" then "boom" else "" end),
			 gbs: (if $g == "x" then null else ($g | tonumber) end), steady: ($steady | fromjson),
			 ops_per_s: 1, clat_p50_us: 10, clat_p99_us: 20, clat_p999_us: 30, submit_per_gb: 2}'
	done
}

# agg: results.json from stdin, aggregate.json and best-aio.json in TMP.
agg() {
	jq -s . >"$TMP/results.json"
	aggregate_json "$TMP/results.json" >"$TMP/aggregate.json"
	py best-aio "$TMP/aggregate.json" >"$TMP/best-aio.json"
}

# with_ops N: agg of the result.json objects on stdin, each a run that
# completed N tensor ops of 16 MiB (one handle)
with_ops() {
	jq -c --argjson n "$1" '. + {tensor: 16777216, handles: [{bytes: ($n * 16777216)}]}' | agg
}

P() { # P RW QD [THREADS [SUBMIT [BLOCK]]]: a point name of the test grids
	printf '%s-libaio-t16m-b%s-q%s-%s-overlap-p%s-d1' "$1" "${5:-1m}" "$2" "${4:-block}" "${3:-1}"
}

@test "pick: the fastest point above the ceiling, with a CV flag, failed or not steady is skipped" {
	grid_from 'rw read' 'tensor 16m' 'qd 2 4 8 16 32'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	{
		runs ceiling-read-fio-libaio-bs1m-qd64 2.0 2.0 2.0
		runs "$(P read 32)" 2.5 2.5 2.5 # 125% of the ceiling: a cache
		runs "$(P read 16)" 1.9 1.5 2.1 # CV 17%
		runs "$(P read 8)" 1.95 x 1.95 # partial
		STEADY=false runs "$(P read 4)" 1.9 1.9 1.9
		runs "$(P read 2)" 1.50 1.52 1.51
	} | agg
	run -0 jq -r '.best.read.point, .best.aio_source.point' "$TMP/aggregate.json"
	assert_output "$(printf '%s\n' "$(P read 2)" "$(P read 2)")"
	run -0 jq -c '[.points[] | .flags]' "$TMP/aggregate.json"
	assert_output '[[],["not steady"],["partial"],["cv"],["above ceiling"]]'
	run -0 jq -r '.best.read | .confidence, .verdict' "$TMP/aggregate.json"
	assert_output "$(printf 'only\n%s is the only trustworthy point: nothing to compare it with (4 other read point(s) flagged: Warnings)' "$(P read 2)")"
	run -0 jq -c '.aio.queue_depth' "$TMP/best-aio.json"
	assert_output 2
	# the report's warnings name each flagged point
	run -0 report_lines report_warnings "$TMP/aggregate.json" "$CV_FLAG"
	assert_output --partial "$(P read 4): not steady"
	assert_output --partial "$(P read 32)**: 2.5 GB/s is more than 10% above"
	run -0 run_verdict
	assert_output --regexp '^[0-9]+ false$'
}

@test "pick: a point's CV limit is 5% or twice the median CV of the run's other points, at most 20%: alike noisy points tie (the cheapest whose interval reaches within 3% of the fastest median is picked), one far noisier is flagged" {
	grid_from 'rw read' 'tensor 16m' 'qd 2 4 8 16 32'
	PLAN_TEXT=$(expand_grid)
	{
		# every point varies by about 10% (a busy host): CVs 8-9%
		runs "$(P read 2)" 1.60 1.90 1.75
		runs "$(P read 4)" 1.70 2.00 1.80
		runs "$(P read 8)" 1.55 1.85 1.70
		runs "$(P read 16)" 1.65 1.95 1.85
		# far noisier than the rest: CV 40%
		runs "$(P read 32)" 1.00 2.40 1.90
	} | agg
	run -0 jq -c '[.points[] | select(.flags != []) | .point]' "$TMP/aggregate.json"
	assert_output "[\"$(P read 32)\"]"
	# q32's limit: twice the median of the other four CVs, not 5%
	run -0 jq -r --arg p "$(P read 32)" '.points[] | select(.point == $p) | .cv_limit * 1000 | round' "$TMP/aggregate.json"
	assert_output 170
	# the alike points tie; the pick is the cheapest of those whose
	# interval reaches within 3% of the fastest median (q16, 1.85: 1.7945):
	# q2, whose fastest repeat is 1.90 though its median is 1.75 (a window
	# on the medians picked q4; docs/sweep.md, How the pick is made)
	run -0 jq -r '.best.read | .point, .tie, (.tied | length), .confidence, .verdict' "$TMP/aggregate.json"
	assert_line --index 0 "$(P read 2)"
	assert_line --index 1 true
	assert_line --index 2 4
	assert_line --index 3 tie
	assert_line --index 4 "$(P read 2), $(P read 16), $(P read 4) and $(P read 8) tie within noise; $(P read 2) is the cheapest of them"
	run -0 report_lines report_warnings "$TMP/aggregate.json" "$CV_FLAG"
	assert_output --partial "$(P read 32): coefficient of variation 40.2% over 3 repeats (> 17%: 5%, or twice the median CV of the run's other points when that is more, at most 20%"
	# quiet others keep the 5% floor, even with only two points: a point's
	# own CV never raises its limit
	{
		runs "$(P read 2)" 1.50 1.51 1.52
		runs "$(P read 8)" 1.55 1.85 1.70
	} | agg
	run -0 jq -c '[.points[] | select(.flags | index("cv")) | [.point, .cv_limit]]' "$TMP/aggregate.json"
	assert_output "[[\"$(P read 8)\",0.05]]"
	# a busy host: every point varies by 25-40%: the limit stops at 20%,
	# nothing is trusted
	{
		runs "$(P read 2)" 1.00 2.00 1.50
		runs "$(P read 4)" 1.10 1.90 1.40
		runs "$(P read 8)" 0.90 2.10 1.60
	} | agg
	run -0 jq -c '[.points[] | select(.cv != null) | [(.cv_limit * 100 | round), (.flags | index("cv") != null)]]' "$TMP/aggregate.json"
	assert_output '[[20,true],[20,true],[20,true]]'
	run -0 jq -c '.best.read' "$TMP/aggregate.json"
	assert_output null
}

@test "pick: overlapping intervals are a tie within noise, resolved by threads, then queue depth x block size, then block submit" {
	grid_from 'rw write' 'tensor 16m' 'block 1m 4m' 'qd 8 32' 'submit block single' 'threads 1 2'
	PLAN_TEXT=$(expand_grid)
	{
		# top median, but 2 threads
		runs "$(P write 32 2)" 2.00 2.05 1.98
		# tied, 1 thread: 32 x 1m = 8 x 4m pinned; block submit wins
		runs "$(P write 32 1 single)" 1.96 1.97 2.01
		runs "$(P write 32 1 block)" 1.95 1.96 1.99
		runs "$(P write 8 1 block 4m)" 1.97 1.99 1.96
		# less pinned memory (8 x 1m), but its max 1.97 is below the
		# top's min 1.98: not tied, not picked
		runs "$(P write 8 1 block)" 1.90 1.97 1.93
		# clearly slower
		runs "$(P write 8 2 single)" 1.2 1.21 1.19
	} | agg
	run -0 jq -r '.best.write | .point, .tie, (.tied | length), .runner_up.point, (.margin_pct | . * 10 | round)' "$TMP/aggregate.json"
	# 32 x 1m block and 8 x 4m block pin the same 32 MiB: GB/s breaks the tie (1.97 > 1.96)
	assert_output "$(printf '%s\n' "$(P write 8 1 block 4m)" true 4 "$(P write 32 2)" -15)"
	local v
	v="$(P write 8 1 block 4m), $(P write 32 2), $(P write 32 1 single) and $(P write 32 1 block) tie within noise; $(P write 8 1 block 4m) is the cheapest of them"
	run -0 jq -r '.best.write.verdict' "$TMP/aggregate.json"
	assert_output "$v"
	# the report's first lines: the pick, then one verdict: a tie names no
	# margin (its runner-up is tied with it)
	run -0 report_lines report_pick "$TMP/aggregate.json"
	assert_line --index 0 --partial '**Pick** (best-aio.json): libaio, block 4M, queue depth 8, block submit, overlap window, 1 thread(s)'
	assert_line --index 1 "- verdict: $v"
	refute_output --partial '% above'
	refute_output --partial 'margin'
	# best-aio.json's reason and the summary on stdout: the same sentence
	run -0 py best-aio "$TMP/aggregate.json"
	run -0 jq -r .reason <<<"$output"
	assert_output "$v"
	run -0 py summary "$TMP"
	assert_line --index 2 "pick:       $(P write 8 1 block 4m) (best-aio.json): $v"
}

@test "pick: disjoint intervals with 3 repeats are a clear pick; with 1 repeat, low confidence" {
	grid_from 'rw read' 'tensor 16m' 'qd 8 16'
	PLAN_TEXT=$(expand_grid)
	{
		runs "$(P read 16)" 2.0 2.1 2.05
		runs "$(P read 8)" 1.5 1.6 1.55
	} | agg
	local v
	v="$(P read 16) is the best: 32.3% above the runner-up $(P read 8), outside the noise (its slowest of 3 repeats, 2 GB/s, beats the runner-up's fastest, 1.6 GB/s)"
	run -0 jq -r '.best.read | .point, .tie, (.margin_pct | round), .confidence, .verdict' "$TMP/aggregate.json"
	assert_output "$(printf '%s\n' "$(P read 16)" false 32 clear "$v")"
	# the report: the margin, and no tie
	run -0 report_lines report_pick "$TMP/aggregate.json"
	assert_line --index 1 "- verdict: $v"
	assert_line --index 2 "- best read: 2.05 GB/s (min-max 2-2.1): $v"
	refute_output --partial 'tie'
	# a direction without points gets no line
	refute_output --partial 'best write'
	{
		runs "$(P read 16)" 2.0
		runs "$(P read 8)" 1.5
	} | agg
	run -0 jq -r '.best.read | .tie, .confidence, .verdict' "$TMP/aggregate.json"
	assert_output "$(printf 'false\nlow\n%s leads the runner-up %s by 33.3%% on 1 repeat(s) per point: too few to tell a win from a tie (use --repeat 3 or more)' "$(P read 16)" "$(P read 8)")"
}

@test "pick: each repeat counts whole tensor ops, so the tie test widens the min-max by one op of each run: 10 ops a run ties 2.9% apart, 1000 ops do not" {
	grid_from 'rw read' 'tensor 16m' 'qd 8 16'
	PLAN_TEXT=$(expand_grid)
	ops() {
		{
			runs "$(P read 16)" 2.06 2.07 2.08
			runs "$(P read 8)" 1.99 2.01 2.02
		} | with_ops "$1"
	}
	# min-max 2.06-2.08 against 1.99-2.02: apart; +-10% (1 op of 10)
	# overlaps: a tie, the cheaper queue depth 8 picked
	ops 10
	run -0 jq -r '.best.read | .point, .tie, .verdict' "$TMP/aggregate.json"
	assert_line --index 0 "$(P read 8)"
	assert_line --index 1 true
	assert_line --index 2 "$(P read 8) and $(P read 16) tie within noise (min-max intervals widened by one tensor op); $(P read 8) is the cheapest of them"
	run -0 jq -e '.points[] | select(.point | endswith("q16-block-overlap-p1-d1")) | .lo == 2.06 and .tlo == 2.06 * 0.9' "$TMP/aggregate.json"
	# +-0.1%: still apart, a clear pick that says the op
	ops 1000
	run -0 jq -r '.best.read | .point, .tie, .verdict' "$TMP/aggregate.json"
	assert_line --index 0 "$(P read 16)"
	assert_line --index 1 false
	assert_line --index 2 --regexp 'is the best: 3% above the runner-up .*, outside the noise \(its slowest of 3 repeats less one tensor op, 2\.058 GB/s, beats the runner-up.s fastest plus one, 2\.022 GB/s\)$'
}

@test "pick: a point's CV limit is at least one tensor op of its runs: 6 ops a run repeat no closer than 17%, 600 ops are held to 5%" {
	grid_from 'rw read' 'tensor 16m' 'qd 8 16'
	PLAN_TEXT=$(expand_grid)
	ops() {
		{
			runs "$(P read 16)" 2.0 2.4 2.1
			runs "$(P read 8)" 2.0 2.01 2.02
		} | with_ops "$1"
	}
	# CV 9.9%: within one op of 6 (16.7%), trusted
	ops 6
	run -0 jq -r '.points[] | select(.point | contains("-q16-")) | [.cv_flag, .trusted, (.cv_limit * 1000 | round)] | @tsv' "$TMP/aggregate.json"
	assert_output "$(printf 'false\ttrue\t167')"
	# 600 ops a run: the limit is the 5% floor, and 9.9% is flagged
	ops 600
	run -0 jq -r '.points[] | select(.point | contains("-q16-")) | [.cv_flag, .trusted, (.cv_limit * 1000 | round), (.flags | join(","))] | @tsv' "$TMP/aggregate.json"
	assert_output "$(printf 'true\tfalse\t50\tcv')"
}

@test "pick: no trustworthy point gives no aio block, a report that says so, and exit code 4" {
	grid_from 'rw read' 'tensor 16m' 'qd 8 16'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	{
		runs ceiling-read-fio-libaio-bs1m-qd64 1.0 1.0 1.0
		runs "$(P read 16)" 1.3 1.3 1.3 # above the ceiling
		runs "$(P read 8)" 0.5 0.9 0.7  # CV
	} | agg
	run -0 jq -c '.best' "$TMP/aggregate.json"
	assert_output '{"read":null,"write":null,"combined":null,"readwrite":null,"aio_source":null}'
	run -0 jq -c 'has("aio"), .trusted' "$TMP/best-aio.json"
	assert_output "$(printf 'false\nfalse')"
	run -0 report_lines report_pick "$TMP/aggregate.json"
	assert_line --index 0 --partial '**No trustworthy pick**'
	refute_output --partial '"aio"'
	# each direction says why it has no pick and what to do, in one line,
	# in the report and on stdout
	local why='none: all 2 read points with a result are flagged (1 above ceiling, 1 cv): a cache is serving them; use a target larger than memory, or a block device'
	assert_line "- best read: $why"
	refute_output --partial 'best write'
	run -0 py summary "$TMP"
	assert_line --index 0 "best read:  $why"
	assert_line --index 1 'best write: -'
	run -0 run_verdict
	assert_output '0 true'
	# the entry point maps it to its documented code
	assert_equal "$EXIT_UNTRUSTED" 4
	run -0 bash -c '"$1" --help' _ "$SWEEP_HOME/tswap-sweep"
	assert_output --partial '4 no trustworthy'
}

@test "--ds-version: best-aio.json has exactly the aio keys that DeepSpeed release reads, and says the range (0.14, 0.15, 0.16.3, 0.16.4 to 0.19.5)" {
	grid_from 'rw read' 'tensor 16m' 'qd 8' 'threads 2'
	PLAN_TEXT=$(expand_grid)
	runs "$(P read 8 2)" 1.5 | agg
	local base='"block_size":1048576,"queue_depth":8'
	local tail='"single_submit":false,"overlap_events":true'
	# the default: the newest known, 0.19.5 (intra_op_parallelism from 0.16.4)
	DS_VERSION='' write_best_aio
	# with the pick's verdict as "reason", which DeepSpeed ignores
	run -0 jq -r .reason "$RUN/best-aio.json"
	assert_output "$(P read 8 2) is the only trustworthy point: nothing to compare it with"
	run -0 jq -c 'del(.reason)' "$RUN/best-aio.json"
	assert_output "{\"deepspeed_versions\":\">=0.16.4\",\"aio\":{$base,\"intra_op_parallelism\":2,$tail,\"use_gds\":false}}"
	for v in 0.16.4 0.17 0.19.5; do
		DS_VERSION=$v write_best_aio
		assert_equal "$(jq -c '[.deepspeed_versions, (.aio | keys_unsorted)]' "$RUN/best-aio.json")" \
			'[">=0.16.4",["block_size","queue_depth","intra_op_parallelism","single_submit","overlap_events","use_gds"]]'
	done
	# 0.15.0 to 0.16.3 read thread_count, and use_gds
	for v in 0.15 0.15.0 0.16.3; do
		DS_VERSION=$v write_best_aio
		run -0 jq -c 'del(.reason)' "$RUN/best-aio.json"
		assert_output "{\"deepspeed_versions\":\">=0.15.0,<0.16.4\",\"aio\":{$base,\"thread_count\":2,$tail,\"use_gds\":false}}"
	done
	# before 0.15.0: thread_count and no use_gds
	for v in 0.14 0.14.5 0.3.15; do
		DS_VERSION=$v write_best_aio
		run -0 jq -c 'del(.reason)' "$RUN/best-aio.json"
		assert_output "{\"deepspeed_versions\":\">=0.3.15,<0.15.0\",\"aio\":{$base,\"thread_count\":2,$tail}}"
	done
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
	run -0 --separate-stderr "$SWEEP_HOME/tswap-sweep" --ds-version 0.19.5 --dry-run --grid quick
}
