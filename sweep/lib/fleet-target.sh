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
# Rules (docs/fleet.md "Safety"; a file's: target.sh file_rules): a path
# on a kernel pseudo-filesystem there (scratch.sh PSEUDO_FS_TYPES) is
# refused; a block device is written only with --destructive --force (the
# sweep does not check mounts and signatures on a host); an existing
# regular file that is not the sweep's (its mark, scratch.sh, tested on
# the host) only with --destructive, and read only if it is at least
# --size long (fio writes a shorter one out); anything else that exists is
# refused. A new path is created and marked there once every host has
# passed (a second fio --client, fleet_create_job), as scratch_create does
# here, so a later run or --resume finds it the sweep's own by its mark.
#
# The same probe reads the host's metadata (fleet-meta.sh).
#
# Owns: fleet_probe_job, fleet_probe_one, fleet_prerun, fleet_ours_test,
# fleet_create_job, fleet_probe_targets, fleet_create_targets. Reads: the
# H_* arrays, RUN, DESTRUCTIVE, FORCE, SIZE, SIZE_BYTES, CONNECT_TIMEOUT,
# HOST_TIMEOUT.
# Writes: RUN/preflight/ID/target/; a new target file and its mark on the
# host.
# shellcheck disable=SC2016 # $(...) in the probe commands runs on the host
# shellcheck disable=SC2164 # cd in a subshell under the entry point's set -e
# shellcheck disable=SC2034 # sets H_LOST (state.sh)

readonly FLEET_PROBES='ctl exists block file big ours pseudo'

# fleet_probe_job PATH [METANAME]: the probe's job file for target PATH;
# with METANAME, also the job that reads the host's metadata (fleet-meta.sh).
fleet_probe_job() {
	local p=$1 q test name pseudo
	q="'${p//\'/\'\\\'\'}'" # PATH in single quotes for the host's sh
	# on a pseudo-filesystem: PATH's, or its directory's where it is new
	pseudo="t=\$(stat -L -f -c %T -- $q || stat -L -f -c %T -- \"\$(dirname -- $q)\") && test -n \"\$t\" && echo ' $PSEUDO_FS_TYPES ' | grep -qF \" \$t \""
	printf '; tswap-sweep: what the target is on this host (exec_prerun tests; no I/O)\n'
	printf '[global]\nioengine=null\nfilename=tswap-probe\nsize=4k\nbs=4k\nrw=read\n'
	for name in $FLEET_PROBES; do
		case $name in
		ctl) test='true' ;;
		exists) test="test -e $q" ;;
		block) test="test -b $q" ;;
		file) test="test -f $q" ;;
		big) test="test \"\$(stat -L -c %s -- $q)\" -ge $SIZE_BYTES" ;;
		ours) test=$(fleet_ours_test "$q") ;;
		pseudo) test=$pseudo ;;
		esac
		fleet_probe_one "$name" "$test"
	done
	[ -z "${2:-}" ] || fleet_meta_job "$p" "$2"
}

# fleet_create_job PATH: the job file that makes the new target PATH on its
# host as prepare_target does here: "new" creates it (O_EXCL), sizes it to
# SIZE_BYTES (so fio never lays it out again: that unlinks and recreates
# the file, which would lose the mark) and marks it as scratch_create
# does; then "fill" (stonewall; create_serialize=0: its file is opened
# after "new") writes it in full, if it carries the mark, so reads hit the
# device. No ';' or '${' in a command: fio's job syntax.
fleet_create_job() {
	local q="'${1//\'/\'\\\'\'}'" test
	printf '; tswap-sweep: create the new target on this host, mark it the sweep'"'"'s, write it\n'
	printf '[global]\nioengine=null\nfilename=tswap-probe\nsize=4k\nbs=4k\nrw=read\n'
	fleet_probe_one new "test ! -e $q && (set -C && : >$q) && truncate -s $SIZE_BYTES -- $q && m=\$($(fleet_mark_cmd "$q")) && (setfattr -n $SCRATCH_XATTR -v \"\$m\" -- $q || (echo \"\$m\" | grep -q ':.*:' && test ! -L $q$SCRATCH_SIDECAR && set -C && echo \"\$m\" >$q$SCRATCH_SIDECAR))"
	printf '[tswap-probe-fill]\nstonewall\ncreate_serialize=0\nioengine=libaio\ndirect=1\nbs=1m\niodepth=16\nrw=write\nend_fsync=1\nfilename=%s\nsize=%s\n' \
		"${1//:/\\:}" "$SIZE_BYTES"
	test=$(fleet_ours_test "$q")
	fleet_prerun fill "$test"
}

# fleet_mark_cmd QPATH: the host's command that prints the mark of the
# file QPATH (quoted for sh) as scratch_mark does: DEV:INODE:BIRTH, or
# DEV:INODE without a birth time.
fleet_mark_cmd() {
	printf "stat -L -c %%d:%%i:%%.9W -- %s | sed -e 's/:0[.0]*\$//'" "$1"
}

