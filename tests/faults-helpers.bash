# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # bats sets $status; FIO_TIMEOUT and BG_* are read by helpers.bash and the tests
# tests/faults-helpers.bash - what tests/faults-device.bats and
# tests/faults-sys.bats share (loaded after helpers.bash): their setup and
# teardown with an undo list, and fio run in the background (bg_*).
#
# Everything a test changes (sysctls, dm devices, FUSE mounts and their
# servers, loop devices, mounts, background fio) is undone in teardown,
# also when the test fails; every fio runs under `timeout`.

FIO_TIMEOUT=${TSWAP_FIO_TIMEOUT:-60}

setup() {
	common_setup
	UNDO_LIST=$SCRATCH.undo
	: >"$UNDO_LIST"
}

# Undo this file's own changes (newest first), then the common ones
# (mounts, loop devices) that they may sit on.
teardown() {
	local kind a b
	if [ -f "${UNDO_LIST:-}" ]; then
		while IFS=$'\t' read -r kind a b; do
			case "$kind" in
			pid) kill -KILL "$a" 2>/dev/null || true ;;
			fuse)
				umount "$a" 2>/dev/null || umount -l "$a" 2>/dev/null || true
				kill -KILL "$b" 2>/dev/null || true
				;;
			dm) DM_DISABLE_UDEV=1 timeout 30 dmsetup remove --noudevsync --retry "$a" >/dev/null 2>&1 || true ;;
			sysctl) printf '%s\n' "$b" >"$a" || true ;;
			esac
		done < <(tac "$UNDO_LIST")
		rm -f "$UNDO_LIST"
	fi
	common_teardown
}

# undo KIND A [B]: what teardown undoes, newest first: pid PID (killed),
# fuse MOUNTPOINT SERVER_PID, dm NAME, sysctl PATH VALUE.
undo() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$UNDO_LIST"
}

# json_out - fio's JSON document from $output (fio may print lines before it).
json_out() {
	sed -n '/^{/,$p' <<<"$output"
}

# bg_fio OUT ARGS... - start fio (with the engine, under timeout) in the
# background; $BG_PID is timeout's pid (its exit status is fio's).
bg_fio() {
	local out=$1
	shift
	fio_argv "$ENGINE" "$@"
	"${FIO_ARGV[@]}" </dev/null >"$out.out" 2>"$out.err" 3>&- &
	BG_PID=$!
	undo pid "$BG_PID"
}

# bg_job_pid - the pid of fio's job process under $BG_PID, waiting up to
# 20 s for it to run with at least $1 threads (the engine's workers).
bg_job_pid() {
	local want=${1:-1} i fio job n
	for i in $(seq 200); do
		fio=$(pgrep -P "$BG_PID" -x fio | head -n 1 || true)
		job=
		if [ -n "$fio" ]; then
			job=$(pgrep -P "$fio" -x fio | head -n 1 || true)
		fi
		if [ -n "$job" ]; then
			n=$(find "/proc/$job/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
			if [ "$n" -ge "$want" ]; then
				BG_FIO=$fio
				BG_JOB=$job
				return 0
			fi
		fi
		sleep 0.1
	done
	fail "fio's job process did not start with $want threads"
}

# bg_wait - wait for $BG_PID; sets $status and $BG_SECS.
bg_wait() {
	local t0=$SECONDS
	status=0
	wait "$BG_PID" || status=$?
	BG_SECS=$((SECONDS - t0))
}

bg_show() {
	{
		printf 'fio exit status: %s after %ss\ncommand: %s\n' "$status" "${BG_SECS:-?}" "${FIO_ARGV[*]}"
		printf -- '--- stderr\n'
		clip <"$1.err"
		printf -- '--- stdout\n'
		clip <"$1.out"
	} >&2
}
