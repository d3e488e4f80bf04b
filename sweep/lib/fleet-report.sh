# shellcheck shell=bash
# fleet-report.sh - the fleet's outputs: per-host results and aggregates,
# the verdicts, summary.csv, junit.xml, report.md and the summary on stdout.
#
# Owns: collect_fleet (tswap.results.fleet), fleet_verdicts
# (tswap.stats.fleet, tswap.stats.fleet_meta), fleet_checks (tswap.stats.check
# per host, tswap.stats.fleet_check), write_csv_fleet, write_junit
# (tswap.report.junit), write_fleet_report (tswap.report.fleet, fleet_text),
# print_fleet_summary (tswap.report.fleet_text). Reads: RUN/points/*/*/result.json,
# RUN/preflight/, RUN/sweep.json, the H_* arrays, MIN_READ, MIN_WRITE,
# OUTLIER_PCT. Writes: RUN/results.json, hosts/ID/{results,aggregate}.json,
# fleet-results.json, aggregate.json, fleet.json, summary.csv, junit.xml,
# report.md.

# collect_fleet: results.json (every host and repeat), hosts/ID/ (each
# host's results and aggregate, as for one host), and aggregate.json for the
# fleet: a host's median per point counts as one run of the point, so the
# fleet's figures are medians over hosts (and the CV is across hosts).
collect_fleet() {
	local h hd
	local -a aggs=() links=()
	collect 3 '[.host_index, .runkey]'
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		hd="$RUN/hosts/${H_ID[h]}"
		mkdir -p "$hd"
		jq --argjson i "$h" 'map(select(.host_index == $i))' "$RUN/results.json" >"$hd/results.json"
		# each host's points against its own PCIe link (tswap.stats.link)
		aggregate_json "$hd/results.json" per-run "$RUN/plan.json" '' \
			--link-meta "$RUN/preflight/${H_ID[h]}/meta.json" >"$hd/aggregate.json.tmp"
		mv -f "$hd/aggregate.json.tmp" "$hd/aggregate.json"
		aggs+=("$hd/aggregate.json")
		links+=(--link-meta "$RUN/preflight/${H_ID[h]}/meta.json")
	done
	py fleet-results "$RUN/plan.json" "${aggs[@]}" >"$RUN/fleet-results.json.tmp"
	mv -f "$RUN/fleet-results.json.tmp" "$RUN/fleet-results.json"
	# the fleet's medians against the fastest host link (tswap.stats.link)
	aggregate_json "$RUN/fleet-results.json" across-hosts "$RUN/plan.json" '' "${links[@]}" >"$RUN/aggregate.json.tmp"
	mv -f "$RUN/aggregate.json.tmp" "$RUN/aggregate.json"
}

# fleet_verdicts: fleet.json, each host's figures and checks, the fleet's
# median, spread and outliers. A host's read (write) figure is its best read
# (write) point, the median over repeats. Then each host's metadata
# (preflight/ID/meta.json, fleet-meta.sh) and the slow hosts grouped by how
# they differ (tswap.stats.fleet_meta).
fleet_verdicts() {
	py fleet-verdicts "$RUN" --min-read "$MIN_READ" --min-write "$MIN_WRITE" --outlier-pct "$OUTLIER_PCT" \
		>"$RUN/fleet.json.tmp"
	mv -f "$RUN/fleet.json.tmp" "$RUN/fleet.json"
}

# fleet_checks: fleet.json with each host's stack checks: tswap.stats.check
# (as tswap-check) on the collector's output the probe brought back
# (preflight/ID/target/meta.kv; nothing more runs on the host), against
# the settings of tswap.stats.check settings_for, then judged across the
# fleet (tswap.stats.fleet_check).
fleet_checks() {
	local h dir settings plan c all=''
	plan=$(plan_json "$RUN/plan.json")
	settings=$(py check-settings "$RUN/best-aio.json" <<<"$plan")
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		dir="$RUN/preflight/${H_ID[h]}"
		# shellcheck disable=SC2310 # a host whose checks do not run has none
		if jq -e '.collected == true' "$dir/meta.json" >/dev/null 2>&1 &&
			c=$(py check --target "${H_TARGET[h]}" --settings "$settings" <"$dir/target/meta.kv" 2>/dev/null); then
			all+=$c$'\n'
		elif [ -f "$dir/meta.json" ]; then
			all+=$(jq -c '{collected: false, note: (if .collected == false then .note else "metadata: the checks could not read it" end)}' "$dir/meta.json")$'\n'
		else
			all+=$'{"collected": false, "note": "metadata: not collected (the host was not probed in this run)"}\n'
		fi
	done
	py fleet-checks "$RUN/fleet.json" --settings "$settings" <<<"$all" >"$RUN/fleet.json.tmp"
	mv -f "$RUN/fleet.json.tmp" "$RUN/fleet.json"
}

# write_csv_fleet: summary.csv, one row per host, point and repeat, with the
# host's metadata (tswap.report.fleet_text CSV_META).
write_csv_fleet() {
	py fleet-csv "$RUN/results.json" "$RUN/fleet.json" >"$RUN/summary.csv.tmp"
	mv -f "$RUN/summary.csv.tmp" "$RUN/summary.csv"
}

# write_junit: junit.xml, one testsuite per host, one testcase per check
# (run, DIR_min_gbs, DIR_vs_fleet): pass, <failure> (below the bar, or an
# outlier) or <error> (the host or its runs failed).
write_junit() {
	py junit "$RUN/fleet.json" "$RUN/sweep.json" >"$RUN/junit.xml.tmp"
	mv -f "$RUN/junit.xml.tmp" "$RUN/junit.xml"
}

write_fleet_report() {
	local notes=''
	if [ -f "$RUN/notes.txt" ]; then notes=$(sort -u "$RUN/notes.txt"); fi
	{
		py fleet-report "$RUN" --notes "$notes"
		printf '## Plots\n\n'
		plot_links
		printf 'Files: junit.xml (one testcase per host and check), summary.csv (one row per host, point and repeat), fleet.json (figures and checks per host), results.json, aggregate.json (fleet medians), best-aio.json, hosts/ID/ (per host), preflight/ID/ (the probe), points/POINT.rN/ID/ (job.fio, run.sh, fio.client.out, fio.json, fio.stderr, result.json).\n'
	} >"$RUN/report.md.tmp"
	mv -f "$RUN/report.md.tmp" "$RUN/report.md"
}

# print_fleet_summary: each host's verdict and figures, the fleet median
# and the output files, on stdout.
print_fleet_summary() {
	say ""
	py fleet-summary "$RUN/fleet.json"
	say "report:     $RUN/report.md"
	say "csv:        $RUN/summary.csv"
	say "junit:      $RUN/junit.xml${JUNIT_OUT:+ (copied to $JUNIT_OUT)}"
}