# fleet_ours_test QPATH: the host's test that the file QPATH carries the
# sweep's mark (scratch_owned): its xattr, or a sidecar that is a regular
# file, holds the mark, a sidecar only one with a birth time.
fleet_ours_test() {
	local m
	m=$(fleet_mark_cmd "$1")
	printf 'test "$(getfattr --only-values -n %s -- %s)" = "$(%s)" || (test -f %s%s && test ! -L %s%s && test "$(head -n 1 -- %s%s)" = "$(stat -L -c %%d:%%i:%%.9W -- %s)")' \
		"$SCRATCH_XATTR" "$1" "$m" "$1" "$SCRATCH_SIDECAR" "$1" "$SCRATCH_SIDECAR" "$1" "$SCRATCH_SIDECAR" "$1"
}

# fleet_probe_one NAME TEST: the probe job NAME, "yes" if TEST succeeds on
# the host; fleet_prerun NAME TEST: its exec_prerun line. fio appends
# "> JOB.prerun.txt 2>&1" to the last command: that one removes the file
# (and keeps the test's status).
fleet_probe_one() {
	printf '[tswap-probe-%s]\n' "$1"
	fleet_prerun "$@"
}
fleet_prerun() {
	printf 'exec_prerun=(%s) 2>/dev/null && rm -f tswap-probe-%s.prerun.txt || ! rm -f tswap-probe-%s.prerun.txt\n' \
		"$2" "$1" "$1"
}

# fleet_probe_targets WRITES H...: probe each host's target (all at once,
# within --connect-timeout) and apply the rules; a refusal exits 2 with one
# line naming the host and the target. A host whose probe gives no answer
# is lost for this run (H_LOST), like one that fails the preflight.
fleet_probe_targets() {
	local writes=$1 h dir rc i=0 name t where
	local -a fresh=()
	local -A yes=()
	shift
	FLEET_PIDS=()
	for h in "$@"; do
		dir="$RUN/preflight/${H_ID[h]}/target"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		name=$(fleet_meta_name "$h")
		fleet_probe_job "${H_TARGET[h]}" "$name" >"$dir/probe.fio"
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
		[ "${yes[pseudo]:-0}" = 0 ] ||
			die "$EXIT_USAGE" "refusing $where: it is on a kernel pseudo-filesystem there, not storage"
		if [ "${yes[block]:-0}" = 1 ]; then
			[ "$writes" = 1 ] || continue
			if [ "$DESTRUCTIVE" = 0 ] || [ "$FORCE" = 0 ]; then
				die "$EXIT_USAGE" "refusing $where: it is a block device on the host, and the sweep writes to it (destroying its data); the sweep cannot check it there for mounts or signatures, so pass --destructive --force, or --rw read"
			fi
			warn "writing to $where (a block device) because of --destructive --force"
		elif [ "${yes[exists]:-0}" = 0 ]; then
			: # new: created once every host has passed (fleet_create_targets)
		elif [ "${yes[file]:-0}" = 0 ]; then
			die "$EXIT_USAGE" "refusing $where: not a regular file or a block device there"
		elif [ "${yes[ours]:-0}" = 0 ]; then
			# not the sweep's own file (its mark)
			file_rules "$where" "$where" "$writes" "${yes[big]:-0}"
		fi
		[ "${yes[exists]:-0}" = 1 ] || fresh+=("$h")
	done
	FLEET_PIDS=()
	# every host passed: now the new paths are created
	[ "${#fresh[@]}" -eq 0 ] || fleet_create_targets "${fresh[@]}"
}

# fleet_create_targets H...: the new target of each host H made there
# (fleet_create_job, all at once, in --connect-timeout plus
# --host-timeout); one that could not be marked is created by fio,
# unmarked, and said.
fleet_create_targets() {
	local h dir ans i=0
	FLEET_PIDS=()
	for h in "$@"; do
		dir="$RUN/preflight/${H_ID[h]}/target/create"
		rm -rf -- "$dir"
		mkdir -p "$dir"
		fleet_create_job "${H_TARGET[h]}" >"$dir/create.fio"
		fleet_launch "$dir" "$h" "$((CONNECT_TIMEOUT + HOST_TIMEOUT))" 2 --output-format=json create.fio
	done
	for h in "$@"; do
		wait "${FLEET_PIDS[i]}" 2>/dev/null || true
		i=$((i + 1))
		dir="$RUN/preflight/${H_ID[h]}/target/create"
		sed -n '/^{/,$p' "$dir/fio.client.out" >"$dir/fio.json" 2>/dev/null || true
		ans=$(jq -r --argjson n "$SIZE_BYTES" '([.client_stats[] | select(.jobname == "tswap-probe-new" and .read.io_bytes > 0)] | length),
			([.client_stats[] | select(.jobname == "tswap-probe-fill" and .write.io_bytes >= $n)] | length)' "$dir/fio.json" 2>/dev/null) || ans=''
		ans=${ans//$'\n'/ }
		case $ans in
		'1 1') ;;
		'1 '*) warn "target ${H_TARGET[h]} on ${H_LABEL[h]}: created and marked, but not written in full (preflight/${H_ID[h]}/target/create/): reads of its holes never reach the device" ;;
		*) warn "target ${H_TARGET[h]} on ${H_LABEL[h]}: not created and marked as the sweep's (no xattr, no birth time, or no directory; preflight/${H_ID[h]}/target/create/): fio creates it, unmarked: a later run on it needs --destructive" ;;
		esac
	done
	FLEET_PIDS=()
}
