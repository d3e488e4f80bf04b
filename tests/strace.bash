# shellcheck shell=bash
# status/output are set by bats' run; FIO_STDOUT is read by the tests.
# shellcheck disable=SC2034,SC2154
#
# tests/strace.bash - tracing fio's system calls and reading the trace:
# loaded by tests/helpers.bash (uses its fio_argv, show_fio), so every test
# file has it.
#
#   strace_fio LOG ARGS...     run_fio under strace -f, tracing the AIO calls
#                              (or $STRACE_SYSCALLS; STRACE_PATHS=1: -y)
#   strace_join LOG            "tid<TAB>call" lines, interrupted calls joined
#   aio_records LOG            one TSV record per AIO call
#   iocb_records LOG           one TSV record per accepted iocb (op, buf,
#                              off, len)
#   aio_check RECORDS Q NBLOCKS WINDOW SUBMIT   replay the records against
#                              the window/submit rules (design.md section
#                              1); violations + a summary line
#   summary_field SUMMARY NAME the value of NAME=... in a summary line
#   uring_strace_fio, uring_records, uring_check   the same for the
#                              io_uring calls (tswap_backend=io_uring)
#   traced_run, field, stats_hist   the pattern proof's traced write job,
#                              its summary fields and tswap_stats histograms

AIO_SYSCALLS=io_setup,io_submit,io_getevents,io_pgetevents

# strace_fio LOG ARGS... - run_fio under strace -f, to LOG; traces the
# AIO calls, or the calls listed in $STRACE_SYSCALLS. STRACE_PATHS=1
# adds -y: every descriptor printed with its path ("8</dir/file>"), as
# a descriptor number alone is per process (fio's main process and its
# job processes each have a descriptor 8, and fio's disk-util thread
# opens and closes /sys/block/DEV/stat every 250 ms).
strace_fio() {
	local log=$1
	local -a paths=()
	shift
	if [ "${STRACE_PATHS:-0}" = 1 ]; then
		paths=(-y)
	fi
	fio_argv "$ENGINE" "$@"
	FIO_ARGV=(strace -f -qq "${paths[@]}" -e signal=none -e "trace=${STRACE_SYSCALLS:-$AIO_SYSCALLS}"
		-o "$log" "${FIO_ARGV[@]}")
	run --separate-stderr "${FIO_ARGV[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "fio under strace failed (exit $status)"
	fi
}

# strace_join LOG - the lines of an `strace -f` log as "tid<TAB>call(...)
# = ret", with the "<unfinished ...>" / "<... resumed>" halves of a call
# that another thread interrupted joined back, in per-thread order.
strace_join() {
	awk '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	{
		tid = $1
		line = trim(substr($0, length($1) + 1))
		if (line ~ /<unfinished \.\.\.>$/) {
			sub(/ *<unfinished \.\.\.>$/, "", line)
			pending[tid] = line
			next
		}
		if (line ~ /^<\.\.\. [a-z_0-9]+ resumed>/) {
			sub(/^<\.\.\. [a-z_0-9]+ resumed> */, "", line)
			line = pending[tid] line
			delete pending[tid]
		}
		print tid "\t" line
	}' "$1"
}

