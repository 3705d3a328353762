#!/bin/sh
# SIGINT or SIGTERM twice in the middle of a run: the file at hand is finished
# or left as it was, e2defrag exits 32, the image is e2fsck-clean and
# every file is intact; a run after that finishes the job.  A signal while
# it plans stops it there: exit 32 and the image byte-identical.  The
# signal is sent while e2defrag is held inside a progress report of the
# phase (tests/cli/progress_gate.c, loaded by this test only), so that it
# lands in that phase however short the phase is and however loaded the
# machine: a reader that only reacts to the report races the phase's end.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v mkfifo >/dev/null 2>&1 || { echo "skip: no mkfifo"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "skip: no C compiler for the progress gate"; exit 77; }
"$cc" -shared -fPIC -o "$T/gate.so" "$top_srcdir/tests/cli/progress_gate.c" -ldl \
	2>"$T/cc.out" || { cat "$T/cc.out" >&2; fail "building the progress gate"; }
# A sanitizer build wants its runtime first among the preloaded libraries.
gate_env="LD_PRELOAD=$T/gate.so ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# signal_in SIG "PHASE DONE" IMG [OPTION...]: run e2defrag -C 3 on IMG,
# held at its first progress report of PHASE (numbered as -C does:
# 1 inodes, 2 directories, 3 planning, 4 moving) that counts at least
# DONE; send it SIG there, then let it go.  rc is its exit status.
signal_in() {
	local sig=$1 at=$2 img=$3 pid sent=0 phase done total dev
	shift 3
	rm -f "$T/fifo" "$T/gate"
	mkfifo "$T/fifo" "$T/gate"
	# shellcheck disable=SC2086
	env $gate_env E2F_GATE_FD=3 E2F_GATE_AT="$at" E2F_GATE="$T/gate" \
		e2defrag -C 3 "$@" "$img" 3>"$T/fifo" >"$T/out" 2>&1 &
	pid=$!
	while read -r phase done total dev; do
		# The same report the gate holds: the first that matches.
		if [ $sent = 0 ] && [ "$phase" = "${at% *}" ] && [ "$done" -ge "${at#* }" ]; then
			kill -"$sig" $pid
			# (a second one apart, not merged into the first while pending)
			[ "${SIGNALS:-1}" = 2 ] && sleep 1 && kill -"$sig" $pid
			sent=1
			echo go > "$T/gate"
		fi
	done < "$T/fifo"
	wait $pid
	rc=$?
	[ $sent = 1 ] || fail "$img: never saw phase ${at% *} with ${at#* } done"
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
		# Held once the first block is copied (a small buffer, many
		# reports): the signal lands in the middle of the first move.
		# Two signals: the first would finish the unit at hand, the
		# second abandons the move at hand (tests/cli/defrag-units.sh
		# has the first alone).
		SIGNALS=2 signal_in $sig "4 1" "$img" --buffer 4k
		[ $rc -eq 32 ] || { cat "$T/out"; fail "$type SIG$sig: exit $rc, expected 32"; }
		grep -q "cancelled inside a unit; the file at hand.*may be worse than before until the next run" "$T/out" ||
			fail "$type: no word of a cancel while moving: $(cat "$T/out")"
		check_clean "$img"
		snapshot "$img" "$T/after.json"
		same_snapshot "$T/before.json" "$T/after.json"
		# Not everything was done; another run finishes it.
		[ "$(avoidable "$img")" -gt 0 ] || fail "$type SIG$sig: nothing was left to do: the run was not stopped in the middle"
		expect_rc 0 e2defrag "$img"
		check_clean "$img"
		[ "$(avoidable "$img")" -eq 0 ] ||
			fail "$type: the second run left avoidably fragmented files: $(avoidable_list)"
		snapshot "$img" "$T/final.json"
		same_snapshot "$T/before.json" "$T/final.json"
	done
done

# While planning: held at the first report of planning, as it starts.
img=$T/plan.img
make_image "$img" ext2 4096 64M
printf 'mkdir /rec\n' > "$T/c"
dbg "$img" "$T/c"
interleave "$img" /rec 8192 100 a b c
check_clean "$img"
cp "$img" "$T/plan.orig"
signal_in INT "3 0" "$img"
[ $rc -eq 32 ] || { cat "$T/out"; fail "SIGINT while planning: exit $rc, expected 32"; }
grep -q "cancelled while planning" "$T/out" || { cat "$T/out"; fail "planning: no word of the cancel"; }
cmp -s "$img" "$T/plan.orig" || fail "SIGINT while planning: the image changed"
exit 0
