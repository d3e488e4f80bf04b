#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# tswap_pin: fio's I/O buffers page-locked, as DeepSpeed's swap buffers are
# (deepspeed_pin_tensor_t::alloc -> ds_page_aligned_alloc: posix_memalign +
# mlock; CUDA: pin_memory()):
#   - tswap_pin=1 and tswap_pin=auto (the default): one mlock of fio's
#     whole buffer region before the first io_submit, one munlock after the
#     last completion, and VmLck of the job process covers the buffers
#     while the job runs; the stats say "pinned": true;
#   - tswap_pin=0: no mlock, VmLck 0, "pinned": false;
#   - a RLIMIT_MEMLOCK too small for the buffers (root without
#     CAP_IPC_LOCK): tswap_pin=1 is a one-line error naming tswap_pin and
#     the limit, no I/O; tswap_pin=auto prints one note on stderr and runs
#     unlocked ("pinned": false); tswap_pin=0 runs silently;
#   - any other value is refused.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# pin_trace NAME PIN - a traced write job of 4 operations of 2m (iodepth 2:
# fio's buffer region is 2 x 2m plus its alignment slack), with tswap_pin=PIN
# (empty: the default); leaves $REC, the memory-lock and AIO calls as
# "call args = ret" in trace order of the job.
pin_trace() {
	local name=$1 log=$SCRATCH/$1.strace
	local -a pin=()
	[ -z "$2" ] || pin=(--tswap_pin="$2")
	rm -f "$SCRATCH/$name.file"
	STRACE_SYSCALLS=mlock,munlock,io_submit,io_getevents,io_pgetevents \
		strace_fio "$log" --filename="$SCRATCH/$name.file" --size=8m --bs=2m \
		--iodepth=2 --rw=write --tswap_block_size=1m "${pin[@]}"
	REC=$(strace_join "$log" | cut -f2 | awk '
		/^mlock\(/   { sub(/^mlock\(0x[0-9a-f]+, /, "mlock "); sub(/\) += /, " = "); print; next }
		/^munlock\(/ { sub(/^munlock\(0x[0-9a-f]+, /, "munlock "); sub(/\) += /, " = "); print; next }
		/^io_submit\(/ { print "submit"; next }
		/^io_p?getevents\(/ { print "wait" }' | uniq -c | awk '{ $1 = $1 } 1')
}

@test "tswap_pin=1 and the default (auto): one mlock of fio's buffers before the first submit, one munlock after the last wait" {
	requires strace
	# fio's region: iodepth x bs + page_mask (O_DIRECT alignment slack).
	local len=$((2 * 2097152 + $(getconf PAGESIZE) - 1)) pin
	for pin in 1 ""; do
		pin_trace "pin$pin" "$pin"
		run -0 awk 'NR == 1 || $0 ~ /lock/' <<<"$REC"
		assert_output "1 mlock $len = 0
1 munlock $len = 0"
		run -0 head -n 1 <<<"$REC"
		assert_output "1 mlock $len = 0"
		run -0 tail -n 1 <<<"$REC"
		assert_output "1 munlock $len = 0"
		run -0 grep -c submit <<<"$REC"
		refute_output 0
	done
}

@test "tswap_pin=auto is the default; tswap_pin=0 locks nothing" {
	requires strace
	pin_trace pin0 0
	refute_regex "$REC" 'lock'
	assert_regex "$REC" 'submit'
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_pin"
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: auto$'
	assert_line --regexp '^.*: 1 +Lock them; the job fails'
	assert_line --regexp '^.*: 0 +Never lock them$'
}

@test "tswap_pin: the stats file says the mode and whether the buffers were locked" {
	local pin st=$SCRATCH/st.json
	for pin in auto 1 0; do
		rm -f "$SCRATCH/st.file" "$st"
		fio_ok --filename="$SCRATCH/st.file" --size=4m --bs=1m --rw=write \
			--tswap_pin="$pin" --tswap_stats="$st"
		run -0 jq -r '"\(.pin) \(.pinned)"' "$st"
		case $pin in
		0) assert_output "0 false" ;;
		*) assert_output "$pin true" ;;
		esac
	done
	# Unset, it is auto.
	rm -f "$SCRATCH/st.file" "$st"
	fio_ok --filename="$SCRATCH/st.file" --size=4m --bs=1m --rw=write --tswap_stats="$st"
	run -0 jq -r '"\(.pin) \(.pinned)"' "$st"
	assert_output "auto true"
}

@test "bad input: tswap_pin=maybe, on, 2 and an empty value are refused" {
	local v
	for v in maybe on 2 ""; do
		run_fio --filename="$SCRATCH/bad.file" --size=1m --bs=64k --rw=write \
			--tswap_pin="$v"
		# fio's option parser: "fio: failed parsing tswap_pin=maybe".
		assert_rejected "tswap_pin=$v" "failed parsing"
		assert_file_not_exists "$SCRATCH/bad.file"
	done
}

# vmlck_during PIN - vmlck_peak with tswap_pin=PIN (empty: the default).
vmlck_during() {
	if [ -n "$1" ]; then vmlck_peak --tswap_pin="$1"; else vmlck_peak; fi
}

@test "VmLck of the job process covers fio's buffers by default (auto) and is 0 with tswap_pin=0" {
	local kb
	kb=$(vmlck_during "")
	[ -n "$kb" ] || fail "never saw the job process"
	# 8 MiB of buffer (plus the page of alignment slack) locked.
	[ "$kb" -ge 8192 ] || fail "VmLck ${kb} kB with tswap_pin unset (auto); expected >= 8192"
	kb=$(vmlck_during 0)
	[ -n "$kb" ] || fail "never saw the job process"
	assert_equal "$kb" 0
}

@test "tswap_pin=1 over RLIMIT_MEMLOCK: one line naming tswap_pin and the limit, no I/O; tswap_pin=0 runs" {
	no_ipc_lock
	local f=$SCRATCH/limit.file
	dd if=/dev/zero of="$f" bs=1M count=8 status=none
	fio_argv "$ENGINE" --filename="$f" --size=8m --bs=4m --rw=write \
		--buffer_pattern=0xdeadbeef --tswap_pin=1
	# shellcheck disable=SC2030 # each test sets its own FIO_ARGV
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	assert_rejected tswap_pin=1 "cannot mlock" "RLIMIT_MEMLOCK" "1048576 bytes" "tswap_pin=0"
	# Nothing was written: the error comes before the first I/O.
	run -0 cmp -n 8388608 "$f" /dev/zero
	fio_argv "$ENGINE" --filename="$f" --size=8m --bs=4m --rw=write --tswap_pin=0 \
		--verify=crc32c --do_verify=1
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "tswap_pin=0 failed under RLIMIT_MEMLOCK (exit $status)"
	fi
	assert_regex "$output" "WRITE: bw=.*io=8192KiB"
	assert_equal "$stderr" ""
}

@test "tswap_pin=auto (default) over RLIMIT_MEMLOCK: one note on stderr, runs unlocked, data verified, stats say pinned false" {
	no_ipc_lock
	local f=$SCRATCH/auto.file st=$SCRATCH/auto.json
	rm -f "$f"
	# 2 x 4m of buffers: eight times the 1 MiB limit.
	fio_argv "$ENGINE" --filename="$f" --size=8m --bs=4m --iodepth=2 --rw=write \
		--verify=crc32c --do_verify=1 --output-format=json --tswap_stats="$st"
	# shellcheck disable=SC2030,SC2031 # each test sets its own FIO_ARGV
	FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "tswap_pin=auto failed under RLIMIT_MEMLOCK (exit $status)"
	fi
	# Exactly one line on stderr, the note; stdout is fio's JSON alone.
	local json=$output
	run -0 wc -l <<<"$stderr"
	assert_output 1
	assert_regex "$stderr" "^tswap: swap: tswap_pin=auto: I/O buffers not locked: cannot mlock [0-9]+ bytes \(.*\), RLIMIT_MEMLOCK \(ulimit -l\) is 1048576 bytes; running unlocked \(tswap_pin=1 requires the lock"
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$json"
	# Written, then read back and verified (crc32c) by fio.
	assert_output "0 8388608 8388608"
	run -0 jq -r '"\(.pin) \(.pinned) \(.op_errors)"' "$st"
	assert_output "auto false 0"
}

@test "tswap_pin=1 and auto, thread=1: the job over RLIMIT_MEMLOCK says what the other jobs of the process lock" {
	no_ipc_lock 6291456
	local f=$SCRATCH/two.file pin
	# two jobs of 4 x 1m in one process, 6 MiB for both: whichever locks
	# second fails while the first holds its buffers (time_based, 5 s:
	# it still holds them when the other job, started with it, locks)
	for pin in 1 auto; do
		fio_argv "$ENGINE" --filename="$f" --size=8m --bs=1m --iodepth=4 --rw=write \
			--tswap_pin="$pin" --thread --numjobs=2 --time_based --runtime=5
		# shellcheck disable=SC2030,SC2031 # each test sets its own FIO_ARGV
		FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
		run --separate-stderr "${FIO_ARGV[@]}"
		if [ "$pin" = 1 ]; then
			assert_rejected tswap_pin=1 "cannot mlock" \
				"RLIMIT_MEMLOCK (ulimit -l) is 6291456 bytes, of which this process already locks" \
				"(other jobs' buffers, thread=1); raise it"
		else
			assert_success
			run -0 grep -c '^tswap:' <<<"$stderr"
			assert_output 1
			assert_regex "$stderr" "tswap_pin=auto: I/O buffers not locked: cannot mlock [0-9]+ bytes \\(.*\\), RLIMIT_MEMLOCK \\(ulimit -l\\) is 6291456 bytes, of which this process already locks [0-9]+ \\(other jobs' buffers, thread=1\\); running unlocked"
		fi
		# what it says the others lock is at least one job's buffers
		[[ $stderr =~ already\ locks\ ([0-9]+) ]] || fail "no figure: $stderr"
		[ "${BASH_REMATCH[1]}" -ge 4194304 ] || fail "already locks ${BASH_REMATCH[1]} < 4 MiB"
	done
}

@test "tswap_pin=1 and auto within RLIMIT_MEMLOCK lock without CAP_IPC_LOCK, data verified" {
	no_ipc_lock
	local f=$SCRATCH/fits.file st=$SCRATCH/fits.json pin
	for pin in 1 auto; do
		rm -f "$f" "$st"
		# 2 x 256k of buffers (+ a page) fit in the 1 MiB limit.
		fio_argv "$ENGINE" --filename="$f" --size=4m --bs=256k --iodepth=2 --rw=write \
			--tswap_block_size=128k --verify=crc32c --do_verify=1 \
			--tswap_pin="$pin" --tswap_stats="$st"
		# shellcheck disable=SC2031 # each test sets its own FIO_ARGV
		FIO_ARGV=("${LIMITED[@]}" "${FIO_ARGV[@]}")
		run --separate-stderr "${FIO_ARGV[@]}"
		if [ "$status" -ne 0 ]; then
			show_fio
			fail "tswap_pin=$pin failed within RLIMIT_MEMLOCK (exit $status)"
		fi
		assert_equal "$stderr" ""
		run -0 jq -r '"\(.pin) \(.pinned)"' "$st"
		assert_output "$pin true"
	done
}
