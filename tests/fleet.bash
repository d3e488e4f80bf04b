# shellcheck shell=bash
# SMALL is used by the tests; status/output/stderr are set by bats' run.
# shellcheck disable=SC2034,SC2154
#
# tests/fleet.bash - what tests/fleet.bats and tests/fleet-hosts.bats share
# (loaded after helpers.bash): tswap-sweep --hosts (fleet mode,
# docs/fleet.md) against real `fio --server` processes on loopback
# addresses 127.0.0.2, .3 and .4 (one random free port), each with its own
# target directory on a block-backed filesystem. The sweep runs from an
# installed layout (PREFIX/bin, PREFIX/share/tswap/{grids,lib,jq,tswap},
# PREFIX/lib/fio/tswap.so), so the engine path it gives the servers is its
# default, the installed one.
#
# Every server is started by a test and stopped by the teardown, by PID
# (with its children: fio --server forks a process per connection and per
# job).
#
#   start_servers          a free $PORT and servers on 127.0.0.2, .3 and .4
#                          (PIDs in SERVER_PIDS[2..4])
#   start_server N         (re)start the server on 127.0.0.N:$PORT
#                          (TSWAP_SYSROOT=SERVER_SYSROOT[N] when set)
#   kill_server N          SIGKILL it and everything it runs
#   proc_tree PID          PID and its descendants, parents first
#   holds_open PID FILE    the processes of PID's tree that have FILE open
#   tree_files PID         its processes and the files they have open
#   fleet ARGS...          `run --separate-stderr` of the installed sweep
#   expect_status N        the last fleet run exited N (else show it)
#   csv_col FILE NAME      the values of CSV column NAME, one per row
#   rows FILE HOST         how many CSV rows HOST has
#   expect_ok_rows FILE N  N rows of FILE say ok (else show it)
#   hosts_file LINE...     $SCRATCH/hosts.txt, one host line each
#   SMALL                  sweep options for small, fast points
#   fleet_py CODE FILE...  python3 CODE with the checkout's tswap package,
#                          doc(N): FILE N as JSON, out(DOC): DOC as jq prints it

setup_file() {
	local g
	[ -f "$ENGINE" ] || return 0 # setup() says why
	FLEET_PREFIX=$BATS_FILE_TMPDIR/prefix
	install -D -m 0755 "$REPO/sweep/tswap-sweep" "$FLEET_PREFIX/bin/tswap-sweep"
	for g in "$REPO"/sweep/grids/*.grid; do
		install -D -m 0644 "$g" "$FLEET_PREFIX/share/tswap/grids/${g##*/}"
	done
	for g in "$REPO"/sweep/lib/meta-collect.sh "$REPO"/sweep/tswap/*.py "$REPO"/sweep/tswap/*/*.py; do
		install -D -m 0644 "$g" "$FLEET_PREFIX/share/tswap/${g#"$REPO"/sweep/}"
	done
	install -D -m 0755 "$ENGINE" "$FLEET_PREFIX/lib/fio/tswap.so"
	export FLEET_PREFIX
}

setup() {
	common_setup
	FLEET_SWEEP=$FLEET_PREFIX/bin/tswap-sweep
	SERVER_PIDS=()
	SERVER_SYSROOT=()
	PORT=
}

teardown() {
	stop_servers
	common_teardown
}

# --- fio servers ----------------------------------------------------------------

# tcp_hex ADDR PORT: the local address as /proc/net/tcp writes it.
tcp_hex() {
	local o1 o2 o3 o4
	IFS=. read -r o1 o2 o3 o4 <<<"$1"
	printf '%02X%02X%02X%02X:%04X\n' "$o4" "$o3" "$o2" "$o1" "$2"
}

