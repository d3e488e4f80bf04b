# shellcheck shell=bash
# util.sh - messages, numbers and sizes: the small pure helpers every
# module uses.
#
# Owns: say/warn/warn_once/die (stdout, stderr, exit codes),
# note (the report's notes), need_tools, fio size notation (szname),
# dirname_into, abspath, fmt_secs, py (a stage of the Python package).
# Reads: PROG, RUN. Writes: NOTES, RUN/notes.txt (note), WARNED (warn_once).

say() { printf '%s\n' "$*"; }

warn() { printf '%s: %s\n' "$PROG" "$*" >&2; }

# warn_once MESSAGE: warn, the first time this process gives MESSAGE (a
# target checked again before it is prepared is warned about once).
declare -gA WARNED=()
warn_once() {
	[ -z "${WARNED[$1]:-}" ] || return 0
	WARNED[$1]=1
	warn "$1"
}

die() { # die CODE MESSAGE...
	local code=$1
	shift
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit "$code"
}

note() {
	NOTES+=("$1")
	[ -z "$RUN" ] || printf '%s\n' "$1" >>"$RUN/notes.txt"
}

need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || die "$EXIT_ERROR" "$t is not installed (make deps)"
	done
}

# py STAGE ARGS...: a stage of the sweep's Python package (SWEEP_HOME/tswap,
# `python3 -m tswap STAGE`: its docstring lists the stages), run by
# Debian's python3 (PATH's python3 where there is none), isolated (-I:
# the user's PYTHONPATH and site-packages are not read; -S: no site
# module), writing no bytecode (-B: an installed tree stays as dpkg put
# it, a checkout clean); SIGINT blocked until the code has given it its
# default action, as in tswap-sweep (a ^C while a stage starts is exit
# 130, no traceback or "Fatal Python error").
py() {
	local python=/usr/bin/python3
	[ -x "$python" ] || python=python3
	env --block-signal=INT "$python" -I -S -B -c "$PY_MAIN" "$SWEEP_HOME" "$@"
}

# the code py runs
PY_MAIN='import _signal
_signal.signal(_signal.SIGINT, _signal.SIG_DFL)
_signal.pthread_sigmask(_signal.SIG_UNBLOCK, (_signal.SIGINT,))
import sys; sys.path.insert(0, sys.argv.pop(1)); from tswap.__main__ import main; sys.exit(main())'

# szname VAR N: the shortest exact fio notation of N bytes (1048576 -> 1m)
# into VAR, without a subshell (hot loops; tswap.plan.values bytes_to_size).
szname() {
	local -n _out=$1
	local n=$2
	if ((n >= 1 << 30 && n % (1 << 30) == 0)); then
		_out="$((n >> 30))g"
	elif ((n >= 1 << 20 && n % (1 << 20) == 0)); then
		_out="$((n >> 20))m"
	elif ((n >= 1 << 10 && n % (1 << 10) == 0)); then
		_out="$((n >> 10))k"
	else
		_out=$n
	fi
}

# dirname_into VAR PATH: `dirname -- PATH` into VAR, without a process
# (coreutils: trailing slashes dropped, then the last part and the
# slashes before it; "." without a slash, "/" for the root).
dirname_into() {
	local -n _dn=$1
	local p=$2
	while [[ $p == */ && $p != / ]]; do p=${p%/}; done
	if [[ $p != */* ]]; then
		_dn=.
		return 0
	fi
	p=${p%/*}
	while [[ $p == */ ]]; do p=${p%/}; done
	_dn=${p:-/}
}

# abspath PATH: absolute path without resolving symlinks of the last part.
abspath() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$PWD/$1" ;;
	esac
}

# fmt_secs N [VAR] -> M:SS or H:MM:SS (into VAR: no subshell)
fmt_secs() {
	local s=$1 t
	if ((s >= 3600)); then
		printf -v t '%d:%02d:%02d' "$((s / 3600))" "$((s % 3600 / 60))" "$((s % 60))"
	else
		printf -v t '%d:%02d' "$((s / 60))" "$((s % 60))"
	fi
	if [ -n "${2:-}" ]; then printf -v "$2" '%s' "$t"; else printf '%s' "$t"; fi
}
