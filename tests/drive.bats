#!/usr/bin/env bats
# tests/drive.bats - the reference drives (tests/drive/refdrive): what up
# makes and down removes, signals, the write cliff, and each profile's GB/s
# under fio's libaio engine and tswap against the formula
# (tests/drive/expect.jq). Root only; skipped with the reason elsewhere.

# '$...' in single quotes are jq's.
# shellcheck disable=SC2016
# The repository's shell style is [ ] and $var, not [[ ]] and ${var}:
# shellcheck disable=SC2250,SC2292

bats_require_minimum_version 1.5.0

load helpers
load drive

setup() {
	common_setup
}

teardown() {
	drive_teardown
	common_teardown
}

# size BYTES-IN-FIO-NOTATION: bytes (4m -> 4194304).
size() {
	numfmt --from=iec "${1^^}"
}

# measure RW SPEC [PHASE]: one 1 s ramp + 2 s fio run on the drive, in its
# cgroup; SPEC fio:BS (fio's libaio, iodepth 16) or
# tswap:TENSOR:BLOCK:THREADS (tswap, 2 ops queued, queue depth 8). Prints
# the point with measured_gbs and the formula's fields.
measure() {
	local rw=$1 kind a b c pt out gbs
	local -a args
	IFS=: read -r kind a b c <<<"$2"
	if [ "$kind" = fio ]; then
		args=(--ioengine=libaio "--bs=$a" --iodepth=16)
		pt=$(jq -cn --arg spec "$2" --arg rw "$rw" --argjson t "$(size "$a")" '{spec: $spec, rw: $rw, tensor: $t}')
	else
		args=("--ioengine=external:$ENGINE" "--bs=$a" --iodepth=2 "--tswap_block_size=$b"
			--tswap_queue_depth=8 "--tswap_threads=$c")
		pt=$(jq -cn --arg rw "$rw" --argjson t "$(size "$a")" --argjson b "$(size "$b")" --argjson p "$c" \
			--arg spec "$2" '{spec: $spec, rw: $rw, tensor: $t, block: $b, threads: $p}')
	fi
	out=$("$DRIVE" run "$STATE" timeout -k 10 "$FIO_TIMEOUT" fio --name=m "--filename=$DEV" --direct=1 \
		"--rw=$rw" --size=512m --time_based --ramp_time=1 --runtime=2 --output-format=json "${args[@]}") ||
		fail "fio $rw $2 on $DEV failed"
	gbs=$(jq --arg rw "$rw" '.jobs[0][$rw].bw_bytes / 1e9' <<<"$out")
	expect_point "$pt" "${3:-pre}" | jq -c --argjson m "$gbs" '. + {measured_gbs: $m}'
}

# check_profile PROFILE [PHASE] RW:SPEC...: measure each and fail unless
# every measured GB/s is within the tolerance of an exact formula value;
# a point outside it is measured once more and judged by that (on a busy
# machine fio's ramp_time can end late, a few % either way: seen 0.966 and
# 1.058 at load 10), so only a point outside twice fails. The tables go to
# stderr (shown on failure, or with --show-output-of-passing-tests).
check_profile() {
	local profile=$1 phase=$2 rs rows='' bad again='' rw spec
	shift 2
	for rs in "$@"; do
		rows+=$(measure "${rs%%:*}" "${rs#*:}" "$phase")$'\n'
	done
	profile_table "$profile" "$rows"
	bad=$(outside_tolerance "$rows")
	[ -n "$bad" ] || return 0
	bad=$(jq -r '"\(.rw)\t\(.spec)"' <<<"$bad")
	while IFS=$'\t' read -r rw spec; do
		again+=$(measure "$rw" "$spec" "$phase")$'\n'
	done <<<"$bad"
	profile_table "$profile (again)" "$again"
	bad=$(outside_tolerance "$again")
	[ -n "$bad" ] || return 0
	starved_or_fail "$profile" "$phase" "$bad"
}

