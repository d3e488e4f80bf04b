#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# tswap_fill=single|double: DeepSpeed's FastPersist buffer fill
# (deepspeed/io/fast_file_writer.py _write_from_tensor; base_io_buffer.py
# fill_buffer; single_io_buffer.py, double_io_buffer.py): each write's
# bytes copied from fio's buffer into the engine's locked buffer and
# written from there:
#   - the file holds fio's bytes (a buffer_pattern) though the I/O goes
#     from the fill buffer, which is locked once, bs (single) or 2 x bs
#     (double) bytes, and unlocked once; fio's buffers stay unlocked
#     (tswap_pin=0);
#   - tswap_stats: fill_ops counts every write, fill_ahead_ops those
#     filled while the write before was in flight (double: all but the
#     first; single: none), fill_bytes their bytes; none without it;
#   - refused in one line, before any I/O: reads, iodepth > 1, verify,
#     tswap_bounce=1, double with tswap_handoff=inline;
#   - fio --enghelp documents it with DeepSpeed's source.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# fill_job NAME [fio args...] - a traced write job of 4 operations of 2m
# (pattern 0xa5, 2 threads, fio's buffers unlocked); leaves $F, $ST (its
# tswap_stats) and $LOCKS: its mlock/munlock calls, "call LEN = RET".
fill_job() {
	local name=$1 log=$SCRATCH/$1.strace
	shift
	F=$SCRATCH/$name.file
	ST=$SCRATCH/$name.json
	rm -f "$F"
	STRACE_SYSCALLS=mlock,munlock,io_submit,io_getevents,io_pgetevents \
		strace_fio "$log" --filename="$F" --size=8m --bs=2m --iodepth=1 --rw=write \
		--buffer_pattern=0xa5 --tswap_block_size=1m --tswap_threads=2 --tswap_pin=0 \
		--tswap_stats="$ST" "$@"
	LOCKS=$(strace_join "$log" | cut -f2 | awk '/^m(un)?lock\(/ {
		c = $0; sub(/\(.*/, "", c)
		n = $0; sub(/^[a-z]+\([^,]*, /, "", n); sub(/\).*/, "", n)
		r = $0; sub(/.* = /, "", r)
		print c, n, "=", r }')
}

# all_a5 FILE - the file is 8 MiB of 0xa5 bytes.
all_a5() {
	run -0 stat -c %s "$1"
	assert_output 8388608
	run -0 bash -c 'tr -d "\245" <"$1" | wc -c' _ "$1"
	assert_output 0
}

@test "tswap_fill=double: fio's bytes written from two locked halves; all but the first write filled while the one before was in flight" {
	requires strace
	fill_job dbl --tswap_fill=double
	all_a5 "$F"
	assert_equal "$LOCKS" "mlock 4194304 = 0
munlock 4194304 = 0"
	run -0 jq -r '"\(.fill) \(.fill_ops) \(.fill_ahead_ops) \(.fill_bytes) \(.operations) \(.op_errors)"' "$ST"
	assert_output "double 4 3 8388608 4 0"
	run -0 jq -r '.fill_ns > 0' "$ST"
	assert_output true
}

@test "tswap_fill=single: one locked buffer of bs, each write filled right before it" {
	requires strace
	fill_job sgl --tswap_fill=single
	all_a5 "$F"
	assert_equal "$LOCKS" "mlock 2097152 = 0
munlock 2097152 = 0"
	run -0 jq -r '"\(.fill) \(.fill_ops) \(.fill_ahead_ops) \(.fill_bytes)"' "$ST"
	assert_output "single 4 0 8388608"
}

@test "tswap_fill=none (the default): no fill buffer, nothing counted" {
	requires strace
	fill_job none
	all_a5 "$F"
	assert_equal "$LOCKS" ""
	run -0 jq -r '"\(.fill) \(.fill_ops) \(.fill_ahead_ops) \(.fill_bytes) \(.fill_ns)"' "$ST"
	assert_output "none 0 0 0 0"
}

@test "tswap_fill: refused in one line with reads, iodepth > 1, verify, tswap_bounce=1, double inline" {
	local f=$SCRATCH/refused.file
	rm -f "$f"
	psync_ok --filename="$f" --size=4m --bs=1m --rw=write --scramble_buffers=0 \
		--buffer_pattern=0x11223344
	cp "$f" "$SCRATCH/refused.ref"
	run_fio --filename="$f" --size=4m --bs=1m --rw=read --tswap_fill=single
	assert_rejected tswap_fill=single 'writes only'
	run_fio --filename="$f" --size=4m --bs=1m --rw=randrw --tswap_fill=double
	assert_rejected tswap_fill=double 'writes only'
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --iodepth=2 --tswap_fill=double
	assert_rejected tswap_fill=double 'iodepth=1, not 2'
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --verify=crc32c --tswap_fill=single
	assert_rejected tswap_fill=single 'not with verify'
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_bounce=1 --tswap_fill=single
	assert_rejected tswap_fill=single 'tswap_bounce=1'
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_handoff=inline --tswap_fill=double
	assert_rejected tswap_fill=double 'tswap_handoff=inline'
	run_fio --filename="$f" --size=4m --bs=1m --rw=write --tswap_fill=triple
	[ "$status" -ne 0 ] || fail "tswap_fill=triple was accepted"
	# Nothing written by any of them.
	run -0 cmp "$f" "$SCRATCH/refused.ref"
}

@test "tswap_fill: fio --enghelp shows it, default none, with DeepSpeed's source" {
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_fill"
	assert_line --regexp '^[[:space:]]*tswap_fill[[:space:]]*: .*fast_file_writer.py _write_from_tensor.*base_io_buffer.py Base_IO_Buffer.fill_buffer'
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: none$'
	assert_line --regexp '^.*: double +io_buffer_double=true \(double_io_buffer\.py Double_IO_Buffer\)'
	assert_line --regexp '^.*: single +io_buffer_double=false \(single_io_buffer\.py Single_IO_Buffer\)'
	run -0 timeout 60 fio --enghelp="$ENGINE"
	assert_line --regexp '^tswap_fill +: Writes only, iodepth=1: '
}
