#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # jq programs in single quotes; bats sets $stderr, $output, $status
#
# The fault matrix of issue 7 (docs/reliability.md): what fio and the user
# see when the device misbehaves under tswap, with real faults wherever
# the kernel can make them:
#
#   EIO on one block in the middle of an operation
#       device-mapper: a loop device with an `error` target spliced into a
#           `linear` one (skipped where the kernel has no device-mapper);
#       tests/tools/faultfs: a FUSE file whose server fails one 4 KiB
#           range with EIO (the same kernel completion path as a bad
#           sector: io_submit / io_uring -> VFS -> -EIO in the completion);
#       both backends x both windows x continue_on_error off and on.
#   target vanishing mid-run: the FUSE server killed (ENOTCONN /
#       ECONNABORTED); a loop device detached (losetup -d) under the job.
#   short read at end of file: a file shorter than the job; short read in
#       the middle of a file: faultfs answering one range short.
#   ENOSPC on write: a file on a small loop-mounted ext4.
#   EAGAIN at io_setup: fs.aio-max-nr lowered for the test.
#   EAGAIN at io_submit / io_uring_submit, EINTR from io_getevents:
#       tests/tools/shim.so, an LD_PRELOAD test tool (the kernel gives no
#       way to make them on demand).
#   SIGINT, SIGTERM, SIGKILL mid-job: fio exits, the engine's threads with
#       it, and tswap_stats is complete JSON or absent, never half-written.
#
# io_uring disabled (kernel.io_uring_disabled) and RLIMIT_MEMLOCK too low
# for tswap_fixedbufs are in tests/uring.bats ("uring errors: ..."); ENOSPC
# from a loop device over a full tmpfs, and the scheduler's faults through
# the fake backend (tests/unit/test_sched.c), are in tests/errors.bats and
# the unit tests.
#
# Everything a test changes (sysctls, dm devices, FUSE mounts and their
# servers, loop devices, mounts) is undone in teardown, also when the test
# fails; every fio runs under `timeout`.

load helpers

FAULTFS=$REPO/build/tools/faultfs
SHIM=$REPO/build/tools/shim.so
FIO_TIMEOUT=${TSWAP_FIO_TIMEOUT:-60}

setup() {
	common_setup
	UNDO_LIST=$SCRATCH.undo
	: >"$UNDO_LIST"
}

# Undo this file's own changes (newest first), then the common ones
# (mounts, loop devices) that they may sit on.
teardown() {
	local kind a b
	if [ -f "${UNDO_LIST:-}" ]; then
		while IFS=$'\t' read -r kind a b; do
			case "$kind" in
			pid) kill -KILL "$a" 2>/dev/null || true ;;
			fuse)
				umount "$a" 2>/dev/null || umount -l "$a" 2>/dev/null || true
				kill -KILL "$b" 2>/dev/null || true
				;;
			dm) DM_DISABLE_UDEV=1 timeout 30 dmsetup remove --noudevsync --retry "$a" >/dev/null 2>&1 || true ;;
			sysctl) printf '%s\n' "$b" >"$a" || true ;;
			esac
		done < <(tac "$UNDO_LIST")
		rm -f "$UNDO_LIST"
	fi
	common_teardown
}

undo() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$UNDO_LIST"
}

# --- facilities -------------------------------------------------------------

requires_fuse() {
	requires root
	if [ ! -x "$FAULTFS" ]; then
		skip "requires $FAULTFS (make $FAULTFS; needs libfuse3-dev)"
	fi
	if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
		skip "requires FUSE: no /dev/fuse or fuse in /proc/filesystems"
	fi
}

requires_dm() {
	requires loopdev
	if ! command -v dmsetup >/dev/null; then
		skip "requires dmsetup (make deps)"
	fi
	local targets
	if ! targets=$(dmsetup targets 2>/dev/null); then
		skip "requires device-mapper: this kernel has none (no /dev/mapper/control driver)"
	fi
	if ! grep -qw error <<<"$targets" || ! grep -qw linear <<<"$targets"; then
		skip "requires the device-mapper error and linear targets (dmsetup targets: $(echo "$targets" | awk '{print $1}' | xargs))"
	fi
}

requires_shim() {
	if [ ! -f "$SHIM" ]; then
		skip "requires $SHIM (make $SHIM)"
	fi
}

