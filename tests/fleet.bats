#!/usr/bin/env bats
# tests/fleet.bats - tswap-sweep --hosts (fleet mode, docs/fleet.md) on a
# fleet that runs: per-host rows, verdicts, JUnit, the report, metadata
# grouping, a user grid and --resume. Real `fio --server` processes on
# loopback addresses (tests/fleet.bash); failing hosts (unreachable, hung,
# killed), refused targets and bad hosts files are tests/fleet-hosts.bats.
# The whole file takes about a minute.

# '${...}' in single quotes are literal fio/jq text.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

load helpers
load fleet

# --- tests ----------------------------------------------------------------------------

@test "fleet smoke: per-host rows, a rate-limited host is below the bar and an outlier, JUnit per host and check" {
	command -v xmllint >/dev/null || skip "requires xmllint (libxml2-utils, make deps)"
	start_servers
	mkdir -p "$SCRATCH/host3/with space"
	hosts_file "# three fio servers on loopback, one slowed by a fio rate limit" \
		"127.0.0.2,$PORT target=$SCRATCH/host2/tswap.swap" \
		"127.0.0.3,$PORT   target=\"$SCRATCH/host3/with space/tswap.swap\"   # a quoted path" \
		"" \
		"127.0.0.4,$PORT target=$SCRATCH/host4/tswap.swap rate=4m name=slow-host"
	local rd=$SCRATCH/smoke
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 2 --ramp 0 \
		--min-read-gbs 0.01 --min-write-gbs 0.01 --out "$rd" --junit "$SCRATCH/ci/tswap-fleet.xml"
	# some hosts below the bar: exit 1, as a missed threshold
	expect_status 1
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	local fout=$output ferr=$stderr
	assert_output --partial "FAIL  slow-host"
	assert_output --partial "PASS  127.0.0.2:$PORT"
	# the engine is the installed one, the same path for every host; each
	# host wrote its own target
	grep -qxF "ioengine=external:$FLEET_PREFIX/lib/fio/tswap.so" "$rd"/points/write-*.r1/h01-*/job.fio ||
		fail "job.fio does not use the installed engine"
	grep -qx 'rate=4m' "$rd"/points/read-*.r1/h03-slow-host/job.fio || fail "the slow host's job has no rate=4m"
	! grep -q 'rate=' "$rd"/points/read-*.r1/h01-*/job.fio || fail "rate= leaked into another host's job"
	assert_file_exists "$SCRATCH/host2/tswap.swap"
	assert_file_exists "$SCRATCH/host3/with space/tswap.swap"
	assert_file_exists "$SCRATCH/host4/tswap.swap"
	# summary.csv: a host column, one row per host and point (2 points: write, read)
	head -n 1 "$rd/summary.csv" | grep -q '^host,address,point,repeat,status,direction,' ||
		fail "unexpected CSV header: $(head -n 1 "$rd/summary.csv")"
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c .)" 6
	assert_equal "$(rows "$rd/summary.csv" "127.0.0.2:$PORT")" 2
	assert_equal "$(rows "$rd/summary.csv" "127.0.0.3:$PORT")" 2
	assert_equal "$(rows "$rd/summary.csv" slow-host)" 2
	assert_equal "$(csv_col "$rd/summary.csv" status | sort -u)" ok
	# the slow host is below 0.01 GB/s (its rate limit: 0.004), the others above
	local gbs
	while IFS=, read -r host gbs; do
		if [ "$host" = slow-host ]; then
			awk -v g="$gbs" 'BEGIN { exit !(g < 0.01) }' || fail "slow-host at $gbs GB/s"
		else
			awk -v g="$gbs" 'BEGIN { exit !(g >= 0.01) }' || fail "$host at $gbs GB/s, below the bar"
		fi
	done < <(paste -d, <(csv_col "$rd/summary.csv" host) <(csv_col "$rd/summary.csv" gbs))
	# report.md: the per-host table with verdicts, the fleet median, spread, outliers
	grep -q '^\*\*FAIL\*\*: 1 of 3 host(s) below the bar or outliers (slow-host); 2 pass' "$rd/report.md" ||
		fail "no FAIL verdict in report.md"
	grep -q "^| 127.0.0.2:$PORT | PASS | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |  |$" "$rd/report.md" ||
		fail "no PASS row for 127.0.0.2 in report.md"
	grep -q '^| slow-host | FAIL | [0-9.]* ! | [0-9.]* ! |.*read_min_gbs: best read [0-9.]* GB/s < 0.01 GB/s.*read_vs_fleet: .*(outlier)' "$rd/report.md" ||
		fail "no FAIL row with threshold and outlier for slow-host in report.md"
	grep -q '^| read | 3 | [0-9.]* | [0-9.]* (slow-host) | [0-9.]* ([^)]*) | [0-9.]*% | [0-9.]*% | [0-9.]* | slow-host |$' "$rd/report.md" ||
		fail "no fleet row (median, spread, outliers) for read in report.md"
	grep -q '^| write | 3 | .* | slow-host |$' "$rd/report.md" || fail "no fleet row for write in report.md"
	# junit.xml: well formed, one testsuite per host, one testcase per host and check
	local xml=$rd/junit.xml
	xmllint --noout "$xml"
	cmp -s "$xml" "$SCRATCH/ci/tswap-fleet.xml" || fail "--junit did not copy junit.xml"
	assert_equal "$(xmllint --xpath 'count(/testsuites/testsuite)' "$xml")" 3
	# the GB/s checks (tswap-fleet.ID), then each host's stack checks
	# (tswap-check.ID, tests/fleet-check.bats): this machine's, so their
	# verdicts are counted from fleet.json
	assert_equal "$(xmllint --xpath 'count(//testsuite/testcase[starts-with(@classname, "tswap-fleet.")])' "$xml")" 15
	assert_equal "$(xmllint --xpath 'count(//testsuite/testcase[starts-with(@classname, "tswap-check.")])' "$xml")" \
		"$(jq '[.hosts[].stack_checks[]] | length' "$rd/fleet.json")"
	jq -e '.hosts | map(.stack_checks | length >= 16) | all' "$rd/fleet.json" >/dev/null || fail "a host without its stack checks"
	assert_equal "$(xmllint --xpath 'string(/testsuites/@tests)' "$xml")" "$(jq '15 + ([.hosts[].stack_checks[]] | length)' "$rd/fleet.json")"
	assert_equal "$(xmllint --xpath 'string(/testsuites/@failures)' "$xml")" \
		"$(jq '4 + ([.hosts[].stack_checks[] | select(.verdict == "fail")] | length)' "$rd/fleet.json")"
	assert_equal "$(xmllint --xpath 'string(/testsuites/@errors)' "$xml")" 0
	local suite
	for suite in "127.0.0.2:$PORT" "127.0.0.3:$PORT" slow-host; do
		assert_equal "$(xmllint --xpath "count(//testsuite[@name='$suite']/testcase[starts-with(@classname, 'tswap-fleet.')])" "$xml")" 5
		run xmllint --xpath "//testsuite[@name='$suite']/testcase/@name" "$xml"
		assert_output --partial 'name="run"'
		assert_output --partial 'name="read_min_gbs"'
		assert_output --partial 'name="write_vs_fleet"'
	done
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='slow-host']/testcase/failure[@type='threshold'])" "$xml")" 2
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='slow-host']/testcase/failure[@type='outlier'])" "$xml")" 2
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='127.0.0.2:$PORT']/testcase[starts-with(@classname, 'tswap-fleet.')]/failure)" "$xml")" 0
	assert_equal "$(xmllint --xpath "string(//testsuite[@name='127.0.0.3:$PORT']/properties/property[@name='target']/@value)" "$xml")" \
		"$SCRATCH/host3/with space/tswap.swap"
	# progress on stderr, results on stdout
	grep -q '^\[1/2\] write ' <<<"$ferr" || fail "no progress line on stderr: $ferr"
	grep -q '^preflight: probing 3 host(s)' <<<"$ferr" || fail "no preflight line on stderr: $ferr"
	! grep -q '^\[[0-9]*/[0-9]*\] \|^preflight\|^tswap-sweep: grid ' <<<"$fout" || fail "progress on stdout: $fout"
	grep -q '^report:     ' <<<"$fout" || fail "no report line on stdout: $fout"
	# each host's metadata, read on the host by the probe: present, typed,
	# and this machine's (the three servers run here)
	local h
	for h in 0 1 2; do
		run -0 jq -r --argjson h "$h" '.hosts[$h].meta | [.collected, .target.kind, .target.filesystem.type,
			(.device.logical_block_size | type), (.host.cpus | type), (.host.memory_bytes | type),
			(.host.fs_aio_max_nr | type), .host.kernel, .versions.fio, .nvme.note] | map(tostring) | join(" ")' "$rd/fleet.json"
		assert_output "true file $(findmnt -n -o FSTYPE -T "$SCRATCH") number number number number $(uname -r) $(fio --version) not an NVMe device"
		jq -e --argjson h "$h" '.hosts[$h].meta.target.path == .hosts[$h].target' "$rd/fleet.json" >/dev/null ||
			fail "host $h's meta names another target"
	done
	assert_file_exists "$rd/preflight/h01-127_0_0_2_$PORT/meta.json"
	# nothing of the probe is left in the servers' directories
	assert_equal "$(find "$SCRATCH"/host[234] -name '*.prerun.txt' | wc -l)" 0
	# summary.csv: the key fields in every row
	assert_equal "$(csv_col "$rd/summary.csv" kernel | sort -u)" "$(uname -r)"
	assert_equal "$(csv_col "$rd/summary.csv" fs_type | sort -u)" "$(findmnt -n -o FSTYPE -T "$SCRATCH")"
	assert_equal "$(csv_col "$rd/summary.csv" metadata_note | sort -u)" ""
	# report.md: a row per host, and the slow host (identical here) grouped
	assert_equal "$(sed -n '/^## What each host is/,/^### /p' "$rd/report.md" | grep -c "^| .* | $(fio --version) |$")" 3
	grep -qxF -- '- 1 of 1 slow host: no difference from the fleet'"'"'s majority in the recorded fields (slow-host)' "$rd/report.md" ||
		fail "no grouping of the slow host in report.md: $(sed -n '/^### Slow/,/^## /p' "$rd/report.md")"
}

