#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2034,SC2030,SC2031  # bats sets $stderr, $output, $status; BG_SWEEPS: read by safety_teardown
#
# What tswap-sweep may write to (issue 11 items 2, 4, 5; docs/sweep.md
# "Targets", docs/reliability.md): an existing file the sweep did not
# create is never written without --destructive (checked by content
# hash), pseudo-filesystem and special targets are refused with exit 2, a
# new target is created and marked (user.tswap.scratch, or a sidecar that
# never replaces a user's file) so later runs reuse it with no flag, a
# safety check that cannot run (a failing blkid) refuses the device;
# issue 25: --resume as strict about the mark as a fresh run (item 1),
# --out a symlink or a user's directory (item 2). The locks:
# sweep-locks.bats.

load helpers
load safety

setup() { safety_setup; }
teardown() { safety_teardown; }

@test "sweep-safety: an existing file with data is never written without --destructive" {
	head -c 16M /dev/urandom >precious.bin
	sum=$(sha256sum precious.bin)
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target precious.bin --out r1
	refused_one_line
	grep -q -- '--destructive' <<<"$stderr" || fail "no --destructive in: $stderr"
	assert_file_not_exists r1
	# shorter than --size, read only: fio would lay it out (write it): refused
	head -c 4M /dev/urandom >short.bin
	short=$(sha256sum short.bin)
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target short.bin --out r2
	refused_one_line
	grep -q 'shorter' <<<"$stderr" || fail "no 'shorter' in: $stderr"
	# a pure read sweep of a long enough file needs no flag and changes nothing
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target precious.bin --out r3
	[ "$status" -eq 0 ] || { show; fail "read sweep of an existing file failed"; }
	sha256sum -c <<<"$sum" >/dev/null || fail "precious.bin changed"
	sha256sum -c <<<"$short" >/dev/null || fail "short.bin changed"
	# --destructive: the user's explicit choice
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target precious.bin --out r4 --destructive
	[ "$status" -eq 0 ] || { show; fail "--destructive write sweep failed"; }
	assert_equal "$(grep -c 'overwriting' <<<"$stderr")" 1
}

@test "sweep-safety: procfs, sysfs, character devices, directories and FIFOs are refused with one line" {
	mknod chardev c 1 3
	mkfifo fifo
	mkdir adir
	local t
	for t in /proc/version /sys/kernel/mm/transparent_hugepage/enabled chardev adir fifo; do
		[ -e "$t" ] || continue
		ssweep --grid "$GRID" "${ONE[@]}" --rw read --target "$t" --out "r-${t//\//_}"
		refused_one_line
		grep -q 'refusing target' <<<"$stderr" || fail "[$t]: $stderr"
	done
	[ -c chardev ] && [ -p fifo ] && [ -d adir ] || fail "a special target was replaced"
}

@test "sweep-safety: a new target is created and marked; the next run reuses it, a copy is not ours" {
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target new.swap --out r1
	[ "$status" -eq 0 ] || { show; fail "first run on a new path failed"; }
	[ -f new.swap ] || fail "new.swap not created"
	id=$(stat -c '%d:%i' new.swap)
	birth=$(stat -c '%.9W' new.swap)
	if mark=$(getfattr --only-values -n user.tswap.scratch new.swap 2>/dev/null); then
		# DEV:INODE and the birth time, where the filesystem keeps one
		if [[ $birth =~ ^[1-9] ]]; then assert_equal "$mark" "$id:$birth"; else assert_equal "$mark" "$id"; fi
	else
		[[ $(cat new.swap.tswap-scratch) == "$id":* ]] || fail "the sidecar does not name $id"
	fi
	grep -qF "$id" r1/scratch-target || fail "run directory does not record the target"
	# the second time: ours (the README's `make sweep` twice)
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target new.swap --out r2
	[ "$status" -eq 0 ] || { show; fail "second run on the sweep's own file failed"; }
	# a copy with the xattr is another file: not ours
	cp --preserve=xattr new.swap copy.swap
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target copy.swap --out r3
	refused_one_line
	# the user's copy put back at the path (cp -a keeps the xattr); ext4
	# may give it the deleted file's inode number: where it did not, the
	# copied mark is made to name the new DEV:INODE, as if it had
	[ -n "$mark" ] || return 0
	head -c 1M /dev/urandom | dd of=copy.swap conv=notrunc status=none
	rm new.swap
	cp -a copy.swap new.swap
	id2=$(stat -c '%d:%i' new.swap)
	setfattr -n user.tswap.scratch -v "${mark/#$id/$id2}" new.swap
	sum=$(sha256sum new.swap)
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target new.swap --out r4
	refused_one_line
	sha256sum -c <<<"$sum" >/dev/null || fail "the user's copy was overwritten"
}

