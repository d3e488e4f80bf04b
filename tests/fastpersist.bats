#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk and bash -c programs in single quotes; bats sets $status, $output, $stderr
#
# jobs/fastpersist-checkpoint.fio and jobs/fastpersist-plan: the system
# calls of one checkpoint file, traced, against DeepSpeed's FastFileWriter
# (deepspeed/io, DeepSpeed 0.17.1..0.19.5): the iocbs of its drains
# (offsets and sizes, cut by the aio handle), one operation in flight at a
# time, the unaligned tail as one buffered write after them, one fsync
# last, no preallocation (tests/strace.bash: fp_records, fp_expect,
# fp_check).

load helpers

setup() {
	common_setup
	requires strace
}
teardown() { common_teardown; }

PLAN=$REPO/jobs/fastpersist-plan
PROFILE=$REPO/jobs/fastpersist-checkpoint.fio

# fp_run NAME S IO_BUFFER_SIZE DOUBLE THREADS BLOCK QD SUBMIT WINDOW - the
# profile for a file of S bytes under strace; leaves $FILE, $REC (the
# fp_records of the trace) and $CHECK (fp_check against fp_expect of the
# same arguments; the summary line is $SUMMARY).
fp_run() {
	local name=$1 s=$2 iobuf=$3 double=$4 threads=$5 block=$6 qd=$7 submit=$8 window=$9
	local log=$SCRATCH/$name.strace plan
	FILE=$SCRATCH/$name.ckpt
	REC=$SCRATCH/$name.tsv
	rm -f "$FILE"
	run -0 "$PLAN" "$s" "$iobuf" "$double" "$threads"
	plan=$output
	run --separate-stderr env TSWAP_ENGINE="$ENGINE" TSWAP_TARGET="$FILE" \
		TSWAP_BLOCK_SIZE="$block" TSWAP_QUEUE_DEPTH="$qd" TSWAP_SUBMIT="$submit" \
		TSWAP_WINDOW="$window" bash -c 'eval "$1" && exec timeout -k 10 "$2" strace -f -y -qq \
			-e signal=none -e trace="$3" -o "$4" fio --output-format=json \
			$TSWAP_FP_SECTIONS "$5"' _ "$plan" "$FIO_TIMEOUT" "$FP_SYSCALLS" "$log" "$PROFILE"
	if [ "$status" -ne 0 ]; then
		printf '%s\n' "$stderr" >&2
		fail "$name: the profile failed under strace (exit $status)"
	fi
	fp_records "$log" "$FILE" >"$REC"
	fp_expect "$s" "$iobuf" "$double" "$threads" "$block" >"$SCRATCH/$name.expect"
	CHECK=$(fp_check "$REC" "$SCRATCH/$name.expect")
	SUMMARY=$(grep '^summary' <<<"$CHECK")
	echo "# $name: $SUMMARY" >&3
}

# no_violation - fail with fp_check's lines unless there were none.
no_violation() {
	if grep -q '^VIOLATION' <<<"$CHECK"; then
		printf '%s\n' "$CHECK" >&2
		fail "the iocbs are not FastFileWriter's"
	fi
}

# events - the records without the aio/reap lines, one per line.
events() { grep -v -e '^aio' -e '^reap' "$REC" | tr '\t' ' '; }

@test "fastpersist: double buffering, 2 threads: half-buffer drains, the aligned rest, the tail, one fsync" {
	# S = 5 MiB + 3 KiB + 100: with io_buffer_size 2 MiB double, H = 1 MiB:
	# 5 drains of 1 MiB, then 3072 aligned bytes (A = 2 x 512), then a
	# tail of 100 bytes.
	local s=$((5 * 1048576 + 3072 + 100))
	fp_run dbl "$s" 2097152 1 2 131072 2 block overlap
	no_violation
	assert_equal "$(summary_field "$SUMMARY" iocbs)" $((5 * 2 * 4 + 2))
	assert_equal "$(summary_field "$SUMMARY" ops)" 6
	assert_equal "$(summary_field "$SUMMARY" bytes)" $((s - 100))
	# Every aio write goes through a descriptor opened O_DIRECT; nothing
	# preallocates or truncates the file.
	run -0 awk -F '\t' '$1 == "open" { f = $2 } $1 == "close" { f = "" }
		$1 == "aio" && f !~ /O_DIRECT/ { print "aio without O_DIRECT: " $0 }' "$REC"
	assert_output ''
	run -0 events
	refute_line --partial resize
	# After the O_DIRECT writes: one buffered open, the tail at its offset,
	# fsync, close; nothing else.
	assert_equal "$(events | tail -n 5)" "close
open O_CREAT|O_RDWR
write $((s - 100)) 100
fsync fsync
close"
	assert_equal "$(grep -c '^fsync' "$REC")" 1
	assert_equal "$(grep -c '^write' "$REC")" 1
	run -0 stat -c %s "$FILE"
	assert_output "$s"
}