@test "fleet metadata: slow hosts grouped by the fields in which they differ from the majority (fixture data)" {
	# one real meta.json of this machine, varied per host: 4 fast hosts at
	# PCIe x4, 3 slow at x2 (one also with another scheduler), 1 without
	# metadata
	meta_of /x "$SCRATCH/t.swap" >"$SCRATCH/meta.json"
	jq -s '.[0] as $m | [range(0; 8) as $i | $m
		| .pcie = {address: "0000:01:00.0", current_link_speed: "16.0 GT/s PCIe", max_link_speed: "16.0 GT/s PCIe",
			   current_link_width: (if $i >= 4 and $i < 7 then 2 else 4 end), max_link_width: 4}
		| if $i == 6 then .queue.scheduler = "none" else . end
		| if $i == 7 then {collected: false, note: "metadata: not collected (no answer to the probe)"} else . + {collected: true} end]' \
		"$SCRATCH/meta.json" >"$SCRATCH/metas.json"
	jq -n '{hosts: ([("a", "b", "c", "d") as $l | {label: $l, verdict: "PASS"}] + [("e", "f", "g", "h") as $l | {label: $l, verdict: "FAIL"}])}' >"$SCRATCH/fleet.json"
	fleet_py 'from tswap.stats.fleet_meta import with_meta; out(with_meta(doc(1), doc(2)))' \
		"$SCRATCH/fleet.json" "$SCRATCH/metas.json" >"$SCRATCH/out.json"
	run -0 jq -r '.slow_groups[].text' "$SCRATCH/out.json"
	assert_output "$(printf '%s\n' '3 of 4 slow hosts: PCIe x2 instead of x4 (e, f, g)' \
		'1 of 4 slow hosts: scheduler none instead of mq-deadline (g)' \
		'1 of 4 slow hosts: metadata not collected (h)')"
	# the majority is of the hosts with metadata; no majority, no comparison
	assert_equal "$(jq '.meta_majority.pcie_width' "$SCRATCH/out.json")" 4
	assert_equal "$(jq -c '.hosts[4].differences' "$SCRATCH/out.json")" '[{"field":"pcie_width","value":2,"majority":4}]'
	assert_equal "$(jq -c '.hosts[0].differences, .hosts[7].differences' "$SCRATCH/out.json" | tr '\n' ' ')" '[] null '
	# the report: the differing fields bold, the host without metadata says why
	fleet_py 'from tswap.report.fleet_text import meta_report; print("\n".join(meta_report(doc(1))))' \
		"$SCRATCH/out.json" >"$SCRATCH/report.md"
	grep -q '^| g | .* PCIe \*\*x2\*\* (16.0 GT/s PCIe x4) | .* | \*\*none\*\*, ' "$SCRATCH/report.md" || fail "$(cat "$SCRATCH/report.md")"
	grep -qF '| h | metadata: not collected (no answer to the probe) |' "$SCRATCH/report.md" || fail "$(cat "$SCRATCH/report.md")"
	grep -qxF -- '- 3 of 4 slow hosts: PCIe x2 instead of x4 (e, f, g)' "$SCRATCH/report.md" || fail "$(cat "$SCRATCH/report.md")"
}