# faultfs_mount BACKING_MB [faultfs options...] - mount a faultfs over a
# fresh backing file; the fault target is $FAULTFS_FILE, the server's pid
# $FAULTFS_PID.  Unmounted and killed in teardown.
faultfs_mount() {
	local mb=$1 mnt=$SCRATCH/faultfs i
	shift
	mkdir -p "$mnt"
	rm -f "$SCRATCH/faultfs.img"
	truncate -s "${mb}M" "$SCRATCH/faultfs.img"
	"$FAULTFS" "$@" "$SCRATCH/faultfs.img" "$mnt" \
		</dev/null >"$SCRATCH/faultfs.log" 2>&1 3>&- &
	FAULTFS_PID=$!
	undo fuse "$mnt" "$FAULTFS_PID"
	for i in $(seq 50); do
		mountpoint -q "$mnt" && break
		sleep 0.1
	done
	mountpoint -q "$mnt" || fail "faultfs did not mount: $(cat "$SCRATCH/faultfs.log")"
	FAULTFS_FILE=$mnt/disk
}

# dm_bad_device NAME BAD_OFFSET BAD_LEN - $DMDEV: a 16 MiB loop device
# whose bytes [BAD_OFFSET, +BAD_LEN) are a device-mapper error target.
dm_bad_device() {
	local name=$1 s1=$(($2 / 512)) ns=$(($3 / 512)) total
	loop_setup 16
	total=$((16 * 2048))
	undo dm "$name"
	# No udev wait (there may be no udevd): dmsetup makes the node itself.
	printf '0 %d linear %s 0\n%d %d error\n%d %d linear %s %d\n' \
		"$s1" "$LOOPDEV" "$s1" "$ns" $((s1 + ns)) $((total - s1 - ns)) \
		"$LOOPDEV" $((s1 + ns)) |
		DM_DISABLE_UDEV=1 timeout 30 dmsetup create --noudevsync "$name" ||
		fail "dmsetup create $name failed"
	DMDEV=/dev/mapper/$name
	[ -b "$DMDEV" ] || fail "$DMDEV did not appear"
}

# json_out - fio's JSON document from $output (fio may print lines before it).
json_out() {
	sed -n '/^{/,$p' <<<"$output"
}

# bg_fio OUT ARGS... - start fio (with the engine, under timeout) in the
# background; $BG_PID is timeout's pid (its exit status is fio's).
bg_fio() {
	local out=$1
	shift
	fio_argv "$ENGINE" "$@"
	"${FIO_ARGV[@]}" </dev/null >"$out.out" 2>"$out.err" 3>&- &
	BG_PID=$!
	undo pid "$BG_PID"
}

