#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2034,SC2154,SC2030,SC2031  # literal $(...) on purpose; FIO_TIMEOUT is read by helpers; bats sets $stderr, $output, $status
#
# The bad-input battery of issue 7 (docs/reliability.md): every engine
# option at and beyond its limits (0, 1, max, max+1, negative, garbage,
# huge, empty) and combinations (threads > blocks, block size > tensor
# size, queue depth > blocks, parts not aligned...), each on a verified
# write job.  Every run must end one of two ways:
#
#   ok      fio exits 0 with verify=crc32c, verify_fatal=1 clean;
#   reject  fio exits non-zero before any I/O, with one `tswap: JOB: ...`
#           line or fio's own `fio: failed parsing ...`;
#
# never a crash (exit 134/139), a timeout, a failure after I/O started, or
# more than one engine line.  Each case has its expected outcome ("either"
# where both are fine); the test walks the whole table, prints one line per
# case (bats --verbose-run, or the log on failure) and fails listing every
# case that broke the rule.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

FIO_TIMEOUT=${TSWAP_FIO_TIMEOUT:-60}
BAD=()
NCASE=0

uring_ok() {
	[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]
}

# outcome - classify the last run: ok, reject, or "BAD: why".
outcome() {
	local ntswap
	if [ "$status" -eq 0 ]; then
		echo ok
		return
	fi
	if [ "$status" -ge 124 ]; then
		echo "BAD: killed or timed out (exit $status)"
		return
	fi
	if grep -Eq 'AddressSanitizer|runtime error|double free|Segmentation|Assertion|got signal' <<<"$stderr"; then
		echo "BAD: crashed: $(grep -Em1 'AddressSanitizer|runtime error|double free|Segmentation|Assertion|got signal' <<<"$stderr")"
		return
	fi
	if grep -Eq '^ *(READ|WRITE): bw=' <<<"$output" || grep -Eq '^(verify:|fio: io_u error)' <<<"$stderr"; then
		echo "BAD: failed after I/O started: $(grep -Em1 '^(verify:|fio: io_u error)|: err=' <<<"$stderr$output")"
		return
	fi
	ntswap=$(grep -c '^tswap: ' <<<"$stderr" || true)
	if [ "$ntswap" -gt 1 ]; then
		echo "BAD: $ntswap engine lines"
		return
	fi
	if [ "$ntswap" -eq 1 ] || grep -q '^fio: failed parsing ' <<<"$stderr"; then
		echo reject
		return
	fi
	echo "BAD: failed without a tswap: or 'fio: failed parsing' line (exit $status)"
}

# case EXPECT ARGS... - one run of the verified job with ARGS appended.
case_() {
	local expect=$1 got line shown
	shift
	NCASE=$((NCASE + 1))
	rm -f "$SCRATCH/f" "$SCRATCH"/stats*.json
	run_fio --filename="$SCRATCH/f" --size=4m --bs=1m --rw=write --iodepth=2 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@"
	got=$(outcome)
	line=$(grep -m1 -E '^(tswap: |fio: failed parsing )' <<<"$stderr" || true)
	shown="$*"
	[ "${#shown}" -le 200 ] || shown="${shown:0:200}..."
	[ "${#line}" -le 240 ] || line="${line:0:240}..."
	printf '# [%d] expect %-6s got %-6s %s%s\n' "$NCASE" "$expect" "$got" "$shown" "${line:+ => $line}" >&3
	case "$got" in
	BAD:*) BAD+=("[$NCASE] $shown: $got") ;;
	"$expect") ;;
	*)
		if [ "$expect" != either ]; then
			BAD+=("[$NCASE] $shown: expected $expect, got $got${line:+ ($line)}")
		fi
		;;
	esac
}

# bytes SIZE - 512, 12k, 3m in bytes.
bytes() {
	case "$1" in
	*k) echo $((${1%k} * 1024)) ;;
	*m) echo $((${1%m} * 1048576)) ;;
	*) echo "$1" ;;
	esac
}