# port_in_use PORT: something listens on PORT (any address).
port_in_use() {
	awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# listening ADDR PORT
listening() {
	awk -v h="$(tcp_hex "$1" "$2")" '$2 == h && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

# start_server N: fio --server on 127.0.0.N:$PORT, in $SCRATCH/hostN (its
# own session, fd 3 closed for bats); its PID in SERVER_PIDS[N]. With
# SERVER_SYSROOT[N] set, the server (and the metadata probe it runs) has
# TSWAP_SYSROOT=that (a fixture tree, tests/check.bash).
start_server() {
	local n=$1 dir=$SCRATCH/host$1 i
	mkdir -p "$dir"
	(cd "$dir" && exec env ${SERVER_SYSROOT[n]:+"TSWAP_SYSROOT=${SERVER_SYSROOT[n]}"} \
		setsid fio --server="127.0.0.$n,$PORT" >>"$dir/server.log" 2>&1 </dev/null 3>&-) &
	SERVER_PIDS[n]=$!
	for ((i = 0; i < 100; i++)); do
		listening "127.0.0.$n" "$PORT" && return 0
		sleep 0.05
	done
	fail "fio --server=127.0.0.$n,$PORT is not listening after 5 s: $(cat "$dir/server.log")"
}

# start_servers: a free port, and servers on 127.0.0.2, .3 and .4.
start_servers() {
	local try n
	for ((try = 0; try < 50; try++)); do
		PORT=$((20000 + RANDOM % 40000))
		port_in_use "$PORT" || break
	done
	for n in 2 3 4; do
		start_server "$n"
	done
}

# proc_tree PID: PID and all its descendants, parents first.
proc_tree() {
	local pid=$1 child
	printf '%s\n' "$pid"
	for child in $(pgrep -P "$pid" 2>/dev/null || true); do
		proc_tree "$child"
	done
}

# holds_open PID FILE: prints the processes of PID's tree that have FILE
# open (a job of the server runs on it); status 1 when none has.
holds_open() {
	local pid st=1
	for pid in $(proc_tree "$1"); do
		if find "/proc/$pid/fd" -lname "$2" 2>/dev/null | grep -q .; then
			printf '%s\n' "$pid"
			st=0
		fi
	done
	return "$st"
}

# tree_files PID: each process of PID's tree, its state and command, and
# the files it has open (a failed wait's evidence).
tree_files() {
	local pid
	for pid in $(proc_tree "$1"); do
		ps -o pid=,ppid=,stat=,args= -p "$pid" || true
		find "/proc/$pid/fd" -mindepth 1 -printf '    %l\n' 2>/dev/null | grep -v -e '^    socket:' -e '^    pipe:' -e '^    anon_inode:' -e '^    /dev/' || true
	done
}

# freeze_tree PID: SIGSTOP PID and, once it is stopped (it forks no
# more), its descendants the same way, parents first; prints each PID.
# A connection the server accepts during the walk cannot escape it.
freeze_tree() {
	local pid=$1 child i st
	kill -STOP "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 500; i++)); do
		st=$(ps -o stat= -p "$pid") || return 0
		[[ $st == [TtZ]* ]] && break
		sleep 0.01
	done
	printf '%s\n' "$pid"
	for child in $(pgrep -P "$pid" 2>/dev/null || true); do
		freeze_tree "$child"
	done
}

# kill_server N: the server and everything it runs die at once (a host
# that dies mid-run): frozen first, then SIGKILLed.
kill_server() {
	local pid
	local -a tree=()
	mapfile -t tree < <(freeze_tree "${SERVER_PIDS[$1]}")
	for pid in "${tree[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait "${SERVER_PIDS[$1]}" 2>/dev/null || true
	unset "SERVER_PIDS[$1]"
}

stop_servers() {
	local n
	# SIGKILL ends a stopped (SIGSTOP) server too
	for n in "${!SERVER_PIDS[@]}"; do
		kill_server "$n"
	done
	SERVER_PIDS=()
}

# --- running the sweep -------------------------------------------------------------

# Small and fast: 4 MiB tensors in a 32 MiB region of each target.
SMALL=(--size 32m --tensor-size 4m)

fleet() {
	run --separate-stderr timeout -k 10 180 "$FLEET_SWEEP" "$@"
}

show_fleet() {
	printf 'tswap-sweep exit %s\n--- stdout\n%s\n--- stderr\n%s\n---\n' \
		"$status" "$output" "${stderr:-}" >&2
}

# expect_status N: the last fleet run exited N (else show it).
expect_status() {
	if [ "$status" -ne "$1" ]; then
		show_fleet
		fail "tswap-sweep exited $status, expected $1"
	fi
}

# csv_col FILE NAME: the values of column NAME, one per row (RFC 4180
# quoting: the address column holds a comma).
csv_col() {
	awk -v name="$2" '
	function parse(line,   i, c, f, q, n) {
		n = 0; f = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) {
				if (c == "\"" && substr(line, i + 1, 1) == "\"") { f = f c; i++ }
				else if (c == "\"") q = 0
				else f = f c
			} else if (c == "\"") q = 1
			else if (c == ",") { F[++n] = f; f = "" }
			else f = f c
		}
		F[++n] = f
		return n
	}
	NR == 1 { n = parse($0); for (i = 1; i <= n; i++) if (F[i] == name) col = i; next }
	{ parse($0); print F[col] }' "$1"
}

# rows FILE HOST: CSV rows of HOST (first column).
rows() {
	grep -c "^\"$2\"," "$1" || true
}

# expect_ok_rows FILE N: N rows of summary.csv FILE say ok (else show it).
expect_ok_rows() {
	local n
	n=$(grep -c '"ok"' "$1" || true)
	if [ "$n" -ne "$2" ]; then
		show_fleet
		cat "$1" >&2
		fail "$n rows ok in $1, expected $2"
	fi
}

hosts_file() {
	printf '%s\n' "$@" >"$SCRATCH/hosts.txt"
}

# --- the sweep's Python package (units the tests call directly) ---------------------

fleet_py() {
	local code=$1
	shift
	PYTHONPATH=$REPO/sweep python3 -B -c "import sys
from tswap import jqjson
def doc(n): return jqjson.loads(open(sys.argv[n]).read())
def out(d): print(jqjson.dumps(d))
$code" "$@"
}
