# images.sh --- small test images for the map's tests (sourced).
#
# map_image_ext2 IMG [SIZE]: an ext2 image of 1 KiB blocks, 4 MiB (one block
# group) unless SIZE says otherwise,
# with a contiguous file, a fragmented one, a directory of small files, and three 12-block streams /a.ts /b.ts /c.ts interleaved block by block
# at 3000-3035 the way concurrent writers leave them.  debugfs cannot write
# that pattern directly, so the streams get their block pointers with sif
# and e2fsck -fy then fixes the free counts.
#
# map_image_ext4 IMG: an 8 MiB ext4 image of 1 KiB blocks with a journal,
# a few files and a directory.
#
# Both are built from fixed contents: the same layout every time.

map_fill() {	# map_fill FILE KIB: KIB KiB of a fixed pattern
	yes e2fragmap | head -c $(($2 * 1024)) > "$1"
}

map_image_ext2() {
	img=$1 dir=$(dirname "$1")
	rm -f "$img"
	mke2fs -q -F -t ext2 -b 1024 -N 64 -E root_owner=0:0 "$img" "${2:-4M}" > /dev/null || return 1
	map_fill "$dir/k20" 20 && map_fill "$dir/k5" 5 && map_fill "$dir/k12" 12 &&
	map_fill "$dir/k2" 2 || return 1
	{
		echo "write $dir/k20 contig"
		echo "write $dir/k5 h1"
		echo "write $dir/k5 h2"
		echo "write $dir/k5 h3"
		echo "rm h1"
		echo "rm h3"
		echo "write $dir/k12 frag"
		echo "mkdir dir"
		for i in 1 2 3 4; do echo "write $dir/k2 dir/small$i"; done
		for s in a b c; do
			echo "write /dev/null $s.ts"
			echo "sif $s.ts size 12288"
			echo "sif $s.ts blocks 24"
		done
		for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
			blk=$((3000 + 3 * i))
			echo "sif a.ts block[$i] $blk"
			echo "sif b.ts block[$i] $((blk + 1))"
			echo "sif c.ts block[$i] $((blk + 2))"
			echo "setb $blk 3"
		done
	} | debugfs -w "$img" > /dev/null 2>&1 || return 1
	rm -f "$dir/k20" "$dir/k5" "$dir/k12" "$dir/k2"
	e2fsck -fy "$img" > /dev/null 2>&1
	e2fsck -fn "$img" > /dev/null 2>&1
}

map_image_ext4() {
	img=$1 dir=$(dirname "$1")
	rm -f "$img"
	mke2fs -q -F -t ext4 -b 1024 -N 64 -E root_owner=0:0 "$img" 8M > /dev/null || return 1
	map_fill "$dir/k40" 40 && map_fill "$dir/k3" 3 || return 1
	{
		echo "write $dir/k40 big"
		echo "mkdir d"
		for i in 1 2 3; do echo "write $dir/k3 d/f$i"; done
	} | debugfs -w "$img" > /dev/null 2>&1 || return 1
	rm -f "$dir/k40" "$dir/k3"
	e2fsck -fn "$img" > /dev/null 2>&1
}

# map_blocks IMG PATH: every block PATH owns (data, indirect, extent tree),
# one per line, as debugfs lists them.
map_blocks() {
	debugfs -R "blocks $2" "$1" 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+$'
}
