#!/bin/sh
# e2defrag --verify: every copy is read back from the device past the
# page cache (O_DIRECT) before the switch.  An LD_PRELOAD library
# (tests/cli/verify_shim.c, loaded by this test only) counts the reads
# made on the O_DIRECT descriptor, and spoils the first one: the file
# whose copy it was must fail (exit 4, named), keep its old blocks (per
# debugfs), leave its new ones free (e2fsck -fn), and every file must
# read back the same (sha256); without the spoiling, the run must read
# at least every byte it wrote, and end as a run without --verify does.
. "$top_srcdir/tests/cli/defrag-lib.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "skip: no C compiler for the shim"; exit 77; }
"$cc" -shared -fPIC -o "$T/shim.so" "$top_srcdir/tests/cli/verify_shim.c" -ldl \
	2>"$T/cc.out" || { cat "$T/cc.out" >&2; fail "building the shim"; }
python3 -c 'import os, sys
os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT))' "$T/shim.so" 2>/dev/null || {
	echo "skip: $TMPDIR does not do O_DIRECT: --verify reads through the cache there, which the shim cannot see"
	exit 77
}
# A sanitizer build wants its runtime first among the preloaded libraries.
shim_env="LD_PRELOAD=$T/shim.so ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

img=$T/v.img
small_image "$img" ext4
snapshot "$img" "$T/before.snap"
files="/rec/a /rec/b /frag"
for f in $files; do $ORACLE blocks "$img" $f > "$T/blocks0.$(basename $f)"; done

# The normal path: everything written is read back, and the run is the
# same as one without --verify.
cp "$img" "$T/plain.img"
expect_rc 0 e2defrag "$T/plain.img"
cp "$img" "$T/ok.img"
# shellcheck disable=SC2086
expect_rc 0 env $shim_env E2F_SHIM_LOG="$T/shim.log" e2defrag --verify --json "$T/ok.img"
check_clean "$T/ok.img"
snapshot "$T/ok.img" "$T/ok.snap"
same_snapshot "$T/before.snap" "$T/ok.snap"
for f in $files; do
	$ORACLE blocks "$T/plain.img" $f > "$T/b.plain"
	$ORACLE blocks "$T/ok.img" $f > "$T/b.ok"
	cmp -s "$T/b.plain" "$T/b.ok" || fail "$f: --verify put it elsewhere than a plain run"
done
written=$(json_get "$T/out" 'j["result"]["bytes_written"]')
read -r r reads b bytes s spoiled < "$T/shim.log" 2>/dev/null || fail "the shim logged nothing"
echo "# wrote $written bytes; --verify read $bytes bytes in $reads reads"
[ "$reads" -gt 0 ] && [ "$bytes" -ge "$written" ] ||
	fail "--verify read $bytes bytes past the cache, the run wrote $written"
[ "$spoiled" -eq 0 ] || fail "the shim spoiled reads it was not asked to"

# The mismatch: the first read back differs from what was written.
cp "$img" "$T/bad.img"
rm -f "$T/shim.log"
# shellcheck disable=SC2086
expect_rc 4 env $shim_env E2F_SHIM_FLIPS=1 E2F_SHIM_LOG="$T/shim.log" e2defrag --verify "$T/bad.img"
grep -q "differs from the source" "$T/out" || { cat "$T/out" >&2; fail "no word of the mismatch"; }
check_clean "$T/bad.img"
snapshot "$T/bad.img" "$T/bad.snap"
same_snapshot "$T/before.snap" "$T/bad.snap"
# The file whose copy was spoiled kept its blocks; so did any move that
# counted on them (execute.c: each move checks its blocks are free), each
# named as failed; the others moved.
bad=$(sed -n 's/^e2defrag: \(.*\) (inode [0-9]*) not moved: Copy read back.*/\1/p' "$T/out")
[ -n "$bad" ] || { cat "$T/out" >&2; fail "no file named for the mismatch"; }
kept=0
for f in $files; do
	$ORACLE blocks "$T/bad.img" $f > "$T/blocks1"
	if cmp -s "$T/blocks0.$(basename $f)" "$T/blocks1"; then
		grep -q "^e2defrag: $f (inode [0-9]*) not moved" "$T/out" ||
			{ cat "$T/out" >&2; fail "$f kept its blocks but is not named"; }
		kept=$((kept + 1))
	elif [ "$f" = "$bad" ]; then
		fail "$f failed the verification but its blocks changed"
	fi
done
[ $kept -ge 1 ] && [ $kept -lt 3 ] ||
	{ cat "$T/out" >&2; fail "$kept files kept their old blocks"; }
exit 0
