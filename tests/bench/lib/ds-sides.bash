# shellcheck shell=bash
# shellcheck disable=SC2153 # SIDE is the caller's --side, not a misspelt side
# tests/bench/lib/ds-sides.bash - tswap-bench-deepspeed's two sides: the
# command of each, one timed or one-tensor run, one traced run, the byte
# check.  Sourced by tests/bench/tswap-bench-deepspeed, never run.
#
# Reads: SIDE (cpp|python), ENGINE, DRIVER, PYTHON, DS_SRC, PY_EXT,
# PATTERN, RUNTIME, OUT, CUR_T, CUR_RW, CUR_TARGET, DEV_NAME, TIMES_FILE,
# RUNS_JSONL.
# Writes: CMD (side_cmd), lines of RUNS_JSONL (record), OUT/runs/*.

# engine_has_bounce: 0 when ENGINE has tswap_bounce (DeepSpeed's bounce
# buffer for tensors that are not page-locked; docs/performance.md).
# grep reads all of fio's help (not -q): under pipefail, a grep that
# quits at the match can end fio with SIGPIPE and the pipeline with 141.
engine_has_bounce() {
	fio --enghelp="$ENGINE" 2>/dev/null | grep '^ *tswap_bounce' >/dev/null
}

# engine_has_alloc: 0 when ENGINE has tswap_alloc (buffers allocated as
# DeepSpeed 0.19.4+'s pinned-tensor manager does; docs/engine.md).
engine_has_alloc() {
	fio --enghelp="$ENGINE" 2>/dev/null | grep '^ *tswap_alloc' >/dev/null
}

# dev_requests NAME RW: "REQUESTS SECTORS", the requests of direction RW
# that block device NAME completed so far and their 512-byte sectors
# (/proc/diskstats); status 1 when diskstats has no NAME.
dev_requests() {
	local major minor name rd rdm rds rdt wr wrm wrs rest
	while read -r major minor name rd rdm rds rdt wr wrm wrs rest; do
		: "$major" "$minor" "$rdm" "$rdt" "$wrm" "$rest"
		[ "$name" = "$1" ] || continue
		if [ "$2" = read ]; then echo "$rd $rds"; else echo "$wr $wrs"; fi
		return 0
	done </proc/diskstats
	return 1
}

# side_cmd SIDE PATH SIZE RW T B Q SUBMIT WINDOW P MODE BUFFER: CMD (argv)
# for one run, completed by the caller with its length; SIDE tswap or ds
# (the C++ driver, or the Python one with SIDE=python).  A plain-buffer row
# runs tswap unlocked, with tswap_bounce=1 when the engine has it (each
# run's JSON says which: fio's job options).  A locked row on the disk
# target allocates tswap's buffer as DeepSpeed 0.19.4+ allocates every swap
# buffer (tswap_alloc=deepspeed: swap_tensor/utils.py SwapBufferManager
# from the handle's new_cpu_locked_tensor, #8212), as side B's buffer is:
# on a disk the buffer's page runs set the request sizes
# (docs/performance.md, "The disk gap").
side_cmd() {
	local side=$1 path=$2 size=$3 rw=$4 T=$5 B=$6 Q=$7 sub=$8 win=$9 p=${10} mode=${11} buf=${12}
	if [ "$side" = tswap ]; then
		local handoff=worker
		local -a mem=(--tswap_pin=1)
		[ "$mode" = sync ] && handoff=inline
		if [ "$buf" = locked ] && [ "$CUR_TARGET" = disk ]; then
			engine_has_alloc ||
				die "$EXIT_ERROR" "disk rows need tswap_alloc=deepspeed; $ENGINE has no tswap_alloc (run make, or pass --engine)"
			mem+=(--tswap_alloc=deepspeed)
		fi
		if [ "$buf" = plain ]; then
			mem=(--tswap_pin=0)
			if engine_has_bounce; then mem+=(--tswap_bounce=1); fi
		fi
		CMD=(fio --name=bench --ioengine="external:$ENGINE" --filename="$path"
			--size="$size" --direct=1 --rw="$rw" --bs="$T" --iodepth=1
			--scramble_buffers=0 --buffer_pattern="$PATTERN" --tswap_block_size="$B"
			--tswap_queue_depth="$Q" --tswap_submit="$sub" --tswap_window="$win"
			--tswap_threads="$p" --tswap_handoff="$handoff" --tswap_reopen=1 "${mem[@]}")
		return
	fi
	local single=0 overlap=1 dsmode=async
	[ "$sub" = single ] && single=1
	[ "$win" = sequential ] && overlap=0
	[ "$mode" = sync ] && dsmode=sync
	local -a common=(--file "$path" --rw "$rw" --tensor "$(size_bytes "$T")"
		--size "$(size_bytes "$size")" --block "$(size_bytes "$B")" --qd "$Q"
		--single "$single" --overlap "$overlap" --threads "$p" --pattern "$PATTERN"
		--buffer "$buf")
	if [ "$SIDE" = python ]; then
		CMD=("$PYTHON" "$DRIVER" --ds-src "$DS_SRC" --ext-dir "$PY_EXT" "${common[@]}")
		[ -z "$DEV_NAME" ] || CMD+=(--dev "$DEV_NAME")
	else
		CMD=("$DRIVER" "${common[@]}" --mode "$dsmode")
	fi
}

