#!/bin/sh
# Bad command lines get one line on stderr and exit 16, touching nothing;
# an output that cannot be written, or a workload that does not fit, gets
# one line and exit 8 and leaves no image or manifest behind.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"
cd "$tmp" || exit 99

expect() {
	want=$1
	shift
	e2fragimg "$@" >out 2>err
	rc=$?
	lines=$(wc -l <err)
	if [ "$rc" -ne "$want" ]; then
		fail "e2fragimg $*: exit $rc, want $want"
	elif [ "$lines" -ne 1 ] || ! grep -q '^e2fragimg: ' err; then
		fail "e2fragimg $*: want one 'e2fragimg: ...' line on stderr, got:"
		cat err
	elif [ -s out ]; then
		fail "e2fragimg $*: printed on stdout"
	fi
}

expect 16 x.img
expect 16 --workload
expect 16 --workload nosuch x.img
expect 16 --workload streams
expect 16 --workload streams a.img b.img
expect 16 --workload streams --type ext5 x.img
expect 16 --workload streams --size 12Q x.img
expect 16 --workload streams --size 32K x.img
# From 64K the size is taken; an ext4 of 1M has no room for its journal.
expect 8 --workload streams --size 1M x.img
expect 16 --workload streams --size 17T x.img
expect 16 --workload streams --type ext3 --block-size 1024 --size 5T x.img
expect 16 --workload streams --block-size 8192 x.img
expect 16 --workload streams --seed -1 x.img
expect 16 --workload streams --streams 0 x.img
expect 16 --workload streams --chunk 100 x.img
expect 16 --workload streams --total lots x.img
expect 16 --workload streams --reservation -5 x.img
# --script naming the image or its manifest (the image, renamed over it
# at the end, would take its place).
expect 16 --workload turns --script x.img x.img
expect 16 --workload turns --script x.img.json x.img
# ... by another name for it, neither existing yet (they were taken for
# two files, and the script went over the image).
mkdir -p sub
expect 16 --workload turns --script ./x.img x.img
expect 16 --workload turns --script sub/../x.img.json x.img
expect 16 --workload turns --script "$PWD/x.img" ./x.img
ln -s sub link
expect 16 --workload turns --script link/y.img sub/y.img
[ ! -e x.img ] && [ ! -e sub/y.img ] || fail "a refused --script left an image"
rm -rf sub link
expect 16 --workload streams --files 10 x.img
expect 16 --workload tree --streams 2 x.img
expect 16 --workload tree --files 20000000 x.img
expect 16 --workload tree --dirs 10 x.img
expect 16 --workload kernel-tree --dirs 0 x.img
expect 16 --workload kernel-tree --streams 2 x.img
expect 16 --workload aged --fill 100 x.img
expect 16 --workload aged --fill 0 x.img
expect 16 --workload aged --rounds 101 x.img
expect 16 --workload mixed --total 1M x.img
expect 16 --workload streams --frobnicate x.img
expect 16 -Z --workload streams x.img
ls ./*.img ./*.json >/dev/null 2>&1 && fail "a usage error left a file behind"

expect 8 --workload streams --total 1M "$tmp/no/such/dir/x.img"
mkdir adir
expect 8 --workload streams --total 1M adir
[ -d adir ] || fail "the directory given as output was replaced"
expect 8 --workload streams --total 1M /dev/null
[ -c /dev/null ] || fail "/dev/null was replaced"
# A file that is not an image is not overwritten; an old image is.
echo "precious" >notes.txt
expect 8 --workload streams --total 1M notes.txt
[ "$(cat notes.txt)" = precious ] || fail "a file that is no image was overwritten"
e2fragimg -q --workload streams --total 1M old.img && e2fragimg -q --workload tree --files 3 old.img &&
	grep -q '"workload": "tree"' old.img.json || fail "an old image was not replaced"
# Nor is a file beside it that is not a manifest, where the manifest goes.
echo "precious" >n.img.json
expect 8 --workload streams --total 1M n.img
[ "$(cat n.img.json)" = precious ] || fail "a file that is no manifest was overwritten"
[ -e n.img ] && fail "a refused build left an image behind"
# 64M of recordings cannot fit in 8M.
expect 8 --workload streams --size 8M --total 64M full.img
grep -q -- '--size' err || fail "no hint to give a larger --size"
[ -e full.img ] || [ -e full.img.json ] && fail "a failed build left its image behind"
# A failed build leaves an earlier image and its manifest as they were.
cp old.img old.bak && cp old.img.json old.json.bak
expect 8 --workload streams --size 8M --total 64M old.img
cmp -s old.img old.bak && cmp -s old.img.json old.json.bak ||
	fail "a failed build did not leave the earlier image and manifest as they were"
ls -A | grep -q '^\.' && fail "a failed build left a temporary file: $(ls -A | grep '^\.')"

# Interrupted, it removes what it was writing and exits 32, and leaves
# an earlier image as it was (the build goes to .big.img.XXXXXX beside
# it, renamed over big.img at its end).  The signal goes once the build
# has written into its file (blocks allocated to it): by then the handler
# is in place and knows the file, whatever the machine's load (a fixed
# sleep once killed it before that: exit 143).
for earlier in none old; do
	rm -f big.img big.img.json
	[ $earlier = old ] && cp old.bak big.img && cp old.json.bak big.img.json
	e2fragimg -q --workload streams --total 2G big.img &
	pid=$!
	while [ "$(stat -c %b .big.img.?????? 2>/dev/null || echo 0)" -eq 0 ]; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -TERM "$pid" || fail "interrupted: the build ended before it wrote into its file"
	wait "$pid"
	rc=$?
	[ "$rc" -eq 32 ] || fail "interrupted: exit $rc, want 32"
	if [ $earlier = none ]; then
		[ -e big.img ] || [ -e big.img.json ] && fail "an interrupted build left its image behind"
	else
		cmp -s big.img old.bak && cmp -s big.img.json old.json.bak ||
			fail "an interrupted build did not leave the earlier image as it was"
	fi
	ls -A | grep -q '^\.' && fail "an interrupted build left a temporary file: $(ls -A | grep '^\.')"
done

e2fragimg --help >out 2>err && grep -q '^Usage: e2fragimg --workload' out && [ ! -s err ] ||
	fail "--help"
for o in --workload --type --size --block-size --seed --streams --chunk --total \
	 --reservation --files --dirs --fill --rounds --quiet --version; do
	grep -q -- "$o" out || fail "--help does not mention $o"
done
e2fragimg --version | grep -q '^e2fragimg [0-9]' || fail "--version"

# Completing "--" offers every long option --help lists, and the man page
# mentions each.
if command -v bash >/dev/null 2>&1; then
	bash -c '. "$1"; COMP_WORDS=(e2fragimg --); COMP_CWORD=1; _e2fragimg;
		 printf "%s\n" "${COMPREPLY[@]}"' sh "$srcdir/completion/e2fragimg" >offered
else
	fail "bash not found for the completion"
fi
for o in $(grep -o -- '--[a-z][a-z-]*' out | sort -u); do
	grep -qx -- "$o" offered || fail "completion does not offer $o"
	grep -qF -- "\\-\\-${o#--}" "${top_builddir:-$srcdir}/man/e2fragimg.1" || fail "man page lacks $o"
done
finish
