#!/usr/bin/env bats
# tests/zero.bats - sweep/tswap-zero: the plan of one ZeRO-Infinity step
# against a hand calculation of DeepSpeed's rules (docs/zero-infinity.md,
# "The hand calculation"), a tiny real replay whose fio byte counts equal the
# plan, and bad inputs (one line, exit 2). Small sizes: well under a minute.

bats_require_minimum_version 1.5.0
load helpers

ZERO=$REPO/sweep/tswap-zero
EXAMPLE=$REPO/jobs/ds_config.example.json

setup() {
	common_setup
	OUT=$BATS_TEST_TMPDIR/out
}
teardown() { common_teardown; }

# pad N A: N rounded up to a multiple of A (DeepSpeed _io_aligned_numel).
pad() { echo $(( ($1 + $2 - 1) / $2 * $2 )); }
# head N A: N rounded down to a multiple of A (_adjust_for_misaligned_lengths).
head_aligned() { echo $(( $1 / $2 * $2 )); }

# cfg FILE SUB_GROUP_SIZE PIPELINE(true|false) PARAM_DEVICE(nvme|cpu): a
# stage-3 AdamW bf16 ds_config with the optimizer on NVMe.
cfg() {
	jq --argjson sgs "$2" --argjson pipe "$3" --arg pdev "$4" '
		.zero_optimization.sub_group_size = $sgs
		| .zero_optimization.offload_optimizer.pipeline_read = $pipe
		| .zero_optimization.offload_optimizer.pipeline_write = $pipe
		| .zero_optimization.offload_param.device = $pdev' "$EXAMPLE" >"$1"
}

# hand P WORLD RANKS PARAM_NUMEL SGS MAX_IN_CPU PARAM_NVME(0|1) [GAS]: the
# node's read and write bytes per step and the file count, by the rules of
# docs/zero-infinity.md, in bash arithmetic (AdamW: 3 state tensors, fp32
# alignment 256 elements, bf16 alignment 512, 1 MiB minimum swap; GAS
# micro-steps read the NVMe parameters twice each, gradients swap once).
hand() {
	local P=$1 W=$2 R=$3 T=$4 S=$5 M=$6 PN=$7 G=${8:-1}
	local n=$(( (P + T - 1) / T )) t=$(( (T + W - 1) / W ))
	local k=$(( (S + t - 1) / t ))           # params per sub-group
	(( S >= n * t )) && k=$n                # one sub-group when it fits
	local read=0 write=0 files=0 i left=$n end=0 np numel
	while (( left > 0 )); do
		np=$(( left < k ? left : k )); left=$(( left - np ))
		numel=$(( np * t )); end=$(( end + numel ))
		state=$(( 3 * $(pad "$numel" 256) * 4 ))
		grads=$(( np * $(head_aligned "$t" 256) * 4 ))
		read=$(( read + state + grads )); write=$(( write + state + grads )); files=$(( files + 3 + np ))
		if (( PN && end > M )); then
			params=$(( np * $(pad "$t" 512) * 2 ))
			read=$(( read + 2 * G * params )); write=$(( write + params )); files=$(( files + np ))
		fi
	done
	echo "$(( read * R )) $(( write * R )) $(( files * R ))"
}

plan_numbers() { jq -r '"\(.read_bytes_per_step) \(.write_bytes_per_step) \(.files)"' "$1"; }

@test "zero: the Done-when plan (jobs/ds_config.example.json, 1.3e9, 2 ranks) equals the hand calculation" {
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 \
		--target "$REPO/build/scratch" --dry-run --out "$OUT"
	assert_success
	# 26 tensors of 5e7 -> 25e6 per rank each; 7 sub-groups; params past 3e8 on NVMe
	expected=$(hand 1300000000 2 2 50000000 100000000 300000000 1)
	assert_equal "$(plan_numbers "$OUT/plan.json")" "$expected"
	assert_equal "$expected" "23600039936 22200014848 122"
	assert_output --partial "per step (node): read 23600039936 B"
	assert_file_exists "$OUT/step.fio"
	# the replay's jobs: one per rank, class and direction, bs = tensor size
	run grep -c '^rw=read' "$OUT/step.fio"
	assert [ "$output" -gt 0 ]
	run jq -r '[.phases[].name] | join(",")' "$OUT/plan.json"
	assert_output "forward,backward,optimizer"
}

