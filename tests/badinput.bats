#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# Bad input (issue 2, "Bad input"): each gets a non-zero fio exit (not a
# crash, not a hang) and one stderr line naming the option and the rule.
# fio's own option parser answers some of them (e.g. min values); its line
# names the option too, and is accepted.

load helpers

setup() {
	common_setup
	JOB=(--filename="$SCRATCH/f" --size=4m --bs=1m --rw=write)
}
teardown() { common_teardown; }

@test "bad input: the baseline job of these tests is accepted" {
	fio_ok "${JOB[@]}" --tswap_block_size=256k --tswap_threads=2
	assert_file_exists "$SCRATCH/f"
}

@test "bad input: direct=0 is refused, saying to set direct=1" {
	run_fio "${JOB[@]}" --direct=0
	assert_rejected "direct=0" "O_DIRECT" "set direct=1"
}

@test "bad input: tswap_block_size=0" {
	run_fio "${JOB[@]}" --tswap_block_size=0
	assert_rejected tswap_block_size=0 "multiple of the DIO"
}

@test "bad input: tswap_block_size=1000 is not a multiple of the DIO alignment" {
	run_fio "${JOB[@]}" --tswap_block_size=1000
	assert_rejected tswap_block_size=1000 "multiple of the DIO offset alignment"
}

@test "bad input: tswap_block_size=6k on a 4 KiB-sector device (accepted on a 512-byte one)" {
	requires loopdev
	loop_setup 8 4096
	run_fio --filename="$LOOPDEV" --size=3m --bs=48k --rw=write --tswap_block_size=6k
	assert_rejected tswap_block_size=6144 "multiple of the DIO offset alignment" "4096 bytes"
	loop_setup 8 512
	fio_ok --filename="$LOOPDEV" --size=3m --bs=48k --rw=write --tswap_block_size=6k \
		--verify=crc32c --do_verify=1 --verify_fatal=1
}

@test "bad input: bs=1m not divisible by tswap_threads=3" {
	run_fio "${JOB[@]}" --tswap_threads=3
	assert_rejected tswap_threads=3 "bs=1048576" "not divisible"
}

@test "bad input: bs=1k, tswap_threads=4: 256-byte parts are not DIO-aligned" {
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1k --rw=write --tswap_threads=4
	assert_rejected tswap_threads=4 "bs=1024" "multiple of the DIO offset alignment"
}

@test "bad input: bs=12k, tswap_threads=2 on a 4 KiB-sector device: 6k parts are not aligned" {
	requires loopdev
	loop_setup 8 4096
	run_fio --filename="$LOOPDEV" --size=4m --bs=12k --rw=write --tswap_threads=2
	assert_rejected tswap_threads=2 "bs=12288" "multiple of the DIO offset alignment" "4096 bytes"
}

@test "bad input: tswap_queue_depth=0" {
	run_fio "${JOB[@]}" --tswap_queue_depth=0
	assert_rejected tswap_queue_depth=0 "at least 1"
}

@test "bad input: tswap_queue_depth above /proc/sys/fs/aio-max-nr" {
	local max
	max=$(cat /proc/sys/fs/aio-max-nr)
	run_fio "${JOB[@]}" --tswap_queue_depth=$((max + 1))
	assert_rejected "tswap_queue_depth=$((max + 1))" "aio-max-nr=$max"
}

@test "bad input: tswap_threads=0" {
	run_fio "${JOB[@]}" --tswap_threads=0
	assert_rejected tswap_threads=0 "1..1024"
}

@test "bad input: tswap_submit=bogus" {
	run_fio "${JOB[@]}" --tswap_submit=bogus
	# fio's option parser answers: "fio: failed parsing tswap_submit=bogus".
	assert_rejected tswap_submit=bogus
}

@test "bad input: tswap_window=bogus" {
	run_fio "${JOB[@]}" --tswap_window=bogus
	assert_rejected tswap_window=bogus
}

@test "bad input: tswap_backend=bogus" {
	run_fio "${JOB[@]}" --tswap_backend=bogus
	assert_rejected tswap_backend=bogus
}

@test "tswap_backend=io_uring: a clear error until the backend exists, verified data once it does" {
	requires io_uring
	run_fio "${JOB[@]}" --tswap_backend=io_uring --verify=crc32c --do_verify=1 --verify_fatal=1
	if [ "$status" -eq 0 ]; then
		# The io_uring backend has landed: the job must have verified.
		assert_regex "$output" "READ: .*io=4096KiB"
	else
		assert_rejected io_uring
	fi
}

