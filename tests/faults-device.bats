#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # jq programs in single quotes; bats sets $stderr, $output, $status
#
# The fault matrix of issue 7 (docs/reliability.md), the device's part:
# what fio and the user see when the device misbehaves under tswap, with
# real faults wherever the kernel can make them:
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
#       the middle of a file: faultfs answering one range short, also with
#       remainders that do not split over the threads.
#   ENOSPC on write: a file on a small loop-mounted ext4.
#
# The system's part (EAGAIN, EINTR, signals) is tests/faults-sys.bats.
# ENOSPC from a loop device over a full tmpfs, and the scheduler's faults
# through the fake backend (tests/unit/test_sched.c), are in
# tests/errors.bats and the unit tests.
#
# Everything a test changes (dm devices, FUSE mounts and their servers,
# loop devices, mounts) is undone in teardown, also when the test fails;
# every fio runs under `timeout` (tests/faults-helpers.bash).

load helpers
load faults-helpers

FAULTFS=$REPO/build/tools/faultfs

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

# faultfs_mount BACKING_MB [faultfs options...] - mount a faultfs over a
# fresh backing file; the fault target is $FAULTFS_FILE, the server's pid
# $FAULTFS_PID.  Unmounted and killed in teardown.
faultfs_mount() {
	local mb=$1 mnt=$SCRATCH/faultfs
	shift
	mkdir -p "$mnt"
	rm -f "$SCRATCH/faultfs.img"
	truncate -s "${mb}M" "$SCRATCH/faultfs.img"
	"$FAULTFS" "$@" "$SCRATCH/faultfs.img" "$mnt" \
		</dev/null >"$SCRATCH/faultfs.log" 2>&1 3>&- &
	FAULTFS_PID=$!
	undo fuse "$mnt" "$FAULTFS_PID"
	for _ in $(seq 50); do
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
		# the kernel's error, wherever fio meets it: in the engine's read
		# (io_u error, stderr) or, on a loaded machine, in fio's open of
		# the next loop (err=N ... func=open, which fio 3.33 prints on stdout)
		grep -Eq 'io_u error on file .*: (Transport endpoint is not connected|Software caused connection abort)|err=(107|103)/file:[^,]*, func=open\(.*\), error=(Transport endpoint is not connected|Software caused connection abort)' \
			"$SCRATCH/vanish-$be.err" "$SCRATCH/vanish-$be.out" ||
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
