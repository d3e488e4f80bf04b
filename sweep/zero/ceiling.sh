# shellcheck shell=bash
# sweep/zero/ceiling.sh - the device ceiling a tswap-zero step is held
# against: fio's own libaio engine, one job per rank on that rank's target,
# large sequential blocks, a short time-based run per direction.
#
# Owns: ceiling.fio, ceiling.fio.json and ceiling.json in --out; one file
# per rank (ceiling.rR.swp) in the rank's run folder (removed with it).
# Reads: fio's JSON. Uses zero_fio (run.sh).
#
# The same shape as tswap-sweep's ceiling points (docs/sweep.md): bs 1 MiB,
# O_DIRECT, one job per handle, as deep as the handle keeps bytes in
# flight; here one job per rank, as many as the step has ranks, on the
# same targets.

# Seconds per direction (fio runtime).
readonly ZERO_CEILING_SECONDS=2
# bs; the least and the most iodepth (as tswap-sweep: state.sh CEILING_*).
readonly ZERO_CEILING_BS=1m ZERO_CEILING_BS_BYTES=$((1024 * 1024))
readonly ZERO_CEILING_QD_MIN=64 ZERO_CEILING_QD_MAX=4096
# The ceiling's iodepth and per-rank region for this run (zero_ceiling_size).
ZERO_CEILING_QD=$ZERO_CEILING_QD_MIN
# Per rank, bytes: the region each ceiling job writes and reads (time-based:
# it wraps around): 256 MiB, or twice the queue's bytes when deeper, so
# that the queue stays full.
ZERO_CEILING_BYTES=$((256 * 1024 * 1024))

# zero_ceiling_size RANKS PLAN_JSON...: set ZERO_CEILING_QD and
# ZERO_CEILING_BYTES for the plans' aio settings: as many 1 MiB blocks as
# one handle keeps in flight, intra_op_parallelism x queue_depth x
# block_size bytes (DeepSpeed's aio handle: each of its threads queues
# queue_depth blocks; csrc/aio/py_lib/deepspeed_aio_thread.cpp), the
# largest of the plans (the base and --aio's), at least 64, at most 4096
# and fs.aio-max-nr over RANKS jobs, with a note on stderr when capped.
# A shallower ceiling measures less than the device gives the step: its %
# of ceiling reads above 100.
zero_ceiling_size() {
	local ranks=$1 depth cap aiomax
	shift
	# in jq, in 1 MiB blocks, at most 2^20 of them: the product of three
	# user settings can pass what bash arithmetic takes
	depth=$(jq -s --argjson bs "$ZERO_CEILING_BS_BYTES" \
		'[.[].config | .intra_op_parallelism * .queue_depth * .block_size] | max / $bs | ceil | [., 1048576] | min' "$@")
	((depth >= ZERO_CEILING_QD_MIN)) || depth=$ZERO_CEILING_QD_MIN
	cap=$(aio_depth_cap "$ranks" "$ZERO_CEILING_QD_MAX")
	read -r cap aiomax <<<"$cap"
	if ((depth > cap)); then
		warn "device ceiling: the aio settings keep $depth x $ZERO_CEILING_BS in flight per handle; the ceiling runs at iodepth $cap (the most $ranks job(s) get from fs.aio-max-nr=$aiomax and $ZERO_CEILING_QD_MAX), so it may read low"
		depth=$cap
	fi
	ZERO_CEILING_QD=$depth
	ZERO_CEILING_BYTES=$((2 * depth * ZERO_CEILING_BS_BYTES))
	((ZERO_CEILING_BYTES >= 256 * 1024 * 1024)) || ZERO_CEILING_BYTES=$((256 * 1024 * 1024))
}

# zero_ceiling_job DIRS_JSON: the ceiling job file on stdout: a write group
# (it also lays out the files), then a read group, one job per rank, rank R
# on DIRS_JSON[R].
zero_ceiling_job() {
	jq -r --argjson size "$ZERO_CEILING_BYTES" --argjson secs "$ZERO_CEILING_SECONDS" \
		--arg bs "$ZERO_CEILING_BS" --argjson qd "$ZERO_CEILING_QD" '
		"; tswap-zero: the device ceiling: fio'"'"'s libaio, one job per rank, \($bs) sequential, iodepth \($qd)",
		"[global]", "ioengine=libaio", "direct=1", "thread", "bs=\($bs)", "iodepth=\($qd)",
		"size=\($size)", "fallocate=none", "time_based", "runtime=\($secs)", "",
		(. as $d | ("write", "read") as $rw | range(0; $d | length) as $r
		 | "[ceiling.\($rw).r\($r)]", "filename=\($d[$r])/ceiling.r\($r).swp", "rw=\($rw)",
		   (if $r == 0 then "stonewall" else empty end), "")' <<<"$1"
}

