#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# The engine as fio sees it: option help, the README example, a clean
# stdout for --output-format=json, and make install / uninstall.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "fio --enghelp lists every tswap option with its help text" {
	run -0 timeout 60 fio --enghelp="$ENGINE"
	local opt
	for opt in "${TSWAP_OPTIONS[@]}"; do
		assert_line --regexp "^[[:space:]]*${opt}[[:space:]]*: *[^[:space:]]"
	done
}

@test "fio --enghelp=ENGINE,OPTION shows one option with its default" {
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_queue_depth"
	assert_line --regexp '^[[:space:]]*tswap_queue_depth[[:space:]]*:'
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: 8$'
	run -0 timeout 60 fio --enghelp="$ENGINE,tswap_block_size"
	assert_line --regexp '^[[:space:]]*default[[:space:]]*: (1[mM]|1048576)$'
}

@test "the README example runs and reports both directions" {
	local f=$SCRATCH/swapfile
	rm -f "$f"
	fio_ok --filename="$f" --size=64m --bs=8m --iodepth=2 --rw=write \
		--tswap_block_size=1m --tswap_queue_depth=4 --tswap_submit=block \
		--tswap_window=overlap --tswap_threads=2
	assert_regex "$output" "WRITE: bw=.*io=64.0MiB"
	fio_ok --filename="$f" --size=64m --bs=8m --iodepth=2 --rw=read \
		--tswap_block_size=1m --tswap_queue_depth=4 --tswap_submit=block \
		--tswap_window=overlap --tswap_threads=2
	assert_regex "$output" "READ: bw=.*io=64.0MiB"
	# Nothing from the engine on stderr when all is well.
	assert_equal "$stderr" ""
}

@test "the defaults are DeepSpeed's aio defaults (B=1m, Q=8, block, overlap, 1 thread, libaio)" {
	local st=$SCRATCH/defaults.json
	rm -f "$SCRATCH/f"
	fio_ok --filename="$SCRATCH/f" --size=4m --bs=2m --rw=write --tswap_stats="$st"
	run -0 jq -r '"\(.backend) \(.block_size) \(.queue_depth) \(.submit) \(.window) \(.threads)"' "$st"
	assert_output "libaio 1048576 8 block overlap 1"
}

