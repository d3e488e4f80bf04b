#!/usr/bin/env bats
# tests/fleet.bats - tswap-sweep --hosts (fleet mode, docs/fleet.md) against
# real `fio --server` processes on loopback addresses 127.0.0.2, .3 and .4
# (one random free port), each with its own target directory on a
# block-backed filesystem. The sweep runs from an installed layout
# (PREFIX/bin, PREFIX/share/tswap/{grids,lib,jq}, PREFIX/lib/fio/tswap.so), so the
# engine path it gives the servers is its default, the installed one.
#
# Every server is started by a test and stopped by the teardown, by PID
# (with its children: fio --server forks a process per connection and per
# job). The whole file takes about a minute and a half.

# '${...}' in single quotes are literal fio/jq text.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	local g
	[ -f "$ENGINE" ] || return 0 # setup() says why
	FLEET_PREFIX=$BATS_FILE_TMPDIR/prefix
	install -D -m 0755 "$REPO/sweep/tswap-sweep" "$FLEET_PREFIX/bin/tswap-sweep"
	for g in "$REPO"/sweep/grids/*.grid; do
		install -D -m 0644 "$g" "$FLEET_PREFIX/share/tswap/grids/${g##*/}"
	done
	for g in "$REPO"/sweep/lib/*.sh "$REPO"/sweep/jq/*.jq; do
		install -D -m 0644 "$g" "$FLEET_PREFIX/share/tswap/${g#"$REPO"/sweep/}"
	done
	install -D -m 0755 "$ENGINE" "$FLEET_PREFIX/lib/fio/tswap.so"
	export FLEET_PREFIX
}

setup() {
	common_setup
	FLEET_SWEEP=$FLEET_PREFIX/bin/tswap-sweep
	SERVER_PIDS=()
	PORT=
}

teardown() {
	stop_servers
	common_teardown
}

# --- fio servers ----------------------------------------------------------------

# tcp_hex ADDR PORT: the local address as /proc/net/tcp writes it.
tcp_hex() {
	local o1 o2 o3 o4
	IFS=. read -r o1 o2 o3 o4 <<<"$1"
	printf '%02X%02X%02X%02X:%04X\n' "$o4" "$o3" "$o2" "$o1" "$2"
}

# port_in_use PORT: something listens on PORT (any address).
port_in_use() {
	awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# listening ADDR PORT
listening() {
	awk -v h="$(tcp_hex "$1" "$2")" '$2 == h && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

# start_server N: fio --server on 127.0.0.N:$PORT, in $SCRATCH/hostN (its
# own session, fd 3 closed for bats); its PID in SERVER_PIDS[N].
start_server() {
	local n=$1 dir=$SCRATCH/host$1 i
	mkdir -p "$dir"
	(cd "$dir" && exec setsid fio --server="127.0.0.$n,$PORT" >>"$dir/server.log" 2>&1 </dev/null 3>&-) &
	SERVER_PIDS[n]=$!
	for ((i = 0; i < 100; i++)); do
		listening "127.0.0.$n" "$PORT" && return 0
		sleep 0.05
	done
	fail "fio --server=127.0.0.$n,$PORT is not listening after 5 s: $(cat "$dir/server.log")"
}

# start_servers: a free port, and servers on 127.0.0.2, .3 and .4.
start_servers() {
	local try n
	for ((try = 0; try < 50; try++)); do
		PORT=$((20000 + RANDOM % 40000))
		port_in_use "$PORT" || break
	done
	for n in 2 3 4; do
		start_server "$n"
	done
}

# proc_tree PID: PID and all its descendants, parents first.
proc_tree() {
	local pid=$1 child
	printf '%s\n' "$pid"
	for child in $(pgrep -P "$pid" 2>/dev/null || true); do
		proc_tree "$child"
	done
}

# kill_server N: the server and everything it runs die at once (a host
# that dies mid-run).
kill_server() {
	local pid
	local -a tree=()
	mapfile -t tree < <(proc_tree "${SERVER_PIDS[$1]}")
	for pid in "${tree[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait "${SERVER_PIDS[$1]}" 2>/dev/null || true
	unset "SERVER_PIDS[$1]"
}

stop_servers() {
	local n
	# SIGKILL ends a stopped (SIGSTOP) server too
	for n in "${!SERVER_PIDS[@]}"; do
		kill_server "$n"
	done
	SERVER_PIDS=()
}

# --- running the sweep -------------------------------------------------------------

# Small and fast: 4 MiB tensors in a 32 MiB region of each target.
SMALL=(--size 32m --tensor-size 4m)

fleet() {
	run --separate-stderr timeout -k 10 180 "$FLEET_SWEEP" "$@"
}

show_fleet() {
	printf 'tswap-sweep exit %s\n--- stdout\n%s\n--- stderr\n%s\n---\n' \
		"$status" "$output" "${stderr:-}" >&2
}

# expect_status N: the last fleet run exited N (else show it).
expect_status() {
	if [ "$status" -ne "$1" ]; then
		show_fleet
		fail "tswap-sweep exited $status, expected $1"
	fi
}

# csv_col FILE NAME: the values of column NAME, one per row (RFC 4180
# quoting: the address column holds a comma).
csv_col() {
	awk -v name="$2" '
	function parse(line,   i, c, f, q, n) {
		n = 0; f = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) {
				if (c == "\"" && substr(line, i + 1, 1) == "\"") { f = f c; i++ }
				else if (c == "\"") q = 0
				else f = f c
			} else if (c == "\"") q = 1
			else if (c == ",") { F[++n] = f; f = "" }
			else f = f c
		}
		F[++n] = f
		return n
	}
	NR == 1 { n = parse($0); for (i = 1; i <= n; i++) if (F[i] == name) col = i; next }
	{ parse($0); print F[col] }' "$1"
}

# rows FILE HOST: CSV rows of HOST (first column).
rows() {
	grep -c "^\"$2\"," "$1" || true
}

# expect_ok_rows FILE N: N rows of summary.csv FILE say ok (else show it).
expect_ok_rows() {
	local n
	n=$(grep -c '"ok"' "$1" || true)
	if [ "$n" -ne "$2" ]; then
		show_fleet
		cat "$1" >&2
		fail "$n rows ok in $1, expected $2"
	fi
}

hosts_file() {
	printf '%s\n' "$@" >"$SCRATCH/hosts.txt"
}

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
		--min-read-gbs 0.05 --min-write-gbs 0.05 --out "$rd" --junit "$SCRATCH/ci/tswap-fleet.xml"
	# some hosts below the bar: exit 1, as a missed threshold
	expect_status 1
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
	# the slow host is below 0.05 GB/s, the others above
	local gbs
	while IFS=, read -r host gbs; do
		if [ "$host" = slow-host ]; then
			awk -v g="$gbs" 'BEGIN { exit !(g < 0.05) }' || fail "slow-host at $gbs GB/s"
		else
			awk -v g="$gbs" 'BEGIN { exit !(g >= 0.05) }' || fail "$host at $gbs GB/s, below the bar"
		fi
	done < <(paste -d, <(csv_col "$rd/summary.csv" host) <(csv_col "$rd/summary.csv" gbs))
	# report.md: the per-host table with verdicts, the fleet median, spread, outliers
	grep -q '^\*\*FAIL\*\*: 1 of 3 host(s) below the bar or outliers (slow-host); 2 pass' "$rd/report.md" ||
		fail "no FAIL verdict in report.md"
	grep -q "^| 127.0.0.2:$PORT | PASS | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |  |$" "$rd/report.md" ||
		fail "no PASS row for 127.0.0.2 in report.md"
	grep -q '^| slow-host | FAIL | [0-9.]* ! | [0-9.]* ! |.*read_min_gbs: best read [0-9.]* GB/s < 0.05 GB/s.*read_vs_fleet: .*(outlier)' "$rd/report.md" ||
		fail "no FAIL row with threshold and outlier for slow-host in report.md"
	grep -q '^| read | 3 | [0-9.]* | [0-9.]* (slow-host) | [0-9.]* ([^)]*) | [0-9.]*% | [0-9.]*% | [0-9.]* | slow-host |$' "$rd/report.md" ||
		fail "no fleet row (median, spread, outliers) for read in report.md"
	grep -q '^| write | 3 | .* | slow-host |$' "$rd/report.md" || fail "no fleet row for write in report.md"
	# junit.xml: well formed, one testsuite per host, one testcase per host and check
	local xml=$rd/junit.xml
	xmllint --noout "$xml"
	cmp -s "$xml" "$SCRATCH/ci/tswap-fleet.xml" || fail "--junit did not copy junit.xml"
	assert_equal "$(xmllint --xpath 'count(/testsuites/testsuite)' "$xml")" 3
	assert_equal "$(xmllint --xpath 'count(//testsuite/testcase)' "$xml")" 15
	assert_equal "$(xmllint --xpath 'string(/testsuites/@tests)' "$xml")" 15
	assert_equal "$(xmllint --xpath 'string(/testsuites/@failures)' "$xml")" 4
	assert_equal "$(xmllint --xpath 'string(/testsuites/@errors)' "$xml")" 0
	local suite
	for suite in "127.0.0.2:$PORT" "127.0.0.3:$PORT" slow-host; do
		assert_equal "$(xmllint --xpath "count(//testsuite[@name='$suite']/testcase)" "$xml")" 5
		run xmllint --xpath "//testsuite[@name='$suite']/testcase/@name" "$xml"
		assert_output --partial 'name="run"'
		assert_output --partial 'name="read_min_gbs"'
		assert_output --partial 'name="write_vs_fleet"'
	done
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='slow-host']/testcase/failure[@type='threshold'])" "$xml")" 2
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='slow-host']/testcase/failure[@type='outlier'])" "$xml")" 2
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='127.0.0.2:$PORT']//failure)" "$xml")" 0
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
	SCRIPT_DIR=$REPO/sweep SWEEP_HOME=$REPO/sweep bash -c '
		set -euo pipefail
		. "$SWEEP_HOME/lib/state.sh"; . "$SWEEP_HOME/lib/util.sh"
		. "$SWEEP_HOME/lib/paths.sh"; . "$SWEEP_HOME/lib/meta.sh"
		ENGINE=/x meta_json "$1"' meta "$SCRATCH/t.swap" >"$SCRATCH/meta.json"
	jq -s '.[0] as $m | [range(0; 8) as $i | $m
		| .pcie = {address: "0000:01:00.0", current_link_speed: "16.0 GT/s PCIe", max_link_speed: "16.0 GT/s PCIe",
			   current_link_width: (if $i >= 4 and $i < 7 then 2 else 4 end), max_link_width: 4}
		| if $i == 6 then .queue.scheduler = "none" else . end
		| if $i == 7 then {collected: false, note: "metadata: not collected (no answer to the probe)"} else . + {collected: true} end]' \
		"$SCRATCH/meta.json" >"$SCRATCH/metas.json"
	jq -n '{hosts: ([("a", "b", "c", "d") as $l | {label: $l, verdict: "PASS"}] + [("e", "f", "g", "h") as $l | {label: $l, verdict: "FAIL"}])}' >"$SCRATCH/fleet.json"
	jq --slurpfile metas "$SCRATCH/metas.json" -f "$REPO/sweep/jq/fleet-meta.jq" "$SCRATCH/fleet.json" >"$SCRATCH/out.json"
	run -0 jq -r '.slow_groups[].text' "$SCRATCH/out.json"
	assert_output "$(printf '%s\n' '3 of 4 slow hosts: PCIe x2 instead of x4 (e, f, g)' \
		'1 of 4 slow hosts: scheduler none instead of mq-deadline (g)' \
		'1 of 4 slow hosts: metadata not collected (h)')"
	# the majority is of the hosts with metadata; no majority, no comparison
	assert_equal "$(jq '.meta_majority.pcie_width' "$SCRATCH/out.json")" 4
	assert_equal "$(jq -c '.hosts[4].differences' "$SCRATCH/out.json")" '[{"field":"pcie_width","value":2,"majority":4}]'
	assert_equal "$(jq -c '.hosts[0].differences, .hosts[7].differences' "$SCRATCH/out.json" | tr '\n' ' ')" '[] null '
	# the report: the differing fields bold, the host without metadata says why
	jq -r -f "$REPO/sweep/jq/fleet-meta-report.jq" "$SCRATCH/out.json" >"$SCRATCH/report.md"
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
		--io-size 8m --outlier-pct 90 --out "$rd"
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
	grep -q "^| point | fleet median | CV across hosts | 127.0.0.2:$PORT | 127.0.0.3:$PORT | third |$" "$rd/report.md" ||
		fail "no per-host point table in report.md"
	assert_equal "$(grep -c '^| \(read\|write\)-libaio-t4m-b[12]m-q8-block-overlap-p1-d2 | [0-9.]* | ' "$rd/report.md")" 4
	grep -q '^\*\*PASS\*\*: all 3 host(s) pass' "$rd/report.md" || fail "no PASS verdict"
	# per host: GB/s, % of the fleet median and % of its own ceiling, per direction
	grep -q '^| third | PASS | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |  |$' "$rd/report.md" ||
		fail "no host row with % of ceiling in report.md"
	# fleet medians feed best-aio.json and the plots
	jq -e '.aio | (.block_size | type == "number") and (.overlap_events | type == "boolean")' "$rd/best-aio.json" >/dev/null ||
		fail "best-aio.json: $(cat "$rd/best-aio.json")"
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

@test "fleet: an unreachable host, a host without the engine, an engine for another fio, a wrong fio version: each said, the others kept" {
	requires wrongver
	start_servers
	local rd=$SCRATCH/errs
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/tswap.swap" \
		"127.0.0.3,$PORT target=$SCRATCH/host3/tswap.swap" \
		"127.0.0.4,$PORT target=$SCRATCH/host4/tswap.swap name=no-engine engine=/nonexistent/lib/fio/tswap.so" \
		"127.0.0.4,$PORT target=$SCRATCH/host4/old.swap name=old-engine engine=$WRONGVER_ENGINE" \
		"127.0.0.5,$PORT target=$SCRATCH/host5.swap name=no-server"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --out "$rd" \
		--min-read-gbs 0.000001 --outlier-pct 90
	expect_status 3
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c .)" 10
	expect_ok_rows "$rd/summary.csv" 4
	assert_equal "$(grep -c "^\"127.0.0.[23]:$PORT\",.*\"ok\"" "$rd/summary.csv")" 4
	# each failed host, with its reason, in the console, the CSV and the report
	assert_output --partial 'ERROR  no-server'
	# no metadata from a host that failed the preflight, and the CSV says why
	assert_equal "$(paste -d, <(csv_col "$rd/summary.csv" host) <(csv_col "$rd/summary.csv" metadata_note) | grep -c '^no-server,metadata: not collected (the host failed the preflight)$')" 2
	grep -q '^"no-server",.*"not run: preflight: unreachable: fio: connect: Connection refused' "$rd/summary.csv" ||
		fail "no unreachable reason in summary.csv"
	grep -q '^- \*\*no-server\*\* .*unreachable: .*Connection refused.* (2 run(s))$' "$rd/report.md" ||
		fail "no unreachable reason in report.md"
	grep -q '^- \*\*no-engine\*\* .*engine missing or not loadable on the host: /nonexistent/lib/fio/tswap.so' "$rd/report.md" ||
		fail "no missing-engine reason in report.md"
	grep -q '^- \*\*old-engine\*\* .*fio version differs from the engine'"'"'s: tswap.so was built for fio-0.0-test but is loaded by fio-3' "$rd/report.md" ||
		fail "no engine-version reason in report.md"
	grep -q '^\*\*ERROR\*\*: 3 of 5 host(s) with errors (no-engine, old-engine, no-server); 0 below the bar; 2 pass' "$rd/report.md" ||
		fail "no ERROR verdict in report.md"
	# JUnit: <error> for the failed hosts, nothing for the good ones
	if command -v xmllint >/dev/null; then
		xmllint --noout "$rd/junit.xml"
		# run, read_min_gbs, read_vs_fleet, write_vs_fleet
		assert_equal "$(xmllint --xpath "count(//testsuite[@name='no-server']/testcase/error)" "$rd/junit.xml")" 4
		assert_equal "$(xmllint --xpath "count(//testsuite[@name='127.0.0.2:$PORT']/testcase[error or failure])" "$rd/junit.xml")" 0
	fi
	# a host running another fio than this run wants: found by the probe, nothing run there
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/tswap.swap" "127.0.0.3,$PORT target=$SCRATCH/host3/tswap.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --out "$SCRATCH/ver" \
		--fio-version fio-0.0-test
	expect_status 3
	# twice in the preflight lines (stderr), twice in the summary (stdout)
	assert_equal "$(grep -c 'fio version differs: the host runs fio-3[0-9.]*, this run wants fio-0.0-test' <<<"$stderr")" 2
	assert_equal "$(grep -c 'fio version differs: the host runs fio-3[0-9.]*, this run wants fio-0.0-test' <<<"$output")" 2
	[ -z "$(find "$SCRATCH/ver/points" -name fio.client.out)" ] || fail "a point ran on a host with another fio"
}

@test "fleet: a hung fio server (SIGSTOP) costs only the connect timeout (default 10 s); the other hosts complete" {
	start_servers
	kill -STOP "${SERVER_PIDS[4]}"
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/t.swap" "127.0.0.3,$PORT target=$SCRATCH/host3/t.swap" \
		"127.0.0.4,$PORT name=hung target=$SCRATCH/host4/t.swap"
	local t0=$SECONDS
	# the default timeouts: tight ones would fail the live hosts too on a
	# loaded machine
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" \
		--runtime 1 --ramp 0 --out "$SCRATCH/hung"
	expect_status 3
	[ $((SECONDS - t0)) -lt 90 ] || fail "the sweep took $((SECONDS - t0)) s with one hung host"
	# our timeout, or fio's own for its probe, whichever comes first
	grep -qF 'hung: ERROR no answer ' <<<"$stderr" || fail "no 'hung: ERROR no answer' progress line: $stderr"
	expect_ok_rows "$SCRATCH/hung/summary.csv" 4
	assert_equal "$(grep -c '^"hung",.*"error",.*no answer ' "$SCRATCH/hung/summary.csv")" 2
}

@test "fleet: killing one server mid-run fails that host, the others complete; --resume reruns only that host" {
	start_servers
	local rd=$SCRATCH/kill pid i st=0 f
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/k.swap" "127.0.0.3,$PORT name=victim target=$SCRATCH/host3/k.swap" \
		"127.0.0.4,$PORT target=$SCRATCH/host4/k.swap"
	"$FLEET_SWEEP" --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" \
		--runtime 3 --ramp 0 --out "$rd" >"$SCRATCH/kill.log" 2>&1 3>&- &
	pid=$!
	# the first point has started on the victim: kill its server mid-point
	for ((i = 0; i < 300; i++)); do
		compgen -G "$rd/points/write-*.r1/.tmp-h02-victim.*/fio.client.out" >/dev/null && break
		sleep 0.1
	done
	compgen -G "$rd/points/write-*.r1/.tmp-h02-victim.*/fio.client.out" >/dev/null ||
		{ kill "$pid"; fail "the first point did not start in 30 s: $(cat "$SCRATCH/kill.log")"; }
	# ... and the server runs its job (listener, connection, job processes)
	for ((i = 0; i < 300; i++)); do
		[ "$(proc_tree "${SERVER_PIDS[3]}" | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	sleep 0.5
	kill_server 3
	wait "$pid" || st=$?
	assert_equal "$st" 3
	grep -q 'victim: ERROR connection lost mid-run' "$SCRATCH/kill.log" || fail "no lost-connection error: $(cat "$SCRATCH/kill.log")"
	# the others completed both points; the victim has its failure in every output
	assert_equal "$(grep -c "^\"127.0.0.[24]:$PORT\",.*\"ok\"" "$rd/summary.csv")" 4
	assert_equal "$(grep -c '^"victim",.*"error",.*connection lost mid-run' "$rd/summary.csv")" 2
	grep -q '^| victim | ERROR |' "$rd/report.md" || fail "no ERROR row for the victim in report.md"
	grep -q 'errors="[1-9]' <(grep 'testsuite name="victim"' "$rd/junit.xml") || fail "no JUnit error for the victim"
	# the host is back: --resume reruns its points only
	for f in "$rd"/points/*.r1/h01-*/result.json "$rd"/points/*.r1/h03-*/result.json; do
		cp -p "$f" "$f.before"
	done
	start_server 3
	fleet --resume "$rd" --outlier-pct 90
	expect_status 0
	grep -qF 'preflight: probing 1 host(s)' <<<"$stderr" || fail "no preflight line: $stderr"
	assert_equal "$(grep -c '3/3 hosts ok.*(1 run now, 2 done earlier)' <<<"$stderr")" 2
	for f in "$rd"/points/*.r1/h01-*/result.json "$rd"/points/*.r1/h03-*/result.json; do
		cmp -s "$f" "$f.before" || fail "$f was rerun"
	done
	expect_ok_rows "$rd/summary.csv" 6
}

