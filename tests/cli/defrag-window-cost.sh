#!/bin/sh
# A run cut where e2defrag -n says a window ends takes about the window
# on the modeled disk.  On a tree of small files written one by one
# (e2fragimg's kernel-tree, ext3 and ext2), -n --max-time W (a quarter of
# the whole run's estimate) says how many units fit (defrag/units.c's
# units_fit: the run that stops after them, with its last commit and the
# journal's checkpoint, its read-ahead only for them); the run cut there
# (--max-units, the disk being the page cache) is traced with strace and
# costed by bench/iocost.py, which knows nothing of the planner, from the
# start of its moves (-C 9's phase 4 line: write is traced for it): its
# moves must take at most W and a fifth, and at least half of it (not a
# plan that could have done more).  Before, -n's units were those whose
# share of the whole plan's model fit, and the runs cut there took 1.7 to
# 4.4 times the window: the units' reads came in a sparser sweep than the
# whole run's, and the commit and checkpoint at the cut were charged to
# later units.  A fifth, not a tenth: the traced run measures its rate
# against the host's clock and gathers its groups of moves by it, and a
# unit here models a few milliseconds, about one of the host's fsyncs, so
# the groups, and the reads with them, differ with the host's load (ext2:
# 1.07 to 1.13 times the window).
# Skips without strace, or where it cannot trace, or where the traced
# run's own clock (it measures its rate as it goes) runs out before the
# units -n fitted, as on a loaded machine.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
need_strace

for fs in ext3 ext2; do
	img=$T/$fs.img
	e2fragimg -q -w kernel-tree -t $fs --files 4000 -s 256M -S 1 "$img" ||
		fail "$fs: e2fragimg kernel-tree"
	snapshot "$img" "$T/files.json"
	e2defrag -n --json "$img" > "$T/plain.json" 2>/dev/null
	w=$(json_get "$T/plain.json" '"%.3f" % (j["plan"]["estimated_seconds"] / 4)')
	e2defrag -n --json --max-time "$w" "$img" > "$T/win.json" 2>/dev/null
	set -- $(json_get "$T/win.json" '"%d %d" % (j["plan"]["units_within_limit"], j["plan"]["units"])')
	k=$1 n=$2
	[ "$k" -gt 0 ] && [ "$k" -lt "$n" ] || fail "$fs: a window of $w s leaves room for $k of $n units: no cut"

	# traced_cost runs e2defrag with no limit; this one is cut.
	cp --sparse=always "$img" "$T/run.img"
	strace -f -qq -s 8 -e trace=openat,close,write,pread64,pwrite64,fsync,fdatasync,fadvise64,ioctl,fallocate \
		-o "$T/trace" e2defrag -J -C 9 --max-time "$w" --max-units "$k" "$T/run.img" \
		> "$T/run.json" 2> "$T/err" 9> /dev/null
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/err"; fail "$fs: the cut run exited $rc, expected 1"; }
	check_clean "$T/run.img"
	snapshot "$T/run.img" "$T/run.files.json"
	same_snapshot "$T/files.json" "$T/run.files.json"
	set -- $(json_get "$T/run.json" '"%d %d" % (j["result"]["units_done"], j["result"]["timed_out"])')
	if [ "$1" -lt "$k" ] && [ "$2" = 1 ]; then
		# The run measures its own rate against the real clock: traced,
		# on a loaded machine, its clock ran out before the units -n
		# fitted, and the model's claim cannot be checked on it.
		echo "skip: $fs: traced on a loaded machine, the run's clock ran out after $1 of the $k units -n fits in $w s"
		exit 77
	fi
	[ "$1" = "$k" ] || fail "$fs: the cut run did $1 units, not the $k -n fits"
	python3 "$top_srcdir/bench/iocost.py" --traced "$T/run.img" --progress-fd 9 \
		--result "$T/run.json" "$T/trace" "$img" > "$T/cost.json" || fail "$fs: iocost.py"
	t=$(json_get "$T/cost.json" '"%.3f" % j["move_seconds"]')
	python3 -c "import sys; t, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (w / 2 <= t <= w * 1.2))" "$t" "$w" ||
		fail "$fs: the run cut after the $k units -n fits in $w s takes $t s on the modeled disk"
	echo "ok $fs: $k of $n units fit a window of $w s; cut there, the run takes $t s (iocost.py)"
done
