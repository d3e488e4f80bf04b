# shellcheck shell=bash
# fleet-report.sh - the fleet's outputs: per-host results and aggregates,
# the verdicts, summary.csv, junit.xml, report.md and the summary on stdout.
#
# Owns: collect_fleet (jq/fleet-results.jq), fleet_preflight_results,
# fleet_verdicts (jq/fleet-verdicts.jq, then jq/fleet-meta.jq),
# fleet_checks (jq/check.jq per host, jq/fleet-check.jq),
# write_csv_fleet (jq/fleet-csv.jq), write_junit (jq/junit.jq),
# write_fleet_report (jq/fleet-report.jq, jq/fleet-meta-report.jq,
# jq/fleet-check-report.jq),
# print_fleet_summary (jq/fleet-summary.jq). Reads: RUN/points/*/*/result.json,
# RUN/preflight/, RUN/sweep.json, the H_* arrays, MIN_READ, MIN_WRITE,
# OUTLIER_PCT. Writes: RUN/results.json, hosts/ID/{results,aggregate}.json,
# fleet-results.json, aggregate.json, fleet.json, summary.csv, junit.xml,
# report.md.

# collect_fleet: results.json (every host and repeat), hosts/ID/ (each
# host's results and aggregate, as for one host), and aggregate.json for the
# fleet: a host's median per point counts as one run of the point, so the
# fleet's figures are medians over hosts (and the CV is across hosts).
collect_fleet() {
	local h hd plan
	local -a aggs=()
	collect 3 '[.host_index, .runkey]'
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		hd="$RUN/hosts/${H_ID[h]}"
		mkdir -p "$hd"
		jq --argjson i "$h" 'map(select(.host_index == $i))' "$RUN/results.json" >"$hd/results.json"
		aggregate_json "$hd/results.json" per-run "$RUN/plan.json" >"$hd/aggregate.json.tmp"
		mv -f "$hd/aggregate.json.tmp" "$hd/aggregate.json"
		aggs+=("$hd/aggregate.json")
	done
	plan=$(plan_json "$RUN/plan.json")
	jq -s --slurpfile plan /dev/stdin -f "$JQ_DIR/fleet-results.jq" "${aggs[@]}" <<<"$plan" >"$RUN/fleet-results.json.tmp"
	mv -f "$RUN/fleet-results.json.tmp" "$RUN/fleet-results.json"
	aggregate_json "$RUN/fleet-results.json" across-hosts "$RUN/plan.json" >"$RUN/aggregate.json.tmp"
	mv -f "$RUN/aggregate.json.tmp" "$RUN/aggregate.json"
}

# fleet_preflight_results: each host's preflight result.json, or null, in
# host order.
fleet_preflight_results() {
	local h
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		if [ -f "$RUN/preflight/${H_ID[h]}/result.json" ]; then
			cat -- "$RUN/preflight/${H_ID[h]}/result.json"
		else
			printf 'null\n'
		fi
	done
}

# fleet_verdicts: fleet.json, each host's figures and checks, the fleet's
# median, spread and outliers. A host's read (write) figure is its best read
# (write) point, the median over repeats. Then each host's metadata and the
# slow hosts grouped by how they differ (fleet-meta.sh, jq/fleet-meta.jq).
fleet_verdicts() {
	local h aggs res pre plan metas fl
	local -a af=() rf=()
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		af+=("$RUN/hosts/${H_ID[h]}/aggregate.json")
		rf+=("$RUN/hosts/${H_ID[h]}/results.json")
	done
	aggs=$(jq -s . "${af[@]}")
	res=$(jq -s . "${rf[@]}")
	pre=$(fleet_preflight_results)
	plan=$(plan_json "$RUN/plan.json")
	metas=$(fleet_metas)
	fl=$(jq -n --slurpfile cfg "$RUN/sweep.json" --slurpfile aggs /dev/fd/3 --slurpfile res /dev/fd/4 \
		--slurpfile pre /dev/fd/5 --slurpfile plan /dev/fd/6 --arg minr "$MIN_READ" --arg minw "$MIN_WRITE" \
		--argjson out "$OUTLIER_PCT" -f "$JQ_DIR/fleet-verdicts.jq" 3<<<"$aggs" 4<<<"$res" 5<<<"$pre" 6<<<"$plan")
	jq --slurpfile metas /dev/fd/3 -f "$JQ_DIR/fleet-meta.jq" <<<"$fl" 3<<<"$metas" >"$RUN/fleet.json.tmp"
	mv -f "$RUN/fleet.json.tmp" "$RUN/fleet.json"
}