# aio_records LOG - one TSV record per AIO call, in per-thread order:
#   tid  call  ctx  a  b  ret
# io_setup:            ctx = the new context, a = nr_events
# io_submit:           a = nr
# io_(p)getevents:     a = min_nr, b = nr  (both reported as io_getevents)
# ret is the return value (-1 on error).
aio_records() {
	strace_join "$1" | awk -F '\t' '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	{
		tid = $1
		line = $2
		if (line !~ /^io_(setup|submit|getevents|pgetevents)\(/)
			next
		call = line; sub(/\(.*/, "", call)
		args = line; sub(/^[a-z_]+\(/, "", args)
		ret = line; sub(/.*\) += /, "", ret); sub(/ .*/, "", ret)
		n = split(args, a, ",")
		for (i = 1; i <= n; i++) a[i] = trim(a[i])
		if (call == "io_setup") {
			ctx = a[2]; sub(/\].*/, "", ctx); sub(/^\[/, "", ctx)
			printf "%s\t%s\t%s\t%s\t-\t%s\n", tid, call, ctx, a[1], ret
		} else if (call == "io_submit") {
			printf "%s\t%s\t%s\t%s\t-\t%s\n", tid, call, a[1], a[2], ret
		} else {
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", tid, "io_getevents", a[1], a[2], a[3], ret
		}
	}'
}

# iocb_records LOG - one TSV record per iocb the kernel accepted (the
# first `ret` iocbs of each io_submit):
#   tid  ctx  op  buf  offset  nbytes
# op is PREAD or PWRITE; buf is the buffer address in decimal for reads
# ("-" for writes: strace prints their data, not the address).
iocb_records() {
	strace_join "$1" | awk -F '\t' '
	function hex(s,   i, c, v) {
		v = 0
		s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	$2 ~ /^io_submit\(/ {
		line = $2
		ctx = line; sub(/^io_submit\(/, "", ctx); sub(/,.*/, "", ctx)
		ret = line; sub(/.*\) += /, "", ret); sub(/ .*/, "", ret); ret += 0
		gsub(/aio_buf="([^"\\]|\\.)*"(\.\.\.)?/, "aio_buf=-", line)
		for (n = 0; n < ret && match(line, /\{aio_data=[^}]*\}/); n++) {
			iocb = substr(line, RSTART, RLENGTH)
			line = substr(line, RSTART + RLENGTH)
			op = iocb; sub(/.*aio_lio_opcode=IOCB_CMD_/, "", op); sub(/[^A-Z].*/, "", op)
			buf = iocb; sub(/.*aio_buf=/, "", buf); sub(/[,}].*/, "", buf)
			if (buf ~ /^0x/) buf = sprintf("%.0f", hex(buf))
			off = iocb; sub(/.*aio_offset=/, "", off); sub(/[^0-9].*/, "", off)
			len = iocb; sub(/.*aio_nbytes=/, "", len); sub(/[^0-9].*/, "", len)
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", $1, ctx, op, buf, off, len
		}
	}'
}