@test "fleet grid: a small user grid with the ceiling on three hosts, per-host rows for every point, --resume re-judges" {
	start_servers
	local grid=$SCRATCH/two.grid rd=$SCRATCH/grid
	printf '%s\n' 'description two block sizes' 'rw read write' 'block 1m 2m' 'qd 8' 'iodepth 2' >"$grid"
	# --target is the default; one host has its own. --outlier-pct 90: the
	# hosts share one disk here, and the verdict must not depend on its noise
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/tswap.swap" "127.0.0.3,$PORT" \
		"127.0.0.4,$PORT name=third target=$SCRATCH/host4/own.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid "$grid" --target "$SCRATCH/host3/default.swap" "${SMALL[@]}" \
		--io-size 64m --outlier-pct 90 --out "$rd"
	expect_status 0
	# 4 points x 3 hosts, each with its % of its own ceiling
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c .)" 12
	assert_equal "$(rows "$rd/summary.csv" third)" 4
	assert_equal "$(csv_col "$rd/summary.csv" status | sort -u)" ok
	! csv_col "$rd/summary.csv" pct_of_ceiling | grep -qvx '[0-9.]*[0-9]' ||
		fail "a row without % of ceiling: $(cat "$rd/summary.csv")"
	assert_file_exists "$SCRATCH/host4/own.swap"
	assert_file_exists "$SCRATCH/host3/default.swap"
	# the ceiling ran on every host (fio's libaio engine, through the client)
	assert_equal "$(find "$rd"/points/ceiling-*.r1 -name result.json | wc -l)" 6
	# the report: every point with the fleet median and one column per host
	grep -q "^| point | fleet median | CV across hosts | flags | 127.0.0.2:$PORT | 127.0.0.3:$PORT | third |$" "$rd/report.md" ||
		fail "no per-host point table in report.md"
	assert_equal "$(grep -c '^| \(read\|write\)-libaio-t4m-b[12]m-q8-block-overlap-p1-d2 | [0-9.]* | ' "$rd/report.md")" 4
	# its flags column: the fleet aggregate's flags of that point
	local p
	for p in $(jq -r '.points[].point' "$rd/aggregate.json"); do
		assert_equal "$(grep -F "| $p | " "$rd/report.md" | head -n 1 | cut -d '|' -f 5 | sed 's/^ //; s/ $//')" \
			"$(jq -r --arg p "$p" '.points[] | select(.point == $p) | .flags | if length == 0 then "-" else join(", ") end' "$rd/aggregate.json")"
	done
	grep -q '^\*\*PASS\*\*: all 3 host(s) pass' "$rd/report.md" || fail "no PASS verdict"
	# per host: GB/s, % of the fleet median and % of its own ceiling, per direction
	grep -q '^| third | PASS | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |  |$' "$rd/report.md" ||
		fail "no host row with % of ceiling in report.md"
	# fleet medians feed best-aio.json: the config of the fleet aggregate's
	# libaio pick. The three hosts share one disk and run each point at
	# once, so a point can read above its host's ceiling and be flagged;
	# when every point is, there is no config, and the report says why
	if jq -e '.best.aio_source != null' "$rd/aggregate.json" >/dev/null; then
		assert_equal "$(jq -c '.aio | [.block_size, .queue_depth, .single_submit, .overlap_events]' "$rd/best-aio.json")" \
			"$(jq -c '.best.aio_source | [.block, .qd, .submit == "single", .window == "overlap"]' "$rd/aggregate.json")"
	else
		jq -e '.trusted == false and .aio == null' "$rd/best-aio.json" >/dev/null ||
			fail "best-aio.json: $(cat "$rd/best-aio.json")"
		grep -q '^No trustworthy libaio point' "$rd/report.md" || fail "report.md does not say why there is no config"
	fi
	[ "$(head -c 8 "$rd/plots/hosts.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "plots/hosts.png is not a PNG"
	# --resume of a finished fleet run runs nothing and re-judges
	fleet --resume "$rd" --min-read-gbs 100000 --quiet
	expect_status 1
	# --quiet: no progress; the results and the verdict stay on stdout
	assert_equal "$stderr" ""
	assert_output --partial 'FAIL  third'
	fleet --resume "$rd" --min-read-gbs 100000
	expect_status 1
	assert_equal "$(grep -c 'done earlier on all 3 hosts' <<<"$stderr")" 6
	refute_output --partial 'preflight'
	[[ $stderr != *preflight* ]] || fail "a preflight on --resume of a finished run: $stderr"
	assert_output --partial 'FAIL  third'
}

@test "fleet: the controller runs without jq, setsid, setpriv and flock" {
	start_servers
	local grid=$SCRATCH/one.grid rd=$SCRATCH/notools
	printf '%s\n' 'rw read' 'block 1m' 'qd 8' 'iodepth 2' >"$grid"
	hosts_file "127.0.0.2,$PORT" "127.0.0.3,$PORT"
	(
		hide_tools jq setsid setpriv flock
		fleet --hosts "$SCRATCH/hosts.txt" --grid "$grid" --target "$SCRATCH/nt/t.swap" "${SMALL[@]}" \
			--io-size 8m --no-ceiling --outlier-pct 100 --out "$rd"
		expect_status 0
	)
	expect_ok_rows "$rd/summary.csv" 2
}