@test "bad input: a target that refuses O_DIRECT (ramfs)" {
	requires ramfs
	mount_scratch "$SCRATCH/ramfs" ramfs
	run_fio --filename="$SCRATCH/ramfs/f" --size=4m --bs=1m --rw=write
	assert_rejected "refuses O_DIRECT" "direct=1"
}

@test "bad input: tswap_stats in a directory that does not exist" {
	run_fio "${JOB[@]}" --tswap_stats="$SCRATCH/nonexistent/stats.json"
	# The line names the directory that is missing.
	assert_rejected "tswap_stats=$SCRATCH/nonexistent/stats.json" \
		"cannot create a file in $SCRATCH/nonexistent:" "No such file or directory"
}

@test "bad input: tswap_stats in a read-only directory" {
	requires root
	mount_scratch "$SCRATCH/ro" tmpfs ro,size=1m
	run_fio "${JOB[@]}" --tswap_stats="$SCRATCH/ro/stats.json"
	# The line names the directory that is read-only.
	assert_rejected "tswap_stats=$SCRATCH/ro/stats.json" \
		"cannot create a file in $SCRATCH/ro:" "Read-only file system"
	assert_file_not_exists "$SCRATCH/ro/stats.json"
}

@test "bad input: an engine built for another fio version names both versions and make" {
	requires wrongver
	run_fio_with "$WRONGVER_ENGINE" "${JOB[@]}"
	assert_rejected "built for fio-0.0-test" "loaded by $(fio_version)" "make"
}

@test "bad input: tswap_stats with an unknown %-escape" {
	run_fio "${JOB[@]}" --tswap_stats="$SCRATCH/stats-%x.json"
	assert_rejected "tswap_stats=$SCRATCH/stats-%x.json" "unknown %-escape"
	assert_file_not_exists "$SCRATCH/stats-%x.json"
}

# --- tswap_stats never replaces what is at the path (issue 11, item 1) ---

# stats_refused PATH TEXT... - the job is refused at init naming PATH and
# TEXT, before any I/O (fio may have laid out the target file already).
stats_refused() {
	local path=$1
	shift
	run_fio "${JOB[@]}" --tswap_stats="$path"
	assert_rejected "tswap_stats=$path" "$@"
	refute_output --partial "WRITE: bw="
}

@test "tswap_stats: a character device (copy of /dev/null) is refused and left a device" {
	requires root
	mknod "$SCRATCH/null" c 1 3
	stats_refused "$SCRATCH/null" "character device" "regular file"
	[ -c "$SCRATCH/null" ] || fail "the device node was replaced"
}

@test "tswap_stats: a FIFO is refused and left a FIFO" {
	mkfifo "$SCRATCH/fifo"
	stats_refused "$SCRATCH/fifo" "FIFO" "regular file"
	[ -p "$SCRATCH/fifo" ] || fail "the FIFO was replaced"
}

@test "tswap_stats: a symlink to /proc/self/fd/1 is refused and left a symlink" {
	ln -s /proc/self/fd/1 "$SCRATCH/out"
	run_fio "${JOB[@]}" --tswap_stats="$SCRATCH/out"
	assert_rejected "tswap_stats=$SCRATCH/out" "regular file"
	[ -L "$SCRATCH/out" ] || fail "the symlink was replaced"
	[ "$(readlink "$SCRATCH/out")" = /proc/self/fd/1 ] || fail "the symlink was changed"
}

@test "tswap_stats: a dangling symlink is refused and left as it is" {
	ln -s "$SCRATCH/nowhere/x.json" "$SCRATCH/dangling"
	stats_refused "$SCRATCH/dangling" "symbolic link"
	[ -L "$SCRATCH/dangling" ] || fail "the symlink was replaced"
}

@test "tswap_stats: a symlink to a regular file writes the file and keeps the symlink" {
	echo old >"$SCRATCH/real.json"
	ln -s real.json "$SCRATCH/link.json"
	fio_ok "${JOB[@]}" --tswap_stats="$SCRATCH/link.json"
	[ -L "$SCRATCH/link.json" ] || fail "the symlink was replaced by a file"
	run -0 jq -r .operations "$SCRATCH/real.json"
	assert_output 4
}

@test "tswap_stats: the job's own target file is refused, by name and through a hard link" {
	head -c 4m /dev/urandom >"$SCRATCH/f"
	cp "$SCRATCH/f" "$SCRATCH/f.orig"
	run_fio "${JOB[@]}" --rw=read --tswap_stats="$SCRATCH/f"
	assert_rejected "tswap_stats=$SCRATCH/f" "target file"
	cmp "$SCRATCH/f" "$SCRATCH/f.orig" || fail "the target file was changed"
	ln "$SCRATCH/f" "$SCRATCH/hard"
	run_fio "${JOB[@]}" --rw=read --tswap_stats="$SCRATCH/hard"
	assert_rejected "tswap_stats=$SCRATCH/hard" "target file"
	# A target that does not exist yet, named differently (./f).
	rm -f "$SCRATCH/hard" "$SCRATCH/f"
	run_fio --filename="$SCRATCH/./f" --size=4m --bs=1m --rw=write --tswap_stats="$SCRATCH/f"
	assert_rejected "tswap_stats=$SCRATCH/f" "target file"
	refute_output --partial "WRITE: bw="
}

