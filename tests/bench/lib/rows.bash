# shellcheck shell=bash
# tests/bench/lib/rows.bash - tswap-bench's rows: which comparisons run on
# which target.  Sourced by tests/bench/tswap-bench, never run.
#
# Reads: ROWS_RE (--rows), TARGET_LIST (--targets).

# A row: ID RW B Q BACKEND VARIANT.  RAM-backed targets get every row, the
# disk the core rows (the device, not the engine, sets its numbers).
core_rows() {
	local rw geo be B Q
	for rw in read write; do
		for geo in "1m 32" "128k 64"; do
			read -r B Q <<<"$geo"
			for be in libaio io_uring; do
				printf '%s %s %s %s %s %s\n' "$rw-$B-q$Q-$be" "$rw" "$B" "$Q" "$be" overlap
			done
		done
	done
}

all_rows() {
	local be
	core_rows
	for be in libaio io_uring; do
		printf '%s\n' "read-1m-q32-$be-seq read 1m 32 $be seq"
		printf '%s\n' "read-1m-q32-$be-single read 1m 32 $be single"
	done
	printf '%s\n' "read-1m-q32-io_uring-fixedbufs read 1m 32 io_uring fixedbufs"
	for be in libaio io_uring; do
		printf '%s\n' "read-128k-q64-$be-threads2 read 128k 64 $be threads2"
	done
	printf '%s\n' "read-1m-q32-libaio-aa read 1m 32 libaio aa"
}

rows_for() { # rows_for TARGET: the rows of that target that match --rows
	if [ "$1" = disk ]; then core_rows; else all_rows; fi |
		awk -v re="$ROWS_RE" '$1 ~ re'
}

# list_rows: --list, one line "TARGET ID RW B Q BACKEND VARIANT" per row.
list_rows() {
	local t
	for t in "${TARGET_LIST[@]}"; do
		rows_for "$t" | sed "s/^/$t /"
	done
}