@test "fleet: hosts-file and option errors exit 2; --dry-run shows each host's job with its target, options and the installed engine" {
	local f
	hosts_file "# comment line" \
		"127.0.0.2,18000 target=/srv/a.swap" \
		"127.0.0.3   target=\"/srv/b with space.swap\" rate=100m,50m name=b   # the slow one" \
		"127.0.0.4,18001 engine=/opt/tswap/tswap.so ramp_time=0"
	fleet --hosts "$SCRATCH/hosts.txt" --target /srv/default.swap --grid fleet --dry-run
	expect_status 0
	assert_output --partial 'on each of 3 host(s)'
	assert_output --partial 'host b: fio --client=127.0.0.3,8765, target /srv/b with space.swap'
	assert_output --partial "ioengine=external:$FLEET_PREFIX/lib/fio/tswap.so"
	assert_output --partial 'ioengine=external:/opt/tswap/tswap.so'
	assert_output --partial 'filename=/srv/b with space.swap'
	assert_output --partial 'filename=/srv/default.swap'
	assert_equal "$(grep -cx 'rate=100m,50m' <<<"$output")" 2
	assert_equal "$(grep -c '^### \[[12]/2\] .* on ' <<<"$output")" 6
	assert_file_not_exists /srv/a.swap
	# errors: each names the file and line
	for f in "127.0.0.2 target=relative/path:not an absolute path" \
		"127.0.0.2:no target" \
		"127.0.0.2,70000 target=/x:out of range" \
		"127.0.0.2 target=/x rat=5m:fio rejects the options" \
		"127.0.0.2 target=/x ioengine=psync:is set by the sweep" \
		"127.0.0.2 target=\"/x:unterminated quote" \
		"127.0.0.2 target=/x;rm:fio cannot take it" \
		"# no host at all:names no host"; do
		printf '%s\n' "${f%%:*}" >"$SCRATCH/bad.txt"
		fleet --hosts "$SCRATCH/bad.txt" --grid fleet --dry-run
		expect_status 2
		grep -qF "${f#*:}" <<<"$stderr" || fail "'${f%%:*}': expected '${f#*:}' in: $stderr"
	done
	printf '127.0.0.2 target=/x\n127.0.0.2 target=/y\n' >"$SCRATCH/bad.txt"
	fleet --hosts "$SCRATCH/bad.txt" --grid fleet --dry-run
	expect_status 2
	assert_equal "$stderr" "tswap-sweep: $SCRATCH/bad.txt:2: host name '127.0.0.2' is used twice (give one of them name=LABEL) (see --help)"
	# a device on a host is written only with --destructive --force
	printf '127.0.0.2 target=/dev/nvme9n1\n' >"$SCRATCH/dev.txt"
	fleet --hosts "$SCRATCH/dev.txt" --grid fleet --dry-run --destructive
	expect_status 2
	grep -q -- '--destructive --force' <<<"$stderr" || fail "no --destructive --force in: $stderr"
	fleet --hosts "$SCRATCH/dev.txt" --grid fleet --dry-run --rw read
	expect_status 0
	# fleet options need --hosts
	fleet --grid quick --outlier-pct 10 --dry-run
	expect_status 2
	fleet --hosts "$SCRATCH/hosts.txt" --target /srv/x --outlier-pct 101 --dry-run
	expect_status 2
}

