# shellcheck shell=bash
# grid.sh - grid files, their validation, and the plan (the points).
#
# A grid file: one "key value..." line per parameter, '#' comments.
# List keys (cartesian product): rw backend tensor iodepth block qd window
# submit threads ranks. Scalar keys (defaults for options): size runtime
# ramp repeat ceiling targets description. Format: docs/sweep.md.
#
# A plan line (PLAN_TEXT; RUN/plan.json: pipeline.sh), tab separated, sizes in bytes:
#   key kind rw backend tensor block qd submit window threads iodepth [ranks]
# kind is tswap, or ceiling (fio's libaio: backend fio-libaio, tensor = bs,
# qd = iodepth, submit/window "-"). rw is read, write or readwrite (a read
# and a write handle at once); ranks, the number of swappers at once
# (ranks.sh), is there only above 1. A point of 1 rank reading or writing has the key, label and
# job file it had before ranks and readwrite existed.
#
# Owns: grid_file_for, grid_file_ok, list_grid_names, list_grids,
# check_values, load_grid (a UTF-8 byte order mark and CRLF lines read
# without it and \r, a repeated key refused but description lines joined),
# grid_targets_check, io_size_check, engine_max, check_engine_limits,
# expand_grid, ceiling_depth, ceiling_jobs, ceiling_line, add_ceilings,
# plan_facts, plan_facts_into, plan_writes. Reads: grids_dir (paths.sh),
# ENGINE, PLAN_TEXT, PLAN_FACTS*, CEILING_BS/QD. Writes: the G_* globals (load_grid).
# shellcheck disable=SC2034 # sets the G_* globals of state.sh