# fleet_checks: fleet.json with each host's stack checks: jq/check.jq (as
# tswap-check) on the collector's output the probe brought back
# (preflight/ID/target/meta.kv; nothing more runs on the host), against
# the settings of jq/check-settings.jq, then judged across the fleet
# (jq/fleet-check.jq).
fleet_checks() {
	local h dir settings plan c hc all=''
	local -a s=()
	plan=$(plan_json "$RUN/plan.json")
	settings=$(jq -c --slurpfile plan /dev/stdin -f "$JQ_DIR/check-settings.jq" "$RUN/best-aio.json" <<<"$plan")
	c=$(jq -r '.block_size, .queue_depth, .threads, .backend' <<<"$settings")
	mapfile -t s <<<"$c"
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		dir="$RUN/preflight/${H_ID[h]}"
		# shellcheck disable=SC2310 # a host whose checks do not run has none
		if jq -e '.collected == true' "$dir/meta.json" >/dev/null 2>&1 &&
			c=$(jq -R -n --arg target "${H_TARGET[h]}" --argjson bs "${s[0]}" --argjson qd "${s[1]}" \
				--argjson threads "${s[2]}" --arg backend "${s[3]}" --arg sysroot '' \
				-f "$JQ_DIR/check.jq" <"$dir/target/meta.kv" 2>/dev/null); then
			all+=$c$'\n'
		elif [ -f "$dir/meta.json" ]; then
			all+=$(jq -c '{collected: false, note: (if .collected == false then .note else "metadata: the checks could not read it" end)}' "$dir/meta.json")$'\n'
		else
			all+=$'{"collected": false, "note": "metadata: not collected (the host was not probed in this run)"}\n'
		fi
	done
	hc=$(jq -s . <<<"$all")
	jq --slurpfile hc /dev/stdin --argjson settings "$settings" <<<"$hc" \
		-f "$JQ_DIR/fleet-check.jq" "$RUN/fleet.json" >"$RUN/fleet.json.tmp"
	mv -f "$RUN/fleet.json.tmp" "$RUN/fleet.json"
}

# The host's metadata in each row of summary.csv (jq/fleet-meta.jq's
# fields, and why they are empty when they are).
readonly FLEET_CSV_META=model,firmware,capacity_bytes,logical_block_size,pcie_speed,pcie_width,pcie_max_speed,pcie_max_width,numa_node,scheduler,nr_requests,max_sectors_kb,fs_type,kernel,cpus,memory_bytes,metadata_note

write_csv_fleet() {
	write_csv "host,address,point,repeat,status,direction,backend,tensor_size,block_size,queue_depth,submit,window,threads,iodepth,gbs,ops_per_s,clat_p50_us,clat_p99_us,clat_p999_us,usr_cpu_pct,sys_cpu_pct,io_submit_per_gb,pct_of_ceiling,error,$FLEET_CSV_META" \
		fleet-csv.jq --slurpfile fl "$RUN/fleet.json" --arg meta "$FLEET_CSV_META"
}

# write_junit: junit.xml, one testsuite per host, one testcase per check
# (run, DIR_min_gbs, DIR_vs_fleet): pass, <failure> (below the bar, or an
# outlier) or <error> (the host or its runs failed).
write_junit() {
	jq -r --slurpfile cfg "$RUN/sweep.json" -f "$JQ_DIR/junit.jq" "$RUN/fleet.json" >"$RUN/junit.xml.tmp"
	mv -f "$RUN/junit.xml.tmp" "$RUN/junit.xml"
}

write_fleet_report() {
	local notes='' h hagg
	local -a aggs=()
	if [ -f "$RUN/notes.txt" ]; then notes=$(sort -u "$RUN/notes.txt"); fi
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		aggs+=("$RUN/hosts/${H_ID[h]}/aggregate.json")
	done
	hagg=$(jq -s . "${aggs[@]}")
	{
		jq -r --slurpfile fl "$RUN/fleet.json" --slurpfile agg "$RUN/aggregate.json" \
			--slurpfile hagg /dev/stdin --slurpfile aio "$RUN/best-aio.json" \
			--arg notes "$notes" -f "$JQ_DIR/fleet-report.jq" "$RUN/sweep.json" <<<"$hagg"
		jq -r -f "$JQ_DIR/fleet-meta-report.jq" "$RUN/fleet.json"
		jq -r -f "$JQ_DIR/fleet-check-report.jq" "$RUN/fleet.json"
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
	jq -r -f "$JQ_DIR/fleet-summary.jq" "$RUN/fleet.json"
	say "report:     $RUN/report.md"
	say "csv:        $RUN/summary.csv"
	say "junit:      $RUN/junit.xml${JUNIT_OUT:+ (copied to $JUNIT_OUT)}"
}
