#!/usr/bin/env bats
# tests/fleet-hosts.bats - tswap-sweep --hosts (fleet mode, docs/fleet.md)
# when hosts fail or are refused: unreachable hosts, a missing or wrong
# engine, a wrong fio version, a hung server, a server killed mid-run (and
# --resume), hosts-file and option errors, and targets judged on their
# host (and made there: issue 25 item 8). Real `fio --server` processes
# on loopback addresses (tests/fleet.bash); a fleet that runs is
# tests/fleet.bats. The whole file takes about a minute.

# '${...}' in single quotes are literal fio/jq text.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

load helpers
load fleet

# --- tests ----------------------------------------------------------------------------

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
		assert_equal "$(xmllint --xpath "count(//testsuite[@name='127.0.0.2:$PORT']/testcase[starts-with(@classname, 'tswap-fleet.')][error or failure])" "$rd/junit.xml")" 0
		# no metadata, no stack checks: one skipped testcase says why
		assert_equal "$(xmllint --xpath "string(//testsuite[@name='no-server']/testcase[@name='checks']/skipped/@message)" "$rd/junit.xml")" \
			'metadata: not collected (the host failed the preflight)'
	fi
	# a host running another fio than this run wants: found by the probe, nothing run there
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/tswap.swap" "127.0.0.3,$PORT target=$SCRATCH/host3/tswap.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --out "$SCRATCH/ver" \
		--fio-version fio-0.0-test
	expect_status 3
	# twice in the preflight lines (stderr), twice in the summary (stdout)
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
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
	local rd=$SCRATCH/kill pid i st=0 f jobs='' j
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
	# ... and the server's job has the target open (a count of the
	# server's processes is no sign: a connection's process outlives it).
	# The job is stopped where it is, still holding the target (it has not
	# ended: on a busy machine its 3 s can pass between two looks), then
	# the server dies.
	for ((i = 0; i < 300; i++)); do
		jobs=$(holds_open "${SERVER_PIDS[3]}" "$SCRATCH/host3/k.swap") && break
		sleep 0.1
	done
	[ -n "$jobs" ] ||
		{ kill "$pid"; fail "the victim's job did not open its target in 30 s: $(tree_files "${SERVER_PIDS[3]}"; cat "$SCRATCH/kill.log")"; }
	for j in $jobs; do
		freeze_tree "$j" >/dev/null
	done
	holds_open "${SERVER_PIDS[3]}" "$SCRATCH/host3/k.swap" >/dev/null ||
		{ kill_server 3; kill "$pid"; fail "the victim's job ended before it was stopped: $(cat "$SCRATCH/kill.log")"; }
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
	# shellcheck disable=SC2010 # counts names; the files' names are the test's
	assert_equal "$(ls "$SCRATCH/host3" | grep -c prerun || true)" 0
}

@test "fleet: a new path is created and marked on its host: a second run needs no flag, --resume refuses a user's file there, a pseudo-filesystem is refused (issue 25 item 8)" {
	local t=$SCRATCH/host3/new.swap sum blocks
	command -v setfattr >/dev/null || skip "requires setfattr (attr)"
	start_servers
	hosts_file "127.0.0.3,$PORT target=$t"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/r1" --quiet
	expect_status 0
	# ... and says nothing of it: fio's answer was read
	[ -z "$stderr" ] || fail "the create step said: $stderr"
	getfattr -n user.tswap.scratch "$t" >/dev/null 2>&1 || [ -f "$t.tswap-scratch" ] ||
		fail "$t carries no scratch mark"
	# written in full before the points (reads reach the device)
	blocks=$(stat -c '%b %B' "$t")
	(( ${blocks% *} * ${blocks#* } >= 32 * 1024 * 1024 )) || fail "$t has holes"
	# the second run: the sweep's own file, no --destructive
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw write --out "$SCRATCH/r2" --quiet
	expect_status 0
	# a user's data at its DEV:INODE without the mark: --resume refuses it
	rm -rf -- "$SCRATCH"/r1/points/*
	setfattr -x user.tswap.scratch "$t" 2>/dev/null || true
	rm -f -- "$t.tswap-scratch"
	head -c 32M /dev/urandom >"$t"
	sum=$(sha256sum <"$t")
	fleet --resume "$SCRATCH/r1" --quiet
	expect_status 2
	grep -q -- '--destructive' <<<"$stderr" || fail "no --destructive in: $stderr"
	assert_equal "$(sha256sum <"$t")" "$sum"
	# a new path on procfs: refused on its host, even for a read
	hosts_file "127.0.0.3,$PORT target=/proc/tswap-new.swap"
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --runtime 1 --ramp 0 --rw read --out "$SCRATCH/r3" --quiet
	expect_status 2
	assert_equal "$stderr" "tswap-sweep: refusing target /proc/tswap-new.swap on 127.0.0.3:$PORT: it is on a kernel pseudo-filesystem there, not storage"
}

@test "fleet: a run directory on a full filesystem stops with the full line, exit 3, before any host is asked" {
	[ "$(id -u)" -eq 0 ] || skip "requires root (a size-limited tmpfs)"
	mount_scratch "$SCRATCH/small" tmpfs size=64k
	head -c 65536 /dev/zero >"$SCRATCH/small/filler" 2>/dev/null || true
	# nothing listens there: a run that got as far as the preflight would
	# say the host is unreachable
	hosts_file "127.0.0.2,9"
	fleet --hosts "$SCRATCH/hosts.txt" --target "$SCRATCH/t.swap" --grid fleet "${SMALL[@]}" \
		--out "$SCRATCH/small/run"
	expect_status 3
	[ "$(grep -c . <<<"$stderr")" -eq 1 ] || { show_fleet; fail "expected one line"; }
	assert_equal "$stderr" "tswap-sweep: run directory full: 0 bytes free in $SCRATCH/small/run (free space, then: tswap-sweep --resume $SCRATCH/small/run)"
	assert_file_not_exists "$SCRATCH/t.swap"
}
