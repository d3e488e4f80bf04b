#!/usr/bin/env bats
# tests/zero.bats - sweep/tswap-zero running a step: a tiny real replay
# whose fio byte counts equal the plan, --no-ceiling, SIGINT, --version,
# and bad or hostile inputs, targets and --out (one line, exit 2, nothing
# of the user's touched). The plan itself is tests/zero-plan.bats. Small
# sizes: well under a minute.

bats_require_minimum_version 1.5.0
load helpers
load zero
load shots

@test "zero: a tiny real step moves exactly the plan's bytes (fio io_bytes)" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/ds.json
	# 48 Mi params in 2^23-element tensors: every tensor a multiple of 4096 B,
	# so the replay has no DIO round-up and fio's bytes are DeepSpeed's.
	cfg "$c" 8388608 true nvme
	jq '.zero_optimization.offload_param.max_in_cpu = 8388608' "$c" >"$c.2" && mv "$c.2" "$c"
	run --separate-stderr timeout 300 "$ZERO" --ds-config "$c" --params 50331648 --param-numel 8388608 \
		--ranks 2 --target "$SCRATCH/t" --out "$OUT" --steps 1
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_output --regexp 'base step 1: forward [0-9.]+ s, backward [0-9.]+ s, optimizer [0-9.]+ s; total [0-9.]+ s'
	read -r want_r want_w _ < <(plan_numbers "$OUT/plan.json")
	assert_equal "$want_r $want_w" "$(hand 50331648 2 2 8388608 8388608 8388608 1 | cut -d' ' -f1,2)"
	assert_equal "$(jq '[.jobs[].read.io_bytes] | add' "$OUT/base-step1.fio.json")" "$want_r"
	assert_equal "$(jq '[.jobs[].write.io_bytes] | add' "$OUT/base-step1.fio.json")" "$want_w"
	# the device ceiling: fio's libaio, one job per rank and direction, in
	# the run folder on the rank's target; the step and every phase held
	# against it (stage bound: max(read / read ceiling, write / write ceiling))
	assert_output --regexp 'device ceiling \(fio libaio, 2 jobs, 1m sequential, iodepth 64, 2 s each\): read [0-9.]+ GB/s, write [0-9.]+ GB/s'
	assert_output --regexp 'base step 1 against the device ceiling: forward [0-9.]+ of [0-9.]+ GB/s \([0-9]+%\), backward .*; step [0-9.]+ of [0-9.]+ GB/s \([0-9]+%\)'
	assert_equal "$(jq -r '."global options".ioengine' "$OUT/ceiling.fio.json")" libaio
	assert_equal "$(jq -c '[.jobs[] | [.jobname, .groupid]]' "$OUT/ceiling.fio.json")" \
		'[["ceiling.write.r0",0],["ceiling.write.r1",0],["ceiling.read.r0",1],["ceiling.read.r1",1]]'
	run grep -c "^filename=$SCRATCH/t/tswap-zero-[^/]*/ceiling.r[01].swp\$" "$OUT/ceiling.fio"
	assert_output 4
	run -0 jq -e '.read_gbs > 0 and .write_gbs > 0 and .jobs_per_direction == 2' "$OUT/ceiling.json"
	# shellcheck disable=SC2016 # $NAME in single quotes: jq's
	run -0 jq -e --slurpfile c "$OUT/ceiling.json" '.[0] as $s | $s.ceiling == $c[0]
		and ($s.phases | map(.phase)) == ["forward", "backward", "optimizer"]
		and all($s, $s.phases[]; .pct_of_ceiling > 0 and .ceiling_gbs > 0 and .gbs > 0)
		and ($s.phases[0] | (.ceiling_seconds - .read / ($c[0].read_gbs * 1e9)) | fabs) < 1e-9
		and (($s.phases | map(.ceiling_seconds) | add) - $s.ceiling_seconds | fabs) < 1e-9
		and ($s.pct_of_ceiling - $s.ceiling_seconds / $s.seconds * 100 | fabs) < 1e-6' "$OUT/base-steps.json"
	# the swap files it created are gone, the target folder stays
	assert_dir_exists "$SCRATCH/t"
	run find "$SCRATCH/t" -mindepth 1
	assert_output ""
}

@test "zero: --no-ceiling runs the step without the device ceiling" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/ds.json
	tiny_cfg "$c"
	run --separate-stderr timeout 300 "$ZERO" --ds-config "$c" "${TINY[@]}" --scale 8 --no-ceiling \
		--target "$SCRATCH/t" --out "$OUT"
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_output --partial 'base step 1: forward'
	refute_output --partial 'ceiling'
	assert_not_exists "$OUT/ceiling.fio"
	assert_not_exists "$OUT/ceiling.json"
	run -0 jq -e '.[0] | .ceiling == null and .gbs > 0 and (has("pct_of_ceiling") | not)' "$OUT/base-steps.json"
}

