#!/usr/bin/env bats
# tests/sweep.bats - the job library (jobs/), the generated grid
# (make jobs -> jobs/grid/) and sweep/tswap-sweep, with real fio and small
# sizes (the whole file takes well under two minutes).
#
# Needs the engine: every test that runs fio skips, saying why, when
# build/tswap.so is missing.

# Each @test runs in its own subshell (exports are per test), and
# '${TSWAP_ENGINE}' in single quotes is the literal fio expands.
# shellcheck disable=SC2016,SC2030,SC2031

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
	bats_load_library bats-file
fi

SWEEP_REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SWEEP=$SWEEP_REPO/sweep/tswap-sweep
SWEEP_ENGINE=${TSWAP_ENGINE:-$SWEEP_REPO/build/tswap.so}

# Small and fast: 4 MiB tensors, 8 MiB of I/O per point, a 32 MiB file.
SMALL=(--size 32m --tensor-size 4m --io-size 8m --repeat 1)
# report.md's page-cache line of a run with read points (tswap.report.head)
PAGE_CACHE_LINE="- page cache: not dropped; sync before every read point (reads are O_DIRECT, and fio invalidates the target's cached pages before each job: invalidate=1)"

setup() {
	if [ ! -f "$SWEEP_ENGINE" ]; then
		skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
	fi
	if declare -F common_setup >/dev/null; then
		common_setup
	else
		SCRATCH=$BATS_TEST_TMPDIR/scratch
		mkdir -p "$SCRATCH"
	fi
	export TSWAP_ENGINE=$SWEEP_ENGINE
	EXTRA_CLEANUP=()
}

teardown() {
	local d
	for d in "${EXTRA_CLEANUP[@]}"; do
		rm -rf -- "$d"
	done
	if declare -F common_teardown >/dev/null; then
		common_teardown
	fi
}

# sweep ARGS... - run tswap-sweep with bats' run (stdout in $output,
# stderr in $stderr), under a timeout.
sweep() {
	run --separate-stderr timeout -k 10 300 "$SWEEP" "$@"
}

show_sweep() {
	printf 'tswap-sweep exit %s\n--- stdout\n%s\n--- stderr\n%s\n---\n' \
		"$status" "$output" "${stderr:-}" >&2
}

sweep_ok() {
	sweep "$@"
	if [ "$status" -ne 0 ]; then
		show_sweep
		fail "tswap-sweep failed (exit $status)"
	fi
}

# csv_rows FILE - data rows of a CSV (header excluded).
csv_rows() {
	tail -n +2 "$1" | grep -c .
}

# --- job library -------------------------------------------------------------

@test "jobs: make jobs output is up to date with sweep/grids" {
	local out=$BATS_TEST_TMPDIR/grid g
	mkdir -p "$out"
	for g in quick deepspeed deepspeed-0.17 deepspeed-full full; do
		run "$SWEEP" --grid "$g" --emit-jobs "$out"
		assert_success
	done
	run diff -r "$SWEEP_REPO/jobs/grid" "$out"
	if [ "$status" -ne 0 ]; then
		fail "jobs/grid/ is stale: run 'make jobs' and commit ($(head -c 400 <<<"$output"))"
	fi
}