@test "sweep-safety: a signature check that cannot run (blkid failing) refuses the device, naming blkid" {
	requires loopdev
	command -v mkfs.ext4 >/dev/null || skip "requires mkfs.ext4 (e2fsprogs)"
	loop_setup 64
	mkfs.ext4 -q -F "$LOOPDEV"
	mkdir fakebin
	# BusyBox's blkid has no -p: it fails with a usage message
	printf '#!/bin/sh\necho "blkid: unrecognized option: p" >&2\nexit 1\n' >fakebin/blkid
	chmod +x fakebin/blkid
	PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" --size 16m --io-size 8m --no-ceiling \
		--rw write --target "$LOOPDEV" --destructive --dry-run
	refused_one_line
	grep -q 'blkid' <<<"$stderr" || fail "blkid not named: $stderr"
	# the real blkid sees ext4: refused as before
	ssweep --grid "$GRID" --size 16m --io-size 8m --no-ceiling --rw write --target "$LOOPDEV" --destructive --dry-run
	refused_one_line
	grep -q 'signature' <<<"$stderr" || fail "$stderr"
}

@test "sweep-safety: --target '', --out '', --io-size 0 and a CRLF grid (issue 11 item 13)" {
	ssweep --target '' --dry-run
	refused_one_line
	grep -q -- "--target: an empty path" <<<"$stderr" || fail "$stderr"
	ssweep --out '' --dry-run
	refused_one_line
	ssweep --grid "$GRID" --io-size 0 --dry-run
	refused_one_line
	grep -q -- "--io-size: must not be 0" <<<"$stderr" || fail "$stderr"
	sed 's/$/\r/' "$GRID" >crlf.grid
	ssweep --grid crlf.grid "${ONE[@]}" --target c.swap --dry-run
	[ "$status" -eq 0 ] || { show; fail "a CRLF grid was refused"; }
	grep -q 'tswap_block_size=1m' <<<"$output" || fail "no 1m block in the dry run"
}

@test "sweep-safety: a full run directory stops with one line, exit 3, no half-written point; --resume after freeing space completes (issue 11 item 14)" {
	[ "$(id -u)" -eq 0 ] || skip "requires root (a size-limited tmpfs)"
	mount_scratch "$SCRATCH/small" tmpfs size=4m
	# the first point fits (the run's files are a few KiB); then the filler
	# leaves less than a point needs
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out "$SCRATCH/small/run" --dry-run
	[ "$status" -eq 0 ] || { show; fail "dry run failed"; }
	avail=$(df -P -B1 "$SCRATCH/small" | awk 'NR == 2 { print $4 }')
	head -c $((avail - 96 * 1024)) /dev/zero >"$SCRATCH/small/filler"
	# --quiet: progress lines go to stderr too, and this counts error lines
	ssweep --quiet --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out "$SCRATCH/small/run"
	[ "$status" -eq 3 ] || { show; fail "expected exit 3, got $status"; }
	[ "$(grep -c . <<<"$stderr")" -eq 1 ] || { show; fail "expected one line"; }
	grep -q '^tswap-sweep: run directory full: [0-9]* bytes free' <<<"$stderr" || fail "$stderr"
	grep -q 'internal error' <<<"$stderr" && fail "internal error: $stderr"
	[ -z "$(find "$SCRATCH/small/run" -name '.tmp-*' -o -name '*.tmp')" ] || fail "half-written files left"
	rm -f "$SCRATCH/small/filler"
	ssweep --resume "$SCRATCH/small/run"
	[ "$status" -eq 0 ] || { show; fail "--resume after freeing space failed"; }
	[ -f "$SCRATCH/small/run/summary.csv" ] || fail "no summary.csv"
}

