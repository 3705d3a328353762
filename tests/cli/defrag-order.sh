#!/bin/sh
# Under a limit the units that save the most read time per second go
# first (defrag/unit_order.c), where that saves more before the limit.
# The disk: a big file (8 MiB) in two pieces a block apart, which the
# plan moves first (largest first), and a small one (32 KiB) in four
# pieces a megabyte apart, whose place is a hole free from the start.
# Per debugfs, laying the small file out in one piece saves more read
# time than the big one and writes 256 times fewer blocks.  So one unit
# (--max-units 1) moves the small file and leaves the big one as it was,
# and saves what the small file's jumps cost, as the plan said it would
# (and that the plan's order would have saved the big file's);
# the filesystem is no worse (pieces, read time, interleave sets), e2fsck
# -fn clean, every file intact.  Where the limit lets every unit run, the
# plan's order stays.
. "$top_srcdir/tests/cli/defrag-lib.sh"
UNITS="python3 $top_srcdir/tests/cli/defrag-units.py"

gen "$T/x" 8192 1
gen "$T/sp" 1048576 2
gen "$T/small" 32768 3
gen "$T/hole" 40960 4
gen "$T/one" 4096 5
gen "$T/big" 8388608 6

# scene IMG TYPE: the disk above.  debugfs takes the first free blocks:
# the small file goes into the holes x1..x4 leave between 1 MiB spacers,
# the big one into the block "a" leaves before "b" and on after it, and
# "hole" leaves the small file's place, between the last spacer and g1.
scene() {
	make_image "$1" "$2" 4096 64M
	{
		for i in 1 2 3 4; do
			echo "write $T/x x$i"
			echo "write $T/sp sp$i"
		done
		for i in 1 2 3 4; do
			echo "rm x$i"
		done
		echo "write $T/small small"
		echo "write $T/hole hole"
		echo "write $T/one g1"
		echo "write $T/one a"
		echo "write $T/one b"
		echo "rm a"
		echo "write $T/big big"
		echo "rm hole"
	} > "$T/script"
	dbg "$1" "$T/script"
	check_clean "$1"
}

for fs in ext2 ext3; do
	img=$T/$fs.img
	scene "$img" $fs
	snapshot "$img" "$T/files.json"
	figures "$img" "$T/before"
	[ "$(pieces "$img" /small)" -eq 4 ] && [ "$(pieces "$img" /big)" -eq 2 ] ||
		fail "$fs: the scene: small in $(pieces "$img" /small) pieces, big in $(pieces "$img" /big)"
	js=$($UNITS jumps "$img" /small) jb=$($UNITS jumps "$img" /big)
	python3 -c "import sys; sys.exit(not $js > 100 * $jb)" ||
		fail "$fs: the scene: small's jumps cost $js s, big's $jb s"

	# The plan, without a limit: the big file's unit first.
	e2defrag -n --json "$img" > "$T/plain.json" 2>/dev/null
	set -- $(json_get "$T/plain.json" '" ".join(str(f["unit"]) for p in ("/big", "/small")
		for f in j["files"] if f["path"] == p) + " " + str(j["plan"]["units_by_gain"])')
	[ $# -eq 3 ] && [ "$1" -lt "$2" ] && [ "$3" = False ] ||
		fail "$fs: the plan's order: big in unit $1, small in unit $2, by gain $3"

	# One unit: the small file's.
	e2defrag -n --max-units 1 "$img" > "$T/n.txt" 2>&1
	grep -q "^  order: *the units saving the most read time per second first (in the plan's order those within the limit save" "$T/n.txt" ||
		{ cat "$T/n.txt"; fail "$fs: -n --max-units 1 does not say the order"; }
	debugfs -R "blocks /big" "$img" > "$T/big.before" 2>/dev/null
	cp "$img" "$T/cut.img"
	stopped "$T/cut.img" "$T/cut.json" "$fs --max-units 1" --max-units 1
	[ "$(json_get "$T/cut.json" 'j["plan"]["units_by_gain"]')" = True ] ||
		fail "$fs --max-units 1: the run kept the plan's order"
	[ "$(pieces "$T/cut.img" /small)" -eq 1 ] ||
		fail "$fs --max-units 1: small in $(pieces "$T/cut.img" /small) pieces"
	debugfs -R "blocks /big" "$T/cut.img" > "$T/big.after" 2>/dev/null
	cmp -s "$T/big.before" "$T/big.after" || fail "$fs --max-units 1: the big file moved"
	figures "$T/cut.img" "$T/after"
	noworse "$T/before" "$T/after" "$fs --max-units 1"
	saved=$(python3 -c 'import sys
a, b = open(sys.argv[1]).read().split(), open(sys.argv[2]).read().split()
print("%.6f" % (float(a[3]) - float(b[3])))' "$T/before" "$T/after")
	python3 -c "import sys; sys.exit(abs($saved - $js) > 1e-5)" ||
		fail "$fs --max-units 1: saved $saved s of read time, the small file's jumps cost $js s"
	# What the plan said the unit would save, against the same figure.
	set -- $(json_get "$T/cut.json" '"%d %.6f" % (j["plan"]["units_within_limit"],
		j["plan"]["read_seconds_saved_within_limit"])')
	[ "$1" -eq 1 ] && python3 -c "import sys; sys.exit(abs($2 - $js) > 1e-5)" ||
		fail "$fs --max-units 1: the plan said $1 units saving $2 s, the small file's jumps cost $js s"
	po=$(json_get "$T/cut.json" '"%.6f" % j["plan"]["read_seconds_saved_within_limit_in_plan_order"]')
	python3 -c "import sys; sys.exit(abs($po - $jb) > 1e-5)" ||
		fail "$fs --max-units 1: in the plan's order it says $po s, the big file's jumps cost $jb s"
	echo "ok $fs: one unit moves the small file first: saves $saved s (the big file's jumps: $jb s)"

	# A limit every unit fits: the plan's order.
	n=$(json_get "$T/plain.json" 'j["plan"]["units"]')
	e2defrag -n --json --max-units "$n" "$img" > "$T/all.json" 2>/dev/null
	[ "$(json_get "$T/all.json" 'j["plan"]["units_by_gain"]')" = False ] ||
		fail "$fs --max-units $n (every unit): the order changed"
	e2defrag -n --json --max-time 1h "$img" > "$T/all.json" 2>/dev/null
	[ "$(json_get "$T/all.json" '(j["plan"]["units_by_gain"], j["plan"]["units_within_limit"])')" = "(False, $n)" ] ||
		fail "$fs --max-time 1h: the order changed, or not every unit fits"
	[ "$(json_get "$T/plain.json" 'j["plan"]["units_within_limit"]')" = None ] ||
		fail "$fs: units within a limit without one"
	echo "ok $fs: where every unit fits the limit, the plan's order"
done
