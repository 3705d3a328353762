# invert.sh --- sourced by tests that damage an image behind e2fsprogs.
#
# invert IMG OFFSET COUNT: every bit of COUNT bytes at OFFSET flipped, so
# the bytes change whatever they held.  Writing a fixed value instead
# failed the day the field already held it (an inode's mtime whose low
# byte was the one written).
invert() {
	for b in $(od -An -v -tu1 -j "$2" -N "$3" "$1"); do
		printf "\\$(printf %03o $((255 - b)))"
	done | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
