# shellcheck shell=bash
# tests/bench/lib/ds-rows.bash - tswap-bench-deepspeed's rows.  Sourced by
# tests/bench/tswap-bench-deepspeed, never run.
#
# A row is one line "ID RW T B Q SUBMIT WINDOW P MODE": direction, tensor
# size T (bytes, fio size suffix), block size B, queue depth Q, submit
# (single|block), window (sequential|overlap), threads P (intra-op
# parallelism), mode (async|sync|aa).
# Reads: ROWS_RE, DIRS, PATTERNS, THREADS, MODES (the checked options).

# all_rows: every row, one per line.
all_rows() {
	local rw sw s w p
	for rw in read write; do
		for sw in block:overlap block:sequential single:overlap single:sequential; do
			s=${sw%:*} w=${sw#*:}
			echo "$rw-32m-1m-q32-$s-$w-p1-async $rw 32m 1m 32 $s $w 1 async"
		done
		for p in 2 4; do
			echo "$rw-32m-1m-q32-block-overlap-p$p-async $rw 32m 1m 32 block overlap $p async"
		done
		# Small tensors: where the hand-off shows (issue 15).
		echo "$rw-8m-128k-q64-block-overlap-p1-async $rw 8m 128k 64 block overlap 1 async"
		echo "$rw-8m-128k-q64-block-overlap-p1-sync $rw 8m 128k 64 block overlap 1 sync"
	done
	echo "read-32m-1m-q32-block-overlap-p1-aa read 32m 1m 32 block overlap 1 aa"
}
# rows_for TARGET: the rows --rows, --dirs, --patterns, --threads and
# --modes select; sync rows need a regular file of exactly one tensor.
rows_for() {
	all_rows | awk -v re="$ROWS_RE" -v t="$1" -v dirs=",$DIRS," -v pats=",$PATTERNS," \
		-v ps=",$THREADS," -v modes=",$MODES," '
		{ gsub(/ /, ",", dirs); gsub(/ /, ",", pats); gsub(/ /, ",", ps); gsub(/ /, ",", modes) }
		$1 ~ re && !(t == "loop" && $9 == "sync") && index(dirs, "," $2 ",") &&
		index(pats, "," $6 "-" $7 ",") && index(ps, "," $8 ",") && index(modes, "," $9 ",")'
}