report() {
	if [ "${#BAD[@]}" -gt 0 ]; then
		printf '%s\n' "${BAD[@]}" >&2
		fail "${#BAD[@]} of $NCASE cases broke the rule"
	fi
}

@test "battery: every engine option at and beyond its limits: verified, or one line at init, never a crash or a hang" {
	local v o max
	max=$(cat /proc/sys/fs/aio-max-nr)

	# tswap_block_size: bytes, a multiple of the DIO alignment, at most
	# the kernel's per-I/O maximum (2 GiB less a page); any size above a
	# part is one block per part.
	for v in 512 4k 1m 2m 1g 2147479552; do case_ ok --tswap_block_size="$v"; done
	# Negative and fractional sizes are refused, not wrapped or truncated
	# (-4k was 2^64 - 4096, 1.5k was 1).
	for v in 0 1 511 1000 -1 -4k 1.5k 4.5m 1x abc "" 18446744073709551615 18446744073709551616 99999999999999999999k 2g 16g; do
		case_ reject --tswap_block_size="$v"
	done

	# tswap_queue_depth: 1..fs.aio-max-nr (libaio), 1..32768 (io_uring);
	# never wrapped (2^32 + 8 ran with 8) or truncated (1.5 ran with 1).
	for v in 1 2 7 64 0x10; do case_ ok --tswap_queue_depth="$v"; done
	for v in 0 -1 1.5 4294967295 4294967296 4294967304 $((max + 1)) 1x abc ""; do case_ reject --tswap_queue_depth="$v"; done
	# At fs.aio-max-nr itself: tests/faults-sys.bats (one context of that
	# depth takes the whole system-wide limit, so that file runs alone).

	# tswap_threads: 1..1024, bs divisible, parts aligned.
	for v in 1 2 4 8 1024; do case_ ok --tswap_threads="$v"; done
	for v in 0 -1 1025 3 1.5 2.0 4294967296 4294967297 18446744073709551617 abc ""; do case_ reject --tswap_threads="$v"; done

	# The enumerations.
	for v in block single; do case_ ok --tswap_submit="$v"; done
	for v in overlap sequential; do case_ ok --tswap_window="$v"; done
	for o in tswap_submit tswap_window tswap_backend; do
		for v in bogus "" BLOCK 'block;true' '$(touch x)'; do case_ reject --"$o=$v"; done
	done
	case_ ok --tswap_backend=libaio

	# io_uring-only options: refused on libaio (tswap_sqpoll_idle too).
	for o in sqpoll iopoll fixedbufs registerfiles; do
		case_ reject --tswap_"$o"=1
		case_ ok --tswap_"$o"=0
	done
	for v in 0 1000; do case_ reject --tswap_sqpoll_idle="$v"; done
	for v in 2 yes bogus ""; do case_ reject --tswap_sqpoll="$v"; done

	# tswap_stats: a path; %j %n %p %% escapes; the directory must be
	# writable at init, and the path must name a file.
	case_ ok --tswap_stats="$SCRATCH/stats.json"
	case_ ok --tswap_stats="$SCRATCH/stats-%j-%n-%p-%%.json"
	# Quotes, spaces and command substitutions are only characters.
	case_ ok --tswap_stats="$SCRATCH/stats a b'\"\$(touch pwned)\`touch pwned\`;-x.json"
	[ -f "$SCRATCH/stats a b'\"\$(touch pwned)\`touch pwned\`;-x.json" ] ||
		BAD+=("tswap_stats: the file with the literal name was not written")
	[ ! -e pwned ] && [ ! -e "$SCRATCH/pwned" ] || BAD+=("tswap_stats: a \$(...) in the path was executed")
	case_ reject --tswap_stats="$SCRATCH"
	case_ reject --tswap_stats="$SCRATCH/"
	case_ reject --tswap_stats="$SCRATCH/no/such/dir/stats.json"
	case_ reject --tswap_stats="$SCRATCH/stats-%x.json"
	case_ reject --tswap_stats="$SCRATCH/stats-%"
	case_ reject --tswap_stats="$SCRATCH/$(printf 'x%.0s' $(seq 5000))"
	case_ reject --tswap_stats="$SCRATCH/$(printf 'x%.0s' $(seq 300))/stats.json"

	if uring_ok; then
		for v in 1 2 32768; do case_ ok --tswap_backend=io_uring --tswap_queue_depth="$v"; done
		for v in 0 32769 4294967295; do case_ reject --tswap_backend=io_uring --tswap_queue_depth="$v"; done
		for o in sqpoll fixedbufs registerfiles; do
			case_ ok --tswap_backend=io_uring --tswap_"$o"=1
		done
		for v in 0 1 2147483647; do
			case_ ok --tswap_backend=io_uring --tswap_sqpoll=1 --tswap_sqpoll_idle="$v"
		done
		for v in abc -1 1.5 2147483648 4294967295 4294967297; do
			case_ reject --tswap_backend=io_uring --tswap_sqpoll=1 --tswap_sqpoll_idle="$v"
		done
		# A file on a device without poll queues.
		case_ either --tswap_backend=io_uring --tswap_iopoll=1
		case_ ok --tswap_backend=io_uring --tswap_threads=1024 --tswap_queue_depth=1
	fi
	report
}

