#!/usr/bin/env bats
# tests/sweep-checkpoint.bats - tswap-sweep --workload checkpoint: a tiny
# checkpoint sweep with real fio on a file under the test's scratch
# directory (4 points of one 3 MiB file each, seconds), best-checkpoint.json's
# keys (DeepSpeed 0.19.5's checkpoint.writer and aio keys) and values (one
# of the grid's points), what each point wrote (FastFileWriter's sections:
# tswap.plan.checkpoint), and the one-line refusals.
# shellcheck disable=SC2016,SC2154  # jq programs in single quotes; bats sets $status, $output, $stderr

bats_require_minimum_version 1.5.0

load helpers

SWEEP=$REPO/sweep/tswap-sweep

setup() {
	common_setup
	export TSWAP_ENGINE=$ENGINE
	GRID=$SCRATCH/tiny.grid
	# A = 2 x 512: a file of 3 MiB + 1636 bytes is body (3 MiB), rem 1024
	# and a tail of 612 bytes with either buffer
	cat >"$GRID" <<-'G'
		io_buffer_size    1m 2m
		io_buffer_double  on off
		block             256k
		qd                4
		threads           2
		repeat            1
	G
	S=$((3 * 1048576 + 1636))
}
teardown() {
	[ -z "${NR_DIR:-}" ] || rm -rf -- "$NR_DIR"
	common_teardown
}

@test "checkpoint sweep: best-checkpoint.json has DeepSpeed 0.19.5's keys and one of the grid's points" {
	local out=$SCRATCH/run
	run -0 --separate-stderr "$SWEEP" --workload checkpoint --grid "$GRID" --target "$SCRATCH/ckpt.pt" \
		--size "$S" --no-ceiling --out "$out"
	run -0 jq -c '[keys_unsorted, (.checkpoint | keys_unsorted), (.checkpoint.writer | keys_unsorted),
		(.aio | keys_unsorted)]' "$out/best-checkpoint.json"
	# runtime/model_checkpointing/config.py get_checkpoint_writer_config and
	# swap_tensor/aio_config.py get_aio_config at v0.19.5
	assert_output '[["deepspeed_versions","checkpoint","aio","reason"],["writer"],["type","io_buffer_size","io_buffer_double","show_statistics","data_parallel","decoupled","io_multiplier"],["block_size","queue_depth","intra_op_parallelism","single_submit","overlap_events","use_gds"]]'
	run -0 jq -r '[.checkpoint.writer.type, .checkpoint.writer.io_buffer_size, .checkpoint.writer.io_buffer_double,
		.aio.block_size, .aio.queue_depth, .aio.intra_op_parallelism, .aio.single_submit, .aio.overlap_events] | @tsv' \
		"$out/best-checkpoint.json"
	assert_output --regexp $'^fast\t(1048576|2097152)\t(true|false)\t262144\t4\t2\tfalse\ttrue$'
	# the pick is the best write of the run's checkpoint points
	run -0 jq -r '.best.write.point' "$out/aggregate.json"
	assert_output --regexp '^ckpt-io[12]m-(single|double)-b256k-q4-block-overlap-p2$'
	run -0 grep -c '^## DeepSpeed checkpoint config (best-checkpoint.json)$' "$out/report.md"
	assert_output 1
}

@test "checkpoint sweep: each point writes the whole file as FastFileWriter cuts it, fsync last" {
	local out=$SCRATCH/run p
	run -0 --separate-stderr "$SWEEP" --workload checkpoint --grid "$GRID" --target "$SCRATCH/ckpt.pt" \
		--size "$S" --no-ceiling --out "$out"
	run -0 jq -r '.points[] | select(.kind == "checkpoint") | .point' "$out/plan.json"
	assert_equal "${#lines[@]}" 4
	# the double 2 MiB buffer drains 1 MiB at a time, the single one 2 MiB
	p=$out/points/ckpt-io2m-double-b256k-q4-block-overlap-p2.r1
	run -0 jq -c '[.jobs[] | {jobname, bytes: .write.io_bytes, bs: ."job options".bs,
		fsync: ."job options".end_fsync}]' "$p/fio.json"
	assert_output '[{"jobname":"body","bytes":3145728,"bs":"1048576","fsync":"0"},{"jobname":"rem","bytes":1024,"bs":"1024","fsync":"0"},{"jobname":"tail","bytes":612,"bs":"612","fsync":"1"}]'
	run -0 jq -r '[.jobs[] | ."job options".bs] | first' \
		"$out/points/ckpt-io2m-single-b256k-q4-block-overlap-p2.r1/fio.json"
	assert_output 2097152
	# one handle, the file: its bytes over the sections' runtimes
	run -0 jq -r --argjson s "$S" '.handles | length == 1 and .[0].bytes == $s' "$p/result.json"
	assert_output true
	run -0 jq -r '(.handles[0].bytes / (.handles[0].runtime_ms / 1000) / 1e9) - .gbs | fabs < 1e-9' "$p/result.json"
	assert_output true
}