# starved_or_fail PROFILE PHASE ROWS: ROWS were outside the tolerance
# twice. Fail, unless every one is below the formula (the drive's cap
# was not reached) and fio's own libaio engine, at the row's block size
# and now, falls short of its formula too: then the machine is too busy
# to drive the cap (seen on a starved VM: tswap's 256k writes at 0.92
# and 0.89), and the test skips, saying so. tswap below a cap that fio
# reaches still fails.
starved_or_fail() {
	local profile=$1 phase=$2 rows=$3 low ref bs rw
	low=$(below_formula "$rows")
	[ "$(grep -c . <<<"$low")" -eq "$(grep -c . <<<"$rows")" ] ||
		fail "outside $DRIVE_TOL_LO..$DRIVE_TOL_HI of the formula (or not exact), twice: $rows"
	ref=''
	while IFS=$'\t' read -r rw bs; do
		ref+=$(measure "$rw" "fio:$bs" "$phase")$'\n'
	done <<<"$(jq -r '"\(.rw)\t\(.spec | split(":") | if .[0] == "fio" then .[1] else .[2] end)"' <<<"$low")"
	profile_table "$profile (fio's libaio now)" "$ref"
	[ "$(below_formula "$ref" | grep -c .)" -lt "$(grep -c . <<<"$ref")" ] ||
		skip "the machine is too busy to reach the reference drive's cap: fio's libaio falls short of the formula too ($(jq -r '"\(.rw) \(.spec) \(.measured_gbs / .expected_gbs * 1000 | round / 1000)"' <<<"$low $ref" | paste -sd, -))"
	fail "below the formula twice while fio's libaio reaches it: $low"
}

# profile_table PROFILE ROWS: a line per measured point on stderr.
profile_table() {
	jq -r --arg p "$1" '"\($p) \(.rw) \(.spec): measured \(.measured_gbs * 1000 | round / 1000) GB/s, formula \(.expected_gbs) (\(.bios_per_op) bios per op), ratio \(.measured_gbs / .expected_gbs * 1000 | round / 1000)"' <<<"$2" >&2
}

# below_formula ROWS: the rows of an exact formula measured below
# DRIVE_TOL_LO of it.
below_formula() {
	jq -c --argjson lo "$DRIVE_TOL_LO" 'select(.exact and .measured_gbs / .expected_gbs < $lo)' <<<"$1"
}

# outside_tolerance ROWS: the rows whose formula is not exact or whose
# measured GB/s is outside DRIVE_TOL_LO..DRIVE_TOL_HI of it.
outside_tolerance() {
	jq -c --argjson lo "$DRIVE_TOL_LO" --argjson hi "$DRIVE_TOL_HI" \
		'select((.exact | not) or .measured_gbs / .expected_gbs < $lo or .measured_gbs / .expected_gbs > $hi)' <<<"$1"
}

# leftovers: what drives leave behind (loop devices over /dev/shm
# tswap-refdrive files, cgroups, directories), one line each.
leftovers() {
	losetup -l -n -O NAME,BACK-FILE | grep tswap-refdrive || true
	find /sys/fs/cgroup -maxdepth 2 -name 'tswap-refdrive.*' 2>/dev/null || true
	find "${REFDRIVE_DIR:-/dev/shm}" -maxdepth 1 -name 'tswap-refdrive.*' 2>/dev/null || true
}

# new_leftovers BEFORE: leftovers lines not in BEFORE (an earlier
# leftovers): what this test left, beside drives of other runs.
new_leftovers() {
	leftovers | grep -vxF -f <(printf '%s\n' "$1") || true
}

@test "refdrive: refuses to run without root, with the reason, making nothing" {
	local -a as=()
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null || skip "requires setpriv (util-linux) to drop root"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	run -3 "${as[@]}" "$DRIVE" up "$PROFILES/iops-bound.json"
	assert_output --partial "needs root (running as uid"
	[ "${#lines[@]}" -eq 1 ] || fail "expected one line: $output"
	run -3 "${as[@]}" "$DRIVE" check
	assert_output --partial "needs root"
}

