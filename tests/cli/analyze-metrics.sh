#!/bin/sh
# e2frag --metrics FILE: node_exporter's textfile format, checked by an
# independent parser of the exposition format (tests/lib/prom_format.py)
# and by promtool where it is installed; every figure equal to what
# e2frag -J says of the same image, read by a separate run; labelled with
# the device and --metrics-mountpoint; written atomically: a reader
# polling the file while it is rewritten never sees part of it, the file
# is replaced by a rename (another link to the old one keeps it) and no temporary file is left; a
# metrics file that cannot be written is exit 8 and leaves the old one.
. "$top_srcdir/tests/lib/common.sh"
prom=$top_srcdir/tests/lib/prom_format.py

img=$T/fs.img
e2fragimg -q -w streams -t ext4 -b 1024 --size 32M --streams 5 --chunk 4K \
	--total 12M "$img" || fail "e2fragimg"
mkdir "$T/collector"
m=$T/collector/e2frag.prom
run_status e2frag --metrics "$m" --metrics-mountpoint '/srv/rec "1"' "$img" > "$T/out"
[ "$status" -le 1 ] || fail "e2frag --metrics: exit $status"
grep -q "^Score" "$T/out" || fail "e2frag --metrics printed no report"
python3 "$prom" "$m" > "$T/samples.json" || fail "the metrics file breaks the exposition format"
if command -v promtool > /dev/null; then
	promtool check metrics < "$m" > "$T/promtool" 2>&1 || fail "promtool: $(cat "$T/promtool")"
	note "promtool check metrics: clean"
else
	note "promtool not installed: checked by tests/lib/prom_format.py alone"
fi
e2frag -J "$img" > "$T/report.json" 2> /dev/null
python3 - "$T/samples.json" "$T/report.json" "$img" <<'PY' || fail "the metrics disagree with e2frag -J"
import json, sys
samples, report, img = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
s, fs, free = report["summary"], report["filesystem"], report["free_space"]
bs = fs["block_size"]
want = {
    "e2frag_score": s["score"],
    "e2frag_read_efficiency": s["read_efficiency"],
    "e2frag_files": s["files"],
    "e2frag_fragmented_files": s["fragmented_files"],
    "e2frag_avoidably_fragmented_files": s["avoidably_fragmented_files"],
    "e2frag_improvable_files": s["improvable_files"],
    "e2frag_interleaved_files": s["interleaved_files"],
    "e2frag_interleave_sets": len(report["interleave_sets"]),
    "e2frag_free_bytes": free["free_blocks"] * bs,
    "e2frag_free_runs": free["free_extents"],
    "e2frag_largest_free_run_bytes": free["largest_free_extent"] * bs,
}
ok = True
for name, value in want.items():
    got = samples.get(name)
    if not got or len(got) != 1:
        print("FAIL: %s: %r" % (name, got), file=sys.stderr); ok = False; continue
    g = got[0]
    if g["labels"] != {"device": img, "mountpoint": '/srv/rec "1"'}:
        print("FAIL: %s labels %r" % (name, g["labels"]), file=sys.stderr); ok = False
    if abs(g["value"] - value) > 1e-6 * max(1, abs(value)):
        print("FAIL: %s = %r, e2frag -J says %r" % (name, g["value"], value), file=sys.stderr); ok = False
ts = samples["e2frag_last_scan_timestamp_seconds"][0]["value"]
import time
if abs(ts - time.time()) > 600:
    print("FAIL: timestamp %r" % ts, file=sys.stderr); ok = False