@test "fleet: each target is judged on its host: a symlink to a block device and an existing file are refused for writes; a new path runs" {
	local sum
	start_servers
	loop_setup 40
	head -c 40M /dev/urandom >"$LOOPDEV"
	sum=$(sha256sum <"$LOOPDEV")
	ln -s "$LOOPDEV" "$SCRATCH/host2/devlink"
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/devlink" "127.0.0.3,$PORT target=$SCRATCH/host3/new.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/dev" --quiet
	expect_status 2
	# the probe read the host's metadata before refusing: a loop device there
	run -0 jq -r '[.target.kind, .device.type, (.device.logical_block_size | type), .pcie.note, .nvme.note] | join("|")' \
		"$SCRATCH/dev/preflight/h01-127_0_0_2_$PORT/meta.json"
	assert_output "block|loop|number|no PCI device above ${LOOPDEV#/dev/} (loop, virtual or non-PCI device)|not an NVMe device"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/dev2" --quiet
	expect_status 2
	assert_equal "$stderr" "tswap-sweep: refusing target $SCRATCH/host2/devlink on 127.0.0.2:$PORT: it is a block device on the host, and the sweep writes to it (destroying its data); the sweep cannot check it there for mounts or signatures, so pass --destructive --force, or --rw read"
	assert_equal "$(sha256sum <"$LOOPDEV")" "$sum"
	assert_file_not_exists "$SCRATCH/host3/new.swap"
	# an existing file with data, not the sweep's: writes need --destructive
	head -c 32M /dev/urandom >"$SCRATCH/host2/precious.bin"
	sum=$(sha256sum <"$SCRATCH/host2/precious.bin")
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/precious.bin"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/file" --quiet
	expect_status 2
	assert_equal "$stderr" "tswap-sweep: refusing target $SCRATCH/host2/precious.bin on 127.0.0.2:$PORT: an existing file the sweep did not create, and the sweep writes to it (its data would be destroyed); pass --destructive, a new path, or --rw read"
	assert_equal "$(sha256sum <"$SCRATCH/host2/precious.bin")" "$sum"
	# a new path on the host: created and written, no flag
	hosts_file "127.0.0.3,$PORT target=$SCRATCH/host3/new.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/new"
	expect_status 0
	expect_ok_rows "$SCRATCH/new/summary.csv" 1
	assert_file_exists "$SCRATCH/host3/new.swap"
	assert_equal "$(ls "$SCRATCH/host3" | grep -c prerun || true)" 0
}
