#!/bin/sh
# bench/window.sh [DISK...] --- the plans e2defrag makes for a --max-time
# window (planner/plan_search.c, plan_opts.window), on the disks
# bench/iocost.sh builds: per disk, e2defrag -n --json without a window
# and with --max-time WINDOW (default 30 s), on the modeled disk (7200 rpm,
# 120 MB/s): the units, the longest unit's modeled seconds, the whole
# run's, and the bytes to write over the bytes that needed moving; and
# whether the window's plan is another (units_for_window).  A unit longer
# than the window is never started in it; the figures are the model's, so
# one run gives them (no peer, no noise).
#
# Then, per disk, windows of a tenth, a quarter and half of the whole
# run's estimate (FRACTIONS): how many units fit, the read time they save
# (of what the whole run saves), in the order the run takes and in the
# plan's order, and whether the order is the units saving the most per
# second first (defrag/unit_order.c, units_by_gain).  -n spends a little
# of the window scanning and planning, as a run does.
#
# Last, with strace (CUT_RUNS=0 leaves it out): per disk and window of a
# tenth and a quarter (CUT_FRACTIONS), the run cut where -n says the
# window ends (--max-units, on a copy in the page cache), traced and
# costed on the same modeled disk by bench/iocost.py: its moves' modeled
# seconds against the window (defrag/units.c's units_fit: at most 1).
#
# Run bench/iocost.sh first (as root: it builds the images into DIR,
# BENCH_DIR, default $TMPDIR/iocost, as NAME.orig); this script only
# reads them.  Run from the build tree after make.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/iocost}
window=${WINDOW:-30}
PATH=$top/defrag:$PATH
export PATH LC_ALL=C
disks=${*:-"ktree kmanifest pvr recordings img-nearfull img-streams img-tree img-aged img-ktree"}

# figures JSON: units, longest, total, written / needed, for the window
figures() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["plan"]
need = p["bytes_needing_move"]
print("%d | %.1f s | %.1f s | %s | %s" % (p["units"], p["longest_unit_seconds"],
      p["estimated_seconds"],
      "%.2fx" % (p["bytes_to_write"] / need) if need else "-",
      "yes" if p["units_for_window"] else "no"))' "$1"
}

echo "| disk | units | longest unit | whole run | written / needed | units | longest unit | whole run | written / needed | another plan |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for d in $disks; do
	img=$dir/$d.orig
	[ -f "$img" ] || { echo "$0: $img: not built (run bench/iocost.sh $d first)" >&2; exit 1; }
	e2defrag -n --json "$img" > "$dir/$d.nowindow.json" 2>/dev/null || [ $? -le 1 ]
	e2defrag -n --json --max-time "$window" "$img" > "$dir/$d.window.json" 2>/dev/null || [ $? -le 1 ]
	a=$(figures "$dir/$d.nowindow.json" | cut -d'|' -f1-4)
	b=$(figures "$dir/$d.window.json")
	echo "| $d | $a | $b |"
done

# saved JSON NOWINDOW FRACTION: one row of the second table.
saved() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["plan"]
q = json.load(open(sys.argv[2]))["plan"]
whole = q["read_seconds_before"] - q["read_seconds_after"]
got = p["read_seconds_saved_within_limit"]
plan = p["read_seconds_saved_within_limit_in_plan_order"]
if plan is None:
    plan = got
pct = lambda x: "%.1f%%" % (100 * x / whole) if whole > 0 else "-"
print("%s | %d of %d | %.2f s (%s) | %.2f s (%s) | %s" % (sys.argv[3], p["units_within_limit"],
      p["units"], got, pct(got), plan, pct(plan), "per second" if p["units_by_gain"] else "plan"))' "$1" "$2" "$3"
}

echo
echo "| disk | window | units within | saves | in the plan's order | order |"
echo "|---|---:|---:|---:|---:|---|"
for d in $disks; do
	img=$dir/$d.orig
	for f in ${FRACTIONS:-0.1 0.25 0.5}; do
		w=$(python3 -c 'import json, sys
print("%.3f" % (float(sys.argv[2]) * json.load(open(sys.argv[1]))["plan"]["estimated_seconds"]))' \
			"$dir/$d.nowindow.json" "$f")
		e2defrag -n --json --max-time "$w" "$img" > "$dir/$d.part.json" 2>/dev/null || [ $? -le 1 ]
		echo "| $d | $(saved "$dir/$d.part.json" "$dir/$d.nowindow.json" "$w s") |"
	done
done

# The cut runs, traced.
[ "${CUT_RUNS:-1}" = 1 ] && command -v strace > /dev/null || exit 0
syscalls=openat,close,write,pread64,pwrite64,fsync,fdatasync,fadvise64,ioctl,fallocate
echo
echo "| disk | window | units within | cut run's moves (iocost.py) | / window |"
echo "|---|---:|---:|---:|---:|"
for d in $disks; do
	img=$dir/$d.orig
	for f in ${CUT_FRACTIONS:-0.1 0.25}; do
		w=$(python3 -c 'import json, sys
print("%.3f" % (float(sys.argv[2]) * json.load(open(sys.argv[1]))["plan"]["estimated_seconds"]))' \
			"$dir/$d.nowindow.json" "$f")
		e2defrag -f -n --json --max-time "$w" "$img" > "$dir/$d.part.json" 2>/dev/null || [ $? -le 1 ]
		k=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plan"]["units_within_limit"] or 0)' "$dir/$d.part.json")
		if [ "$k" -eq 0 ]; then
			echo "| $d | $w s | 0 | - | - |"
			continue
		fi
		cp --sparse=always "$img" "$dir/cut.img"
		strace -f -qq -s 8 -e trace=$syscalls -o "$dir/cut.strace" \
			e2defrag -f -J -C 9 --max-time "$w" --max-units "$k" "$dir/cut.img" \
			> "$dir/cut.json" 2> /dev/null 9> /dev/null || true
		python3 "$top/bench/iocost.py" --traced "$dir/cut.img" --progress-fd 9 \
			--result "$dir/cut.json" "$dir/cut.strace" "$img" > "$dir/cut.cost.json"
		python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
w = float(sys.argv[2])
print("| %s | %s s | %s | %.2f s | %.2f |" % (sys.argv[3], sys.argv[2], sys.argv[4],
      c["move_seconds"], c["move_seconds"] / w))' "$dir/cut.cost.json" "$w" "$d" "$k"
		rm -f "$dir/cut.img" "$dir/cut.strace" "$dir/cut.json" "$dir/cut.cost.json"
	done
done
