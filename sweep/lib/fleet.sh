# shellcheck shell=bash
# fleet.sh - fleet mode's hosts (--hosts, docs/fleet.md): the hosts file,
# its checks, and the fleet part of sweep.json.
#
# Each point runs as one `fio --client=HOST,PORT job.fio` per host, all
# started at once (exec-fleet.sh), so each host's output, exit status and
# time limit are its own (fio's multi-client mode connects one host after
# the other, with no timeout). Results: fio's client JSON (client_stats).
#
# Owns: hosts_tokens, fleet_path_problem, load_hosts, fleet_check_options,
# fleet_check_targets, fleet_setup, fleet_config_json (--resume reads its
# "fleet" back: tswap/cli/sweep_resume.py). Reads: HOSTS_FILE, TARGET,
# ENGINE, the fleet options. Writes: FLEET, TARGET_KIND, the H_* arrays, the fleet
# settings (OUTLIER_PCT, CONNECT_TIMEOUT, HOST_TIMEOUT, FIO_WANT).
# shellcheck disable=SC2034 # sets the fleet globals of state.sh
# shellcheck disable=SC2016 # '${' is literal

# hosts_tokens VAR LINE: the words of a hosts-file line into array VAR. Blanks
# separate words; "..." keeps blanks in a word (\" and \\ inside quotes);
# a '#' at the start of a word starts a comment. Status 1: an open quote.
hosts_tokens() {
	local -n _words=$1
	local s=$2 c word='' inword=0 quoted=0 i
	_words=()
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		if [ "$quoted" = 1 ]; then
			if [ "$c" = "\\" ] && ((i + 1 < ${#s})); then
				i=$((i + 1))
				word+=${s:i:1}
			elif [ "$c" = '"' ]; then
				quoted=0
			else
				word+=$c
			fi
		elif [ "$c" = '"' ]; then
			quoted=1
			inword=1
		elif [[ $c == [[:space:]] ]]; then
			if [ "$inword" = 1 ]; then
				_words+=("$word")
			fi
			word=''
			inword=0
		elif [ "$c" = '#' ] && [ "$inword" = 0 ]; then
			break
		else
			word+=$c
			inword=1
		fi
	done
	[ "$quoted" = 0 ] || return 1
	if [ "$inword" = 1 ]; then
		_words+=("$word")
	fi
	return 0
}

# fleet_path_problem PATH target|engine: why fio on a host cannot take PATH
# in a job file (status 0), or status 1 when it can.
fleet_path_problem() {
	local path=$1 kind=$2
	if [[ $path != /* ]]; then
		printf 'not an absolute path (it names a file on the host, where fio --server runs)\n'
	elif fio_unsafe "$path" || [[ $path == *'${'* ]]; then
		printf "fio cannot take it in a job file (';', '#', '\${', a newline, or blanks at either end): use a symlink on the host\n"
	elif [ "$kind" = engine ] && [[ $path == *:* ]]; then
		printf "fio cannot load an engine whose path has ':': use a symlink on the host\n"
	else
		return 1
	fi
	return 0
}

# load_hosts FILE: the hosts file into the H_* arrays. One host per line:
#   HOST[,PORT] [target=PATH] [engine=PATH] [name=LABEL] [FIO_OPTION[=VALUE]...]
load_hosts() {
	local file=$1 line n=0 where tok host addr port label target engine opts key why i
	local -a toks=()
	local -A seen=()
	{ [ -f "$file" ] && [ -r "$file" ]; } || usage_error "--hosts: cannot read $file"
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		where="$file:$n"
		hosts_tokens toks "$line" || usage_error "$where: unterminated quote"
		[ "${#toks[@]}" -gt 0 ] || continue
		host=${toks[0]}
		if [[ $host =~ ^(((ip|ip4|ip6):)?[^,=[:space:]]+)(,([0-9]+))?$ ]]; then
			addr=${BASH_REMATCH[1]}
			port=${BASH_REMATCH[5]}
		else
			usage_error "$where: '$host' is not HOST[,PORT] (a host name or address, then optionally a comma and the port)"
		fi
		if [ -n "$port" ]; then
			if ((10#$port < 1 || 10#$port > 65535)); then
				usage_error "$where: port $port is out of range"
			fi
			port=$((10#$port))
			label="$addr:$port"
		else
			port=$FLEET_PORT
			label=$addr
		fi
		target='' engine='' opts=''
		for tok in "${toks[@]:1}"; do
			key=${tok%%=*}
			case $key in
			target | engine | name)
				[[ $tok == *=?* ]] || usage_error "$where: $key needs a value ($key=...)"
				case $key in
				target) target=${tok#*=} ;;
				engine) engine=${tok#*=} ;;
				name) label=${tok#*=} ;;
				esac
				;;
			ioengine | filename | directory | filename_format | opendir | tswap_stats)
				usage_error "$where: $key is set by the sweep (use target= and engine= for the host's paths)"
				;;
			*)
				[[ $key =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
					usage_error "$where: '$tok' is neither target=, engine=, name= nor a fio option (KEY or KEY=VALUE)"
				[[ $tok != *';'* ]] || usage_error "$where: '$tok': fio cuts option values at ';'"
				opts+=$tok$'\n'
				;;
			esac
		done
		if [ -n "${seen[$label]+set}" ]; then
			usage_error "$where: host name '$label' is used twice (give one of them name=LABEL)"
		fi
		seen[$label]=1
		i=${#H_ADDR[@]}
		H_ADDR+=("$addr,$port")
		H_LABEL+=("$label")
		H_ID+=("$(printf 'h%02d' "$((i + 1))")-${label//[^A-Za-z0-9_-]/_}")
		H_TARGET+=("${target:-$TARGET}")
		H_ENGINE+=("${engine:-$ENGINE}")
		H_OPTS+=("${opts%$'\n'}")
		H_WHERE+=("$where")
		H_LOST+=('')
	done <"$file"
	[ "${#H_ADDR[@]}" -gt 0 ] || usage_error "--hosts: $file names no host"
	for ((i = 0; i < ${#H_ADDR[@]}; i++)); do
		[ -n "${H_TARGET[i]}" ] ||
			usage_error "${H_WHERE[i]}: no target for ${H_LABEL[i]}: give target=PATH there, or --target PATH (a path on the hosts)"
		if why=$(fleet_path_problem "${H_TARGET[i]}" target); then
			usage_error "${H_WHERE[i]}: target ${H_TARGET[i]}: $why"
		fi
		if why=$(fleet_path_problem "${H_ENGINE[i]}" engine); then
			usage_error "${H_WHERE[i]}: engine ${H_ENGINE[i]}: $why"
		fi
	done
	return 0
}

# fleet_check_options: each host's own fio options parse (fio --parse-only
# here: the hosts must run this fio version), so that a typo stops the run
# before anything starts. An unknown option is a usage error; a value this
# machine rejects (e.g. cpus_allowed beyond its CPUs) only a warning, since
# fio checks some values against the machine it parses on.
fleet_check_options() {
	local i dir out rc why
	command -v fio >/dev/null 2>&1 || return 0
	dir=$(mktemp -d "${TMPDIR:-/tmp}/tswap-sweep.XXXXXX")
	for ((i = 0; i < ${#H_ADDR[@]}; i++)); do
		[ -n "${H_OPTS[i]}" ] || continue
		{
			printf '[global]\nioengine=null\nsize=1m\n'
			printf '%s\n' "${H_OPTS[i]}"
			printf '[check]\nrw=read\n'
		} >"$dir/check.fio"
		rc=0
		out=$(cd "$dir" && fio --parse-only check.fio 2>&1) || rc=$?
		if [ "$rc" -ne 0 ]; then
			why=$(grep -v -m 2 '^[[:space:]]*$' <<<"$out") || why=''
			why=${why:+${why//$'\n'/ } }
			if grep -q '^Bad option' <<<"$out"; then
				rm -rf -- "$dir"
				usage_error "${H_WHERE[i]}: fio rejects the options of ${H_LABEL[i]}: $why"
			fi
			warn "${H_WHERE[i]}: fio here rejects the options of ${H_LABEL[i]} ($why); going on: the host checks them itself"
		fi
	done
	rm -rf -- "$dir"
}

# fleet_check_targets WRITES: a target under /dev/ is taken for a block
# device. The sweep cannot look at a device on another host (mounted? a
# filesystem?), so writing to one needs both --destructive and --force.
fleet_check_targets() {
	local writes=$1 i
	[ "$writes" = 1 ] || return 0
	for ((i = 0; i < ${#H_ADDR[@]}; i++)); do
		[[ ${H_TARGET[i]} == /dev/* ]] || continue
		if [ "$DESTRUCTIVE" = 0 ] || [ "$FORCE" = 0 ]; then
			die "$EXIT_USAGE" "refusing target ${H_TARGET[i]} on ${H_LABEL[i]}: a device on a host, and the sweep writes to it (destroying its data); the sweep cannot check it there for mounts or signatures, so pass --destructive --force, or --rw read"
		fi
		warn "writing to ${H_TARGET[i]} on ${H_LABEL[i]} because of --destructive --force"
	done
	return 0
}

fleet_setup() {
	FLEET=1
	TARGET_KIND=fleet
	: "${OUTLIER_PCT:=$OUTLIER_PCT_DEFAULT}"
	: "${CONNECT_TIMEOUT:=$CONNECT_TIMEOUT_DEFAULT}"
	: "${HOST_TIMEOUT:=$HOST_TIMEOUT_DEFAULT}"
	CONNECT_TIMEOUT=$((10#$CONNECT_TIMEOUT))
	HOST_TIMEOUT=$((10#$HOST_TIMEOUT))
	[ -n "$FIO_WANT" ] || FIO_WANT=$(fio --version 2>/dev/null || true)
	HOSTS_FILE=$(abspath "$HOSTS_FILE")
	load_hosts "$HOSTS_FILE"
	fleet_check_options
}

# fleet_config_json: the fleet part of sweep.json (what --resume reads back).
fleet_config_json() {
	local i hosts=''
	for ((i = 0; i < ${#H_ADDR[@]}; i++)); do
		hosts+=$(jq -n --argjson index "$i" --arg id "${H_ID[i]}" --arg lbl "${H_LABEL[i]}" \
			--arg address "${H_ADDR[i]}" --arg target "${H_TARGET[i]}" --arg engine "${H_ENGINE[i]}" \
			--arg options "${H_OPTS[i]}" --arg where "${H_WHERE[i]}" \
			'{index: $index, id: $id, label: $lbl, address: $address, target: $target,
			  engine: $engine, options: ($options | split("\n") | map(select(length > 0))), where: $where}')$'\n'
	done
	jq -s --arg file "$HOSTS_FILE" --argjson outlier "$OUTLIER_PCT" \
		--argjson connect "$CONNECT_TIMEOUT" --argjson hostt "$HOST_TIMEOUT" --arg want "$FIO_WANT" \
		'{hosts_file: $file, hosts: ., outlier_pct: $outlier, connect_timeout: $connect,
		  host_timeout: $hostt, fio_version: $want}' <<<"$hosts"
}