@test "checkpoint sweep: refusals are one line, exit 2" {
	local t=$SCRATCH/ckpt.pt
	run -2 --separate-stderr "$SWEEP" --workload checkpoint --rw read --target "$t" --dry-run
	assert_equal "$stderr" 'tswap-sweep: --workload checkpoint writes a file: --rw read (only write) (see --help)'
	run -2 --separate-stderr "$SWEEP" --workload tensors --target "$t" --dry-run
	assert_equal "$stderr" "tswap-sweep: --workload: tensor or checkpoint, not 'tensors' (see --help)"
	run -2 --separate-stderr "$SWEEP" --workload checkpoint --ranks 2 --target "$t" --dry-run
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "$stderr" 'tswap-sweep: --workload checkpoint: no --ranks (one file of --size bytes, libaio, once per repeat) (see --help)'
	run -2 --separate-stderr "$SWEEP" --workload checkpoint --ds-version 0.16.4 --target "$t" --dry-run
	assert_equal "$stderr" 'tswap-sweep: --workload checkpoint: DeepSpeed 0.16.4 has no FastFileWriter (from 0.17.1) (see --help)'
	run -2 --separate-stderr "$SWEEP" --workload checkpoint --grid quick --target "$t" --dry-run
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == 'tswap-sweep: grid quick: tensor is not a checkpoint key '* ]]
	run -2 --separate-stderr "$SWEEP" --grid "$GRID" --target "$t" --dry-run
	assert_equal "$stderr" 'tswap-sweep: grid tiny: io_buffer_size is a checkpoint key: only with --workload checkpoint (see --help)'
	[ ! -e "$t" ]
}

@test "checkpoint sweep: the built-in grid is the default, its points FastFileWriter accepts" {
	run -0 --separate-stderr "$SWEEP" --workload checkpoint --target "$SCRATCH/ckpt.pt" --no-ceiling \
		--repeat 1 --dry-run
	assert_output --partial 'grid checkpoint'
	# 16m 64m 256m x on off x 1m 8m x 8 32 x threads 1 2, the default file 1g
	run -0 grep -c '^### \[[0-9]*/48\] ckpt-io[0-9]*m-\(single\|double\)-' <<<"$output"
	assert_output 48
	[ ! -e "$SCRATCH/ckpt.pt" ]
}

@test "checkpoint sweep: killed after a point, --resume finishes it and writes best-checkpoint.json" {
	local rd=$SCRATCH/kill pid i n=0 st=0 f
	"$SWEEP" --workload checkpoint --grid "$GRID" --target "$SCRATCH/ckpt.pt" --size "$S" \
		--no-ceiling --out "$rd" >"$SCRATCH/kill.log" 2>&1 3>&- &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		n=$(find "$rd/points" -mindepth 2 -maxdepth 2 -name result.json 2>/dev/null | wc -l)
		[ "$n" -ge 1 ] && break
		sleep 0.05
	done
	[ "$n" -ge 1 ] || { kill "$pid"; fail "no point finished in 20 s"; }
	kill -TERM "$pid"
	wait "$pid" || st=$?
	assert_equal "$st" 143 # 128 + SIGTERM, before the last of the 4 points
	assert_file_not_exists "$rd/best-checkpoint.json"
	run -0 jq -r '.workload' "$rd/sweep.json"
	assert_output checkpoint
	mapfile -t finished < <(find "$rd/points" -mindepth 2 -maxdepth 2 -name result.json | sort)
	for f in "${finished[@]}"; do
		cp -p "$f" "$f.before"
	done
	# a run from before sweep.json kept the workload: its plan says it
	jq 'del(.workload)' "$rd/sweep.json" >"$SCRATCH/old.json"
	cp "$rd/sweep.json" "$SCRATCH/new.json"
	cp "$SCRATCH/old.json" "$rd/sweep.json"
	run -0 --separate-stderr "$SWEEP" --resume "$rd" --dry-run
	run -2 --separate-stderr "$SWEEP" --resume "$rd" --ds-version 0.16.4 --dry-run
	assert_equal "$stderr" 'tswap-sweep: --ds-version 0.16.4: a checkpoint run (--workload checkpoint), and DeepSpeed 0.16.4 has no FastFileWriter (from 0.17.1) (see --help)'
	jq '.workload = "tensor"' "$SCRATCH/new.json" >"$rd/sweep.json"
	run -3 --separate-stderr "$SWEEP" --resume "$rd" --dry-run
	assert_equal "$stderr" "tswap-sweep: $rd/sweep.json: workload: tensor, but the plan has checkpoint points (damaged or edited by hand)"
	cp "$SCRATCH/new.json" "$rd/sweep.json"
	run -0 --separate-stderr "$SWEEP" --resume "$rd"
	assert_equal "$(grep -c 'done earlier' <<<"$stderr")" "${#finished[@]}"
	for f in "${finished[@]}"; do
		cmp -s "$f" "$f.before" || fail "$f was rerun"
	done
	run -0 jq -r '[.points[] | select(.kind == "checkpoint")] | length' "$rd/plan.json"
	assert_output 4
	assert_equal "$(find "$rd/points" -mindepth 2 -maxdepth 2 -name result.json | wc -l)" 4
	run -0 jq -r '.checkpoint.writer.type' "$rd/best-checkpoint.json"
	assert_output fast
}

