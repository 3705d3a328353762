#!/bin/sh
# The read model's options (--rpm, --mbps, --seek-ms, --track-seek-ms,
# --disk-size), one table for e2frag and e2defrag: at the bounds e2frag(8)
# states (read from the page here), both programs take the edges and
# refuse what lies past them alike (exit 16, one message naming the option
# and the bounds); and the values reach the figures: e2frag -J's read
# times are those the formulas of e2frag(8) give with the options'
# values (recomputed from debugfs's block lists), and e2defrag -n -J's
# read times of the files it plans for are e2frag's under the same options.
. "$top_srcdir/tests/lib/common.sh"

img=$T/aged.img
e2fragimg -q -w aged -t ext2 -s 48M "$img" || fail "e2fragimg -w aged"

# The bounds, as the page states them: NAME LOW HIGH, one option a line.
page=$top_builddir/man/e2frag.8
[ -f "$page" ] || fail "no $page"
python3 - "$page" > "$T/bounds" <<'PY' || exit 1
import re, sys
text = open(sys.argv[1]).read().replace("\\-", "-")
block = text[text.index("The read model's options"):text.index("End of the read model's options")]
for item in block.split(".TP")[1:]:
    name = re.search(r"^\.BI --([a-z-]+) ", item, re.M).group(1)
    m = re.search(r"from (\S+) to (\S+?)[ \n,(]", item)
    if not m:
        sys.exit("FAIL: e2frag(8) gives --%s no bounds ('from A to B')" % name)
    print(name, m.group(1), m.group(2))
PY
[ "$(wc -l < "$T/bounds")" -eq 5 ] || fail "e2frag(8) states bounds for $(wc -l < "$T/bounds") options, not 5"

# The cases: WANT (in: taken, out: refused) and the options, one a line.
# The seeks are tried with the other seek out of their way: the average
# may not be shorter than the track-to-track seek.
python3 - "$T/bounds" > "$T/cases" <<'PY' || exit 1
import sys
P = 1 << 50
def size(s):
    return int(s[:-1]) * P if s.endswith("P") else int(s)
bounds = {}
for line in open(sys.argv[1]):
    name, lo, hi = line.split()
    bounds[name] = (lo, hi)
for name, (lo, hi) in bounds.items():
    other = {"seek-ms": "--track-seek-ms 0",
             "track-seek-ms": "--seek-ms " + bounds["seek-ms"][1]}.get(name, "")
    if name == "disk-size":
        taken = [lo, hi, str(size(hi)), "2T"]
        refused = [str(size(lo) - 1), str(size(hi) + 1), "%dP" % (size(hi) // P + 1), "2X", "-1"]
    else:
        l, h = float(lo), float(hi)
        taken = [lo, hi, repr(l + (h - l) / 3)]
        refused = [repr(l - max(abs(l) * 1e-3, 1e-9)), repr(h + max(h * 1e-9, 1)), "x", "nan"]
    for v in taken:
        print("in %s --%s %s" % (other, name, v))
    for v in refused:
        print("out %s --%s %s %s" % (name, name, v, other))
# The one rule between two options, at its edge.
print("in --seek-ms 2 --track-seek-ms 2")
print("out2 --seek-ms 1.999 --track-seek-ms 2")
PY

n=0
while read -r want rest; do
	case $want in
	out) name=${rest%% *}; args=${rest#* } ;;
	*) name=; args=$rest ;;
	esac
	# shellcheck disable=SC2086
	run_status e2frag $args "$img" > "$T/f.out" 2> "$T/f.err"
	fstatus=$status
	# shellcheck disable=SC2086
	run_status e2defrag -n $args "$img" > "$T/d.out" 2> "$T/d.err"
	dstatus=$status
	case $want in
	in)
		[ "$fstatus" -le 1 ] && [ "$dstatus" -le 1 ] ||
			fail "'$args': e2frag exited $fstatus, e2defrag -n $dstatus: $(cat "$T/f.err" "$T/d.err")"
		[ ! -s "$T/f.err" ] && [ ! -s "$T/d.err" ] ||
			fail "'$args': messages: $(cat "$T/f.err" "$T/d.err")"
		;;
	*)
		[ "$fstatus" -eq 16 ] && [ "$dstatus" -eq 16 ] ||
			fail "'$args': e2frag exited $fstatus, e2defrag -n $dstatus, expected 16 from both"
		[ ! -s "$T/f.out" ] && [ ! -s "$T/d.out" ] || fail "'$args': output on stdout"
		[ "$(wc -l < "$T/f.err")" -eq 1 ] || fail "'$args': e2frag said: $(cat "$T/f.err")"
		sed 's/^e2frag: //' "$T/f.err" > "$T/f.msg"
		sed 's/^e2defrag: //' "$T/d.err" > "$T/d.msg"
		cmp -s "$T/f.msg" "$T/d.msg" ||
			fail "'$args': e2frag says '$(cat "$T/f.err")', e2defrag '$(cat "$T/d.err")'"
		if [ -n "$name" ]; then
			bounds=$(grep "^$name " "$T/bounds" | cut -d' ' -f2-)
			grep -qF -- "--$name wants" "$T/f.msg" && grep -qF -- "from ${bounds% *} to ${bounds#* }" "$T/f.msg" ||
				fail "'$args': the message names not the option and its bounds (${bounds}): $(cat "$T/f.err")"
		else
			grep -qF -- "--seek-ms" "$T/f.msg" && grep -qF -- "--track-seek-ms" "$T/f.msg" ||
				fail "'$args': the message names not both seeks: $(cat "$T/f.err")"
		fi
		;;
	esac
	n=$((n + 1))