@test "fastpersist: single buffering: drains of the whole io_buffer_size, sequential single submits" {
	# S = 3 MiB + 512: io_buffer_size 1 MiB single: 3 drains of 1 MiB, no
	# aligned rest past them beyond 512 bytes (A = 512), no tail.
	local s=$((3 * 1048576 + 512))
	fp_run sgl "$s" 1048576 0 1 262144 2 single sequential
	no_violation
	assert_equal "$(summary_field "$SUMMARY" iocbs)" $((3 * 4 + 1))
	assert_equal "$(summary_field "$SUMMARY" ops)" 4
	assert_equal "$(summary_field "$SUMMARY" bytes)" "$s"
	# No tail: the fsync follows the last O_DIRECT write, on its descriptor.
	assert_equal "$(grep -c '^write' "$REC")" 0
	assert_equal "$(events | tail -n 3)" "open O_CREAT|O_DIRECT|O_RDWR
fsync fsync
close"
	run -0 stat -c %s "$FILE"
	assert_output "$s"
}

@test "fastpersist: a file smaller than one drain: only the aligned rest and the tail" {
	local s=$((8192 + 7))
	fp_run small "$s" 1048576 1 1 1048576 8 block overlap
	no_violation
	assert_equal "$(summary_field "$SUMMARY" ops)" 1
	assert_equal "$(summary_field "$SUMMARY" bytes)" 8192
	assert_equal "$(events | tail -n 4)" "open O_CREAT|O_RDWR
write 8192 7
fsync fsync
close"
}

@test "fastpersist: the check fails on a pattern that is not FastFileWriter's" {
	# The single-buffer run checked as double buffering: 1 MiB drains where
	# 512 KiB ones are expected.
	local s=$((2 * 1048576))
	fp_run wrong "$s" 1048576 0 1 1048576 8 block overlap
	no_violation
	fp_expect "$s" 1048576 1 1 1048576 >"$SCRATCH/wrong.dbl"
	run fp_check "$REC" "$SCRATCH/wrong.dbl"
	assert_line --partial 'an iocb DeepSpeed does not issue'
	assert_line --partial 'never issued'
	# Two operations in flight at once are caught: a synthetic trace.
	printf 'aio\tc1\t0\t1048576\naio\tc2\t1048576\t1048576\nreap\tc1\t1\nreap\tc2\t1\n' >"$SCRATCH/two.tsv"
	run fp_check "$SCRATCH/two.tsv" "$SCRATCH/wrong.expect"
	assert_line --partial 'submitted while operation 0 is in flight'
}

@test "fastpersist: the drains go from a locked buffer of io_buffer_size that each fills first (tswap_fill), fio's own unlocked" {
	# S = 5 MiB + 3 KiB + 100 as above. Double, 2 MiB: body's buffer is
	# both halves, 2 MiB, rem's two halves of its 3072 bytes; single,
	# 1 MiB: 1 MiB and 3072 bytes. No other lock: fio's buffer (the
	# stream torch.save writes into the writer) is not DeepSpeed's pinned
	# tensor.
	local s=$((5 * 1048576 + 3072 + 100)) double iobuf want plan log fill
	for double in 1 0; do
		iobuf=$((double ? 2097152 : 1048576))
		want=$((double ? 2097152 : 1048576))
		want="mlock $want
munlock $want
mlock $((double ? 6144 : 3072))
munlock $((double ? 6144 : 3072))"
		log=$SCRATCH/lock$double.strace
		rm -f "$SCRATCH/lock.ckpt"
		run -0 "$PLAN" --target "$SCRATCH/lock.ckpt" "$s" "$iobuf" "$double" 2
		plan=$output
		fill=single
		[ "$double" = 0 ] || fill=double
		assert_line "export TSWAP_FP_FILL=$fill"
		run --separate-stderr env TSWAP_ENGINE="$ENGINE" TSWAP_BLOCK_SIZE=131072 \
			bash -c 'eval "$1" && exec timeout -k 10 "$2" strace -f -qq -e signal=none \
			-e trace=mlock,munlock -o "$3" fio $TSWAP_FP_SECTIONS "$4"' _ \
			"$plan" "$FIO_TIMEOUT" "$log" "$PROFILE"
		if [ "$status" -ne 0 ]; then
			printf '%s\n' "$stderr" >&2
			fail "double=$double: the profile failed (exit $status)"
		fi
		assert_equal "$(strace_join "$log" | cut -f2 |
			sed -E 's/^(m(un)?lock)\([^,]*, ([0-9]+)\).*/\1 \3/')" "$want"
		run -0 stat -c %s "$SCRATCH/lock.ckpt"
		assert_output "$s"
	done
}

