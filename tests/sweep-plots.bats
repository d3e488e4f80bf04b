#!/usr/bin/env bats
# tests/sweep-plots.bats - the sweep's plots (python3 -m tswap plots,
# tswap.report.plots; its pure rules: tests/py/test_plots.py): the
# Pareto front of the plots' data (python3 -m tswap plot-data) on a fixture (no gnuplot), the heat
# maps' palette and titles that fit, drawn from tests/fixtures/plots (a
# hand-written aggregate.json and one bandwidth log), and a real sweep's
# report.md linking the latency plots.

# '$...' in single quotes are jq's or gnuplot's.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

# Before state.sh, which has an ENGINE of its own.
SWEEP_ENGINE=${TSWAP_ENGINE:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)/build/tswap.so}
SCRIPT_DIR=$(cd "$BATS_TEST_DIRNAME/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR
# shellcheck source=../sweep/lib/state.sh
. "$SWEEP_HOME/lib/state.sh"
# shellcheck source=../sweep/lib/util.sh
. "$SWEEP_HOME/lib/util.sh"

FIXTURE=$BATS_TEST_DIRNAME/fixtures/plots

setup() {
	RUN=$BATS_TEST_TMPDIR/run
	cp -R "$FIXTURE" "$RUN"
}

# fixture_plots: the plots stage on the fixture run (needs gnuplot): no
# message, no note.
fixture_plots() {
	command -v gnuplot >/dev/null || skip "requires gnuplot"
	py plots "$RUN" --bwlog-msec "$BWLOG_MSEC" 2>"$BATS_TEST_TMPDIR/notes" || fail "plots: exit $?: $(cat "$BATS_TEST_TMPDIR/notes")"
	[ ! -s "$BATS_TEST_TMPDIR/notes" ] || fail "plots: $(cat "$BATS_TEST_TMPDIR/notes")"
	[ ! -s "$RUN/notes.txt" ] || fail "plots noted: $(cat "$RUN/notes.txt")"
}

# plot_record HEAD: the data lines of the plot-data record HEAD on the
# fixture; status 1 when there is no such record.
plot_record() {
	local rec
	py plot-data "$RUN/aggregate.json" >"$BATS_TEST_TMPDIR/records" || return 2
	while IFS= read -r -d '' rec; do
		[ "${rec%%$'\n'*}" != "$1" ] || {
			printf '%s' "${rec#*$'\n'}"
			return 0
		}
	done <"$BATS_TEST_TMPDIR/records"
	return 1
}

# gnuplot_shim MODE: a gnuplot first in PATH that logs how many arguments
# it got to $BATS_TEST_TMPDIR/gnuplot.calls and runs the real one; MODE "fail-many":
# it fails, drawing nothing, when given more than one script (as gnuplot
# does at a script's error); "noisy": a line on stderr before it starts.
gnuplot_shim() {
	local bin=$BATS_TEST_TMPDIR/bin real
	real=$(PATH=${PATH//"$bin:"/} command -v gnuplot) || skip "requires gnuplot"
	mkdir -p "$bin"
	printf '#!/bin/bash\necho "$#" >>%q\n' "$BATS_TEST_TMPDIR/gnuplot.calls" >"$bin/gnuplot"
	[ "$1" != fail-many ] || printf '[ "$#" -le 1 ] || { echo "shim: an error" >&2; exit 1; }\n' >>"$bin/gnuplot"
	[ "$1" != noisy ] || printf 'echo "shim: a start-up warning" >&2\n' >>"$bin/gnuplot"
	printf 'exec %q "$@"\n' "$real" >>"$bin/gnuplot"
	chmod +x "$bin/gnuplot"
	[[ :$PATH: == *":$bin:"* ]] || PATH=$bin:$PATH
}

# gnuplot_shim's MODE "fail-empty": every script fails after its PNG is
# opened, as gnuplot fails on a plot it cannot draw ("x range is
# invalid"): an empty NAME.png, exit 1.
gnuplot_failing() {
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	# shellcheck disable=SC2028 # the shim's own text
	printf '%s\n' '#!/bin/bash' 'for a; do [[ $a != *.gp ]] || : >"${a%.gp}.png"; done' \
		'echo "shim: x range is invalid" >&2' 'exit 1' >"$bin/gnuplot"
	chmod +x "$bin/gnuplot"
	[[ :$PATH: == *":$bin:"* ]] || PATH=$bin:$PATH
}

# hide_gnuplot: PATH without gnuplot: every other command of PATH's
# directories (the first of a name) linked into one directory, PATH that.
hide_gnuplot() {
	local bin=$BATS_TEST_TMPDIR/nognuplot d f n
	local -a dirs files=()
	local -A seen=([gnuplot]=1)
	mkdir -p "$bin"
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		for f in "$d"/*; do
			n=${f##*/}
			if [ -f "$f" ] && [ -x "$f" ] && [ -z "${seen[$n]:-}" ]; then
				seen[$n]=1
				files+=("$f")
			fi
		done
	done
	ln -s -t "$bin" -- "${files[@]}"
	PATH=$bin
	! command -v gnuplot >/dev/null || fail "gnuplot is still on PATH"
}

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

# edge_ink PNG: how many pixels of PNG's three outermost columns on the
# left and on the right are not white (a title or label cut at an edge).
edge_ink() {
	local px=$BATS_TEST_TMPDIR/px
	gnuplot -e "set table '$px'; plot '$1' binary filetype=png with rgbimage" || return 1
	# lines "x y red green blue alpha"; the first pass finds the width
	awk 'NR == FNR { if ($1 ~ /^[0-9]+$/ && $1 > w) w = $1; next }
		$1 ~ /^[0-9]+$/ && ($1 < 3 || $1 > w - 3) && ($3 < 255 || $4 < 255 || $5 < 255) { n++ }
		END { if (w < 100) exit 1; print n + 0 }' "$px" "$px"
}

@test "plot-data: the Pareto front of a direction's trusted points, the flagged and the other direction left out, the pick marked" {
	run plot_record $'latency\tread'
	assert_success
	# block 0: every read point with a result by GB/s; b8m-q32 is beaten
	# by b1m-q8 at the same p99, b1m-q32 by b4m-q8; b4m-q8 and b8m-q8
	# tie (neither beats the other): both on the front; b4m-q32 beats
	# everything but is flagged; b2m-q8 failed; the write point is out
	assert_output "0.500000 10.000 beaten 0 b8m-q32
1.000000 10.000 front 0 b1m-q8
1.500000 25.000 beaten 0 b1m-q32
2.000000 20.000 front 1 b4m-q8
2.000000 20.000 front 0 b8m-q8
3.000000 5.000 flagged 0 b4m-q32


1.000000 10.000 b1m-q8
2.000000 20.000 b4m-q8
2.000000 20.000 b8m-q8"
	# a direction without points: no record
	run plot_record $'latency\treadwrite'
	assert_failure 1
}

@test "plots: latency plots per direction, heat maps in viridis with readable labels, no rainbow" {
	fixture_plots
	assert_file_exists "$RUN/plots/latency-read.png"
	assert_file_exists "$RUN/plots/latency-write.png"
	assert_file_not_exists "$RUN/plots/latency-readwrite.png"
	grep -q 'index 1 using 1:2 with linespoints .*title "Pareto front"' "$RUN/plots/latency-read.gp" || fail "latency-read.gp draws no front"
	grep -q 'pt 6 ps 4 .*title "pick"' "$RUN/plots/latency-read.gp" || fail "latency-read.gp circles no pick"
	local gp
	for gp in "$RUN"/plots/heat-*.gp; do
		grep -qxF "set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')" "$gp" ||
			fail "$gp: not the viridis palette"
		! grep -q rgbformulae "$gp" || fail "$gp: still a rgbformulae palette"
		grep -q 'with labels textcolor rgb variable' "$gp" || fail "$gp: labels in one colour"
	done
	assert_file_exists "$RUN/plots/heat-read-overlap-block.png"
	# white labels on the dark half (below 0.55 of the best 3 GB/s), black on the light
	assert_equal "$(awk '{ print $3, $4 }' "$RUN/plots/heat-read-overlap-block.dat" | sort -n | tr '\n' ' ')" \
		"0.5 16777215 1 16777215 1.5 16777215 2 0 2 0 3 0 "
}

@test "plots: no title or label is cut at the left or right edge of any plot" {
	fixture_plots
	local png n=0 ink
	# the bandwidth plot's title is as long as a real one (118 characters)
	assert_file_exists "$RUN/plots/bw-read-libaio-t16m-b4m-q8-block-overlap-p1-d2.png"
	for png in "$RUN"/plots/*.png; do
		n=$((n + 1))
		ink=$(edge_ink "$png") || fail "$png: cannot read its pixels"
		[ "$ink" -eq 0 ] || fail "${png##*/}: $ink pixels drawn at the left or right edge (a clipped title?)"
	done
	[ "$n" -ge 5 ] || fail "expected 5 or more plots, got $n"
	# and the title that did not fit on one line was wrapped, not shrunk
	grep -q '^set title .*\."\\n"\.' "$RUN/plots/bw-read-libaio-t16m-b4m-q8-block-overlap-p1-d2.gp" || fail "the long title is on one line"
}

@test "plots: one gnuplot draws every plot, its messages split per plot (its start-up's in gnuplot.log); when it fails, each plot is drawn alone" {
	gnuplot_shim pass
	fixture_plots
	assert_equal "$(grep -c '^' "$BATS_TEST_TMPDIR/gnuplot.calls")" 1
	local gp n=0
	for gp in "$RUN"/plots/*.gp; do
		n=$((n + 1))
		assert_file_exists "${gp%.gp}.png"
		assert_file_exists "${gp%.gp}.log"
	done
	[ "$n" -ge 5 ] || fail "expected 5 or more plots, got $n"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/gnuplot.calls")" "$((n * 3))"
	assert_file_not_exists "$RUN/plots/gnuplot.log.tmp"
	! grep -q '^@@ ' "$RUN"/plots/*.log || fail "a plot's log holds the markers between the plots"
	# gnuplot fails with the scripts together: each alone, every plot drawn
	rm -rf -- "$RUN/plots" "$BATS_TEST_TMPDIR/gnuplot.calls"
	gnuplot_shim fail-many
	fixture_plots
	assert_equal "$(sed -n 1p "$BATS_TEST_TMPDIR/gnuplot.calls")" "$((n * 3))"
	assert_equal "$(grep -c '^1$' "$BATS_TEST_TMPDIR/gnuplot.calls")" "$n"
	for gp in "$RUN"/plots/*.gp; do
		assert_file_exists "${gp%.gp}.png"
	done
	# gnuplot says something before the first script: kept in gnuplot.log
	rm -rf -- "$RUN/plots"
	gnuplot_shim noisy
	fixture_plots
	assert_file_contains "$RUN/plots/gnuplot.log" 'shim: a start-up warning'
	assert_file_exists "$RUN/plots/latency-read.png"
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

@test "plots: without gnuplot, a PNG whose .dat or .gp changed is removed, the rest kept, one note says which" {
	fixture_plots
	cp -R "$RUN/plots" "$BATS_TEST_TMPDIR/before"
	# every read point twice as fast: the read plots change, the write ones not
	jq '(.points[] | select(.rw == "read" and .gbs != null) | .gbs) |= . * 2' "$RUN/aggregate.json" >"$BATS_TEST_TMPDIR/agg"
	cp "$BATS_TEST_TMPDIR/agg" "$RUN/aggregate.json"
	(
		hide_gnuplot
		py plots "$RUN" --bwlog-msec "$BWLOG_MSEC"
	) || fail "plots without gnuplot: exit $?"
	# the data is the run's now, as gnuplot would have drawn it
	run -0 grep -c '^2 ' "$RUN/plots/heat-read-overlap-block.dat"
	same_plots "$BATS_TEST_TMPDIR/before" "$RUN/plots"
	local k r
	k=$(printf '%s, ' "${KEPT[@]}")
	r=$(printf '%s, ' "${REMOVED[@]}")
	run -0 cat "$RUN/notes.txt"
	assert_output "gnuplot is not installed: ${#KEPT[@]} plot(s) kept, drawn from the same .dat and .gp (${k%, }); ${#REMOVED[@]} removed: their .dat or .gp changed and could not be redrawn (${r%, })"
}

@test "plots: a plot gnuplot fails on leaves no PNG, and a note" {
	command -v jq >/dev/null || skip "requires jq"
	gnuplot_failing
	py plots "$RUN" --bwlog-msec "$BWLOG_MSEC" || fail "plots: exit $?"
	run -0 find "$RUN/plots" -name '*.png'
	assert_output ''
	run -0 grep -c '^gnuplot failed for [^ ]* (see plots/[^ ]*\.log)$' "$RUN/notes.txt"
	assert_output "$(find "$RUN/plots" -name '*.gp' | wc -l)"
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
		hide_gnuplot
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
