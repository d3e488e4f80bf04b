#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # awk/jq programs in single quotes; bats sets $stderr; each @test is a subshell
#
# tswap_bounce=1: DeepSpeed's path for a tensor that is not page-locked
# (csrc/aio/py_lib/deepspeed_cpu_op.cpp cpu_op_desc_t: _alloc_bounce_buffer
# -> ds_page_aligned_alloc: posix_memalign + mlock; finish: copy back,
# munlock, free), with fio's io_u buffer as the tensor:
#   - per operation, in fio's job thread: after tswap_reopen's stat/open,
#     one mlock of a buffer of the operation's size; every iocb of the
#     operation lands in that buffer; once fio reaps it, one munlock of the
#     same buffer, then tswap_reopen's close; fio's own buffers are never
#     locked (tswap_pin=auto is off);
#   - data: written and read back through the bounce buffer, byte for byte
#     what psync writes, and fio's verify fails on a changed byte;
#   - tswap_stats: bounce_ops and bounce_bytes count exactly the operations
#     and their bytes, the alloc/copy/free times are there; all 0 without it;
#   - refused in one line, before any I/O: with tswap_pin=1,
#     tswap_fixedbufs=1, tswap_handoff=inline; bad values;
#   - RLIMIT_MEMLOCK too small (root without CAP_IPC_LOCK): the operation
#     fails with mlock's errno (ENOMEM over the limit, EPERM with 0), one
#     line naming tswap_bounce and the limit, nothing written.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# bounce_trace NAME RW [fio args...] - a traced job of 4 operations of 2m
# on a file psync wrote first, with tswap_bounce=1 and tswap_reopen=1;
# leaves $LOG, $STATS, $JOB_TID and $F.
bounce_trace() {
	local name=$1 rw=$2
	shift 2
	F=$SCRATCH/$name.file
	LOG=$SCRATCH/$name.strace
	STATS=$SCRATCH/$name.stats.json
	rm -f "$F"
	psync_ok --filename="$F" --size=8m --bs=1m --rw=write
	STRACE_SYSCALLS=openat,newfstatat,stat,statx,close,mlock,munlock,io_submit,io_getevents,io_pgetevents STRACE_PATHS=1 \
		strace_fio "$LOG" --filename="$F" --size=8m --bs=2m --rw="$rw" \
		--tswap_block_size=512k --tswap_queue_depth=2 --tswap_reopen=1 \
		--tswap_bounce=1 --tswap_stats="$STATS" "$@"
	JOB_TID=$(jq -r .pid "$STATS")
}

