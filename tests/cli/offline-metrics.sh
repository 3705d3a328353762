#!/bin/sh
# e2defrag-offline with metrics_dir (node_exporter's textfile collector):
# every night leaves e2defrag-DEVICE.prom there, in the exposition format
# (tests/lib/prom_format.py, and promtool where installed), labelled with
# the device and the mount point.  A skipped night (no room to improve
# any file: nothing stopped or unmounted) writes the filesystem's figures,
# equal to what e2frag -J says of the device read separately, and the
# outcome "skipped" with e2defrag -n's exit status; a night with work writes "done", the bytes written
# and the exit status of the script, and the figures e2frag -J gives
# after it.  A metrics_dir that cannot be written is exit 8 before
# anything is unmounted.  Needs root and loop devices (offline-lib.sh).
. "$top_srcdir/tests/cli/offline-lib.sh"
prom=$top_srcdir/tests/lib/prom_format.py

e2fragimg -q --workload streams --type ext4 --streams 3 --total 12M \
	--size 32M "$T/fs.img" || fail "e2fragimg"
free=$(dumpe2fs -h "$T/fs.img" 2>/dev/null | sed -n 's/^Free blocks: *//p')
head -c $((free * 4096)) /dev/urandom > "$T/filler"
debugfs -w -R "write $T/filler /filler" "$T/fs.img" >/dev/null 2>&1 || fail "debugfs write"
rm "$T/filler"
fsck_clean "$T/fs.img"
attach "$T/fs.img" noatime
mkdir "$T/collector"
echo "metrics_dir=$T/collector" >> "$CONF"
m=$T/collector/e2defrag-${LOOP#/dev/}.prom

# check_metrics OUTCOME STATUS: the file is well formed, labelled, has
# OUTCOME and STATUS, and e2frag -J's figures for $LOOP as it is now.
check_metrics() {
	python3 "$prom" "$m" > "$T/samples.json" || fail "$1: the metrics file breaks the exposition format"
	if command -v promtool > /dev/null; then
		promtool check metrics < "$m" > "$T/promtool" 2>&1 || fail "$1: promtool: $(cat "$T/promtool")"
	fi
	e2frag -J "$LOOP" > "$T/e2frag.json" 2> /dev/null
	python3 - "$T/samples.json" "$T/e2frag.json" "$LOOP" "$MNT" "$1" "$2" <<'PY' || fail "$1: the metrics are wrong"
import json, sys
samples, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
dev, mnt, outcome, status = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
s, free = report["summary"], report["free_space"]
bs = report["filesystem"]["block_size"]
want = {
    "e2frag_score": s["score"], "e2frag_read_efficiency": s["read_efficiency"],
    "e2frag_avoidably_fragmented_files": s["avoidably_fragmented_files"],
    "e2frag_interleave_sets": len(report["interleave_sets"]),
    "e2frag_free_runs": free["free_extents"],
    "e2frag_free_bytes": free["free_blocks"] * bs,
    "e2defrag_last_run_exit_status": status,
}
ok = True
def one(name):
    got = samples.get(name, [])
    if len(got) != 1:
        print("FAIL: %s: %r" % (name, got), file=sys.stderr)
        return None
    return got[0]
for name, value in want.items():
    g = one(name)
    if g is None or g["labels"] != {"device": dev, "mountpoint": mnt} or \
       abs(g["value"] - value) > 1e-6 * max(1, abs(value)):
        print("FAIL: %s: %r, want %r labelled %s on %s" % (name, g, value, dev, mnt), file=sys.stderr)
        ok = False
outcomes = {x["labels"]["outcome"]: x["value"] for x in samples.get("e2defrag_last_run_outcome", [])}
if outcomes.get(outcome) != 1 or sum(outcomes.values()) != 1:
    print("FAIL: outcome %r, want %s" % (outcomes, outcome), file=sys.stderr); ok = False
written = one("e2defrag_last_run_bytes_written")
if written is None or (written["value"] > 0) != (outcome == "done"):
    print("FAIL: bytes written %r on a night %s" % (written, outcome), file=sys.stderr); ok = False
print("# %s: score %.1f, %d bytes written" % (outcome, s["score"], written["value"] if written else -1))
sys.exit(0 if ok else 1)
PY
}

# A night with no room to improve a file: skipped, the metrics written.
at=$(mounted_at)
settle
run_status "$OFFLINE" "$MNT" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 0 ] && grep -q "nothing worth a window" "$T/out" || fail "the no-room night was not skipped (exit $status)"
[ "$(mounted_at)" = "$at" ] || fail "the skipped night unmounted the filesystem"
[ -f "$m" ] || fail "a skipped night wrote no metrics: $(ls -A "$T/collector")"
# The exit status is that of the e2defrag that wrote the file: on a
# skipped night, e2defrag -n's (1: files that cannot reach their best).
run_status e2defrag -n "$LOOP" > /dev/null 2>&1
check_metrics skipped "$status"

# A metrics_dir that cannot take the file: exit 8, nothing unmounted.
cp "$CONF" "$T/good.conf"
echo "metrics_dir=$T/no-such-dir" >> "$CONF"
run_status "$OFFLINE" "$MNT" > "$T/out" 2>&1
[ "$status" -eq 8 ] && grep -q "metrics_dir $T/no-such-dir: not a directory" "$T/out" ||
	fail "a missing metrics_dir: exit $status: $(cat "$T/out")"
[ "$(mounted_at)" = "$at" ] || fail "a missing metrics_dir: the filesystem was unmounted"
cp "$T/good.conf" "$CONF"

# Room again: the window goes ahead, e2defrag writes the night's metrics.
rm "$MNT/filler" || fail "rm filler"
run_status "$OFFLINE" "$MNT" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -le 1 ] || fail "the night with work: exit $status"
grep -q "a run would bring" "$T/out" || fail "the night with work was skipped"
check_metrics done "$status"
[ "$(ls -A "$T/collector")" = "${m##*/}" ] || fail "left in the collector: $(ls -A "$T/collector")"
exit 0
