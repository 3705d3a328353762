#!/bin/sh
# completion/e2fragmap: "--" completes to every long option e2fragmap
# --help lists, a prefix to the image file, and after SPEC nothing more.
set -u
command -v bash > /dev/null || { echo "SKIP: no bash"; exit 77; }
[ -x "$top_builddir/tui/e2fragmap" ] || { echo "SKIP: e2fragmap not built (configure --disable-tui)"; exit 77; }
tmp=$(mktemp -d "$TMPDIR/e2fragmap-completion.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
: > "$tmp/disk.img"

complete_words() {	# complete_words WORD...: COMPREPLY for the last word
	(cd "$tmp" && bash -c '
		source "$0"
		COMP_WORDS=(e2fragmap "$@"); COMP_CWORD=$#
		_e2fragmap
		printf "%s\n" "${COMPREPLY[@]}" | sort' \
		"$top_srcdir/completion/e2fragmap" "$@")
}

want=$(e2fragmap --help | grep -Eo -- '--[a-z][a-z-]*' | sort -u)
got=$(complete_words -- | grep -- '^--')
[ "$got" = "$want" ] || fail "-- completes to '$got', --help lists '$want'"
[ "$(complete_words dis)" = disk.img ] || fail "dis does not complete to disk.img"
[ -z "$(complete_words disk.img '')" ] || fail "offers more after SPEC"
echo "completion: $(echo $want) ; dis -> disk.img ; nothing after SPEC"
