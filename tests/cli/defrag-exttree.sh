#!/bin/sh
# e2defrag writing extent tree blocks: a sparse file whose data, once
# moved, still needs more extents than the inode holds (ten 64 KiB runs
# between holes) gets a new tree (depth 1).  e2fsck -fn checks the new
# tree block's checksum (metadata_csum) and header; the header itself is
# read from the image (magic, entries, eh_max for the block size, depth
# 0); the contents are checked by sha256 (debugfs cat).
. "$top_srcdir/tests/cli/defrag-lib.sh"

# etb IMG PATH: the extent tree blocks of PATH, per debugfs stat.
etb() {
	debugfs -R "stat $2" "$1" 2>/dev/null | tr ',' '\n' |
		sed -n 's/.*(ETB[0-9]*):\([0-9]*\).*/\1/p'
}

for bs in 4096 1024; do
	img=$T/tree-$bs.img
	make_image "$img" ext4 "$bs" 64M -O metadata_csum
	offs=
	i=0
	while [ $i -lt 10 ]; do
		offs="$offs $((i * 256 * 1024))"
		i=$((i + 1))
	done
	gen_sparse "$T/sparse" $((10 * 256 * 1024)) 31 $offs
	fragment "$img" "$T/sparse" /sparse $((bs * 2))
	check_clean "$img"
	old=$(etb "$img" /sparse)
	[ -n "$old" ] || fail "$bs: /sparse has no extent tree block before the run"
	before=$(pieces "$img" /sparse)

	expect_rc 0 e2defrag "$img"
	check_clean "$img"
	debugfs -R "cat /sparse" "$img" 2>/dev/null | cmp -s - "$T/sparse" ||
		fail "$bs: /sparse changed"
	after=$(pieces "$img" /sparse)
	[ "$after" -lt "$before" ] || fail "$bs: /sparse not moved ($before pieces, then $after)"
	new=$(etb "$img" /sparse)
	[ "$(echo "$new" | wc -w)" -eq 1 ] || fail "$bs: want one extent tree block, have '$new'"
	[ "$new" != "$old" ] || fail "$bs: the extent tree block was not rewritten"
	leaves=$(debugfs -R "ex /sparse" "$img" 2>/dev/null | awk '$1 == "1/" && $2 == "1"' | wc -l)
	[ "$leaves" -eq 10 ] || { debugfs -R "ex /sparse" "$img"; fail "$bs: $leaves leaf extents, want 10"; }
	python3 - "$img" "$bs" "$new" <<'PY' || fail "$bs: bad extent tree block header"
import struct, sys
img, bs, blk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(img, "rb") as f:
    f.seek(blk * bs)
    magic, entries, emax, depth, gen = struct.unpack("<HHHHI", f.read(12))
want = (bs - 12) // 12
ok = magic == 0xF30A and entries == 10 and emax == want and depth == 0
print("# %d: block %d: magic %#x entries %d max %d (want %d) depth %d" % (bs, blk, magic, entries, emax, want, depth))
sys.exit(0 if ok else 1)
PY
done
exit 0
