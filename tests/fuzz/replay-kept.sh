#!/bin/sh
# replay-kept.sh E2DEFRAG DIR|IMAGE... --- `make fuzz-replay` (DIR: the
# corpora the fuzz targets kept, FUZZ_BUILD/corpus-*) and
# tests/fuzz/regress.sh (the regression inputs): every image through a
# real run of E2DEFRAG -f on a copy, and the promise of e2defrag(8) held
# against programs that share nothing with it:
#   - refused (exit 8): the copy is byte for byte the input (cmp);
#   - accepted (exit 0, 1 or 4): e2fsck -fn finds the copy clean, and
#     every file, directory and symlink of it reads as the input's did
#     (debugfs rdump of both, diff -r);
#   - any other exit (a crash, a sanitizer's abort) breaks it.
# Prints a FAIL line for each input that breaks it and a summary line
# `replayed N: R refused, A accepted, F broken`; exit 1 when F > 0.
# A FUZZ_BUILD without corpora is said and counts nothing.
set -u
e2defrag=$1
shift
export LC_ALL=C
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-replay.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

n=0 refused=0 accepted=0 broken=0
broke() {
	echo "FAIL: $1: $2"
	broken=$((broken + 1))
}

# The image's tree as debugfs reads it, into DIR (names, contents, symlinks).
tree() {
	rm -rf "$2" && mkdir "$2" &&
		debugfs -R "rdump / $2" "$1" > "$2.out" 2>&1 &&
		! grep -q -i 'error\|corrupt' "$2.out"
}

replay() {
	img=$1
	n=$((n + 1))
	cp "$img" "$tmp/copy.img" || exit 2
	"$e2defrag" -f "$tmp/copy.img" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	case $rc in
	8)
		refused=$((refused + 1))
		cmp -s "$img" "$tmp/copy.img" ||
			broke "$img" "refused (exit 8), yet the image changed"
		;;
	0|1|4)
		accepted=$((accepted + 1))
		if ! e2fsck -fn "$tmp/copy.img" > "$tmp/fsck" 2>&1; then
			broke "$img" "accepted (exit $rc), e2fsck -fn not clean: $(grep -v '^Pass\|^e2fsck\|^$' "$tmp/fsck" | head -n 1)"
			return
		fi
		# Trees debugfs cannot read whole on the input are not compared
		# (e2defrag accepted them: e2fsck -fn passed on the input too).
		if tree "$img" "$tmp/before" && tree "$tmp/copy.img" "$tmp/after" &&
		   ! diff -r --no-dereference "$tmp/before" "$tmp/after" > "$tmp/diff" 2>&1; then
			broke "$img" "accepted (exit $rc), files differ: $(head -n 1 "$tmp/diff")"
		fi
		;;
	*)
		broke "$img" "exit $rc: $(grep -m 1 -E 'ERROR|runtime error|SUMMARY|.' "$tmp/err")"
		;;
	esac
}

for arg in "$@"; do
	if [ -d "$arg" ]; then
		found=0
		for f in "$arg"/*; do
			[ -f "$f" ] || continue
			found=1
			replay "$f"
		done
		[ "$found" = 1 ] || echo "fuzz-replay: nothing kept in $arg" >&2
	elif [ -f "$arg" ]; then
		replay "$arg"
	else
		echo "fuzz-replay: no $arg (run make fuzz first)" >&2
	fi
done
echo "replayed $n: $refused refused, $accepted accepted, $broken broken"
[ "$broken" -eq 0 ]
