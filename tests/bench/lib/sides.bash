# shellcheck shell=bash
# shellcheck disable=SC2034 # sets ARGS, SIDE_BS, SIDE_QD for the caller
# tests/bench/lib/sides.bash - the two sides of a tswap-bench row: the fio
# command line of tswap (A) and of fio's own engine (B) with equivalent
# settings (docs/performance.md).  Sourced by tests/bench/tswap-bench,
# never run.
#
# Reads: TENSOR, TSWAP_IODEPTH, SIZE, ENGINE, TARGET_PATH.
# Writes: TSWAP_BS, TSWAP_QD (tswap_geometry), ARGS, SIDE_BS, SIDE_QD
# (side_args).

# tswap_geometry TARGET B Q THREADS: TSWAP_BS and TSWAP_QD of the tswap side.
# On RAM-backed targets the copy is the whole cost and its cache footprint
# shows: one tensor is one full window per worker (Q x B x threads) and one
# tensor is queued, so tswap's buffers (iodepth x bs) are fio's (Q x B).  On
# the disk, 256 MiB tensors and two queued amortize the drain of the window
# at the end of every tensor (one operation at a time per worker, as in
# DeepSpeed).  The threads2 row queues two tensors on both of its sides.
tswap_geometry() {
	local target=$1 B=$2 Q=$3 threads=$4
	if [ "$TENSOR" != auto ]; then
		TSWAP_BS=$TENSOR
	elif [ "$target" = disk ]; then
		TSWAP_BS=256m
	else
		TSWAP_BS=$((Q * $(size_bytes "$B") * threads))
	fi
	if [ "$TSWAP_IODEPTH" != auto ]; then
		TSWAP_QD=$TSWAP_IODEPTH
	elif [ "$target" = disk ] || [ "$threads" -gt 1 ]; then
		TSWAP_QD=2
	else
		TSWAP_QD=1
	fi
}

# side_args TARGET SIDE RW B Q BACKEND VARIANT: the side's fio arguments in
# ARGS, its bs (one I/O) in SIDE_BS and iodepth in SIDE_QD.  SIDE: tswap
# (A), fio (B), or for threads2 tswap2 (A) and tswap1 (B).
side_args() {
	local target=$1 side=$2 rw=$3 B=$4 Q=$5 be=$6 variant=$7
	local window=overlap submit=block threads=1 batch_sub=$Q batch_min=1
	case $variant in
	seq) window=sequential batch_min=$Q ;;
	single) submit=single batch_sub=1 ;;
	esac
	# tswap_handoff=inline: fio's engines run in the job thread, so the
	# tswap side does too with one worker (the hand-off DeepSpeed's async
	# calls make is measured by tswap-bench-deepspeed).
	# scramble_buffers=0: fio's per-write scrambling of every 512 bytes
	# costs in proportion to the buffer footprint, not the engine.
	ARGS=(--name=bench --filename="$TARGET_PATH" --size="$SIZE" --direct=1 --rw="$rw"
		--scramble_buffers=0)
	case $side in
	tswap | tswap1 | tswap2)
		[ "$side" = tswap2 ] && threads=2
		if [ "$variant" = threads2 ]; then
			tswap_geometry "$target" "$B" "$Q" 2
		else
			tswap_geometry "$target" "$B" "$Q" 1
		fi
		SIDE_BS=$TSWAP_BS
		SIDE_QD=$TSWAP_QD
		ARGS+=(--ioengine="external:$ENGINE" --bs="$TSWAP_BS"
			--iodepth="$TSWAP_QD"
			--tswap_backend="$be" --tswap_block_size="$B"
			--tswap_queue_depth="$Q" --tswap_window="$window"
			--tswap_submit="$submit" --tswap_threads="$threads"
			--tswap_handoff=inline)
		[ "$variant" = fixedbufs ] && ARGS+=(--tswap_fixedbufs=1)
		;;
	fio | fio1 | fio2)
		SIDE_BS=$B
		SIDE_QD=$Q
		ARGS+=(--ioengine="$be" --bs="$B" --iodepth="$Q"
			--iodepth_batch_submit="$batch_sub"
			--iodepth_batch_complete_min="$batch_min"
			--iodepth_batch_complete_max="$Q")
		[ "$variant" = fixedbufs ] && ARGS+=(--fixedbufs=1)
		;;
	esac
	return 0
}