# --- every tswap_stats path that will fail, fails at init (item 11) ---

@test "tswap_stats: a 250-character final name (its temporary name too long) fails at init" {
	local name
	name=$(printf 's%.0s' $(seq 250))
	stats_refused "$SCRATCH/$name" "File name too long"
	# 248 characters leave room for the 7-character temporary suffix.
	name=$(printf 's%.0s' $(seq 248))
	fio_ok "${JOB[@]}" --tswap_stats="$SCRATCH/$name"
	assert_file_exists "$SCRATCH/$name"
}

@test "tswap_stats: an immutable existing file fails at init and is left untouched" {
	requires root
	command -v chattr >/dev/null || skip "requires chattr (e2fsprogs)"
	echo keep >"$SCRATCH/imm.json"
	chattr +i "$SCRATCH/imm.json" 2>/dev/null || skip "the scratch filesystem has no immutable flag"
	run_fio "${JOB[@]}" --tswap_stats="$SCRATCH/imm.json"
	chattr -i "$SCRATCH/imm.json"
	assert_rejected "tswap_stats=$SCRATCH/imm.json" "immutable"
	refute_output --partial "WRITE: bw="
	[ "$(cat "$SCRATCH/imm.json")" = keep ] || fail "the immutable file was changed"
}

@test "bad input: io_submit_mode=offload is refused at load, in one line, no process left behind (issue 11, item 6)" {
	local be threads
	for be in libaio io_uring; do
		if [ "$be" = io_uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
			continue
		fi
		for threads in 1 2 4; do
			FIO_TIMEOUT=30 run_fio "${JOB[@]}" --bs=256k --iodepth=4 \
				--io_submit_mode=offload --tswap_backend="$be" --tswap_threads="$threads" \
				--verify=crc32c --do_verify=1
			assert_rejected "offload" "tswap"
			[ "$status" -eq 1 ] || fail "$be threads=$threads: exit $status, expected 1"
			refute_output --partial "WRITE: bw="
		done
	done
	# No job process of this test is left (the deadlock left orphans).
	run pgrep -f -- "--filename=$SCRATCH/f"
	assert_failure
}

@test "bad input: tswap_block_size above the kernel's per-I/O maximum is refused at init (issue 11, item 9)" {
	local v
	# 2 GiB and more: each block would come back short (MAX_RW_COUNT).
	for v in 2147483136 2g 4g 16g; do
		run_fio "${JOB[@]}" --tswap_block_size="$v"
		assert_rejected "tswap_block_size=" "MAX_RW_COUNT" "2147479552"
		refute_output --partial "WRITE: bw="
	done
	# The maximum itself (0x7ffff000 on 4 KiB pages) is accepted.
	[ "$(getconf PAGESIZE)" = 4096 ] || skip "page size $(getconf PAGESIZE): the maximum differs"
	fio_ok "${JOB[@]}" --tswap_block_size=2147479552 --verify=crc32c --do_verify=1 --verify_fatal=1
}

@test "tswap_stats: numjobs=3 with one shared path warns once; with %n each job has its file (issue 11, item 12)" {
	fio_ok "${JOB[@]}" --numjobs=3 --offset_increment=4m --tswap_stats="$SCRATCH/all.json"
	run -0 grep -c "numjobs=3 jobs write this one file.*add %n" <<<"$stderr"
	assert_output 1
	fio_ok "${JOB[@]}" --numjobs=3 --offset_increment=4m --tswap_stats="$SCRATCH/st-%n.json"
	assert_equal "$stderr" ""
	assert_file_exists "$SCRATCH/st-0.json"
	assert_file_exists "$SCRATCH/st-2.json"
	# Processes (not thread=1) have their own pid: %p is enough.
	fio_ok "${JOB[@]}" --numjobs=2 --offset_increment=4m --tswap_stats="$SCRATCH/st-%p.json"
	assert_equal "$stderr" ""
	fio_ok "${JOB[@]}" --numjobs=2 --thread --offset_increment=4m --tswap_stats="$SCRATCH/st-%p.json"
	assert_regex "$stderr" "numjobs=2 jobs write this one file"
}
