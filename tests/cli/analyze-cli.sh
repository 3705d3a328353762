#!/bin/sh
# e2frag's command line: help, version, usage errors (exit 16), the exit
# status against --threshold, PATH restriction, --raw and -o, the read
# model (recomputed here from debugfs's block lists with the formulas of
# e2frag(8)), and free space (against e2freefrag).
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/lib/build_varied.sh"

expect_status 0 e2frag --help > "$T/help"
grep -q "^Usage: e2frag" "$T/help" || fail "--help prints no usage"
expect_status 0 e2frag -V > "$T/version"
grep -qE "^e2frag [0-9]" "$T/version" || fail "-V prints '$(cat "$T/version")'"
for args in "" "--bogus x.img" "--top lots x.img" "--threshold 101 x.img" \
	    "-o NOPE x.img" "--rpm 0 x.img" "--seek-ms 0.5 --track-seek-ms 2 x.img" \
	    "--disk-size 12Q x.img"; do
	# shellcheck disable=SC2086
	run_status e2frag $args > "$T/out" 2> "$T/err"
	[ "$status" -eq 16 ] || fail "'e2frag $args' exited $status, expected 16"
	[ -s "$T/err" ] && [ ! -s "$T/out" ] || fail "'e2frag $args': no message, or output on stdout"
done
# The message names the column that is wrong, or says there are too many.
run_status e2frag -o PATH,NOPE,SIZE x.img 2> "$T/err"
grep -q "unknown column 'NOPE'" "$T/err" || fail "-o NOPE: '$(cat "$T/err")'"
many=PATH
for i in $(seq 64); do many=$many,SIZE; done
run_status e2frag -o "$many" x.img 2> "$T/err"
[ "$status" -eq 16 ] && grep -q "at most 64 columns" "$T/err" ||
	fail "-o with 65 columns: exit $status, '$(cat "$T/err")'"
expect_status 0 e2frag --list-columns > "$T/cols"
grep -q "PATH" "$T/cols" || fail "--list-columns lists no PATH"

img=$T/v.img
build_varied "$img" ext2 1024
run_status e2frag --json "$img" > "$T/r.json"
[ "$status" -le 1 ] || fail "e2frag --json exited $status"

# Exit status follows the score against the threshold.
score=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["score"])' "$T/r.json")
below=$(python3 -c "print(max(0, $score - 0.01))")
above=$(python3 -c "print(min(100, $score + 0.01))")
expect_status 1 e2frag --threshold "$below" "$img" > "$T/text"
grep -q "defragmentation recommended; run: e2defrag $img" "$T/text" || fail "no verdict naming e2defrag"
expect_status 0 e2frag --threshold "$above" "$img" > "$T/text"
grep -q "nothing to do" "$T/text" || fail "no all-clear verdict"
for section in "^Files " "^Interleaving " "^Read time " "^Free space " "Worst files"; do
	grep -q "$section" "$T/text" || fail "text report lacks '$section'"
done

# PATH restriction: only what is under /many, and the summary over it.
run_status e2frag --json "$img" /many > "$T/many.json"
[ "$status" -le 1 ] || fail "e2frag IMG /many exited $status"
python3 - "$T/many.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
paths = [f["path"] for f in r["files"]]
if paths != ["/many"] or r["summary"]["files"] != 1:
    sys.exit("FAIL: /many selected %s" % paths)
PY
expect_status 8 e2frag "$img" /no/such/path > /dev/null 2> "$T/err"
grep -q "/no/such/path" "$T/err" || fail "missing PATH not named: $(cat "$T/err")"

# --raw: a header and one line per file, columns as asked.
run_status e2frag --raw -o INO,PIECES,PATH "$img" > "$T/raw"
files=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$T/r.json")
[ "$(wc -l < "$T/raw")" -eq $((files + 1)) ] || fail "--raw printed $(wc -l < "$T/raw") lines for $files files"
[ "$(head -1 "$T/raw")" = "INO PIECES PATH" ] || fail "--raw header is '$(head -1 "$T/raw")'"
grep -qE "^[0-9]+ [0-9]+ /frag$" "$T/raw" || fail "--raw has no line for /frag"

# The read model, recomputed from debugfs's runs (default disk: 7200 rpm,
# 120 MB/s, 8.5 ms average and 1 ms track seek, over 1e12 bytes).
$ORACLE layout "$img" > "$T/oracle.json"
python3 - "$T/r.json" "$T/oracle.json" <<'PY' || exit 1
import json, math, sys
r = json.load(open(sys.argv[1]))
oracle = {int(k): v for k, v in json.load(open(sys.argv[2])).items()}
bs = r["filesystem"]["block_size"]
disk = max(1e12, r["filesystem"]["blocks"] * bs)
rate, half, t2t = 120e6, 60 / 7200 / 2, 1e-3
full = t2t + (8.5e-3 - t2t) * math.sqrt(3)
def jump(gap):
    if gap == 0:
        return 0
    repos = t2t + (full - t2t) * math.sqrt(min(abs(gap), disk) / disk) + half
    return min(gap / rate, repos) if gap > 0 else repos
checked = 0
for f in r["files"]:
    runs = oracle[f["ino"]]["runs"]
    # ETB blocks are not read; everything in the runs is.
    t = sum(n for _, n in runs) * bs / rate
    for (p0, n0), (p1, _) in zip(runs, runs[1:]):
        t += jump((p1 - (p0 + n0)) * bs)
    if abs(t - f["read_seconds"]) > 2e-6:
        sys.exit("FAIL: %s reads in %.6f s, the model says %.6f" % (f["path"], f["read_seconds"], t))
    if f["pieces"] == 1 and f["read_seconds"] != f["ideal_read_seconds"]:
        sys.exit("FAIL: contiguous %s: read %.6f != ideal %.6f" % (f["path"], f["read_seconds"], f["ideal_read_seconds"]))
    checked += 1
