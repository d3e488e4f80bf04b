# shellcheck shell=bash
# sweep/zero/common.sh - what tswap-zero's modules share beyond the helpers
# of sweep/lib/util.sh (say, warn, die, sourced first by sweep/tswap-zero).
#
# Owns: PROG and the exit codes, usage_error (tswap-zero's messages carry no
# "(see --help)" suffix, unlike tswap-sweep's), parse_count (the CLI's
# element counts), zero_check_step_dtype, zero_check_path, zero_claim_out/zero_release_out (the
# --out folder), zero_find_engine. Reads: $SCRIPT_DIR, $ZERO_LIB (set by
# sweep/tswap-zero), $TSWAP_ENGINE. Writes: --out's claim file
# .tswap-zero-out.

# shellcheck disable=SC2034 # the constants: read by util.sh and the other modules
readonly PROG=tswap-zero EXIT_USAGE=2 EXIT_ERROR=3
# Replay size unit, bytes: the DIO offset alignment the replay rounds each
# tensor up to (4096: NVMe's usual logical block; tswap checks the real one).
readonly ZERO_DIO_UNIT=4096
# At most this many model tensors (--params / --param-numel) in a plan.
readonly ZERO_MAX_TENSORS=50000
# fio's limit on jobs in one run (fio.h REAL_MAX_JOBS).
readonly ZERO_FIO_MAX_JOBS=4096

# usage_error MESSAGE...: one line, exit EXIT_USAGE (2); replaces util.sh's,
# which adds "(see --help)".
usage_error() { die "$EXIT_USAGE" "$*"; }

# parse_count OPTION VALUE MIN [MAX]: an element count written as an integer
# or in e notation (13e9, 1.3e9) -> the integer on stdout; one line and exit
# 2 if it is not a whole number in [MIN, MAX] (MAX default 9e15).
parse_count() {
	local opt=$1 val=$2 min=$3 max=${4:-} n
	if ! [[ $val =~ ^[0-9]+(\.[0-9]+)?([eE][+]?[0-9]+)?$ ]]; then
		usage_error "$opt=$val: not a number (an element count, e.g. 13e9)"
	fi
	if [[ $val =~ ^[0-9]{1,15}$ ]]; then
		# plain digits below 1e15: the number itself (base 10, leading
		# zeros dropped), without starting jq
		n=$((10#$val))
	else
		n=$(jq -n --arg v "$val" '$v | tonumber | if . == floor and . < 9e15 then . else "x" end') ||
			usage_error "$opt=$val: not a number"
	fi
	[[ $n =~ ^[0-9]+$ ]] || usage_error "$opt=$val: must be a whole number below 9e15"
	((n >= min)) || usage_error "$opt=$val: must be at least $min"
	[ -z "$max" ] || ((n <= max)) || usage_error "$opt=$val: must be at most $max"
	printf '%s\n' "$n"
}

# zero_check_step_dtype STEP DTYPE: refuse (exit 2) a --step other than
# steady, first, init and a --dtype other than "", fp32, fp16, bf16.
zero_check_step_dtype() {
	case $1 in
	steady | first | init) ;;
	*) usage_error "--step=$1: one of steady, first, init" ;;
	esac
	case $2 in
	"" | fp32 | fp16 | bf16) ;;
	*) usage_error "--dtype=$2: one of fp32, fp16, bf16" ;;
	esac
}

# zero_find_engine: tswap.so: $TSWAP_ENGINE, build/tswap.so in a checkout,
# else PREFIX/lib/fio/tswap.so next to the installed script.
zero_find_engine() {
	local c d b
	for c in "${TSWAP_ENGINE:-}" "$SCRIPT_DIR/../build/tswap.so" "$SCRIPT_DIR/../lib/fio/tswap.so"; do
		if [ -n "$c" ] && [ -f "$c" ]; then
			d=$(dirname -- "$c")
			b=$(basename -- "$c")
			(cd -- "$d" && printf '%s/%s\n' "$PWD" "$b")
			return 0
		fi
	done
	return 1
}

# zero_check_path OPTION PATH: refuse (exit 2) a path fio's job-file parser
# would change or split: '${' (fio expands environment variables), ':'
# (fio's file name separator), control characters (a newline ends the line).
zero_check_path() {
	local opt=$1 p=$2
	# shellcheck disable=SC2016 # a literal '${'
	[[ $p != *'${'* ]] || usage_error "$opt $p: '\${' cannot be used (fio expands \${VAR} in job files)"
	[[ $p != *:* ]] || usage_error "$opt $p: ':' cannot be used (fio's file name separator)"
	[[ $p != *[[:cntrl:]]* ]] || usage_error "$opt: a control character (newline, tab, ...) in a path cannot be used"
}

# zero_claim_out DIR: make DIR (a new folder, or an existing empty one) this
# run's output folder, atomically: DIR/.tswap-zero-out is created with
# noclobber, so a second run on the same DIR is refused. Refuses (exit 2) a
# DIR that is not a directory or holds anything. Nothing of the user's is
# written to or replaced.
ZERO_OUT="" ZERO_OUT_MADE=0
zero_claim_out() {
	local d=$1 v
	if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then
		usage_error "--out $d: not a directory (a new or empty folder for plan.json, the fio jobs and results)"
	fi
	[ -d "$d" ] || ZERO_OUT_MADE=1
	mkdir -p -- "$d" 2>/dev/null || usage_error "--out $d: cannot create it"
	# an unreadable folder counts as empty here, as it always has
	v=$(find "$d" -mindepth 1 -maxdepth 1 -print -quit 2>/dev/null) || true
	if [ -n "$v" ]; then
		usage_error "--out $d: not empty (tswap-zero writes only into a new or empty folder)"
	fi
	(set -C && : >"$d/.tswap-zero-out") 2>/dev/null ||
		usage_error "--out $d: another tswap-zero run is using it"
	ZERO_OUT=$d
	trap zero_release_out EXIT
}

# zero_release_out: on an exit before plan.json exists (a refused input),
# give the --out folder back as it was: the claim removed, the folder too
# if this run made it. Run as the EXIT trap until the plan is written.
zero_release_out() {
	[ -n "$ZERO_OUT" ] && [ ! -e "$ZERO_OUT/plan.json" ] || return 0
	rm -f -- "$ZERO_OUT/.tswap-zero-out" "$ZERO_OUT/plan.json.tmp"
	if ((ZERO_OUT_MADE)); then rmdir -- "$ZERO_OUT" 2>/dev/null || true; fi
}
