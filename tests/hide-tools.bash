# shellcheck shell=bash
# tests/hide-tools.bash - hide_tools, loaded by helpers.bash and by
# bats files that do not load helpers.bash (sweep-plots.bats).

# hide_tools NAME...: PATH without the commands NAME: every other command
# of PATH's directories (the first of a name) linked into a directory of
# its own, PATH that. Call it in a subshell to get PATH back.
hide_tools() {
	local bin d f n
	local -a dirs files=()
	local -A seen=()
	for n in "$@"; do
		seen[$n]=1
	done
	bin=$(mktemp -d "$BATS_TEST_TMPDIR/hidden.XXXXXX")
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		for f in "$d"/*; do
			n=${f##*/}
			if [ -f "$f" ] && [ -x "$f" ] && [ -z "${seen[$n]:-}" ]; then
				seen[$n]=1
				files+=("$f")
			fi
		done
	done
	ln -s -t "$bin" -- "${files[@]}"
	PATH=$bin
	for n in "$@"; do
		! command -v "$n" >/dev/null || fail "$n is still on PATH"
	done
}
