#!/bin/sh
# What e2defrag never moves, it names with the reason (-v) and leaves
# exactly where it is: inline-data files, the journal, the resize inode,
# the bad blocks inode, files sharing blocks with another inode, and on a
# quota filesystem extent files whose block count would change.
. "$top_srcdir/tests/cli/defrag-lib.sh"

# Inline data, named by path; the journal and the resize inode.
make_image "$T/inline.img" ext4 4096 32M -O inline_data
printf 'hello\n' > "$T/small"
printf 'write %s /tiny\nmkdir /d\n' "$T/small" > "$T/c"
dbg "$T/inline.img" "$T/c"
check_clean "$T/inline.img"
expect_rc 0 e2defrag -v "$T/inline.img" /tiny
grep -q "/tiny: skipped, inline data" "$T/out" || { cat "$T/out"; fail "inline file not named"; }
expect_rc 0 e2defrag -v "$T/inline.img"
grep -q "journal, inode 8>: skipped, reserved inode" "$T/out" || { cat "$T/out"; fail "journal not named"; }
grep -q "resize inode, inode 7>: skipped, reserved inode" "$T/out" || fail "resize inode not named"

# A bad block: the bad blocks inode owns it and is named.
echo 5000 > "$T/bad"
make_image "$T/bad.img" ext2 1024 16M -l "$T/bad"
expect_rc 0 e2defrag -v "$T/bad.img"
grep -q "bad blocks inode, inode 1>: skipped" "$T/out" || { cat "$T/out"; fail "bad blocks inode not named"; }

# Two files sharing a block (a corrupt filesystem whose superblock still
# says clean): the fragmented one is skipped, neither moves.
make_image "$T/shared.img" ext2 1024 16M
gen "$T/f" $((40 * 1024)) 51
fragment "$T/shared.img" "$T/f" /frag 2048
printf 'write %s /other\n' "$T/small" > "$T/c"
dbg "$T/shared.img" "$T/c"
blk=$($ORACLE blocks "$T/shared.img" /frag | head -1)
debugfs -w -R "sif /other block[0] $blk" "$T/shared.img" >/dev/null 2>&1
$ORACLE blocks "$T/shared.img" /frag > "$T/frag.before"
$ORACLE blocks "$T/shared.img" /other > "$T/other.before"
[ "$(pieces "$T/shared.img" /frag)" -gt 5 ] || fail "/frag should be in pieces"
e2defrag -v "$T/shared.img" > "$T/out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$T/out"; fail "shared: exit $rc, expected 1 (a selected file skipped)"; }
grep -q "/frag: shares blocks with another inode" "$T/out" || { cat "$T/out"; fail "sharing not named"; }
$ORACLE blocks "$T/shared.img" /frag | cmp -s - "$T/frag.before" || fail "/frag moved"
$ORACLE blocks "$T/shared.img" /other | cmp -s - "$T/other.before" || fail "/other moved"

# An inode whose checksum does not match (metadata_csum; the superblock
# still says clean): its file is skipped as corrupt, like one whose extent
# blocks do not match, and the others are moved.
small_image "$T/csum.img" ext4
set -- $(debugfs -R "imap /frag" "$T/csum.img" 2>/dev/null |
	 sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
[ $# -eq 2 ] || fail "csum: no inode location for /frag"
# One byte of i_mtime (offset 16): the checksum no longer matches.
printf '\001' | dd of="$T/csum.img" bs=1 seek=$(($1 * 4096 + $2 + 16)) conv=notrunc 2>/dev/null
e2fsck -fn "$T/csum.img" 2>&1 | grep -q "checksum does not match inode" ||
	fail "csum: the inode checksum was not broken"
$ORACLE blocks "$T/csum.img" /frag > "$T/frag.before"
e2defrag -v "$T/csum.img" > "$T/out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$T/out"; fail "csum: exit $rc, expected 1 (a selected file skipped)"; }
grep -q "/frag: .*corrupt" "$T/out" || { cat "$T/out"; fail "csum: /frag not named as corrupt"; }
$ORACLE blocks "$T/csum.img" /frag | cmp -s - "$T/frag.before" || fail "csum: /frag moved"
[ "$(pieces "$T/csum.img" /rec/a)" -eq 1 ] || fail "csum: /rec/a not moved"

# Quota: debugfs does not keep the quota files up to date, e2fsck -fy does.
make_image "$T/quota.img" ext4 1024 64M -O quota
printf 'mkdir /rec\n' > "$T/c"
dbg "$T/quota.img" "$T/c"
interleave "$T/quota.img" /rec 8192 100 a b c d e f g h
e2fsck -fy "$T/quota.img" > /dev/null 2>&1
check_clean "$T/quota.img"
snapshot "$T/quota.img" "$T/before.json"
e2defrag -v "$T/quota.img" > "$T/out" 2>&1
grep -q "quota feature: moving would change its block count" "$T/out" ||
	{ cat "$T/out"; fail "quota skip not named"; }
check_clean "$T/quota.img"
snapshot "$T/quota.img" "$T/after.json"
same_snapshot "$T/before.json" "$T/after.json"
exit 0
