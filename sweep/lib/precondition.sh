# shellcheck shell=bash
# precondition.sh - preconditioning: before the first write point, write
# every target the plan uses sequentially PRECOND_LOOPS (2) times with
# large blocks (SNIA SSS PTS: a workload-independent preconditioning of two
# full sequential fills), so that write points measure a drive that has
# been written in full (garbage collection, no fresh-out-of-box speed)
# rather than its first pass.
#
# The fill is fio's own libaio engine, direct=1, rw=write, bs=PRECOND_BS,
# iodepth=PRECOND_QD, loops=PRECOND_LOOPS, end_fsync=1, over the bytes of
# the target the sweep uses (--size). It only writes what the write points
# are allowed to write: check_targets (ranks.sh, tswap/executor) has passed for
# writes, so a block device needs --destructive (and --force when in use or
# signed), a user's existing file --destructive.
#
# PRECONDITION: on (--precondition), off (--no-precondition), auto (the
# default: on when a target is a block device; a file target is not
# preconditioned unless asked). Saved in sweep.json; with --resume a
# finished preconditioning (RUN/precondition/done) is not repeated.
#
# Owns: precondition_wanted, precondition_targets,
# precondition_before, precondition_line. Reads: PRECONDITION, PLAN_TEXT,
# TARGETS, TARGET_KINDS, SIZE_BYTES, PRECOND_*. Writes: RUN/precondition/
# (N/job.fio, N/fio.json per target, done), RUN/precondition.json.
# shellcheck disable=SC2016 # ${TSWAP_TARGET} is literal: fio expands it

# precondition_wanted: true when this run preconditions its targets.
precondition_wanted() {
	case $PRECONDITION in
	on) return 0 ;;
	off) return 1 ;;
	esac
	[[ " ${TARGET_KINDS[*]} " == *" block "* ]]
}

# precondition_targets: the paths the plan writes, one a line, each once:
# the target of single-handle points and the rank files (ranks.sh).
precondition_targets() {
	local r h f slots
	local -a all=()
	local -A seen=()
	! plan_has_single || all+=("$TARGET")
	slots=$(rank_slots)
	while IFS=$'\t' read -r r h; do
		[ -z "$r" ] || all+=("$(rank_file "$r" "$h")")
	done <<<"$slots"
	for f in "${all[@]}"; do
		[ -n "${seen[$f]+set}" ] || printf '%s\n' "$f"
		seen[$f]=1
	done
}

# precondition_before RW: precondition once, before the first write point.
precondition_before() {
	local rw=$1 dir="$RUN/precondition" t n=0 rc size bytes main=$TARGET bs sz err
	local -a paths=() lines
	[ "$rw" = write ] || [ "$rw" = readwrite ] || return 0
	[ ! -f "$dir/done" ] || return 0
	precondition_wanted || return 0
	t=$(precondition_targets)
	[ -z "$t" ] || mapfile -t paths <<<"$t"
	bs=$(size_to_bytes "$PRECOND_BS")
	size=$((SIZE_BYTES / bs * bs))
	szname sz "$SIZE_BYTES"
	((size > 0)) || die "$EXIT_USAGE" "--precondition: --size $sz is smaller than one $PRECOND_BS block"
	szname sz "$size"
	rm -rf -- "$dir" "$RUN/precondition.json"
	mkdir -p "$dir"
	for t in "${paths[@]}"; do
		n=$((n + 1))
		mkdir -p "$dir/$n"
		say "preconditioning $t: $PRECOND_LOOPS sequential passes of $sz (fio libaio, bs=$PRECOND_BS, iodepth=$PRECOND_QD, O_DIRECT)"
		printf '; tswap-sweep preconditioning: %s sequential passes over the target (SNIA SSS PTS)\n' "$PRECOND_LOOPS" >"$dir/$n/job.fio"
		printf '[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=%s\ndirect=1\nbs=%s\niodepth=%s\nloops=%s\nend_fsync=1\n\n[precondition]\nrw=write\n' \
			"$size" "$PRECOND_BS" "$PRECOND_QD" "$PRECOND_LOOPS" >>"$dir/$n/job.fio"
		TARGET=$t
		rc=0
		run_fio "$dir/$n" 2 || rc=$?
		TARGET=$main
		bytes=$(jq -r '[.jobs[] | .write.io_bytes] | add // 0' "$dir/$n/fio.stdout" 2>/dev/null) || bytes=0
		if [ "$rc" -ne 0 ] || [ "$bytes" != "$((size * PRECOND_LOOPS))" ]; then
			err=$(sed '/^[[:space:]]*$/d' "$dir/$n/fio.stderr")
			mapfile -t lines <<<"$err"
			# the last two (an offset of -2 past one line would give none)
			[ "${#lines[@]}" -le 2 ] || lines=("${lines[@]:${#lines[@]}-2}")
			[ -z "$err" ] || printf -v err '%s ' "${lines[@]}"
			die "$EXIT_ERROR" "preconditioning $t failed (fio exit $rc, $bytes of $((size * PRECOND_LOOPS)) bytes written): $err"
		fi
		mv -f -- "$dir/$n/fio.stdout" "$dir/$n/fio.json"
		# GB/s: bytes over fio's job_runtime, per target as in the total
		jq -c --arg path "$t" '{path: $path, bytes: ([.jobs[] | .write.io_bytes] | add),
			seconds: (([.jobs[] | .job_runtime] | max) / 1000)} | . + {gbs: (.bytes / .seconds / 1e9)}' \
			"$dir/$n/fio.json" >"$dir/$n/summary.json"
		jq -r --arg t "$t" '"preconditioned \($t): \(.bytes) bytes in \(.seconds) s, \(.gbs * 1000 | round / 1000) GB/s"' "$dir/$n/summary.json"
	done
	jq -s --arg bs "$PRECOND_BS" --argjson qd "$PRECOND_QD" --argjson loops "$PRECOND_LOOPS" --argjson size "$size" \
		'{passes: $loops, bs: $bs, iodepth: $qd, size_bytes: $size, targets: .,
		  bytes: (map(.bytes) | add), seconds: (map(.seconds) | add),
		  gbs: ((map(.bytes) | add) / (map(.seconds) | add) / 1e9)}' "$dir"/*/summary.json >"$RUN/precondition.json.tmp"
	mv -f -- "$RUN/precondition.json.tmp" "$RUN/precondition.json"
	: >"$dir/done"
}

# precondition_line: the report's line on preconditioning.
precondition_line() {
	local why='no write point' w
	if [ -f "$RUN/precondition.json" ]; then
		jq -r '"- preconditioned before the first write point: \(.passes) sequential passes of \(.size_bytes) bytes over \(.targets | map("`\(.path)`") | join(", ")) (fio libaio, bs=\(.bs), iodepth=\(.iodepth), O_DIRECT): \(.bytes) bytes in \(.seconds) s, \(.gbs * 1000 | round / 1000) GB/s (precondition.json)"' "$RUN/precondition.json"
	elif [ "$PRECONDITION" = off ]; then
		printf -- '- not preconditioned (--no-precondition)\n'
	else
		w=$(plan_writes)
		[ "$w" = 0 ] || why='a file target'
		printf -- '- not preconditioned (%s; --precondition fills the target twice before the first write point)\n' "$why"
	fi
}