# bg_job_pid - the pid of fio's job process under $BG_PID, waiting up to
# 20 s for it to run with at least $1 threads (the engine's workers).
bg_job_pid() {
	local want=${1:-1} i fio job n
	for i in $(seq 200); do
		fio=$(pgrep -P "$BG_PID" -x fio | head -n 1 || true)
		job=
		if [ -n "$fio" ]; then
			job=$(pgrep -P "$fio" -x fio | head -n 1 || true)
		fi
		if [ -n "$job" ]; then
			n=$(find "/proc/$job/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
			if [ "$n" -ge "$want" ]; then
				BG_FIO=$fio
				BG_JOB=$job
				return 0
			fi
		fi
		sleep 0.1
	done
	fail "fio's job process did not start with $want threads"
}

# bg_wait - wait for $BG_PID; sets $status and $BG_SECS.
bg_wait() {
	local t0=$SECONDS
	status=0
	wait "$BG_PID" || status=$?
	BG_SECS=$((SECONDS - t0))
}

bg_show() {
	{
		printf 'fio exit status: %s after %ss\ncommand: %s\n' "$status" "${BG_SECS:-?}" "${FIO_ARGV[*]}"
		printf -- '--- stderr\n'
		clip <"$1.err"
		printf -- '--- stdout\n'
		clip <"$1.out"
	} >&2
}

# --- EIO in the middle of an operation ---------------------------------------

# The bad range: 4 KiB at 3 MiB + 256 KiB, i.e. inside block 2 (B=128k) of
# the operation at 3 MiB (bs=1m), in part 0 of 2 with tswap_threads=2.
BAD_OFF=$((3 * 1048576 + 262144))
BAD_LEN=4096

# eio_case TARGET RW BACKEND WINDOW SUBMIT THREADS COE
eio_case() {
	local t=$1 rw=$2 be=$3 win=$4 sub=$5 threads=$6 coe=$7
	local st=$SCRATCH/eio.json what
	what="$rw backend=$be window=$win submit=$sub threads=$threads continue_on_error=$coe"
	echo "# eio: $what" >&3
	rm -f "$st"
	run_fio --filename="$t" --size=8m --bs=1m --iodepth=2 --rw="$rw" \
		--tswap_block_size=128k --tswap_queue_depth=4 --tswap_backend="$be" \
		--tswap_window="$win" --tswap_submit="$sub" --tswap_threads="$threads" \
		--continue_on_error="$coe" --output-format=json --tswap_stats="$st"
	if [ "$coe" = none ]; then
		if [ "$status" -ne 1 ]; then
			show_fio
			fail "$what: expected fio to exit 1 on the I/O error, got $status"
		fi
		# fio names the operation that failed and the kernel's errno.
		if ! grep -q "io_u error on file $t: Input/output error: $rw offset=3145728, buflen=1048576" <<<"$stderr"; then
			show_fio
			fail "$what: fio did not report EIO for the operation at 3 MiB"
		fi
	else
		# fio goes on, exits 0 and reports the error in its JSON: one
		# failed operation, the 7 others transferred in full.
		if [ "$status" -ne 0 ]; then
			show_fio
			fail "$what: expected fio to go on and exit 0, got $status"
		fi
		run -0 jq -r --arg d "$rw" '.jobs[0] | "\(.error) \(.first_error) \(.total_err) \(.[$d].io_bytes)"' <<<"$(json_out)"
		[ "$output" = "5 5 1 7340032" ] ||
			fail "$what: fio JSON error/first_error/total_err/io_bytes = '$output', expected '5 5 1 7340032'"
	fi
	# The engine counted the failed block and operation, and never the
	# failed block's bytes.
	assert_file_exists "$st"
	run -0 jq -r '"\(.op_errors) \(.block_errors) \(.short_blocks) \(.bytes < .blocks * 131072)"' "$st"
	[ "$output" = "1 1 0 true" ] ||
		fail "$what: stats op_errors/block_errors/short_blocks/bytes<blocks*B = '$output': $(jq -c . "$st")"
}

eio_matrix() {
	local t=$1 rw be win coe
	for rw in read write; do
		for be in libaio io_uring; do
			if [ "$be" = io_uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
				echo "# io_uring disabled here: libaio only" >&3
				continue
			fi
			for win in sequential overlap; do
				for coe in none all; do
					eio_case "$t" "$rw" "$be" "$win" block 1 "$coe"
					eio_case "$t" "$rw" "$be" "$win" single 2 "$coe"
				done
			done
		done
	done
}

@test "faults: EIO mid-operation from a device-mapper error target, both backends and windows, continue_on_error off and on" {
	requires_dm
	dm_bad_device "tswap-faults-$$" "$BAD_OFF" "$BAD_LEN"
	eio_matrix "$DMDEV"
}

@test "faults: EIO mid-operation from a FUSE file (faultfs), both backends and windows, continue_on_error off and on" {
	requires_fuse
	faultfs_mount 16 --eio=rw:"$BAD_OFF:$BAD_LEN"
	eio_matrix "$FAULTFS_FILE"
}

# --- the target vanishing ------------------------------------------------------

@test "faults: the FUSE server killed mid-run: the job fails with the kernel's error, bounded, both backends" {
	requires_fuse
	local be
	for be in libaio io_uring; do
		faultfs_mount 16 --delay-ms=5
		bg_fio "$SCRATCH/vanish-$be" --filename="$FAULTFS_FILE" --size=16m --bs=1m \
			--iodepth=2 --rw=read --loops=100 --tswap_block_size=128k \
			--tswap_threads=2 --tswap_backend="$be"
		bg_job_pid 3
		sleep 1
		kill -KILL "$FAULTFS_PID"
		bg_wait
		if [ "$status" -ne 1 ]; then
			bg_show "$SCRATCH/vanish-$be"
			fail "backend=$be: expected exit 1 once the server is gone, got $status"
		fi
		grep -Eq 'io_u error on file .*: (Transport endpoint is not connected|Software caused connection abort)' "$SCRATCH/vanish-$be.err" ||
			{ bg_show "$SCRATCH/vanish-$be"; fail "backend=$be: no ENOTCONN/ECONNABORTED reported"; }
		[ "$BG_SECS" -le 20 ] || fail "backend=$be: fio took ${BG_SECS}s to give up"
		umount "$SCRATCH/faultfs" 2>/dev/null || umount -l "$SCRATCH/faultfs"
	done
}

@test "faults: a loop device detached (losetup -d) under a verified job: bounded failure, never a silent success, both backends" {
	requires loopdev
	local be
	for be in libaio io_uring; do
		loop_setup 64
		local dev=$LOOPDEV img
		img=$(losetup -n -O BACK-FILE "$dev")
		# Passes of write + verify: fio closes and reopens the device
		# between passes, and the kernel detaches it at that close; the
		# pass after it fails (more passes than fit in the timeout, so a
		# job that did not fail would time out, not pass).
		bg_fio "$SCRATCH/detach-$be" --filename="$dev" --size=32m --bs=4m --iodepth=2 \
			--rw=write --loops=100000 --verify=crc32c --verify_fatal=1 \
			--tswap_threads=2 --tswap_backend="$be"
		bg_job_pid 3
		sleep 1
		losetup -d "$dev" || fail "losetup -d $dev failed"
		bg_wait
		if [ "$status" -ne 1 ]; then
			bg_show "$SCRATCH/detach-$be"
			fail "backend=$be: expected exit 1 after the detach, got $status"
		fi
		# The unbound device takes no write (ENOSPC) and reads nothing
		# (0 bytes, reported short): fio says which, never 'verified'.
		grep -Eq 'No space left on device|verify: bad|zero sized' "$SCRATCH/detach-$be.err" ||
			{ bg_show "$SCRATCH/detach-$be"; fail "backend=$be: no clear error after the detach"; }
		grep -q '^tswap:' "$SCRATCH/detach-$be.err" &&
			{ bg_show "$SCRATCH/detach-$be"; fail "backend=$be: the engine complained at init"; }
		[ "$BG_SECS" -le 30 ] || fail "backend=$be: fio took ${BG_SECS}s"
		# The detach happened once fio let go of the device.
		[ -z "$(losetup -j "$img")" ] || fail "backend=$be: $img is still attached: $(losetup -j "$img")"
	done
}

# --- short read at end of file -----------------------------------------------------

# short_eof_case BACKEND WINDOW THREADS - read 4 MiB in 1 MiB operations from
# a 3.5 MiB file: the last operation is short.
short_eof_case() {
	local be=$1 win=$2 threads=$3 f=$SCRATCH/short.file st=$SCRATCH/short.json
	local what="backend=$be window=$win threads=$threads"
	rm -f "$f" "$st"
	truncate -s 3584k "$f"
	fio_ok --filename="$f" --size=4m --bs=1m --rw=read --create_on_open=1 \
		--output-format=json --tswap_backend="$be" --tswap_window="$win" \
		--tswap_threads="$threads" --tswap_block_size=256k --tswap_stats="$st"
	# fio's accounting is what it is with its own libaio engine (one
	# short I/O, no error; fio 3.33 drops the bytes of a short operation
	# it requeues and finds at EOF); the engine counts every byte.
	run -0 jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)"
	[ "$output" = "$SHORT_REF" ] || fail "$what: fio error/io_bytes/short_ios/total_ios = '$output', fio's libaio engine: '$SHORT_REF'"
	run -0 jq -r '"\(.op_errors) \(.op_short) \(.bytes)"' "$st"
	[ "$output" = "0 1 3670016" ] || fail "$what: stats op_errors/op_short/bytes = '$output', expected '0 1 3670016'"

	# A verified file cut short: the verify of the last operation fails
	# at the cut; what is past the end is never taken for data.
	rm -f "$f"
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --verify=crc32c \
		--verify_interval=4k --do_verify=0 --tswap_backend="$be"
	[ "$status" -eq 0 ] || { show_fio; fail "$what: writing the verified file failed"; }
	truncate -s 3584k "$f"
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --verify=crc32c \
		--verify_interval=4k --verify_only --create_on_open=1 \
		--tswap_backend="$be" --tswap_window="$win" --tswap_threads="$threads" \
		--tswap_block_size=256k
	if [ "$status" -ne 1 ] || ! grep -q "^verify: .* at file $f offset 3670016," <<<"$stderr"; then
		show_fio
		fail "$what: verify_only of a file cut at 3.5 MiB must fail at offset 3670016"
	fi
}

@test "faults: short read at end of file: reported short as fio expects, every byte in the stats, stale data never verifies, both backends" {
	local be win f=$SCRATCH/short.file
	# The reference: fio's own libaio engine on the same short file.
	truncate -s 3584k "$f"
	run -0 timeout -k 10 "$FIO_TIMEOUT" fio --name=swap --ioengine=libaio --direct=1 \
		--filename="$f" --size=4m --bs=1m --rw=read --create_on_open=1 --output-format=json
	SHORT_REF=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)")
	assert_regex "$SHORT_REF" '^0 [0-9]+ 1 4$'
	for be in libaio io_uring; do
		if [ "$be" = io_uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
			continue
		fi
		for win in sequential overlap; do
			short_eof_case "$be" "$win" 1
			short_eof_case "$be" "$win" 2
		done
	done
}

# A short read in the middle of the file (faultfs --short): the kernel
# returns fewer bytes than asked for one block, not at EOF.
@test "faults: short read mid-file (FUSE faultfs): reported exactly as fio's libaio engine reports it, both backends and windows" {
	requires_fuse
	faultfs_mount 16 --short="$BAD_OFF:$BAD_LEN"
	local ref be win threads st=$SCRATCH/mid.json got
	run -0 timeout -k 10 "$FIO_TIMEOUT" fio --name=swap --ioengine=libaio --direct=1 \
		--filename="$FAULTFS_FILE" --size=8m --bs=1m --rw=read --output-format=json
	ref=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)")
	assert_regex "$ref" '^0 [0-9]+ [1-9][0-9]* [0-9]+$'
	for be in libaio io_uring; do
		for win in sequential overlap; do
			for threads in 1 2; do
				rm -f "$st"
				fio_ok --filename="$FAULTFS_FILE" --size=8m --bs=1m --rw=read \
					--output-format=json --tswap_block_size=128k --tswap_backend="$be" \
					--tswap_window="$win" --tswap_threads="$threads" --tswap_stats="$st"
				got=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)")
				[ "$got" = "$ref" ] ||
					fail "backend=$be window=$win threads=$threads: fio error/io_bytes/short_ios/total_ios '$got', with fio's libaio engine '$ref'"
				run -0 jq -r '"\(.op_errors) \(.op_short >= 1) \(.short_blocks >= 1)"' "$st"
				[ "$output" = "0 true true" ] ||
					fail "backend=$be window=$win threads=$threads: stats $(jq -c '{op_errors, op_short, short_blocks}' "$st")"
			done
		done
	done
}