@test "zero: --aio replays the step again with that aio block; the ceiling is as deep as its handles (threads x queue depth x block)" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/ds.json a=$BATS_TEST_TMPDIR/best-aio.json
	tiny_cfg "$c"
	# 3 threads x 16 x 4 MiB = 192 MiB in flight per handle (DeepSpeed's
	# defaults, 1 x 8 x 1 MiB, need the least iodepth: 64)
	printf '%s\n' '{"aio": {"block_size": 4194304, "queue_depth": 16, "intra_op_parallelism": 3,
		"single_submit": false, "overlap_events": true}}' >"$a"
	run --separate-stderr timeout 300 "$ZERO" --ds-config "$c" "${TINY[@]}" --scale 8 --aio "$a" \
		--target "$SCRATCH/t" --out "$OUT"
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_output --regexp 'device ceiling \(fio libaio, 2 jobs, 1m sequential, iodepth 192, 2 s each\)'
	assert_output --regexp 'with --aio: [0-9.]+ s per step against [0-9.]+ s: -?[0-9.]+ s saved per step'
	run -0 grep -c '^iodepth=192$' "$OUT/ceiling.fio"
	# the region: twice the queue's 192 MiB
	run -0 grep -c '^size=402653184$' "$OUT/ceiling.fio"
	assert_equal "$(jq .iodepth "$OUT/ceiling.json")" 192
	run -0 grep -c -e '^tswap_block_size=4194304$' -e '^tswap_queue_depth=16$' -e '^tswap_threads=3$' "$OUT/step.aio.fio"
	[ "$output" -ge 3 ]
	run -0 jq -e '.[0].gbs > 0 and .[0].ceiling.iodepth == 192' "$OUT/aio-steps.json"
}

@test "zero: bad inputs get one line on stderr and exit 2" {
	local c=$BATS_TEST_TMPDIR/c.json
	check() { # check TEXT ARGS...
		local text=$1; shift
		run --separate-stderr "$ZERO" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		assert_equal "$output" ""
		[[ $stderr == *"$text"* ]] || { echo "stderr: $stderr"; return 1; }
	}
	echo 'not json {' >"$c"
	check "not a JSON object" --ds-config "$c"
	jq '.zero_optimization.stage = 2' "$EXAMPLE" >"$c"
	check "stage=2" --ds-config "$c"
	jq '.optimizer.type = "SGD"' "$EXAMPLE" >"$c"
	check "optimizer.type=SGD" --ds-config "$c"
	jq 'del(.zero_optimization.offload_optimizer.nvme_path)' "$EXAMPLE" >"$c"
	check "nvme_path is missing" --ds-config "$c"
	check "--params=0" --ds-config "$EXAMPLE" --params 0
	check "--ds-config" --ds-config "$BATS_TEST_TMPDIR/nonexistent.json"
}

@test "zero: a target that is a file is refused and left as it was" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	printf 'keep me' >"$SCRATCH/userfile"
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 50e6 --ranks 1 \
		--target "$SCRATCH/userfile" --out "$OUT"
	assert_failure 2
	[[ $stderr == *"not a directory"* ]]
	assert_equal "$(cat "$SCRATCH/userfile")" "keep me"
}

# tiny_cfg FILE: the 48 Mi-parameter plan of the real-step test (about 0.9 GB
# of swap files over 2 ranks).
tiny_cfg() {
	cfg "$1" 8388608 true nvme
	jq '.zero_optimization.offload_param.max_in_cpu = 8388608' "$1" >"$1.2" && mv "$1.2" "$1"
}
TINY=(--params 50331648 --param-numel 8388608 --ranks 2)

