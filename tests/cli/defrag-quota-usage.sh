#!/bin/sh
# e2defrag on a filesystem whose quota files' usage is already wrong (what
# e2fsck -fn reports as "Usage inconsistent" or "Missing quota entry"): a
# move would carry the error along and e2fsck would blame the run, so the
# filesystem is refused whole, exit 8, byte for byte unchanged, the line
# naming the quota file, the id and both figures.  Each case's quota file
# is edited here byte by byte (debugfs dump and bmap find the entry and
# its block; debugfs has no command that sets usage), and e2fsck -fn says
# it is damaged the way the case names:
#   - a user's space off by 1 KiB;
#   - a group's inode count off by one;
#   - a project's entry gone (zeroed, a free slot);
# and the image as e2fsck left it is accepted (e2defrag -n, exit 0), as
# is one whose group quota file has a broken magic (e2fsck -fn is silent
# on it and e2fsck -fy leaves it: no usage to compare).
. "$top_srcdir/tests/cli/defrag-lib.sh"

make_image "$T/base.img" ext4 1024 8M -I 256 -O quota,project \
	-E quotatype=usrquota:grpquota:prjquota,root_owner=0:0
gen "$T/a" 20480 1
gen "$T/b" 5120 2
cat > "$T/c" <<EOF
write $T/a /a
write $T/b /b
sif /a uid 1001
sif /a gid 2001
sif /a projid 5
sif /b uid 1002
sif /b gid 2001
sif /b projid 6
EOF
dbg "$T/base.img" "$T/c"
# debugfs leaves the quota files as they were: e2fsck brings them up.
e2fsck -fy "$T/base.img" > /dev/null 2>&1
check_clean "$T/base.img"
expect_rc 0 e2defrag -n "$T/base.img"
echo "ok clean image accepted"

# patch IMG QINO ID FIELD VALUE: set FIELD (space, inodes, zero: the whole
# entry, magic) of ID's entry in quota file QINO, in place.
patch() {
	debugfs -R "dump <$2> $T/qfile" "$1" > /dev/null 2>&1 || fail "debugfs dump <$2>"
	python3 - "$1" "$2" "$3" "$4" "$5" "$T/qfile" <<'PY' || fail "patch $*"
import struct, subprocess, sys
img, qino, qid, field, value, qfile = sys.argv[1:]
qid, value = int(qid), int(value)
data = bytearray(open(qfile, "rb").read())
bs = int(subprocess.run(["dumpe2fs", "-h", img], capture_output=True, text=True)
         .stdout.split("Block size:")[1].split()[0])
assert struct.unpack_from("<I", data, 4)[0] == 1, "not quota format v2r1"
if field == "magic":
    at = 0
    struct.pack_into("<I", data, 0, value)
else:
    # Data blocks: 16-byte header, 72-byte entries (v2r1_disk_dqblk).
    for at in (q * 1024 + 16 + i * 72 for q in range(1, len(data) // 1024)
               for i in range(14)):
        e = data[at:at + 72]
        if any(e) and struct.unpack_from("<I", e, 0)[0] == qid:
            break
    else:
        sys.exit("no entry for id %d" % qid)
    if field == "space":
        struct.pack_into("<Q", data, at + 48, value)
    elif field == "inodes":
        struct.pack_into("<Q", data, at + 24, value)
    else:
        data[at:at + 72] = bytes(72)
lblk = at // bs
out = subprocess.run(["debugfs", "-R", "bmap <%s> %d" % (qino, lblk), img],
                     capture_output=True, text=True).stdout.split()
pblk = int(out[-1])
assert pblk > 0
with open(img, "r+b") as f:
    f.seek(pblk * bs)
    f.write(data[lblk * bs:(lblk + 1) * bs])
PY
}

# field IMG TYPE ID COLUMN: a figure of ID's line in debugfs lq TYPE.
field() {
	debugfs -R "lq $2" "$1" 2>/dev/null | awk -v id="$3" -v c="$4" '$1 == id { print $c }'
}

gquota=$(dumpe2fs -h "$T/base.img" 2>/dev/null | sed -n 's/^Group quota inode: *//p')
pquota=$(dumpe2fs -h "$T/base.img" 2>/dev/null | sed -n 's/^Project quota inode: *//p')
[ -n "$gquota" ] && [ -n "$pquota" ] || fail "no group or project quota inode"

img=$T/space.img
cp "$T/base.img" "$img"
space=$(field "$img" user 1001 2)
[ "$space" -gt 0 ] || fail "user 1001 has no usage to begin with"
patch "$img" 3 1001 space $((space + 1024))
damaged_exactly space \
	"the user quota file (inode 3) counts $((space + 1024)) bytes for id 1001, its files hold $space" \
	"$img" "Usage inconsistent for ID 1001"

img=$T/inodes.img
cp "$T/base.img" "$img"
inodes=$(field "$img" group 2001 5)
[ "$inodes" -eq 2 ] || fail "group 2001 has $inodes inodes, want 2"
patch "$img" "$gquota" 2001 inodes 3
damaged_exactly inodes \
	"the group quota file (inode $gquota) counts 3 inodes for id 2001, it has 2" \
	"$img" "Usage inconsistent for ID 2001"

img=$T/missing.img
cp "$T/base.img" "$img"
space=$(field "$img" project 6 2)
patch "$img" "$pquota" 6 zero 0
damaged_exactly missing \
	"the project quota file (inode $pquota) has no entry for id 6, whose files hold $space bytes" \
	"$img" "Missing quota entry ID 6"

img=$T/magic.img
cp "$T/base.img" "$img"
patch "$img" "$gquota" 0 magic 305419896
# e2fsck -fn says nothing of it (it cannot open the file to compare) and
# e2fsck -fy leaves it: not refused (a file whose block count would
# change is not moved, defrag-quota.sh's writer case).
debugfs -R "dump <$gquota> $T/qfile" "$img" > /dev/null 2>&1
[ "$(od -An -tx4 -N4 "$T/qfile" | tr -d ' ')" = 12345678 ] || fail "magic: the patch did not take"
check_clean "$img"
expect_rc 0 e2defrag -n "$img"
echo "ok magic: accepted"
exit 0