# --- ENOSPC ----------------------------------------------------------------------

@test "faults: ENOSPC writing a file on a full loop-mounted ext4, both backends and windows" {
	requires loopdev
	if ! command -v mkfs.ext4 >/dev/null; then
		skip "requires mkfs.ext4 (e2fsprogs)"
	fi
	loop_setup 24
	mkfs.ext4 -q -F "$LOOPDEV" || fail "mkfs.ext4 $LOOPDEV failed"
	mkdir -p "$SCRATCH/ext4"
	mount "$LOOPDEV" "$SCRATCH/ext4" || fail "mount $LOOPDEV failed"
	printf 'mount\t%s\n' "$SCRATCH/ext4" >>"$CLEANUP_LIST"
	local be win f=$SCRATCH/ext4/swapfile st=$SCRATCH/enospc.json
	for be in libaio io_uring; do
		for win in sequential overlap; do
			rm -f "$f" "$st"
			# fallocate=none: the space runs out under the engine's
			# writes, not in fio's layout.
			run_fio --filename="$f" --size=32m --bs=2m --iodepth=2 --rw=write \
				--fallocate=none --tswap_block_size=256k --tswap_threads=2 \
				--tswap_backend="$be" --tswap_window="$win" --tswap_stats="$st"
			if [ "$status" -ne 1 ] || ! grep -q "io_u error on file $f: No space left on device: write offset=" <<<"$stderr"; then
				show_fio
				fail "backend=$be window=$win: expected exit 1 with ENOSPC"
			fi
			run -0 jq -r '"\(.op_errors >= 1) \(.block_errors >= 1) \(.bytes < 33554432)"' "$st"
			assert_output "true true true"
		done
	done
}