@test "grid deepspeed-0.17: ds_nvme_tune's 64 points per direction since v0.17.1, mapped as ds_io builds its handle" {
	local out=$BATS_TEST_TMPDIR/grid rw bs qd seq single p want
	mkdir -p "$out"
	run -0 --separate-stderr "$SWEEP" --grid deepspeed-0.17 --emit-jobs "$out"
	for rw in read write; do
		# deepspeed/nvme/perf_run_sweep.py DEFAULT_SWEEP_CONFIG (v0.17.1, #7215),
		# each point as deepspeed/nvme/ds_aio_handle.py _create_context makes
		# its handle: aio_handle(block_size, queue_depth, single_submit,
		# not sequential_requests, io_parallel), i.e. overlap_events = not
		# sequential_requests and intra_op_parallelism = io_parallel
		# (csrc/aio/py_lib/py_ds_aio.cpp); 400 MiB (--io_size 400M), one at a time
		want=''
		for bs in 1m 8m; do
			for qd in 32 128; do
				for seq in true false; do
					for single in false true; do
						for p in 1 2 4 8; do
							want+="$rw 400m 1 libaio $bs $qd $([ "$single" = true ] && echo single || echo block)"
							want+=" $([ "$seq" = true ] && echo sequential || echo overlap) $p"$'\n'
						done
					done
				done
			done
		done
		run -0 awk -F= '
			function flush() { if (n) print v["rw"], v["bs"], v["iodepth"], v["tswap_backend"], v["tswap_block_size"],
				v["tswap_queue_depth"], v["tswap_submit"], v["tswap_window"], v["tswap_threads"]; n = 0; delete v }
			/^\[/ { flush(); n = ($0 != "[global]"); next }
			n && NF == 2 { v[$1] = $2 }
			END { flush() }' "$out/deepspeed-0.17-$rw.fio"
		assert_equal "${#lines[@]}" 64
		assert_equal "$(sort <<<"$output")" "$(sort <<<"${want%$'\n'}")"
	done
}

@test "jobs: every job file in jobs/ passes fio --parse-only" {
	local f n=0
	# shellcheck source=/dev/null
	. "$SWEEP_REPO/jobs/env.sh"
	export TSWAP_TARGET=$SCRATCH/parse.swap
	while IFS= read -r -d '' f; do
		n=$((n + 1))
		run --separate-stderr fio --parse-only "$f"
		if [ "$status" -ne 0 ]; then
			fail "fio --parse-only $f failed: ${stderr:-$output}"
		fi
	done < <(find "$SWEEP_REPO/jobs" -name '*.fio' -print0)
	[ "$n" -ge 14 ] || fail "expected at least 14 job files, found $n"
	assert_file_not_exists "$TSWAP_TARGET"
}

@test "jobs: every job file in jobs/ runs in one fio (at most 4088 jobs, which --parse-only does not check)" {
	local f n
	# fio.h REAL_MAX_JOBS 4096 in segments of 8, of which init.c
	# add_thread_segment allocates 511: a 4089th job fails at run time
	while IFS= read -r -d '' f; do
		n=$(grep -c '^\[' "$f")
		if grep -q '^\[global\]' "$f"; then n=$((n - 1)); fi
		[ "$n" -le 4088 ] || fail "$f: $n fio jobs, fio runs at most 4088"
	done < <(find "$SWEEP_REPO/jobs" -name '*.fio' -print0)
	# the 70b profile: a job per run of parameter reads, not per parameter
	assert_equal "$(grep -c '^\[' "$SWEEP_REPO/jobs/zero-infinity-step-70b.fio")" 417
}

@test "jobs: the ZeRO profiles are what make jobs makes" {
	local out=$BATS_TEST_TMPDIR/zero f
	mkdir -p "$out"
	run -0 make -C "$SWEEP_REPO" --no-print-directory jobs-zero ZERO_JOBS="$out" BUILD="$out/build"
	for f in zero-infinity-step-7b.fio zero-infinity-step-70b.fio; do
		run diff "$SWEEP_REPO/jobs/$f" "$out/$f"
		if [ "$status" -ne 0 ]; then
			fail "jobs/$f is stale: run 'make jobs' and commit ($(head -c 400 <<<"$output"))"
		fi
	done
}

@test "jobs: one grid point runs on its own with one fio command" {
	local section=read-libaio-t16m-b1m-q8-block-overlap-p1-d2
	export TSWAP_TARGET=$SCRATCH/one.swap TSWAP_SIZE=32m
	run --separate-stderr timeout -k 10 120 fio --output-format=json --runtime=1 --ramp_time=0 \
		--section="$section" "$SWEEP_REPO/jobs/grid/quick-read.fio"
	if [ "$status" -ne 0 ]; then
		fail "fio --section=$section failed: ${stderr:-}"
	fi
	run jq -r '[(.jobs | length), .jobs[0].jobname, .jobs[0].error, (.jobs[0].read.io_bytes > 0)] | @tsv' <<<"$output"
	assert_output "$(printf '1\t%s\t0\ttrue' "$section")"
}

@test "jobs: each profile documents its workload and environment" {
	local f
	for f in "$SWEEP_REPO"/jobs/*.fio; do
		grep -q '^; Where the numbers come from\|^; Workload' "$f" || fail "$f: no workload/sources header"
		grep -q 'TSWAP_ENGINE' "$f" || fail "$f: TSWAP_ENGINE undocumented"
		if grep -q '^; Generated by `make jobs`' "$f"; then
			# tswap-zero's step profiles: a folder of swap files, not a target
			grep -q 'TSWAP_ZERO_DIR' "$f" || fail "$f: TSWAP_ZERO_DIR undocumented"
			continue
		fi
		grep -q 'TSWAP_TARGET' "$f" || fail "$f: TSWAP_TARGET undocumented"
		if grep -q 'jobs/fastpersist-plan' "$f"; then
			# a checkpoint file's writes: sized by its plan, not TSWAP_SIZE
			grep -q 'TSWAP_FP_' "$f" || fail "$f: TSWAP_FP_* undocumented"
			continue
		fi
		grep -q 'TSWAP_SIZE' "$f" || fail "$f: TSWAP_SIZE undocumented"
	done
}

# --- the sweep ----------------------------------------------------------------

@test "sweep: usage errors exit 2" {
	sweep --no-such-option
	assert_equal "$status" 2
	sweep --grid no-such-grid
	assert_equal "$status" 2
	sweep --rw sideways --dry-run
	assert_equal "$status" 2
	sweep --min-read-gbs fast --dry-run
	assert_equal "$status" 2
	sweep --help
	assert_success
	assert_output --partial 'Exit codes'
}

@test "sweep: --dry-run runs nothing and prints the job files (user grid file)" {
	local grid="$SCRATCH/my grid.grid" target="$SCRATCH/dry.swap"
	cat >"$grid" <<-'EOF'
		# two blocks x two queue depths, reads only
		rw      read
		block   1m 2m
		qd      4 16
		tensor  8m
	EOF
	sweep_ok --dry-run --grid "$grid" --target "$target" --out "$SCRATCH/dryrun" --size 32m
	assert_file_not_exists "$target"
	assert_file_not_exists "$SCRATCH/dryrun"
	# 4 grid points + the read ceiling, each a complete job file
	assert_equal "$(grep -c '^\[global\]' <<<"$output")" 5
	assert_equal "$(grep -cF 'ioengine=external:${TSWAP_ENGINE}' <<<"$output")" 4
	assert_equal "$(grep -c '^ioengine=libaio' <<<"$output")" 1
	assert_output --partial 'tswap_block_size=2m'
	assert_output --partial 'tswap_queue_depth=16'
	assert_output --partial 'dry run'
	# nothing ran: no fio, no prepare
	local f
	for f in "$SCRATCH"/* "$SCRATCH"/.[!.]*; do
		[ -e "$f" ] || continue
		[ "$f" = "$grid" ] || fail "dry run created $f"
	done
}

@test "sweep: quick sweep end to end on a small file whose path has spaces and shell metacharacters" {
	local dir="$SCRATCH/a dir; with \$(echo x) & 'quotes'" rd
	mkdir -p "$dir"
	rd="$dir/run 1"
	sweep_ok --grid quick "${SMALL[@]}" --target "$dir/swap file.swap" --out "$rd"
	# the page cache is left alone (no note, no mark), and report.md says
	# what keeps the reads off it
	! grep -q 'drop_caches\|not root' <<<"$stderr" || fail "a note about the page cache: $stderr"
	assert_file_not_exists "$rd/cache-dropped"
	grep -qF -- "$PAGE_CACHE_LINE" "$rd/report.md" || fail "report.md does not say how reads avoid the page cache"
	# progress: one line per run (8 points + 2 ceilings), index/total, ETA,
	# result, on stderr (stdout: the results)
	assert_equal "$(grep -cE '^\[ ?([1-9]|10)/10\] .*GB/s.*\(eta [0-9]+:[0-9]{2}\)$' <<<"$stderr")" 10
	assert_equal "$(grep -cE '^\[ ?([1-9]|10)/10\]' <<<"$output")" 0
	assert_file_exists "$dir/swap file.swap"
	# one CSV row per grid point (quick: 2 directions x 2 blocks x 2 queue depths)
	assert_file_exists "$rd/summary.csv"
	assert_equal "$(csv_rows "$rd/summary.csv")" 8
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c '"ok"')" 8
	head -n 1 "$rd/summary.csv" | grep -q '^point,repeat,status,direction,backend,tensor_size,block_size,queue_depth,submit,window,threads,iodepth,gbs,ops_per_s,clat_p50_us,clat_p99_us,clat_p999_us,usr_cpu_pct,sys_cpu_pct,io_submit_per_gb,pct_of_ceiling,error$' ||
		fail "unexpected CSV header: $(head -n 1 "$rd/summary.csv")"
	# best-aio.json: DeepSpeed's aio keys with JSON types a ds_config takes
	run jq -e '.aio
		| (keys == (["block_size", "queue_depth", "intra_op_parallelism", "single_submit", "overlap_events", "use_gds"] | sort))
		  and (.block_size | type == "number" and . == floor and . > 0)
		  and (.queue_depth | type == "number" and . == floor and . > 0)
		  and (.intra_op_parallelism | type == "number" and . == floor and . > 0)
		  and (.single_submit | type == "boolean")
		  and (.overlap_events | type == "boolean")
		  and (.use_gds == false)' "$rd/best-aio.json"
	assert_success
	# plots are real PNGs
	local png n=0
	for png in "$rd"/plots/*.png; do
		[ -f "$png" ] || continue
		n=$((n + 1))
		[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
	done
	[ "$n" -ge 3 ] || fail "expected heat maps for read and write and a bar chart, got $n PNGs"
	assert_file_exists "$rd/plots/heat-read-overlap-block.png"
	assert_file_exists "$rd/plots/best-by-threads.png"
	# the report names the best points and the ceiling, and links every plot
	assert_file_exists "$rd/report.md"
	[ "$(grep -c '^!\[.*\](plots/.*\.png)$' "$rd/report.md")" -eq "$n" ] || fail "report.md does not link the $n plots"
	# (under load every point of a direction can be flagged, above a
	# ceiling measured busy say: then the report says it has no best)
	local d
	for d in read write; do
		if jq -e --arg d "$d" '[.points[] | select(.rw == $d)] | length > 0 and all(.[]; .trusted != true)' "$rd/aggregate.json" >/dev/null; then
			grep -q "^| best $d | no trustworthy $d point" "$rd/report.md" || fail "report.md does not say why there is no best $d"
		else
			grep -q "^| best $d | [0-9]" "$rd/report.md" || fail "report.md has no best $d"
		fi
	done
	# a combined best needs one setting trusted in both directions, which
	# flags under load can leave none of: the row says which, as
	# aggregate.json has it
	if jq -e '.best.combined' "$rd/aggregate.json" >/dev/null; then
		grep -q "^| best combined | [0-9]" "$rd/report.md" || fail "report.md has no best combined"
	else
		grep -q "^| best combined | needs a read and a write" "$rd/report.md" || fail "report.md does not say why there is no best combined"
	fi
	grep -q 'device ceiling.*read [0-9.]* GB/s, write [0-9.]* GB/s' "$rd/report.md" || fail "report.md has no ceiling"
	# the first write into the new file is preparation, not a repeat
	# (docs/sweep.md, What a run does): one run in ceiling-prep/, a note,
	# and the write ceiling's one repeat in results.json
	run -0 jq -e '[.[] | select(.point | startswith("ceiling-write-"))] | length == 1' "$rd/results.json"
	run -0 jq -e '.status == "ok"' "$rd"/ceiling-prep/ceiling-write-*.prep/result.json
	grep -q '^- note: the first write into the new target file ran before the write ceiling as preparation, not a repeat: [0-9.]* GB/s' \
		"$rd/report.md" || fail "report.md does not note the ceiling's preparation"
	# each point kept its job file, fio JSON, stderr and the engine's stats
	local p
	for p in "$rd"/points/read-*.r1 "$rd"/points/write-*.r1; do
		assert_file_exists "$p/job.fio"
		assert_file_exists "$p/fio.stderr"
		jq -e '.jobs[0].error == 0' "$p/fio.json" >/dev/null || fail "$p/fio.json: not fio JSON without error"
		jq -e '.submit_calls > 0' "$p/stats.json" >/dev/null || fail "$p/stats.json: no engine stats"
	done
	# --compare against itself: every ratio is 1
	sweep_ok --resume "$rd" --compare "$rd"
	assert_file_exists "$rd/compare.md"
	assert_equal "$(grep -c '| 1 |$' "$rd/compare.md")" 8
}

@test "sweep: with 3 repeats the report opens with the pick and one verdict, or says no point is trustworthy (exit 4)" {
	local rd=$SCRATCH/pick
	sweep --grid quick --rw read --size 32m --tensor-size 4m --io-size 8m --repeat 3 \
		--target "$SCRATCH/p.swap" --out "$rd"
	# on a loaded machine every point may be flagged: then exit 4 and no aio
	# block; otherwise exit 0 and a pick from an unflagged point
	case $status in
	0)
		assert_equal "$(sed -n 3p "$rd/report.md" | cut -c1-30)" '**Pick** (best-aio.json): liba'
		# one verdict: the pick won outside the noise, or it is the cheapest
		# of a tie (with no margin), never both
		sed -n 4p "$rd/report.md" | grep -qE '^- verdict: read-[^ ]+( is the best: [0-9.]+% above the runner-up read-[^ ]+, outside the noise|(, read-[^ ]+)*( and read-[^ ]+)? tie within noise.*; read-[^ ]+ (is the cheapest of|is picked: read-[^ ]+ (is|and .* are) cheaper, but)| is the only trustworthy point| leads the runner-up)' ||
			fail "line 4 of report.md: $(sed -n 4p "$rd/report.md")"
		if sed -n 4p "$rd/report.md" | grep -q 'tie within noise'; then
			sed -n 4p "$rd/report.md" | grep -qv '% above' || fail "a tie with a margin: $(sed -n 4p "$rd/report.md")"
		fi
		# the same sentence on stdout and in best-aio.json
		assert_output --partial "(best-aio.json): $(jq -r .reason "$rd/best-aio.json")"
		assert_equal "- verdict: $(jq -r .reason "$rd/best-aio.json")" "$(sed -n 4p "$rd/report.md")"
		jq -e '.best.aio_source.point as $p | .points[] | select(.point == $p) | .trusted and .ok_runs == 3 and .lo <= .gbs and .gbs <= .hi' \
			"$rd/aggregate.json" >/dev/null || fail "the pick is not an unflagged point with an interval"
		jq -e '.aio.queue_depth > 0' "$rd/best-aio.json" >/dev/null || fail "no aio block"
		assert_output --partial 'pick:       read-'
		;;
	4)
		grep -q '^\*\*No trustworthy pick\*\*' "$rd/report.md" || fail "report.md does not say there is no pick"
		# and why, with what to do, in one line
		grep -qE '^- best read: none: all [0-9]+ read points with a result are flagged \([^)]+\): ' "$rd/report.md" ||
			fail "report.md does not say why there is no read pick"
		jq -e 'has("aio") | not' "$rd/best-aio.json" >/dev/null || fail "best-aio.json has an aio block"
		jq -e '[.points[] | select(.gbs != null) | .flags | length > 0] | all' "$rd/aggregate.json" >/dev/null ||
			fail "exit 4 with an unflagged point"
		;;
	*)
		show_sweep
		fail "exit $status"
		;;
	esac
}

@test "sweep: thresholds give exit 1 when missed, 0 when met" {
	local rd=$SCRATCH/thr
	sweep_ok --grid quick --rw read --no-ceiling "${SMALL[@]}" --target "$SCRATCH/t.swap" --out "$rd"
	# --resume of a finished run reruns nothing and re-judges
	sweep --resume "$rd" --min-read-gbs 100000
	assert_equal "$status" 1
	assert_output --partial 'FAIL: best read'
	grep -q 'FAIL: best read' "$rd/report.md" || fail "threshold not in report.md"
	sweep --resume "$rd" --min-read-gbs 0.000001
	assert_equal "$status" 0
	assert_output --partial 'PASS: best read'
	# no write point at all: a write threshold cannot be met
	sweep --resume "$rd" --min-write-gbs 0.000001
	assert_equal "$status" 1
}

@test "sweep: a failing point is recorded as an error, the sweep goes on, exit 3" {
	[ -f "$SWEEP_REPO/build/tswap-wrongver.so" ] ||
		skip "requires build/tswap-wrongver.so (make build/tswap-wrongver.so)"
	local rd=$SCRATCH/err
	sweep --grid quick --rw read "${SMALL[@]}" --target "$SCRATCH/e.swap" --out "$rd" \
		--engine "$SWEEP_REPO/build/tswap-wrongver.so"
	assert_equal "$status" 3
	assert_equal "$(csv_rows "$rd/summary.csv")" 4
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c '"error"')" 4
	grep -q 'ERROR' <<<"$stderr" || fail "no ERROR in the progress lines: $stderr"
	# the ceiling (fio's own engine) still ran
	grep -q 'device ceiling.*read [0-9.]* GB/s' "$rd/report.md" || fail "no ceiling in report.md"
	grep -q 'error' "$rd/report.md"
}

@test "sweep: kill mid-sweep, then --resume finishes without rerunning finished points" {
	local rd=$SCRATCH/kill pid i done_before f
	"$SWEEP" --grid quick --rw read,write --no-ceiling --size 32m --tensor-size 4m \
		--runtime 1 --ramp 0 --repeat 1 --target "$SCRATCH/k.swap" --out "$rd" \
		>"$SCRATCH/kill.log" 2>&1 3>&- &
	pid=$!
	# wait for two finished points, then stop the sweep mid-point
	for ((i = 0; i < 200; i++)); do
		done_before=$(find "$rd/points" -mindepth 2 -maxdepth 2 -name result.json 2>/dev/null | wc -l)
		[ "$done_before" -ge 2 ] && break
		sleep 0.1
	done
	[ "$done_before" -ge 2 ] || { kill "$pid"; fail "no point finished in 20 s"; }
	sleep 0.3
	kill -TERM "$pid"
	wait "$pid" || st=$?
	assert_equal "$st" 143 # 128 + SIGTERM
	grep -q 'interrupted' "$SCRATCH/kill.log" || fail "no interrupt message: $(cat "$SCRATCH/kill.log")"
	# no half-written point is left
	[ -z "$(find "$rd/points" -maxdepth 1 -name '.tmp-*')" ] || fail "temporary point directory left behind"
	mapfile -t finished < <(find "$rd/points" -mindepth 2 -maxdepth 2 -name result.json | sort)
	[ "${#finished[@]}" -ge 2 ] && [ "${#finished[@]}" -lt 8 ] ||
		fail "expected 2..7 finished points, got ${#finished[@]}"
	for f in "${finished[@]}"; do
		cp -p "$f" "$f.before"
	done
	sweep_ok --resume "$rd"
	assert_equal "$(grep -c 'done earlier' <<<"$stderr")" "${#finished[@]}"
	for f in "${finished[@]}"; do
		cmp -s "$f" "$f.before" || fail "$f was rerun"
	done
	assert_equal "$(csv_rows "$rd/summary.csv")" 8
	assert_equal "$(tail -n +2 "$rd/summary.csv" | grep -c '"ok"')" 8
}

@test "sweep: a block device is refused for writes without --destructive, and with a signature unless --force" {
	requires loopdev
	command -v mkfs.ext4 >/dev/null || skip "requires mkfs.ext4 (e2fsprogs)"
	loop_setup 64
	# writes without --destructive: refused before anything runs
	sweep --target "$LOOPDEV" --grid quick "${SMALL[@]}" --out "$SCRATCH/bd1"
	assert_equal "$status" 2
	grep -q -- '--destructive' <<<"$stderr" || fail "no --destructive in: $stderr"
	assert_file_not_exists "$SCRATCH/bd1"
	# reads only: allowed (dry run here)
	sweep --target "$LOOPDEV" --grid quick --rw read "${SMALL[@]}" --dry-run
	assert_success
	# a filesystem signature: refused even with --destructive, unless --force
	mkfs.ext4 -q -F "$LOOPDEV"
	sweep --target "$LOOPDEV" --grid quick "${SMALL[@]}" --destructive --dry-run
	assert_equal "$status" 2
	grep -q 'signature' <<<"$stderr" || fail "no signature in: $stderr"
	sweep --target "$LOOPDEV" --grid quick "${SMALL[@]}" --destructive --force --dry-run
	assert_success
	# a blank device with --destructive: runs
	wipefs -q -a "$LOOPDEV"
	sweep_ok --target "$LOOPDEV" --grid quick --rw write --no-ceiling "${SMALL[@]}" \
		--destructive --out "$SCRATCH/bd2"
	assert_equal "$(csv_rows "$SCRATCH/bd2/summary.csv")" 4
}

@test "sweep: read points leave the page cache alone: root writes no drop_caches (strace), no mark" {
	local rd=$SCRATCH/run log=$SCRATCH/open.strace
	requires root strace
	# as root the sweep dropped the whole host's page cache before each
	# read point; every read is O_DIRECT and fio invalidates the target's
	# pages before each job (invalidate=1), so now nothing drops it
	run --separate-stderr timeout -k 10 300 strace -f -qq -e signal=none -e trace=open,openat -o "$log" \
		"$SWEEP" --grid quick --rw read --no-ceiling "${SMALL[@]}" --target "$SCRATCH/dc.swap" --out "$rd"
	if [ "$status" -ne 0 ]; then
		show_sweep
		fail "sweep under strace failed (exit $status)"
	fi
	# the trace saw the sweep's own opens (each point's job file)
	assert_equal "$(grep -c 'openat(.*/points/\.tmp-[^/]*/job\.fio", O_WRONLY|O_CREAT|O_TRUNC' "$log")" 4
	if grep 'drop_caches' "$log"; then
		fail "the sweep opened /proc/sys/vm/drop_caches"
	fi
	assert_file_not_exists "$rd/cache-dropped"
	! grep -q 'drop_caches\|not root' <<<"$stderr" || fail "a note about the page cache: $stderr"
	grep -qF -- "$PAGE_CACHE_LINE" "$rd/report.md" || fail "report.md does not say how reads avoid the page cache"
}

@test "sweep: without root the page cache is not mentioned in a note, and the report says the same as root's" {
	local dir rd
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null || skip "requires setpriv (util-linux) to drop root"
		mkdir -p "$SWEEP_REPO/build/test-scratch"
		dir=$(mktemp -d "$SWEEP_REPO/build/test-scratch/nonroot.XXXXXX")
		EXTRA_CLEANUP+=("$dir")
		chmod 0777 "$dir"
		setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$SWEEP_ENGINE" ||
			skip "uid 65534 cannot read $SWEEP_ENGINE"
		rd="$dir/run"
		run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
			env TSWAP_ENGINE="$SWEEP_ENGINE" "$SWEEP" --grid quick --rw read --no-ceiling \
			"${SMALL[@]}" --target "$dir/nr.swap" --out "$rd"
	else
		rd="$SCRATCH/run"
		sweep --grid quick --rw read --no-ceiling "${SMALL[@]}" --target "$SCRATCH/nr.swap" --out "$rd"
	fi
	if [ "$status" -ne 0 ]; then
		show_sweep
		fail "non-root sweep failed"
	fi
	! grep -q 'drop_caches\|not root' <<<"$stderr" || fail "a note about the page cache: $stderr"
	! grep -q 'not root' "$rd/report.md" || fail "report.md has a not-root note"
	grep -qF -- "$PAGE_CACHE_LINE" "$rd/report.md" || fail "report.md does not say how reads avoid the page cache"
}

@test "sweep: runs without jq, setsid, setpriv and flock; without fio it refuses, exit 3" {
	local rd=$SCRATCH/notools
	(
		hide_tools jq setsid setpriv flock
		sweep_ok --dry-run --grid quick --rw read --no-ceiling "${SMALL[@]}" \
			--target "$SCRATCH/nt.swap" --out "$rd"
		assert_output --partial 'dry run'
		assert_file_not_exists "$rd"
		sweep_ok --grid quick --rw read --no-ceiling "${SMALL[@]}" --target "$SCRATCH/nt.swap" --out "$rd"
	)
	assert_equal "$(csv_rows "$rd/summary.csv")" "$(jq '.points | length' "$rd/plan.json")"
	run -0 jq -r '[.[].status] | unique | join(" ")' "$rd/results.json"
	assert_output ok
	assert_file_exists "$rd/best-aio.json"
	# fio is what the sweep runs: without it, the one-line refusal
	(
		hide_tools fio
		sweep --grid quick --rw read --no-ceiling "${SMALL[@]}" --target "$SCRATCH/nt2.swap" \
			--out "$SCRATCH/nofio"
		assert_equal "$status" 3
		assert_equal "$stderr" 'tswap-sweep: fio is not installed (make deps)'
		assert_file_not_exists "$SCRATCH/nofio"
	)
}
