#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# DeepSpeed's handle around the window loop, seen from outside with strace:
#   - tswap_handoff=worker (the default): even with tswap_threads=1 the I/O
#     of an operation runs on a worker thread, not in fio's job thread
#     (DeepSpeed deepspeed_io_handle_t::pread/pwrite -> _schedule_aio_work
#     -> deepspeed_aio_thread_t::run), with the call shapes of the inline
#     run (tswap_handoff=inline: DeepSpeed's synchronous read()/write());
#   - tswap_reopen=1: per operation, fio's job thread stats the file (reads)
#     and opens it with O_DIRECT, and closes that descriptor once the
#     operation is reaped (deepspeed_io_handle_t::pread/pwrite and wait()).
# The job thread is the job process's main thread (fio forks one process
# per job): its tid is the pid in the tswap_stats file.

load helpers

setup() {
	common_setup
	requires strace
}
teardown() { common_teardown; }

# handoff_run NAME HANDOFF [fio args...] - a traced write job with
# tswap_threads=1 and tswap_handoff=HANDOFF (none: "-"); leaves $REC
# (aio_records), $STATS and $JOB_TID.  The window is sequential, whose
# calls do not depend on the device's timing (tests/patterns.bats checks
# the overlap rules, with the default hand-off).
handoff_run() {
	local name=$1 log
	local -a opt=()
	[ "$2" = - ] || opt=(--tswap_handoff="$2")
	shift 2
	log=$SCRATCH/$name.strace
	REC=$SCRATCH/$name.tsv
	STATS=$SCRATCH/$name.stats.json
	rm -f "$SCRATCH/$name.file"
	strace_fio "$log" --filename="$SCRATCH/$name.file" --size=12m --bs=3m \
		--iodepth=2 --rw=write --tswap_block_size=512k --tswap_queue_depth=4 \
		--tswap_threads=1 --tswap_window=sequential "${opt[@]}" \
		--tswap_stats="$STATS" "$@"
	aio_records "$log" >"$REC"
	JOB_TID=$(jq -r .pid "$STATS")
	[[ "$JOB_TID" =~ ^[0-9]+$ ]] || fail "$name: no pid in $STATS"
}

# io_tids - the distinct threads that made io_submit / io_getevents calls.
io_tids() {
	awk -F '\t' '$2 == "io_submit" || $2 == "io_getevents" { print $1 }' "$REC" | sort -u
}

# shapes - the AIO calls without thread and context: call, nr/min_nr, nr, ret.
shapes() {
	awk -F '\t' '$2 != "io_setup" { print $2, $4, $5, $6 }' "$1"
}

@test "handoff=worker (default), tswap_threads=1: the I/O runs on one thread that is not fio's job thread" {
	handoff_run worker worker
	run -0 io_tids
	assert_equal "$(wc -l <<<"$output")" 1
	[ "$output" != "$JOB_TID" ] || fail "io_submit/io_getevents on fio's job thread $JOB_TID"
	# The context is set up in the job thread, as DeepSpeed's handle
	# constructs its threads' aio_contexts in the caller's thread.
	run -0 awk -F '\t' '$2 == "io_setup" { print $1, $4 }' "$REC"
	assert_output "$JOB_TID 4"
	# The default is the hand-off: the same calls without the option.
	local wrec=$REC
	handoff_run default -
	run -0 io_tids
	[ "$output" != "$JOB_TID" ] || fail "default: I/O on fio's job thread"
	assert_equal "$(shapes "$REC")" "$(shapes "$wrec")"
	# The worker's CPU is counted in the stats file (fio's cpu line does not
	# see it).
	run -0 jq -r '(.worker_cpu_usr_s + .worker_cpu_sys_s) > 0' "$STATS"
	assert_output true
}

@test "handoff=inline, tswap_threads=1: the I/O runs in fio's job thread, with the same call shapes as handoff=worker" {
	handoff_run inline inline
	run -0 io_tids
	assert_output "$JOB_TID"
	run -0 jq -r '"\(.worker_cpu_usr_s) \(.worker_cpu_sys_s) \(.operations) \(.blocks)"' "$STATS"
	assert_output "0 0 4 24"
	local irec=$REC
	handoff_run worker2 worker
	# Per operation: 3m in 512k blocks, Q=4: submit 4, wait for 4, submit
	# 2, wait for 2.
	assert_equal "$(shapes "$REC")" "$(shapes "$irec")"
	run -0 awk -F '\t' '$2 == "io_submit" { printf "%s ", $4 }' "$REC"
	assert_output "4 2 4 2 4 2 4 2 "
}

# reopen_trace NAME RW REOPEN - a traced job of 4 operations of 2m on a
# file psync wrote first; tracing the file calls. Leaves $LOG, $STATS,
# $JOB_TID and $F.
reopen_trace() {
	local name=$1 rw=$2 reopen=$3
	F=$SCRATCH/$name.file
	LOG=$SCRATCH/$name.strace
	STATS=$SCRATCH/$name.stats.json
	rm -f "$F"
	psync_ok --filename="$F" --size=8m --bs=1m --rw=write
	STRACE_SYSCALLS=open,openat,stat,newfstatat,statx,close,io_submit STRACE_PATHS=1 \
		strace_fio "$LOG" --filename="$F" --size=8m --bs=2m --rw="$rw" \
		--tswap_block_size=1m --tswap_queue_depth=2 --tswap_reopen="$reopen" \
		--tswap_stats="$STATS"
	JOB_TID=$(jq -r .pid "$STATS")
}