@test "zero: two sub_group_sizes, pipeline on/off, with and without param offload match the hand calculation" {
	local sgs pipe pdev pn c
	for sgs in 100000000 1000000000; do
		for pipe in true false; do
			for pdev in nvme cpu; do
				c=$BATS_TEST_TMPDIR/ds-$sgs-$pipe-$pdev.json
				cfg "$c" "$sgs" "$pipe" "$pdev"
				pn=0; [ "$pdev" = nvme ] && pn=1
				run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 \
					--target "$SCRATCH" --dry-run --out "$OUT/$sgs-$pipe-$pdev"
				assert_success
				assert_equal "$(plan_numbers "$OUT/$sgs-$pipe-$pdev/plan.json")" \
					"$(hand 1300000000 2 2 50000000 "$sgs" 300000000 "$pn")"
			done
		done
	done
	# both pipeline flags: stage j+1 reads sub-group j+1 while j's parameters
	# and j-1's state are written (sub-group 0's parameters are in CPU memory)
	run jq -r '[.phases[2].stages[1,2].jobs[] | "\(.class).\(.rw)"] | join(" ")' "$OUT/100000000-true-nvme/plan.json"
	assert_output "sg1-state.read sg1-grad0.read sg2-state.read sg2-grad0.read sg0-state.write"
	# not pipelined: state in, gradients in, out, one after the other
	run jq -r '[.phases[2].stages[0:3][].name] | join(" ")' "$OUT/100000000-false-nvme/plan.json"
	assert_output "sg0-in sg0-in-grad sg0-out"
}

@test "zero: gradient_accumulation_steps: parameters read in every micro-step, gradients swapped once (stage3.py partition_grads)" {
	local c=$BATS_TEST_TMPDIR/c.json
	jq '.gradient_accumulation_steps = 4' "$EXAMPLE" >"$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/g4"
	assert_success
	assert_equal "$(plan_numbers "$OUT/g4/plan.json")" "$(hand 1300000000 2 2 50000000 100000000 300000000 1 4)"
	# by hand: 4 micro-steps x (forward + backward) x 700,012,544 B per rank x 2 ranks
	assert_equal "$(plan_numbers "$OUT/g4/plan.json")" "$((23600039936 + 6 * 1400025088)) 22200014848 122"
	run jq -r '[.phases[] | "\(.name)\(.micro_step // ""):\([.stages[].name] | join("+"))"] | join(" ")' "$OUT/g4/plan.json"
	assert_output "forward1:param-in-mb1 backward1:param-in-mb1 forward2:param-in-mb2 backward2:param-in-mb2 forward3:param-in-mb3 backward3:param-in-mb3 forward4:param-in-mb4 backward4:param-in-grad-out-mb4 optimizer:stage0+stage1+stage2+stage3+stage4+stage5+stage6+stage7+stage8"
	# the replay: fio job names stay unique (wait_for names them)
	assert_equal "$(grep '^\[' "$OUT/g4/step.fio" | sort | uniq -d)" ""
	# without the key: train_batch_size // micro batch // world (runtime/config.py)
	jq 'del(.gradient_accumulation_steps) | .train_batch_size = 16' "$EXAMPLE" >"$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/g8"
	assert_success
	assert_output --partial "default: gradient_accumulation_steps=train_batch_size // train_micro_batch_size_per_gpu // world"
	assert_equal "$(jq .config.gas "$OUT/g8/plan.json")" 8
	assert_equal "$(plan_numbers "$OUT/g8/plan.json")" "$(hand 1300000000 2 2 50000000 100000000 300000000 1 8)"
	jq '.gradient_accumulation_steps = 0' "$EXAMPLE" >"$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/g0"
	assert_failure 2
	assert_equal "$stderr" "tswap-zero: --ds-config $c: gradient_accumulation_steps (given, or train_batch_size // train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024"
}

