#!/bin/sh
# e2image dumps, as users attach them to bug reports.  A qcow2 dump
# (e2image -Q) gives e2frag and e2defrag -n (e2fragmap: tests/tui/map-dumps.sh) the figures of the
# image it was made from: the JSON reports are compared whole, the device
# name aside.  A normal-format dump (plain e2image) is named for what it
# is, with exit 8.  e2defrag refuses to write to either (exit 8) and leaves
# it byte-identical.  A cut or damaged qcow2 gets one clear line, exit 8.
. "$top_srcdir/tests/lib/common.sh"
command -v e2image >/dev/null || skip "e2image not installed"

img=$T/fs.img
e2fragimg -q -w streams -t ext4 -b 1024 --size 32M --streams 5 --chunk 4K \
	--total 12M "$img" || fail "e2fragimg"
e2image -Q "$img" "$T/dump.qcow2" 2>/dev/null || fail "e2image -Q"
e2image "$img" "$T/dump.e2i" 2>/dev/null || fail "e2image (normal format)"

# same_json A B WHAT: the reports agree once the device is taken out.
same_json() {
	python3 - "$1" "$2" "$3" <<'PY' || exit 1
import json, sys
a, b, what = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("device", "image")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
if strip(a) != strip(b):
    for k in sorted(set(a) | set(b)):
        if strip(a.get(k)) != strip(b.get(k)):
            print("FAIL: %s: %r differs" % (what, k), file=sys.stderr)
    sys.exit(1)
PY
}

run_status e2frag -J "$img" > "$T/img.json"
st_img=$status
run_status e2frag -J "$T/dump.qcow2" > "$T/q.json" 2> "$T/q.err"
[ "$status" -eq "$st_img" ] || fail "e2frag on the qcow2 dump: exit $status, the image's $st_img: $(cat "$T/q.err")"
same_json "$T/img.json" "$T/q.json" "e2frag -J, image and qcow2 dump"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["files"], "no files"' "$T/q.json" ||
	fail "the report lists no files"
note "e2frag -J: qcow2 dump and image agree ($(wc -c < "$T/q.json") bytes of JSON)"

# The text report: the same but for the device's name, and no command
# suggested on the dump (e2defrag would refuse it).
e2frag -N 0 "$img" | sed '1,2d;$d' > "$T/img.txt"
e2frag -N 0 "$T/dump.qcow2" > "$T/q-all.txt"
sed '1,2d;$d' "$T/q-all.txt" > "$T/q.txt"
cmp -s "$T/img.txt" "$T/q.txt" || fail "e2frag's text report differs: $(diff "$T/img.txt" "$T/q.txt" | head -5)"
if grep -q "defragmentation recommended" "$T/q-all.txt"; then
	tail -1 "$T/q-all.txt" | grep -q "run e2defrag on the filesystem this dump was made from" ||
		fail "the verdict on a dump: $(tail -1 "$T/q-all.txt")"
fi

run_status e2defrag -n -J "$img" > "$T/dn-img.json" 2>/dev/null
st_img=$status
run_status e2defrag -n -J "$T/dump.qcow2" > "$T/dn-q.json" 2> "$T/dn.err"
[ "$status" -eq "$st_img" ] || fail "e2defrag -n on the qcow2: exit $status, the image's $st_img: $(cat "$T/dn.err")"
same_json "$T/dn-img.json" "$T/dn-q.json" "e2defrag -n -J, image and qcow2 dump"
note "e2defrag -n -J: qcow2 dump and image agree"

# e2defrag refuses to write to the qcow2 dump, undo file or not.
sum=$(sha256sum < "$T/dump.qcow2")
for undo in "" "-z $T/undo"; do
	run_status e2defrag -f $undo "$T/dump.qcow2" > "$T/out" 2> "$T/err"
	[ "$status" -eq 8 ] || fail "e2defrag $undo on a qcow2 dump: exit $status, expected 8"
	grep -q "qcow2 dump, which e2defrag does not write to" "$T/err" ||
		fail "e2defrag $undo on a qcow2 dump said: $(cat "$T/err")"
	[ "$(sha256sum < "$T/dump.qcow2")" = "$sum" ] || fail "e2defrag changed the qcow2 dump"
done
note "e2defrag on the qcow2: $(cat "$T/err")"

# The normal-format dump: what it is, what it lacks, what would do; exit 8.
for prog in e2frag "e2defrag -n" e2defrag; do
	sum=$(sha256sum < "$T/dump.e2i")
	run_status $prog "$T/dump.e2i" > "$T/out" 2> "$T/err"
	[ "$status" -eq 8 ] || fail "$prog on a normal-format dump: exit $status, expected 8"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "$prog: expected one line, got: $(cat "$T/err")"
	grep -q "normal-format e2image dump.*no indirect.*e2image -r.*e2image -Q" "$T/err" ||
		fail "$prog on a normal-format dump said: $(cat "$T/err")"
	[ "$(sha256sum < "$T/dump.e2i")" = "$sum" ] || fail "$prog changed the normal-format dump"
done
note "normal-format dump: $(cat "$T/err")"

# Damaged qcow2 dumps: one line, exit 8, no crash.
# bad_qcow2 WHAT FILE
bad_qcow2() {
	run_status e2frag "$2" > "$T/out" 2> "$T/err"
	[ "$status" -eq 8 ] || fail "$1: exit $status, expected 8: $(cat "$T/err")"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "$1: expected one line, got: $(cat "$T/err")"
	grep -qi "qcow2" "$T/err" || fail "$1: message does not say qcow2: $(cat "$T/err")"
	note "$1: $(cat "$T/err")"
}
size=$(stat -c %s "$T/dump.qcow2")
head -c $((size - 700)) "$T/dump.qcow2" > "$T/cut.qcow2"
bad_qcow2 "a qcow2 dump cut inside its last cluster" "$T/cut.qcow2"
head -c 100 "$T/dump.qcow2" > "$T/header.qcow2"
bad_qcow2 "a qcow2 header alone" "$T/header.qcow2"
# The L1 table's offset (header bytes 40..47) pointed far past the end.
cp "$T/dump.qcow2" "$T/l1.qcow2"
printf '\001\000\000\000\000\000\000\000' | dd of="$T/l1.qcow2" bs=1 seek=40 conv=notrunc status=none
bad_qcow2 "a qcow2 dump whose L1 table is outside the file" "$T/l1.qcow2"
# Every L1 entry pointed past the end of the file.
python3 - "$T/dump.qcow2" "$T/l2.qcow2" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
l1_size, l1_off = struct.unpack_from(">IQ", d, 36)
for i in range(l1_size):
    struct.pack_into(">Q", d, l1_off + 8 * i, (1 << 63) | (len(d) * 4 & ~511))
open(sys.argv[2], "wb").write(d)
PY
bad_qcow2 "a qcow2 dump whose L2 tables are outside the file" "$T/l2.qcow2"
# Absurd cluster size (header bytes 20..23).
cp "$T/dump.qcow2" "$T/cb.qcow2"
printf '\000\000\000\077' | dd of="$T/cb.qcow2" bs=1 seek=20 conv=notrunc status=none
bad_qcow2 "a qcow2 dump with a 2^63-byte cluster" "$T/cb.qcow2"
exit 0