# file_calls LOG PATH - per thread, in trace order, the opens (with flags),
# stats and closes of PATH: "tid open FLAGS fd", "tid stat", "tid close fd",
# and "tid submit FD" for each io_submit's first iocb (FD "other" when its
# descriptor is not on PATH). LOG is traced with -y (STRACE_PATHS=1): a
# descriptor is PATH's by the path strace prints with it, never by its
# number alone, which is per process (fio's main process has a descriptor
# of that number too: its disk-util thread opens and closes
# /sys/block/DEV/stat every 250 ms, between a job's open and its first
# io_submit on a busy machine).
file_calls() {
	local real
	real=$(readlink -f -- "$2")
	strace_join "$1" | awk -F '\t' -v path="$2" -v tag="<$real>" '
	# "N" when s begins with "N<PATH>" (a descriptor of PATH), else ""
	function fd_of(s) {
		if (!match(s, /^[0-9]+</) || substr(s, RLENGTH, length(tag)) != tag)
			return ""
		return substr(s, 1, RLENGTH - 1)
	}
	{
		tid = $1; line = $2
		q = "\"" path "\""
		if (line ~ /^(open|openat)\(/ && index(line, q)) {
			flags = line; sub(/.*" *, */, "", flags); sub(/[,)].*/, "", flags)
			ret = line; sub(/.*\) += /, "", ret)
			fd = fd_of(ret)
			if (fd != "") print tid, "open", flags, fd
		} else if (line ~ /^(stat|newfstatat|statx)\(/ && index(line, q)) {
			print tid, "stat"
		} else if (line ~ /^close\(/) {
			arg = line; sub(/^close\(/, "", arg)
			fd = fd_of(arg)
			if (fd != "") print tid, "close", fd
		} else if (line ~ /^io_submit\(/ && match(line, /aio_fildes=[^,}]*/)) {
			fd = fd_of(substr(line, RSTART + 11, RLENGTH - 11))
			print tid, "submit", (fd == "" ? "other" : fd)
		}
	}'
}

# per_op_fds CALLS JOB_TID - from file_calls' output: "OPS CLOSES BAD", where
# OPS counts the opens whose descriptor an io_submit then used, CLOSES how
# many of those the job thread closed, BAD what broke the rules (opened
# outside the job thread, submitted on a descriptor not opened on the file,
# or one operation's descriptor still open when the next one was opened).
per_op_fds() {
	awk -v job="$2" '
		$2 == "open" { opener[$4] = $1; used[$4] = 0 }
		$2 == "submit" {
			if (!($3 in opener)) { bad = bad " submit-on-fd-" $3; next }
			if (!used[$3]) {
				if (opener[$3] != job) bad = bad " opened-on-" opener[$3]
				if (live) bad = bad " two-ops-open"
				used[$3] = 1; ops++; live++
			}
		}
		$2 == "close" {
			if (used[$3]) { if ($1 != job) bad = bad " closed-on-" $1; closes++; live-- }
			delete opener[$3]; delete used[$3]
		}
		END { print ops + 0, closes + 0, (bad == "" ? "ok" : bad) }' <<<"$1"
}

@test "reopen=1, swap-out: one open(O_WRONLY|O_CREAT|O_DIRECT) per operation in fio's job thread, closed once reaped, no stat" {
	reopen_trace w0 write 0
	local calls0
	calls0=$(file_calls "$LOG" "$F")
	# Without it every operation uses fio's own descriptor: one for all
	# four, opened and closed by fio in the job thread (file_calls tells
	# it from fio's main process's descriptor of the same number).
	run -0 per_op_fds "$calls0" "$JOB_TID"
	assert_output "1 1 ok"
	reopen_trace w1 write 1
	run -0 file_calls "$LOG" "$F"
	local calls=$output
	run -0 per_op_fds "$calls" "$JOB_TID"
	assert_output "4 4 ok"
	# DeepSpeed's open_file() flags for a write, four more opens than
	# without, and no stat (get_file_size is in pread only).
	assert_equal "$(grep -c ' open O_WRONLY|O_CREAT|O_DIRECT ' <<<"$calls")" 4
	assert_equal "$(grep -c ' open ' <<<"$calls")" $(($(grep -c ' open ' <<<"$calls0") + 4))
	assert_equal "$(grep -c ' stat$' <<<"$calls")" "$(grep -c ' stat$' <<<"$calls0")"
	run -0 jq -r '"\(.operations) \(.op_errors) \(.bytes)"' "$STATS"
	assert_output "4 0 8388608"
}

@test "reopen=1, swap-in: a stat and an open(O_RDONLY|O_DIRECT) per operation in fio's job thread, closed once reaped" {
	reopen_trace r0 read 0
	local calls0
	calls0=$(file_calls "$LOG" "$F")
	reopen_trace r1 read 1
	run -0 file_calls "$LOG" "$F"
	local calls=$output
	run -0 per_op_fds "$calls" "$JOB_TID"
	assert_output "4 4 ok"
	assert_equal "$(grep -c ' stat$' <<<"$calls")" $(($(grep -c ' stat$' <<<"$calls0") + 4))
	assert_equal "$(grep -c ' open O_RDONLY|O_DIRECT ' <<<"$calls")" \
		$(($(grep -c ' open O_RDONLY|O_DIRECT ' <<<"$calls0") + 4))
	# Each per-operation open comes right after a stat in the job thread.
	run -0 awk -v job="$JOB_TID" '
		$1 == job && $2 == "stat" { st = 1; next }
		$1 == job && $2 == "open" { if (st) n++; st = 0; next }
		$1 == job { st = 0 }
		END { print n + 0 }' <<<"$calls"
	[ "$output" -ge 4 ] || fail "only $output opens right after a stat: $calls"
}

@test "reopen=1: data verified both ways, file and loop device, threads 1 and 2" {
	local t=$SCRATCH/swapfile
	local -a v=(--verify=crc32c --verify_interval=4k --verify_fatal=1)
	rm -f "$t"
	fio_ok --filename="$t" --size=12m --bs=1536k --iodepth=2 --rw=write "${v[@]}" \
		--do_verify=1 --tswap_block_size=256k --tswap_queue_depth=2 --tswap_reopen=1
	psync_ok --filename="$t" --size=12m --bs=1536k --rw=write "${v[@]}" --verify_only
	fio_ok --filename="$t" --size=12m --bs=1536k --iodepth=3 --rw=randwrite "${v[@]}" \
		--do_verify=1 --tswap_block_size=128k --tswap_threads=2 --tswap_reopen=1 \
		--tswap_window=sequential
	requires loopdev
	loop_setup 16
	fio_ok --filename="$LOOPDEV" --size=12m --bs=1m --iodepth=2 --rw=write "${v[@]}" \
		--do_verify=1 --tswap_block_size=256k --tswap_threads=2 --tswap_reopen=1
	psync_ok --filename="$LOOPDEV" --size=12m --bs=1m --rw=write "${v[@]}" --verify_only
}

@test "file_calls: a descriptor is the file's by the path strace -y prints, not by its number alone" {
	# fio's main process and the job process each have a descriptor 8: the
	# job's on the file, and the one fio's disk-util thread opens and closes
	# every 250 ms on /sys/block/DEV/stat. A close of the main process's 8
	# between the job's open and its first io_submit (a busy machine) once
	# made the swap-out test read "0 0 submit-on-fd-8". Tids: 100 fio's
	# main process, 101 its helper thread, 200 the job thread, 201 the worker.
	local f=$SCRATCH/w.file log=$SCRATCH/canned.strace real sys=/sys/devices/virtual/block/loop0/stat i
	: >"$f"
	real=$(readlink -f -- "$f")
	{
		printf '200  openat(AT_FDCWD<%s>, "%s", O_WRONLY|O_CREAT|O_DIRECT, 0600) = 8<%s>\n' "$SCRATCH" "$f" "$real"
		printf '101  openat(AT_FDCWD</>, "/sys/block/loop0/stat", O_RDONLY) = 8<%s>\n' "$sys"
		printf '101  close(8<%s>)  = 0\n' "$sys"
		for i in 0 1 2 3; do
			printf '201  io_submit(0x7f0000001000, 2, [{aio_data=0, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=8<%s>, aio_buf="\\0"..., aio_nbytes=1048576, aio_offset=%d}, {aio_data=0, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=8<%s>, aio_buf="\\0"..., aio_nbytes=1048576, aio_offset=%d}]) = 2\n' \
				"$real" $((i * 2097152)) "$real" $((i * 2097152 + 1048576))
		done
		printf '200  close(8<%s>)  = 0\n' "$real"
	} >"$log"
	run -0 file_calls "$log" "$f"
	assert_equal "$(grep -c ' submit 8$' <<<"$output")" 4
	run -0 per_op_fds "$output" 200
	assert_output "1 1 ok"
	# a submit on another file's descriptor of the same number is no use of it
	printf '201  io_submit(0x7f0000001000, 1, [{aio_data=0, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=8<%s>, aio_buf="\\0"..., aio_nbytes=4096, aio_offset=0}]) = 1\n' \
		"$sys" >>"$log"
	run -0 file_calls "$log" "$f"
	run -0 per_op_fds "$output" 200
	assert_output "1 1  submit-on-fd-other"
}

@test "bad input: tswap_handoff=bogus, tswap_reopen=1 with tswap_registerfiles=1" {
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write --tswap_handoff=bogus
	assert_failure
	assert_regex "$stderr$output" "tswap_handoff"
	requires io_uring
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write \
		--tswap_backend=io_uring --tswap_registerfiles=1 --tswap_reopen=1
	assert_rejected tswap_reopen=1 "tswap_registerfiles=1"
}
