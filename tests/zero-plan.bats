#!/usr/bin/env bats
# tests/zero-plan.bats - sweep/tswap-zero --dry-run: the plan of one
# ZeRO-Infinity step against a hand calculation of DeepSpeed's rules
# (docs/zero-infinity.md, "The hand calculation", tests/zero.bash), the
# order of its stages, and configurations DeepSpeed rejects (one line,
# exit 2). No I/O: a few seconds.

bats_require_minimum_version 1.5.0
load helpers
load zero

@test "zero: the Done-when plan (jobs/ds_config.example.json, 1.3e9, 2 ranks) equals the hand calculation" {
	run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --params 1.3e9 --ranks 2 \
		--target "$REPO/build/scratch" --dry-run --out "$OUT"
	assert_success
	# 26 tensors of 5e7 -> 25e6 per rank each; 7 sub-groups; params past 3e8 on NVMe
	expected=$(hand 1300000000 2 2 50000000 100000000 300000000 1)
	assert_equal "$(plan_numbers "$OUT/plan.json")" "$expected"
	assert_equal "$expected" "22600022016 22200014848 146"
	assert_output --partial "per step (node): read 22600022016 B"
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
	# both pipeline flags: stage j reads sub-group j while j-1's parameters
	# and state are written (sub-groups 0-2's parameters are in CPU memory)
	run jq -r '[.phases[2].stages[] | select(.name | IN("stage1", "stage4")) | .jobs[] | "\(.id).\(.rw)"] | join(" ")' \
		"$OUT/100000000-true-nvme/plan.json"
	assert_output "sg1-state.read sg1-grad.read sg0-state.write sg4-state.read sg4-grad.read sg3-param.write sg3-state.write"
	# not pipelined: the gradient swapper's last buffer, then state in,
	# gradients in, out, one after the other
	run jq -r '[.phases[2].stages[0:4][].name] | join(" ")' "$OUT/100000000-false-nvme/plan.json"
	assert_output "grad-flush sg0-in sg0-in-grad sg0-out"
}

@test "zero: gradient_accumulation_steps: parameters read in every micro-step, gradients swapped once (stage3.py partition_grads)" {
	local c=$BATS_TEST_TMPDIR/c.json
	jq '.gradient_accumulation_steps = 4' "$EXAMPLE" >"$c"
	run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/g4"
	assert_success
	assert_equal "$(plan_numbers "$OUT/g4/plan.json")" "$(hand 1300000000 2 2 50000000 100000000 300000000 1 4)"
	# by hand: 3 more micro-steps x (forward 14 + backward 4 parameters) x
	# 50,000,896 B per rank x 2 ranks
	assert_equal "$(plan_numbers "$OUT/g4/plan.json")" "$((22600022016 + 3 * 18 * 50000896 * 2)) 22200014848 146"
	run jq -r '[.phases[] | "\(.name)\(.micro_step // ""):\([.stages[].name] | join("+"))"] | join(" ")' "$OUT/g4/plan.json"
	assert_output "forward1:param-in-mb1 backward1:param-in-mb1 forward2:param-in-mb2 backward2:param-in-mb2 forward3:param-in-mb3 backward3:param-in-mb3 forward4:param-in-mb4 backward4:param-in-grad-out-mb4 optimizer:grad-flush+stage0+stage1+stage2+stage3+stage4+stage5+stage6+stage7"
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
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	assert_equal "$stderr" "tswap-zero: --ds-config $c: gradient_accumulation_steps (given, or train_batch_size // train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024"
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
	assert_line "wait_for=optimizer.stage4.r1.sg3-param.write"
}

# stages PLAN: the optimizer phase, one line per stage: its jobs as
# CLASS.RW, [CHAIN] on the jobs chained with wait_for.
stages() {
	jq -r '.phases[2].stages[] | "\(.name): " + ([.jobs[] | "\(.id).\(.rw)\(if .serial then "[\(.chain)]" else "" end)"] | join(" "))' "$1"
}