# run_side KIND ROW SIDE N LEN: one run ("timed" for LEN seconds, "null"
# for LEN tensors) and a line in runs.jsonl.  CPU: the whole process tree
# from bash's `times` around it; the Python driver's own getrusage over its
# loop instead (torch's import and the op's load take seconds of CPU that
# vary more than the loop's).  With DEV_NAME, the device's requests of the
# run's direction and their sectors (dev_reqs, dev_sectors: other jobs' I/O
# on that device is in them too); the Python driver's own count over its
# loop (torch's import reads files too).
run_side() {
	local kind=$1 row=$2 side=$3 n=$4 len=$5 base u0 s0 bytes gbs cpu_ms r0=0 q0=0 r1=0 q1=0
	base=$OUT/runs/$row.$side.$kind.$n
	local -a cmd=("${CMD[@]}")
	if [ "${cmd[0]}" = fio ]; then
		if [ "$kind" = timed ]; then cmd+=(--time_based --runtime="$len"); else
			cmd+=(--io_size=$(($(size_bytes "$CUR_T") * len))); fi
		cmd+=(--output-format=json --output="$base.json")
	else
		if [ "$kind" = timed ]; then cmd+=(--runtime "$len"); else cmd+=(--ops "$len"); fi
		cmd+=(--json "$base.json")
	fi
	[ -z "$DEV_NAME" ] || read -r r0 q0 < <(dev_requests "$DEV_NAME" "$CUR_RW")
	cpu_snapshot
	u0=$CPU_USR_MS s0=$CPU_SYS_MS
	timeout -k 10 $((RUNTIME + 300)) "${cmd[@]}" >/dev/null 2>"$base.err" || {
		note "$row $side $kind run $n failed:"
		cat "$base.err" >&2
		exit "$EXIT_ERROR"
	}
	cpu_snapshot
	[ -z "$DEV_NAME" ] || read -r r1 q1 < <(dev_requests "$DEV_NAME" "$CUR_RW")
	cpu_ms=$((CPU_USR_MS - u0 + CPU_SYS_MS - s0))
	if [ "${cmd[0]}" = fio ]; then
		read -r bytes gbs < <(jq -r '.jobs[0] | [(.read.io_bytes + .write.io_bytes),
			((.read.bw_bytes + .write.bw_bytes) / 1e9)] | @tsv' "$base.json")
	else
		read -r bytes gbs < <(jq -r '[.bytes, .gbs] | @tsv' "$base.json")
		if [ "$SIDE" = python ]; then
			cpu_ms=$(jq '.cpu_s * 1000 | round' "$base.json")
			[ -z "$DEV_NAME" ] || read -r r0 q0 r1 q1 < <(jq -r '[0, 0, .dev_reqs, .dev_sectors] | @tsv' "$base.json")
		fi
	fi
	record kind="$kind" row="$row" side="$side" run="$n" bytes="$bytes" gbs="$gbs" \
		cpu_ms="$cpu_ms" dev_reqs=$((r1 - r0)) dev_sectors=$((q1 - q0))
}

