# shellcheck shell=bash
# exec-fleet.sh - the executor that runs each point on the hosts of --hosts
# at once, one `fio --client=HOST,PORT` per host (pipeline.sh names the
# exec_* hooks), after a preflight: each host parses a job (fio version,
# engine), its target is judged there (fleet-target.sh) and its metadata
# read (fleet-meta.sh). A host that fails is left out of the rest of the
# run, and its results say why.
#
# Owns: the exec_* hooks, fleet_launch, fleet_run_sh, fleet_split,
# first_match, fleet_classify, fleet_tag_result, fleet_result,
# fleet_preflight. Reads: REPEAT, the H_* arrays, CONNECT_TIMEOUT,
# HOST_TIMEOUT, FIO_WANT, FINISHED. Writes: FLEET_PIDS, FLEET_TMPS,
# FLEET_RAN, H_LOST; RUN/preflight/ID/, RUN/points/RUNKEY/ID/
# (job.fio, run.sh, fio.client.out, fio.text, fio.json, fio.stderr,
# result.json).
# shellcheck disable=SC2164 # cd in a subshell under the entry point's set -e
# shellcheck disable=SC2016 # $(...) in run.sh text is literal

exec_check_targets() { fleet_check_targets "$1"; }
exec_ready() { need_tools timeout; }
exec_new_run() { :; }
exec_places() { seq 0 "$((${#H_ADDR[@]} - 1))"; }
exec_place_names() { printf ' on %s\n' "${H_LABEL[@]}"; }

# exec_dry_head TOTAL
exec_dry_head() {
	local h
	say "dry run: $1 fio run(s) on each of ${#H_ADDR[@]} host(s) through fio's client mode, grid $G_NAME, $SIZE of each target; nothing is run"
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		say "host ${H_LABEL[h]}: fio --client=${H_ADDR[h]}, target ${H_TARGET[h]}, engine ${H_ENGINE[h]}${H_OPTS[h]:+, options: ${H_OPTS[h]//$'\n'/ }}"
	done
}

exec_head() { say "tswap-sweep: grid $G_NAME on ${#H_ADDR[@]} host(s) from $HOSTS_FILE; run directory $RUN"; }

