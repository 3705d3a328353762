#!/bin/sh
# On e2fragimg's aged disks (recordings interleaved a few blocks at a
# time, little free space), the run's own I/O on the modeled disk: traced
# with strace and costed by bench/iocost.py, which knows nothing of the
# planner, the whole run must take at most 6 times the sequential limit
# of what it wrote (reading once and writing once, at 120 MB/s, every
# byte the trace shows written).  The planner keeps, between two plans as
# good, the one faster on that disk (planner/plan_search.c): the packing
# with direct moves writes fewer blocks but fills each file's place a
# block at a time in sweep after sweep, 8 to 13 times the limit here; the
# one without stages and fills it in long runs, within 1.5 times the
# blocks that needed moving.  Skips without strace, or where it cannot
# trace.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
need_strace

# disk NAME E2FRAGIMG-ARGS...: one aged disk, traced, against the limit.
disk() {
	name=$1
	shift
	e2fragimg -q -S 1 "$@" "$T/$name.orig" || fail "$name: e2fragimg $*"
	traced_cost "$T/$name.orig"
	cp "$T/$name.orig.json" "$T/run.img.json" || fail "$name: no manifest"
	check_manifest "$T/run.img"
	python3 - "$T/cost.json" "$name" <<'PY' || fail "$name: the run's I/O is too far from the disk's limit"
import json, sys
c = json.load(open(sys.argv[1]))
written = c["bytes_written_traced"]
limit = 2 * written / 120e6
ratio = c["modeled_seconds"] / limit
print("# %s: %.2f s modeled, %d flushes, %.1f MiB written: limit %.2f s, %.2fx"
      % (sys.argv[2], c["modeled_seconds"], c["flushes"], written / 2**20, limit, ratio))
sys.exit(0 if written > 32 << 20 and ratio <= 6 else 1)
PY
	rm -f "$T/$name.orig" "$T/$name.orig.json" "$T/run.img" "$T/run.img.json"
}
disk aged-ext4 -w aged -t ext4 -s 256M
disk aged-ext3-1k -w aged -t ext3 -b 1024 -s 128M
disk aged-ext2 -w aged -t ext2 -s 128M
exit 0
