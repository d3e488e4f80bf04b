# shellcheck shell=bash
# bwlog.sh - bandwidth over time: fio's own bandwidth log per point, the
# "drops during the run" check, and its plots.
#
# Each point's job has write_bw_log=bw and log_avg_msec=BWLOG_MSEC: fio
# writes POINTDIR/bw_bw.N.log for its job N, one line per BWLOG_MSEC of the
# measured runtime (after ramp_time): "msec, KiB/s, direction, bs, offset"
# (fio HOWTO "Log File Formats"; the value is the mean over the interval).
# A point of several handles has one log per handle; their bandwidths are
# summed per interval.
#
# A run whose last third (by time) averages more than DROP_PCT % below its
# first third "drops during the run" (an SLC-cache cliff, thermal
# throttling): a warning in the report and results, not a reason to distrust
# the point (pick.jq's flags are the blockers).
#
# Owns: bwlog_options, bwlog_line, bwlog_series, bwlog_summary, write_bw_plots.
# Reads: BWLOG_MSEC, DROP_PCT, BWLOG_MIN_SAMPLES, RUN/points/*/bw_bw.*.log, RUN/aggregate.json.
# Writes: RUN/plots/bw-POINT.{dat,gp,png,log}.
# shellcheck disable=SC2016 # $1, $2 in single quotes are awk's and gnuplot's

# bwlog_options: the job options of the bandwidth log.
bwlog_options() {
	printf 'write_bw_log=bw\nlog_avg_msec=%s\n' "$BWLOG_MSEC"
}

# bwlog_line: the report's line on the bandwidth logs.
bwlog_line() {
	printf -- '- bandwidth over time: fio write_bw_log with log_avg_msec=%s (points/POINT.rN/bw_bw.N.log); a run whose last third averages more than %s%% below its first third "drops during the run" (Warnings, plots/bw-POINT.png): a warning, not a reason to distrust the point\n' \
		"$BWLOG_MSEC" "$DROP_PCT"
}

# bwlog_series DIR: "SECONDS GB/s" lines of DIR's bandwidth logs, summed
# over the jobs per BWLOG_MSEC interval, in time order; nothing without logs.
bwlog_series() {
	local -a logs=("$1"/bw_bw.*.log)
	[ -f "${logs[0]}" ] || return 0
	awk -F', *' -v ms="$BWLOG_MSEC" '
		BEGIN { n = 0 }
		NF >= 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
			k = int(($1 + ms / 2) / ms)
			sum[k] += $2
			if (!(k in seen)) { seen[k] = 1; keys[n++] = k }
		}
		END {
			# insertion sort: a few hundred intervals at most
			for (i = 1; i < n; i++) {
				v = keys[i]
				for (j = i - 1; j >= 0 && keys[j] > v; j--) keys[j + 1] = keys[j]
				keys[j + 1] = v
			}
			for (i = 0; i < n; i++)
				printf "%.3f %.6f\n", keys[i] * ms / 1000, sum[keys[i]] * 1024 / 1e9
		}' "${logs[@]}"
}

# bwlog_summary DIR: JSON of DIR's bandwidth over time: {samples,
# first_third_gbs, last_third_gbs, drop_pct (% of the first third's mean
# lost by the last third's; negative: faster at the end), drops (drop_pct
# above DROP_PCT)}; null without a log or with fewer than
# BWLOG_MIN_SAMPLES samples.
bwlog_summary() {
	bwlog_series "$1" | awk -v lim="$DROP_PCT" -v min="$BWLOG_MIN_SAMPLES" '
		BEGIN { n = 0 }
		{ t[n] = $1; v[n] = $2; n++ }
		END {
			if (n < min) { print "null"; exit }
			end = t[n - 1]
			for (i = 0; i < n; i++) {
				if (t[i] <= end / 3) { a += v[i]; na++ }
				if (t[i] > 2 * end / 3) { b += v[i]; nb++ }
			}
			if (na == 0 || nb == 0 || a == 0) { print "null"; exit }
			a /= na; b /= nb
			d = 100 * (a - b) / a
			printf "{\"samples\": %d, \"first_third_gbs\": %.6f, \"last_third_gbs\": %.6f, \"drop_pct\": %.2f, \"drops\": %s}\n",
				n, a, b, d, (d > lim) ? "true" : "false"
		}'
}

# write_bw_plots: plots/bw-POINT.png, GB/s over the measured seconds, one
# line per repeat, for the best read, write and readwrite points and every
# point that drops during the run (aggregate.json). Needs gnuplot (the
# caller, plot.sh write_plots, has checked).
write_bw_plots() {
	local dir="$RUN/plots" point why data gp plot r n
	while IFS=$'\t' read -r point why; do
		[ -n "$point" ] || continue
		data="$dir/bw-$point.dat"
		plot='' n=0
		: >"$data"
		for r in "$RUN/points/$point".r*; do
			[ -d "$r" ] || continue
			{
				printf '# %s\n' "${r##*/}"
				bwlog_series "$r"
				printf '\n\n'
			} >>"$data"
			plot="$plot${plot:+, }$(gp_quote "$data") index $n using 1:2 with linespoints title $(gp_quote "${r##*.}")"
			n=$((n + 1))
		done
		if [ -z "$plot" ] || ! grep -q '^[0-9]' "$data"; then
			rm -f -- "$data"
			continue
		fi
		gp="$dir/bw-$point.gp"
		{
			printf 'set terminal png size 900,500 noenhanced\n'
			printf 'set output %s\n' "$(gp_quote "$dir/bw-$point.png")"
			printf 'set title %s\n' "$(gp_quote "$point: GB/s (1e9 B/s) over the measured run, fio bw log every $BWLOG_MSEC ms ($why)")"
			printf 'set xlabel "seconds after ramp_time"\nset ylabel "GB/s"\nset yrange [0:*]\nset key bottom right\nset grid\n'
			printf 'plot %s\n' "$plot"
		} >"$gp"
		gnuplot "$gp" 2>"$dir/bw-$point.log" || note "gnuplot failed for bw-$point (see plots/bw-$point.log)"
	done < <(jq -r '([.best.read, .best.write, .best.readwrite | select(. != null) | [.point, "best \(.rw)"]]
		+ [.points[] | select(.drops == true) | [.point, "drops \(.drop_pct | round)% during the run"]])
		| unique_by(.[0])[] | @tsv' "$RUN/aggregate.json")
}