done < "$T/cases"
note "$n command lines: e2frag and e2defrag -n take and refuse the same values, with the same words"

# The values reach the figures.  Three disks: the default, the default
# with the rate doubled, and every option changed.
$ORACLE layout "$img" > "$T/oracle.json"
set -- "" "--mbps 240" "--rpm 5400 --mbps 240 --seek-ms 12 --track-seek-ms 2 --disk-size 2T"
i=0
for args in "$@"; do
	# shellcheck disable=SC2086
	run_status e2frag -J $args "$img" > "$T/frag$i.json"
	[ "$status" -le 1 ] || fail "e2frag -J $args exited $status"
	# shellcheck disable=SC2086
	run_status e2defrag -n -J $args "$img" > "$T/plan$i.json"
	[ "$status" -le 1 ] || fail "e2defrag -n -J $args exited $status"
	i=$((i + 1))
done
python3 - "$T" "$@" <<'PY' || exit 1
import json, math, sys
d = sys.argv[1]
oracle = {int(k): v for k, v in json.load(open(d + "/oracle.json")).items()}

# e2frag(8), READ MODEL, with the defaults it states.
def model(args):
    w = args.split()
    o = dict(zip(w[::2], w[1::2]))
    unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
    size = o.get("--disk-size")
    return {"rate": float(o.get("--mbps", 120)) * 1e6,
            "rotation": 60 / float(o.get("--rpm", 7200)),
            "avg": float(o.get("--seek-ms", 8.5)) / 1e3,
            "t2t": float(o.get("--track-seek-ms", 1)) / 1e3,
            "disk": int(size[:-1]) * unit[size[-1]] if size else 1e12}

def read_seconds(runs, bs, m):
    t2t, rate = m["t2t"], m["rate"]
    full = t2t + (m["avg"] - t2t) * math.sqrt(3)
    def jump(gap):
        if gap == 0:
            return 0
        repos = (t2t + (full - t2t) * math.sqrt(min(abs(gap), m["disk"]) / m["disk"])
                 + m["rotation"] / 2)
        return min(gap / rate, repos) if gap > 0 else repos
    t = sum(n for _, n in runs) * bs / rate
    for (p0, n0), (p1, _) in zip(runs, runs[1:]):
        t += jump((p1 - (p0 + n0)) * bs)
    return t

totals = []
for i, args in enumerate(sys.argv[2:]):
    r = json.load(open("%s/frag%d.json" % (d, i)))
    plan = json.load(open("%s/plan%d.json" % (d, i)))
    bs = r["filesystem"]["block_size"]
    m = model(args)
    m["disk"] = max(m["disk"], r["filesystem"]["blocks"] * bs)
    ours = {}
    for f in r["files"]:
        want = read_seconds(oracle[f["ino"]]["runs"], bs, m)
        if abs(want - f["read_seconds"]) > 2e-6:
            sys.exit("FAIL: e2frag -J %s: %s reads in %.6f s, e2frag(8)'s model says %.6f"
                     % (args, f["path"], f["read_seconds"], want))
        ours[f["ino"]] = f["read_seconds"]
    total = r["summary"]["modeled_read_seconds"]
    if abs(total - sum(ours.values())) > 1e-6 * (len(ours) + 1):
        sys.exit("FAIL: e2frag -J %s: %.6f s in all, the files' sum %.6f"
                 % (args, total, sum(ours.values())))
    totals.append(total)
    planned = [f for f in plan["files"] if f["pieces_before"] > 1]
    if not planned:
        sys.exit("FAIL: e2defrag -n -J %s plans for no fragmented file" % args)
    for f in plan["files"]:
        if abs(f["read_seconds_before"] - ours[f["ino"]]) > 2e-6:
            sys.exit("FAIL: %s: e2defrag -n -J %s reads it in %.6f s, e2frag -J in %.6f"
                     % (f["path"], args, f["read_seconds_before"], ours[f["ino"]]))
    print("# %s: %d files read as the model says, e2defrag's %d as e2frag's; %.6f s in all"
          % (args or "defaults", len(ours), len(plan["files"]), total))
# Doubling the rate halves the transfer and shortens the short jumps; seeks stay.
if not totals[1] < totals[0] / 1.2:
    sys.exit("FAIL: --mbps 240 reads in %.6f s, 120 MB/s in %.6f" % (totals[1], totals[0]))
PY