@test "zero: hostile options: one line naming the option and the rule, exit 2, nothing created" {
	local c=$BATS_TEST_TMPDIR/c.json
	hostile() { # hostile TEXT ARGS...
		local text=$1; shift
		run --separate-stderr timeout 60 "$ZERO" --ds-config "$EXAMPLE" --dry-run --out "$OUT/h" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == *"$text"* ]] || { echo "stderr: $stderr"; return 1; }
	}
	hostile "--ranks=100000: must be at most 1024" --params 1.3e9 --ranks 100000 --target "$SCRATCH"
	hostile "at most 50000 (raise --param-numel)" --params 1e15 --ranks 8 --target "$SCRATCH"
	hostile "--params=1e30" --params 1e30 --ranks 2 --target "$SCRATCH"
	hostile "--params=0x10: not a number" --params 0x10 --ranks 2 --target "$SCRATCH"
	hostile "--world=1: smaller than --ranks=2" --params 1.3e9 --ranks 2 --world 1 --target "$SCRATCH"
	hostile "--scale=0: must be at least 1" --params 1.3e9 --ranks 2 --scale 0 --target "$SCRATCH"
	mkfifo "$SCRATCH/fifo"
	hostile "--target $SCRATCH/fifo: not a directory" --params 1.3e9 --ranks 2 --target "$SCRATCH/fifo"
	hostile "not a directory" --params 1.3e9 --ranks 2 --target /dev/null
	# shellcheck disable=SC2016
	hostile "'\${' cannot be used" --params 1.3e9 --ranks 2 --target "$SCRATCH/\${HOME}"
	hostile "a control character" --params 1.3e9 --ranks 2 --target "$SCRATCH/a"$'\n'"b"
	assert [ -p "$SCRATCH/fifo" ]
	assert [ -c /dev/null ]
	assert_not_exists "$OUT/h"
	# --emit-jobs never replaces a symlink, FIFO or device
	ln -s "$SCRATCH/keep.txt" "$SCRATCH/link.fio"
	echo keep >"$SCRATCH/keep.txt"
	hostile "--emit-jobs $SCRATCH/link.fio: exists and is not a regular file" --params 1.3e9 --ranks 2 --emit-jobs "$SCRATCH/link.fio"
	hostile "--emit-jobs $SCRATCH/fifo: exists and is not a regular file" --params 1.3e9 --ranks 2 --emit-jobs "$SCRATCH/fifo"
	assert [ -L "$SCRATCH/link.fio" ]
	assert_equal "$(cat "$SCRATCH/keep.txt")" keep
}

@test "zero: --out must be new or empty: a user's folder or file is never written to, two runs never share one" {
	mkdir -p "$OUT/full"
	echo mine >"$OUT/full/plan.json"
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/full"
	assert_failure 2
	[[ $stderr == *"--out $OUT/full: not empty"* ]]
	assert_equal "$(cat "$OUT/full/plan.json")" mine
	assert_equal "$(find "$OUT/full" -mindepth 1 | wc -l)" 1
	echo mine >"$OUT/file"
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/file"
	assert_failure 2
	[[ $stderr == *"--out $OUT/file: not a directory"* ]]
	assert_equal "$(cat "$OUT/file")" mine
	# an empty folder is fine; a second run on it (at once or later) is refused
	mkdir -p "$OUT/empty"
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/empty"
	assert_success
	local before
	before=$(md5sum "$OUT/empty/plan.json")
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.5e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/empty"
	assert_failure 2
	assert_equal "$(md5sum "$OUT/empty/plan.json")" "$before"
}

@test "zero: room is checked per file system (two targets on one are summed); a read-only target is named as such" {
	local c=$BATS_TEST_TMPDIR/ds.json
	tiny_cfg "$c"
	# each rank lays out about 436 MB: one target fits 600 MB, two on it do not
	mount_scratch "$SCRATCH/small" tmpfs size=600m
	run --separate-stderr "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/small/a,$SCRATCH/small/b" --out "$OUT/r"
	assert_failure 2
	assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
	[[ $stderr == *"free on its file system"* ]] || { echo "$stderr"; return 1; }
	run find "$SCRATCH/small" -name 'tswap-zero-*'
	assert_output ""
	mount_scratch "$SCRATCH/ro" tmpfs ro,size=2g
	run --separate-stderr "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/ro" --out "$OUT/ro"
	assert_failure 2
	[[ $stderr == *"(read-only or no permission)"* ]] || { echo "$stderr"; return 1; }
}

@test "zero: a target whose parent is missing is refused, nothing created; a small read-only file system is named read-only, not full" {
	local c=$BATS_TEST_TMPDIR/ds.json
	tiny_cfg "$c"
	run --separate-stderr "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/a/missing/deeper" --out "$OUT/m"
	assert_failure 2
	assert_equal "$stderr" "tswap-zero: --target $SCRATCH/a/missing/deeper: its parent directory $SCRATCH/a/missing does not exist (tswap-zero creates only the target folder)"
	assert_file_not_exist "$SCRATCH/a"
	# refused before --out holds a plan
	assert_file_not_exist "$OUT/m"
	# a folder past the ranks would get none: said, not left unused
	mkdir "$SCRATCH/t1" "$SCRATCH/t2"
	run --separate-stderr "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/t1,$SCRATCH/t2,$SCRATCH/t3" --out "$OUT/r"
	assert_failure 2
	[[ $stderr == *"--target: 3 folders for "*" rank(s): ranks go round-robin over them, so $SCRATCH/t"*" would get none"* ]] || { echo "$stderr"; return 1; }
	assert_file_not_exist "$OUT/r"
	# 64 MiB: far less than the swap files; read-only is what refuses it
	mount_scratch "$SCRATCH/ro64" tmpfs ro,size=64m
	run --separate-stderr "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/ro64" --out "$OUT/ro"
	assert_failure 2
	assert_equal "$stderr" "tswap-zero: --target $SCRATCH/ro64: cannot write into it (read-only or no permission)"
}

