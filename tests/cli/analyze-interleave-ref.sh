#!/bin/sh
# The interleaving e2frag finds on whole images is the interleaving the
# definition gives, as a brute-force reference computes it
# (tests/unit/interleave_ref.h): partners, alternations, strongest pairs
# and sets, on a 20,000-file tree placed as the kernel places it (one set
# of hundreds of files), on 300 streams written round robin (one set in
# which every pair alternates), on an aged PVR disk and on the demo mix.
. "$top_srcdir/tests/lib/common.sh"

check=$top_builddir/tests/unit/interleave_image
[ -x "$check" ] || fail "no $check (make check builds it)"

build() {
	name=$1; shift
	e2fragimg -q "$@" "$T/$name.img" || fail "e2fragimg $*"
}
build ktree --workload kernel-tree --type ext3 --files 20000 --seed 1
build streams --workload streams --streams 300 --chunk 4K --total 60M --seed 3
build aged --workload aged --seed 2
build mixed --workload mixed --seed 2

for name in ktree streams aged mixed; do
	"$check" "$T/$name.img" > "$T/out" || fail "$(cat "$T/out")"
	note "$(cat "$T/out")"
	# Something to compare: each image has interleaving to find.
	grep -q " 0 files interleaved" "$T/out" && fail "$name: nothing interleaved: $(cat "$T/out")"
done
# The tree's largest set has hundreds of files, as on the kernel's tree.
"$check" "$T/ktree.img" | grep -Eq "largest [0-9]{3,}\)" ||
	fail "kernel-tree: no set of hundreds of files"
exit 0
