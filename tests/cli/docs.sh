#!/bin/sh
# Every program's --help and its man page name the same long options, the
# man page formats without warnings, and the bash completion parses.
. "$top_srcdir/tests/lib/common.sh"

checked=0
# The man pages are made from man/*.in in the build tree (version, date).
for prog in analyze/e2frag:man/e2frag.8 defrag/e2defrag:man/e2defrag.8 \
	    tui/e2fragmap:man/e2fragmap.1 images/e2fragimg:man/e2fragimg.1 \
	    misc/e2defrag-offline:man/e2defrag-offline.8; do
	bin=$top_builddir/${prog%%:*}
	page=$top_builddir/${prog#*:}
	name=$(basename "$bin")
	[ -x "$bin" ] || continue
	[ -f "$page" ] || fail "$name has no man page ${prog#*:}"
	"$bin" --help > "$T/help" 2>&1 || fail "$name --help failed"
	grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u > "$T/help.opts"
	# In roff, "-" is written "\-".
	sed 's/\\-/-/g' "$page" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u > "$T/man.opts"
	missing=$(comm -23 "$T/help.opts" "$T/man.opts" | tr '\n' ' ')
	[ -z "$missing" ] || fail "$name: options in --help but not in its man page: $missing"
	extra=$(comm -13 "$T/help.opts" "$T/man.opts" | tr '\n' ' ')
	[ -z "$extra" ] || fail "$name: options in its man page but not in --help: $extra"
	warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warnings" ] || fail "$name: man page warnings: $warnings"
	if [ -f "$top_srcdir/completion/$name" ]; then
		bash -n "$top_srcdir/completion/$name" || fail "$name: completion does not parse"
		# The completion offers the options --help names.  (e2defrag-offline's
		# help also names e2defrag options it passes on, which it does not
		# complete, and completes findmnt's.)
		if [ "$name" != e2defrag-offline ]; then
			grep -oE -- '--[a-z][a-z0-9-]+' "$top_srcdir/completion/$name" |
				sort -u > "$T/comp.opts"
			missing=$(comm -23 "$T/help.opts" "$T/comp.opts" | tr '\n' ' ')
			[ -z "$missing" ] || fail "$name: options in --help but not in its completion: $missing"
		fi
	fi
	checked=$((checked + 1))
done
[ "$checked" -ge 1 ] || fail "no program checked"
note "$checked programs' help, man pages and completions agree"