@test "zero: SIGINT during a run stops fio, removes the swap files, exits 130" {
	local c=$BATS_TEST_TMPDIR/ds.json pid fpid i
	tiny_cfg "$c"
	# env --default-signal: a background job of a script starts with SIGINT
	# ignored; a terminal's Ctrl-C reaches a foreground tswap-zero.
	env --default-signal=INT "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/t" --out "$OUT" \
		--steps 200 >"$BATS_TEST_TMPDIR/log" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		# fio: tswap-zero's child (tswap/cli/zero_fio.py)
		fpid=$(pgrep -P "$pid,$(pgrep -d, -P "$pid")" -x fio) && break
		sleep 0.1
	done
	[ -n "$fpid" ] || { kill "$pid"; fail "fio never started"; }
	sleep 0.5
	kill -INT "$pid"
	local rc=0
	timeout 60 tail --pid="$pid" -f /dev/null || rc=$?
	wait "$pid" || rc=$?
	assert_equal "$rc" 130
	run ps -p "$fpid"
	assert_failure
	run find "$SCRATCH/t" -mindepth 1
	assert_output ""
	run cat "$BATS_TEST_TMPDIR/err"
	assert_output --partial "interrupted (SIGINT)"
}

@test "zero: SIGKILL of tswap-zero during a run: its fio dies with it" {
	local c=$BATS_TEST_TMPDIR/ds.json pid fpid start i
	tiny_cfg "$c"
	"$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/t" --out "$OUT" --steps 200 \
		>"$BATS_TEST_TMPDIR/log" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		fpid=$(pgrep -P "$pid" -x fio) && break
		sleep 0.1
	done
	[ -n "$fpid" ] || { kill "$pid"; fail "fio never started"; }
	# fio's start time: its pid is not taken for another process's
	start=$(awk '{ print $22 }' "/proc/$fpid/stat")
	kill -KILL "$pid"
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 137
	# fio dies with it (PR_SET_PDEATHSIG), its job threads with it
	for ((i = 0; i < 300; i++)); do
		[ "$(awk '{ print $3 == "Z" ? "" : $22 }' "/proc/$fpid/stat" 2>/dev/null)" = "$start" ] || break
		sleep 0.1
	done
	[ "$(awk '{ print $3 == "Z" ? "" : $22 }' "/proc/$fpid/stat" 2>/dev/null)" != "$start" ] ||
		{ kill -KILL "$fpid"; fail "fio (pid $fpid) outlived tswap-zero by 30 s"; }
}

@test "zero: --version is tswap-sweep's shape (tswap version and commit, engine, fio); exit 0" {
	run -0 --separate-stderr "$ZERO" --version
	assert_line --index 0 --regexp "^tswap-zero \(tswap\) $(sed -n 's/^TSWAP_VERSION := //p' "$REPO/Makefile")( \(commit [0-9a-z.-]+\))?$"
	assert_line --index 1 --partial "engine: $(cd "$(dirname "$ENGINE")" && pwd)/$(basename "$ENGINE")"
	assert_line --index 2 "fio: $(fio --version)"
	assert_equal "$stderr" ""
	# the first line has tswap-sweep's shape
	assert_equal "${lines[0]#tswap-zero }" "$("$REPO/sweep/tswap-sweep" --version | sed -n '1s/^tswap-sweep //p')"
}

@test "zero: hostile aio values, targets, --aio files and a symlinked entry: one line, exit 2, or the plan" {
	local c=$BATS_TEST_TMPDIR/c.json
	hostile() { # hostile TEXT ARGS...
		local text=$1
		shift
		run --separate-stderr timeout 60 "$ZERO" --params 1.3e9 --ranks 2 --dry-run --out "$OUT/h" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == *"$text"* ]] || { echo "stderr: $stderr"; return 1; }
		assert_not_exists "$OUT/h"
	}
	# the engine's limits, in the dry run (engine/options.c, plan.h, backend.h)
	jq '.aio.queue_depth = 1e12' "$EXAMPLE" >"$c"
	hostile 'aio.queue_depth = 1000000000000: out of the engine'"'"'s range (tswap_queue_depth: 1 to 2147483647' --ds-config "$c" --target "$SCRATCH"
	jq '.aio.intra_op_parallelism = 4096' "$EXAMPLE" >"$c"
	hostile 'aio.intra_op_parallelism = 4096: out of the engine'"'"'s range (tswap_threads: 1 to 1024' --ds-config "$c" --target "$SCRATCH"
	jq '.aio.block_size = 1000' "$EXAMPLE" >"$c"
	hostile 'aio.block_size = 1000: out of the engine'"'"'s range (tswap_block_size: a multiple of 512 bytes' --ds-config "$c" --target "$SCRATCH"
	# one folder named twice
	mkdir -p "$SCRATCH/zt"
	hostile "--target $SCRATCH/zt/.: the same folder as $SCRATCH/zt" --ds-config "$EXAMPLE" --target "$SCRATCH/zt,$SCRATCH/zt/."
	# --aio needs an aio block: a best-aio.json without one replays nothing
	echo '{"trusted": false, "reason": "no steady point"}' >"$BATS_TEST_TMPDIR/a.json"
	hostile "--aio $BATS_TEST_TMPDIR/a.json: no \"aio\" object in it" --ds-config "$EXAMPLE" --target "$SCRATCH" --aio "$BATS_TEST_TMPDIR/a.json"
	echo '{}' >"$BATS_TEST_TMPDIR/a.json"
	hostile "--aio $BATS_TEST_TMPDIR/a.json: no \"aio\" object in it" --ds-config "$EXAMPLE" --target "$SCRATCH" --aio "$BATS_TEST_TMPDIR/a.json"
	# run through a symlink in another folder: it finds its modules
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -s "$ZERO" "$BATS_TEST_TMPDIR/bin/tswap-zero"
	run --separate-stderr "$BATS_TEST_TMPDIR/bin/tswap-zero" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 \
		--target "$SCRATCH" --dry-run --out "$OUT/link"
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_file_exists "$OUT/link/plan.json"
}