@test "sweep-safety: a run directory full as report.md is written: exit 3, the full line, no report.md.tmp, report.md as it was; --resume then completes" {
	[ "$(id -u)" -eq 0 ] || skip "requires root (a size-limited tmpfs)"
	mount_scratch "$SCRATCH/small" tmpfs size=4m
	local run=$SCRATCH/small/run i avail before
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out "$run"
	[ "$status" -eq 0 ] || { show; fail "the run failed"; }
	before=$(sha256sum "$run/report.md")
	# notes make report.md tens of KiB, the other outputs stay under 8 KiB
	# each: with 16 KiB free only report.md (after the plots) does not fit
	for ((i = 0; i < 800; i++)); do printf 'a note of this run, number %d\n' "$i"; done >"$run/notes.txt"
	avail=$(df -P -B1 "$SCRATCH/small" | awk 'NR == 2 { print $4 }')
	head -c $((avail - 16 * 1024)) /dev/zero >"$SCRATCH/small/filler"
	ssweep --resume "$run"
	[ "$status" -eq 3 ] || { show; fail "expected exit 3, got $status"; }
	grep -q "^tswap: finish: .*No space left on device: '$run/report.md'" <<<"$stderr" || { show; fail "no line naming report.md"; }
	grep -q '^tswap-sweep: run directory full: [0-9]* bytes free' <<<"$stderr" || { show; fail "no full line"; }
	[ -z "$(find "$run" -name '*.tmp')" ] || fail "half-written files left: $(find "$run" -name '*.tmp')"
	sha256sum -c <<<"$before" >/dev/null || fail "report.md changed"
	rm -f "$SCRATCH/small/filler"
	ssweep --resume "$run"
	[ "$status" -eq 0 ] || { show; fail "--resume after freeing space failed"; }
	grep -q 'a note of this run, number 799' "$run/report.md" || fail "report.md without the notes"
}

@test "sweep-safety: make run's target helper creates and marks a new file, accepts it again, refuses a user's file" {
	"$REPO/mk/scratch-target.sh" "$SCRATCH/run.swap"
	"$REPO/mk/scratch-target.sh" "$SCRATCH/run.swap"
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target run.swap --dry-run
	[ "$status" -eq 0 ] || { show; fail "the sweep did not take make run's file as its own"; }
	echo data >user.txt
	run "$REPO/mk/scratch-target.sh" "$SCRATCH/user.txt"
	assert_equal "$status" 2
	assert_equal "$(cat user.txt)" data
}