@test "zero: a tiny real step moves exactly the plan's bytes (fio io_bytes)" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
	local c=$BATS_TEST_TMPDIR/ds.json
	# 48 Mi params in 2^23-element tensors: every tensor a multiple of 4096 B,
	# so the replay has no DIO round-up and fio's bytes are DeepSpeed's.
	cfg "$c" 8388608 true nvme
	jq '.zero_optimization.offload_param.max_in_cpu = 8388608' "$c" >"$c.2" && mv "$c.2" "$c"
	run --separate-stderr timeout 300 "$ZERO" --ds-config "$c" --params 50331648 --param-numel 8388608 \
		--ranks 2 --target "$SCRATCH/t" --out "$OUT" --steps 1
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

@test "zero: a sub-group's parameter write completes before its state write (stage3.py step, SwapBufferPool.swap_out waits)" {
	local c=$BATS_TEST_TMPDIR/ds.json
	cfg "$c" 100000000 false nvme
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/np"
	assert_success
	# sub-group 3 is the first with parameters on NVMe: its own barrier each
	run jq -r '[.phases[2].stages[] | select(.name | startswith("sg3-")) | .name] | join(" ")' "$OUT/np/plan.json"
	assert_output "sg3-in sg3-in-grad sg3-param-out sg3-out"
	cfg "$c" 100000000 true nvme
	jq '.zero_optimization.offload_optimizer.pipeline_write = false' "$c" >"$c.2" && mv "$c.2" "$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/p"
	assert_success
	# pipeline_read: the state write of sub-group 3 waits for its parameter write
	run awk '/^\[optimizer.stage4.r1.sg3-state.write\]/,/^$/' "$OUT/p/step.fio"
	assert_line "wait_for=optimizer.stage4.r1.sg3-param0.write"
}

# stages PLAN: the optimizer phase, one line per stage: its jobs as
# CLASS.RW, [CHAIN] on the jobs chained with wait_for.
stages() {
	jq -r '.phases[2].stages[] | "\(.name): " + ([.jobs[] | "\(.class).\(.rw)\(if .serial then "[\(.chain)]" else "" end)"] | join(" "))' "$1"
}

@test "zero: pipeline_read, pipeline_write, both: the optimizer stages follow PipelinedOptimizerSwapper's waits" {
	# 26 tensors of 25e6 per rank, sub_group_size 3e8: sub-groups of 12, 12
	# and 2 tensors; parameters past max_in_cpu 3e8 on NVMe (sub-groups 1, 2).
	# R = state+gradient read, P = parameter write, S = state write
	# (docs/zero-infinity.md, rule 10).
	local c=$BATS_TEST_TMPDIR/c.json
	plan_rw() { # plan_rw READ WRITE DIR
		jq --argjson r "$1" --argjson w "$2" '.zero_optimization.sub_group_size = 300000000
			| .zero_optimization.offload_optimizer.pipeline_read = $r
			| .zero_optimization.offload_optimizer.pipeline_write = $w' "$EXAMPLE" >"$c"
		run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/$3"
		assert_success
		assert_equal "$(plan_numbers "$OUT/$3/plan.json")" "$(hand 1300000000 2 2 50000000 300000000 300000000 1)"
	}
	# pipeline_read: stage j = R(j) || (P(j-1) -> S(j-1))
	plan_rw true false r
	run stages "$OUT/r/plan.json"
	assert_output "stage0: sg0-state.read sg0-grad0.read
stage1: sg1-state.read sg1-grad0.read sg0-state.write[sg0-out]
stage2: sg2-state.read sg2-grad0.read sg1-param0.write[sg1-out] sg1-state.write[sg1-out]
stage3: sg2-param0.write[sg2-out] sg2-state.write[sg2-out]"
	# pipeline_write: stage j = (R(j) -> P(j)) || S(j-1); the last S alone
	plan_rw false true w
	run stages "$OUT/w/plan.json"
	assert_output "stage0: sg0-state.read[sg0-in] sg0-grad0.read
stage1: sg1-state.read[sg1-in] sg1-grad0.read sg1-param0.write[sg1-in] sg0-state.write[sg0-out]
stage2: sg2-state.read[sg2-in] sg2-grad0.read sg2-param0.write[sg2-in] sg1-state.write[sg1-out]
stage3: sg2-state.write[sg2-out]"
	run awk '/^\[optimizer.stage1.r0.sg1-param0.write\]/,/^$/' "$OUT/w/step.fio"
	assert_line "wait_for=optimizer.stage1.r0.sg1-state.read"
	run awk '/^\[optimizer.stage1.r0.sg0-state.write\]/,/^$/' "$OUT/w/step.fio"
	refute_line --partial "wait_for="
	# both: stage 0 = R(0); stage j+1 = R(j+1) || P(j) || S(j-1); then S(last)
	plan_rw true true rw
	run stages "$OUT/rw/plan.json"
	assert_output "stage0: sg0-state.read sg0-grad0.read
stage1: sg1-state.read sg1-grad0.read
stage2: sg2-state.read sg2-grad0.read sg1-param0.write[sg1-param] sg0-state.write[sg0-out]
stage3: sg2-param0.write[sg2-param] sg1-state.write[sg1-out]
stage4: sg2-state.write[sg2-out]"
	# one fio group per stage: stonewall on each stage's first job only
	assert_equal "$(grep -c '^stonewall' "$OUT/rw/step.fio")" "$(jq '[.phases[].stages[]] | length' "$OUT/rw/plan.json")"
	run ! grep -q '^wait_for=optimizer' "$OUT/rw/step.fio"
}

