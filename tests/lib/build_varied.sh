# build_varied.sh --- sourced by tests: build_varied IMAGE TYPE BLOCKSIZE
# makes an image holding every kind of block map the analyzer must read:
# direct, IND, DIND and TIND blocks (block-mapped types), holes, extent
# trees of depth >= 1 (ext4), files fragmented by
# deleting every other small file and refilling the holes, a file larger
# than a block group, a directory of several blocks, a slow symlink, an EA
# block, a hard link.  Only mke2fs and debugfs write it.

# A file of N blocks of BS bytes, deterministic, distinct per block.
make_data() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys, hashlib
path, n, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "wb") as f:
    for i in range(n):
        f.write(hashlib.sha256(b"%s:%d" % (path.encode(), i)).digest() * (bs // 32))
PY
}

# A sparse file: BLOCKS data blocks at each of the listed block offsets.
make_sparse() {
	out=$1 bs=$2 size_blocks=$3; shift 3
	: > "$out"
	truncate -s $((size_blocks * bs)) "$out"
	for off in "$@"; do
		make_data "$out.part" 2 "$bs"
		dd if="$out.part" of="$out" bs="$bs" seek="$off" conv=notrunc status=none
	done
	rm -f "$out.part"
}

build_varied() {
	img=$1 type=$2 bs=$3
	src=$(dirname "$img")/src.$$
	mkdir -p "$src"
	per=$((bs / 4))
	# Room for /big, which must span more than one block group.
	size=$(( bs == 1024 ? 96 : 256 ))M
	mkfs_img "$img" "$type" "$bs" "$size" -I 256
	make_data "$src/small" 3 "$bs"
	make_data "$src/ind" 20 "$bs"
	make_data "$src/dind" $((12 + per + 30)) "$bs"
	make_data "$src/four" 4 "$bs"
	make_data "$src/frag" 50 "$bs"
	make_data "$src/big" $((bs == 1024 ? 10000 : 40000)) "$bs"
	# TIND: one data run past the doubly indirect range.
	make_sparse "$src/tind" "$bs" $((12 + per + per * per + 8)) $((12 + per + per * per + 5))
	# Holes: 10 separate data runs (more than fit in an inode's extents).
	make_sparse "$src/holes" "$bs" 64 2 8 14 20 26 32 38 44 50 56
	python3 -c "print('v' * 600, end='')" > "$src/xattr"
	{
		echo "write $src/small small"
		echo "write $src/ind ind"
		echo "write $src/dind dind"
		echo "write $src/tind tind"
		echo "write $src/holes holes"
		for i in $(seq 1 30); do echo "write $src/four four$i"; done
		for i in $(seq 1 2 30); do echo "rm four$i"; done
		echo "write $src/frag frag"
		echo "write $src/big big"
		echo "mkdir many"
		for i in $(seq 1 150); do echo "write /dev/null many/entry-with-a-long-name-$i"; done
		echo "symlink slink /a/target/path/long/enough/not/to/fit/in/the/inode/itself/at/all/x"
		echo "ln small small.link"
		echo "sif small links_count 2"
		echo "ea_set -f $src/xattr small user.big"
	} > "$src/cmds"
	dfs "$img" "$src/cmds"
	rm -rf "$src"
}