# aio_check RECORDS Q NBLOCKS WINDOW SUBMIT - replay the AIO calls per I/O
# context against design.md section 1 and print one line per violation,
# then a summary line:
#   summary setups=S submits=N waits=W blocks=B maxinflight=M parts=P
#           contexts=C bps=N:COUNT,... ias=N:COUNT,...
# (bps: histogram of blocks accepted per io_submit; ias: of blocks in
# flight in the context right after each io_submit; "-" when empty).
# NBLOCKS is the number of blocks of one part (ceil(bs/threads/B)).
# Rules checked, per context (one worker thread each):
#   - never more than Q blocks in flight;
#   - single: every io_submit has nr=1;
#   - block:  every io_submit has nr = min(Q - inflight, blocks left of the
#             part) (a partial submit resubmits the rest);
#   - the window is full before each wait (inflight == Q, or nothing left
#     of the part to submit);
#   - sequential: each wait has min_nr = nr = blocks in flight;
#   - overlap:    each wait has min_nr = 1, nr = blocks in flight.
aio_check() {
	awk -F '\t' -v Q="$2" -v NB="$3" -v WIN="$4" -v SUB="$5" '
	function bad(msg) { printf "VIOLATION line %d (%s): %s\n", NR, $0, msg; nbad++ }
	function hist(h,   k, s) {
		s = ""
		for (k = 0; k <= Q; k++) if (h[k] > 0) s = s (s == "" ? "" : ",") k ":" h[k]
		return s == "" ? "-" : s
	}
	$2 == "io_setup" {
		setups++
		if ($6 == 0) known[$3] = 1
		if ($4 != Q) bad("io_setup nr_events " $4 " != tswap_queue_depth " Q)
		next
	}
	$2 == "io_submit" {
		c = $3; submits++
		if (!(c in known)) bad("io_submit on a context no io_setup created")
		if ((c in owner) && owner[c] != $1) bad("context used by two threads: " owner[c] " and " $1)
		owner[c] = $1
		if (!(c in left)) { left[c] = 0; infl[c] = 0; nctx++ }
		if (left[c] == 0 && infl[c] == 0) { left[c] = NB; parts++ }
		if (SUB == "single" && $4 != 1) bad("submit=single but io_submit nr=" $4)
		want = Q - infl[c]; if (left[c] < want) want = left[c]
		if (SUB == "block" && !retry[c] && $4 != want)
			bad("submit=block: io_submit nr=" $4 ", expected min(Q - inflight, left) = " want)
		retry[c] = 0
		if ($6 + 0 >= 0) {
			infl[c] += $6; left[c] -= $6; blocks += $6
			if ($6 < $4) retry[c] = 1
			bps[$6 + 0]++; ias[infl[c]]++
		}
		if (infl[c] > Q) bad("inflight " infl[c] " > Q " Q)
		if (infl[c] > maxinfl) maxinfl = infl[c]
		next
	}
	$2 == "io_getevents" {
		c = $3; waits++
		if (!(infl[c] == Q || left[c] == 0))
			bad("waiting with the window not full: inflight " infl[c] ", left " left[c])
		if (WIN == "sequential" && ($4 != infl[c] || $5 != infl[c]))
			bad("window=sequential: io_getevents min_nr=" $4 " nr=" $5 ", inflight " infl[c])
		if (WIN == "overlap" && ($4 != 1 || $5 != infl[c]))
			bad("window=overlap: io_getevents min_nr=" $4 " nr=" $5 ", expected 1 and inflight " infl[c])
		if ($6 + 0 > 0) infl[c] -= $6
		next
	}
	END {
		for (c in infl) if (infl[c] != 0) { printf "VIOLATION: context %s ends with %d blocks in flight\n", c, infl[c] }
		printf "summary setups=%d submits=%d waits=%d blocks=%d maxinflight=%d parts=%d contexts=%d bps=%s ias=%s\n", setups, submits, waits, blocks, maxinfl, parts, nctx, hist(bps), hist(ias)
	}' "$1"
}

# summary_field SUMMARY NAME - the value of NAME=... in an aio_check or
# uring_check summary.
summary_field() {
	local kv
	for kv in $1; do
		if [ "${kv%%=*}" = "$2" ]; then
			printf '%s\n' "${kv#*=}"
			return 0
		fi
	done
	return 1
}

# --- io_uring ---------------------------------------------------------------

URING_SYSCALLS=io_uring_setup,io_uring_enter,io_uring_register

# uring_strace_fio LOG ARGS... - run_fio under strace -f, io_uring calls only.
uring_strace_fio() {
	local log=$1
	shift
	requires strace
	STRACE_SYSCALLS=$URING_SYSCALLS strace_fio "$log" --tswap_backend=io_uring "$@"
}