# --- EAGAIN ----------------------------------------------------------------------

@test "faults: EAGAIN at io_setup (fs.aio-max-nr lowered): one line at init, restored after" {
	requires root
	local saved used
	saved=$(cat /proc/sys/fs/aio-max-nr)
	undo sysctl /proc/sys/fs/aio-max-nr "$saved"
	used=$(cat /proc/sys/fs/aio-nr)
	# Room for two and a half contexts of 8 beyond what other processes
	# hold: 64 contexts cannot fit however that changes meanwhile.
	echo $((used + 20)) >/proc/sys/fs/aio-max-nr
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write \
		--tswap_queue_depth=8 --tswap_threads=64
	assert_rejected "tswap_queue_depth=8 x tswap_threads=64" "io_setup failed" "fs.aio-max-nr=$((used + 20))"
	# One context larger than the limit: said before any io_setup.
	echo 4 >/proc/sys/fs/aio-max-nr
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write --tswap_queue_depth=8
	assert_rejected "tswap_queue_depth=8" "above fs.aio-max-nr=4"
	# Restored: the same job runs.
	echo "$saved" >/proc/sys/fs/aio-max-nr
	fio_ok --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write \
		--tswap_queue_depth=8 --tswap_threads=64 --verify=crc32c --do_verify=1
}