# run_shape ROW SIDE NOPS: one strace -f run of NOPS tensors; records the
# I/O calls and the blocks-per-io_submit histogram.  One trace file per
# thread (-ff), joined: with P > 1 threads a shared file splits calls into
# "unfinished" and "resumed" lines, and the histogram needs whole ones.
run_shape() {
	local row=$1 side=$2 nops=$3 base log
	base=$OUT/runs/$row.$side.shape
	log=$base.strace
	local -a cmd=("${CMD[@]}")
	if [ "${cmd[0]}" = fio ]; then cmd+=(--io_size=$(($(size_bytes "$CUR_T") * nops)) --output=/dev/null)
	else cmd+=(--ops "$nops" --json "$base.json"); fi
	rm -f "$log" "$log".*
	timeout -k 10 600 strace -ff -qq -e signal=none \
		-e trace=io_submit,io_getevents,io_pgetevents -o "$log" "${cmd[@]}" >/dev/null 2>"$base.err" ||
		die "$EXIT_ERROR" "$row $side: traced run failed (see $base.err)"
	cat "$log".* >"$log"
	rm -f "$log".*
	record kind=shape row="$row" side="$side" bytes=$(($(size_bytes "$CUR_T") * nops)) \
		submits="$(grep -c '^io_submit(' "$log" || true)" \
		waits="$(grep -cE '^io_p?getevents\(' "$log" || true)" \
		hist="$(awk '/^io_submit\(/ { sub(/.*\) += /, ""); n[$1]++ } END { for (k in n) printf "%s:%s ", k, n[k] }' "$log" | tr ' ' '\n' | sort -n | xargs)"
}

# check_bytes ROW NOPS PATH SIZE T B Q SUBMIT WINDOW P MODE BUFFER: over
# NOPS tensors, both sides write the pattern (the same sha256 of the range
# from a zeroed start), and both read it back checked (the driver's
# --check, fio verify=pattern).  Records ok=yes|no.
check_bytes() {
	local row=$1 nops=$2 len h1 h2 ok=yes
	shift 2
	len=$(($(size_bytes "$CUR_T") * nops))
	zero() { head -c "$len" /dev/zero | dd of="$1" bs=1M conv=notrunc,fsync status=none; }
	zero "$1"
	side_cmd ds "$1" "$2" write "${@:3}"
	"${CMD[@]}" --ops "$nops" --json "$OUT/runs/$row.bytes.json" >/dev/null 2>&1 || ok=no
	h1=$(head -c "$len" "$1" | sha256sum)
	zero "$1"
	side_cmd tswap "$1" "$2" write "${@:3}"
	"${CMD[@]}" --io_size="$len" --output=/dev/null >/dev/null 2>&1 || ok=no
	h2=$(head -c "$len" "$1" | sha256sum)
	[ "$h1" = "$h2" ] || ok=no
	side_cmd ds "$1" "$2" read "${@:3}"
	"${CMD[@]}" --ops "$nops" --check --json "$OUT/runs/$row.bytes.json" >/dev/null 2>&1 || ok=no
	side_cmd tswap "$1" "$2" write "${@:3}"
	"${CMD[@]}" --io_size="$len" --verify_only=1 --verify=pattern \
		--verify_pattern="$PATTERN" --output=/dev/null >/dev/null 2>&1 || ok=no
	record kind=bytes row="$row" ok="$ok"
}