@test "refdrive up: a direct-I/O loop device over a file in /dev/shm and a cgroup with the caps; down removes all, twice" {
	requires_drive
	[ -z "$(leftovers)" ] || skip "drives of another run are present: $(leftovers)"
	drive_up asymmetric
	local dir cg mm
	dir=${STATE%/state.json}
	cg=$(jq -r .cgroup "$STATE")
	mm=$(jq -r .majmin "$STATE")
	[ -b "$DEV" ] || fail "$DEV is not a block device"
	run -0 cat "/sys/block/${DEV#/dev/}/loop/backing_file"
	assert_output "$dir/disk.img"
	run -0 cat "/sys/block/${DEV#/dev/}/loop/dio"
	assert_output 1
	if [ "$(jq -r .cgroup_version "$STATE")" = 1 ]; then
		run -0 cat "$cg/blkio.throttle.write_iops_device"
		assert_output "$mm 600"
		run -0 cat "$cg/blkio.throttle.read_bps_device"
		assert_output "$mm 250000000"
	else
		run -0 cat "$cg/io.max"
		assert_output --partial "rbps=250000000 wbps=150000000 riops=4000 wiops=600"
	fi
	run -0 jq -e '.limits.max_sectors_kb > 0 and .limits.max_segments > 0 and .phase == "pre"' "$STATE"
	run -0 "$DRIVE" down "$STATE"
	run -0 leftovers
	assert_output ''
	run -0 "$DRIVE" down "$STATE"
	run -0 "$DRIVE" down "$dir"
}

@test "refdrive down: leaves alone a loop device it did not make; moves processes out of the cgroup, not killing them" {
	requires_drive
	requires loopdev
	loop_setup 16
	drive_up bandwidth-bound
	local own cg pid
	own=$DEV
	cg=$(jq -r .cgroup "$STATE")
	"$DRIVE" run "$STATE" sleep 60 3>&- &
	pid=$!
	for _ in $(seq 100); do
		! grep -qx "$pid" "$cg/cgroup.procs" || break
		sleep 0.1
	done
	run -0 grep -qx "$pid" "$cg/cgroup.procs"
	# a state naming a device that is not over the drive's file
	jq --arg d "$LOOPDEV" '.dev = $d' "$STATE" >"$STATE.new"
	mv "$STATE.new" "$STATE"
	run -0 "$DRIVE" down "$STATE"
	assert_output --partial "$LOOPDEV is not over"
	run -0 losetup "$LOOPDEV"
	kill -0 "$pid" || fail "down killed the process left in the cgroup"
	[ ! -d "$cg" ] || fail "cgroup $cg is still there"
	kill "$pid"
	wait "$pid" || true
	# the drive's own device, which the edited state no longer named
	losetup -d "$own"
}

@test "refdrive with: runs the command in the cgroup; SIGTERM removes the drive" {
	requires_drive
	local f=$BATS_TEST_TMPDIR/in pid rc=0
	"$DRIVE" with "$PROFILES/iops-bound.json" bash -c 'echo "$REFDRIVE_STATE $REFDRIVE_DEV" >"$1.tmp"; cat /proc/self/cgroup >>"$1.tmp"; mv "$1.tmp" "$1"; exec sleep 60' _ "$f" 3>&- &
	pid=$!
	for _ in $(seq 100); do
		[ ! -f "$f" ] || break
		sleep 0.1
	done
	[ -f "$f" ] || fail "the command did not start"
	run -0 grep -c tswap-refdrive "$f"
	local made
	read -r made _ <"$f"
	made=${made%/state.json}
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ] || fail "refdrive with exited $rc after SIGTERM, expected 143"
	# this drive's loop device, cgroup and directory (other runs' drives
	# may be up beside it)
	run -0 leftovers
	refute_output --partial "${made##*/}"
}

@test "refdrive up: a bad profile is refused with one line naming the field, exit 2, nothing made" {
	requires_drive
	local before
	before=$(leftovers)
	jq '.read.iops = -1' "$PROFILES/iops-bound.json" >"$BATS_TEST_TMPDIR/bad.json"
	run -2 "$DRIVE" up "$BATS_TEST_TMPDIR/bad.json"
	assert_output "refdrive: up: PROFILE $BATS_TEST_TMPDIR/bad.json: read: bps and iops must be whole numbers >= 0 (0: no cap)"
	jq '.cliff = {after_bytes: 1, after_s: 1, write: .write}' "$PROFILES/iops-bound.json" >"$BATS_TEST_TMPDIR/bad.json"
	run -2 "$DRIVE" up "$BATS_TEST_TMPDIR/bad.json"
	assert_output --partial "cliff: needs exactly one of after_bytes, after_s"
	run -0 new_leftovers "$before"
	assert_output ''
}