@test "zero: --ds-version: tswap-sweep's syntax and refusals; the replay allocates its buffers as that DeepSpeed does" {
	refused() { # refused TEXT VERSION
		run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" \
			--dry-run --out "$OUT/r" --ds-version "$2"
		assert_failure 2
		assert_equal "$output" ""
		assert_equal "$stderr" "tswap-zero: --ds-version: $1"
		assert_not_exists "$OUT/r"
	}
	refused "DeepSpeed 0.20.0 is newer than 0.19.5, the newest release tswap knows (its aio keys and rules are unchecked)" 0.20.0
	refused "DeepSpeed 0.17.99 is no release: 0.17 has 0.17.0 to 0.17.6 (DeepSpeed's git tags)" 0.17.99
	refused "not a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4): v0.19" v0.19
	refused "empty; a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4)" ''
	refused "tswap-zero follows DeepSpeed 0.16.4 to 0.19.5 (its swap rules were checked against 0.16.4); 0.15.0 is older" 0.15.0
	# default 0.19.5: swap buffers from new_cpu_locked_tensor (#8212), the
	# engine's tswap_alloc=deepspeed in [global] of both job files
	run -0 "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/new"
	assert_line "deepspeed 0.19.5: swap buffers from new_cpu_locked_tensor (replay: tswap_alloc=deepspeed); reads must fit their file: yes (checked)"
	assert_equal "$(jq -r .deepspeed.version "$OUT/new/plan.json")" 0.19.5
	for f in step layout; do
		assert_equal "$(sed -n '/^\[global\]/,/^$/p' "$OUT/new/$f.fio" | grep -c '^tswap_alloc=deepspeed$')" 1
		assert_equal "$(grep -c '^tswap_alloc=' "$OUT/new/$f.fio")" 1
	done
	# 0.19.3: accelerator pin_memory buffers: fio's allocation
	run -0 "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/old" \
		--ds-version 0.19.3
	assert_line --partial "deepspeed 0.19.3: swap buffers from pin_memory"
	run grep -c '^tswap_alloc=' "$OUT/old/step.fio" "$OUT/old/layout.fio"
	assert_output "$OUT/old/step.fio:0
$OUT/old/layout.fio:0"
	# the same bytes either way
	assert_equal "$(jq -c '[.read_bytes_per_step, .write_bytes_per_step, .ops]' "$OUT/old/plan.json")" \
		"$(jq -c '[.read_bytes_per_step, .write_bytes_per_step, .ops]' "$OUT/new/plan.json")"
}