@test "checkpoint sweep: a user whose RLIMIT_MEMLOCK cannot hold a point's buffer is refused up front, exit 3" {
	# the grid's largest lock: io_buffer_size 2m, 2 MiB single or double
	# (tswap.plan.checkpoint.memlock_need: the engine's
	# tswap_fill mlock of bs, or 2 x bs double: engine/fill.c)
	[ "$(id -u)" -eq 0 ] || skip "requires root to run as uid 65534 under a chosen ulimit -l (setpriv)"
	command -v setpriv >/dev/null || skip "requires setpriv (util-linux) to drop root"
	local dir
	mkdir -p "$REPO/build/test-scratch"
	dir=$(mktemp -d "$REPO/build/test-scratch/memlock.XXXXXX")
	NR_DIR=$dir
	chmod 0777 "$dir"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$ENGINE" || skip "uid 65534 cannot read $ENGINE"
	# where uid 65534 can read it
	install -m 0644 "$GRID" "$dir/tiny.grid"
	# one page short: refused before the run directory or the target exists
	run -3 --separate-stderr bash -c 'ulimit -l 2044 && exec "$@"' - \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$SWEEP" --workload checkpoint --grid "$dir/tiny.grid" --target "$dir/ckpt.pt" --size "$S" --no-ceiling --out "$dir/run"
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "$stderr" "tswap-sweep: --workload checkpoint: point ckpt-io2m-single-b256k-q4-block-overlap-p2 needs 2097152 bytes of locked memory (tswap_fill mlocks its I/O buffer, as DeepSpeed's new_cpu_locked_tensor) but RLIMIT_MEMLOCK (ulimit -l) is 2093056 bytes and this user has no CAP_IPC_LOCK: raise ulimit -l to 2048 KiB or more, or sweep a smaller io_buffer_size"
	assert_file_not_exists "$dir/run"
	assert_file_not_exists "$dir/ckpt.pt"
	# exactly the need: every point locks its buffer and runs
	run -0 --separate-stderr bash -c 'ulimit -l 2048 && exec "$@"' - \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$SWEEP" --workload checkpoint --grid "$dir/tiny.grid" --target "$dir/ckpt.pt" --size "$S" --no-ceiling --out "$dir/run"
	assert_equal "$(jq '[.[] | select(.status == "ok")] | length' "$dir/run/results.json")" 4
	# --resume of it under the low limit (a point to run again): refused
	# the same way before anything is written
	rm -rf "$dir"/run/points/ckpt-io2m-single-*
	cp "$dir/run/results.json" "$dir/results.before"
	run -3 --separate-stderr bash -c 'ulimit -l 2044 && exec "$@"' - \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$SWEEP" --resume "$dir/run"
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^tswap-sweep: --workload checkpoint: point ckpt-io2m-single-.* needs 2097152 bytes of locked memory .*RLIMIT_MEMLOCK \\(ulimit -l\\) is 2093056 bytes"
	run -0 cmp "$dir/results.before" "$dir/run/results.json"
	# root (CAP_IPC_LOCK) is not limited: the same lock under 2044 KiB
	run -0 --separate-stderr bash -c 'ulimit -l 2044 && exec "$@"' - \
		"$SWEEP" --workload checkpoint --grid "$GRID" --target "$SCRATCH/ckpt.pt" --size "$S" --no-ceiling \
		--out "$SCRATCH/root"
	assert_equal "$(jq '[.[] | select(.status == "ok")] | length' "$SCRATCH/root/results.json")" 4
}