grid_file_for() {
	local g=$1 d names
	if [[ $g == */* || $g == *.grid ]] || [ -f "$g" ]; then
		grid_file_ok "$g"
		abspath "$g"
		return 0
	fi
	d=$(grids_dir) || die "$EXIT_ERROR" "cannot find the built-in grids (sweep/grids/ or PREFIX/share/tswap/grids/)"
	if [ ! -f "$d/$g.grid" ]; then
		# not a built-in: a directory of that name is a path given
		[ ! -d "$g" ] || grid_file_ok "$g"
		names=$(list_grid_names)
		usage_error "unknown grid '$g' (built in: ${names:+${names//$'\n'/ } })"
	fi
	printf '%s\n' "$d/$g.grid"
}

# grid_file_ok PATH: exit 2 unless PATH is a grid file it can read: said
# when it is missing, a directory or unreadable.
grid_file_ok() {
	[ ! -d "$1" ] || usage_error "--grid $1: a directory, not a grid file"
	[ -f "$1" ] || usage_error "grid file not found: $1"
	[ -r "$1" ] || usage_error "--grid $1: not readable (no permission)"
}

list_grid_names() {
	local d f
	d=$(grids_dir) || return 0
	for f in "$d"/*.grid; do
		[ -f "$f" ] || continue
		f=${f##*/}
		printf '%s\n' "${f%.grid}"
	done
}

list_grids() {
	local g f desc names
	names=$(list_grid_names)
	while IFS= read -r g; do
		[ -n "$g" ] || continue
		f=$(grid_file_for "$g") || exit
		desc=$(sed -n 's/^description[[:space:]]*//p; T; q' "$f")
		printf '%-16s %s\n' "$g" "$desc"
	done <<<"$names"
}

# engine_max OPTION [BACKEND]: the largest value the engine takes for
# OPTION (on BACKEND only, with it), from the range its fio --enghelp text
# carries: "(MIN..MAX" for the option, "BACKEND MIN..MAX" for a backend's
# own (engine/options.c). The engine: --engine when it is a file here,
# else the default one (paths.sh). One line and exit 3 when fio cannot tell.
engine_max() {
	local opt=$1 be=${2:-} so=$ENGINE help line
	local re="^[[:space:]]*${opt}[[:space:]]*:.*[(;] ?${be:+$be }[0-9]+\\.\\.([0-9]+)[;)]"
	[ -f "$so" ] || so=$(default_engine)
	help=$(fio --enghelp="$so" 2>/dev/null) || help=''
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			printf '%s\n' "${BASH_REMATCH[1]}"
			return 0
		fi
	done <<<"$help"
	die "$EXIT_ERROR" "cannot read the ${be:+$be }range of $opt from fio --enghelp=$so (build the engine with make, or pass --engine)"
}

# check_values KEY FILE:LINE VALUE...: validate the values of a list key.
check_values() {
	local key=$1 where=$2 v max=''
	shift 2
	[ "$#" -gt 0 ] || die "$EXIT_USAGE" "$where: '$key' needs at least one value"
	[ "$key" != threads ] || max=$(engine_max tswap_threads) || exit
	for v in "$@"; do
		case $key in
		rw) [[ $v == read || $v == write || $v == readwrite ]] || die "$EXIT_USAGE" "$where: rw must be read, write or readwrite, not '$v'" ;;
		backend) [[ $v == libaio || $v == io_uring ]] || die "$EXIT_USAGE" "$where: backend must be libaio or io_uring, not '$v'" ;;
		window) [[ $v == sequential || $v == overlap ]] || die "$EXIT_USAGE" "$where: window must be sequential or overlap, not '$v'" ;;
		submit) [[ $v == single || $v == block ]] || die "$EXIT_USAGE" "$where: submit must be single or block, not '$v'" ;;
		tensor | block)
			local bytes
			bytes=$(size_to_bytes "$v") || die "$EXIT_USAGE" "$where: $key: not a size: '$v'"
			((bytes > 0)) || die "$EXIT_USAGE" "$where: $key: must not be 0"
			;;
		iodepth | qd | threads)
			{ is_uint "$v" && ((10#$v >= 1)); } || die "$EXIT_USAGE" "$where: $key: not a positive integer: '$v' (1 to 9 digits)"
			[ "$key" != threads ] || ((10#$v <= max)) ||
				die "$EXIT_USAGE" "$where: threads: $v is above $max, the engine's tswap_threads limit (docs/engine.md)"
			;;
		ranks)
			{ is_uint "$v" && ((10#$v >= 1 && 10#$v <= RANKS_MAX)); } ||
				die "$EXIT_USAGE" "$where: ranks: not an integer from 1 to $RANKS_MAX: '$v'"
			;;
		esac
	done
}

load_grid() {
	local file=$1 line key n=0 where crlf=0 v
	local -a vals
	local -A keyline=()
	G_NAME=${file##*/}
	G_NAME=${G_NAME%.grid}
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		# a UTF-8 byte order mark (some Windows editors write one): dropped
		if ((n == 1)) && [[ $line == $'\xef\xbb\xbf'* ]]; then
			line=${line#$'\xef\xbb\xbf'}
			note "grid $file starts with a UTF-8 byte order mark: read without it"
		fi
		# CRLF line endings (a grid edited on Windows): the \r is dropped
		if [[ $line == *$'\r' ]]; then
			line=${line%$'\r'}
			crlf=1
		fi
		line=${line%%#*}
		read -r -a vals <<<"$line"
		[ "${#vals[@]}" -gt 0 ] || continue
		key=${vals[0]}
		vals=("${vals[@]:1}")
		where="$file:$n"
		if [ -n "${keyline[$key]:-}" ] && [ "$key" != description ]; then
			die "$EXIT_USAGE" "$where: '$key' repeated (first on line ${keyline[$key]}): give all its values on one line"
		fi
		keyline[$key]=$n
		case $key in
		rw | backend | tensor | iodepth | block | qd | window | submit | threads | ranks)
			check_values "$key" "$where" "${vals[@]}"
			case $key in
			ranks) G_RANKS=("${vals[@]}") ;;
			rw) G_RW=("${vals[@]}") ;;
			backend) G_BACKEND=("${vals[@]}") ;;
			tensor) G_TENSOR=("${vals[@]}") ;;
			iodepth) G_IODEPTH=("${vals[@]}") ;;
			block) G_BLOCK=("${vals[@]}") ;;
			qd) G_QD=("${vals[@]}") ;;
			window) G_WINDOW=("${vals[@]}") ;;
			submit) G_SUBMIT=("${vals[@]}") ;;
			threads) G_THREADS=("${vals[@]}") ;;
			esac
			;;
		size)
			if [ "${#vals[@]}" -ne 1 ] || ! size_to_bytes "${vals[0]}" >/dev/null; then
				die "$EXIT_USAGE" "$where: size needs one size"
			fi
			G_SIZE=${vals[0]}
			;;
		runtime | ramp | repeat)
			if [ "${#vals[@]}" -ne 1 ] || ! is_uint "${vals[0]}"; then
				die "$EXIT_USAGE" "$where: $key needs one integer"
			fi
			[ "$key" = ramp ] || ((10#${vals[0]} >= 1)) || die "$EXIT_USAGE" "$where: $key must be at least 1"
			# as the options: at most SECS_MAX seconds, REPEAT_MAX passes
			if [ "$key" = repeat ]; then v=$REPEAT_MAX; else v=$SECS_MAX; fi
			{ [[ ${vals[0]} =~ ^0*[0-9]{1,6}$ ]] && ((10#${vals[0]} <= v)); } || die "$EXIT_USAGE" "$where: $key at most $v: ${vals[0]}"
			case $key in
			runtime) G_RUNTIME=${vals[0]} ;;
			ramp) G_RAMP=${vals[0]} ;;
			repeat) G_REPEAT=${vals[0]} ;;
			esac
			;;
		ceiling)
			if [ "${#vals[@]}" -ne 1 ] || [[ ${vals[0]} != on && ${vals[0]} != off ]]; then
				die "$EXIT_USAGE" "$where: ceiling needs on or off"
			fi
			G_CEILING=${vals[0]}
			;;
		targets)
			[ "${#vals[@]}" -gt 0 ] || die "$EXIT_USAGE" "$where: targets needs at least one path"
			G_TARGETS=$(
				IFS=,
				printf '%s' "${vals[*]}"
			)
			grid_targets_check "$where"
			;;
		description) G_DESC=${G_DESC:+$G_DESC }${vals[*]} ;; # lines joined
		*) die "$EXIT_USAGE" "$where: unknown grid key '$key' (rw backend tensor iodepth block qd window submit threads ranks size runtime ramp repeat ceiling targets description)" ;;
		esac
	done <"$file"
	[ "$crlf" = 0 ] || note "grid $file has CRLF line endings: read without the carriage returns"
	# Defaults for keys the grid leaves out: DeepSpeed's ds_config aio defaults.
	[ "${#G_RW[@]}" -gt 0 ] || G_RW=(read write)
	[ "${#G_BACKEND[@]}" -gt 0 ] || G_BACKEND=(libaio)
	[ "${#G_TENSOR[@]}" -gt 0 ] || G_TENSOR=(64m)
	[ "${#G_IODEPTH[@]}" -gt 0 ] || G_IODEPTH=(1)
	[ "${#G_BLOCK[@]}" -gt 0 ] || G_BLOCK=(1m)
	[ "${#G_QD[@]}" -gt 0 ] || G_QD=(8)
	[ "${#G_WINDOW[@]}" -gt 0 ] || G_WINDOW=(overlap)
	[ "${#G_SUBMIT[@]}" -gt 0 ] || G_SUBMIT=(block)
	[ "${#G_THREADS[@]}" -gt 0 ] || G_THREADS=(1)
	[ "${#G_RANKS[@]}" -gt 0 ] || G_RANKS=(1)
	return 0
}