@test "zero: pipeline_read, pipeline_write, both: the optimizer stages follow PipelinedOptimizerSwapper's issue order" {
	# 26 tensors of 25e6 per rank, sub_group_size 3e8: sub-groups of 12, 12
	# and 2 tensors; parameters past max_in_cpu 3e8 on NVMe (sub-groups 1, 2).
	# R = state+gradient read, P = parameter write, S = state write
	# (docs/zero-infinity.md, rule 10); first the gradient swapper's last
	# buffer (rule 6).
	local c=$BATS_TEST_TMPDIR/c.json
	plan_rw() { # plan_rw READ WRITE DIR
		jq --argjson r "$1" --argjson w "$2" '.zero_optimization.sub_group_size = 300000000
			| .zero_optimization.offload_optimizer.pipeline_read = $r
			| .zero_optimization.offload_optimizer.pipeline_write = $w' "$EXAMPLE" >"$c"
		run --separate-stderr "$ZERO" --ds-config "$c" --params 1.3e9 --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/$3"
		assert_success
		assert_equal "$(plan_numbers "$OUT/$3/plan.json")" "$(hand 1300000000 2 2 50000000 300000000 300000000 1)"
	}
	# pipeline_read (with or without pipeline_write): stage j = R(j) ||
	# (P(j-1) -> S(j-1)); issue order R0 R1 S0 R2 P1 S1 P2 S2
	local read_order="grad-flush: grad.write[grad]
stage0: sg0-state.read sg0-grad.read
stage1: sg1-state.read sg1-grad.read sg0-state.write[sg0-out]
stage2: sg2-state.read sg2-grad.read sg1-param.write[sg1-out] sg1-state.write[sg1-out]
stage3: sg2-param.write[sg2-out] sg2-state.write[sg2-out]"
	plan_rw true false r
	run stages "$OUT/r/plan.json"
	assert_output "$read_order"
	plan_rw true true rw
	run stages "$OUT/rw/plan.json"
	assert_output "$read_order"
	# pipeline_write only: stage j = S(j-1) || (R(j) -> P(j)); the last S alone
	plan_rw false true w
	run stages "$OUT/w/plan.json"
	assert_output "grad-flush: grad.write[grad]
stage0: sg0-state.read[sg0-in] sg0-grad.read
stage1: sg0-state.write[sg0-out] sg1-state.read[sg1-in] sg1-grad.read sg1-param.write[sg1-in]
stage2: sg1-state.write[sg1-out] sg2-state.read[sg2-in] sg2-grad.read sg2-param.write[sg2-in]
stage3: sg2-state.write[sg2-out]"
	run awk '/^\[optimizer.stage1.r0.sg1-param.write\]/,/^$/' "$OUT/w/step.fio"
	assert_line "wait_for=optimizer.stage1.r0.sg1-state.read"
	run awk '/^\[optimizer.stage1.r0.sg0-state.write\]/,/^$/' "$OUT/w/step.fio"
	refute_line --partial "wait_for="
	# one fio group per stage: stonewall on each stage's first job only
	assert_equal "$(grep -c '^stonewall' "$OUT/rw/step.fio")" "$(jq '[.phases[].stages[]] | length' "$OUT/rw/plan.json")"
	run -0 grep -c '^wait_for=optimizer.stage2.r1.sg1-param.write$' "$OUT/rw/step.fio"
	assert_output 1
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
	# before DeepSpeed 0.17.1, at most as large from it (#7215)
	one_line "does not fit offload_param.buffer_size=100000000 (partitioned_param_swapper.py get_buffer asserts numel < buffer_size)" \
		--ds-config "$EXAMPLE" --params 1.3e9 --param-numel 2e8 --ds-version 0.17.0
	one_line "does not fit offload_param.buffer_size=100000000 (partitioned_param_swapper.py get_buffer asserts numel <= buffer_size)" \
		--ds-config "$EXAMPLE" --params 1.3e9 --param-numel 200000002
	run -0 "$ZERO" --ranks 2 --target "$SCRATCH" --dry-run --out "$OUT/fits" --ds-config "$EXAMPLE" --params 1.3e9 \
		--param-numel 2e8 --ds-version 0.17.1
	one_line "nothing is swapped" --ds-config "$EXAMPLE" --params 1.3e9 --world 1e9
}

@test "zero: a job's file list longer than fio's 4096-character option value is cut into chained jobs fio parses" {
	# 7e9 on 8 ranks, DeepSpeed's defaults: one sub-group of 140 gradient
	# files per rank, about 6,000 characters of names, all in the gradient
	# swapper's one buffer, written by the optimizer's flush
	run --separate-stderr "$ZERO" --ds-config "$REPO/jobs/ds_config.zero-infinity-defaults.json" --params 7e9 --ranks 8 \
		--target "$SCRATCH" --dry-run --out "$OUT"
	assert_success
	# shellcheck disable=SC2016 # $0 in single quotes: awk's
	run -0 awk '/^filename=/ { if (length($0) > m) m = length($0) } END { print m }' "$OUT/step.fio"
	assert [ "$output" -le 4009 ]
	run -0 awk '/^\[optimizer.grad-flush.r0.grad-c1.write\]/,/^$/' "$OUT/step.fio"
	assert_line "wait_for=optimizer.grad-flush.r0.grad-c0.write"
	# every gradient file once, in the plan's order
	assert_equal "$(sed -n '/^\[optimizer.grad-flush.r0.grad/,/^$/s/^filename=//p' "$OUT/step.fio" | tr ':' '\n')" \
		"$(jq -r '.ops[] | select(.stage == "grad-flush") | .file' "$OUT/plan.json")"
	run -0 jq '[.ops[] | select(.stage == "grad-flush")] | length' "$OUT/plan.json"
	assert_output 140
	TSWAP_ENGINE=$ENGINE run -0 fio --parse-only "$OUT/step.fio"
	TSWAP_ENGINE=$ENGINE run -0 fio --parse-only "$OUT/layout.fio"
}