# uring_records LOG - one TSV record per io_uring call, in per-thread order
# ("<unfinished ...>" / "<... resumed>" pairs joined first):
#   tid  io_uring_setup     ring(=ret)  entries  flags        ret
#   tid  io_uring_enter     ring        to_submit min_complete flags  ret
#   tid  io_uring_register  ring        opcode   nr           ret
uring_records() {
	strace_join "$1" | awk -F '\t' '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	{
		tid = $1
		line = $2
		if (line !~ /^io_uring_(setup|enter|register)\(/)
			next
		call = line; sub(/\(.*/, "", call)
		ret = line; sub(/.*\) += /, "", ret); sub(/ .*/, "", ret)
		args = line; sub(/^[a-z_]+\(/, "", args)
		if (call == "io_uring_setup") {
			flags = "0"
			if (match(args, /flags=[A-Z_|0-9x]+/))
				flags = substr(args, RSTART + 6, RLENGTH - 6)
			n = split(args, a, ",")
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, ret, trim(a[1]), flags, ret
		} else if (call == "io_uring_enter") {
			n = split(args, a, ",")
			for (i = 1; i <= n; i++) a[i] = trim(a[i])
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, a[1], a[2], a[3], a[4], ret
		} else {
			n = split(args, a, ",")
			nr = trim(a[n]); sub(/\).*/, "", nr)
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, trim(a[1]), trim(a[2]), nr, ret
		}
	}'
}

# uring_check RECORDS Q NBLOCKS WINDOW SUBMIT - replay the io_uring calls per
# ring against design.md section 1; one line per violation, then
#   summary rings=R submits=N waits=W blocks=B maxsubmit=M fullwaits=F
#           wakeups=K threads=T tsh=N:COUNT,... mch=N:COUNT,...
# (tsh: histogram of to_submit of the submitting io_uring_enter calls; mch:
# of min_complete of the waiting ones; fullwaits: sequential waits whose
# min_complete is the whole batch).  NBLOCKS is the number of blocks of one
# part.  Completions taken from the CQ ring without a system call are
# invisible to strace, so the rules are those that hold regardless:
#   - every ring is used by one thread only;
#   - single: every submitting io_uring_enter has to_submit = 1;
#   - block+sequential: to_submit = min(Q, blocks left of the part);
#   - block+overlap: 1 <= to_submit <= Q;
#   - sequential: each wait has 1 <= min_complete <= the batch just
#     submitted (less when some CQEs were already in the CQ ring; with
#     SQPOLL, where submitting is no system call, <= Q);
#   - overlap: each wait has min_complete = 1;
#   - a wait never submits, a submit never waits (IOPOLL excepted).
uring_check() {
	awk -F '\t' -v Q="$2" -v NB="$3" -v WIN="$4" -v SUB="$5" '
	function bad(msg) { printf "VIOLATION line %d (%s): %s\n", NR, $0, msg; nbad++ }
	function hist(h,   k, s) {
		s = ""
		for (k = 0; k <= 4096; k++) if (h[k] > 0) s = s (s == "" ? "" : ",") k ":" h[k]
		return s == "" ? "-" : s
	}
	$2 == "io_uring_setup" {
		if ($6 + 0 >= 0) {
			rings++; known[$3] = 1
			iopoll[$3] = ($5 ~ /IOPOLL/); sqpoll[$3] = ($5 ~ /SQPOLL/)
		}
		if ($4 != Q) bad("io_uring_setup entries " $4 " != tswap_queue_depth " Q)
		next
	}
	$2 == "io_uring_enter" {
		c = $3; ts = $4 + 0; mc = $5 + 0; fl = $6; r = $7 + 0
		if (!(c in known)) bad("io_uring_enter on a ring no io_uring_setup created")
		if (ts > 0) {
			if ((c in owner) && owner[c] != $1) bad("ring used by two threads: " owner[c] " and " $1)
			owner[c] = $1
			if (!(c in left)) { left[c] = 0; nctx++; tids[$1] = 1 }
			if (fl ~ /SQ_WAKEUP/) { wakeups++; next }
			if (mc != 0 && !iopoll[c]) bad("a submitting io_uring_enter also waits")
			submits++
			if (waited[c]) { batch[c] = 0; waited[c] = 0 }
			if (left[c] == 0) left[c] = NB
			if (SUB == "single" && ts != 1) bad("submit=single but to_submit=" ts)
			want = Q; if (left[c] < want) want = left[c]
			if (SUB == "block" && WIN == "sequential" && !retry[c] && ts != want)
				bad("submit=block window=sequential: to_submit=" ts ", expected min(Q, left) = " want)
			if (ts > Q) bad("to_submit " ts " > Q " Q)
			retry[c] = 0
			if (r >= 0) {
				if (r < ts) retry[c] = 1
				left[c] -= r; blocks += r; batch[c] += r; tsh[r]++
				if (r > maxsub) maxsub = r
			}
			next
		}
		if (fl ~ /GETEVENTS/) {
			if ((c in owner) && owner[c] != $1) bad("ring used by two threads: " owner[c] " and " $1)
			waits++; mch[mc]++
			if (WIN == "overlap" && mc != 1) bad("window=overlap: min_complete=" mc ", expected 1")
			# With SQPOLL the batches are not system calls: only Q bounds.
			if (WIN == "sequential" && sqpoll[c] && (mc < 1 || mc > Q))
				bad("window=sequential: min_complete=" mc ", Q " Q)
			if (WIN == "sequential" && !sqpoll[c]) {
				if (mc < 1 || mc > batch[c]) bad("window=sequential: min_complete=" mc ", batch " batch[c])
				if (mc == batch[c]) full++
			}
			waited[c] = 1
		}
		next
	}
	END {
		nt = 0; for (t in tids) nt++
		printf "summary rings=%d submits=%d waits=%d blocks=%d maxsubmit=%d fullwaits=%d wakeups=%d threads=%d tsh=%s mch=%s\n", rings, submits, waits, blocks, maxsub, full, wakeups, nt, hist(tsh), hist(mch)
	}' "$1"
}