@test "iops-bound: fio libaio and tswap GB/s match the formula" {
	requires_drive
	drive_up iops-bound
	check_profile iops-bound pre read:fio:128k read:fio:256k read:fio:1m read:tswap:4m:128k:1 \
		read:tswap:4m:512k:1 read:tswap:4m:256k:2 write:fio:128k write:tswap:4m:1m:1
}

@test "bandwidth-bound: fio libaio and tswap GB/s match the formula" {
	requires_drive
	drive_up bandwidth-bound
	check_profile bandwidth-bound pre read:fio:64k read:fio:4m read:tswap:4m:64k:1 read:tswap:4m:256k:1 \
		read:tswap:16m:4m:1 read:tswap:8m:1m:4 write:tswap:4m:256k:1
}

@test "asymmetric: fio libaio and tswap GB/s match the formula, reads and writes apart" {
	requires_drive
	drive_up asymmetric
	check_profile asymmetric pre read:fio:128k read:tswap:4m:128k:1 read:tswap:4m:1m:1 \
		write:fio:128k write:fio:1m write:tswap:4m:128k:1 write:tswap:4m:1m:1
}

@test "write-cliff: GB/s match the formula before the cliff and after it (cliff --now)" {
	requires_drive
	drive_up write-cliff
	check_profile write-cliff pre write:fio:1m write:tswap:2m:1m:1 read:fio:1m
	run -0 "$DRIVE" cliff "$STATE" --now
	check_profile write-cliff post write:fio:1m write:tswap:2m:1m:1
}

@test "refdrive cliff: the write cap drops once the profile's bytes are written, while fio writes; --reset, --now and --after-s" {
	requires_drive
	drive_up write-cliff
	local dir=${STATE%/state.json} cg mm
	cg=$(jq -r .cgroup "$STATE")
	mm=$(jq -r .majmin "$STATE")
	run -0 "$DRIVE" cliff "$STATE"
	# 600 MB at 300 MB/s: the cliff comes 2 s into a 4 s run
	"$DRIVE" run "$STATE" timeout -k 10 "$FIO_TIMEOUT" fio --name=c "--filename=$DEV" --direct=1 --rw=write \
		--ioengine=libaio --bs=1m --iodepth=16 --size=512m --time_based --runtime=4 \
		"--write_bw_log=$BATS_TEST_TMPDIR/c" --log_avg_msec=250 --output-format=json >/dev/null ||
		fail "fio failed"
	run -0 jq -e '.phase == "post"' "$STATE"
	run -0 cat "$dir/watcher.log"
	# polled every 50 ms: at most a few hundred ms of 300 MB/s late
	[[ $output =~ ^cliff\ at\ ([0-9]+)\ bytes ]] || fail "watcher.log: $output"
	run -0 jq -en --argjson b "${BASH_REMATCH[1]}" '$b >= 600000000 and $b < 700000000'
	# fio's log: MB/s before 1.5 s and after 2.5 s
	run -0 jq -Rn '[inputs | split(", ") | {t: (.[0] | tonumber), mbs: ((.[1] | tonumber) * 1024 / 1e6)}]
		| [(map(select(.t <= 1500) | .mbs) | add / length), (map(select(.t > 2500) | .mbs) | add / length)]
		| (.[0] > 270 and .[0] < 330 and .[1] > 90 and .[1] < 110)' "$BATS_TEST_TMPDIR/c_bw.1.log"
	run -0 "$DRIVE" cliff "$STATE" --reset
	run -0 cat "$cg/blkio.throttle.write_bps_device"
	assert_output "$mm 300000000"
	run -0 "$DRIVE" cliff "$STATE" --now
	run -0 cat "$cg/blkio.throttle.write_bps_device"
	assert_output "$mm 100000000"
	run -0 "$DRIVE" cliff "$STATE" --reset
	# --after-s counts from the first write: none yet, so no cliff
	run -0 "$DRIVE" cliff "$STATE" --after-s 1
	sleep 1.5
	run -0 jq -e '.phase == "pre"' "$STATE"
	"$DRIVE" run "$STATE" dd if=/dev/zero "of=$DEV" bs=1M count=1 oflag=direct status=none
	for _ in $(seq 100); do
		jq -e '.phase == "post"' "$STATE" >/dev/null && break
		sleep 0.1
	done
	run -0 jq -e '.phase == "post"' "$STATE"
}