@test "zero: --param-numels: an uneven model's sub-groups, padding and file names follow its tensors" {
	local n=$BATS_TEST_TMPDIR/numels.json w
	# 8 x Linear(w, w), no bias: [p.numel() for p in model.parameters()]
	jq -cn '[2048, 4096, 1024, 3072, 2048, 1024, 4096, 2048] | map(. * .)' >"$n"
	run --separate-stderr "$ZERO" --ds-config "$REPO/tests/fixtures/zero/ds_config.issue23-A.json" --param-numels "$n" \
		--ranks 1 --world 3 --target "$SCRATCH" --dry-run --out "$OUT/u"
	[ "$status" -eq 0 ] || echo "$stderr"
	assert_success
	assert_line --index 0 --partial "ZeRO-Infinity step: 57671680 params, world 3"
	# one file per parameter: ceil(numel / 3) elements rounded up to 256
	# (fp32: AIO_ALIGNED_BYTES / 4; _io_aligned_numel), 4 bytes each
	local want='' k=0 p
	for w in 2048 4096 1024 3072 2048 1024 4096 2048; do
		p=$(( (w * w + 2) / 3 ))
		want+="${want:+,}[\"${k}_param.tensor.swp\",$(( (p + 255) / 256 * 256 * 4 ))]"
		k=$((k + 1))
	done
	assert_equal "$(jq -c '[.swap_files[] | select(.kind == "param") | [.name, .bytes]]' "$OUT/u/plan.json")" "[$want]"
	# sub-groups (stage3.py _create_fp16_sub_groups): parameters appended
	# until sub_group_size 1e7 is reached: 0-3 (10485762), 4-7
	assert_equal "$(jq -c '[.per_rank.sub_groups[] | [.ds_id, .numel]]' "$OUT/u/plan.json")" '[["0_3",10485762],["4_7",8738136]]'
	# gradient files at each parameter's offset in its sub-group, aligned head
	run -0 jq -r '[.swap_files[] | select(.kind == "grad") | .name] | join(",")' "$OUT/u/plan.json"
	assert_output "0_3_gradient_0_1398016.tensor.swp,0_3_gradient_1398102_5592320.tensor.swp,0_3_gradient_6990508_349440.tensor.swp,0_3_gradient_7340034_3145728.tensor.swp,4_7_gradient_0_1398016.tensor.swp,4_7_gradient_1398102_349440.tensor.swp,4_7_gradient_1747628_5592320.tensor.swp,4_7_gradient_7340034_1398016.tensor.swp"
	assert_equal "$(jq -c '.inputs.param_numels | length' "$OUT/u/plan.json")" 8
	# hostile lists and combinations: one line, exit 2
	bad() { # bad TEXT CONTENT [ARGS...]
		local text=$1
		printf '%s' "$2" >"$n"
		shift 2
		run --separate-stderr "$ZERO" --ds-config "$EXAMPLE" --param-numels "$n" --ranks 1 --target "$SCRATCH" \
			--dry-run --out "$OUT/bad" "$@"
		assert_failure 2
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == *"$text"* ]] || { echo "stderr: $stderr"; return 1; }
		assert_not_exists "$OUT/bad"
	}
	bad "not a non-empty JSON list" '{"a": 1}'
	bad "not a non-empty JSON list" '[]'
	bad "not a readable JSON file" '[1, 2'
	bad "entry 1 = 0: not a whole number from 1" '[4194304, 0]'
	bad "entry 0 = 1.5: not a whole number" '[1.5]'
	bad "entry 0 = \"4\": not a whole number" '["4"]'
	bad "--param-numel and --param-numels: give one of them" '[4194304]' --param-numel 5e7
	bad "--params=100: not the sum of --param-numels" '[4194304]' --params 100
}
