#!/usr/bin/env bats
# meta.bats - what a sweep records about what it measured (lib/meta-collect.sh,
# sweep/tswap/results/meta.py), and the command-line conventions: --version, exit
# status 128 + signal, progress on stderr and results on stdout, --quiet.
#
# meta_of (tests/helpers.bash, no fio run) reads a file and a loop device; one
# small real sweep checks that meta.json reaches sweep.json, aggregate.json
# and report.md.

bats_require_minimum_version 1.5.0

load helpers
load check

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SWEEP=$REPO/sweep/tswap-sweep
ENGINE=${TSWAP_ENGINE:-$REPO/build/tswap.so}

setup() {
	common_setup
	export TSWAP_ENGINE=$ENGINE
}

teardown() {
	common_teardown
}

# meta TARGET: TARGET's metadata object as a run makes it (the collector's
# lines, tswap.results.meta), into $SCRATCH/meta.json.
meta() {
	meta_of "$ENGINE" "$1" >"$SCRATCH/meta.json"
}

# types JQPATH...: "path=type" for each path of $SCRATCH/meta.json.
types() {
	local p
	for p in "$@"; do
		printf '%s=%s\n' "$p" "$(jq -r "$p | type" "$SCRATCH/meta.json")"
	done
}

host_and_version_types() {
	run -0 types .host.kernel .host.cpu_model .host.cpus .host.memory_bytes \
		.host.fs_aio_max_nr .versions.tswap .versions.fio .numa.cpus_allowed
	assert_output "$(printf '%s\n' .host.kernel=string .host.cpu_model=string .host.cpus=number \
		.host.memory_bytes=number .host.fs_aio_max_nr=number .versions.tswap=string \
		.versions.fio=string .numa.cpus_allowed=string)"
	[ "$(jq .host.memory_bytes "$SCRATCH/meta.json")" -gt 0 ] || fail "memory_bytes not positive"
	# io_uring_disabled: a number where the kernel has the sysctl, else null
	if [ -f /proc/sys/kernel/io_uring_disabled ]; then
		assert_equal "$(jq -r '.host.kernel_io_uring_disabled' "$SCRATCH/meta.json")" "$(cat /proc/sys/kernel/io_uring_disabled)"
	fi
	assert_equal "$(jq -r .versions.fio "$SCRATCH/meta.json")" "$(fio --version)"
}

@test "meta: a file not yet created: its filesystem, the device under it, host and versions" {
	meta "$SCRATCH/not yet/t.swap"
	run -0 jq -r '.target.kind, .target.filesystem.type, (.target.filesystem.options | type), .target.filesystem.mountpoint' "$SCRATCH/meta.json"
	assert_equal "${lines[0]}" file
	assert_equal "${lines[1]}" "$(findmnt -n -o FSTYPE -T "$SCRATCH")"
	assert_equal "${lines[2]}" string
	assert_equal "${lines[3]}" "$(findmnt -n -o TARGET -T "$SCRATCH")"
	host_and_version_types
	# the device under the filesystem when it is a block device; its queue
	# numbers are numbers, its notes say why a part is missing
	if [ -b "$(findmnt -n -o SOURCE -T "$SCRATCH")" ]; then
		run -0 types .device.logical_block_size .device.physical_block_size .device.rotational \
			.device.capacity_bytes .queue.max_sectors_kb .queue.nr_requests
		assert_output "$(printf '%s\n' .device.logical_block_size=number .device.physical_block_size=number \
			.device.rotational=boolean .device.capacity_bytes=number .queue.max_sectors_kb=number .queue.nr_requests=number)"
		jq -e '.pcie.current_link_speed != null or (.pcie.note | type == "string")' "$SCRATCH/meta.json" >/dev/null ||
			fail "neither a PCIe link nor a note: $(jq -c .pcie "$SCRATCH/meta.json")"
	else
		jq -e '.device.note | test("not on a block device")' "$SCRATCH/meta.json" >/dev/null ||
			fail "no device note: $(jq -c .device "$SCRATCH/meta.json")"
	fi
	# never blanks: a missing NVMe identity says so
	jq -e '.nvme.note == "not an NVMe device" or (.nvme.model | type == "string") or (.nvme.note | test("nvme-cli"))' \
		"$SCRATCH/meta.json" >/dev/null || fail "nvme: $(jq -c .nvme "$SCRATCH/meta.json")"
	run -0 jq -r '[.. | select(. == "")] | length' "$SCRATCH/meta.json"
	assert_output 0
}

