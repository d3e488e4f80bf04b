# shellcheck shell=bash
# tests/bench/lib/ds-rows.bash - tswap-bench-deepspeed's rows.  Sourced by
# tests/bench/tswap-bench-deepspeed, never run.
#
# A row is one line "ID RW T B Q SUBMIT WINDOW P MODE BUFFER": direction,
# tensor size T (bytes, fio size suffix), block size B, queue depth Q,
# submit (single|block), window (sequential|overlap), threads P (intra-op
# parallelism), mode (async|sync|aa), buffer (locked: the handle's
# new_cpu_locked_tensor, no bounce buffer; plain: an unpinned CPU tensor,
# DeepSpeed's bounce buffer per operation).
# Reads: SIDE, ROWS_RE, DIRS, PATTERNS, THREADS, MODES, BUFFERS (the
# checked options).

# cpp_rows: every row against the C++ driver (--side cpp), one per line.
cpp_rows() {
	local rw sw s w p
	for rw in read write; do
		for sw in block:overlap block:sequential single:overlap single:sequential; do
			s=${sw%:*} w=${sw#*:}
			echo "$rw-32m-1m-q32-$s-$w-p1-async $rw 32m 1m 32 $s $w 1 async locked"
		done
		for p in 2 4; do
			echo "$rw-32m-1m-q32-block-overlap-p$p-async $rw 32m 1m 32 block overlap $p async locked"
		done
		# Small tensors: where the hand-off shows (issue 15).
		echo "$rw-8m-128k-q64-block-overlap-p1-async $rw 8m 128k 64 block overlap 1 async locked"
		echo "$rw-8m-128k-q64-block-overlap-p1-sync $rw 8m 128k 64 block overlap 1 sync locked"
	done
	echo "read-32m-1m-q32-block-overlap-p1-aa read 32m 1m 32 block overlap 1 aa locked"
}

# python_rows: every row against DeepSpeed's op from Python (--side
# python): reads and writes, P = 1 and 8, locked and plain buffers, and
# the A/A control (the Python side against itself).
python_rows() {
	local rw p buf
	for rw in read write; do
		for p in 1 8; do
			for buf in locked plain; do
				echo "$rw-32m-1m-q32-block-overlap-p$p-async-$buf $rw 32m 1m 32 block overlap $p async $buf"
			done
		done
	done
	echo "read-32m-1m-q32-block-overlap-p1-aa-locked read 32m 1m 32 block overlap 1 aa locked"
}

# rows_for TARGET: the rows of SIDE that --rows, --dirs, --patterns,
# --threads, --modes and --buffers select; sync rows need a regular file
# of exactly one tensor.
rows_for() {
	{ if [ "$SIDE" = python ]; then python_rows; else cpp_rows; fi; } |
		awk -v re="$ROWS_RE" -v t="$1" -v dirs=",$DIRS," -v pats=",$PATTERNS," \
			-v ps=",$THREADS," -v modes=",$MODES," -v bufs=",$BUFFERS," '
		BEGIN { gsub(/ /, ",", dirs); gsub(/ /, ",", pats); gsub(/ /, ",", ps)
			gsub(/ /, ",", modes); gsub(/ /, ",", bufs) }
		$1 ~ re && !(t == "loop" && $9 == "sync") && index(dirs, "," $2 ",") &&
		index(pats, "," $6 "-" $7 ",") && index(ps, "," $8 ",") && index(modes, "," $9 ",") &&
		index(bufs, "," $10 ",")'
}
