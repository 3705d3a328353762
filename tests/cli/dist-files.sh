#!/bin/sh
# The tarball holds every file git tracks (but .gitignore and .ci/): a new
# source, header, test, page or script left out of EXTRA_DIST or a
# _SOURCES list fails here, not in someone's make distcheck.  And there is
# one version and one release date: configure's, in every man page's
# header, and the version of debian/changelog.  Skips outside a git
# checkout (a build from the tarball).
. "$top_srcdir/tests/lib/common.sh"

command -v git >/dev/null 2>&1 || skip "no git"
top=$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null) || skip "not a git checkout"
[ "$top" = "$(cd "$top_srcdir" && pwd -P)" ] || skip "$top_srcdir is not the top of its git checkout"

# make distdir copies what make dist would pack, without packing it.
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$top_builddir" distdir distdir="$T/dist" > "$T/make.out" 2>&1 || {
	cat "$T/make.out"
	fail "make distdir failed"
}
(cd "$top_srcdir" && git ls-files) | grep -v -e '^\.gitignore$' -e '^\.ci/' |
	while read -r f; do [ -e "$top_srcdir/$f" ] && echo "$f"; done | sort > "$T/git.list"
(cd "$T/dist" && find . \( -type f -o -type l \) | sed 's|^\./||') | sort > "$T/dist.list"
missing=$(comm -23 "$T/git.list" "$T/dist.list" | tr '\n' ' ')
[ -z "$missing" ] || fail "tracked by git but not in the tarball (add them to EXTRA_DIST): $missing"
note "$(wc -l < "$T/git.list") tracked files, all in the tarball"

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
date=$(sed -n 's/^RELEASE_DATE = //p' "$top_builddir/Makefile")
[ -n "$version" ] && [ -n "$date" ] || fail "no version or release date from configure"
for page in "$top_builddir"/man/*.[18]; do
	head -1 "$page" | grep -qF "\"$date\" \"e2frag $version\"" ||
		fail "$page: '$(head -1 "$page")', not dated $date, version $version"
done
deb=$(sed -n '1s/^e2frag (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
[ "$deb" = "$version" ] || fail "debian/changelog is at $deb, configure at $version"
note "version $version of $date everywhere"