# shim_case BACKEND WINDOW THREADS ENV... - a verified job with the shim
# injecting the faults named by ENV (VAR=K assignments).
shim_case() {
	local be=$1 win=$2 threads=$3 st=$SCRATCH/shim.json log=$SCRATCH/shim.log
	shift 3
	local what="backend=$be window=$win threads=$threads $*"
	rm -f "$SCRATCH/f" "$st" "$log"
	fio_argv "$ENGINE" --filename="$SCRATCH/f" --size=8m --bs=1m --iodepth=2 \
		--rw=write --verify=crc32c --verify_interval=4k --verify_fatal=1 \
		--do_verify=1 --tswap_block_size=128k --tswap_queue_depth=4 \
		--tswap_backend="$be" --tswap_window="$win" --tswap_threads="$threads" \
		--tswap_stats="$st"
	run --separate-stderr env LD_PRELOAD="$SHIM" TSWAP_SHIM_LOG="$log" "$@" "${FIO_ARGV[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "$what: the job failed under injected EAGAIN/EINTR"
	fi
	[ -s "$log" ] || fail "$what: the shim injected nothing"
	echo "# shim $what: $(cut -d' ' -f2- "$log" | sort | uniq -c | xargs)" >&3
	run -0 jq -r '"\(.op_errors) \(.block_errors) \(.blocks) \(.submit_eagain > 0)"' "$st"
	# 8 MiB written and read back in 128 KiB blocks.
	[ "$output" = "0 0 128 true" ] || fail "$what: stats op_errors/block_errors/blocks/submit_eagain>0 = '$output'"
}

@test "faults: EAGAIN from io_submit / io_uring_submit and EINTR from io_getevents (LD_PRELOAD shim): retried, data verified" {
	requires_shim
	local win
	for win in sequential overlap; do
		shim_case libaio "$win" 1 TSWAP_SHIM_IO_SUBMIT_EAGAIN=2 TSWAP_SHIM_IO_GETEVENTS_EINTR=3
		shim_case libaio "$win" 2 TSWAP_SHIM_IO_SUBMIT_EAGAIN=3 TSWAP_SHIM_IO_GETEVENTS_EINTR=2
		if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
			shim_case io_uring "$win" 1 TSWAP_SHIM_URING_SUBMIT_EAGAIN=2
			shim_case io_uring "$win" 2 TSWAP_SHIM_URING_SUBMIT_EAGAIN=3
		fi
	done
}

# --- signals ---------------------------------------------------------------------

# stats_complete_or_absent FILE [killed] - FILE is absent, or one complete
# JSON object with the engine's keys; no temporary file is left beside it
# (unless `killed`: SIGKILL during the write leaves the engine's temporary
# file, never a partial FILE).
stats_complete_or_absent() {
	local f=$1 killed=${2:-} left
	if [ -e "$f" ]; then
		run jq -e 'has("tswap_version") and has("operations") and has("op_latency_us") and has("gbs")' "$f"
		[ "$status" -eq 0 ] || fail "$f is not complete: $(head -c 300 "$f")"
	fi
	left=$(find "$(dirname "$f")" -maxdepth 1 -name "$(basename "$f").*" | head -n 3)
	[ -n "$killed" ] || [ -z "$left" ] || fail "temporary stats files left behind: $left"
}

