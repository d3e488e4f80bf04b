#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # awk/jq programs in single quotes; bats sets $stderr; each @test is a subshell
#
# tswap_alloc=fio|deepspeed: who allocates fio's I/O buffer region.
# deepspeed: the engine, as DeepSpeed 0.19.4+ allocates its swap buffers
# (PR #8212: new_cpu_locked_tensor -> deepspeed_pin_tensor_t::alloc ->
# ds_page_aligned_alloc: posix_memalign with the page size, then mlock):
#   - one mlock of the buffers fio carves (iodepth x bs, in whole pages:
#     not fio's alignment slack, which DeepSpeed has no part of), at a
#     page-aligned address, before the first submit; one munlock of it
#     after the last wait; tswap_pin adds no lock of its own;
#   - data written, verified and read back through those buffers, also
#     with io_uring's registered buffers;
#   - VmLck of the job process covers the region while the job runs;
#   - over RLIMIT_MEMLOCK (root without CAP_IPC_LOCK): one line naming
#     tswap_alloc=deepspeed, RLIMIT_MEMLOCK, the bytes needed and the
#     limit, no I/O, also with tswap_pin=auto (no unlocked fallback);
#   - fio (the default): fio's allocation and iomem= as before, also in a
#     process where another job uses deepspeed (thread=1);
#   - refused: bad values (fio's parser), and with tswap_pin=0,
#     tswap_bounce=1, iomem=/mem=;
#   - fio --enghelp documents it with DeepSpeed's files and functions.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# alloc_trace NAME [fio args...] - a traced write job of 4 operations of 2m
# (iodepth 2); leaves $REC, its memory-lock and AIO calls as "call ADDR
# LEN = ret", "submit", "wait" in trace order, runs of the same collapsed
# as "N line".
alloc_trace() {
	local name=$1 log=$SCRATCH/$1.strace
	shift
	rm -f "$SCRATCH/$name.file"
	STRACE_SYSCALLS=mlock,munlock,io_submit,io_getevents,io_pgetevents \
		strace_fio "$log" --filename="$SCRATCH/$name.file" --size=8m --bs=2m \
		--iodepth=2 --rw=write --tswap_block_size=1m "$@"
	REC=$(strace_join "$log" | cut -f2 | awk '
		/^m(un)?lock\(/ { sub(/\(/, " "); sub(/, /, " "); sub(/\) += /, " = "); print; next }
		/^io_submit\(/ { print "submit"; next }
		/^io_p?getevents\(/ { print "wait" }' | uniq -c | awk '{ $1 = $1 } 1')
}

@test "tswap_alloc=deepspeed: one page-aligned mlock of fio's buffers before the first submit, one munlock after the last wait" {
	requires strace
	local page len pin
	page=$(getconf PAGESIZE)
	# iodepth x bs: fio allocates total_mem (with twice a page less one
	# byte of alignment slack, direct=1) but uses, and the engine locks,
	# only its buffers: DeepSpeed locks exactly its buffers' bytes
	len=$((2 * 2097152))
	for pin in "" 1; do
		alloc_trace "ds$pin" --tswap_alloc=deepspeed ${pin:+--tswap_pin="$pin"}
		# Exactly one lock and one unlock, of the same region, and no
		# other (tswap_pin's lock of fio's region is not made).
		run -0 awk '$0 ~ /lock/ { print $1, $2, $4, $5, $6 }' <<<"$REC"
		assert_output "1 mlock $len = 0
1 munlock $len = 0"
		run -0 awk '/lock/ { print $3 }' <<<"$REC"
		assert_equal "${#lines[@]}" 2
		assert_equal "${lines[0]}" "${lines[1]}"
		# posix_memalign with the page size: the region starts on a page.
		assert_equal "$((lines[0] % page))" 0
		run -0 head -n 1 <<<"$REC"
		assert_regex "$output" "^1 mlock 0x[0-9a-f]+ $len = 0$"
		run -0 tail -n 1 <<<"$REC"
		assert_regex "$output" "^1 munlock 0x[0-9a-f]+ $len = 0$"
		run -0 grep -c submit <<<"$REC"
		refute_output 0
	done
}

@test "tswap_alloc=fio (the default): fio allocates, tswap_pin locks its region as before" {
	requires strace
	local page len
	page=$(getconf PAGESIZE)
	# tswap_pin locks fio's region, iodepth x bs + page_mask, from fio's
	# allocator's address (malloc: not on a page).
	len=$((2 * 2097152 + page - 1))
	alloc_trace fio --tswap_alloc=fio
	run -0 awk '$0 ~ /lock/ { print $1, $2, $4, $5, $6 }' <<<"$REC"
	assert_output "1 mlock $len = 0
1 munlock $len = 0"
}

@test "tswap_alloc=deepspeed: data written, verified and read back byte for byte (libaio, 2 threads; 2 jobs)" {
	local f=$SCRATCH/data.file n=$((16 * 1048576)) d=$SCRATCH/jobs st
	fresh_target "$f" 16384
	# Written and verified (crc32c headers) through the engine's buffers;
	# psync verifies what it wrote; the engine reads it back and verifies.
	run_jobs --output-format=json \
		--name=swap "--ioengine=external:$ENGINE" --filename="$f" --size=16m \
		--bs=1m --iodepth=4 --rw=write --verify=crc32c --do_verify=1 \
		--tswap_threads=2 --tswap_block_size=256k --tswap_alloc=deepspeed \
		--name=psync --stonewall --ioengine=psync --filename="$f" --size=16m --bs=1m \
		--rw=write --verify=crc32c --verify_only \
		--name=back --stonewall "--ioengine=external:$ENGINE" --filename="$f" \
		--size=16m --bs=1m --iodepth=4 --rw=read --verify=crc32c \
		--tswap_threads=2 --tswap_block_size=256k --tswap_alloc=deepspeed
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "tswap_alloc=deepspeed write + verify, psync's verify or the read back failed (exit $status)"
	fi
	jobs_bytes "write, psync verify, read back" "swap 0 $n $n, psync 0 $n $n, back 0 0 $n"
	# What the engine reads is the file: one changed byte fails verify.
	printf 'X' | dd of="$f" bs=1 seek=$((3 * 1048576 + 4096)) conv=notrunc status=none
	run_jobs --name=swap "--ioengine=external:$ENGINE" --filename="$f" --size=16m \
		--bs=1m --iodepth=4 --rw=read --verify=crc32c --tswap_alloc=deepspeed
	[ "$status" -ne 0 ] || fail "a changed byte passed verify through tswap_alloc=deepspeed"
	assert_regex "$stderr" "verify failed"
	# Two jobs, each with its own region and file.
	mkdir -p "$d"
	run_jobs --output-format=json \
		--name=swap "--ioengine=external:$ENGINE" --directory="$d" --numjobs=2 \
		--size=8m --bs=1m --iodepth=2 --rw=write --verify=crc32c --do_verify=1 \
		--tswap_alloc=deepspeed --tswap_stats="$SCRATCH/st%n.json"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "numjobs=2 with tswap_alloc=deepspeed failed (exit $status)"
	fi
	jobs_bytes "numjobs=2" "swap 0 8388608 8388608, swap 0 8388608 8388608"
	for st in "$SCRATCH/st0.json" "$SCRATCH/st1.json"; do
		run -0 jq -r '"\(.alloc) \(.pinned) \(.op_errors)"' "$st"
		assert_output "deepspeed true 0"
	done
}

@test "tswap_alloc=deepspeed with io_uring registered buffers (tswap_fixedbufs=1): data verified" {
	requires io_uring
	local f=$SCRATCH/fixed.file n=$((8 * 1048576))
	fresh_target "$f" 8192
	run_jobs --output-format=json \
		--name=swap "--ioengine=external:$ENGINE" --filename="$f" --size=8m --bs=1m \
		--iodepth=2 --rw=write --verify=crc32c --do_verify=1 \
		--tswap_backend=io_uring --tswap_fixedbufs=1 --tswap_alloc=deepspeed \
		--tswap_stats="$SCRATCH/fixed.json"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "tswap_alloc=deepspeed with tswap_fixedbufs=1 failed (exit $status)"
	fi
	jobs_bytes "fixedbufs" "swap 0 $n $n"
	run -0 jq -r '"\(.alloc) \(.pinned) \(.backend)"' "$SCRATCH/fixed.json"
	assert_output "deepspeed true io_uring"
}

# vmlck_max ALLOC PIN - vmlck_peak with tswap_alloc=ALLOC and tswap_pin=PIN
# (empty: unset).
vmlck_max() {
	local -a opt=(--tswap_alloc="$1")
	[ -z "$2" ] || opt+=(--tswap_pin="$2")
	vmlck_peak "${opt[@]}"
}

@test "tswap_alloc=deepspeed: VmLck of the job process covers the buffer while the job runs" {
	local kb
	kb=$(vmlck_max deepspeed "")
	[ -n "$kb" ] || fail "never saw the job process"
	# 8 MiB of buffer plus fio's slack, locked by the allocation.
	[ "$kb" -ge 8192 ] || fail "VmLck ${kb} kB with tswap_alloc=deepspeed; expected >= 8192"
	# The control: fio's buffer with tswap_pin=0 is not locked at all.
	kb=$(vmlck_max fio 0)
	[ -n "$kb" ] || fail "never saw the job process"
	assert_equal "$kb" 0
}

@test "tswap_alloc=deepspeed over RLIMIT_MEMLOCK: one line naming it, RLIMIT_MEMLOCK, the bytes and the limit; no I/O, also with tswap_pin=auto" {
	no_ipc_lock
	local f=$SCRATCH/limit.file page need pin
	page=$(getconf PAGESIZE)
	need=4194304
	dd if=/dev/zero of="$f" bs=1M count=8 status=none
	for pin in "" auto 1; do
		fio_argv "$ENGINE" --filename="$f" --size=8m --bs=4m --rw=write \
			--buffer_pattern=0xdeadbeef --tswap_alloc=deepspeed ${pin:+--tswap_pin="$pin"}
		FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
		run --separate-stderr "${FIO_ARGV[@]}"
		assert_rejected tswap_alloc=deepspeed "cannot mlock $need bytes" \
			"RLIMIT_MEMLOCK (ulimit -l) is 1048576 bytes" "tswap_alloc=fio"
		run -0 grep -c '^tswap:' <<<"$stderr"
		assert_output 1
		# Nothing was written: the error comes before the first I/O.
		run -0 cmp -n 8388608 "$f" /dev/zero
	done
}

@test "tswap_alloc=deepspeed, thread=1: the job over RLIMIT_MEMLOCK says what the other jobs of the process lock" {
	no_ipc_lock 6291456
	local f=$SCRATCH/two.file need=4194304
	# two jobs of 4 x 1m in one process, 6 MiB for both: whichever locks
	# second fails while the first holds its buffers (time_based, 5 s: it
	# still holds them when the other job, started with it, allocates)
	fio_argv "$ENGINE" --filename="$f" --size=8m --bs=1m --iodepth=4 --rw=write \
		--tswap_alloc=deepspeed --thread --numjobs=2 --time_based --runtime=5
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	assert_rejected tswap_alloc=deepspeed "cannot mlock $need bytes" \
		"RLIMIT_MEMLOCK (ulimit -l) is 6291456 bytes, of which this process already locks $need" \
		"tswap_alloc=fio"
	run -0 grep -c '^tswap:' <<<"$stderr"
	assert_output 1
}

@test "tswap_alloc=deepspeed within RLIMIT_MEMLOCK locks without CAP_IPC_LOCK, data verified" {
	no_ipc_lock
	local f=$SCRATCH/fits.file st=$SCRATCH/fits.json
	# limited_ok WHAT FIO_ARGS...: the job runs under the 1 MiB limit
	limited_ok() {
		local what=$1
		shift
		rm -f "$f" "$st"
		fio_argv "$ENGINE" --filename="$f" --size=4m --rw=write --tswap_alloc=deepspeed \
			--tswap_stats="$st" "$@"
		FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
		run --separate-stderr "${FIO_ARGV[@]}"
		[ "$status" -eq 0 ] || { show_fio; fail "$what failed within RLIMIT_MEMLOCK (exit $status)"; }
		assert_equal "$stderr" ""
		run -0 jq -r '"\(.alloc) \(.pinned) \(.op_errors)"' "$st"
		assert_output "deepspeed true 0"
	}
	# 2 x 256k of buffers fit in the 1 MiB limit
	limited_ok "2 x 256k, verified" --bs=256k --iodepth=2 --tswap_block_size=128k \
		--verify=crc32c --do_verify=1
	# buffers of exactly the limit (2 x 512k): fio's alignment slack is not
	# locked, as DeepSpeed locks exactly its buffers (it once failed here)
	limited_ok "buffers of exactly the limit (2 x 512k)" --bs=512k --iodepth=2
}

@test "tswap_alloc=fio is the default, keeps iomem=, also beside a deepspeed job in the same process (thread=1)" {
	local st=$SCRATCH/def.json
	rm -f "$SCRATCH/def.file"
	fio_ok --filename="$SCRATCH/def.file" --size=4m --bs=1m --rw=write --tswap_stats="$st"
	run -0 jq -r '"\(.alloc) \(.pinned)"' "$st"
	assert_output "fio true"
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_alloc"
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: fio$'
	# One process, two jobs at once: the deepspeed job's hooks are its own,
	# the fio job still takes iomem= (fio refuses it for an engine whose
	# operations allocate).
	rm -f "$SCRATCH/a.file" "$SCRATCH/b.file"
	run_jobs --thread --output-format=json \
		--name=ds "--ioengine=external:$ENGINE" --filename="$SCRATCH/a.file" --size=8m \
		--bs=1m --iodepth=2 --rw=write --verify=crc32c --do_verify=1 \
		--tswap_alloc=deepspeed --tswap_stats="$SCRATCH/ds.json" \
		--name=io "--ioengine=external:$ENGINE" --filename="$SCRATCH/b.file" --size=8m \
		--bs=1m --iodepth=2 --rw=write --verify=crc32c --do_verify=1 --iomem=mmap \
		--tswap_stats="$SCRATCH/io.json"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "a deepspeed job and an iomem=mmap job in one process failed (exit $status)"
	fi
	jobs_bytes "thread=1" "ds 0 8388608 8388608, io 0 8388608 8388608"
	run -0 jq -r '.alloc' "$SCRATCH/ds.json" "$SCRATCH/io.json"
	assert_output "deepspeed
fio"
}

@test "bad input: tswap_alloc=bogus, DeepSpeed (case), an empty value; deepspeed with tswap_pin=0, tswap_bounce=1, iomem=, mem=" {
	local v
	for v in bogus DeepSpeed ""; do
		run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
			--tswap_alloc="$v"
		# fio's option parser: "fio: failed parsing tswap_alloc=bogus".
		assert_rejected "tswap_alloc=$v" "failed parsing"
		assert_file_not_exists "$SCRATCH/bad.file"
	done
	run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
		--tswap_alloc=deepspeed --tswap_pin=0
	assert_rejected tswap_alloc=deepspeed "not with tswap_pin=0" "always locks"
	run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
		--tswap_alloc=deepspeed --tswap_bounce=1
	assert_rejected tswap_alloc=deepspeed "not with tswap_bounce=1" "never bounces"
	for v in --iomem=malloc --mem=mmap; do
		run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
			--tswap_alloc=deepspeed "$v"
		assert_rejected tswap_alloc=deepspeed "not with iomem=/mem=" "tswap_alloc=fio"
	done
}

@test "fio --enghelp documents tswap_alloc with DeepSpeed's source" {
	run -0 timeout 60 fio --enghelp="$ENGINE"
	assert_line --regexp '^tswap_alloc +: .*deepspeed.*DeepSpeed 0\.19\.4\+.*#8212.*new_cpu_locked_tensor.*csrc/aio/py_lib/deepspeed_pin_tensor\.cpp.*ds_page_aligned_alloc, csrc/aio/common/deepspeed_aio_utils\.cpp.*posix_memalign.*mlock.*RLIMIT_MEMLOCK'
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_alloc"
	assert_line --regexp '^.*: fio +fio allocates them'
	assert_line --regexp '^.*: deepspeed +The engine: posix_memalign \(page\) \+ mlock'
}