extra = set(samples) - set(want) - {"e2frag_last_scan_timestamp_seconds"}
if extra:
    print("FAIL: unexpected metrics %s" % sorted(extra), file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
note "metrics agree with e2frag -J: $(grep -c '^e2frag' "$m") samples"

# Without --metrics-mountpoint an unmounted image has the device label alone.
e2frag --metrics "$m" "$img" > /dev/null
grep -q '^e2frag_score{device="'"$img"'"} ' "$m" || fail "labels without a mount point: $(grep '^e2frag_score' "$m")"

# Atomic: a reader polling the file while e2frag rewrites it 20 times
# sees it whole every time (it ends with the timestamp line).
# A second name for the old file: a rename leaves it as it was, a
# rewrite in place would change it.
ln "$m" "$T/old.prom"
old=$(sha256sum < "$T/old.prom")
python3 - "$m" "$T/stop" > "$T/reads" <<'PY' &
import os, sys
path, stop = sys.argv[1], sys.argv[2]
reads = partial = 0
while not os.path.exists(stop):
    with open(path) as f:
        text = f.read()
    reads += 1
    if not text.startswith("# HELP e2frag_score") or not text.rstrip("\n").split("\n")[-1].startswith("e2frag_last_scan_timestamp_seconds"):
        partial += 1
print(reads, partial)
PY
reader=$!
i=0
while [ $i -lt 20 ]; do
	e2frag --metrics "$m" "$img" > /dev/null 2>&1
	i=$((i + 1))
done
touch "$T/stop"
wait $reader
read reads partial < "$T/reads"
[ "$partial" -eq 0 ] || fail "$partial of $reads reads saw a partial metrics file"
[ "$(sha256sum < "$T/old.prom")" = "$old" ] &&
	[ "$(stat -c %i "$m")" != "$(stat -c %i "$T/old.prom")" ] ||
	fail "the metrics file was rewritten in place, not renamed over"
[ "$(ls -A "$T/collector")" = "e2frag.prom" ] || fail "left behind: $(ls -A "$T/collector")"
[ "$(stat -c %a "$m")" = "$(printf '%o' $((0666 & ~$(umask))))" ] ||
	fail "mode $(stat -c %a "$m"), umask $(umask): node_exporter could not read it"
note "atomic: $reads reads while it was rewritten 20 times, none partial"

# A metrics file that cannot be written: exit 8, the old one kept.
sum=$(sha256sum < "$m")
run_status e2frag --metrics "$T/no/such/dir/e2frag.prom" "$img" > /dev/null 2> "$T/err"
[ "$status" -eq 8 ] && grep -q "cannot write the metrics" "$T/err" ||
	fail "an unwritable metrics file: exit $status: $(cat "$T/err")"
if [ "$(id -u)" -ne 0 ]; then
	chmod a-w "$T/collector"
	run_status e2frag --metrics "$m" "$img" > /dev/null 2> "$T/err"
	chmod u+w "$T/collector"
	[ "$status" -eq 8 ] || fail "a read-only collector directory: exit $status"
	[ "$(sha256sum < "$m")" = "$sum" ] || fail "the old metrics file changed"
fi
note "unwritable: $(cat "$T/err")"

# A metrics path that is not a regular file (a FIFO, a symbolic link, a
# directory) is a usage error before anything is read, left as it was:
# the rename that writes the file would have put a regular file in its
# place (a device node such as /dev/full, given by mistake, was lost).
mkfifo "$T/fifo.prom"
echo "not metrics" > "$T/target"
ln -s "$T/target" "$T/link.prom"
mkdir "$T/dir.prom"
for p in fifo link dir; do
	for prog in e2frag e2defrag; do
		cp "$img" "$T/p.img"
		run_status $prog --metrics "$T/$p.prom" "$T/p.img" > /dev/null 2> "$T/err"
		[ "$status" -eq 16 ] && grep -q "is not a regular file; not writing over it" "$T/err" ||
			fail "$prog --metrics $p: exit $status: $(cat "$T/err")"
		cmp -s "$T/p.img" "$img" || fail "$prog --metrics $p: the image changed"
	done
done
[ -p "$T/fifo.prom" ] || fail "the FIFO was replaced"
[ -L "$T/link.prom" ] && [ "$(cat "$T/target")" = "not metrics" ] || fail "the link or its target changed"
[ -d "$T/dir.prom" ] || fail "the directory was replaced"
exit 0
