#!/bin/sh
# e2defrag -n's estimate of the moves on the modeled disk, against the
# same run traced (strace) and costed by bench/iocost.py, which knows
# nothing of the planner: the syscalls' offsets on the seek, rotation and
# transfer model, with the page cache serving what the run read or wrote
# before.  Within 0.75 to 1.33 times on e2fragimg's aged disks (files
# staged and rebuilt through their own blocks, so that much of what is
# read was written by the run before), its interleaved recordings and a
# nearly full disk.  The estimate once charged the staged data's second
# reads to the disk: 1.7 to 2.9 times on the first three.  Skips without
# strace, or where it cannot trace.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v strace >/dev/null 2>&1 || { echo "skip: no strace"; exit 77; }
strace -f -qq -o /dev/null true 2>/dev/null || { echo "skip: strace cannot trace here"; exit 77; }
bin=$top_builddir/defrag/e2defrag
syscalls=openat,open,close,dup,dup2,dup3,lseek,read,write,pread64,pwrite64
syscalls=$syscalls,preadv,pwritev,preadv2,pwritev2,fsync,fdatasync,sync,syncfs
syscalls=$syscalls,sync_file_range,fadvise64,readahead,ioctl,fallocate

# estimate NAME E2FRAGIMG-ARGS...: the ratio of the estimate to the traced cost.
estimate() {
	name=$1
	shift
	e2fragimg -q -S 1 "$@" "$T/$name.orig" || fail "$name: e2fragimg $*"
	cp --sparse=always "$T/$name.orig" "$T/run.img"
	# -C 9: the progress lines mark where the move phase starts.
	strace -f -qq -s 8 -e trace=$syscalls -o "$T/trace" \
		"$bin" -J -C 9 "$T/run.img" > "$T/run.json" 2> "$T/err" 9> /dev/null
	rc=$?
	[ $rc -le 1 ] || { cat "$T/err"; fail "$name: e2defrag exited $rc"; }
	check_clean "$T/run.img"
	"$bin" -n -J "$T/$name.orig" > "$T/plan.json" || fail "$name: e2defrag -n"
	python3 "$top_srcdir/bench/iocost.py" --traced "$T/run.img" --progress-fd 9 \
		--result "$T/run.json" "$T/trace" "$T/$name.orig" > "$T/cost.json" ||
		fail "$name: iocost.py"
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
exit 0