@test "tswap_stats: fio's \$jobname and \$jobnum (filename_format) and \$filename as one path component" {
	local d=$SCRATCH/st fname
	mkdir "$d"
	rm -f "$SCRATCH/f"
	fio_ok --filename="$SCRATCH/f" --size=8m --bs=1m --rw=write --numjobs=2 --offset_increment=4m \
		--tswap_stats="$d/"'$jobname.$JobNum.$filename.json'
	assert_equal "$stderr" ""
	# $filename: the job's file with '/' made '_' (no path outside $d)
	fname=${SCRATCH#/}/f
	fname=${fname//\//_}
	run -0 find "$d" -type f -printf '%P\n'
	assert_equal "$(sort <<<"$output")" "$(printf 'swap.0.%s.json\nswap.1.%s.json' "$fname" "$fname")"
	jq -e '.job == "swap" and .jobnum == 1 and .operations == 8' "$d/swap.1.$fname.json" >/dev/null || fail "$(cat "$d/swap.1.$fname.json")"
	# other '$' stay, as in fio's filename_format
	fio_ok --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write --tswap_stats="$d/"'a$b.json'
	assert_file_exists "$d/a\$b.json"
}

@test "--output-format=json: stdout is one JSON document; fio's slat, clat, lat are per operation" {
	rm -f "$SCRATCH/f"
	fio_ok --filename="$SCRATCH/f" --size=8m --bs=2m --iodepth=2 --rw=write \
		--output-format=json --tswap_block_size=512k --tswap_threads=2 \
		--tswap_stats="$SCRATCH/st.json"
	# 4 operations of 2m, each with a submission latency (the commit hook
	# sets issue_time and calls io_u_queued) and a completion latency, and
	# lat = slat + clat.
	run -0 jq -r '.jobs[0] | "\(.jobname) \(.error) \(.write.total_ios) \(.write.slat_ns.N) \(.write.clat_ns.N)",
		(.write | (.slat_ns.min > 0 and .clat_ns.min > 0
			and ((.lat_ns.mean - .slat_ns.mean - .clat_ns.mean) | fabs) <= 0.01 * .lat_ns.mean))' <<<"$output"
	assert_output "$(printf 'swap 0 4 4 4\ntrue')"
}

@test "fio's completion latency is per tensor: one sample per bs, whatever the blocks" {
	rm -f "$SCRATCH/f"
	# fio times each io_u it queues, and an io_u is one tensor (bs), cut
	# into tswap_block_size blocks inside the engine: 16m as two 8m
	# tensors of 8 blocks is 2 completions and 2 latency samples, as 16
	# 1m tensors is 16 (what the engine accounts, not the wall clock)
	fio_ok --filename="$SCRATCH/f" --size=16m --bs=8m --rw=write --output-format=json \
		--tswap_block_size=1m --tswap_queue_depth=1 --tswap_window=sequential \
		--tswap_stats="$SCRATCH/big.json"
	run -0 jq -r '.jobs[0].write | "\(.total_ios) \(.clat_ns.N) \(.io_bytes)"' <<<"$output"
	assert_output "2 2 16777216"
	run -0 jq -r '"\(.operations) \(.blocks)"' "$SCRATCH/big.json"
	assert_output "2 16"
	fio_ok --filename="$SCRATCH/f" --size=16m --bs=1m --rw=write --output-format=json \
		--tswap_block_size=1m --tswap_queue_depth=1 --tswap_window=sequential
	run -0 jq -r '.jobs[0].write | "\(.total_ios) \(.clat_ns.N)"' <<<"$output"
	assert_output "16 16"
}

@test "make install PREFIX=DIR then make uninstall PREFIX=DIR" {
	local prefix=$SCRATCH/prefix
	run -0 timeout 300 make -C "$REPO" --no-print-directory install PREFIX="$prefix"
	assert_file_exists "$prefix/lib/fio/tswap.so"
	run -0 cmp "$ENGINE" "$prefix/lib/fio/tswap.so"
	# The installed engine loads.
	run -0 timeout 60 fio --enghelp="$prefix/lib/fio/tswap.so"
	assert_output --partial tswap_block_size
	local n
	if [ -d "$REPO/jobs" ]; then
		n=$(find "$REPO/jobs" -name '*.fio' | wc -l)
		if [ "$n" -gt 0 ]; then
			assert_dir_exists "$prefix/share/tswap/jobs"
			assert_equal "$(find "$prefix/share/tswap/jobs" -name '*.fio' | wc -l)" "$n"
		fi
	fi
	if [ -f "$REPO/sweep/tswap-sweep" ]; then
		assert_file_executable "$prefix/bin/tswap-sweep"
		# The installed sweep finds its modules, Python package and grids,
		# also through a symlink from elsewhere.
		assert_file_exists "$prefix/share/tswap/lib/meta-collect.sh"
		assert_file_exists "$prefix/share/tswap/tswap/stats/aggregate.py"
		# with the bytecode of the python3 the tools start (-B writes none)
		local tag
		tag=$(/usr/bin/python3 -c 'import sys; print(sys.implementation.cache_tag)')
		assert_file_exists "$prefix/share/tswap/tswap/cli/__pycache__/sweep_main.$tag.pyc"
		mkdir -p "$SCRATCH/bin"
		ln -s "$prefix/bin/tswap-sweep" "$SCRATCH/bin/tswap-sweep"
		local via
		for via in "$prefix/bin/tswap-sweep" "$SCRATCH/bin/tswap-sweep"; do
			run -0 "$via" --list-grids
			assert_output --partial quick
			# the default engine is the installed one, found from the
			# script's real directory
			run -0 "$via" --grid quick --rw read --target "$SCRATCH/t" --dry-run
			assert_output --partial "TSWAP_ENGINE=$(readlink -f "$prefix")/lib/fio/tswap.so "
		done
	fi
	run -0 timeout 300 make -C "$REPO" --no-print-directory uninstall PREFIX="$prefix"
	assert_file_not_exists "$prefix/lib/fio/tswap.so"
	assert_file_not_exists "$prefix/bin/tswap-sweep"
	assert_dir_not_exists "$prefix/share/tswap"
	assert_dir_not_exists "$prefix/lib/fio"
}

@test "the engine exports exactly one dynamic symbol: ioengine" {
	run -0 nm -D --defined-only "$ENGINE"
	run -0 awk '$2 ~ /^[TDBRVW]$/ { print $3 }' <<<"$output"
	assert_output ioengine
}

@test "ramp_time: tswap_stats counts exactly the operations fio reports (read.total_ios), not the ramp's" {
	local f=$SCRATCH/ramp.dat st=$SCRATCH/ramp.json P be
	rm -f "$f"
	fio_ok --filename="$f" --size=8m --bs=1m --rw=write
	for be in libaio io_uring; do
		# io_uring when the kernel allows it (tests/uring.bats says why not).
		if [ "$be" = io_uring ] &&
			[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
			continue
		fi
		for P in 1 2; do
			rm -f "$st"
			# Rate-limited so that the 1 s ramp holds about 100
			# operations, whichever the machine's load.
			fio_ok --filename="$f" --size=8m --bs=256k --iodepth=2 --rw=read \
				--ramp_time=1 --time_based --runtime=1 --rate=25m \
				--tswap_backend="$be" --tswap_threads="$P" \
				--tswap_block_size=64k --tswap_stats="$st" --output-format=json
			local ios
			ios=$(jq -r '.jobs[0].read.total_ios' <<<"$output")
			[ "$ios" -gt 0 ] || fail "fio reported no I/O: $ios"
			run -0 jq -r --argjson n "$ios" '[
				.operations == $n,
				.op_latency_us.count == $n,
				.blocks == 4 * $n,
				.bytes == 262144 * $n,
				.parts == '"$P"' * $n,
				.elapsed_s > 0.5 and .elapsed_s < 3,
				.gbs < 0.05] | all' "$st"
			[ "$output" = true ] || fail "$be P=$P: fio total_ios=$ios, stats: $(cat "$st")"
		done
	done
}
