# shellcheck shell=bash
# fleet-target.sh - each host's target, judged on that host by local mode's
# rules (target.sh check_target, scratch.sh), through fio's own
# client/server channel (no SSH).
#
# The probe is one small fio job file sent with `fio --client=HOST,PORT`:
# one job per question, ioengine=null (no file is opened), each with an
# exec_prerun test on the host. fio runs exec_prerun with system(3) on the
# server and skips a job whose command fails (fio backend.c, thread_main),
# so a job that reads its 4 KiB says "yes", one that reads 0 says "no".
# A control job ("true") must say yes, else the check cannot run there and
# the target is refused. exec_prerun's output goes to JOB.prerun.txt in the
# server's working directory; the command removes that file itself.
#
# Rules (docs/fleet.md "Safety"; a file's: target.sh file_rules): a block device is written only with
# --destructive --force (the sweep does not check mounts and signatures on
# a host); an existing regular file that is not the sweep's (its mark,
# scratch.sh) only with --destructive, and read only if it is at least
# --size long (fio writes a shorter one out); anything else that exists is
# refused; a new path is created by fio and recorded in RUN/fleet-created,
# so --resume of this run takes it as its own.
#
# The same probe reads the host's metadata (fleet-meta.sh).
#
# Owns: fleet_probe_job, fleet_probe_targets. Reads: the H_* arrays, RUN,
# DESTRUCTIVE, FORCE, SIZE, SIZE_BYTES, CONNECT_TIMEOUT.
# Writes: RUN/preflight/ID/target/, RUN/fleet-created.
# shellcheck disable=SC2016 # $(...) in the probe commands runs on the host
# shellcheck disable=SC2164 # cd in a subshell under the entry point's set -e
# shellcheck disable=SC2034 # sets H_LOST (state.sh)

readonly FLEET_PROBES='ctl exists block file big ours'

# fleet_probe_job PATH [METANAME]: the probe's job file for target PATH;
# with METANAME, also the job that reads the host's metadata (fleet-meta.sh).
fleet_probe_job() {
	local p=$1 q test name
	q="'${p//\'/\'\\\'\'}'" # PATH in single quotes for the host's sh
	printf '; tswap-sweep: what the target is on this host (exec_prerun tests; no I/O)\n'
	printf '[global]\nioengine=null\nfilename=tswap-probe\nsize=4k\nbs=4k\nrw=read\n'
	for name in $FLEET_PROBES; do
		case $name in
		ctl) test='true' ;;
		exists) test="test -e $q" ;;
		block) test="test -b $q" ;;
		file) test="test -f $q" ;;
		big) test="test \"\$(stat -L -c %s -- $q)\" -ge $SIZE_BYTES" ;;
		ours) test="test \"\$(getfattr --only-values -n $SCRATCH_XATTR -- $q)\" = \"\$(stat -L -c %d:%i -- $q)\" || test \"\$(head -n 1 -- $q$SCRATCH_SIDECAR)\" = \"\$(stat -L -c %d:%i -- $q)\"" ;;
		esac
		# fio appends "> JOB.prerun.txt 2>&1" to the last command: that one
		# removes the file (and keeps the test's status)
		printf '[tswap-probe-%s]\nexec_prerun=(%s) 2>/dev/null && rm -f tswap-probe-%s.prerun.txt || ! rm -f tswap-probe-%s.prerun.txt\n' \
			"$name" "$test" "$name" "$name"
	done
	[ -z "${2:-}" ] || fleet_meta_job "$p" "$2"
}

# fleet_probe_targets WRITES H...: probe each host's target (all at once,
# within --connect-timeout) and apply the rules; a refusal exits 2 with one
# line naming the host and the target. A host whose probe gives no answer
# is lost for this run (H_LOST), like one that fails the preflight.
fleet_probe_targets() {
	local writes=$1 h dir rc i=0 name t where created
	local -A yes=()
	shift
	created="$RUN/fleet-created"
	FLEET_PIDS=()
	for h in "$@"; do
		dir="$RUN/preflight/${H_ID[h]}/target"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		fleet_probe_job "${H_TARGET[h]}" "$(fleet_meta_name "$h")" >"$dir/probe.fio"
		(
			cd "$dir"
			rc=0
			timeout -k 2 "$CONNECT_TIMEOUT" fio --client="${H_ADDR[h]}" --output-format=json probe.fio \
				>fio.client.out 2>fio.stderr </dev/null || rc=$?
			# the metadata the probe left on the host (fleet-meta.sh), unless
			# the host did not answer in time
			[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || fleet_meta_fetch "$h" || true
			exit "$rc"
		) &
		FLEET_PIDS+=("$!")
	done
	for h in "$@"; do
		rc=0
		wait "${FLEET_PIDS[i]}" 2>/dev/null || rc=$?
		i=$((i + 1))
		dir="$RUN/preflight/${H_ID[h]}/target"
		where="target ${H_TARGET[h]} on ${H_LABEL[h]}"
		yes=()
		sed -n '/^{/,$p' "$dir/fio.client.out" >"$dir/fio.json" 2>/dev/null || true
		while IFS=$'\t' read -r name t; do
			[ -n "$name" ] && yes[$name]=$t
		done < <(jq -r '.client_stats[] | select(.jobname | startswith("tswap-probe-"))
			| "\(.jobname | ltrimstr("tswap-probe-"))\t\(if .read.io_bytes > 0 then 1 else 0 end)"' \
			"$dir/fio.json" 2>/dev/null || true)
		if [ "${#yes[@]}" -eq 0 ]; then
			H_LOST[h]="preflight: no answer to the target check (fio --client exit $rc; preflight/${H_ID[h]}/target/)"
			fleet_meta_lost "$h" "no answer to the probe"
			continue
		fi
		fleet_meta_read "$h"
		[ "${yes[ctl]:-0}" = 1 ] ||
			die "$EXIT_USAGE" "refusing $where: the check of what it is cannot run there (fio's exec_prerun fails on the host; preflight/${H_ID[h]}/target/)"
		if [ "${yes[block]:-0}" = 1 ]; then
			[ "$writes" = 1 ] || continue
			if [ "$DESTRUCTIVE" = 0 ] || [ "$FORCE" = 0 ]; then
				die "$EXIT_USAGE" "refusing $where: it is a block device on the host, and the sweep writes to it (destroying its data); the sweep cannot check it there for mounts or signatures, so pass --destructive --force, or --rw read"
			fi
			warn "writing to $where (a block device) because of --destructive --force"
		elif [ "${yes[exists]:-0}" = 0 ]; then
			grep -qxF "${H_ID[h]} ${H_TARGET[h]}" "$created" 2>/dev/null ||
				printf '%s %s\n' "${H_ID[h]}" "${H_TARGET[h]}" >>"$created"
		elif [ "${yes[file]:-0}" = 0 ]; then
			die "$EXIT_USAGE" "refusing $where: not a regular file or a block device there"
		elif [ "${yes[ours]:-0}" = 0 ] && ! grep -qxF "${H_ID[h]} ${H_TARGET[h]}" "$created" 2>/dev/null; then
			# not the sweep's own file (its mark, or this run created it)
			file_rules "$where" "$where" "$writes" "${yes[big]:-0}"
		fi
	done
	FLEET_PIDS=()
}
