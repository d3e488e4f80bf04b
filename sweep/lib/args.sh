# shellcheck shell=bash
# args.sh - the command line: --help and the options.
#
# Owns: usage, parse_args (every option, its value's syntax and which
# options go together), gbs_check, paths_check (the directories of
# --compare, --emit-jobs and --resume, before anything runs). Reads: the
# arguments, those directories. Writes: the settings globals
# of state.sh (TARGET, SIZE, GRID, ..., SWEEP_OPTS_SEEN); --help and
# --list-grids print and exit 0; a bad option exits 2 (usage_error).
# shellcheck disable=SC2034 # sets the settings of state.sh, read by the other modules

usage() {
	cat <<'EOF'
Usage: tswap-sweep [OPTIONS]

Run a grid of tswap fio jobs against a file or block device and report the
best tensor-swap settings, as a table, plots and a DeepSpeed "aio" config.

Target and sizes
  --target PATH        file or block device (default: build/scratch/tswap.swap
                       in the checkout, ./tswap-scratch.swap when installed);
                       several, comma separated: ranks go round-robin over them
  --size SIZE          bytes of the target to use (default: the grid's size,
                       else 1g; capped at a block device's size)
  --engine PATH        tswap.so (default: $TSWAP_ENGINE, build/tswap.so in
                       the checkout, or PREFIX/lib/fio/tswap.so)

Grid
  --grid NAME|FILE     quick (default), deepspeed, deepspeed-0.17,
                       deepspeed-full, full, or a grid file (format:
                       docs/sweep.md)
  --list-grids         print the built-in grids and exit
  --rw LIST            directions, comma separated: read,write,readwrite
                       (readwrite: a read and a write handle at once)
  --ranks LIST         swappers at once, each its own handle and file, e.g.
                       1,2,4 (default 1)
  --backend LIST       libaio,io_uring
  --tensor-size LIST   tensor sizes (fio bs), e.g. 64m,400m
  --runtime SEC        seconds per point, time based (default: the grid's)
  --ramp SEC           ramp seconds before each point is measured
  --io-size SIZE       bytes per point and handle instead of a runtime (no
                       ramp); at least the largest tensor size
  --repeat N           run every point N times, 1-100 (median and CV in the report)
  --no-ceiling         skip the fio libaio device-ceiling runs
  --fixed-runtime      run every point for the whole runtime: no fio
                       steady-state detection (default: steadystate=bw_slope:2%,
                       ss_dur=5 s, capped by the runtime, when the runtime is
                       at least ramp + 7 s; a point that never attains it is
                       flagged "not steady")
  --precondition       before the first write point, write the target
                       sequentially twice (fio libaio, direct, 1m blocks);
                       default for write points on a block device
  --no-precondition    do not precondition
  --budget SEC         end within SEC seconds of wall time (whole seconds):
                       successive halving: every point short, the faster
                       half of each direction goes on, measured twice as
                       long, until 2 are left, measured with 3 repeats
                       (docs/sweep.md "Budget"); refused when SEC cannot
                       run every point once (the minimum is said). Default
                       for a grid whose exhaustive run would take more
                       than an hour (said on stderr)
  --exhaustive         every point, every repeat, never a default budget

Run directory
  --out DIR            run directory (default: build/sweep/DATE-TIME in the
                       checkout, ./tswap-sweep-DATE-TIME when installed)
  --resume DIR         finish an interrupted run in DIR without redoing
                       finished points (the run's own settings are used)
  --compare DIR        also write compare.md: this run against run DIR, per
                       point, with the ratio (--resume NEW --compare OLD
                       compares two finished runs)
  --dry-run            print the points and their job files; run nothing

Pass/fail
  --min-read-gbs X     exit 1 unless the best read reaches X GB/s (1e9 B/s,
                       X > 0)
  --min-write-gbs X    exit 1 unless the best write reaches X GB/s

DeepSpeed
  --ds-version X       best-aio.json with the aio keys DeepSpeed X reads
                       (MAJOR.MINOR[.PATCH], 0.3.15 to 0.19.5): thread_count
                       before 0.16.4, intra_op_parallelism from it; use_gds
                       from 0.15.0 (default: 0.19.5)

Safety
  --destructive        allow writes to a block device (destroys its data)
  --force              with --destructive: write even to a device that is
                       mounted, in use (held, claimed, a loop device on
                       it), or holds a filesystem or partition table
                       signature, or to a file a loop device is on

Fleet (docs/fleet.md)
  --hosts FILE         run every point on all hosts of FILE at once through
                       fio's client mode (`fio --server` on each host); one
                       host per line: HOST[,PORT] [target=PATH] [engine=PATH]
                       [name=LABEL] [FIO_OPTION=VALUE...]
                       --target is the default target path on the hosts;
                       --engine defaults to PREFIX/lib/fio/tswap.so
                       (/usr/local/lib/fio/tswap.so from a checkout)
  --outlier-pct N      flag hosts more than N% below the fleet median
                       (default 20)
  --connect-timeout S  seconds for a host to answer the probe (default 10)
  --host-timeout S     seconds a host may take for a point beyond its ramp
                       and runtime (default 120)
  --fio-version VER    fio version every host must run (default: this
                       machine's `fio --version`)
  --junit FILE         also copy the JUnit XML (RUN/junit.xml) to FILE

  --emit-jobs DIR      write the grid as fio job files DIR/GRID-DIR.fio
                       (used by `make jobs`) and exit
  -q, --quiet          no progress lines on stderr (results still on stdout)
  --version            print the tswap, engine and fio versions and exit
  -h, --help           this help

Exit codes: 0 pass; 1 threshold missed (fleet: a host below the bar or an
outlier); 2 usage error or refused target; 3 run error (a point failed, a
host failed or was unreachable, fio or the engine missing); 4 no trustworthy
point (every point with a result is flagged: above the ceiling, failed, CV,
not steady; best-aio.json then has no aio block); 128 + the signal when
stopped by one (130 SIGINT, 143 SIGTERM, 129 SIGHUP; finished points are
kept: --resume DIR).

Every run records what it measured (device, firmware, hashed serial, PCIe
link, NUMA node, I/O scheduler and queue limits, filesystem, host and
versions) in RUN/meta.json, sweep.json, aggregate.json and report.md.
EOF
}

# secs_max OPT VALUE: a whole number of seconds above SECS_MAX (a week)
# is refused, the limit named (a typo, not a plan: fio would run for years)
secs_max() {
	local max=$SECS_MAX
	[[ $2 =~ ^[0-9]+$ ]] || return 0
	if ! [[ $2 =~ ^0*[0-9]{1,6}$ ]] || ((10#$2 > max)); then
		usage_error "$1: at most $max s (a week): $2"
	fi
}

parse_args() {
	local opt val v
	while [ "$#" -gt 0 ]; do
		opt=$1
		val=
		case $opt in
		--*=*)
			val=${opt#*=}
			opt=${opt%%=*}
			shift
			set -- "$opt" "$val" "$@"
			;;
		esac
		case $opt in
		-h | --help)
			usage
			exit "$EXIT_OK"
			;;
		--version)
			print_version "$PROG"
			exit "$EXIT_OK"
			;;
		--dry-run) DRY_RUN=1 ;;
		--exhaustive)
			EXHAUSTIVE=1
			SWEEP_OPTS_SEEN=1
			;;
		-q | --quiet) QUIET=1 ;;
		--destructive) DESTRUCTIVE=1 ;;
		--force) FORCE=1 ;;
		--no-ceiling)
			CEILING=0
			SWEEP_OPTS_SEEN=1
			;;
		--fixed-runtime)
			FIXED_RUNTIME=1
			SWEEP_OPTS_SEEN=1
			;;
		--precondition | --no-precondition)
			v=on
			[ "$opt" = --precondition ] || v=off
			[ "$PRECONDITION" = auto ] || [ "$PRECONDITION" = "$v" ] ||
				usage_error "--precondition and --no-precondition exclude each other"
			PRECONDITION=$v
			SWEEP_OPTS_SEEN=1
			;;
		--list-grids)
			list_grids
			exit "$EXIT_OK"
			;;
		--target | --size | --grid | --rw | --ranks | --backend | --tensor-size | --runtime | --ramp | \
			--io-size | --repeat | --out | --resume | --min-read-gbs | --min-write-gbs | \
			--compare | --engine | --emit-jobs | --hosts | --outlier-pct | --connect-timeout | \
			--host-timeout | --junit | --fio-version | --ds-version | --budget)
			[ "$#" -ge 2 ] || usage_error "$opt needs a value"
			val=$2
			shift
			case $opt in
			--target)
				[ -n "$val" ] || usage_error "--target: an empty path"
				TARGET=$val
				;;
			--size) SIZE=$val ;;
			--grid) GRID=$val ;;
			--rw) RW_OPT=$val ;;
			--ranks) RANKS_OPT=$val ;;
			--backend) BACKEND_OPT=$val ;;
			--tensor-size) TENSOR_OPT=$val ;;
			--runtime) RUNTIME=$val ;;
			--ramp) RAMP=$val ;;
			--io-size) IO_SIZE=$val ;;
			--repeat) REPEAT=$val ;;
			--out)
				[ -n "$val" ] || usage_error "--out: an empty path"
				# a symlink: its directory, under the same rule (new or empty)
				v=${val%"${val##*[!/]}"}
				if [ -L "${v:-/}" ]; then
					val=$(readlink -m -- "$v") || usage_error "--out $v: a symlink that does not resolve"
				fi
				OUT=$val
				;;
			--resume) RESUME=$val ;;
			--min-read-gbs | --min-write-gbs)
				# empty would turn the bar off: a CI's unset variable
				[ -n "$val" ] || usage_error "$opt: empty; a positive number of GB/s (1e9 B/s, e.g. 2.5)"
				if [ "$opt" = --min-read-gbs ]; then MIN_READ=$val; else MIN_WRITE=$val; fi
				;;
			--compare) COMPARE=$val ;;
			--engine) ENGINE=$val ;;
			--emit-jobs)
				[ -n "$val" ] || usage_error "--emit-jobs: an empty path"
				EMIT_DIR=$val
				;;
			--hosts) HOSTS_FILE=$val ;;
			--outlier-pct) OUTLIER_PCT=$val ;;
			--connect-timeout) CONNECT_TIMEOUT=$val ;;
			--host-timeout) HOST_TIMEOUT=$val ;;
			--junit) JUNIT_OUT=$val ;;
			--fio-version) FIO_WANT=$val ;;
			--ds-version)
				[ -n "$val" ] || usage_error "--ds-version: empty; a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4)"
				DS_VERSION=$val
				;;
			--budget)
				[ -n "$val" ] || usage_error "--budget: not a positive whole number of seconds: ''"
				BUDGET=$val
				;;
			esac
			case $opt in
			--target | --size | --grid | --rw | --ranks | --backend | --tensor-size | --runtime | --ramp | --io-size | --repeat | --out | --engine | --hosts | --budget)
				SWEEP_OPTS_SEEN=1
				;;
			esac
			;;
		*) usage_error "unknown argument '$opt'" ;;
		esac
		shift
	done
	gbs_check --min-read-gbs "$MIN_READ"
	gbs_check --min-write-gbs "$MIN_WRITE"
	secs_max --runtime "$RUNTIME"
	secs_max --budget "$BUDGET"
	secs_max --ramp "$RAMP"
	[ -z "$RUNTIME" ] || { is_uint "$RUNTIME" && ((10#$RUNTIME >= 1)); } || usage_error "--runtime: not a positive integer: $RUNTIME"
	[ -z "$BUDGET" ] || { is_uint "$BUDGET" && ((10#$BUDGET >= 1)); } || usage_error "--budget: not a positive whole number of seconds: $BUDGET"
	[ -z "$BUDGET" ] || BUDGET=$((10#$BUDGET))
	[ -z "$RUNTIME" ] || RUNTIME=$((10#$RUNTIME))
	[ -z "$BUDGET" ] || [ "$EXHAUSTIVE" = 0 ] || usage_error "--budget and --exhaustive exclude each other"
	[ -z "$RAMP" ] || is_uint "$RAMP" || usage_error "--ramp: not an integer: $RAMP"
	[ -z "$RAMP" ] || RAMP=$((10#$RAMP))
	# digits first, then the limit (a long number is too many, not garbage)
	[ -z "$REPEAT" ] || [[ $REPEAT =~ ^[0-9]+$ ]] || usage_error "--repeat: not a positive integer: $REPEAT"
	[ -z "$REPEAT" ] || { [[ $REPEAT =~ ^0*[0-9]{1,3}$ ]] && ((10#$REPEAT <= REPEAT_MAX)); } ||
		usage_error "--repeat: at most $REPEAT_MAX passes over the grid: $REPEAT"
	[ -z "$REPEAT" ] || ((10#$REPEAT >= 1)) || usage_error "--repeat: not a positive integer: $REPEAT"
	if [ -n "$IO_SIZE" ]; then
		v=$(size_to_bytes "$IO_SIZE") || usage_error "--io-size: not a size: $IO_SIZE"
		((v > 0)) || usage_error "--io-size: must not be 0"
	fi
	if [ -n "$DS_VERSION" ]; then
		[[ $DS_VERSION =~ ^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,3}))?$ ]] ||
			usage_error "--ds-version: not a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4): ${DS_VERSION//$'\n'/\\n}"
		# from 0.3.15 (the aio section) to the newest known: tswap.plan.deepspeed
		v=$(py ds-release --check -- "$DS_VERSION" 2>&1) || usage_error "${v#tswap: }"
	fi
	[ -z "$SIZE" ] || size_to_bytes "$SIZE" >/dev/null || usage_error "--size: not a size: $SIZE"
	[ -z "$IO_SIZE" ] || [ -z "$RUNTIME" ] || usage_error "--runtime and --io-size exclude each other"
	if [ -n "$OUTLIER_PCT" ]; then
		{ is_number "$OUTLIER_PCT" && [[ $OUTLIER_PCT =~ ^0*([0-9]{0,2}([.][0-9]+)?|100([.]0+)?)$ ]]; } ||
			usage_error "--outlier-pct: not a percentage from 0 to 100: $OUTLIER_PCT"
	fi
	[ -z "$CONNECT_TIMEOUT" ] || { is_uint "$CONNECT_TIMEOUT" && ((10#$CONNECT_TIMEOUT >= 1)); } ||
		usage_error "--connect-timeout: not a positive integer: $CONNECT_TIMEOUT"
	[ -z "$HOST_TIMEOUT" ] || { is_uint "$HOST_TIMEOUT" && ((10#$HOST_TIMEOUT >= 1)); } ||
		usage_error "--host-timeout: not a positive integer: $HOST_TIMEOUT"
	if [ -n "$RESUME" ] && [ "$SWEEP_OPTS_SEEN" = 1 ]; then
		usage_error "--resume uses the run's own settings (and hosts); only --min-read-gbs, --min-write-gbs, --ds-version, --compare, --dry-run, --destructive, --force and the fleet options --outlier-pct, --connect-timeout, --host-timeout, --fio-version, --junit go with it"
	fi
	[ "$PRECONDITION" != on ] || [ -z "$HOSTS_FILE" ] ||
		usage_error "--precondition: not in fleet mode (--hosts): precondition each host's target before the sweep"
	if [ -n "$EMIT_DIR" ] && [ -n "$HOSTS_FILE" ]; then
		usage_error "--emit-jobs writes the grid's job files; it takes no --hosts"
	fi
	if [ -z "$HOSTS_FILE" ] && [ -z "$RESUME" ]; then
		local o
		for o in OUTLIER_PCT CONNECT_TIMEOUT HOST_TIMEOUT JUNIT_OUT FIO_WANT; do
			[ -z "${!o}" ] || usage_error "--outlier-pct, --connect-timeout, --host-timeout, --fio-version and --junit need --hosts (fleet mode)"
		done
	fi
	if [ "$FORCE" = 1 ] && [ "$DESTRUCTIVE" = 0 ]; then
		usage_error "--force only means something with --destructive"
	fi
	paths_check
	return 0
}

# gbs_check OPT VALUE: a threshold is a positive number of GB/s (digits,
# an optional fraction; not 0: every result would pass it).
gbs_check() {
	[ -n "$2" ] || return 0
	{ is_number "$2" && [[ $2 =~ [1-9] ]]; } ||
		usage_error "$1: not a positive number of GB/s (1e9 B/s, e.g. 2.5): $2"
}

# paths_check: the directories the options name, checked before anything
# runs or is created (a refusal after the sweep would lose its time):
# --compare a finished run, --emit-jobs a directory it can write or make,
# --resume a run directory it can write (a dry run writes nothing).
paths_check() {
	local d why
	if [ -n "$COMPARE" ]; then
		d=$(abspath "$COMPARE")
		[ -e "$d" ] || die "$EXIT_USAGE" "--compare: $d does not exist (not a finished tswap-sweep run)"
		[ -d "$d" ] || die "$EXIT_USAGE" "--compare: $d is not a directory (not a finished tswap-sweep run)"
		[ -f "$d/aggregate.json" ] || die "$EXIT_USAGE" "--compare: $d has no aggregate.json (not a finished tswap-sweep run)"
		# its shape too (jq missing: need_tools says so next)
		! command -v jq >/dev/null 2>&1 || jq -e 'type == "object" and (.points | type) == "array"
			and all(.points[]; type == "object") and ((.ceiling // {}) | type) == "object"' \
			"$d/aggregate.json" >/dev/null 2>&1 ||
			die "$EXIT_USAGE" "--compare: $d/aggregate.json is not a tswap-sweep aggregate.json (not JSON, or no points array): damaged?"
	fi
	if [ -n "$EMIT_DIR" ]; then
		why=$(dir_makeable "$EMIT_DIR") ||
			die "$EXIT_USAGE" "--emit-jobs $EMIT_DIR: $why; it names the directory the job files GRID-read.fio and GRID-write.fio go into"
	fi
	if [ -n "$RESUME" ] && [ "$DRY_RUN" = 0 ] && [ -d "$RESUME" ] && [ ! -w "$RESUME" ]; then
		d=$(abspath "$RESUME")
		die "$EXIT_USAGE" "--resume $d: the run directory is not writable ($(unwritable_why "$d")); the sweep writes its lock, points and outputs there"
	fi
	return 0
}
