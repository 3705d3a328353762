#!/bin/sh
# e2defrag(8)'s JSON section is the one list of e2defrag --json's members
# (defrag/json.c points to it): every member it lists is written, and
# every member written is listed, for a dry run and for a real run (the
# result object), on an e2fragimg disk with files to move.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }

img=$T/a.img
e2fragimg -q -w mixed -t ext4 -b 1024 -S 2 "$img" > /dev/null 2>&1 || fail "e2fragimg"
e2defrag -n --json "$img" > "$T/plan.json" 2>/dev/null
[ $? -le 1 ] || fail "e2defrag -n --json"
e2defrag --json "$img" > "$T/run.json" 2>/dev/null
[ $? -le 1 ] || fail "e2defrag --json"

python3 - "$top_srcdir/man/e2defrag.8.in" "$T/plan.json" "$T/run.json" <<'PY' || fail "the JSON section and the output disagree"
import json, re, sys

man = open(sys.argv[1]).read()
block = man[man.index(".SH JSON"):]
block = block[block.index(".nf"):block.index(".fi")]
# Each object of the section: "name": ... { "member", ... }.
doc = {}
for name, body in re.findall(r'"(\w+)": (?:null \| |\[ )?\{([^{}]*)\}', block):
    doc[name] = set(re.findall(r'"(\w+)"', body))
top = set(re.findall(r'^\s*\{? ?"(\w+)":', block, re.M))
bad = []
for path in sys.argv[2:]:
    j = json.load(open(path))
    if set(j) != top:
        bad.append("%s: top level %s, documented %s" % (path, sorted(set(j)), sorted(top)))
    for name in ("plan", "files", "skipped", "result"):
        v = j[name]
        if isinstance(v, list):
            if not v:
                continue
            v = v[0]
        if v is None:
            continue
        if set(v) != doc.get(name, set()):
            bad.append("%s: %s: written but not documented %s, documented but not written %s"
                       % (path, name, sorted(set(v) - doc.get(name, set())),
                          sorted(doc.get(name, set()) - set(v))))
if json.load(open(sys.argv[3]))["result"] is None:
    bad.append("the real run has no result object")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "ok: e2defrag(8)'s JSON section lists exactly the members written"
exit 0