@test "zero: input files that are FIFOs, devices, directories, symlink loops, BOM, not UTF-8 or nested deep: one line, exit 2, no hang" {
	local d=$BATS_TEST_TMPDIR/in
	mkdir -p "$d"
	mkfifo "$d/fifo"
	ln -s loop2 "$d/loop1"
	ln -s loop1 "$d/loop2"
	printf '\xef\xbb\xbf{}' >"$d/bom.json"
	printf '{"zero_optimization": {"stage": "\xff"}}' >"$d/latin1.json"
	/usr/bin/python3 -c "print('[' * 100000 + ']' * 100000)" >"$d/deep.json"
	echo '[4194304, NaN]' >"$d/nan.json"
	refused() { # refused TEXT ARGS...
		local text=$1
		shift
		run --separate-stderr timeout 30 "$ZERO" --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/r" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == "tswap-zero: $text"* ]] || { echo "stderr: $stderr"; return 1; }
		assert_not_exists "$OUT/r"
	}
	local opt what
	for opt in --ds-config --param-numels --aio; do
		case $opt in
		--ds-config) what=(--params 1.3e9) ;;
		*) what=(--ds-config "$EXAMPLE" --params 1.3e9) ;;
		esac
		[ "$opt" != --param-numels ] || what=(--ds-config "$EXAMPLE")
		refused "$opt $d/fifo: a FIFO, not a regular file" "${what[@]}" "$opt" "$d/fifo"
		refused "$opt /dev/zero: a character device, not a regular file" "${what[@]}" "$opt" /dev/zero
		refused "$opt $d: a directory, not a regular file" "${what[@]}" "$opt" "$d"
		refused "$opt $d/loop1: cannot open it (Too many levels of symbolic links" "${what[@]}" "$opt" "$d/loop1"
		refused "$opt $d/bom.json: starts with a UTF-8 byte-order mark" "${what[@]}" "$opt" "$d/bom.json"
		refused "$opt $d/latin1.json: not UTF-8 text (byte 33" "${what[@]}" "$opt" "$d/latin1.json"
		refused "$opt $d/deep.json: nested too deeply to read" "${what[@]}" "$opt" "$d/deep.json"
	done
	refused "--param-numels $d/nan.json: entry 1 = NaN: not a whole number" --ds-config "$EXAMPLE" --param-numels "$d/nan.json"
	assert [ -p "$d/fifo" ]
}

@test "zero: a batch size that divides to infinity, --aio values and keys given twice, empty values, control characters: one line, exit 2" {
	local c=$BATS_TEST_TMPDIR/c.json a=$BATS_TEST_TMPDIR/a.json
	refused() { # refused TEXT ARGS...
		local text=$1
		shift
		run --separate-stderr timeout 30 "$ZERO" --ds-config "$EXAMPLE" --ranks 2 --target "$SCRATCH" --dry-run "$@"
		assert_failure 2
		assert_equal "$output" ""
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == "tswap-zero: $text"* ]] || { echo "stderr: $stderr"; return 1; }
	}
	jq 'del(.gradient_accumulation_steps) | .train_batch_size = 1e300 | .train_micro_batch_size_per_gpu = 1e-300' \
		"$EXAMPLE" >"$c"
	refused "--ds-config $c: gradient_accumulation_steps (given, or train_batch_size // train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024" \
		--ds-config "$c" --params 1.3e9 --out "$OUT/r"
	# --aio's block is checked in the dry run too, and named as --aio's
	echo '{"aio": {"queue_depth": 1e12}}' >"$a"
	refused "--aio $a: aio.queue_depth = 1000000000000: out of the engine's range" --params 1.3e9 --aio "$a" --out "$OUT/r"
	printf '%s' '{"aio": {"block_size": 1048576, "block_size": 512}}' >"$a"
	refused "--aio $a: key aio.block_size given twice" --params 1.3e9 --aio "$a" --out "$OUT/r"
	assert_not_exists "$OUT/r"
	# an empty value (an unset variable) is not the default
	local o
	for o in --param-numels --param-numel --aio --world --out --dtype --emit-jobs --steps --scale; do
		refused "$o: empty (give a value, or leave the option out for its default)" --params 1.3e9 "$o" ''
	done
	# a newline in a value is escaped: the error stays one line
	refused '--params=13e9\n: not a number' --params $'13e9\n'
	# --out never follows a symbolic link
	mkdir "$BATS_TEST_TMPDIR/real"
	ln -s real "$BATS_TEST_TMPDIR/link"
	refused "--out $BATS_TEST_TMPDIR/link/: a symbolic link (never followed" --params 1.3e9 --out "$BATS_TEST_TMPDIR/link/"
	run find "$BATS_TEST_TMPDIR/real" -mindepth 1
	assert_output ""
}

@test "zero: SIGINT or SIGTERM while planning gives --out back as it was, exit 130 or 143" {
	local c=$BATS_TEST_TMPDIR/c.json pid rc sig
	# 50000 tensors, nothing kept: the plan takes seconds
	jq '.zero_optimization.offload_param.buffer_count = 100000 | .zero_optimization.stage3_max_reuse_distance = 0' \
		"$EXAMPLE" >"$c"
	for sig in INT TERM; do
		mkdir -p "$OUT/$sig"
		env --default-signal=INT "$ZERO" --ds-config "$c" --params 5e11 --param-numel 1e7 --ranks 2 --target "$SCRATCH" \
			--dry-run --out "$OUT/$sig/new" >/dev/null 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		# the claim marks --out once the options are read: planning has begun
		for ((i = 0; i < 300; i++)); do
			[ -e "$OUT/$sig/new/.tswap-zero-out" ] && break
			sleep 0.05
		done
		assert_exists "$OUT/$sig/new/.tswap-zero-out"
		kill -s "$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		if [ "$sig" = INT ]; then assert_equal "$rc" 130; else assert_equal "$rc" 143; fi
		run cat "$BATS_TEST_TMPDIR/err"
		assert_output "tswap-zero: interrupted (SIG$sig) before the replay: nothing run"
		# the folder it made is gone
		assert_not_exists "$OUT/$sig/new"
	done
}

