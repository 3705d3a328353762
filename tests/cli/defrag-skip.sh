#!/bin/sh
# What e2defrag never moves, it names with the reason (-v) and leaves
# exactly where it is: inline-data files, the journal, the resize inode,
# the bad blocks inode.  (The quota files: defrag-quota.sh, where the
# other files of a quota filesystem are moved like any other.)
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

# Files sharing blocks, inodes whose checksums do not match: the whole
# filesystem is refused as damaged (defrag-damage.sh), not just the file.

exit 0
