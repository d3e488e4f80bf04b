# shellcheck shell=bash
# fleet-meta.sh - what each fleet host's target and host are (the fields of
# meta.json, docs/sweep.md), read on the host through fio's own
# client/server channel (no SSH), with lib/meta-collect.sh, the collector of
# local runs.
#
# fio sends no exec_prerun output back to the client, but it does send each
# job's description (thread_stat.description, "desc" in client_stats), and
# `fio --client --remote-config FILE` parses a job file that is on the
# server. So, in two fio client runs:
#  1. the target probe (fleet-target.sh) carries one more job, NAME, whose
#     exec_prerun is meta-collect.sh itself, without its comment lines,
#     gzip'd and base64'd into the job file (the host needs only fio, sh,
#     gzip and base64 - no tswap files, no jq): one line, which fio reads
#     up to 8 KiB (OPT_LEN_MAX, fio parse.h; a longer one crashes fio
#     --client 3.33), the target's path included. In --fio-job mode it prints a job file of null jobs
#     whose descriptions are its output in 240-character base64 chunks;
#     fio saves that output as NAME.prerun.txt in the server's directory.
#  2. `fio --client=HOST --remote-config NAME.prerun.txt` runs those jobs
#     (ioengine=null, no file); their descriptions, in job order, are the
#     collector's output. The first job removes NAME.prerun.txt.
# Nothing is written on the host but that one file in fio --server's
# directory (where fio writes exec_prerun output anyway), removed in step 2;
# a run stopped between the steps leaves it there. The device's serial
# number leaves the host only hashed (meta-collect.sh).
#
# A host whose metadata cannot be read (no answer, no gzip or base64 there,
# a server directory it cannot write) keeps its place in the run: its
# meta.json says "not collected" and why, and the outputs show that.
#
# Owns: fleet_meta_name, fleet_meta_code, fleet_meta_job, fleet_meta_fetch, fleet_meta_read,
# fleet_meta_lost. Reads: the H_* arrays, RUN, ENGINE,
# CONNECT_TIMEOUT, SWEEP_HOME. Writes: RUN/preflight/ID/meta.json (and
# meta.client.out, meta.stderr, meta.kv next to it).
# shellcheck disable=SC2016 # $(...) in the prerun command runs on the host

# fleet_meta_name H: the probe job's name for host H (unique per run and
# host: two hosts-file lines may name one server, which has one directory).
fleet_meta_name() {
	printf 'tswap-meta-%d-h%02d\n' "$$" "$(($1 + 1))"
}

# fleet_meta_code: lib/meta-collect.sh without its comment lines (half
# its size: the job line's 8 KiB, above).
fleet_meta_code() {
	local l
	while IFS= read -r l || [ -n "$l" ]; do
		[[ $l =~ ^[[:space:]]*# ]] || printf '%s\n' "$l"
	done <"$SWEEP_HOME/lib/meta-collect.sh"
}

# fleet_meta_job PATH NAME: the probe's metadata job (a section of the
# probe job file, fleet-target.sh). PATH is fio-safe (fleet.sh), quoted in
# single quotes for the host's sh.
fleet_meta_job() {
	local q="'${1//\'/\'\\\'\'}'" code
	# shellcheck disable=SC2312 # gzip's status: pipefail (tswap-sweep)
	code=$(fleet_meta_code | gzip -9 -n | base64 -w 0)
	printf '[%s]\nexec_prerun=sh -c "$(echo %s | base64 -d | gunzip)" meta-collect.sh --fio-job %s %s\n' \
		"$2" "$code" "$2" "$q"
}

# fleet_meta_fetch H: step 2 for host H, in RUN/preflight/ID/target (the
# probe's directory), within --connect-timeout.
fleet_meta_fetch() {
	local name
	name=$(fleet_meta_name "$1")
	timeout -k 2 "$CONNECT_TIMEOUT" fio --client="${H_ADDR[$1]}" --output-format=json \
		--remote-config "$name.prerun.txt" >meta.client.out 2>meta.stderr </dev/null
}

# fleet_meta_lost H REASON: RUN/preflight/ID/meta.json says the metadata of
# host H was not collected, and why.
fleet_meta_lost() {
	local dir="$RUN/preflight/${H_ID[$1]}"
	mkdir -p "$dir"
	jq -n --arg why "$2" '{collected: false, note: "metadata: not collected (\($why))"}' >"$dir/meta.json.tmp"
	mv -f "$dir/meta.json.tmp" "$dir/meta.json"
}

# fleet_meta_read H: RUN/preflight/ID/meta.json from step 2's output (in
# RUN/preflight/ID/target/), or why not.
fleet_meta_read() {
	local h=$1 dir="$RUN/preflight/${H_ID[$1]}" name why out ver json
	name=$(fleet_meta_name "$h")
	# shellcheck disable=SC2312 # gunzip checks length and CRC: a bad base64 -d fails there
	if ! out=$(sed -n '/^{/,$p' "$dir/target/meta.client.out" 2>/dev/null) ||
		! out=$(jq -r --arg n "$name-" '[.client_stats[]? | select(.jobname | startswith($n))] | sort_by(.jobname)
			| if length == 0 then error("no jobs") else map(.desc // "") | join("") end' 2>/dev/null <<<"$out") ||
		! gunzip < <(base64 -d 2>/dev/null <<<"$out") 2>/dev/null >"$dir/target/meta.kv"; then
		why=$(grep -v '^[[:space:]]*$' "$dir/target/meta.stderr" "$dir/target/meta.client.out" 2>/dev/null |
			grep -iv '^{' | grep -i -m 1 'error\|fail\|no such\|refused\|timeout' || true)
		fleet_meta_lost "$h" "the host's answer to fio --remote-config $name.prerun.txt has no metadata${why:+: ${why:0:200}}; preflight/${H_ID[h]}/target/"
		return 0
	fi
	ver=$(tswap_version)
	if ! json=$(meta_from_kv "${H_TARGET[h]}" "${H_ENGINE[h]}" "$ver (the sweep's, on this controller)" <"$dir/target/meta.kv") ||
		! jq '. + {collected: true}' <<<"$json" >"$dir/meta.json.tmp" 2>/dev/null; then
		rm -f "$dir/meta.json.tmp"
		fleet_meta_lost "$h" "the collector's output does not parse (preflight/${H_ID[h]}/target/meta.kv)"
		return 0
	fi
	mv -f "$dir/meta.json.tmp" "$dir/meta.json"
}