# grid_targets_check FILE:LINE: G_TARGETS, the paths of a targets line
# joined by commas, under --target's rules (ranks.sh target_list), refused
# naming the grid line: no empty path, none twice.
grid_targets_check() {
	local t
	local -a list
	local -A named=()
	IFS=',' read -r -a list <<<"$G_TARGETS"
	for t in "${list[@]}"; do
		[ -n "$t" ] || die "$EXIT_USAGE" "$1: targets: an empty path in the list '$G_TARGETS' (paths are separated by commas or blanks)"
		t=$(abspath "$t")
		[ -z "${named[$t]+set}" ] || die "$EXIT_USAGE" "$1: targets: $t is named twice"
		named[$t]=1
	done
	return 0
}

# io_size_check: exit 2 when --io-size is below the grid's largest tensor
# (fio bs): fio then moves no whole tensor, or one, and a point's GB/s is
# of one short burst, not a rate. Each point moves at least one whole
# tensor per handle.
io_size_check() {
	local t tb max=0 io ion tn
	[ -n "$IO_SIZE" ] || return 0
	io=$(size_to_bytes "$IO_SIZE")
	for t in "${G_TENSOR[@]}"; do
		tb=$(size_to_bytes "$t")
		((tb <= max)) || max=$tb
	done
	((io < max)) || return 0
	szname ion "$io"
	szname tn "$max"
	usage_error "--io-size $ion: below the largest tensor size $tn (fio bs): each point must move at least one whole tensor per handle; give --io-size $tn or more, or a smaller --tensor-size"
}

