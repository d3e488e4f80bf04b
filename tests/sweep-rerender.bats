#!/usr/bin/env bats
# tests/sweep-rerender.bats - the recorded runs of tests/fixtures/runs/
# (README.md there) re-rendered by this checkout's sweep: each run is
# copied back to the directory it was recorded in, its outputs are
# deleted, `tswap-sweep --resume` (every point done: no fio run, only the
# finish stage) writes them again, and each must be byte for byte as
# recorded, with the recorded exit status. The black-box half of issue
# 36's "Same outputs" (tests/py/test_rerender.py is the in-process half).
#
# The runs were recorded under /tmp/tswap-fixture-runs (their paths are
# in the outputs), so the test recreates exactly that directory: it takes
# a lock (/tmp/tswap-fixture-runs.lock: one such test at a time on the
# machine), refuses to run when the directory exists without its own
# mark, and removes it afterwards. A --resume lays out each target again
# (64 MiB files under the directory). 20 s to a minute.

bats_require_minimum_version 1.5.0

load helpers

FIXTURES=$REPO/tests/fixtures/runs
ROOT=/tmp/tswap-fixture-runs
MARK=.tswap-sweep-rerender-test
SWEEP=$REPO/sweep/tswap-sweep

# The outputs a re-render must reproduce (tests/py/test_rerender.py
# OUTPUTS): found in the fixture, deleted from the copy before --resume.
OUTPUTS=(results.json aggregate.json summary.csv best-aio.json report.md junit.xml compare.md
	fleet.json fleet-results.json 'hosts/*/results.json' 'hosts/*/aggregate.json' 'plots/*.dat' 'plots/*.gp')

setup() {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	command -v gnuplot >/dev/null || skip "requires gnuplot: the recorded report.md links the plots it drew"
	command -v flock >/dev/null || skip "requires flock (util-linux)"
	is_block_backed /tmp || skip "requires /tmp on a block-backed filesystem (the recorded targets are under $ROOT)"
	exec {LOCK_FD}>"$ROOT.lock"
	flock -w 600 "$LOCK_FD" || fail "$ROOT.lock: held by another run of this test for 10 minutes"
	if [ -e "$ROOT" ] || [ -L "$ROOT" ]; then
		# ours, left by a run that was killed (we hold the lock now)
		if [ -L "$ROOT" ] || [ ! -f "$ROOT/$MARK" ]; then
			fail "$ROOT exists and is not this test's (no $MARK in it): move it away to run this test"
		fi
		rm -rf -- "$ROOT"
	fi
	mkdir -- "$ROOT"
	: >"$ROOT/$MARK"
}

teardown() {
	if [ -n "${LOCK_FD:-}" ]; then
		[ ! -f "$ROOT/$MARK" ] || rm -rf -- "$ROOT"
		exec {LOCK_FD}>&-
	fi
}

# field NAME N: field N of NAME's line in index.tsv (2: its run
# directory, 3: its exit status, 4: the options its re-render takes).
field() {
	awk -F '\t' -v n="$1" -v f="$2" '$1 == n { print $f; found = 1 } END { exit !found }' "$FIXTURES/index.tsv"
}

# outputs DIR: the recorded outputs in DIR, one path a line.
outputs() {
	local p f
	for p in "${OUTPUTS[@]}"; do
		for f in "$1"/$p; do
			[ ! -f "$f" ] || printf '%s\n' "${f#"$1"/}"
		done
	done
}

# rerender NAME: NAME copied back to where it was recorded (with every
# other recorded run: --compare reads another), its outputs deleted,
# --resume, then every recorded output compared byte for byte.
rerender() {
	local name=$1 dir want args f n=0 t
	local -a opts=() outs=()
	dir=$(field "$name" 2) || fail "$name: not in index.tsv"
	want=$(field "$name" 3)
	args=$(field "$name" 4)
	[ "$dir" = "$ROOT/$name" ] || fail "$name was recorded in $dir, not under $ROOT"
	cp -R -- "$FIXTURES"/. "$ROOT/"
	rm -f -- "$ROOT/index.tsv" "$ROOT/README.md"
	install -D -m 0755 "$ENGINE" "$ROOT/engine/tswap.so"
	# the targets' directories (the sweep creates none)
	while IFS= read -r t; do
		mkdir -p -- "$(dirname -- "$t")"
	done < <(jq -r '(.targets // [.target])[], (.fleet.hosts // [])[].target | select(. != null)' "$dir/sweep.json")
	mapfile -t outs < <(outputs "$FIXTURES/$name")
	[ "${#outs[@]}" -gt 0 ] || fail "$name: no recorded output"
	for f in "${outs[@]}"; do
		rm -f -- "$dir/$f"
	done
	rm -rf -- "$dir/plots"
	read -r -a opts <<<"$args"
	run --separate-stderr timeout -k 10 300 "$SWEEP" --quiet --resume "$dir" "${opts[@]}"
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	[ "$status" = "$want" ] || fail "$name: --resume exited $status, the recorded run $want: $stderr"
	for f in "${outs[@]}"; do
		[ -f "$dir/$f" ] || fail "$name: --resume did not write $f"
		if ! cmp -s -- "$FIXTURES/$name/$f" "$dir/$f"; then
			diff -u -- "$FIXTURES/$name/$f" "$dir/$f" | head -n 40 >&2 || true
			n=$((n + 1))
		fi
	done
	[ "$n" -eq 0 ] || fail "$name: $n of ${#outs[@]} outputs differ from the recording (diffs above)"
	# nothing more was written than was recorded (a new output needs a
	# new recording)
	[ "$(outputs "$FIXTURES/$name")" = "$(outputs "$dir")" ] ||
		fail "$name: --resume wrote other outputs: $(diff <(outputs "$FIXTURES/$name") <(outputs "$dir") || true)"
}

@test "rerender single: one target, one repeat: every output as recorded" {
	rerender single
}

@test "rerender repeat2: two repeats (CV, intervals): every output as recorded" {
	rerender repeat2
}

@test "rerender ranks: --ranks 1,2,3: every output as recorded" {
	rerender ranks
}

@test "rerender readwrite: --rw readwrite: every output as recorded" {
	rerender readwrite
}

@test "rerender thresholds: --min-read-gbs FAIL, --min-write-gbs PASS, --compare: every output and exit 1 as recorded" {
	rerender thresholds
}

@test "rerender precondition: --precondition: every output as recorded" {
	rerender precondition
}

@test "rerender no-meta: a run without meta.json: every output as recorded" {
	rerender no-meta
}

@test "rerender fleet3: 3 hosts: every output as recorded" {
	rerender fleet3
}

@test "rerender fleet-outlier: a rate-limited host below the bar and an outlier, junit.xml: every output as recorded" {
	rerender fleet-outlier
}

@test "rerender budget-stopped: a --budget run that stopped" {
	skip "--resume refuses a --budget run (tswap/cli/sweep_resume.py budget_run) and no other entry runs finish_run on a run directory: needs a re-render hook"
}
