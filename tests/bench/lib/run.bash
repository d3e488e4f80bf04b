# shellcheck shell=bash
# tests/bench/lib/run.bash - a tswap-bench run: every row of every target,
# each row's two sides alternating A B A B after a setup-cost run each,
# then a counting run each; meta.json at the end.  Sourced by
# tests/bench/tswap-bench, never run.
#
# Reads: TARGET_LIST, RUNS, RUNTIME, SIZE, TENSOR, TSWAP_IODEPTH, COUNTER,
# OUT, RUNS_JSONL, ROOT.  Writes: runs.jsonl, OUT/meta.json; progress on
# stderr.

run_row() { # run_row TARGET ID RW B Q BACKEND VARIANT
	local target=$1 id=$2 rw=$3 B=$4 Q=$5 be=$6 variant=$7
	local a=tswap b=fio i side null_io
	local -a sides
	if [ "$variant" = threads2 ]; then
		a=tswap2
		b=tswap1
	elif [ "$variant" = aa ]; then
		a=fio1
		b=fio2
	fi
	sides=("$a" "$b")
	printf '%s: %-6s %-32s' "$PROG" "$target" "$id" >&2
	# Setup cost of each side: the same job moving just enough to touch
	# all of tswap's buffers once (iodepth x bs of the tswap side), on
	# both sides, so first-touch page faults are setup on both.
	side_args "$target" "$a" "$rw" "$B" "$Q" "$be" "$variant"
	null_io=$(($(size_bytes "$SIDE_BS") * SIDE_QD))
	for side in "${sides[@]}"; do
		side_args "$target" "$side" "$rw" "$B" "$Q" "$be" "$variant"
		run_measured null "$target" "$id" "$side" 1 "${ARGS[@]}" --io_size="$null_io"
		record kind=geometry target="$target" row="$id" side="$side" \
			bs="$(size_bytes "$SIDE_BS")" iodepth="$SIDE_QD"
	done
	# A B A B ...
	for ((i = 1; i <= RUNS; i++)); do
		for side in "${sides[@]}"; do
			side_args "$target" "$side" "$rw" "$B" "$Q" "$be" "$variant"
			run_measured timed "$target" "$id" "$side" "$i" "${ARGS[@]}" \
				--time_based --runtime="$RUNTIME"
		done
		printf '.' >&2
	done
	if [ "$COUNTER" != none ]; then
		for side in "${sides[@]}"; do
			side_args "$target" "$side" "$rw" "$B" "$Q" "$be" "$variant"
			run_counted "$target" "$id" "$side" "${ARGS[@]}" \
				--time_based --runtime="$RUNTIME"
		done
	fi
	printf '\n' >&2
}

# --- run -------------------------------------------------------------------------

run_all() {
	local target row load_before started
	local -a rows
	load_before=$(loadavg)
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	: >"$RUNS_JSONL"
	echo '{}' >"$OUT/targets.json"
	for target in "${TARGET_LIST[@]}"; do
		mapfile -t rows < <(rows_for "$target")
		[ "${#rows[@]}" -gt 0 ] || continue
		setup_target "$target" || continue
		describe_target "$target"
		for row in "${rows[@]}"; do
			# shellcheck disable=SC2086 # the row's fields
			run_row "$target" $row
		done
		teardown_target "$target"
	done
	jq -n --arg started "$started" --arg host "$(uname -srm)" \
		--argjson cpus "$(nproc)" --arg fio "$(fio --version)" \
		--arg tswap "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" \
		--argjson runs "$RUNS" --argjson runtime_s "$RUNTIME" --arg size "$SIZE" \
		--arg tensor "$TENSOR" --arg tswap_iodepth "$TSWAP_IODEPTH" \
		--arg counter "$COUNTER" --arg load_before "$load_before" \
		--arg load_after "$(loadavg)" --slurpfile targets "$OUT/targets.json" \
		'$ARGS.named + { targets: $targets[0] }' >"$OUT/meta.json"
	rm -f "$OUT/targets.json"
}
