#!/usr/bin/env bats
# tests/run-grid.bats - jobs/run-grid, the simple shell sweep over a
# generated grid job file (POSIX sh, run by dash here as Debian's /bin/sh
# runs it): one line per section, the fastest, and what it refuses.

# output, stderr and status are set by bats' run; ${TSWAP_TARGET} in
# single quotes is fio's to expand.
# shellcheck disable=SC2154,SC2016

bats_require_minimum_version 1.5.0

load helpers

RUN_GRID=$REPO/jobs/run-grid

setup() {
	common_setup
	command -v dash >/dev/null || skip "requires dash (Debian's /bin/sh) to run the script as POSIX sh"
	export TSWAP_ENGINE=$ENGINE TSWAP_TARGET=$SCRATCH/t.swap TSWAP_SIZE=64m
}
teardown() { common_teardown; }

@test "run-grid: a read grid runs every section once, a line each with its MB/s, then the fastest" {
	local grid=$REPO/jobs/grid/quick-read.fio n
	n=$(grep -c '^\[read-' "$grid")
	run --separate-stderr timeout 300 dash "$RUN_GRID" "$grid" "$SCRATCH/out"
	assert_success
	assert_equal "$(grep -c '^read-.* [0-9][0-9.]*$' <<<"$output")" "$n"
	assert_line --regexp '^fastest: read-[^ ]+ [0-9.]+ MB/s$'
	refute_output --partial FAILED
	# each section's terse line is fio's own, and the MB/s printed is its
	# read KiB/s (field 7) x 1024 / 1e6
	local s kib mbs
	s=$(sed -n 's/^\[\(read-[^]]*\)\]$/\1/p' "$grid" | head -n 1)
	kib=$(cut -d';' -f7 "$SCRATCH/out/$s.terse")
	[ "$kib" -gt 0 ] || fail "no bandwidth in $s.terse: $(cat "$SCRATCH/out/$s.terse")"
	mbs=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k * 0.001024 }')
	assert_line "$s $mbs"
}

