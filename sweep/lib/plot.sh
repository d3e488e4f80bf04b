# shellcheck shell=bash
# plot.sh - gnuplot: heat maps, best per thread count, the fleet's hosts.
#
# Owns: gp_quote, tics, write_plots (jq/plot-heat.jq, jq/plot-threads.jq;
# bandwidth over time: bwlog.sh write_bw_plots), write_hosts_plot, plot_links.
# Reads: RUN/aggregate.json, RUN/fleet.json.
# Writes: RUN/plots/*.{dat,gp,png,log}; a note when gnuplot is missing or
# fails (the run goes on).
# shellcheck disable=SC2016 # $3 is gnuplot's

# gp_quote STR: a gnuplot single-quoted string ('' is a quote): in a
# double-quoted one gnuplot would run `...` as a shell command.
gp_quote() {
	printf "'%s'" "${1//\'/\'\'}"
}

# tics "V1 V2 ..." size|int: gnuplot tic list ("1m" 0, "4m" 1, ...).
tics() {
	local v i=0 out='' label
	local -a vals
	read -r -a vals <<<"$1"
	for v in "${vals[@]}"; do
		if [ "$2" = size ]; then label=$(bytes_to_size "$v"); else label=$v; fi
		out="$out${out:+, }\"$label\" $i"
		i=$((i + 1))
	done
	printf '%s\n' "$out"
}

write_plots() {
	local dir="$RUN/plots" rw pair w s name blocks qds xt yt data gp n
	command -v gnuplot >/dev/null 2>&1 || {
		note "gnuplot is not installed: no plots"
		return 0
	}
	rm -rf -- "$dir"
	mkdir -p "$dir"
	for rw in read write; do
		while IFS= read -r pair; do
			[ -n "$pair" ] || continue
			w=${pair%/*}
			s=${pair#*/}
			name="heat-$rw-$w-$s"
			blocks=$(jq -r --arg rw "$rw" '[.points[] | select(.rw == $rw) | .block] | unique | map(tostring) | join(" ")' "$RUN/aggregate.json")
			qds=$(jq -r --arg rw "$rw" '[.points[] | select(.rw == $rw) | .qd] | unique | map(tostring) | join(" ")' "$RUN/aggregate.json")
			data="$dir/$name.dat"
			jq -r --arg rw "$rw" --arg w "$w" --arg s "$s" -f "$JQ_DIR/plot-heat.jq" \
				"$RUN/aggregate.json" >"$data"
			n=$(grep -c . "$data" || true)
			[ "$n" -gt 0 ] || continue
			xt=$(tics "$blocks" size)
			yt=$(tics "$qds" int)
			gp="$dir/$name.gp"
			{
				printf 'set terminal png size 900,650 noenhanced\n'
				printf 'set output %s\n' "$(gp_quote "$dir/$name.png")"
				printf 'set title %s\n' "$(gp_quote "$rw GB/s (1e9 B/s), window=$w submit=$s; best over threads, backends, tensor sizes")"
				printf 'set xlabel "tswap_block_size"\nset ylabel "tswap_queue_depth"\nset cblabel "GB/s"\n'
				printf 'set xtics (%s)\nset ytics (%s)\n' "$xt" "$yt"
				printf 'set xrange [-0.5:%s]\nset yrange [-0.5:%s]\n' \
					"$(($(wc -w <<<"$blocks") - 1)).5" "$(($(wc -w <<<"$qds") - 1)).5"
				printf 'set cbrange [0:*]\nset palette rgbformulae 22,13,-31\nset style fill solid 1.0 noborder\nunset key\n'
				printf 'plot %s using 1:2:(0.5):(0.5):3 with boxxyerror fillcolor palette, ' "$(gp_quote "$data")"
				printf '%s using 1:2:(sprintf("%%.2f", $3)) with labels textcolor rgb "black"\n' "$(gp_quote "$data")"
			} >"$gp"
			gnuplot "$gp" 2>"$dir/$name.log" || note "gnuplot failed for $name (see plots/$name.log)"
		done < <(jq -r --arg rw "$rw" '[.points[] | select(.rw == $rw) | "\(.window)/\(.submit)"] | unique | .[]' "$RUN/aggregate.json")
	done
	# best point per thread count, read and write side by side
	data="$dir/best-by-threads.dat"
	jq -r -f "$JQ_DIR/plot-threads.jq" \
		"$RUN/aggregate.json" >"$data"
	if [ -s "$data" ]; then
		gp="$dir/best-by-threads.gp"
		{
			printf 'set terminal png size 800,550 noenhanced\n'
			printf 'set output %s\n' "$(gp_quote "$dir/best-by-threads.png")"
			printf 'set title "best GB/s (1e9 B/s) per tswap_threads (intra_op_parallelism)"\n'
			printf 'set xlabel "tswap_threads"\nset ylabel "GB/s"\nset yrange [0:*]\nset datafile missing "-"\n'
			printf 'set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.8 border -1\nset key top left\n'
			printf 'plot %s using 2:xtic(1) title "read", "" using 3 title "write"\n' "$(gp_quote "$data")"
		} >"$gp"
		gnuplot "$gp" 2>"$dir/best-by-threads.log" || note "gnuplot failed for best-by-threads (see plots/best-by-threads.log)"
	fi
	write_bw_plots
}

# write_hosts_plot: plots/hosts.png, each host's best read and write GB/s.
write_hosts_plot() {
	local dir="$RUN/plots" data gp
	command -v gnuplot >/dev/null 2>&1 || return 0
	mkdir -p "$dir"
	data="$dir/hosts.dat"
	jq -r '.hosts[] | "\(.id) \(.best.read.gbs // "-") \(.best.write.gbs // "-")"' "$RUN/fleet.json" >"$data"
	[ -s "$data" ] || return 0
	gp="$dir/hosts.gp"
	{
		printf 'set terminal png size 900,550 noenhanced\n'
		printf 'set output %s\n' "$(gp_quote "$dir/hosts.png")"
		printf 'set title %s\n' "$(gp_quote "best GB/s (1e9 B/s) per host, $(jq -r '[.directions[] as $d | "\($d) median \(.fleet[$d].median // 0 | . * 1000 | round / 1000)"] | join(", ")' "$RUN/fleet.json")")"
		printf 'set ylabel "GB/s"\nset yrange [0:*]\nset datafile missing "-"\nset xtics rotate by -30\n'
		printf 'set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.8 border -1\nset key top right\n'
		printf 'plot %s using 2:xtic(1) title "read", "" using 3 title "write"\n' "$(gp_quote "$data")"
	} >"$gp"
	gnuplot "$gp" 2>"$dir/hosts.log" || note "gnuplot failed for hosts (see plots/hosts.log)"
}

# plot_links: a Markdown image line for every PNG in RUN/plots (the
# reports' Plots section; report.sh, fleet-report.sh).
plot_links() {
	local png
	for png in "$RUN"/plots/*.png; do
		[ -f "$png" ] || continue
		png=${png##*/}
		printf '![%s](plots/%s)\n\n' "${png%.png}" "$png"
	done
}