# check_engine_limits: the grid's queue depths against the backends'
# limits, before anything runs (docs/engine.md): io_uring at most the
# engine's io_uring range (engine_max); libaio at most fs.aio-max-nr (one
# io_setup). Threads are checked per value (check_values).
check_engine_limits() {
	local q be aiomax='' umax=''
	[ -r /proc/sys/fs/aio-max-nr ] && read -r aiomax </proc/sys/fs/aio-max-nr
	for be in "${G_BACKEND[@]}"; do
		[ "$be" != io_uring ] || umax=$(engine_max tswap_queue_depth io_uring) || exit
		for q in "${G_QD[@]}"; do
			if [ "$be" = io_uring ] && ((10#$q > umax)); then
				die "$EXIT_USAGE" "grid $G_NAME: qd $q is above $umax, the most SQ entries an io_uring ring can have (backend io_uring)"
			fi
			if [ "$be" = libaio ] && is_uint "$aiomax" && ((10#$q > 10#$aiomax)); then
				die "$EXIT_USAGE" "grid $G_NAME: qd $q is above fs.aio-max-nr=$aiomax, the most io_setup can give (backend libaio; raise it with sysctl fs.aio-max-nr)"
			fi
		done
	done
	return 0
}

# expand_grid: the grid's valid points as plan lines (tab separated):
# key kind rw backend tensor block qd submit window threads iodepth [ranks]
# (sizes in bytes; ranks only above 1). Points whose tensor cannot be cut into aligned parts
# are left out, with a note on stderr. The key of a point of N > 1 ranks
# ends in -nN; 1 rank adds nothing (the keys of grids before ranks).
expand_grid() {
	local rw be t tb tn d p w s b bb bn q n nk skipped=0
	for n in "${G_RANKS[@]}"; do
	n=$((10#$n))
	nk=''
	((n == 1)) || nk="-n$n"
	for rw in "${G_RW[@]}"; do
		for be in "${G_BACKEND[@]}"; do
			for t in "${G_TENSOR[@]}"; do
				tb=$(size_to_bytes "$t")
				szname tn "$tb"
				for d in "${G_IODEPTH[@]}"; do
					for p in "${G_THREADS[@]}"; do
						if ((tb % p != 0 || (tb / p) % 4096 != 0)); then
							skipped=$((skipped + ${#G_WINDOW[@]} * ${#G_SUBMIT[@]} * ${#G_BLOCK[@]} * ${#G_QD[@]}))
							continue
						fi
						for w in "${G_WINDOW[@]}"; do
							for s in "${G_SUBMIT[@]}"; do
								for b in "${G_BLOCK[@]}"; do
									bb=$(size_to_bytes "$b")
									szname bn "$bb"
									if ((bb % 4096 != 0)); then
										skipped=$((skipped + ${#G_QD[@]}))
										continue
									fi
									for q in "${G_QD[@]}"; do
										printf '%s-%s-t%s-b%s-q%s-%s-%s-p%s-d%s%s\ttswap\t' \
											"$rw" "$be" "$tn" "$bn" "$((10#$q))" "$s" "$w" "$((10#$p))" "$((10#$d))" "$nk"
										printf '%s\t' "$rw" "$be" "$tb" "$bb" "$((10#$q))" "$s" "$w" "$((10#$p))"
										printf '%s%s\n' "$((10#$d))" "${nk:+$'\t'$n}"
									done
								done
							done
						done
					done
				done
			done
		done
	done
	done
	if ((skipped > 0)); then
		warn "left out $skipped point(s) whose tensor size is not divisible into 4096-aligned parts per thread, or whose block size is not a multiple of 4096"
	fi
	return 0
}

# ceiling_depth PLAN: the ceiling's iodepth (prints it): as many CEILING_BS
# blocks as the deepest tswap point keeps in flight per handle, min(tensor,
# threads x queue depth x block) bytes (each worker runs its part of one
# operation at a time, however many fio queues: docs/design.md), at least
# CEILING_QD_MIN, at most CEILING_QD_MAX and fs.aio-max-nr over the jobs a
# ceiling runs at once (ranks; readwrite: 2 per rank), with a note on
# stderr when capped. A ceiling shallower than a point measures less than
# the device gives that point (docs/performance.md), and every such point
# is flagged.
ceiling_depth() {
	local kind rw t b q p n bytes max=0 jobs=1 bs depth aiomax='' cap inflight
	bs=$(size_to_bytes "$CEILING_BS")
	while IFS=$'\t' read -r _ kind rw _ t b q _ _ p _ n; do
		[ "$kind" = tswap ] || continue
		bytes=$((p * q * b))
		((bytes < t)) || bytes=$t
		((bytes <= max)) || max=$bytes
		n=${n:-1}
		[ "$rw" != readwrite ] || n=$((2 * n))
		((n <= jobs)) || jobs=$n
	done <<<"$1"
	depth=$(((max + bs - 1) / bs))
	((depth >= CEILING_QD_MIN)) || depth=$CEILING_QD_MIN
	cap=$(aio_depth_cap "$jobs" "$CEILING_QD_MAX")
	read -r cap aiomax <<<"$cap"
	if ((depth > cap)); then
		inflight=$(bytes_to_size "$max")
		warn "device ceiling: the deepest point keeps $inflight in flight, $depth x $CEILING_BS; the ceiling runs at iodepth $cap (the most $jobs job(s) get from fs.aio-max-nr=$aiomax and $CEILING_QD_MAX), so it may read low for that point"
		depth=$cap
	fi
	printf '%s\n' "$depth"
}

# ceiling_jobs PLAN: the ceiling's fio jobs per handle (prints it): as many
# submitters as the grid's most parallel single-handle point has intra-op
# threads (each tswap worker thread has its own io context and submits on
# its own: DeepSpeed's deepspeed_aio_thread_t, one aio_context each), at
# least 1, at most CEILING_JOBS_MAX and CEILING_QD (each job keeps at least
# one block in flight); CEILING_QD is split among them. Several jobs can
# write faster and read slower than one (readahead follows one stream:
# docs/performance.md), so add_ceilings runs both.
ceiling_jobs() {
	local kind rw p n max=1
	while IFS=$'\t' read -r _ kind rw _ _ _ _ _ _ p _ n; do
		if [ "$kind" = tswap ] && [ "${n:-1}" = 1 ] && [ "$rw" != readwrite ] && ((p > max)); then
			max=$p
		fi
	done <<<"$1"
	((max <= CEILING_JOBS_MAX)) || max=$CEILING_JOBS_MAX
	((max <= CEILING_QD)) || max=$CEILING_QD
	printf '%s\n' "$max"
}

# add_ceilings PLAN: a ceiling line before the first point of each
# direction and rank count: fio's libaio with as many jobs as the point has
# handles (readwrite: a read and a write job per rank). The key of 1 rank
# reading or writing is the one of grids before ranks; when CEILING_JOBS is
# more than 1, it has two ceiling lines: one fio job, and CEILING_JOBS jobs
# (key suffix -jJ, J in the threads field; 0 there is one job), and the
# faster is its ceiling (tswap.stats.aggregate).
# ceiling_line KEY RW JOBS NCOL: one ceiling plan line (NCOL: the ranks
# column with its tab, or empty for one rank).
ceiling_line() {
	local bs
	bs=$(size_to_bytes "$CEILING_BS")
	printf '%s\tceiling\t%s\tfio-libaio\t%s\t0\t%s\t-\t-\t%s\t%s%s\n' \
		"$1" "$2" "$bs" "$CEILING_QD" "$3" "$CEILING_QD" "$4"
}

add_ceilings() {
	local line rw n nk ncol seen=' ' key j
	while IFS= read -r line; do
		IFS=$'\t' read -r _ _ rw _ _ _ _ _ _ _ _ n <<<"$line"
		n=${n:-1} nk='' ncol='' j=0
		((n == 1)) || nk="-n$n" ncol=$'\t'$n
		if ((n == 1)) && [ "$rw" != readwrite ] && ((CEILING_JOBS > 1)); then
			j=$CEILING_JOBS nk="-j$j"
		fi
		if [[ $seen != *" $rw/$n "* ]]; then
			seen="$seen$rw/$n "
			key="ceiling-$rw-fio-libaio-bs$CEILING_BS-qd$CEILING_QD"
			# with several jobs, the one-job ceiling too: the ceiling is
			# the faster of the two (tswap.stats.aggregate)
			((j <= 1)) || ceiling_line "$key" "$rw" 0 ''
			ceiling_line "$key$nk" "$rw" "$j" "$ncol"
		fi
		printf '%s\n' "$line"
	done <<<"$1"
}

# plan_facts: tswap.plan.points facts() for PLAN_TEXT: 1 or 0 (a point
# writes), true or false (a point of 1 rank reads or writes), then
# rank_slots' lines; the kept answer when PLAN_TEXT is unchanged.
plan_facts() {
	if [ -n "${PLAN_FACTS:-}" ] && [ "${PLAN_FACTS_OF:-}" = "$PLAN_TEXT" ]; then
		printf '%s\n' "$PLAN_FACTS"
	else
		py plan --facts <<<"$PLAN_TEXT"
	fi
}

# plan_facts_into ARRAY: plan_facts' lines into ARRAY.
plan_facts_into() {
	local -n _facts=$1
	local text
	text=$(plan_facts)
	mapfile -t _facts <<<"$text"
}

# plan_writes: 1 when a point of the plan writes (write, readwrite), else 0.
plan_writes() {
	local -a f
	plan_facts_into f
	printf '%s\n' "${f[0]}"
}

# unique_points LINES: plan lines, each point key (first field) once (its
# first line), blank lines dropped; in the shell, a jq run cost more.
unique_points() {
	local l
	local -A seen=()
	while IFS= read -r l; do
		[ -n "$l" ] || continue
		[ -z "${seen[k${l%%$'\t'*}]+set}" ] || continue
		seen[k${l%%$'\t'*}]=1
		printf '%s\n' "$l"
	done <<<"$1"
}