@test "zero: configurations DeepSpeed rejects, and plans that swap nothing, get one line and exit 2" {
	local c=$BATS_TEST_TMPDIR/c.json
	one_line() { # one_line TEXT ARGS...
		local text=$1; shift
		run --separate-stderr "$ZERO" --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/$RANDOM" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == *"$text"* ]] || { echo "stderr: $stderr"; return 1; }
	}
	# both pipeline flags hold 3 sub-groups x 4 buffers (AdamW): 4 is too few
	jq '.zero_optimization.offload_optimizer.buffer_count = 11' "$EXAMPLE" >"$c"
	one_line "buffer_count=11: DeepSpeed needs at least 12" --ds-config "$c" --params 1.3e9
	jq '.zero_optimization.offload_optimizer |= (.buffer_count = 7 | .pipeline_write = false)' "$EXAMPLE" >"$c"
	one_line "needs at least 8" --ds-config "$c" --params 1.3e9
	jq '.zero_optimization.offload_optimizer |= (.buffer_count = 3 | .pipeline_read = false | .pipeline_write = false)' "$EXAMPLE" >"$c"
	one_line "needs at least 4" --ds-config "$c" --params 1.3e9
	# a parameter partition must be smaller than offload_param.buffer_size
	one_line "does not fit offload_param.buffer_size=100000000" --ds-config "$EXAMPLE" --params 1.3e9 --param-numel 2e8
	one_line "nothing is swapped" --ds-config "$EXAMPLE" --params 1.3e9 --world 1e9
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

@test "zero: SIGINT during a run stops fio, removes the swap files, exits 130" {
	local c=$BATS_TEST_TMPDIR/ds.json pid fpid i
	tiny_cfg "$c"
	# env --default-signal: a background job of a script starts with SIGINT
	# ignored; a terminal's Ctrl-C reaches a foreground tswap-zero.
	env --default-signal=INT "$ZERO" --ds-config "$c" "${TINY[@]}" --target "$SCRATCH/t" --out "$OUT" \
		--steps 200 >"$BATS_TEST_TMPDIR/log" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		fpid=$(pgrep -P "$pid" -x fio) && break
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

@test "zero: --version is tswap-sweep's shape (tswap version and commit, engine, fio); exit 0" {
	run -0 --separate-stderr "$ZERO" --version
	assert_line --index 0 --regexp "^tswap-zero \(tswap\) $(sed -n 's/^TSWAP_VERSION := //p' "$REPO/Makefile")( \(commit [0-9a-z.-]+\))?$"
	assert_line --index 1 --partial "engine: $(cd "$(dirname "$ENGINE")" && pwd)/$(basename "$ENGINE")"
	assert_line --index 2 "fio: $(fio --version)"
	assert_equal "$stderr" ""
	# the first line has tswap-sweep's shape
	assert_equal "$(sed 's/^tswap-zero //' <<<"${lines[0]}")" "$("$REPO/sweep/tswap-sweep" --version | sed -n '1s/^tswap-sweep //p')"
}