# empty_points RUN: a finished run made to look interrupted: its points
# gone, so --resume has every point to run (and to write) again.
empty_points() { rm -rf -- "$1"/points/*; }

@test "sweep-safety: --resume refuses a user's file at the scratch file's DEV:INODE without the mark (issue 25 item 1)" {
	command -v setfattr >/dev/null || skip "requires setfattr (attr)"
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target rsm.swap --out R
	[ "$status" -eq 0 ] || { show; fail "the first run failed"; }
	empty_points R
	getfattr -n user.tswap.scratch rsm.swap >/dev/null 2>&1 || skip "the filesystem keeps no user xattr"
	id=$(stat -c '%d:%i' rsm.swap)
	# the user's data at the same DEV:INODE, without the mark (what a new
	# file gets when ext4 reuses the inode number)
	setfattr -x user.tswap.scratch rsm.swap
	head -c 16M /dev/urandom >rsm.swap
	assert_equal "$(stat -c '%d:%i' rsm.swap)" "$id"
	grep -qF "$id" R/scratch-target || fail "R/scratch-target does not name $id"
	sum=$(sha256sum rsm.swap)
	ssweep --resume R
	refused_one_line
	grep -q -- '--destructive' <<<"$stderr" || fail "no --destructive in: $stderr"
	sha256sum -c <<<"$sum" >/dev/null || fail "rsm.swap was overwritten"
	# a fresh run says the same
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target rsm.swap --out R2
	refused_one_line
	sha256sum -c <<<"$sum" >/dev/null || fail "rsm.swap was overwritten"
}

@test "sweep-safety: the sidecar mark is tied to its file: a new file at the same DEV:INODE is not ours (issue 25 item 1)" {
	# no setfattr: the sweep marks with TARGET.tswap-scratch
	mkdir fakebin
	printf '#!/bin/sh\nexit 1\n' >fakebin/setfattr
	chmod +x fakebin/setfattr
	PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" "${ONE[@]}" --rw write --target side.swap --out R
	[ "$status" -eq 0 ] || { show; fail "the first run failed"; }
	[ -f side.swap.tswap-scratch ] || skip "no birth time on this filesystem: the file is not marked"
	IFS=: read -r dev ino birth <side.swap.tswap-scratch
	assert_equal "$dev:$ino" "$(stat -c '%d:%i' side.swap)"
	birth0=$(stat -c '%.9W' side.swap)
	# its own file, marked by the sidecar: a second run needs no flag
	PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" "${ONE[@]}" --rw write --target side.swap --out R2
	[ "$status" -eq 0 ] || { show; fail "the sweep did not take its own sidecar-marked file"; }
	empty_points R
	# the user deletes it and writes a file of their own there; ext4 may
	# give it the same inode number (it avoids a recently freed one): where
	# it did not, the sidecar is made to name the new DEV:INODE, as if it had
	rm side.swap
	head -c 16M /dev/urandom >side.swap
	id=$(stat -c '%d:%i' side.swap)
	[ "$id" = "$dev:$ino" ] || sed -i "s/^$dev:$ino/$id/" side.swap.tswap-scratch
	grep -q "^$id" side.swap.tswap-scratch || fail "the sidecar does not name $id"
	sum=$(sha256sum side.swap)
	PATH=$SCRATCH/fakebin:$PATH ssweep --resume R
	refused_one_line
	sha256sum -c <<<"$sum" >/dev/null || fail "side.swap was overwritten"
	# the mark: DEV:INODE and the file's birth time (ns)
	assert_equal "$birth" "$birth0"
}

@test "sweep-safety: the sidecar mark never replaces a user's file or follows a symlink; a deleted target's sidecar is replaced" {
	mkdir fakebin
	printf '#!/bin/sh\nexit 1\n' >fakebin/setfattr
	chmod +x fakebin/setfattr
	: >probe
	[[ $(stat -c %W probe) =~ ^[1-9] ]] || skip "no birth time on this filesystem: the sweep writes no sidecar"
	echo "my notes" >x.swap.tswap-scratch
	echo "precious" >precious.txt
	ln -s precious.txt y.swap.tswap-scratch
	for t in x y; do
		PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" "${ONE[@]}" --rw write --target $t.swap --out r$t
		refused_one_line
		grep -q "$t.swap.tswap-scratch" <<<"$stderr" || fail "the sidecar not named: $stderr"
		[ ! -e $t.swap ] || fail "the refused target $t.swap was left behind"
	done
	assert_equal "$(cat x.swap.tswap-scratch)" "my notes"
	assert_equal "$(cat precious.txt)" "precious"
	[ -L y.swap.tswap-scratch ] || fail "the symlink was replaced"
	# a mark left by a deleted target: replaced by the new file's
	echo "1:2:3.000000004" >z.swap.tswap-scratch
	PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" "${ONE[@]}" --rw write --target z.swap --out rz
	[ "$status" -eq 0 ] || { show; fail "a stale sidecar mark blocked a new target"; }
	assert_equal "$(cat z.swap.tswap-scratch)" "$(stat -c '%d:%i:%.9W' z.swap)"
}

@test "sweep-safety: --out a symlink to a finished run is refused, its files untouched; to an empty directory, used (issue 25 item 2)" {
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target a.swap --out runA
	[ "$status" -eq 0 ] || { show; fail "the first run failed"; }
	sums=$(sha256sum runA/report.md runA/aggregate.json runA/sweep.json runA/.lock)
	ln -s runA L
	ln -s "$SCRATCH/runA" L2
	for l in L L2 L/ L2//; do
		ssweep --grid "$GRID" "${ONE[@]}" --rw read --target b.swap --out "$l"
		refused_one_line
		grep -q 'not empty' <<<"$stderr" || fail "[$l] $stderr"
		sha256sum -c <<<"$sums" >/dev/null || fail "[$l] runA's files were rewritten"
	done
	[ ! -e b.swap ] || fail "b.swap created by a refused run"
	# a user's directory: refused before anything is written in it
	mkdir mine
	echo notes >mine/notes.txt
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target b.swap --out mine
	refused_one_line
	assert_equal "$(ls -A mine)" notes.txt
	# a directory holding only a .lock that is a user's file, or a symlink
	# to one: not a sweep's lock, never written or followed
	echo "precious" >victim
	mkdir mine2 mine3
	echo notes >mine2/.lock
	ln -s "$SCRATCH/victim" mine3/.lock
	for l in mine2 mine3; do
		ssweep --grid "$GRID" "${ONE[@]}" --rw read --target b.swap --out $l
		refused_one_line
		grep -q 'not empty' <<<"$stderr" || fail "[$l] $stderr"
	done
	assert_equal "$(cat mine2/.lock)" notes
	assert_equal "$(cat victim)" precious
	mkdir empty
	ln -s empty E
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target b.swap --out E
	[ "$status" -eq 0 ] || { show; fail "--out a symlink to an empty directory failed"; }
	[ -L E ] || fail "the symlink E was replaced"
	[ -f empty/report.md ] || fail "no report.md in the link's directory"
	grep -q b.swap empty/sweep.json || fail "empty/sweep.json does not name b.swap"
}

# issue 36 items 1-3: what holds or is stacked on a target, the target's
# identity between points, duplicates by identity.

# excl_holder DEV: a process that holds DEV open with O_EXCL (as a
# mounted filesystem or device-mapper does) until killed; its pid in
# BG_SWEEPS (safety_teardown stops it) and HOLDER.
excl_holder() {
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(600)' "$1" >holder.out &
	HOLDER=$!
	BG_SWEEPS=$HOLDER
	for _ in $(seq 100); do
		[ -s holder.out ] && return 0
		sleep 0.1
	done
	fail "no O_EXCL hold on $1"
}

@test "sweep-safety: a device or file with a loop device stacked on it is in use: --destructive alone refuses, naming the loop device (issue 36 item 1)" {
	requires loopdev
	command -v mkfs.ext4 >/dev/null || skip "requires mkfs.ext4 (e2fsprogs)"
	truncate -s 64M img.bin
	L=$(loop_attach "$SCRATCH/img.bin")
	# the issue's reproduction: ext4 1 MiB into L, mounted through the loop
	# device that mount -o offset stacks on L; no signature at L's start
	mkfs.ext4 -q -F -E offset=1048576,lazy_itable_init=0,lazy_journal_init=0 "$L" 63M
	mount_device "$L" mnt offset=1048576
	top=$(losetup -n -O NAME -j "$L")
	[ -n "$top" ] || fail "mount -o offset stacked no loop device on $L"
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$L" --destructive --out r1
	refused_one_line
	grep -q "in use (backs loop device $top)" <<<"$stderr" || fail "$top not named: $stderr"
	grep -q -- '--force' <<<"$stderr" || fail "no --force in: $stderr"
	assert_file_not_exists r1
	# the image file behind L (and so behind the mounted filesystem)
	sum=$(sha256sum img.bin)
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target img.bin --destructive --out r2
	refused_one_line
	grep -q "in use (backs loop device $L)" <<<"$stderr" || fail "$L not named: $stderr"
	assert_file_not_exists r2
	sha256sum -c <<<"$sum" >/dev/null || fail "img.bin changed"
	# nothing mounted: a loop device stacked on a device is enough; --force
	# overrides, as for a mounted or held device
	truncate -s 32M img2.bin
	L2=$(loop_attach "$SCRATCH/img2.bin")
	L3=$(loop_attach "$L2")
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$L2" --destructive --dry-run
	refused_one_line
	grep -q "in use (backs loop device $L3)" <<<"$stderr" || fail "$L3 not named: $stderr"
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$L2" --destructive --force --dry-run
	[ "$status" -eq 0 ] || { show; fail "--force did not override"; }
	grep -q "because of --force" <<<"$stderr" || fail "no --force warning: $stderr"
	# the sweep's own scratch file, once a loop device is stacked on it
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target own.swap --out r3
	[ "$status" -eq 0 ] || { show; fail "the first run on own.swap failed"; }
	L4=$(loop_attach "$SCRATCH/own.swap")
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target own.swap --out r4
	refused_one_line
	grep -q "in use (backs loop device $L4)" <<<"$stderr" || fail "$L4 not named: $stderr"
}

@test "sweep-safety: a device another opener holds with O_EXCL is in use; an O_EXCL check that cannot run refuses (issue 36 item 1)" {
	requires loopdev
	command -v python3 >/dev/null || skip "requires python3 (the test's O_EXCL holder)"
	loop_setup 32
	excl_holder "$LOOPDEV"
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$LOOPDEV" --destructive --out r1
	refused_one_line
	grep -q 'in use (claimed: an O_EXCL open fails with EBUSY' <<<"$stderr" || fail "$stderr"
	assert_file_not_exists r1
	kill "$HOLDER"
	wait "$HOLDER" 2>/dev/null || true
	BG_SWEEPS=
	# free again: accepted
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$LOOPDEV" --destructive --dry-run
	[ "$status" -eq 0 ] || { show; fail "a free device was refused"; }
	# the check cannot run (no working python3): refused, naming it
	mkdir fakebin
	printf '#!/bin/sh\necho "python3: broken" >&2\nexit 127\n' >fakebin/python3
	chmod +x fakebin/python3
	PATH=$SCRATCH/fakebin:$PATH ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$LOOPDEV" --destructive --force --dry-run
	refused_one_line
	grep -q 'O_EXCL' <<<"$stderr" && grep -q 'python3' <<<"$stderr" || fail "$stderr"
}

# swap_after_first RUN CMD...: wait for RUN's first point (its result.json),
# then run CMD (which replaces the target); fails if the sweep in the
# background (BG_SWEEPS) ended first.
swap_after_first() {
	local run=$1
	shift
	for _ in $(seq 1200); do
		compgen -G "$run/points/*/result.json" >/dev/null && break
		kill -0 "$BG_SWEEPS" 2>/dev/null || break
		sleep 0.05
	done
	compgen -G "$run/points/*/result.json" >/dev/null || fail "the sweep never finished its first point: $(cat sweep.err)"
	"$@"
}

