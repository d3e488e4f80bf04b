#!/usr/bin/env bats
# tests/sweep-plots.bats - a real sweep's plots: report.md linking the
# latency plots, and --resume without gnuplot. The plots drawn from
# tests/fixtures/plots (the Pareto front, the heat maps' palette, titles
# that fit, one gnuplot for every plot, gnuplot failing or missing):
# tests/py/test_plots_drawn.py; their pure rules: tests/py/test_plots.py.

# '$...' in single quotes are jq's or gnuplot's.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

SWEEP_ENGINE=${TSWAP_ENGINE:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)/build/tswap.so}
SCRIPT_DIR=$(cd "$BATS_TEST_DIRNAME/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR

load hide-tools

# same_plots BEFORE PLOTS: for each PNG drawn into BEFORE (a copy of
# plots/ then), it is in PLOTS, byte for byte, exactly when its .dat and
# .gp are unchanged; the names kept and removed, "kept: A B" and
# "removed: C", into KEPT and REMOVED.
same_plots() {
	local png n
	KEPT=() REMOVED=()
	for png in "$1"/*.png; do
		n=${png##*/}
		n=${n%.png}
		if cmp -s "$1/$n.dat" "$2/$n.dat" && cmp -s "$1/$n.gp" "$2/$n.gp"; then
			cmp -s "$png" "$2/$n.png" || fail "$n.png: its data is unchanged but the picture is not the one drawn"
			KEPT+=("$n.png")
		else
			assert_file_not_exists "$2/$n.png"
			REMOVED+=("$n.png")
		fi
	done
	[ "${#KEPT[@]}" -ge 1 ] || fail "no plot kept: the test changes too much"
	[ "${#REMOVED[@]}" -ge 1 ] || fail "no plot removed: the test changes nothing"
}

@test "sweep: report.md shows the latency-against-throughput plots first, with how to read them" {
	[ -f "$SWEEP_ENGINE" ] || skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
	command -v gnuplot >/dev/null || skip "requires gnuplot"
	[ "$(stat -f -c %T "$BATS_TEST_TMPDIR")" != tmpfs ] || skip "requires a block-backed \$BATS_TEST_TMPDIR (O_DIRECT), not tmpfs"
	local rd=$BATS_TEST_TMPDIR/sweep
	export TSWAP_ENGINE=$SWEEP_ENGINE
	run --separate-stderr timeout -k 10 300 "$SWEEP_HOME/tswap-sweep" --grid quick --size 32m --tensor-size 4m \
		--io-size 8m --repeat 1 --target "$BATS_TEST_TMPDIR/t.swap" --out "$rd"
	[ "$status" -eq 0 ] || fail "tswap-sweep exit $status: ${stderr:-}"
	local rw
	for rw in read write; do
		[ "$(head -c 8 "$rd/plots/latency-$rw.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
			fail "plots/latency-$rw.png is not a PNG"
	done
	# the Plots section opens with them, then says how to read them
	run sed -n '/^## Plots$/,$p' "$rd/report.md"
	assert_line --index 1 '![latency-read](plots/latency-read.png)'
	assert_line --index 2 '![latency-write](plots/latency-write.png)'
	assert_line --index 3 --partial 'latency-DIR: p99 completion latency'
	[ "$(grep -c '^!\[latency-' "$rd/report.md")" -eq 2 ] || fail "a latency plot is linked twice"
}

@test "sweep: --resume without gnuplot links no picture of other numbers, and says why in one line" {
	[ -f "$SWEEP_ENGINE" ] || skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
	command -v gnuplot >/dev/null || skip "requires gnuplot"
	[ "$(stat -f -c %T "$BATS_TEST_TMPDIR")" != tmpfs ] || skip "requires a block-backed \$BATS_TEST_TMPDIR (O_DIRECT), not tmpfs"
	local rd=$BATS_TEST_TMPDIR/sweep f png
	run --separate-stderr env TSWAP_ENGINE="$SWEEP_ENGINE" timeout -k 10 300 "$SWEEP_HOME/tswap-sweep" --grid quick --size 32m --tensor-size 4m \
		--io-size 8m --repeat 1 --no-ceiling --target "$BATS_TEST_TMPDIR/t.swap" --out "$rd"
	[ "$status" -eq 0 ] || fail "tswap-sweep exit $status: ${stderr:-}"
	cp -R "$rd/plots" "$BATS_TEST_TMPDIR/before"
	# a point's figure changes (as a rerun point's would): its plots are stale
	f=$(find "$rd/points" -name result.json -path '*read-*b1m-q32*' | head -n 1)
	[ -n "$f" ] || fail "no point b1m-q32"
	jq '.gbs = 123.456' "$f" >"$BATS_TEST_TMPDIR/r.json"
	cp "$BATS_TEST_TMPDIR/r.json" "$f"
	(
		hide_tools gnuplot
		TSWAP_ENGINE=$SWEEP_ENGINE timeout -k 10 300 "$SWEEP_HOME/tswap-sweep" --resume "$rd" >/dev/null 2>"$BATS_TEST_TMPDIR/err"
	) || fail "--resume without gnuplot: exit $?: $(cat "$BATS_TEST_TMPDIR/err")"
	grep -q '123\.456' "$rd/report.md" || fail "report.md does not have the new figure"
	grep -q '^123\.456' "$rd/plots/latency-read.dat" || fail "plots/latency-read.dat is not the run's data"
	same_plots "$BATS_TEST_TMPDIR/before" "$rd/plots"
	# report.md links the PNGs there are, and no other
	for png in "${REMOVED[@]}"; do
		run -1 grep -F "(plots/$png)" "$rd/report.md"
	done
	for png in "${KEPT[@]}"; do
		grep -qxF "![${png%.png}](plots/$png)" "$rd/report.md" || fail "report.md does not link $png"
	done
	run -0 grep -c '^- note: gnuplot is not installed: ' "$rd/report.md"
	assert_output 1
	run -0 grep '^- note: gnuplot is not installed: ' "$rd/report.md"
	assert_output --partial "removed: their .dat or .gp changed and could not be redrawn ("
}