@test "fastpersist-plan: bad arguments are refused with the rule" {
	run "$PLAN" 100 3000 1 1
	assert_failure 2
	assert_output --partial 'IO_BUFFER_SIZE=3000: must be a multiple of 2 x THREADS x 512 = 1024'
	run "$PLAN" 100 1536 0 2
	assert_failure 2
	assert_output --partial 'IO_BUFFER_SIZE=1536: must be a multiple of THREADS x 512 = 1024'
	run "$PLAN" 1g 1048576 1 1
	assert_failure 2
	assert_output --partial 'FILE_BYTES=1g: must be a positive decimal integer'
	run "$PLAN" 100 1048576 2 1
	assert_failure 2
	assert_output --partial 'IO_BUFFER_DOUBLE=2: must be 1'
	run "$PLAN" 100 1048576 1
	assert_failure 2
	assert_output --partial usage
}

# plan_then_mark ARGS... - the documented chain, `eval "$(plan ...)" && X`,
# with `touch $SCRATCH/ran` as X: whether fio would have run, and what
# TSWAP_TARGET would have been (in $SCRATCH/target), without running it;
# $status is the chain's.
plan_then_mark() {
	rm -f "$SCRATCH/ran" "$SCRATCH/target"
	run --separate-stderr env -u TSWAP_TARGET bash -c 'TSWAP_TARGET=$1/old.ckpt; shift
		eval "$("$@")" && touch "$SCRATCH/ran"
		rc=$?
		printf "%s" "${TSWAP_TARGET-(unset)}" >"$SCRATCH/target"
		exit "$rc"' _ "$SCRATCH" "$PLAN" "$@"
}

@test "fastpersist-plan --target: a device node, symlink, FIFO or existing file is never replaced without --replace" {
	requires root
	local s=$((8192 + 7)) t
	echo keep >"$SCRATCH/user.ckpt"
	ln -s "$SCRATCH/user.ckpt" "$SCRATCH/link.ckpt"
	mkfifo "$SCRATCH/fifo.ckpt"
	# a fake block device: a node of an unused major, nothing behind it
	mknod "$SCRATCH/dev.ckpt" b 240 0
	for t in dev link fifo; do
		plan_then_mark --target "$SCRATCH/$t.ckpt" --replace "$s" 1048576 1 1
		assert_failure
		assert_file_not_exists "$SCRATCH/ran"
		assert_equal "$(cat "$SCRATCH/target")" '(unset)'
	done
	assert_equal "$stderr" "fastpersist-plan: --target=$SCRATCH/fifo.ckpt: exists and is not a regular file (a device, FIFO, socket or folder): give a new path"
	[ -b "$SCRATCH/dev.ckpt" ] || fail "the device node is gone"
	[ -p "$SCRATCH/fifo.ckpt" ] || fail "the FIFO is gone"
	[ -L "$SCRATCH/link.ckpt" ] || fail "the symlink is gone"
	plan_then_mark --target "$SCRATCH/link.ckpt" --replace "$s" 1048576 1 1
	assert_equal "$stderr" "fastpersist-plan: --target=$SCRATCH/link.ckpt: is a symlink: give a new path, or a regular file with --replace"
	# the user's file: refused without --replace, deleted with it
	plan_then_mark --target "$SCRATCH/user.ckpt" "$s" 1048576 1 1
	assert_failure
	assert_equal "$stderr" "fastpersist-plan: --target=$SCRATCH/user.ckpt: exists: give --replace to delete it first (a checkpoint save writes a new file)"
	assert_file_not_exists "$SCRATCH/ran"
	assert_equal "$(cat "$SCRATCH/user.ckpt")" keep
	plan_then_mark --target "$SCRATCH/user.ckpt" --replace "$s" 1048576 1 1
	assert_success
	assert_file_exists "$SCRATCH/ran"
	assert_file_not_exists "$SCRATCH/user.ckpt"
	assert_equal "$(cat "$SCRATCH/target")" "$SCRATCH/user.ckpt"
	# a folder that cannot be searched: the check cannot run, so refused
	plan_then_mark --target "$SCRATCH/no/such/dir/x.ckpt" "$s" 1048576 1 1
	assert_failure
	assert_file_not_exists "$SCRATCH/ran"
	# the documented run line deletes nothing itself
	run grep -n 'rm -f' "$PROFILE" "$REPO/docs/deepspeed.md"
	assert_failure 1
}