# --- the pattern proof (tests/patterns.bats, tests/uring-pattern.bats) -------

# traced_run NAME SIZE BS Q THREADS SUBMIT WINDOW NB [fio args...] - a write
# job under strace with tswap_stats on $TRACE_BACKEND (libaio, the default,
# or io_uring), its calls replayed by aio_check or uring_check; NB is the
# number of blocks of one part. Leaves:
#   $REC      the TSV records file     $STATS  the stats JSON file
#   $SUMMARY  the check's summary line (the test fails on any violation)
#   $FIO_STDOUT  fio's report
traced_run() {
	local name=$1 size=$2 bs=$3 q=$4 threads=$5 submit=$6 window=$7 nb=$8
	shift 8
	local log=$SCRATCH/$name.strace check calls
	local -a job
	REC=$SCRATCH/$name.tsv
	STATS=$SCRATCH/$name.stats.json
	rm -f "$SCRATCH/$name.file"
	job=(--filename="$SCRATCH/$name.file" --size="$size" --bs="$bs"
		--rw=write --tswap_block_size=1m --tswap_queue_depth="$q"
		--tswap_threads="$threads" --tswap_submit="$submit"
		--tswap_window="$window" --tswap_stats="$STATS" "$@")
	case ${TRACE_BACKEND:-libaio} in
	libaio)
		strace_fio "$log" "${job[@]}"
		FIO_STDOUT=$output
		aio_records "$log" >"$REC"
		check=$(aio_check "$REC" "$q" "$nb" "$window" "$submit")
		calls=AIO
		;;
	io_uring)
		uring_strace_fio "$log" "${job[@]}"
		FIO_STDOUT=$output
		uring_records "$log" >"$REC"
		check=$(uring_check "$REC" "$q" "$nb" "$window" "$submit")
		calls=io_uring
		;;
	*) fail "traced_run: TRACE_BACKEND=$TRACE_BACKEND: libaio or io_uring" ;;
	esac
	if grep -q '^VIOLATION' <<<"$check"; then
		printf '%s\n' "$check" >&2
		fail "$name: the $calls calls break the $submit/$window pattern (Q=$q, $nb blocks per part)"
	fi
	SUMMARY=$(grep '^summary' <<<"$check")
	echo "# $name: $SUMMARY" >&3
}

# field NAME - a field of $SUMMARY.
field() { summary_field "$SUMMARY" "$1"; }