@test "zero: a section given twice with different keys is refused (not the last one kept); a dotted key is no duplicate; --emit-jobs keeps a user's file" {
	local c=$BATS_TEST_TMPDIR/c.json
	# {"aio": {...}, "aio": {"thread_count": 4}}: DeepSpeed refuses it
	# (dict_raise_error_on_duplicate_keys); keeping the last lost the block
	jq -c . "$EXAMPLE" | sed 's/}$/, "aio": {"thread_count": 4}}/' >"$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/a"
	assert_failure 2
	assert_equal "$stderr" "tswap-zero: --ds-config $c: key aio given twice (DeepSpeed refuses duplicate keys: runtime/config.py dict_raise_error_on_duplicate_keys)"
	assert_not_exists "$OUT/a"
	# "x.y" beside {"x": {"y": ...}}: two keys
	jq '. + {"x.y": 1, "x": {"y": 2}}' "$EXAMPLE" >"$c"
	run -0 "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/b"
	# --emit-jobs replaces only a profile tswap-zero wrote
	echo 'my notes' >"$SCRATCH/notes.fio"
	: >"$SCRATCH/empty.fio"
	for f in notes empty; do
		run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --emit-jobs "$SCRATCH/$f.fio" \
			--out "$OUT/$f"
		assert_failure 2
		assert_equal "$stderr" "tswap-zero: --emit-jobs $SCRATCH/$f.fio: exists and is not a profile tswap-zero wrote: not overwritten (remove it, or another name)"
	done
	assert_equal "$(cat "$SCRATCH/notes.fio")" 'my notes'
	assert_equal "$(stat -c %s "$SCRATCH/empty.fio")" 0
	run -0 "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --emit-jobs "$SCRATCH/p.fio" --out "$OUT/p1"
	run -0 "$ZERO" --ds-config "$EXAMPLE" --params 1e9 --ranks 2 --emit-jobs "$SCRATCH/p.fio" --out "$OUT/p2"
	assert_equal "$(head -n 1 "$SCRATCH/p.fio")" "; Workload: ds_config.example.json: one ZeRO-Infinity training step of a 1000000000-parameter model on 2 ranks,"
}

@test "zero: standard output closed during a replay (| head): fio stopped, the swap files removed, exit 141" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/ds.json
	tiny_cfg "$c"
	mkdir -p "$SCRATCH/t"
	# the reader goes away once the run folder exists: the next line the
	# replay prints fails with EPIPE
	set +e
	"$ZERO" --ds-config "$c" "${TINY[@]}" --scale 8 --no-ceiling --target "$SCRATCH/t" --out "$OUT" --steps 200 \
		2>"$BATS_TEST_TMPDIR/err" | {
		read -r _
		for ((i = 0; i < 600; i++)); do
			compgen -G "$SCRATCH/t/tswap-zero-*" >/dev/null && break
			sleep 0.05
		done
	}
	local rc=${PIPESTATUS[0]}
	set -e
	assert_equal "$rc" 141
	run cat "$BATS_TEST_TMPDIR/err"
	assert_output "tswap-zero: interrupted (SIGPIPE: standard output closed): fio stopped, swap files removed; partial results in --out"
	run find "$SCRATCH/t" -mindepth 1
	assert_output ""
}

@test "zero: NaN in a ds_config is refused where the plan reads it, named NaN (never taken as unset, the default)" {
	local c=$BATS_TEST_TMPDIR/c.json k
	for k in '.aio.queue_depth' '.gradient_accumulation_steps' '.zero_optimization.sub_group_size'; do
		jq "$k = 12345" "$EXAMPLE" | sed 's/12345/NaN/' >"$c"
		run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/n"
		assert_failure 2
		assert_equal "$output" ""
		case $k in
		.aio.queue_depth) assert_equal "${stderr%% (*}" "tswap-zero: --ds-config $c: aio.queue_depth = NaN: not a whole number" ;;
		.gradient_accumulation_steps) [[ $stderr == *": gradient_accumulation_steps (given, or "*"must be an integer from 1 to 1024" ]] ;;
		*) assert_equal "${stderr%% (*}" "tswap-zero: --ds-config $c: zero_optimization.sub_group_size = NaN: not a finite number" ;;
		esac
		assert_not_exists "$OUT/n"
	done
}