@test "fastpersist-plan --target: a ':' in the path is escaped: one file, none beside it" {
	local s=$((1048576 + 4096 + 9)) dir=$SCRATCH/sp\ ace
	mkdir -p "$dir" "$SCRATCH/cwd"
	TSWAP_ENGINE=$ENGINE run --separate-stderr bash -c 'cd "$1/cwd" && eval "$("$2" --target "$3" "$4" 1048576 1 1)" &&
		exec timeout -k 10 "$5" fio --output-format=terse $TSWAP_FP_SECTIONS "$6"' _ \
		"$SCRATCH" "$PLAN" "$dir/ck:colon" "$s" "$FIO_TIMEOUT" "$PROFILE"
	assert_success
	run -0 stat -c %s "$dir/ck:colon"
	assert_output "$s"
	assert_equal "$(ls -A "$SCRATCH/cwd")" ''
	assert_file_not_exists "$dir/ck"
}

@test "fastpersist-plan: a TSWAP_BLOCK_SIZE that is not a multiple of 512 is refused before any write" {
	local bs
	for bs in 1000 0 1.5m 4kb -512; do
		TSWAP_BLOCK_SIZE=$bs plan_then_mark --target "$SCRATCH/bs.ckpt" $((3 * 1048576 + 100)) 2097152 1 1
		assert_failure
		assert_file_not_exists "$SCRATCH/ran"
	done
	assert_equal "$stderr" "fastpersist-plan: TSWAP_BLOCK_SIZE=-512: must be bytes (k, m, g suffixes), a positive multiple of 512 (DeepSpeed's O_DIRECT_ALIGNMENT: O_DIRECT offsets are multiples of it)"
	TSWAP_BLOCK_SIZE=4k run -0 "$PLAN" 100 1048576 1 1
	assert_file_not_exists "$SCRATCH/bs.ckpt"
}

@test "fastpersist-compare --dir: a ds.ckpt or fio.ckpt already there is refused, exit 2, left as it was" {
	requires strace
	local src=$SCRATCH/src dir=$SCRATCH/dir
	mkdir -p "$src/deepspeed/io" "$dir"
	: >"$src/deepspeed/io/fast_file_writer.py"
	for name in ds fio; do
		rm -f "$dir"/*.ckpt
		echo "the user's $name" >"$dir/$name.ckpt"
		run -2 --separate-stderr "$REPO/tests/bench/fastpersist-compare" --ds-src "$src" \
			--out "$SCRATCH/out" --dir "$dir"
		assert_equal "$stderr" "fastpersist-compare: --dir $dir: $dir/$name.ckpt exists; remove it or give another --dir"
		assert_equal "$(cat "$dir/$name.ckpt")" "the user's $name"
	done
}

@test "memwarm.py: BYTES not a non-negative integer is one line, exit 2; 64 MiB and 0 exit 0" {
	local warm=$REPO/tests/bench/ds-driver/memwarm.py bad
	for bad in -1 x 1.5 ''; do
		run -2 --separate-stderr /usr/bin/python3 "$warm" "$bad"
		assert_equal "$stderr" "memwarm.py: BYTES $bad: a non-negative integer"
	done
	run -2 --separate-stderr /usr/bin/python3 "$warm"
	assert_equal "$stderr" "usage: memwarm.py BYTES"
	run -0 /usr/bin/python3 "$warm" 67108864
	run -0 /usr/bin/python3 "$warm" 0
	assert_output ''
}

@test "fastpersist-ratio --warm: more than half of MemAvailable, or not bytes, is refused, exit 2, before anything runs" {
	local src=$SCRATCH/src dir=$SCRATCH/dir avail half
	mkdir -p "$src"
	avail=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
	half=$((avail * 512))
	run -2 --separate-stderr "$REPO/tests/bench/fastpersist-ratio" --ds-src "$src" \
		--out "$SCRATCH/out" --dir "$dir" --warm-b $((half * 3))
	assert_regex "$stderr" "^fastpersist-ratio: --warm-b $((half * 3)): $((half * 3)) bytes is more than half of MemAvailable \([0-9]+ MiB\); give a smaller size or 0\$"
	run -2 --separate-stderr "$REPO/tests/bench/fastpersist-ratio" --ds-src "$src" \
		--out "$SCRATCH/out" --dir "$dir" --payload "$half"
	assert_regex "$stderr" "^fastpersist-ratio: --warm auto: [0-9]+ bytes is more than half of MemAvailable"
	run -2 --separate-stderr "$REPO/tests/bench/fastpersist-ratio" --ds-src "$src" \
		--out "$SCRATCH/out" --dir "$dir" --warm 4g
	assert_equal "$stderr" "fastpersist-ratio: --warm 4g: auto or bytes, 0 or a positive integer"
	# past the shell's arithmetic: one line, not bash's own error first
	run -2 --separate-stderr "$REPO/tests/bench/fastpersist-ratio" --ds-src "$src" \
		--out "$SCRATCH/out" --dir "$dir" --warm 99999999999999999999
	assert_equal "$stderr" "fastpersist-ratio: --warm 99999999999999999999: more than 18 digits"
	assert_not_exists "$dir"
	assert_not_exists "$SCRATCH/out"
}