# stats_hist KEY - the histogram KEY of $STATS (blocks_per_submit,
# inflight_at_submit) as the checks' summaries write one: N:COUNT,... of
# the nonzero entries, by N; "-" when there are none.
stats_hist() {
	jq -r --arg k "$1" '[.[$k] | to_entries[] | select(.value > 0)
		| {k: (.key | tonumber), v: .value}] | sort_by(.k)
		| map("\(.k):\(.v)") | join(",") | if . == "" then "-" else . end' "$STATS"
}

# --- FastPersist checkpoint writes (tests/fastpersist.bats) ----------------

FP_SYSCALLS=openat,close,write,pwrite64,lseek,fsync,fdatasync,ftruncate,fallocate,io_submit,io_getevents,io_pgetevents

# fp_records LOG FILE - the I/O on the path FILE in a log of `strace -f -y
# -e trace=$FP_SYSCALLS` (-y: every descriptor printed with its path, so
# no descriptor is followed across threads, whose lines strace may print
# out of order), in the log's order, one TSV record per event:
#   open   FLAGS          openat of FILE; FLAGS sorted, O_CLOEXEC and
#                         O_LARGEFILE dropped (e.g. O_CREAT|O_DIRECT|O_WRONLY)
#   aio    CTX OFF LEN    one accepted PWRITE iocb on FILE
#   reap   CTX N          io_getevents/io_pgetevents returning N on CTX
#   write  OFF LEN        write/pwrite64 of LEN bytes; OFF from the last
#                         lseek, "append" on an O_APPEND descriptor
#   fsync  CALL           fsync or fdatasync of FILE
#   resize CALL           ftruncate or fallocate of FILE
#   close
# ("<unfinished ...>" and "<... resumed>" halves are joined first, so a
# call sits where it ended).
fp_records() {
	strace_join "$1" | awk -F '\t' -v path="$2" '
	function flags(s,   n, a, i, j, x, out, k, t) {
		n = split(s, a, "|"); out = ""; k = 0
		for (i = 1; i <= n; i++)
			if (a[i] != "O_CLOEXEC" && a[i] != "O_LARGEFILE") t[++k] = a[i]
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
			if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
		for (i = 1; i <= k; i++) out = out (i > 1 ? "|" : "") t[i]
		return out
	}
	function ret(s) { sub(/.*\) += /, "", s); sub(/[ <].*/, "", s); return s + 0 }
	BEGIN { tag = "<" path ">" }
	{
		line = $2
		if (line ~ /^openat\(/) {
			if (index(line, "\"" path "\"") == 0) next
			r = ret(line)
			if (r < 0) next
			f = line; sub(/^openat\([^,]*, "[^"]*", /, "", f); sub(/[,)].*/, "", f)
			app[r] = (f ~ /O_APPEND/); pos[r] = 0
			print "open\t" flags(f)
			next
		}
		if (line ~ /^(close|fsync|fdatasync|ftruncate|fallocate|lseek|write|pwrite64)\(/) {
			a = line; sub(/^[a-z0-9]+\(/, "", a)
			if (substr(a, index(a, "<"), length(tag)) != tag) next
			d = a; sub(/<.*/, "", d); d += 0
			call = line; sub(/\(.*/, "", call)
			if (call == "close") { print "close"; next }
			if (call == "fsync" || call == "fdatasync") { print "fsync\t" call; next }
			if (call == "ftruncate" || call == "fallocate") { print "resize\t" call; next }
			if (call == "lseek") { pos[d] = ret(line); next }
			n = ret(line)
			if (call == "pwrite64") {
				o = line; sub(/, [0-9]+\) += .*/, "", o); sub(/.*, /, "", o)
				print "write\t" o "\t" n
			} else {
				print "write\t" (app[d] ? "append" : pos[d]) "\t" n
				pos[d] += n
			}
			next
		}
		if (line ~ /^io_(p)?getevents\(/) {
			c = line; sub(/^io_p?getevents\(/, "", c); sub(/,.*/, "", c)
			print "reap\t" c "\t" ret(line)
			next
		}
		if (line ~ /^io_submit\(/) {
			c = line; sub(/^io_submit\(/, "", c); sub(/,.*/, "", c)
			r = ret(line)
			gsub(/aio_buf="([^"\\]|\\.)*"(\.\.\.)?/, "aio_buf=-", line)
			for (k = 0; k < r && match(line, /\{aio_data=[^}]*\}/); k++) {
				iocb = substr(line, RSTART, RLENGTH)
				line = substr(line, RSTART + RLENGTH)
				if (index(iocb, "aio_fildes=") == 0 || index(iocb, tag) == 0 || iocb !~ /IOCB_CMD_PWRITE/)
					continue
				o = iocb; sub(/.*aio_offset=/, "", o); sub(/[^0-9].*/, "", o)
				l = iocb; sub(/.*aio_nbytes=/, "", l); sub(/[^0-9].*/, "", l)
				print "aio\t" c "\t" o "\t" l
			}
		}
	}'
}

# fp_expect S IO_BUFFER_SIZE DOUBLE THREADS BLOCK - the PWRITE iocbs
# DeepSpeed's FastFileWriter issues for a file of S bytes, one "OP OFF LEN"
# line each, by operation then thread then block (deepspeed/io:
# drains of H = IO_BUFFER_SIZE or half of it, the aligned rest, each cut
# by the handle into THREADS parts of blocks of BLOCK; the tail is no iocb).
fp_expect() {
	awk -v S="$1" -v B="$2" -v D="$3" -v P="$4" -v BS="$5" 'BEGIN {
		A = P * 512; H = D ? B / 2 : B
		n = 0
		for (off = 0; off + H <= S; off += H) { o[n] = off; w[n] = H; n++ }
		rest = S - off; a = rest - rest % A
		if (a > 0) { o[n] = off; w[n] = a; n++ }
		for (j = 0; j < n; j++) {
			part = w[j] / P
			for (t = 0; t < P; t++)
				for (b = 0; b < part; b += BS)
					printf "%d %.0f %.0f\n", j, o[j] + t * part + b, (part - b < BS ? part - b : BS)
		}
	}'
}

# fp_check RECORDS EXPECT - the aio records of RECORDS (fp_records) against
# EXPECT (fp_expect): the same iocbs (offset, length), each exactly once,
# and one operation in flight at a time: no iocb of an operation is
# submitted while an iocb of another is in flight in any context.  One
# line per violation, then
#   summary iocbs=N ops=K bytes=B maxops=M
fp_check() {
	awk -v EXP="$2" '
	BEGIN {
		while ((getline l < EXP) > 0) {
			split(l, x, " ")
			key = x[2] " " x[3]; op[key] = x[1]; want[key]++; nwant++
		}
	}
	function bad(msg) { printf "VIOLATION line %d (%s): %s\n", NR, $0, msg }
	$1 == "aio" {
		key = $3 " " $4
		if (!(key in want)) { bad("an iocb DeepSpeed does not issue"); next }
		if (++got[key] > want[key]) bad("iocb issued twice")
		k = op[key]; seen[k] = 1; bytes += $4; n++
		for (c in infl) if (infl[c] > 0 && cur[c] != k)
			bad("operation " k " submitted while operation " cur[c] " is in flight")
		cur[$2] = k; infl[$2]++
		next
	}
	$1 == "reap" { infl[$2] -= $3; next }
	END {
		for (key in want) if (got[key] < want[key]) printf "VIOLATION: iocb %s never issued\n", key
		nops = 0; for (k in seen) nops++
		printf "summary iocbs=%d ops=%d bytes=%d want=%d\n", n, nops, bytes, nwant
	}' "$1"
}
