#!/bin/sh
# e2defrag -n's estimate of the moves on the modeled disk, against the
# same run traced (strace) and costed by bench/iocost.py, which knows
# nothing of the planner: the syscalls' offsets on the seek, rotation and
# transfer model, with the page cache serving what the run read or wrote
# before.  Within 0.75 to 1.33 times on e2fragimg's aged disks (files
# staged and rebuilt through their own blocks, so that much of what is
# read was written by the run before), its interleaved recordings and a
# nearly full disk, and on a tree of small files that fill each other's
# places.  The estimate once charged the staged data's second reads to
# the disk: 1.7 to 2.9 times on the first three.  On the tree it once
# left out the checkpoint (the blocks the log held, written in place at
# the end) and charged a long gap read through as a jump over it: 0.65
# times.  Skips without strace, or where it cannot trace.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
need_strace
bin=$top_builddir/defrag/e2defrag

# estimate NAME E2FRAGIMG-ARGS...: the ratio of the estimate to the traced cost.
estimate() {
	name=$1
	shift
	e2fragimg -q -S 1 "$@" "$T/$name.orig" || fail "$name: e2fragimg $*"
	traced_cost "$T/$name.orig"
	"$bin" -n -J "$T/$name.orig" > "$T/plan.json" || fail "$name: e2defrag -n"
	python3 - "$T/plan.json" "$T/cost.json" "$name" <<'PY' || fail "$name: the estimate is off"
import json, sys
est = json.load(open(sys.argv[1]))["plan"]["estimated_seconds"]
cost = json.load(open(sys.argv[2]))["move_seconds"]
ratio = est / cost if cost > 0 else float("inf")
print("# %s: estimate %.2f s, traced moves %.2f s on the model: %.2fx" % (sys.argv[3], est, cost, ratio))
sys.exit(0 if cost > 1 and 0.75 <= ratio <= 1.33 else 1)
PY
}
estimate aged-ext4 -w aged -t ext4 -s 256M
estimate aged-ext3-1k -w aged -t ext3 -b 1024 -s 128M
estimate streams -w streams -t ext4 -s 256M --streams 4 --total 128M
estimate nearfull -w nearfull -t ext4 -s 256M --fill 90
estimate tree -w kernel-tree -t ext3 -s 256M --files 12000 --reservation 8
exit 0
