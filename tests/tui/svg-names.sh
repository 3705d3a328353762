#!/bin/sh
# e2frag --svg names a file as the text and JSON reports do: made
# printable once (a control byte as \x01), then escaped for XML.  The key
# of the interleave sets made its paths printable twice (\x01 became
# \x5cx01).  The file is renamed with debugfs (ln, unlink) to a name with
# XML's special characters and a control byte; the SVG must parse and
# give that name back.
set -u
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "$TMPDIR/e2frag-svgnames.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

img=$tmp/i.img
e2fragimg -q --workload streams --streams 2 --total 4M --type ext2 --block-size 1024 "$img" ||
	fail "e2fragimg"
name=$(printf 'a&<b>\001.ts')
debugfs -w -R "ln /rec00.ts $name" "$img" > /dev/null 2>&1
debugfs -w -R "unlink /rec00.ts" "$img" > /dev/null 2>&1
debugfs -R "ls -p /" "$img" 2> /dev/null | grep -q "/$name/" || fail "debugfs did not rename /rec00.ts"
e2fsck -fn "$img" > /dev/null 2>&1 || fail "the renamed image is not clean"
e2frag --svg "$tmp/map.svg" "$img" > /dev/null 2>&1 || [ $? -eq 1 ] || fail "e2frag --svg"
python3 - "$tmp/map.svg" <<'PY' || fail "the SVG does not name /a&<b>\\x01.ts once made printable"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
text = "".join(root.itertext())
want = "a&<b>\\x01.ts"
if want not in text or "\\x5c" in text:
    print("in the SVG's text:", [l for l in text.splitlines() if "a&" in l][:4])
    sys.exit(1)
PY
exit 0
