# shellcheck shell=bash
# status/output are set by bats' run.
# shellcheck disable=SC2154
#
# tests/strace.bash - tracing fio's system calls and reading the trace:
# loaded by tests/helpers.bash (uses its fio_argv, show_fio), so every test
# file has it.
#
#   strace_fio LOG ARGS...     run_fio under strace -f, tracing the AIO calls
#                              (or $STRACE_SYSCALLS)
#   strace_join LOG            "tid<TAB>call" lines, interrupted calls joined
#   aio_records LOG            one TSV record per AIO call
#   iocb_records LOG           one TSV record per accepted iocb (op, buf,
#                              off, len)
#   aio_check RECORDS Q NBLOCKS WINDOW SUBMIT   replay the records against
#                              the window/submit rules (design.md section
#                              1); violations + a summary line
#   summary_field SUMMARY NAME the value of NAME=... in a summary line

AIO_SYSCALLS=io_setup,io_submit,io_getevents,io_pgetevents

# strace_fio LOG ARGS... - run_fio under strace -f, to LOG; traces the
# AIO calls, or the calls listed in $STRACE_SYSCALLS.
strace_fio() {
	local log=$1
	shift
	fio_argv "$ENGINE" "$@"
	FIO_ARGV=(strace -f -qq -e signal=none -e "trace=${STRACE_SYSCALLS:-$AIO_SYSCALLS}"
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

# summary_field SUMMARY NAME - the value of NAME=... in an aio_check summary.
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