# signal_case SIGNAL BACKEND THREADS - signal a running job like a
# terminal's ^C does (fio and its job process).
signal_case() {
	local sig=$1 be=$2 threads=$3 out=$SCRATCH/sig-$1-$2-$3 st=$SCRATCH/stats-$1-$2-$3.json
	local what="SIG$sig backend=$be threads=$threads"
	bg_fio "$out" --filename="$SCRATCH/f" --size=64m --bs=4m --iodepth=4 --rw=randrw \
		--time_based --runtime=60 --tswap_block_size=512k --tswap_threads="$threads" \
		--tswap_backend="$be" --tswap_stats="$st"
	# The job runs with its workers (P > 1: one thread each).
	if [ "$threads" -gt 1 ]; then
		bg_job_pid $((threads + 1))
	else
		bg_job_pid 1
	fi
	sleep 1
	kill -s "$sig" "$BG_FIO" "$BG_JOB" 2>/dev/null || true
	bg_wait
	# fio's exit status after SIGINT/SIGTERM is 128.
	if [ "$status" -ne 128 ]; then
		bg_show "$out"
		fail "$what: expected fio to exit 128, got $status"
	fi
	[ "$BG_SECS" -le 15 ] || fail "$what: fio took ${BG_SECS}s to stop"
	# Nothing left running: the job process and every worker are gone.
	! kill -0 "$BG_JOB" 2>/dev/null || fail "$what: the job process $BG_JOB is still there"
	# fio waited for the operations in flight: the stats are written whole.
	assert_file_exists "$st"
	stats_complete_or_absent "$st"
	run -0 jq -r '"\(.operations > 0) \(.op_errors)"' "$st"
	[ "$output" = "true 0" ] || fail "$what: stats: $(jq -c '{operations, op_errors}' "$st")"
}