# exec_begin TOTAL: the preflight of the hosts with runs left (of TOTAL).
exec_begin() {
	local h k
	local -a need=() probe=()
	local -A per=()
	mkdir -p "$RUN/preflight"
	find "$RUN/points" -mindepth 2 -maxdepth 2 -name '.tmp-*' -exec rm -rf -- {} + 2>/dev/null || true
	for k in "${!FINISHED[@]}"; do
		h=${k##*/}
		per[$h]=$((${per[$h]:-0} + 1))
	done
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		H_LOST[h]=''
		[ "${per[${H_ID[h]}]:-0}" -ge "$1" ] || need+=("$h")
	done
	[ "${#need[@]}" -gt 0 ] || return 0
	say "preflight: probing ${#need[@]} host(s) (fio --client, ${CONNECT_TIMEOUT} s at most)"
	fleet_preflight "${need[@]}"
	for h in "${need[@]}"; do
		[ -n "${H_LOST[h]}" ] || probe+=("$h")
	done
	# each target judged on its host (fleet-target.sh); a refusal exits 2
	if [ "${#probe[@]}" -gt 0 ]; then
		k=$(plan_writes)
		fleet_probe_targets "$k" "${probe[@]}"
	fi
	for h in "${need[@]}"; do
		if [ -n "${H_LOST[h]}" ]; then
			say "  ${H_LABEL[h]}: ERROR ${H_LOST[h]#preflight: }"
		else
			k=$(jq -r '"\(.hostname), \(.fio_version)"' "$RUN/preflight/${H_ID[h]}/result.json")
			say "  ${H_LABEL[h]}: $k"
		fi
	done
}

exec_todo() {
	local h
	for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
		[ -n "${FINISHED[$1/${H_ID[h]}]+set}" ] || printf '%s\n' "$h"
	done
}
exec_done_text() { printf 'done earlier on all %d hosts\n' "${#H_ADDR[@]}"; }

# exec_run WALLVAR LINE RUNKEY REP LABEL H...: the point on hosts H at
# once; a host lost earlier gets a result that says why, unrun. A host may
# take the point's own time plus --host-timeout (fio start-up, laying out
# a new file, stats).
exec_run() {
	local -n _fw=$1
	local line=$2 runkey=$3 rep=$4 h i tmp t0 limit why
	local -A rcs=()
	shift 5
	limit=$((HOST_TIMEOUT + 10#${RUNTIME:-0} + 10#${RAMP:-0}))
	mkdir -p "$RUN/points/$runkey"
	FLEET_PIDS=() FLEET_TMPS=() FLEET_RAN=()
	t0=$EPOCHREALTIME
	for h in "$@"; do
		tmp="$RUN/points/$runkey/.tmp-${H_ID[h]}.$$"
		rm -rf -- "$tmp"
		mkdir -p "$tmp"
		FLEET_TMPS+=("$tmp")
		point_job "$line" "$h" >"$tmp/job.fio"
		fleet_run_sh "$tmp" "$h"
		[ -z "${H_LOST[h]}" ] || continue
		fleet_launch "$tmp" "$h" "$limit" 5 --output-format=json job.fio
		FLEET_RAN+=("$h")
	done
	for i in "${!FLEET_RAN[@]}"; do
		rcs[${FLEET_RAN[i]}]=0
		wait "${FLEET_PIDS[i]}" 2>/dev/null || rcs[${FLEET_RAN[i]}]=$?
	done
	FLEET_PIDS=()
	_fw=$(since "$t0")
	for h in "$@"; do
		tmp="$RUN/points/$runkey/.tmp-${H_ID[h]}.$$"
		if [ -n "${rcs[$h]+set}" ]; then
			why=$(fleet_result "$tmp" "$runkey" "$rep" "${rcs[$h]}" "$_fw" "$line" "$h" "$limit")
			[[ $why != "lost "* ]] || H_LOST[h]="${why#lost } (at $runkey)"
		else
			result_json "$tmp" "$runkey" "$rep" 0 0 "$line"
			fleet_tag_result "$tmp/result.json" "$h" "not run: ${H_LOST[h]}"
		fi
		rm -rf -- "$RUN/points/$runkey/${H_ID[h]}"
		mv -T -- "$tmp" "$RUN/points/$runkey/${H_ID[h]}"
	done
	FLEET_TMPS=()
}

# exec_result_text RUNKEY LABEL ETA H...: the hosts' figures, then the
# error of each host that ran it and failed.
exec_result_text() {
	local runkey=$1 label=$2 eta=$3 res h n
	shift 3
	res=$(py fleet-progress "$RUN/points/$runkey"/*/result.json)
	if [ "$#" -lt "${#H_ADDR[@]}" ]; then
		res="$res ($# run now, $((${#H_ADDR[@]} - $#)) done earlier)"
	fi
	printf '%s  %s  (eta %s)\n' "$label" "$res" "$eta"
	for h in "${FLEET_RAN[@]}"; do
		# ok or not: progress.txt (result_json); the error: result.json,
		# where fleet_result put the host's reason
		IFS= read -r n <"$RUN/points/$runkey/${H_ID[h]}/progress.txt"
		[[ $n == 'ERROR: '* ]] || continue
		n=$(jq -r .error "$RUN/points/$runkey/${H_ID[h]}/result.json")
		printf '    %s: ERROR %s\n' "${H_LABEL[h]}" "$n"
	done
}

# exec_stop SIGNAL: the fio clients (SIGTERM, whatever SIGNAL: each runs
# under timeout, which passes it on; fio's client then asks its server to
# stop the job) and their directories.
# shellcheck disable=SC2317 # called from the signal trap
exec_stop() {
	local pid tmp
	for pid in "${FLEET_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${FLEET_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	FLEET_PIDS=()
	for tmp in "${FLEET_TMPS[@]}"; do
		rm -rf -- "$tmp"
	done
	FLEET_TMPS=()
}

# exec_finish_args VAR: the fleet's (sweep.json has its hosts).
exec_finish_args() {
	local -n _fa=$1
	_fa=(--fleet --outlier-pct "$OUTLIER_PCT" --junit-out "$JUNIT_OUT")
}

# fleet_launch DIR H LIMIT GRACE FIO-ARGS...: fio's client for host H in
# DIR, in the background, stopped after LIMIT seconds (killed GRACE later);
# its pid goes to FLEET_PIDS.
fleet_launch() {
	local dir=$1 h=$2 limit=$3 grace=$4
	shift 4
	(
		cd "$dir"
		exec timeout -k "$grace" "$limit" fio --client="${H_ADDR[h]}" "$@" \
			>fio.client.out 2>fio.stderr </dev/null
	) &
	FLEET_PIDS+=("$!")
}

# fleet_run_sh DIR H: a script that reruns the point on host H.
fleet_run_sh() {
	local dir=$1 h=$2
	{
		printf '#!/usr/bin/env bash\n'
		printf '# Rerun this point on %s through fio'"'"'s client mode (tswap-sweep %s).\n' "${H_LABEL[h]}" "$G_NAME"
		printf 'set -euo pipefail\ncd "$(dirname "$0")"\n'
		printf 'exec fio --client=%q --output-format=json job.fio\n' "${H_ADDR[h]}"
	} >"$dir/run.sh"
	chmod +x "$dir/run.sh"
}

# fleet_split DIR: fio's client prints the server's messages ("<hostname>
# text") and its own notes first, then its JSON. The messages go to
# fio.text (prefix removed), the JSON to fio.client.json, and as fio.stdout
# in the single-host shape ({jobs: [...]}) for result_json.
fleet_split() {
	local dir=$1
	: >"$dir/fio.text"
	[ -f "$dir/fio.client.out" ] || return 0
	sed -n '/^{/q; s/^<[^>]*> //; p' "$dir/fio.client.out" >"$dir/fio.text"
	sed -n '/^{/,$p' "$dir/fio.client.out" >"$dir/fio.client.json"
	# one jq: the single-host shape; status 5 without a client_stats
	# array, nothing without JSON
	if jq 'if .client_stats | type == "array" then . else error("no client_stats") end
		| {"fio version": .["fio version"], timestamp, time,
		   jobs: [.client_stats[] | select(.jobname != "All clients")]}' \
		"$dir/fio.client.json" >"$dir/fio.stdout.tmp" 2>/dev/null && [ -s "$dir/fio.stdout.tmp" ]; then
		mv -f "$dir/fio.stdout.tmp" "$dir/fio.stdout"
	else
		rm -f "$dir/fio.client.json" "$dir/fio.stdout.tmp"
	fi
}

# first_match PATTERN TEXT: the first line of TEXT matching PATTERN (grep -i).
first_match() {
	grep -i -m 1 -- "$1" <<<"$2" || true
}

# fleet_classify DIR RC LIMIT H: why host H gave no result, from the exit
# status of its fio client and the messages it printed: "lost REASON" when
# the host itself is the problem (unreachable, hung, gone, no engine,
# another fio version: it is then left out of the rest of the run), else
# "job REASON", REASON empty when the messages say no more than the status.
fleet_classify() {
	local dir=$1 rc=$2 limit=$3 h=$4 text line
	text=$(cat -- "$dir/fio.text" "$dir/fio.stderr" 2>/dev/null | tr -d '\r' | grep -v '^[[:space:]]*$' || true)
	line=$(first_match 'timeout on cmd\|timed out' "$text")
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ -n "$line" ]; then
		if [ -z "$line" ]; then line="within $limit s (timeout)"; else line="($line)"; fi
		printf 'lost no answer %s: the host is down, a firewall drops port %s, or fio --server hangs; a job it started may still be running there\n' "$line" "${H_ADDR[h]##*,}"
		return 0
	fi
	line=$(first_match 'connection refused\|failed to connect\|no route to host\|network is unreachable\|failed to resolve' "$text")
	if [ -n "$line" ]; then
		printf 'lost %s\n' "unreachable: $line (is fio --server running on ${H_ADDR[h]}, and the port open?)"
		return 0
	fi
	line=$(first_match 'version mismatch' "$text")
	if [ -n "$line" ]; then
		printf 'lost %s\n' "fio version differs from this machine's: $line"
		return 0
	fi
	line=$(first_match 'invalid external ioengine path\|not loadable\|failed to load engine' "$text")
	if [ -n "$line" ]; then
		printf 'lost %s\n' "engine missing or not loadable on the host: ${H_ENGINE[h]} ($line); install it there (make install) or give engine= in the hosts file"
		return 0
	fi
	line=$(first_match 'was built for .* but is loaded by' "$text")
	if [ -n "$line" ]; then
		line=${line#tswap: }            # the engine's "tswap: JOB: message"
		printf 'lost %s\n' "fio version differs from the engine's: ${line#*: }"
		return 0
	fi
	# after the engine checks: a server closes the connection when its job fails
	line=$(first_match 'disconnected\|connection reset\|broken pipe' "$text")
	if [ -n "$line" ]; then
		printf 'lost %s\n' "connection lost mid-run (fio --server or the host died): $line"
		return 0
	fi
	# the job itself failed there: its first message, or nothing to add
	line=$(first_match 'tswap:\|fio:\|error' "$text")
	printf 'job %s\n' "$line"
}

# fleet_tag_result FILE H [REASON]: add the host to a result.json (and
# REASON as its error).
fleet_tag_result() {
	local file=$1 h=$2 reason=${3:-}
	jq --argjson i "$h" --arg host "${H_LABEL[h]}" --arg id "${H_ID[h]}" --arg address "${H_ADDR[h]}" \
		--arg target "${H_TARGET[h]}" --arg reason "${reason:0:600}" \
		'. + {host_index: $i, host: $host, host_id: $id, address: $address, target: $target}
		 | if $reason != "" then .error = $reason | .status = "error" else . end' "$file" >"$file.tmp"
	mv -f "$file.tmp" "$file"
}

# fleet_result DIR RUNKEY REPEAT RC WALL PLANLINE H LIMIT: DIR/result.json
# for host H; prints fleet_classify's line when the run failed.
fleet_result() {
	local dir=$1 runkey=$2 rep=$3 rc=$4 wall=$5 line=$6 h=$7 limit=$8 why='' st
	fleet_split "$dir"
	result_json "$dir" "$runkey" "$rep" "$rc" "$wall" "$line"
	IFS= read -r st <"$dir/progress.txt"
	if [[ $st == 'ERROR: '* ]]; then
		why=$(fleet_classify "$dir" "$rc" "$limit" "$h")
	fi
	fleet_tag_result "$dir/result.json" "$h" "${why#* }"
	printf '%s\n' "$why"
}

# fleet_preflight H...: every host given parses its first point's job
# (`fio --client --parse-only`: fio's probe answer gives its hostname and
# fio version, and the parse loads the engine; no I/O, no job runs), all at
# once, within --connect-timeout. A host that does not answer, runs another
# fio version, or cannot load the engine or parse the job is lost for this
# run (H_LOST): its points say why.
fleet_preflight() {
	local h dir rc line ver name i=0 ok reason first why
	first=$(plan_lines "$RUN/plan.json" 'first(.points[] | select(.kind == "tswap"))')
	FLEET_PIDS=()
	for h in "$@"; do
		dir="$RUN/preflight/${H_ID[h]}"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		{
			printf '; tswap-sweep preflight of %s: parsed only (fio --client --parse-only):
' "${H_LABEL[h]}"
			printf '; fio'"'"'s probe answer (hostname, fio version), and the engine loads.
'
			point_job "$first" "$h"
		} >"$dir/job.fio"
		fleet_launch "$dir" "$h" "$CONNECT_TIMEOUT" 2 --parse-only job.fio
	done
	for h in "$@"; do
		rc=0
		wait "${FLEET_PIDS[i]}" 2>/dev/null || rc=$? # no "Killed" notice: the status says it
		i=$((i + 1))
		dir="$RUN/preflight/${H_ID[h]}"
		line=$(grep -m 1 '^hostname=.*, fio=' "$dir/fio.client.out" 2>/dev/null || true)
		name=$(sed -n 's/^hostname=\([^,]*\),.*/\1/p' <<<"$line")
		ver=$(sed -n 's/.*, fio=\([^,]*\),.*/\1/p' <<<"$line")
		ok=true
		reason=''
		fleet_split "$dir"
		why=$(fleet_classify "$dir" "$rc" "$CONNECT_TIMEOUT" "$h")
		if [ -z "$line" ]; then
			reason=${why#* }
			reason=${reason:-no probe answer from fio --client=${H_ADDR[h]} (exit $rc)}
		elif [ "$ver" != "$FIO_WANT" ]; then
			reason="fio version differs: the host runs $ver, this run wants ${FIO_WANT:-unknown} (this machine's fio, or --fio-version); the engine is built for one fio version, and hosts are compared on one"
		else
			line=$(cat -- "$dir/fio.text")
			line=$(first_match 'bad option\|failed parsing\|dropped' "$line")
			if [[ $why == "lost "* ]]; then
				reason=${why#lost }
			elif [ -n "$line" ]; then
				reason="the host's fio rejects the job: $line (preflight/${H_ID[h]}/job.fio)"
			elif [ "$rc" -ne 0 ]; then
				reason="the host answered (hostname $name, $ver) but fio --client exited $rc parsing the job"
			fi
		fi
		if [ -n "$reason" ]; then
			ok=false
			H_LOST[h]="preflight: $reason"
			fleet_meta_lost "$h" "the host failed the preflight"
		fi
		jq -n --argjson i "$h" --arg host "${H_LABEL[h]}" --arg address "${H_ADDR[h]}" \
			--arg hostname "$name" --arg fio "$ver" --argjson ok "$ok" --arg reason "$reason" \
			--argjson rc "$rc" \
			'{host_index: $i, host: $host, address: $address, ok: $ok, reason: $reason, fio_rc: $rc,
			  hostname: (if $hostname == "" then null else $hostname end),
			  fio_version: (if $fio == "" then null else $fio end)}' >"$dir/result.json"
	done
	FLEET_PIDS=()
}
