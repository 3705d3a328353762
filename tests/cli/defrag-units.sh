#!/bin/sh
# A stopped run never leaves the disk worse (defrag/units.c): on nearly
# full disks (e2fragimg nearfull: recordings on a disk kept full, so the
# plan stages files aside), runs stopped after 1 and 5 units
# (--max-units) and by one SIGINT after the first unit leave the whole
# filesystem's pieces and modeled read time (debugfs block lists and the
# read model, tests/cli/defrag-units.py) and its interleave sets (e2frag)
# no worse than before, e2fsck -fn clean and every file intact; short
# runs repeated reach what one run reaches.  -n and --json carry the
# estimate.  The same on a disk where units go out of plan order (below).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }

# converge IMG N MAX WHAT: short runs (--max-units N, at most MAX of
# them, until one finishes or one moves nothing) on a copy of IMG reach
# what one run on another copy reaches (figures), e2fsck -fn clean and
# every file intact.
converge() {
	cp "$1" "$T/one.img"
	e2defrag "$T/one.img" > /dev/null 2>&1
	figures "$T/one.img" "$T/one"
	cp "$1" "$T/rep.img"
	k=0
	while [ $k -lt "$3" ]; do
		cp "$T/rep.img" "$T/prev.img"
		e2defrag --max-units "$2" "$T/rep.img" > /dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] || fail "$4: short run $k exit $rc"
		k=$((k + 1))
		[ $rc -eq 0 ] && break
		cmp -s "$T/rep.img" "$T/prev.img" && break	# nothing more moved
	done
	check_clean "$T/rep.img"
	snapshot "$T/rep.img" "$T/rep.json"
	same_snapshot "$T/files.json" "$T/rep.json"
	figures "$T/rep.img" "$T/rep"
	cmp -s "$T/one" "$T/rep" ||
		fail "$4: $k short runs reach $(cat "$T/rep"), one run $(cat "$T/one")"
	echo "ok $4: $k runs of $2 units reach what one run does: $(tr '\n' ' ' < "$T/one")"
}

for fs in ext3 ext2; do
	img=$T/$fs.img
	nearfull_disk $fs "$img"

	# The estimate, and the units it is made of.
	e2defrag -n "$img" > "$T/plan.txt" 2>&1
	grep -q "estimated time: .* on the modeled disk, in [0-9]* units (the longest " "$T/plan.txt" ||
		{ cat "$T/plan.txt"; fail "$fs: -n says no estimate"; }
	e2defrag -n --json "$img" > "$T/plan.json" 2>/dev/null
	set -- $(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["plan"]
print(p["units"], p["moves"], p["estimated_seconds"] > 0,
      0 < p["longest_unit_seconds"] <= p["estimated_seconds"])' "$T/plan.json")
	units=$1
	[ "$units" -gt 5 ] && [ "$1" -le "$2" ] && [ "$3" = True ] && [ "$4" = True ] ||
		fail "$fs: plan units $1 moves $2 estimate $3 longest $4: expected more than 5 units"

	# The longest unit is named by a file it moves: one on the disk
	# (debugfs), with moves of its own, the last in that unit or later
	# per the JSON (a file's unit is that of its last move).
	named=$(sed -n 's/.*estimated time: .*(the longest [^,]*, moving \(\/[^ ]*\).*/\1/p' "$T/plan.txt")
	[ -n "$named" ] || { cat "$T/plan.txt"; fail "$fs: -n names no file of the longest unit"; }
	debugfs -R "stat $named" "$img" 2>&1 | grep -q '^Inode: ' ||
		fail "$fs: the longest unit's file $named is not on the disk"
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
f = [f for f in j["files"] if f["path"] == sys.argv[2]]
assert f and f[0]["bytes_to_write"] > 0, "no moves for " + sys.argv[2]
# Its last move is in that unit or a later one.
assert f[0]["unit"] >= j["plan"]["longest_unit"], (f[0]["unit"], j["plan"]["longest_unit"])
units = [f["unit"] for f in j["files"] if f["unit"] is not None]
assert units and max(units) == j["plan"]["units"], (max(units), j["plan"]["units"])' \
		"$T/plan.json" "$named" || fail "$fs: the longest unit's file in the JSON"
	echo "ok $fs: the longest unit moves $named"

	# A window shorter than the next unit: nothing written, exit 1, and
	# the closing line says the window is too short for that unit (on a
	# slow modeled disk, 10 kB/s, and a window no scan and plan use up).
	cp "$img" "$T/short.img"
	e2defrag --mbps 0.01 --max-time 60 "$T/short.img" > "$T/short.txt" 2>&1
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/short.txt"; fail "$fs: a window shorter than a unit: exit $rc, expected 1"; }
	cmp -s "$img" "$T/short.img" || fail "$fs: a window shorter than the first unit wrote to the disk"
	grep -q "^e2defrag: the next unit, estimated .*, moving /.*, is longer than the time this --max-time leaves for moving" "$T/short.txt" ||
		{ cat "$T/short.txt"; fail "$fs: no word of the unit too long for the window"; }
	e2defrag --mbps 0.01 --max-time 60 --json "$T/short.img" > "$T/short.json" 2>/dev/null
	[ "$(json_get "$T/short.json" 'j["result"]["next_unit_too_long"] and j["result"]["next_unit_seconds"] > 60')" = True ] ||
		fail "$fs: the JSON does not say the next unit is too long"
	echo "ok $fs: a unit longer than the window is named, nothing written"

	for n in 1 5; do
		cp "$img" "$T/cut.img"
		e2defrag --max-units $n --json "$T/cut.img" > "$T/run.json" 2>"$T/run.err"
		rc=$?
		[ $rc -eq 1 ] || { cat "$T/run.err"; fail "$fs --max-units $n: exit $rc, expected 1"; }
		done_units=$(json_get "$T/run.json" 'j["result"]["units_done"]')
		[ "$done_units" -eq $n ] || fail "$fs --max-units $n: $done_units units done"
		check_clean "$T/cut.img"
		snapshot "$T/cut.img" "$T/cut.json"
		same_snapshot "$T/files.json" "$T/cut.json"
		figures "$T/cut.img" "$T/after"
		noworse "$T/before" "$T/after" "$fs --max-units $n"
		echo "ok $fs --max-units $n: $(tr '\n' ' ' < "$T/before")-> $(tr '\n' ' ' < "$T/after")"
	done

	converge "$img" 4 30 "$fs"
done

# Units out of plan order (defrag/waiting.c): on e2fragimg's turns disk
# (small files between the pieces of a big one, every other one deleted)
# units that would take blocks the open batch freed wait for its commit
# and later ones go ahead, so a run stopped after N units has moved
# files of units past the plan's Nth (debugfs before and after, against
# -n --json's files[].unit); the disk is no worse for it, and short runs
# repeated still reach what one run does.
img=$T/turns.img
e2fragimg -q -w turns -t ext3 -S 3 "$img" > /dev/null 2>&1 || fail "e2fragimg turns"
snapshot "$img" "$T/files.json"
figures "$img" "$T/before"
e2defrag -n --json "$img" > "$T/plan.json" 2>/dev/null
for n in 20 100; do
	cp "$img" "$T/cut.img"
	e2defrag --max-units $n --json "$T/cut.img" > "$T/run.json" 2>"$T/run.err"
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/run.err"; fail "turns --max-units $n: exit $rc, expected 1"; }
	[ "$(json_get "$T/run.json" 'j["result"]["units_done"]')" -eq $n ] ||
		fail "turns --max-units $n: not $n units done"
	check_clean "$T/cut.img"
	snapshot "$T/cut.img" "$T/cut.json"
	same_snapshot "$T/files.json" "$T/cut.json"
	figures "$T/cut.img" "$T/after"
	noworse "$T/before" "$T/after" "turns --max-units $n"
	late=$(python3 - "$img" "$T/cut.img" "$T/plan.json" $n <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "lib"))
