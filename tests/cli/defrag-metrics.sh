#!/bin/sh
# e2defrag --metrics FILE: the outcome of every kind of run, its exit
# status, the bytes it wrote (as its own -J result says them, a separate
# report of the same run) and the filesystem's figures after it (as e2frag
# -J reads the image afterwards, a separate program run); in the
# exposition format (tests/lib/prom_format.py; promtool where installed).
# Outcomes: -n with work "planned", -n with none "skipped", a run "done",
# a second run "nothing_to_do", a refusal (a qcow2 dump) "refused" with
# exit 8 and no figures; a run whose --svg-after cannot be written exits 8
# but is "done" (and -n "planned"): the outcome is the run's.
. "$top_srcdir/tests/lib/common.sh"
prom=$top_srcdir/tests/lib/prom_format.py

img=$T/fs.img
e2fragimg -q -w streams -t ext4 -b 1024 --size 32M --streams 4 --chunk 4K \
	--total 8M "$img" || fail "e2fragimg"
cp "$img" "$T/copy.img" || fail "cp"
m=$T/e2defrag.prom

# check OUTCOME STATUS BYTES [--no-figures]: $m says so, in the format,
# and has e2frag -J's figures for $img as it is now (or none).
check() {
	python3 "$prom" "$m" > "$T/samples.json" || fail "$1: not the exposition format"
	if command -v promtool > /dev/null; then
		promtool check metrics < "$m" > "$T/promtool" 2>&1 || fail "$1: promtool: $(cat "$T/promtool")"
	fi
	e2frag -J "$img" > "$T/e2frag.json" 2> /dev/null
	python3 - "$T/samples.json" "$T/e2frag.json" "$@" <<'PY' || fail "$1: the metrics are wrong"
import json, sys
samples, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
outcome, status, written = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
figures = len(sys.argv) < 7
s, free = report["summary"], report["free_space"]
bs = report["filesystem"]["block_size"]
want = {"e2defrag_last_run_exit_status": status, "e2defrag_last_run_bytes_written": written}
if figures:
    want.update({
        "e2frag_score": s["score"], "e2frag_read_efficiency": s["read_efficiency"],
        "e2frag_avoidably_fragmented_files": s["avoidably_fragmented_files"],
        "e2frag_interleave_sets": len(report["interleave_sets"]),
        "e2frag_free_runs": free["free_extents"],
        "e2frag_largest_free_run_bytes": free["largest_free_extent"] * bs,
    })
elif any(n.startswith("e2frag_") for n in samples):
    print("FAIL: figures of a filesystem never read", file=sys.stderr); sys.exit(1)
ok = True
for name, value in want.items():
    got = samples.get(name, [])
    if len(got) != 1 or abs(got[0]["value"] - value) > 1e-6 * max(1, abs(value)):
        print("FAIL: %s: %r, want %r" % (name, got, value), file=sys.stderr); ok = False
outcomes = {x["labels"]["outcome"]: x["value"] for x in samples["e2defrag_last_run_outcome"]}
if outcomes.get(outcome) != 1 or sum(outcomes.values()) != 1:
    print("FAIL: outcome %r, want %s" % (outcomes, outcome), file=sys.stderr); ok = False
if samples["e2defrag_last_run_duration_seconds"][0]["value"] <= 0:
    print("FAIL: no duration", file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
	note "$1: exit $2, $3 bytes written"
}

run_status e2defrag -n --metrics "$m" "$img" > /dev/null 2>&1
check planned "$status" 0
grep -q '^e2frag_score{device="'"$img"'"} ' "$m" || fail "-n: labels: $(grep '^e2frag_score' "$m")"

run_status e2defrag -f -J --metrics "$m" --metrics-mountpoint /srv/rec "$img" > "$T/run.json" 2> /dev/null
written=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["bytes_written"])' "$T/run.json")
[ "$written" -gt 0 ] || fail "the run wrote nothing"
check done "$status" "$written"
grep -q '^e2frag_score{device="'"$img"'",mountpoint="/srv/rec"} ' "$m" ||
	fail "--metrics-mountpoint: $(grep '^e2frag_score' "$m")"
fsck_clean "$img"

run_status e2defrag -f --metrics "$m" "$img" > /dev/null 2>&1
check nothing_to_do "$status" 0
run_status e2defrag -n --metrics "$m" "$img" > /dev/null 2>&1
check skipped "$status" 0

e2image -Q "$img" "$T/dump.qcow2" 2> /dev/null || fail "e2image -Q"
run_status e2defrag -f --metrics "$m" "$T/dump.qcow2" > /dev/null 2>&1
[ "$status" -eq 8 ] || fail "a qcow2 dump: exit $status"
check refused 8 0 --no-figures

# The picture after cannot be written (no such directory): exit 8, the
# run's outcome.
img=$T/copy.img
run_status e2defrag -n --svg-after "$T/no/such/dir/after.svg" --metrics "$m" "$img" > /dev/null 2>&1
[ "$status" -eq 8 ] || fail "-n, no picture: exit $status"
check planned 8 0
run_status e2defrag -f -J --svg-after "$T/no/such/dir/after.svg" --metrics "$m" "$img" > "$T/run.json" 2> "$T/err"
grep -q 'after.svg' "$T/err" || fail "no word of the picture on stderr: $(cat "$T/err")"
[ "$status" -eq 8 ] || fail "a run, no picture: exit $status"
written=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["bytes_written"])' "$T/run.json")
[ "$written" -gt 0 ] || fail "the run without its picture wrote nothing"
check done 8 "$written"
fsck_clean "$img"
exit 0
