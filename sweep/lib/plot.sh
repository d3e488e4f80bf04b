# shellcheck shell=bash
# plot.sh - gnuplot: latency against throughput, heat maps, best per
# thread count, the fleet's hosts.
#
# Owns: gp_quote, gp_title, gp_plot, gp_render, tics, VIRIDIS, write_plots
# (tswap.results.plot_data; bandwidth over time: bwlog.sh write_bw_plots),
# latency_plot, write_hosts_plot, plot_links, png_link.
# Reads: RUN/aggregate.json, RUN/fleet.json.
# Writes: RUN/plots/*.{dat,gp,png,log}; a note when gnuplot is missing or
# fails (the run goes on).
# shellcheck disable=SC2016 # $3 is gnuplot's

# gp_quote VAR STR: STR as a gnuplot single-quoted string ('' is a quote)
# into VAR: in a double-quoted one gnuplot would run `...` as a command.
gp_quote() {
	local -n _q=$1
	_q="'${2//\'/\'\'}'"
}

# VIRIDIS: the heat maps' palette, matplotlib's viridis (perceptually
# uniform, readable in grey and by the colour-blind) at 0, 1/8, ... 1;
# gnuplot 5.4 has no viridis of its own.
VIRIDIS="set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')"

# gp_title VAR SIZE TEXT: a plot title that fits its PNG (SIZE "W,H"
# pixels) into VAR: the words of TEXT in lines of at most (W - 40) / 9.5
# characters (the png terminal's default font, arial 12, found as DejaVu
# Sans, takes about 8.7 pixels a character of these titles), as a gnuplot
# string expression: each line single-quoted (gp_quote), joined by "\n";
# '' for no words. Text layout, in the shell: a jq run per plot cost more.
gp_title() {
	local -n _t=$1
	local n=$(((${2%%,*} - 40) * 2 / 19)) word line='' q
	local -a words lines=()
	IFS=' ' read -r -a words <<<"$3"
	for word in "${words[@]}"; do
		if [ -n "$line" ] && ((${#line} + 1 + ${#word} <= n)); then
			line+=" $word"
		else
			[ -z "$line" ] || lines+=("$line")
			line=$word
		fi
	done
	[ -z "$line" ] || lines+=("$line")
	_t=''
	for line in "${lines[@]}"; do
		gp_quote q "$line"
		_t+="${_t:+.\"\\n\".}$q"
	done
	[ -n "$_t" ] || _t="''"
}

# gp_plot NAME SIZE TITLE LINES...: plots/NAME.gp, which draws
# plots/NAME.png (SIZE pixels): TITLE (text, wrapped to fit the width:
# gp_title), then LINES. gp_render draws it.
gp_plot() {
	local dir="$RUN/plots" name=$1 size=$2 title png
	gp_title title "$size" "$3"
	shift 3
	gp_quote png "$dir/$name.png"
	printf 'set terminal png size %s noenhanced\nset output %s\nset title %s\n' "$size" "$png" "$title" >"$dir/$name.gp"
	printf '%s\n' "$@" >>"$dir/$name.gp"
}

# gp_render NAME...: draws plots/NAME.gp for each NAME in one gnuplot
# (its start-up is most of a small plot's cost), each after a reset, and
# splits gnuplot's messages into plots/NAME.log (its start-up's, if any,
# into plots/gnuplot.log). When gnuplot fails, each
# is drawn again alone (gnuplot stops at a script's first error), with a
# note for each that fails (its messages in plots/NAME.log).
gp_render() {
	local dir="$RUN/plots" name
	local -a argv=()
	[ "$#" -gt 0 ] || return 0
	for name in "$@"; do
		argv+=(-e "reset; print '@@ $name'" "$dir/$name.gp")
	done
	if gnuplot "${argv[@]}" 2>"$dir/gnuplot.log.tmp"; then
		# what gnuplot says before the first script (its start-up): gnuplot.log
		awk -v dir="$dir" '/^@@ / { f = dir "/" $2 ".log"; printf "" >f; next }
			{ if (f == "") f = dir "/gnuplot.log"; print >f }' "$dir/gnuplot.log.tmp"
	else
		for name in "$@"; do
			gnuplot "$dir/$name.gp" 2>"$dir/$name.log" || note "gnuplot failed for $name (see plots/$name.log)"
		done
	fi
	rm -f -- "$dir/gnuplot.log.tmp"
}

# tics "V1 V2 ..." size|int: gnuplot tic list ("1m" 0, "4m" 1, ...).
tics() {
	local v i=0 out='' label
	local -a vals
	read -r -a vals <<<"$1"
	for v in "${vals[@]}"; do
		label=$v
		[ "$2" != size ] || szname label "$v"
		out="$out${out:+, }\"$label\" $i"
		i=$((i + 1))
	done
	printf '%s\n' "$out"
}

# write_plots: plots/ from aggregate.json (tswap.results.plot_data, one run for
# every plot's data): heat maps, best per thread count, latency against
# throughput, bandwidth over time (bwlog.sh write_bw_plots); one gnuplot
# draws them all (gp_render).
write_plots() {
	local dir="$RUN/plots" rec head kind rw w s name blocks qds xt yt data nb nq title gp
	local -a bl ql names=() bw=()
	command -v gnuplot >/dev/null 2>&1 || {
		note "gnuplot is not installed: no plots"
		return 0
	}
	rm -rf -- "$dir"
	mkdir -p "$dir"
	py plot-data "$RUN/aggregate.json" >"$dir/plot-data.tmp"
	while IFS= read -r -d '' rec; do
		head=${rec%%$'\n'*}
		rec=${rec#*$'\n'}
		IFS=$'\t' read -r kind rw w s blocks qds <<<"$head"
		case "$kind" in
		heat)
			[ -n "$rec" ] || continue
			name="heat-$rw-$w-$s"
			data="$dir/$name.dat"
			printf '%s' "$rec" >"$data"
			xt=$(tics "$blocks" size)
			yt=$(tics "$qds" int)
			read -r -a bl <<<"$blocks"
			read -r -a ql <<<"$qds"
			nb=$((${#bl[@]} - 1)) nq=$((${#ql[@]} - 1))
			title="$rw GB/s (1e9 B/s), window=$w submit=$s; best over threads, backends, tensor sizes"
			gp_quote data "$data"
			gp_plot "$name" 900,650 "$title" \
				'set xlabel "tswap_block_size"' 'set ylabel "tswap_queue_depth"' 'set cblabel "GB/s"' \
				"set xtics ($xt)" "set ytics ($yt)" "set xrange [-0.5:$nb.5]" "set yrange [-0.5:$nq.5]" \
				'set cbrange [0:*]' "$VIRIDIS" 'set style fill solid 1.0 noborder' 'unset key' \
				"plot $data using 1:2:(0.5):(0.5):3 with boxxyerror fillcolor palette, $data using 1:2:(sprintf(\"%.2f\", \$3)):4 with labels textcolor rgb variable"
			;;
		threads)
			# best point per thread count, read and write side by side
			[ -n "$rec" ] || continue
			data="$dir/best-by-threads.dat"
			printf '%s' "$rec" >"$data"
			gp_quote data "$data"
			gp_plot best-by-threads 800,550 'best GB/s (1e9 B/s) per tswap_threads (intra_op_parallelism)' \
				'set xlabel "tswap_threads"' 'set ylabel "GB/s"' 'set yrange [0:*]' 'set datafile missing "-"' \
				'set style data histogram' 'set style histogram cluster gap 1' 'set style fill solid 0.8 border -1' \
				'set key top left' "plot $data using 2:xtic(1) title \"read\", \"\" using 3 title \"write\""
			;;
		latency) latency_plot "$rw" "$rec" ;;
		bw) bw+=("$rw" "$w") ;; # POINT WHY
		*) ;;
		esac
	done <"$dir/plot-data.tmp"
	rm -f -- "$dir/plot-data.tmp"
	write_bw_plots "${bw[@]}"
	for gp in "$dir"/*.gp; do
		[ -f "$gp" ] || continue
		name=${gp##*/}
		names+=("${name%.gp}")
	done
	gp_render "${names[@]}"
}

# latency_plot RW DATA: plots/latency-RW.gp from its data (tswap.results.plot_data):
# each point's p99 (ms) against its GB/s, the Pareto front of the trusted
# points joined and labelled, flagged points hollow, the pick circled;
# nothing without a point.
latency_plot() {
	local rw=$1 data="$RUN/plots/latency-$1.dat"
	grep -q '^[0-9]' <<<"$2" || return 0
	printf '%s' "$2" >"$data"
	gp_quote data "$data"
	gp_plot "latency-$rw" 900,600 "$rw: p99 completion latency against GB/s (1e9 B/s) per point; line: Pareto front of the trusted points; circle: the pick" \
		'set xlabel "GB/s"' 'set ylabel "p99 completion latency, ms"' 'set xrange [0:*]' 'set yrange [0:*]' \
		'set grid' 'set key below horizontal' 'set offsets graph 0.02, graph 0.15, graph 0.1, 0' \
		"plot $data index 0 using 1:(strcol(3) eq \"flagged\" ? \$2 : NaN) with points pt 6 ps 1.5 lc rgb \"gray50\" title \"flagged (never picked)\", $data index 0 using 1:(strcol(3) eq \"beaten\" ? \$2 : NaN) with points pt 7 ps 1.5 lc rgb \"#3b518b\" title \"trusted, beaten\", $data index 1 using 1:2 with linespoints lw 2 pt 7 ps 1.5 lc rgb \"#e0600a\" title \"Pareto front\", $data index 1 using 1:2:3 with labels left offset char 1.5,0.8 notitle, $data index 0 using 1:(\$4 == 1 ? \$2 : NaN) with points pt 6 ps 4 lw 2 lc rgb \"black\" title \"pick\""
}

# write_hosts_plot: plots/hosts.png, each host's best read and write GB/s.
write_hosts_plot() {
	local dir="$RUN/plots" data title
	local -a hist=('set style data histogram' 'set style histogram cluster gap 1' 'set style fill solid 0.8 border -1')
	command -v gnuplot >/dev/null 2>&1 || return 0
	mkdir -p "$dir"
	data="$dir/hosts.dat"
	jq -r '.hosts[] | "\(.id) \(.best.read.gbs // "-") \(.best.write.gbs // "-")"' "$RUN/fleet.json" >"$data"
	[ -s "$data" ] || return 0
	title=$(jq -r '[.directions[] as $d | "\($d) median \(.fleet[$d].median // 0 | . * 1000 | round / 1000)"] | join(", ")' "$RUN/fleet.json")
	gp_quote data "$data"
	gp_plot hosts 900,550 "best GB/s (1e9 B/s) per host, $title" 'set ylabel "GB/s"' 'set yrange [0:*]' 'set datafile missing "-"' 'set xtics rotate by -30' \
		"${hist[@]}" 'set key top right' "plot $data using 2:xtic(1) title \"read\", \"\" using 3 title \"write\""
	gp_render hosts
}

# plot_links: a Markdown image line for every PNG in RUN/plots, the
# latency ones first and a line on how to read them (the reports' Plots
# section; report.sh, fleet-report.sh).
plot_links() {
	local png lat=0
	for png in "$RUN"/plots/latency-*.png; do
		[ -f "$png" ] || continue
		png_link "$png"
		lat=1
	done
	[ "$lat" = 0 ] || printf 'latency-DIR: p99 completion latency (median over repeats) against GB/s per point; the line joins the Pareto front, the trusted points no other trusted point beats on both; hollow: flagged; circled: the best DIR point.\n\n'
	for png in "$RUN"/plots/*.png; do
		[ -f "$png" ] || continue
		[[ ${png##*/} != latency-* ]] || continue
		png_link "$png"
	done
}

# png_link PNG: its Markdown image line.
png_link() {
	local png=${1##*/}
	printf '![%s](plots/%s)\n\n' "${png%.png}" "$png"
}