# four write points of 2 s each (fio's runtime: the test's replacement
# falls within the second or third)
four_points() {
	printf '%s\n' 'rw write' 'backend libaio' 'tensor 4m' 'iodepth 1' 'block 1m' \
		'qd 1 2 4 8' 'threads 1' >four.grid
}

# stopped_refusing TARGET: the background sweep exited 2 with one line
# naming TARGET, and ran fewer than its four points.
stopped_refusing() {
	local rc=0 n
	wait "$BG_SWEEPS" || rc=$?
	BG_SWEEPS=
	[ "$rc" -eq 2 ] || { cat sweep.err >&2; fail "expected exit 2, got $rc"; }
	[ "$(grep -c . sweep.err)" -eq 1 ] || { cat sweep.err >&2; fail "expected one line on stderr"; }
	grep -qF "refusing target $1: " sweep.err || fail "$1 not named: $(cat sweep.err)"
	grep -q 'changed' sweep.err || fail "$(cat sweep.err)"
	n=$(compgen -G "run/points/*/result.json" | wc -l)
	((n >= 1 && n < 4)) || fail "$n points ran"
	[ -z "$(find run -name '.tmp-*')" ] || fail "a half point was left"
}

@test "sweep-safety: a target file replaced between points (mv -f over it) stops the sweep; the new file is never written (issue 36 item 2)" {
	four_points
	head -c 16M /dev/urandom >user.dat
	sum=$(sha256sum <user.dat)
	"$SWEEP" --quiet --grid four.grid --size 16m --runtime 2 --ramp 0 --fixed-runtime --no-ceiling \
		--target t.swap --out run >/dev/null 2>sweep.err &
	BG_SWEEPS=$!
	swap_after_first run mv -f user.dat t.swap
	stopped_refusing "$SCRATCH/t.swap"
	assert_equal "$(sha256sum <t.swap)" "$sum"
}