# bounce_calls LOG PATH - in trace order: "tid stat", "tid open FD",
# "tid close FD" (of descriptors on PATH), "tid mlock ADDR LEN",
# "tid munlock ADDR LEN", "tid submit BUF..." (every iocb's aio_buf),
# "tid wait". LOG is traced with -y (STRACE_PATHS=1): a descriptor is
# PATH's by the path strace prints with it, not by its number, which is
# per process (fio's main process has a descriptor of that number too:
# its disk-util thread opens and closes /sys/block/DEV/stat every 250 ms;
# handle.bats file_calls).
bounce_calls() {
	local real
	real=$(readlink -f -- "$2")
	strace_join "$1" | awk -F '\t' -v path="$2" -v tag="<$real>" '
	{
		tid = $1; line = $2; q = "\"" path "\""
		if (line ~ /^openat\(/ && index(line, q)) {
			fd = line; sub(/.*\) += /, "", fd)
			if (index(fd, tag) && match(fd, /^[0-9]+</)) print tid, "open", substr(fd, 1, RLENGTH - 1)
		} else if (line ~ /^(stat|newfstatat|statx)\(/ && index(line, q)) {
			print tid, "stat"
		} else if (line ~ /^close\(/ && index(line, tag)) {
			fd = line; sub(/^close\(/, "", fd); sub(/<.*/, "", fd)
			print tid, "close", fd
		} else if (line ~ /^(mlock|munlock)\(/) {
			call = line; sub(/\(.*/, "", call)
			args = line; sub(/^[a-z]+\(/, "", args); sub(/\).*/, "", args)
			split(args, a, /, */)
			print tid, call, a[1], a[2]
		} else if (line ~ /^io_submit\(/) {
			out = tid " submit"
			rest = line
			while (match(rest, /aio_buf=0x[0-9a-f]+/)) {
				out = out " " substr(rest, RSTART + 8, RLENGTH - 8)
				rest = substr(rest, RSTART + RLENGTH)
			}
			print out
		} else if (line ~ /^io_p?getevents\(/) {
			print tid, "wait"
		}
	}'
}

# op_order CALLS TID - per descriptor of the file that thread TID opened
# and locked a buffer after: its calls in order, "[stat] open mlock munlock
# close", one line each as it is closed (fio's own descriptor, never
# locked after, is left out).
op_order() {
	awk -v job="$2" '
	$1 != job || $2 == "submit" || $2 == "wait" { next }
	$2 == "stat" { st = 1; next }
	$2 == "open" { seq[$3] = (st ? "stat " : "") "open"; cur = $3; st = 0; next }
	$2 ~ /lock$/ { seq[cur] = seq[cur] " " $2; locked[cur] = 1; st = 0; next }
	$2 == "close" { if (locked[$3]) print seq[$3] " close"; delete seq[$3]; st = 0 }' <<<"$1"
}

# in_locked CALLS - "OK BAD": iocbs whose aio_buf lies in a buffer mlocked
# and not yet munlocked at the time of the submit; BAD lists the others and
# any munlock of what was not locked.
in_locked() {
	awk '
	function num(h,   i, v) {
		h = tolower(substr(h, 3)); v = 0
		for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	$2 == "mlock" { lo[$3] = num($3); hi[$3] = num($3) + $4 }
	$2 == "munlock" { if (!($3 in lo)) bad = bad " munlock-" $3; delete lo[$3]; delete hi[$3] }
	$2 == "submit" {
		for (i = 3; i <= NF; i++) {
			b = num($i); hit = 0
			for (k in lo) if (b >= lo[k] && b < hi[k]) hit = 1
			if (hit) ok++; else bad = bad " iocb-" $i
		}
	}
	END { print ok + 0, (bad == "" ? "ok" : bad) }' <<<"$1"
}

@test "tswap_bounce: fio --enghelp shows it, default 0, with DeepSpeed's source" {
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_bounce"
	assert_line --regexp '^[[:space:]]*tswap_bounce[[:space:]]*: 1: .*posix_memalign.*mlock.*csrc/aio/py_lib/deepspeed_cpu_op.cpp cpu_op_desc_t'
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: 0$'
}

@test "tswap_bounce=1, swap-in: per operation stat, open, mlock of bs in the job thread; both parts' iocbs in that buffer; munlock, close once reaped" {
	requires strace
	bounce_trace r1 read --tswap_threads=2
	run -0 bounce_calls "$LOG" "$F"
	local calls=$output
	# The job thread, iodepth=1: one operation at a time, DeepSpeed's order
	# (pread: get_file_size, open_file, cpu_op_desc_t; wait: finish, close).
	run -0 op_order "$calls" "$JOB_TID"
	assert_output "stat open mlock munlock close
stat open mlock munlock close
stat open mlock munlock close
stat open mlock munlock close"
	# Each lock is the operation's 2m, unlocked as it was locked; no lock
	# of fio's own buffers (tswap_pin=auto is off); nothing locked elsewhere.
	run -0 awk '$2 ~ /lock$/ { print $2, $4 }' <<<"$calls"
	assert_equal "$(sort <<<"$output" | uniq -c | awk '{ $1 = $1 } 1')" "4 mlock 2097152
4 munlock 2097152"
	assert_equal "$(awk -v job="$JOB_TID" '$2 ~ /lock$/ && $1 != job' <<<"$calls")" ""
	# 4 operations x 2 parts x 2 blocks of 512k, every one into a locked
	# bounce buffer (strace shows a read's aio_buf as an address).
	run -0 in_locked "$calls"
	assert_output "16 ok"
	run -0 jq -r '"\(.operations) \(.bounce_ops) \(.bounce_bytes) \(.pinned)"' "$STATS"
	assert_output "4 4 8388608 false"
}

@test "tswap_bounce=1, swap-out with tswap_threads=2: open, mlock in the job thread before the workers' submits, munlock after the last wait, close; no stat" {
	requires strace
	bounce_trace w2 write --tswap_threads=2
	run -0 bounce_calls "$LOG" "$F"
	local calls=$output
	run -0 op_order "$calls" "$JOB_TID"
	assert_output "open mlock munlock close
open mlock munlock close
open mlock munlock close
open mlock munlock close"
	# One buffer per operation, not per part: 4 locks of 2m.
	assert_equal "$(grep -c ' mlock 0x[0-9a-f]* 2097152$' <<<"$calls")" 4
	# In trace order (iodepth=1): each lock, then the operation's submits
	# and waits, then its unlock.
	run -0 awk '$2 ~ /lock$|submit|wait/ { print $2 }' <<<"$calls"
	assert_equal "$(uniq <<<"$output" | grep -v wait | uniq | xargs)" \
		"$(printf 'mlock submit munlock %.0s' 1 2 3 4 | xargs)"
	# The submits came from the two workers, never the job thread.
	run -0 awk -v job="$JOB_TID" '$2 == "submit" { t[$1] = 1 } END { n = 0; for (k in t) { n++; if (k == job) n += 100 } print n }' <<<"$calls"
	assert_output 2
}

@test "tswap_bounce=1: written and read back through the bounce buffer byte for byte; verify catches a changed byte" {
	local f=$SCRATCH/b.file ref=$SCRATCH/ref.file pat=0x5a17c3e9
	rm -f "$f" "$ref"
	# Written through the bounce buffers (2 in flight) and read back
	# through them by fio's verify.
	fio_ok --filename="$f" --size=16m --bs=4m --iodepth=2 --rw=write \
		--tswap_block_size=1m --tswap_threads=2 --tswap_bounce=1 \
		--verify=crc32c --do_verify=1 --output-format=json
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$output"
	assert_output "0 16777216 16777216"
	# The bytes on disk are what psync writes from the same pattern.
	rm -f "$f"
	fio_ok --filename="$f" --size=16m --bs=4m --iodepth=2 --rw=write \
		--tswap_bounce=1 --scramble_buffers=0 --buffer_pattern="$pat"
	psync_ok --filename="$ref" --size=16m --bs=4m --rw=write \
		--scramble_buffers=0 --buffer_pattern="$pat"
	run -0 cmp "$f" "$ref"
	# Read back through the bounce buffers: the pattern, and a byte
	# changed on disk is seen (the copy out is the file's data).
	fio_ok --filename="$f" --size=16m --bs=4m --rw=write --verify_only=1 \
		--verify=pattern --verify_pattern="$pat" --tswap_bounce=1
	printf '\001' | dd of="$f" bs=1 seek=$((9 * 1048576 + 7)) conv=notrunc status=none
	run_fio --filename="$f" --size=16m --bs=4m --rw=write --verify_only=1 \
		--verify=pattern --verify_pattern="$pat" --tswap_bounce=1
	[ "$status" -ne 0 ] || fail "verify passed over a changed byte"
	assert_regex "$stderr" "verify"
}

@test "tswap_bounce=1: fio's buffer need not be aligned for direct I/O (the bounce buffer is); without it, refused" {
	local f=$SCRATCH/ma.file pat=0x3c5a96e1 ref=$SCRATCH/ma.ref
	rm -f "$f" "$ref"
	# iomem_align=16: fio's buffers start 16 bytes past a page. DeepSpeed
	# bounces a tensor that is not page-locked whatever its address; the
	# I/O goes to the page-aligned bounce buffer.
	fio_ok --filename="$f" --size=8m --bs=1m --iodepth=2 --rw=write --iomem_align=16 \
		--tswap_threads=2 --tswap_bounce=1 --verify=crc32c --do_verify=1 --output-format=json
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$output"
	assert_output "0 8388608 8388608"
	assert_equal "$stderr" ""
	fio_ok --filename="$f" --size=8m --bs=1m --rw=write --iomem_align=16 \
		--tswap_bounce=1 --scramble_buffers=0 --buffer_pattern="$pat"
	psync_ok --filename="$ref" --size=8m --bs=1m --rw=write --scramble_buffers=0 \
		--buffer_pattern="$pat"
	run -0 cmp "$f" "$ref"
	# The same buffers with the I/O in them are refused.
	run_fio --filename="$f" --size=8m --bs=1m --rw=read --iomem_align=16
	assert_rejected "operation of 1048576 bytes" "not aligned for direct I/O"
}

@test "tswap_bounce: stats count exactly the operations and their bytes; all 0 and false without it" {
	local f=$SCRATCH/s.file st=$SCRATCH/s.json
	rm -f "$f"
	# 6 writes of 2m and the 6 verify reads, then 3 reads of 4m.
	fio_ok --filename="$f" --size=12m --bs=2m --iodepth=2 --rw=write \
		--tswap_bounce=1 --verify=crc32c --do_verify=1 --tswap_stats="$st"
	run -0 jq -r '"\(.bounce) \(.operations) \(.bounce_ops) \(.bounce_bytes) \(.pin) \(.pinned)"' "$st"
	assert_output "true 12 12 25165824 auto false"
	run -0 jq -r '[.bounce_alloc_ns, .bounce_copy_ns, .bounce_free_ns] | map(type == "number" and . > 0) | all' "$st"
	assert_output true
	fio_ok --filename="$f" --size=12m --bs=4m --rw=read --tswap_bounce=1 \
		--tswap_threads=4 --tswap_stats="$st"
	run -0 jq -r '"\(.operations) \(.bounce_ops) \(.bounce_bytes)"' "$st"
	assert_output "3 3 12582912"
	fio_ok --filename="$f" --size=12m --bs=4m --rw=read --tswap_stats="$st"
	run -0 jq -c '[.bounce, .bounce_ops, .bounce_bytes, .bounce_alloc_ns, .bounce_copy_ns, .bounce_free_ns, .pinned]' "$st"
	assert_output '[false,0,0,0,0,0,true]'
}

@test "tswap_bounce: ramp_time operations are not counted, as fio's report does not count them" {
	local f=$SCRATCH/ramp.file st=$SCRATCH/ramp.json
	psync_ok --filename="$f" --size=8m --bs=1m --rw=write
	fio_ok --filename="$f" --size=8m --bs=1m --rw=read --time_based --runtime=2 \
		--ramp_time=1 --tswap_bounce=1 --tswap_stats="$st" --output-format=json
	run -0 jq -r '.jobs[0].read.total_ios' <<<"$output"
	local ios=$output
	run -0 jq -r '"\(.operations) \(.bounce_ops) \(.bounce_bytes / 1048576)"' "$st"
	assert_output "$ios $ios $ios"
}

@test "bad input: tswap_bounce=1 with tswap_pin=1, tswap_fixedbufs=1 or tswap_handoff=inline is refused before any I/O" {
	local f=$SCRATCH/keep.file
	psync_ok --filename="$f" --size=4m --bs=1m --rw=write --scramble_buffers=0 \
		--buffer_pattern=0x11223344
	cp "$f" "$SCRATCH/keep.ref"
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_bounce=1 --tswap_pin=1
	assert_rejected "tswap_bounce=1: not with tswap_pin=1" "not page-locked"
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_bounce=1 \
		--tswap_backend=io_uring --tswap_fixedbufs=1
	assert_rejected "tswap_bounce=1: not with tswap_fixedbufs=1" "registered buffers"
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_bounce=1 \
		--tswap_handoff=inline
	assert_rejected "tswap_bounce=1: not with tswap_handoff=inline" "read()/write()"
	run -0 cmp "$f" "$SCRATCH/keep.ref"
	# tswap_pin=0 and the default auto are accepted with it.
	fio_ok --filename="$f" --size=4m --bs=1m --rw=read --tswap_bounce=1 --tswap_pin=0
	local v
	for v in 2 yes ""; do
		run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
			--tswap_bounce="$v"
		assert_rejected "tswap_bounce=$v" "failed parsing"
		assert_file_not_exists "$SCRATCH/bad.file"
	done
}

@test "tswap_bounce=1 over RLIMIT_MEMLOCK: the operation fails with mlock's ENOMEM, one line naming tswap_bounce and the limit, nothing written" {
	no_ipc_lock 1048576
	local f=$SCRATCH/limit.file out=$SCRATCH/limit.json
	dd if=/dev/zero of="$f" bs=1M count=8 status=none
	fio_argv "$ENGINE" --filename="$f" --size=8m --bs=4m --rw=write \
		--buffer_pattern=0xdeadbeef --tswap_bounce=1 --output-format=json --output="$out"
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	assert_rejected "tswap_bounce=1" "cannot mlock a bounce buffer of 4194304 bytes" \
		"Cannot allocate memory" "RLIMIT_MEMLOCK (ulimit -l) is 1048576 bytes"
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes)"' "$out"
	assert_output "12 0"
	run -0 cmp -n 8388608 "$f" /dev/zero
	# Within the limit (2 x 256k in flight), the same job runs and verifies.
	fio_argv "$ENGINE" --filename="$f" --size=4m --bs=256k --iodepth=2 --rw=write \
		--tswap_block_size=128k --verify=crc32c --do_verify=1 --tswap_bounce=1
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "tswap_bounce=1 failed within RLIMIT_MEMLOCK (exit $status)"
	fi
	assert_equal "$stderr" ""
}

@test "tswap_bounce=1 with RLIMIT_MEMLOCK 0: a read fails with mlock's EPERM, fio's buffer untouched, no I/O, counted as fio counts it" {
	no_ipc_lock 0
	local f=$SCRATCH/zero.file st=$SCRATCH/zero.json out=$SCRATCH/zero.out.json
	psync_ok --filename="$f" --size=4m --bs=1m --rw=write
	fio_argv "$ENGINE" --filename="$f" --size=4m --bs=1m --rw=read --tswap_bounce=1 \
		--output-format=json --output="$out" --tswap_stats="$st"
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	assert_rejected "tswap_bounce=1" "cannot mlock" "Operation not permitted" \
		"RLIMIT_MEMLOCK (ulimit -l) is 0 bytes"
	run -0 jq -r '.jobs[0] | "\(.error) \(.read.io_bytes)"' "$out"
	assert_output "1 0"
	# Nothing reached the kernel's AIO: no blocks, no bounce counted; the
	# failed operation is counted as fio counts it (total_ios, error).
	run -0 jq -r '"\(.blocks) \(.bounce_ops)"' "$st"
	assert_output "0 0"
	run -0 jq -r '.jobs[0].read.total_ios' "$out"
	assert_output --regexp '^[1-9][0-9]*$'
	assert_equal "$(jq -r '"\(.operations) \(.op_errors)"' "$st")" "$output $output"
}

@test "bounce_calls: a descriptor is the file's by the path strace -y prints, not by its number alone" {
	# fio's main process (tid 100, its disk-util thread 101) opens and
	# closes a descriptor 8 on /sys/block/DEV/stat every 250 ms; the job
	# thread (200) has its own descriptor 8 on the file. Matched by number,
	# the helper's close read as the job's and the job's own close went
	# missing ("stat open mlock munlock" without "close").
	local f=$SCRATCH/b.file log=$SCRATCH/canned.strace real sys=/sys/devices/virtual/block/loop0/stat
	: >"$f"
	real=$(readlink -f -- "$f")
	{
		printf '200  newfstatat(AT_FDCWD<%s>, "%s", {st_mode=S_IFREG|0644, st_size=8388608, ...}, 0) = 0\n' "$SCRATCH" "$f"
		printf '200  openat(AT_FDCWD<%s>, "%s", O_RDONLY|O_DIRECT) = 8<%s>\n' "$SCRATCH" "$f" "$real"
		printf '101  openat(AT_FDCWD</>, "/sys/block/loop0/stat", O_RDONLY) = 8<%s>\n' "$sys"
		printf '101  close(8<%s>)  = 0\n' "$sys"
		printf '200  mlock(0x7f0000200000, 2097152) = 0\n'
		printf '200  munlock(0x7f0000200000, 2097152) = 0\n'
		printf '200  close(8<%s>)  = 0\n' "$real"
	} >"$log"
	run -0 bounce_calls "$log" "$f"
	assert_output "200 stat
200 open 8
200 mlock 0x7f0000200000 2097152
200 munlock 0x7f0000200000 2097152
200 close 8"
	run -0 op_order "$output" 200
	assert_output "stat open mlock munlock close"
}