@test "faults: SIGINT and SIGTERM mid-job: fio exits 128 within the bound, workers gone, stats complete" {
	local sig be
	for sig in INT TERM; do
		for be in libaio io_uring; do
			if [ "$be" = io_uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
				continue
			fi
			signal_case "$sig" "$be" 4
		done
	done
	signal_case INT libaio 1
}

@test "faults: SIGKILL around the end of a job: the stats file is complete or absent, never half-written" {
	local i=0 st=$SCRATCH/kill.json delay
	# From just before the job's end (1 s of I/O) to just after.
	for delay in 0.6 0.7 0.8 0.9 1.0 1.1; do
		i=$((i + 1))
		rm -f "$st"
		bg_fio "$SCRATCH/kill-$i" --filename="$SCRATCH/f" --size=16m --bs=1m --iodepth=2 \
			--rw=randrw --time_based --runtime=1 --tswap_threads=2 --tswap_stats="$st"
		bg_job_pid 3
		sleep "$delay"
		kill -KILL "$BG_JOB" 2>/dev/null || true
		bg_wait
		# fio 3.33's parent may then abort (exit 134, "free(): double
		# free"): it does with fio's own libaio engine too. A hang is
		# timeout's 124 or 137.
		if [ "$status" -eq 124 ] || [ "$status" -eq 137 ] || [ "$BG_SECS" -gt 15 ]; then
			bg_show "$SCRATCH/kill-$i"
			fail "kill $i: fio did not end by itself (exit $status after ${BG_SECS}s)"
		fi
		echo "# kill after ${delay}s: fio exit $status, stats $([ -e "$st" ] && echo written || echo absent)" >&3
		stats_complete_or_absent "$st" killed
	done
}

# aio_room N - skip unless N more libaio events fit in fs.aio-max-nr.
aio_room() {
	local max nr
	max=$(cat /proc/sys/fs/aio-max-nr)
	nr=$(cat /proc/sys/fs/aio-nr)
	[ $((max - nr)) -ge "$1" ] || skip "needs $1 libaio events free (fs.aio-max-nr=$max, in use $nr)"
}

@test "faults: 1024 libaio workers tear down in parallel: SIGINT to exit and a whole job within 5 s (issue 11, item 8)" {
	local t0 ms threads
	aio_room $((1024 * 8))
	# A whole short job: set up 1024 contexts, write 4 MiB, tear down.
	# Each io_destroy waits ~30 ms (an RCU grace period): one after
	# another that was 35 s; in parallel, in the workers, well under 1 s.
	for threads in 256 1024; do
		t0=$(date +%s%N)
		fio_ok --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write --tswap_block_size=512 \
			--tswap_threads="$threads"
		ms=$((($(date +%s%N) - t0) / 1000000))
		echo "# tswap_threads=$threads, libaio: whole job ${ms} ms" >&3
		[ "$ms" -le 5000 ] || fail "tswap_threads=$threads: the job took ${ms} ms (teardown serialised?)"
	done
	# SIGINT mid-job, as a terminal's ^C: fio and its job process.
	bg_fio "$SCRATCH/par" --filename="$SCRATCH/f" --size=64m --bs=4m --iodepth=4 --rw=randrw \
		--time_based --runtime=60 --tswap_block_size=4k --tswap_threads=1024
	bg_job_pid 1025
	sleep 1
	t0=$(date +%s%N)
	kill -s INT "$BG_FIO" "$BG_JOB" 2>/dev/null || true
	bg_wait
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# tswap_threads=1024, libaio: exit ${ms} ms after SIGINT (fio exit $status)" >&3
	if [ "$status" -ne 128 ]; then
		bg_show "$SCRATCH/par"
		fail "expected fio to exit 128 after SIGINT, got $status"
	fi
	[ "$ms" -le 5000 ] || fail "fio took ${ms} ms to exit after SIGINT with 1024 workers"
	! kill -0 "$BG_JOB" 2>/dev/null || fail "the job process $BG_JOB is still there"
}

# A short read whose remainder does not split over the threads (issue 11,
# item 7): fio resubmits the rest of the operation (xfer_buflen = resid),
# of any size; the engine runs it in as many DIO-aligned parts as divide
# it, or on one worker, and fio reports exactly what its libaio engine does.
@test "faults: short read mid-file, remainders that do and do not split over 1-4 threads: as fio's libaio engine reports it" {
	requires_fuse
	local short ref be threads got st=$SCRATCH/rem.json n=0
	# Short at 1 MiB + 4 KiB: the rest of the 3 MiB operation is 511
	# pages (splits over no thread count); at 1.5 MiB: 384 pages (splits
	# over 2, 3 and 4).
	for short in 1052672 1572864; do
		faultfs_mount 16 --short="$short:4096"
		run -0 timeout -k 10 "$FIO_TIMEOUT" fio --name=swap --ioengine=libaio --direct=1 \
			--filename="$FAULTFS_FILE" --size=12m --bs=3m --rw=read --output-format=json
		ref=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)")
		assert_regex "$ref" '^0 [0-9]+ [1-9][0-9]* [0-9]+$'
		echo "# short at $short: fio's libaio engine: error/io_bytes/short_ios/total_ios $ref" >&3
		for be in libaio io_uring; do
			if [ "$be" = io_uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
				continue
			fi
			for threads in 1 2 3 4; do
				n=$((n + 1))
				rm -f "$st"
				fio_ok --filename="$FAULTFS_FILE" --size=12m --bs=3m --rw=read \
					--output-format=json --tswap_block_size=256k --tswap_backend="$be" \
					--tswap_threads="$threads" --tswap_stats="$st"
				got=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$(json_out)")
				[ "$got" = "$ref" ] ||
					fail "short=$short backend=$be threads=$threads: fio error/io_bytes/short_ios/total_ios '$got', with fio's libaio engine '$ref'"
				run -0 jq -r '"\(.op_errors) \(.op_short >= 1) \(.short_blocks >= 1)"' "$st"
				[ "$output" = "0 true true" ] ||
					fail "short=$short backend=$be threads=$threads: stats $(jq -c '{op_errors, op_short, short_blocks}' "$st")"
			done
		done
		# Next offset: a fresh faultfs (the undo list has this one too).
		umount "$SCRATCH/faultfs" 2>/dev/null || umount -l "$SCRATCH/faultfs"
		kill "$FAULTFS_PID" 2>/dev/null || true
		wait "$FAULTFS_PID" 2>/dev/null || true
	done
	echo "# $n runs, each as fio's libaio engine" >&3
}