@test "battery: combinations (threads > blocks, block > tensor, queue depth > blocks, odd sizes): verified, or one line at init" {
	local align P B Q bs be n=0 expect bsb Bb
	# The engine's own word on the scratch file's DIO alignment.
	run_fio --filename="$SCRATCH/f" --size=1m --bs=1m --rw=write --tswap_block_size=1
	align=$(sed -n 's/.*(\([0-9]*\) bytes for .*/\1/p' <<<"$stderr")
	[ -n "$align" ] || { show_fio; fail "cannot read the DIO alignment from the engine's message"; }
	echo "# DIO alignment of the scratch file: $align" >&3

	for bs in 12k 3m; do
		for P in 1 3 8 64; do
			for B in 512 12k 4m; do
				# Queue depth and backend alternate over the grid.
				n=$((n + 1))
				Q=1
				if [ $((n % 2)) -eq 0 ]; then Q=64; fi
				be=libaio
				if [ $((n / 2 % 2)) -eq 1 ] && uring_ok; then be=io_uring; fi
				bsb=$(bytes "$bs")
				Bb=$(bytes "$B")
				expect=ok
				if [ $((bsb % P)) -ne 0 ] || [ $((bsb / P % align)) -ne 0 ] || [ $((Bb % align)) -ne 0 ]; then
					expect=reject
				fi
				case_ "$expect" --bs="$bs" --size=$((2 * bsb)) --tswap_threads="$P" \
					--tswap_block_size="$B" --tswap_queue_depth="$Q" --tswap_backend="$be"
			done
		done
	done
	# iodepth above what the workers can take at once; random sizes.
	case_ ok --bs=1m --iodepth=64 --rw=randwrite --tswap_threads=4 --tswap_queue_depth=1
	case_ ok --bsrange=4k-1m --rw=randwrite --tswap_threads=2 --tswap_block_size=4k
	case_ ok --bssplit=4k/50:1m/50 --rw=randwrite --tswap_threads=2
	case_ ok --bs=1m --numjobs=3 --offset_increment=4m --tswap_threads=2 \
		--tswap_stats="$SCRATCH/stats-%j-%n.json"
	# bs=1m over 1024 threads: 1 KiB parts, one 512-byte-aligned block each.
	case_ ok --bs=1m --size=1m --tswap_threads=1024 --tswap_block_size=512
	# bsrange whose smallest bs is not divisible by the threads.
	case_ reject --bsrange=4k-1m --rw=randwrite --tswap_threads=3
	case_ reject --direct=0
	report
}
