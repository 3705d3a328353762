#!/bin/sh
# -V and --version in every program: its name and the version configure.ac
# sets, then the ext2fs library it runs with in the words and the figures
# of e2fsprogs' own -V (e2fsck -V's second line, the same library asked by
# another program), and nothing else; exit 0.
. "$top_srcdir/tests/lib/common.sh"

version=$(sed -n 's/^m4_define(\[e2f_version\], \[\(.*\)\])$/\1/p' "$top_srcdir/configure.ac")
[ -n "$version" ] || fail "no version in configure.ac"
e2fsck -V > /dev/null 2> "$T/e2fsck" || fail "e2fsck -V failed"
lib=$(sed -n 2p "$T/e2fsck")
printf '%s\n' "$lib" | grep -qE '^	Using EXT2FS Library version [0-9.]+, ' ||
	fail "e2fsck -V says '$lib'"

checked=0
for bin in analyze/e2frag defrag/e2defrag tui/e2fragmap images/e2fragimg; do
	[ -x "$top_builddir/$bin" ] || continue		# e2fragmap: --disable-tui
	name=$(basename "$bin")
	for opt in -V --version; do
		run_status "$top_builddir/$bin" $opt > "$T/out" 2> "$T/err"
		[ "$status" -eq 0 ] || fail "$name $opt exited $status"
		[ ! -s "$T/err" ] || fail "$name $opt wrote to stderr: $(cat "$T/err")"
		printf '%s %s\n%s\n' "$name" "$version" "$lib" > "$T/want"
		cmp -s "$T/out" "$T/want" || {
			diff "$T/want" "$T/out"
			fail "$name $opt"
		}
	done
	checked=$((checked + 1))
done
[ $checked -ge 3 ] || fail "only $checked programs built"
note "$checked programs: their version, then$lib"
exit 0