@test "run-grid: a write grid over an existing target needs --destructive; the target is left as it was" {
	local grid=$REPO/jobs/grid/quick-write.fio sum
	head -c 1048576 /dev/urandom >"$TSWAP_TARGET"
	sum=$(sha256sum <"$TSWAP_TARGET")
	run --separate-stderr dash "$RUN_GRID" "$grid" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: $grid writes TSWAP_TARGET=$TSWAP_TARGET, which exists: give --destructive to overwrite it"
	assert_equal "$(sha256sum <"$TSWAP_TARGET")" "$sum"
	[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made"
	# a symlink counts as existing, even a dangling one
	rm -f "$TSWAP_TARGET"
	ln -s "$SCRATCH/nowhere" "$TSWAP_TARGET"
	run --separate-stderr dash "$RUN_GRID" "$grid" "$SCRATCH/out"
	assert_failure 2
	[ ! -e "$SCRATCH/nowhere" ] || fail "the symlink was followed"
}

@test "run-grid: an existing OUTDIR, unset variables and bad usage are refused in one line, exit 2" {
	local grid=$REPO/jobs/grid/quick-read.fio
	mkdir "$SCRATCH/out"
	echo keep >"$SCRATCH/out/mine"
	run --separate-stderr dash "$RUN_GRID" "$grid" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: OUTDIR: $SCRATCH/out exists (give a new directory)"
	assert_equal "$(ls "$SCRATCH/out")" mine
	run --separate-stderr env -u TSWAP_TARGET dash "$RUN_GRID" "$grid" "$SCRATCH/o2"
	assert_failure 2
	assert_equal "$stderr" "run-grid: TSWAP_TARGET is not set (. jobs/env.sh sets the defaults)"
	run --separate-stderr dash "$RUN_GRID" "$grid"
	assert_failure 2
	assert_equal "$stderr" "run-grid: usage: jobs/run-grid [--destructive] GRID.fio OUTDIR"
	run --separate-stderr dash "$RUN_GRID" "$SCRATCH" "$SCRATCH/o2"
	assert_failure 2
	assert_equal "$stderr" "run-grid: GRID.fio: $SCRATCH is not a file"
	[ ! -e "$SCRATCH/o2" ] || fail "OUTDIR was made"
}

@test "run-grid: a section fio fails is a FAILED line with fio's reason, the others still run, exit 3" {
	local grid=$REPO/jobs/grid/quick-read.fio n
	n=$(grep -c '^\[read-' "$grid")
	TSWAP_ENGINE=$SCRATCH/missing.so run --separate-stderr dash "$RUN_GRID" "$grid" "$SCRATCH/out"
	assert_failure 3
	assert_equal "$(grep -c '^read-[^ ]* FAILED: fio: ' <<<"$output")" "$n"
	refute_output --partial fastest
}

@test "run-grid: a target written as fio's '\\:' escape is the file fio opens: refused without --destructive" {
	local t=$SCRATCH/v:2 sum
	printf precious >"$t"
	sum=$(sha256sum <"$t")
	TSWAP_TARGET=$SCRATCH/v\\:2 run --separate-stderr dash "$RUN_GRID" "$REPO/jobs/grid/quick-write.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: $REPO/jobs/grid/quick-write.fio writes TSWAP_TARGET=$SCRATCH/v\\:2, which exists: give --destructive to overwrite it"
	assert_equal "$(sha256sum <"$t")" "$sum"
}

@test "run-grid: a target of several files (fio's ':') is refused when any of them exists" {
	local sum
	printf precious >"$SCRATCH/a"
	sum=$(sha256sum <"$SCRATCH/a")
	TSWAP_TARGET=$SCRATCH/new:$SCRATCH/a run --separate-stderr dash "$RUN_GRID" "$REPO/jobs/grid/quick-write.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: $REPO/jobs/grid/quick-write.fio writes TSWAP_TARGET=$SCRATCH/new:$SCRATCH/a, whose file $SCRATCH/a exists: give --destructive to overwrite it"
	assert_equal "$(sha256sum <"$SCRATCH/a")" "$sum"
	[ ! -e "$SCRATCH/new" ] || fail "fio ran: $SCRATCH/new was made"
	[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made"
	# a read grid: each file must hold TSWAP_SIZE, or fio extends it
	truncate -s 64m "$SCRATCH/b"
	TSWAP_TARGET=$SCRATCH/b:$SCRATCH/a run --separate-stderr dash "$RUN_GRID" "$REPO/jobs/grid/quick-read.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: TSWAP_TARGET=$SCRATCH/b:$SCRATCH/a: its file $SCRATCH/a exists and is not a block device or a file of TSWAP_SIZE=64m or more: fio would extend it; give --destructive"
	assert_equal "$(sha256sum <"$SCRATCH/a")" "$sum"
	# '\:' stays part of one name
	printf x >"$SCRATCH/c:d"
	TSWAP_TARGET=$SCRATCH/new:$SCRATCH/c\\:d run --separate-stderr dash "$RUN_GRID" "$REPO/jobs/grid/quick-write.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: $REPO/jobs/grid/quick-write.fio writes TSWAP_TARGET=$SCRATCH/new:$SCRATCH/c\\:d, whose file $SCRATCH/c:d exists: give --destructive to overwrite it"
}

@test "run-grid: a TSWAP_SIZE past 2^63 bytes over an existing file is refused in one line, not wrapped" {
	local size
	truncate -s 64m "$TSWAP_TARGET"
	# 2^63 + 1 MiB wraps negative in the shell's arithmetic; 26 digits
	# are no number to it at all
	for size in 8796093022209m 99999999999999999999999999m; do
		TSWAP_SIZE=$size run --separate-stderr dash "$RUN_GRID" "$REPO/jobs/grid/quick-read.fio" "$SCRATCH/out"
		assert_failure 2
		assert_equal "$stderr" "run-grid: TSWAP_TARGET=$TSWAP_TARGET exists and is not a block device or a file of TSWAP_SIZE=$size or more: fio would extend it; give --destructive"
		[ ! -e "$SCRATCH/out" ] || fail "TSWAP_SIZE=$size: OUTDIR was made, fio ran"
	done
}

@test "run-grid: any write mode is a write (randwrite, rw, readwrite=, spaces, CRLF); only read and randread are not" {
	local mode sum
	printf precious >"$TSWAP_TARGET"
	sum=$(sha256sum <"$TSWAP_TARGET")
	for mode in 'rw=randwrite' 'rw = rw' 'readwrite=randrw' 'rw=trimwrite' $'rw=write\r'; do
		printf '[global]\nfilename=${TSWAP_TARGET}\nsize=1m\n[p]\n%s\nbs=64k\n' "$mode" >"$SCRATCH/g.fio"
		run --separate-stderr dash "$RUN_GRID" "$SCRATCH/g.fio" "$SCRATCH/out"
		assert_failure 2
		assert_equal "$(sha256sum <"$TSWAP_TARGET")" "$sum"
	done
	# a read grid: fio would extend the 8-byte file to TSWAP_SIZE
	printf '[global]\nfilename=${TSWAP_TARGET}\nsize=1m\n[p]\nrw=randread\nbs=64k\nioengine=psync\n' >"$SCRATCH/g.fio"
	TSWAP_SIZE=1m run --separate-stderr dash "$RUN_GRID" "$SCRATCH/g.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: TSWAP_TARGET=$TSWAP_TARGET exists and is not a block device or a file of TSWAP_SIZE=1m or more: fio would extend it; give --destructive"
	assert_equal "$(sha256sum <"$TSWAP_TARGET")" "$sum"
	# one of TSWAP_SIZE bytes is read as it is
	head -c 1048576 /dev/urandom >"$TSWAP_TARGET"
	sum=$(sha256sum <"$TSWAP_TARGET")
	TSWAP_SIZE=1m run --separate-stderr dash "$RUN_GRID" "$SCRATCH/g.fio" "$SCRATCH/out"
	assert_success
	assert_equal "$(sha256sum <"$TSWAP_TARGET")" "$sum"
}

@test "run-grid: a grid that includes another job file may write: refused over an existing target" {
	local sum
	head -c 1048576 /dev/urandom >"$TSWAP_TARGET"
	sum=$(sha256sum <"$TSWAP_TARGET")
	# the section reads, the included file makes it write (fio's
	# "include FILE", relative to the grid)
	printf 'rw=write\n' >"$SCRATCH/w.inc"
	printf '[global]\nfilename=${TSWAP_TARGET}\nsize=1m\n[p]\nrw=read\n  include w.inc\nbs=64k\nioengine=psync\n' \
		>"$SCRATCH/g.fio"
	TSWAP_SIZE=1m run --separate-stderr dash "$RUN_GRID" "$SCRATCH/g.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: $SCRATCH/g.fio includes another job file, which may write: TSWAP_TARGET=$TSWAP_TARGET exists: give --destructive to overwrite it"
	assert_equal "$(sha256sum <"$TSWAP_TARGET")" "$sum"
	[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made"
}

@test "run-grid: a grid with no job sections, an odd section name or a leading dash is refused, not run" {
	: >"$SCRATCH/empty.fio"
	run --separate-stderr dash "$RUN_GRID" "$SCRATCH/empty.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: GRID.fio: $SCRATCH/empty.fio has no job sections"
	printf '[global]\nsize=1m\n[a/b]\nrw=read\n' >"$SCRATCH/odd.fio"
	run --separate-stderr dash "$RUN_GRID" "$SCRATCH/odd.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: GRID.fio: section [a/b]: only letters, digits, '.', '_' and '-'"
	[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made"
	# a path that starts with a dash is a file, not an option of grep or sed
	cp "$REPO/jobs/grid/quick-write.fio" "$SCRATCH/-g.fio"
	printf precious >"$TSWAP_TARGET"
	cd "$SCRATCH"
	run --separate-stderr dash "$RUN_GRID" -g.fio out
	assert_failure 2
	assert_equal "$stderr" "run-grid: ./-g.fio writes TSWAP_TARGET=$TSWAP_TARGET, which exists: give --destructive to overwrite it"
}

@test "run-grid: a CRLF grid runs its sections; several jobs of a section are one line, their sum" {
	sed 's/$/\r/' "$REPO/jobs/grid/quick-read.fio" >"$SCRATCH/crlf.fio"
	printf '[two]\nrw=read\nbs=16m\niodepth=2\nnumjobs=2\n' >>"$SCRATCH/crlf.fio"
	run --separate-stderr timeout 300 dash "$RUN_GRID" "$SCRATCH/crlf.fio" "$SCRATCH/out"
	assert_success
	assert_equal "$(grep -c '^read-.* [0-9.]*$' <<<"$output")" "$(grep -c '^\[read-' "$REPO/jobs/grid/quick-read.fio")"
	assert_equal "$(grep -c '^two ' <<<"$output")" 1
	assert_line --regexp '^fastest: '
}

@test "run-grid: a grid naming its own files (filename=, directory=, ...) or unlink=1 needs --destructive" {
	local sum opt
	head -c 1048576 /dev/urandom >"$SCRATCH/user.dat"
	sum=$(sha256sum <"$SCRATCH/user.dat")
	# a read grid over a file of its own: fio would extend or overwrite it
	for opt in "filename=$SCRATCH/user.dat" "directory=$SCRATCH" 'filename_format=user.dat' "opendir=$SCRATCH" 'unlink=1' ' unlink = 1 ' 'unlink' 'unlink_each_loop=1'; do
		printf '[global]\nfilename=${TSWAP_TARGET}\nsize=4m\nioengine=psync\n[w]\nrw=read\n%s\n' "$opt" >"$SCRATCH/own.fio"
		run --separate-stderr dash "$RUN_GRID" "$SCRATCH/own.fio" "$SCRATCH/out"
		assert_failure 2
		opt=${opt// /}
		assert_equal "$stderr" "run-grid: $SCRATCH/own.fio sets ${opt%%=*}=: fio may overwrite or delete files run-grid does not check: give --destructive"
		[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made for $opt"
	done
	assert_equal "$(sha256sum <"$SCRATCH/user.dat")" "$sum"
	# unlink=0 and the grids' own filename=${TSWAP_TARGET} are not refused
	printf '[global]\nfilename=${TSWAP_TARGET}\nsize=1m\nioengine=psync\nunlink=0\n[r]\nrw=read\n' >"$SCRATCH/ok.fio"
	run --separate-stderr timeout 300 dash "$RUN_GRID" "$SCRATCH/ok.fio" "$SCRATCH/out"
	assert_success
	# with --destructive the grid runs as written
	printf '[global]\nsize=1m\nioengine=psync\n[w]\nrw=write\nfilename=%s\n' "$SCRATCH/user.dat" >"$SCRATCH/own.fio"
	run --separate-stderr timeout 300 dash "$RUN_GRID" --destructive "$SCRATCH/own.fio" "$SCRATCH/out2"
	assert_success
	assert_line --regexp '^w [0-9.]+$'
}

@test "run-grid: a section name used twice is refused: fio's --section would run both each time" {
	printf '[global]\nfilename=${TSWAP_TARGET}\nsize=1m\nioengine=psync\n[a]\nrw=read\n[b]\nrw=read\n[a]\nrw=read\nbs=4k\n' >"$SCRATCH/dup.fio"
	run --separate-stderr dash "$RUN_GRID" "$SCRATCH/dup.fio" "$SCRATCH/out"
	assert_failure 2
	assert_equal "$stderr" "run-grid: GRID.fio: section [a] appears twice: fio would run both each time"
	[ ! -e "$SCRATCH/out" ] || fail "OUTDIR was made"
}

@test "run-grid: stays small: at most 60 lines of code (the sweep is sweep/tswap-sweep)" {
	run -0 grep -vc '^[[:space:]]*#\|^[[:space:]]*$' "$RUN_GRID"
	[ "$output" -le 60 ] || fail "jobs/run-grid has $output lines of code"
}