# zero_ceiling_figures FIO_JSON: {read_gbs, write_gbs, jobs_per_direction, ...} from the
# ceiling run: per direction the bytes of all its jobs over the longest of
# their runtimes (they start together), GB/s (1e9 bytes per second).
zero_ceiling_figures() {
	jq '[.jobs[] | {rw: (.jobname | split(".")[1]), runtime: .job_runtime,
	      bytes: (.read.io_bytes + .write.io_bytes)}] as $j
	   | def gbs($rw): [$j[] | select(.rw == $rw)]
	       | if length == 0 or (map(.runtime) | max) <= 0 then 0
	         else (map(.bytes) | add) / (map(.runtime) | max) * 1000 / 1e9 end;
	   {engine: "libaio", bs: "'"$ZERO_CEILING_BS"'", iodepth: '"$ZERO_CEILING_QD"',
	    jobs_per_direction: ($j | map(select(.rw == "read")) | length),
	    seconds_per_direction: '"$ZERO_CEILING_SECONDS"',
	    read_gbs: gbs("read"), write_gbs: gbs("write")}' "$1"
}

# zero_run_ceiling OUTDIR DIRS_JSON: run the ceiling, write OUTDIR/ceiling.json
# and print one line. Exit 3 (zero_fio) when fio fails; a ceiling of 0 GB/s
# in a direction is a run error too (every figure held against it would be
# meaningless).
zero_run_ceiling() {
	local out=$1 dirs=$2 c
	zero_ceiling_job "$dirs" >"$out/ceiling.fio"
	zero_fio "$out/ceiling.fio" "$out/ceiling.fio.json"
	c=$(zero_ceiling_figures "$out/ceiling.fio.json")
	jq -e '.read_gbs > 0 and .write_gbs > 0' <<<"$c" >/dev/null ||
		die "$EXIT_ERROR" "the device ceiling moved no bytes in a direction (see $out/ceiling.fio.json)"
	printf '%s\n' "$c" >"$out/ceiling.json"
	jq -r '"device ceiling (fio libaio, \(.jobs_per_direction) jobs, \(.bs) sequential, iodepth \(.iodepth), \(.seconds_per_direction) s each): read \(.read_gbs * 100 | round / 100) GB/s, write \(.write_gbs * 100 | round / 100) GB/s"' <<<"$c"
}

# zero_against_ceiling CEILING_JSON: a jq filter's input is a step's figures
# (zero_step_figures); adds to each stage, phase and the step
# ceiling_seconds, the least time the device could move their bytes in:
# a stage (one fio group, where DeepSpeed waits) max(read / read_gbs, write /
# write_gbs) (its reads and writes at the same time, each direction at its
# ceiling: an optimistic bound), a phase or the step the sum over its
# stages (they run one after the other); ceiling_gbs, their bytes over
# ceiling_seconds; gbs, achieved; pct_of_ceiling = ceiling_seconds /
# seconds x 100 = gbs / ceiling_gbs x 100. CEILING_JSON "null": only gbs.
zero_against_ceiling() {
	jq --argjson c "$1" '
		def gbs: .gbs = (if .seconds > 0 then (.read + .write) / .seconds / 1e9 else 0 end);
		def vs: if $c == null then . else
			.ceiling_gbs = (if .ceiling_seconds > 0 then (.read + .write) / .ceiling_seconds / 1e9 else 0 end)
			| .pct_of_ceiling = (if .seconds > 0 then .ceiling_seconds / .seconds * 100 else 0 end) end;
		.phases |= map(.stages |= map(gbs | if $c == null then . else
				.ceiling_seconds = ([.read / ($c.read_gbs * 1e9), .write / ($c.write_gbs * 1e9)] | max) | vs end)
			| gbs | if $c == null then . else .ceiling_seconds = ([.stages[].ceiling_seconds] | add) | vs end)
		| gbs | if $c == null then . else .ceiling_seconds = ([.phases[].ceiling_seconds] | add) | vs end
		| .ceiling = $c'
}