import oracle
a, b = oracle.layout(sys.argv[1]), oracle.layout(sys.argv[2])
unit = {f["ino"]: f["unit"] for f in json.load(open(sys.argv[3]))["files"]}
moved = [i for i in b if i in a and a[i]["runs"] != b[i]["runs"]]
print(sum(1 for i in moved if (unit.get(i) or 0) > int(sys.argv[4])))
PY
) || fail "turns --max-units $n: the moved files"
	[ "$late" -gt 0 ] || fail "turns --max-units $n: only the plan's first $n units moved: none went ahead"
	echo "ok turns --max-units $n: $late files of later units went ahead; $(tr '\n' ' ' < "$T/before")-> $(tr '\n' ' ' < "$T/after")"
done
converge "$img" 40 60 turns

# One SIGINT in the first unit: it finishes, and the run stops, exit 32.
# (Held in the first progress report of the moves, once a block is
# copied, tests/cli/progress_gate.c, as tests/cli/defrag-signal.sh does.)
command -v mkfifo >/dev/null 2>&1 || { echo "skip: no mkfifo"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "skip: no C compiler for the progress gate"; exit 77; }
"$cc" -shared -fPIC -o "$T/gate.so" "$top_srcdir/tests/cli/progress_gate.c" -ldl \
	2>"$T/cc.out" || { cat "$T/cc.out" >&2; fail "building the progress gate"; }
img=$T/ext3.img
nearfull_disk ext3 "$img"
at=1
rm -f "$T/fifo" "$T/gate"
mkfifo "$T/fifo" "$T/gate"
env LD_PRELOAD="$T/gate.so" ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	E2F_GATE_FD=3 E2F_GATE_AT="4 $at" E2F_GATE="$T/gate" \
	e2defrag -C 3 --json "$img" 3>"$T/fifo" >"$T/run.json" 2>"$T/run.err" &
pid=$!
sent=0
while read -r phase done total dev; do
	if [ $sent = 0 ] && [ "$phase" = 4 ] && [ "$done" -ge "$at" ]; then
		kill -INT $pid
		sent=1
		echo go > "$T/gate"
	fi
done < "$T/fifo"
wait $pid
rc=$?
[ $sent = 1 ] || fail "never saw the moves"
[ $rc -eq 32 ] || { cat "$T/run.err"; fail "one SIGINT: exit $rc, expected 32"; }
grep -q "cancelled at the end of a unit" "$T/run.err" || { cat "$T/run.err"; fail "one SIGINT: no word of the unit's end"; }
[ "$(json_get "$T/run.json" 'j["result"]["abandoned"]')" = False ] || fail "one SIGINT abandoned a unit"
[ "$(json_get "$T/run.json" 'j["result"]["units_done"]')" -ge 1 ] || fail "one SIGINT: no unit done"
check_clean "$img"
figures "$img" "$T/after"
noworse "$T/before" "$T/after" "one SIGINT"
echo "ok one SIGINT: $(tr '\n' ' ' < "$T/before")-> $(tr '\n' ' ' < "$T/after")"
exit 0