@test "zero: a small RLIMIT_MEMLOCK: 0.19.3's replay runs unlocked past the engine's notes; 0.19.5's fails naming ulimit -l and --ds-version" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	[ "$(id -u)" = 0 ] || skip "requires root (to drop CAP_IPC_LOCK, so RLIMIT_MEMLOCK applies)"
	local c=$BATS_TEST_TMPDIR/ds.json
	tiny_cfg "$c"
	lowlock() { prlimit --memlock=1048576 setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- "$@"; }
	# tswap_pin=auto logs a note into fio's --output before the JSON
	run --separate-stderr lowlock "$ZERO" --ds-config "$c" "${TINY[@]}" --scale 8 --no-ceiling --target "$SCRATCH/t" \
		--out "$OUT/old" --ds-version 0.19.3
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_output --partial "base step 1: forward"
	[[ $stderr == *"tswap-zero: fio logged "*" line(s) before its JSON (see $OUT/old/layout.fio.json.stderr), the first: tswap: "*"tswap_pin=auto: I/O buffers not locked"* ]]
	run -0 jq -e '.jobs | length > 0' "$OUT/old/layout.fio.json"
	# new_cpu_locked_tensor (tswap_alloc=deepspeed) cannot lock: the run fails
	run --separate-stderr lowlock "$ZERO" --ds-config "$c" "${TINY[@]}" --scale 8 --no-ceiling --target "$SCRATCH/t" \
		--out "$OUT/new"
	assert_failure 3
	assert_equal "$(printf '%s\n' "$stderr" | tail -n 1)" "tswap-zero: fio failed on $OUT/new/layout.fio (see $OUT/new/layout.fio.json.stderr); DeepSpeed 0.19.4+ locks its swap buffers (new_cpu_locked_tensor): raise ulimit -l, or --ds-version 0.19.3 for pin_memory's"
	run find "$SCRATCH/t" -mindepth 1
	assert_output ""
}

@test "zero: a step needing more fio jobs than fio runs (4088) is refused by --emit-jobs, the replay and the dry run, naming the cause" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/c.json want
	# 326 tensors per rank, each its own sub-group: 979 fio jobs per rank
	jq '.zero_optimization.sub_group_size = 1e5' "$EXAMPLE" >"$c"
	want="fio jobs (979 per rank x 8 ranks: backward 3, optimizer 976), fio runs at most 4088 in one run; most are the optimizer's (a few per sub-group): raise sub_group_size or use fewer --ranks"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --param-numel 4e6 --ranks 8 \
		--emit-jobs "$SCRATCH/big.fio" --out "$OUT/e"
	assert_failure 2
	assert_equal "$output" ""
	assert_equal "$stderr" "tswap-zero: --emit-jobs $SCRATCH/big.fio: the step needs 7832 $want"
	assert_not_exists "$SCRATCH/big.fio"
	mkdir "$SCRATCH/t"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --param-numel 4e6 --ranks 8 \
		--target "$SCRATCH/t" --no-ceiling --out "$OUT/r"
	assert_failure 2
	assert_equal "${stderr##*$'\n'}" "tswap-zero: step.fio: needs 7832 $want"
	# refused before fio: nothing laid out under the target
	assert_equal "$(find "$SCRATCH/t" -mindepth 1 | wc -l)" 0
	assert_not_exists "$OUT/r/layout.fio.json"
	# the dry run writes the jobs to read, and says the replay would refuse
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --param-numel 4e6 --ranks 8 \
		--target "$SCRATCH/t" --dry-run --out "$OUT/dr"
	assert_failure 2
	assert_equal "$stderr" "tswap-zero: step.fio: needs 7832 $want"
	assert_equal "$(grep -c '^\[' "$OUT/dr/step.fio")" 7833
	# the same plan on 4 ranks: 3916 jobs, run by fio (its dry run writes it)
	run -0 "$ZERO" --ds-config "$c" --params 1.3e9 --param-numel 4e6 --ranks 4 --world 8 \
		--target "$SCRATCH/t" --dry-run --out "$OUT/d"
	assert_equal "$(grep -c '^\[' "$OUT/d/step.fio")" 3917
	run -0 "$ZERO" --ds-config "$c" --params 1.3e9 --param-numel 4e6 --ranks 4 --world 8 \
		--emit-jobs "$SCRATCH/ok.fio" --out "$OUT/e4"
	assert_equal "$(grep -c '^\[' "$SCRATCH/ok.fio")" 3917
}

# shot_zero DELAY, shot_check DELAY: sigint_shots' commands, a dry run
# of a step (its own --out per shot) and tswap-check.
shot_zero() {
	exec "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/int-$1"
}
shot_check() {
	exec "$REPO/sweep/tswap-check" --target "$SCRATCH"
}

@test "zero and check: SIGINT to the process group while Python starts: exit 130, no traceback" {
	# the shot lands in the entry script, Python's start-up and imports or
	# the plan; a run that ends first with its own status is the test's
	# miss (tswap-check: 1 is a failed check)
	sigint_shots 0 shot_zero 0 0.01 0.02 0.03 0.04 0.05 0.06 0.08
	sigint_shots '0 1' shot_check 0 0.01 0.02 0.03 0.04 0.05 0.06 0.08
}
