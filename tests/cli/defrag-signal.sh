#!/bin/sh
# SIGINT or SIGTERM in the middle of a run: the file at hand is finished
# or left as it was, e2defrag exits 32, the image is e2fsck-clean and
# every file is intact; a run after that finishes the job.  A signal while
# it plans (an aged disk: a few hundred milliseconds of planning) stops it
# there: exit 32 and the image byte-identical.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v mkfifo >/dev/null 2>&1 || { echo "skip: no mkfifo"; exit 77; }

# signal_in SIG PHASE IMG [OPTION...]: run e2defrag -C on IMG and send it
# SIG at its first progress report of PHASE past the start (moving, 4;
# planning, 3: at the first report, which comes as it starts); rc is its
# exit status.
signal_in() {
	local sig=$1 at=$2 img=$3 pid sent=0 phase done total dev
	shift 3
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	command e2defrag -C 3 "$@" "$img" 3>"$T/fifo" >"$T/out" 2>&1 &
	pid=$!
	while read -r phase done total dev; do
		if [ $sent = 0 ] && [ "$phase" = "$at" ] &&
		   { [ "$done" -gt 0 ] || [ "$at" = 3 ]; }; then
			kill -"$sig" $pid
			sent=1
		fi
	done < "$T/fifo"
	wait $pid
	rc=$?
	[ $sent = 1 ] || fail "$img: never saw phase $at"
}

for sig in INT TERM; do
	for type in ext2 ext4; do
		img=$T/$type.img
		make_image "$img" "$type" 4096 64M
		printf 'mkdir /rec\n' > "$T/c"
		dbg "$img" "$T/c"
		interleave "$img" /rec 8192 400 a b c
		check_clean "$img"
		snapshot "$img" "$T/before.json"
		# A small buffer makes many progress reports: the signal lands mid-move.
		signal_in $sig 4 "$img" --buffer 4k
		[ $rc -eq 32 ] || { cat "$T/out"; fail "$type SIG$sig: exit $rc, expected 32"; }
		grep -q "cancelled; the file at hand" "$T/out" ||
			fail "$type: no word of a cancel while moving: $(cat "$T/out")"
		check_clean "$img"
		snapshot "$img" "$T/after.json"
		same_snapshot "$T/before.json" "$T/after.json"
		# Not everything was done; another run finishes it.
		expect_rc 0 e2defrag "$img"
		check_clean "$img"
		[ "$(e2frag_field "$img" avoidably_fragmented_files)" -eq 0 ] ||
			fail "$type: the second run left fragmented files"
		snapshot "$img" "$T/final.json"
		same_snapshot "$T/before.json" "$T/final.json"
	done
done

command -v e2fragimg >/dev/null 2>&1 || exit 0
img=$T/aged.img
e2fragimg -q -w aged -t ext2 -b 1024 -s 128M "$img" || fail "e2fragimg aged"
cp "$img" "$T/aged.orig"
signal_in INT 3 "$img"
[ $rc -eq 32 ] || { cat "$T/out"; fail "SIGINT while planning: exit $rc, expected 32"; }
grep -q "cancelled while planning" "$T/out" || { cat "$T/out"; fail "planning: no word of the cancel"; }
cmp -s "$img" "$T/aged.orig" || fail "SIGINT while planning: the image changed"
exit 0