print("# read time of %d files matches the model" % checked)
PY

# Free space against e2freefrag: totals and the histogram.
e2freefrag "$img" > "$T/ff" 2>&1 || fail "e2freefrag failed"
python3 - "$T/r.json" "$T/ff" <<'PY' || exit 1
import json, re, sys
r = json.load(open(sys.argv[1]))["free_space"]
ff = open(sys.argv[2]).read()
free = int(re.search(r"^Free blocks: (\d+)", ff, re.M).group(1))
bs = int(re.search(r"^Blocksize: (\d+)", ff, re.M).group(1))
largest_kb = int(re.search(r"^Max. free extent: (\d+) KB", ff, re.M).group(1))
if r["free_blocks"] != free or r["largest_free_extent"] * bs // 1024 != largest_kb:
    sys.exit("FAIL: free %d blocks, largest %d; e2freefrag: %d, %d KB" %
             (r["free_blocks"], r["largest_free_extent"], free, largest_kb))
unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
hist = {}
for m in re.finditer(r"^\s*(\d+)([KMGT])\.\.\.\s*\d+[KMGT]-\s*:\s*(\d+)\s+(\d+)", ff, re.M):
    hist[int(m.group(1)) * unit[m.group(2)] // bs] = (int(m.group(3)), int(m.group(4)))
ours = {b["min_blocks"]: (b["count"], b["blocks"]) for b in r["histogram"]}
if ours != hist:
    sys.exit("FAIL: histogram %s, e2freefrag %s" % (ours, hist))
print("# free space: %d blocks in %d extents, histogram matches e2freefrag" % (free, r["free_extents"]))
PY

# PATH and hard links: a directory holds a file by any of its names, and
# the report shows it under the name PATH reached it by.  /sub/hard.bin
# and /sub/d/deep.bin are second names of /a.bin and /other/x, the names
# found first.  What /sub holds is debugfs's listing, walked down.
mkfs_img "$T/links.img" ext2 1024 16M
yes 0123456789abcdef | head -c 20000 > "$T/data"
cat > "$T/c" <<CMDS
mkdir /other
mkdir /sub
mkdir /sub/d
write $T/data /a.bin
write $T/data /other/x
write $T/data /sub/own.bin
write $T/data /sub/d/own2.bin
ln /a.bin /sub/hard.bin
sif /a.bin links_count 2
ln /other/x /sub/d/deep.bin
sif /other/x links_count 2
CMDS
dfs "$T/links.img" "$T/c"
fsck_clean "$T/links.img"
run_status e2frag --json "$T/links.img" > "$T/links-all.json"
[ "$status" -le 1 ] || fail "e2frag --json links.img exited $status"
run_status e2frag --json "$T/links.img" /sub > "$T/links-sub.json"
[ "$status" -le 1 ] || fail "e2frag IMG /sub exited $status"
run_status e2frag --json "$T/links.img" /sub/hard.bin > "$T/links-file.json"
[ "$status" -le 1 ] || fail "e2frag IMG /sub/hard.bin exited $status"
run_status e2frag --json "$T/links.img" /a.bin /sub > "$T/links-both.json"
[ "$status" -le 1 ] || fail "e2frag IMG /a.bin /sub exited $status"
python3 - "$T/links.img" "$T" <<'PY' || exit 1
import json, subprocess, sys
img, t = sys.argv[1], sys.argv[2]
def ls(path):
    out = subprocess.run(["debugfs", "-R", "ls -p " + path, img],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split("/")
        if len(f) >= 7 and f[5] not in (".", ".."):
            yield int(f[1]), int(f[2], 8), f[5]
def ino_of(path):
    out = subprocess.run(["debugfs", "-R", "stat " + path, img],
                         capture_output=True, text=True).stdout
    return int(out.split()[1])
# Every inode under /sub, with the names it has there.
want = {ino_of("/sub"): {"/sub"}}
todo = ["/sub"]
while todo:
    d = todo.pop()
    for ino, mode, name in ls(d):
        want.setdefault(ino, set()).add(d + "/" + name)
        if mode & 0o170000 == 0o040000:
            todo.append(d + "/" + name)
def files(name):
    r = json.load(open("%s/%s.json" % (t, name)))
    return {f["ino"]: f["path"] for f in r["files"]}, r["summary"]["files"]
everything, _ = files("links-all")
outside = [i for i in want if everything.get(i) not in want[i]]
if len(outside) != 2:
    sys.exit("FAIL: the image should name two files under /sub first "
             "elsewhere, names %s" % {i: everything.get(i) for i in want})
got, n = files("links-sub")
if set(got) != set(want) or n != len(want):
    sys.exit("FAIL: /sub selected %s (%d files), debugfs lists %s" %
             (sorted(got.values()), n, sorted(p for s in want.values() for p in s)))
for i, p in got.items():
    if p not in want[i]:
        sys.exit("FAIL: inode %d shown as %s under /sub, debugfs: %s" % (i, p, want[i]))
hard = ino_of("/sub/hard.bin")
got, n = files("links-file")
if got != {hard: "/sub/hard.bin"} or n != 1:
    sys.exit("FAIL: /sub/hard.bin selected %s" % got)
# Selected first by /a.bin, the file keeps that name.
got, n = files("links-both")
if set(got) != set(want) | {hard} or got[hard] != "/a.bin":
    sys.exit("FAIL: /a.bin /sub selected %s" % sorted(got.values()))
print("# /sub: %d files, hard links by their names there" % len(want))
PY