@test "meta: a loop device: block sizes and queue from sysfs, no PCIe, not an NVMe device" {
	requires loopdev
	loop_setup 16 4096
	meta "$LOOPDEV"
	run -0 jq -r '.target.kind, (.target.filesystem | tostring), .device.path, .device.type, .device.logical_block_size,
		.device.capacity_bytes, .nvme.note, (.pcie.note | test("no PCI device above")), .device.serial_sha256_12 == null' "$SCRATCH/meta.json"
	assert_equal "${lines[0]}" block
	assert_equal "${lines[1]}" null
	assert_equal "${lines[2]}" "$LOOPDEV"
	assert_equal "${lines[3]}" loop
	assert_equal "${lines[4]}" 4096
	assert_equal "${lines[5]}" $((16 * 1024 * 1024))
	assert_equal "${lines[6]}" "not an NVMe device"
	assert_equal "${lines[7]}" true
	assert_equal "${lines[8]}" true
	assert_equal "$(jq .queue.max_sectors_kb "$SCRATCH/meta.json")" "$(cat "/sys/block/${LOOPDEV#/dev/}/queue/max_sectors_kb")"
	host_and_version_types
}

@test "meta: a fleet host's collector is one fio job line under 8 KiB (fio's OPT_LEN_MAX) and prints what the file does" {
	# the fleet ships lib/meta-collect.sh on one exec_prerun line; a
	# longer line than fio reads crashes fio --client (exit 139). With a
	# target path of 2 KiB:
	local long line code
	long=/$(printf 'd%.0s' {1..2048})/t.dat
	line=$(/usr/bin/python3 -I -B -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.executor.fleet_jobs import meta_job
with open(sys.argv[1] + "/lib/meta-collect.sh", "rb") as f:
    print(meta_job(sys.argv[2], "tswap-meta-1-h01", f.read()), end="")' "$REPO/sweep" "$long" | grep '^exec_prerun=')
	((${#line} < 8192)) || fail "the exec_prerun line is ${#line} characters"
	code=${line#*echo }
	code=${code%% *}
	sysroot_pcie "$SCRATCH/r"
	run -0 env TSWAP_SYSROOT="$SCRATCH/r" sh -c "$(base64 -d <<<"$code" | gunzip)" meta-collect.sh /data/swap
	local shipped=$output
	run -0 env TSWAP_SYSROOT="$SCRATCH/r" sh "$REPO/sweep/lib/meta-collect.sh" /data/swap
	assert_equal "$shipped" "$output"
	assert_line "$(printf 'pci.address\t0000:01:00.0')"
}

# execs TARGET: how many programs the collector runs for TARGET, its own
# sh included (successful execve calls under strace -f), with fio asked
# for its version as on a fleet host; its lines in $SCRATCH/kv.
execs() {
	TSWAP_FIO_VERSION='' strace -f -o "$SCRATCH/trace" -e trace=execve \
		sh "$REPO/sweep/lib/meta-collect.sh" "$1" >"$SCRATCH/kv"
	grep -c 'execve.*= 0$' "$SCRATCH/trace"
}

requires_strace() {
	command -v strace >/dev/null || skip "requires strace to count the collector's processes"
	strace -f -o /dev/null true || skip "strace cannot trace here (ptrace not allowed)"
}

# has KEY REGEX: the collector's line of KEY in $SCRATCH/kv matches REGEX
has() { grep -q "^$1"$'\t'"$2" "$SCRATCH/kv"; }

@test "meta: the collector runs each tool once, not one process per file: at most 14 for a file" {
	requires_strace
	# sh, findmnt, sed, dirname, lsblk x3, sed, readlink, taskset, lscpu,
	# uname, fio, awk; besides, what this host's disk takes: a serial
	# number is hashed (sha256sum, cut); an NVMe disk: its controller's
	# name (sed), its paths (readlink x2) and nvme-cli's id-ctrl (nvme,
	# sed x2).
	local n max=14
	n=$(execs "$SCRATCH/t.swap")
	has fio . || fail "the collector did not finish: $(cat "$SCRATCH/kv")"
	if has serial_hash .; then max=$((max + 2)); fi
	if has disk nvme; then max=$((max + 3)); fi
	if has disk nvme && has nvme_cli .; then max=$((max + 3)); fi
	((n <= max)) || fail "$n processes, more than $max: $(grep -o 'execve("[^"]*"' "$SCRATCH/trace" | sort | uniq -c)"
}

@test "meta: the collector runs at most 11 processes for a loop device" {
	requires loopdev
	requires_strace
	loop_setup 16 4096
	local n
	# sh, lsblk x3, sed, readlink, taskset, lscpu, uname, fio, awk
	n=$(execs "$LOOPDEV")
	has disk "${LOOPDEV#/dev/}$" || fail "not the loop device: $(cat "$SCRATCH/kv")"
	((n <= 11)) || fail "$n processes, more than 11: $(grep -o 'execve("[^"]*"' "$SCRATCH/trace" | sort | uniq -c)"
}

@test "meta: a sweep records meta.json in sweep.json, aggregate.json and report.md; progress on stderr, results on stdout" {
	local rd=$SCRATCH/run
	run --separate-stderr timeout -k 10 300 "$SWEEP" --grid quick --rw read --repeat 1 --no-ceiling --size 16m \
		--tensor-size 4m --io-size 4m --target "$SCRATCH/m.swap" --out "$rd"
	assert_success
	jq -e '.meta.target.kind == "file" and (.meta.host.cpus | type == "number")' "$rd/sweep.json" >/dev/null ||
		fail "sweep.json has no meta"
	jq -e --slurpfile m "$rd/meta.json" '.meta == $m[0]' "$rd/aggregate.json" >/dev/null ||
		fail "aggregate.json's meta is not meta.json"
	grep -q '^## What was measured' "$rd/report.md" || fail "report.md has no What was measured"
	grep -q '^| NVMe | ' "$rd/report.md" || fail "report.md has no NVMe row"
	# stdout: the results; stderr: progress (one line per point)
	assert_output --partial 'best read:'
	refute_output --regexp '^\[[0-9]+/[0-9]+\]'
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	assert_equal "$(grep -cE '^\[[0-9]/4\] read ' <<<"$stderr")" 4
	# --quiet: no progress at all, the same results
	run --separate-stderr timeout -k 10 300 "$SWEEP" --quiet --grid quick --rw read --repeat 1 --no-ceiling --size 16m \
		--tensor-size 4m --io-size 4m --target "$SCRATCH/m.swap" --out "$SCRATCH/run2"
	assert_success
	assert_output --partial 'best read:'
	assert_equal "$stderr" ""
}

@test "--version: tswap version (and commit in a checkout), engine, fio; exit 0" {
	run -0 --separate-stderr "$SWEEP" --version
	assert_line --index 0 --regexp "^tswap-sweep \(tswap\) $(sed -n 's/^TSWAP_VERSION := //p' "$REPO/Makefile")( \(commit [0-9a-z.-]+\))?$"
	assert_line --index 1 --partial "engine: $ENGINE"
	assert_line --index 2 "fio: $(fio --version)"
	assert_equal "$stderr" ""
}

# sweep_signal SIG STATUS: a sweep stopped by SIG mid-point exits STATUS
# (128 + the signal number) and keeps its finished points.
sweep_signal() {
	local sig=$1 want=$2 rd=$SCRATCH/sig-$1 pid st=0 i
	# job control on: a background job of a non-interactive shell would
	# start with SIGINT ignored, and an ignored signal cannot be trapped
	set -m
	"$SWEEP" --grid quick --rw read --repeat 1 --no-ceiling --size 16m --tensor-size 4m \
		--runtime 30 --ramp 0 --target "$SCRATCH/s.swap" --out "$rd" >"$SCRATCH/sig.log" 2>&1 3>&- &
	pid=$!
	set +m
	for ((i = 0; i < 300; i++)); do
		[ -n "$(find "$rd/points" -maxdepth 1 -name '.tmp-*' 2>/dev/null)" ] && break
		sleep 0.1
	done
	[ -n "$(find "$rd/points" -maxdepth 1 -name '.tmp-*' 2>/dev/null)" ] || { kill "$pid"; fail "no point started in 30 s"; }
	sleep 0.5
	kill "-$sig" "$pid"
	wait "$pid" || st=$?
	[ "$st" -eq "$want" ] || fail "SIG$sig: exit $st, not $want; the sweep said: $(cat "$SCRATCH/sig.log")"
	grep -q 'interrupted' "$SCRATCH/sig.log" || fail "no interrupt message: $(cat "$SCRATCH/sig.log")"
	[ -z "$(find "$rd/points" -maxdepth 1 -name '.tmp-*')" ] || fail "temporary point directory left behind"
}

@test "exit status 128 + signal: SIGINT 130, SIGTERM 143, SIGHUP 129" {
	sweep_signal INT 130
	sweep_signal TERM 143
	sweep_signal HUP 129
}

@test "progress: a status line at least every 10 s of a long point, on stderr (elapsed, remaining), none with --quiet" {
	printf '%s\n' 'rw write' 'tensor 4m' 'block 1m' 'qd 8' >"$SCRATCH/one.grid"
	# one point of 1 s ramp + 11 s runtime (fixed: steady state could end it
	# before 10 s): at least one status line at 10 s
	run --separate-stderr timeout -k 10 120 "$SWEEP" --grid "$SCRATCH/one.grid" --repeat 1 --no-ceiling --size 16m \
		--runtime 11 --ramp 1 --fixed-runtime --target "$SCRATCH/s.swap" --out "$SCRATCH/run"
	assert_success
	grep -qE '^    \[1/1\] write libaio .*: 1[0-2] s of 12 s, [0-2] s left$' <<<"$stderr" ||
		fail "no status line on stderr: $stderr"
	refute_output --partial ' s left'
	# the point's fio output is still one JSON document
	jq -e '.jobs | length == 1' "$SCRATCH/run/points/"*/fio.json >/dev/null || fail "fio.stdout is not fio's JSON"
	run --separate-stderr timeout -k 10 120 "$SWEEP" --quiet --grid "$SCRATCH/one.grid" --repeat 1 --no-ceiling --size 16m \
		--runtime 11 --ramp 1 --fixed-runtime --target "$SCRATCH/s.swap" --out "$SCRATCH/run2"
	assert_success
	assert_equal "$stderr" ""
}