# unmark: take the sweep's scratch mark off t.swap (the xattr, else the
# sidecar file)
unmark() {
	setfattr -x user.tswap.scratch t.swap 2>/dev/null || rm -f t.swap.tswap-scratch
}

@test "sweep-safety: the scratch mark taken off the target between points stops the sweep (issue 36 item 4)" {
	command -v setfattr >/dev/null || skip "requires setfattr (attr)"
	four_points
	"$SWEEP" --quiet --grid four.grid --size 16m --runtime 2 --ramp 0 --fixed-runtime --no-ceiling \
		--target t.swap --out run >/dev/null 2>sweep.err &
	BG_SWEEPS=$!
	swap_after_first run unmark
	stopped_refusing "$SCRATCH/t.swap"
	# the same file, without its mark now
	grep -qF ", the sweep's mark; now file " sweep.err || fail "$(cat sweep.err)"
	if grep -qF "now file $(stat -c %d:%i t.swap)" sweep.err; then :; else fail "$(cat sweep.err)"; fi
}

@test "sweep-safety: a device target whose name comes to mean another device between points stops the sweep; that device is never written (issue 36 item 2)" {
	requires loopdev
	four_points
	truncate -s 32M a.img
	head -c 32M /dev/urandom >b.img
	A=$(loop_attach "$SCRATCH/a.img")
	B=$(loop_attach "$SCRATCH/b.img")
	sum=$(sha256sum <"$B")
	ln -s "$A" dev.link
	"$SWEEP" --quiet --grid four.grid --size 16m --runtime 2 --ramp 0 --fixed-runtime --no-ceiling \
		--no-precondition --target dev.link --destructive --out run >/dev/null 2>sweep.err &
	BG_SWEEPS=$!
	swap_after_first run ln -sfn "$B" dev.link
	stopped_refusing "$SCRATCH/dev.link"
	assert_equal "$(sha256sum <"$B")" "$sum"
}

@test "sweep-safety: one device or file named twice (symlink, hard link) is a duplicate --target (issue 36 item 3)" {
	requires loopdev
	loop_setup 32
	ln -s "$LOOPDEV" dev.link
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target "$LOOPDEV,dev.link" --dry-run
	refused_one_line
	grep -q -- "^tswap-sweep: --target: $SCRATCH/dev.link is the same block device as $LOOPDEV " <<<"$stderr" || fail "$stderr"
	head -c 16M /dev/zero >f.swap
	ln -s f.swap sym.swap
	ln f.swap hard.swap
	mkdir d
	ln -s d dl
	for pair in f.swap,sym.swap f.swap,hard.swap d/n.swap,dl/n.swap; do
		ssweep --grid "$GRID" "${ONE[@]}" --rw read --target "$pair" --dry-run
		refused_one_line
		grep -q -- "^tswap-sweep: --target: $SCRATCH/${pair#*,} is the same" <<<"$stderr" || fail "[$pair] $stderr"
	done
	[ ! -e d/n.swap ] || fail "d/n.swap was created"
	# two devices, two files: accepted
	A=$LOOPDEV
	loop_setup 32
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target "$A,$LOOPDEV" --dry-run
	[ "$status" -eq 0 ] || { show; fail "two devices refused"; }
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target f.swap,g.swap --dry-run
	[ "$status" -eq 0 ] || { show; fail "two files refused"; }
}

@test "sweep-safety: a run directory on a full filesystem stops with the full line, exit 3, before any point runs" {
	[ "$(id -u)" -eq 0 ] || skip "requires root (a size-limited tmpfs)"
	mount_scratch "$SCRATCH/small" tmpfs size=64k
	head -c 65536 /dev/zero >"$SCRATCH/small/filler" 2>/dev/null || true
	ssweep --quiet --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out "$SCRATCH/small/run"
	[ "$status" -eq 3 ] || { show; fail "expected exit 3, got $status"; }
	[ "$(grep -c . <<<"$stderr")" -eq 1 ] || { show; fail "expected one line"; }
	assert_equal "$stderr" "tswap-sweep: run directory full: 0 bytes free in $SCRATCH/small/run (free space, then: tswap-sweep --resume $SCRATCH/small/run)"
	[ -z "$(find "$SCRATCH/small/run" -name '*.tmp')" ] || fail "half-written files left"
	[ ! -e "$SCRATCH/small/run/points" ] || fail "a point ran"
}
