#!/bin/sh
# Every program's --help and its man page name the same long options, the
# man page formats without warnings (also with the configuration
# directory of a deep build tree, 200 characters, in place of this
# build's), and the bash completion parses and offers every long option
# --help lists.
. "$top_srcdir/tests/lib/common.sh"

checked=0
# The configuration directory the man pages name (e2defrag-offline's
# --help says where its file is), and a page with a directory of 200
# characters in its place.
confdir=$("$top_builddir/misc/e2defrag-offline" --help 2>/dev/null |
	sed -n 's|.*Defaults come from \(/.*\)/e2defrag-offline\.conf\.$|\1|p')
[ -n "$confdir" ] || fail "e2defrag-offline --help does not say where its configuration file is"
longdir=$(printf '/%s/%s/%s' "$(printf 'p%.0s' $(seq 1 66))" \
	"$(printf 'q%.0s' $(seq 1 66))" "$(printf 'r%.0s' $(seq 1 65))")
[ ${#longdir} -eq 200 ] || fail "the long directory has ${#longdir} characters"
long_page() {
	awk -v old="$confdir/" -v new="$longdir/" '{
		out = ""
		while ((i = index($0, old)) > 0) {
			out = out substr($0, 1, i - 1) new
			$0 = substr($0, i + length(old))
		}
		print out $0
	}' "$1"
}
long_checked=0
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
	# The same with the configuration directory a packager's deep build
	# tree gives (make distcheck installs under it): 200 characters.
	if [ -n "$confdir" ] && grep -qF "$confdir/" "$page"; then
		long_page "$page" > "$T/long.page"
		warnings=$(MANWIDTH=80 man --warnings -l "$T/long.page" 2>&1 >/dev/null)
		[ -z "$warnings" ] || fail "$name: man page warnings with a sysconfdir of 200 characters: $warnings"
		long_checked=$((long_checked + 1))
	fi
	if [ -f "$top_srcdir/completion/$name" ]; then
		bash -n "$top_srcdir/completion/$name" || fail "$name: completion does not parse"
		# Every option --help lists (in its table: the lines that start
		# with one) is one the completion offers.
		for opt in $(grep -E '^ +(-[[:alnum:]], )?--[a-z]' "$T/help" |
				grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
			grep -qE -- "(^|[[:space:]'(|])$opt([[:space:]'|)=]|\$)" "$top_srcdir/completion/$name" ||
				fail "$name: $opt is in --help but not in completion/$name"
		done
	fi
	checked=$((checked + 1))
done
[ "$checked" -ge 1 ] || fail "no program checked"
[ "$long_checked" -ge 1 ] || fail "no man page names $confdir"

# One letter, one meaning across the suite: a short option that two
# programs' --help pair with different long options is a defect (e2frag
# took -n for --top where e2defrag's -n is the dry run).
for bin in analyze/e2frag defrag/e2defrag tui/e2fragmap images/e2fragimg \
	   misc/e2defrag-offline; do
	[ -x "$top_builddir/$bin" ] || continue
	"$top_builddir/$bin" --help 2>&1 |
		sed -n 's/^ *\(-[A-Za-z]\), \(--[a-z][a-z0-9-]*\).*/\1 \2/p' |
		sed "s|\$| $(basename "$bin")|"
done | sort -u > "$T/letters"
[ -s "$T/letters" ] || fail "no short options found in any --help"
clash=$(awk '{ if ($1 in long && long[$1] != $2) print $1 ": " long[$1] " (" prog[$1] ") and " $2 " (" $3 ")"; long[$1] = $2; prog[$1] = $3 }' "$T/letters")
[ -z "$clash" ] || fail "a letter with two meanings: $clash"
note "$(cut -d' ' -f1 "$T/letters" | sort -u | wc -l) short options, one meaning each"
note "$checked programs' help, man pages and completions agree"
note "$long_checked man page formats without warnings with a sysconfdir of 200 characters"

# The read model's options are one table (reports/modelopt.c) for e2frag
# and e2defrag: their --help paragraphs are the same lines, their man
# pages the same text (kept twice, marked by roff comments), and each
# option's default in --help is the one the pages state.
if [ -x "$top_builddir/analyze/e2frag" ] && [ -x "$top_builddir/defrag/e2defrag" ]; then
	for name in e2frag e2defrag; do
		"$name" --help | sed -n '/^Read model/,/^$/p' > "$T/model.help.$name"
		[ "$(grep -c -- '^ *--' "$T/model.help.$name")" -ge 5 ] ||
			fail "$name --help has no read model paragraph of 5 options"
		awk '/^\.\\" The read model.s options/ { on = 1 } on { print }
		     /^\.\\" End of the read model.s options/ { on = 0 }' \
			"$top_builddir/man/$name.8" > "$T/model.man.$name"
		grep -q '^\.\\" End of the read model' "$T/model.man.$name" ||
			fail "$name.8 has no marked read model options"
	done
	diff "$T/model.help.e2frag" "$T/model.help.e2defrag" ||
		fail "e2frag and e2defrag --help say different things about the read model's options"
	diff "$T/model.man.e2frag" "$T/model.man.e2defrag" ||
		fail "e2frag(8) and e2defrag(8) say different things about the read model's options"
	python3 - "$T/model.help.e2frag" "$T/model.man.e2frag" <<'PY' || exit 1
import re, sys
helped = {}
for line in open(sys.argv[1]):
    m = re.match(r"^ +--([a-z-]+) [A-Z]+ +.*\(([^()]*)\)$", line)
    if m:
        helped[m.group(1)] = m.group(2)
# Items of the page: ".BI \-\-NAME ..." and the text up to the next .TP.
items, name = {}, None
for line in open(sys.argv[2]):
    line = line.rstrip("\n").replace("\\-", "-")
    m = re.match(r'^\.BI --([a-z-]+) ', line)
    if m:
        name = m.group(1)
        items[name] = ""
    elif line.startswith(".TP") or line.startswith('.\\"'):
        name = None
    elif name:
        items[name] += " " + re.sub(r"^\.[A-Z]+ ", "", line)
if sorted(helped) != sorted(items):
    sys.exit("FAIL: read model options in --help %s, in the page %s" % (sorted(helped), sorted(items)))
for opt, default in helped.items():
    if "(default %s" % default not in re.sub(r"\s+", " ", items[opt]):
        sys.exit("FAIL: --%s: --help's default is %s, the page says: %s" % (opt, default, items[opt]))
print("# %d read model options: one --help paragraph, one man page text, the same defaults" % len(helped))
PY
fi
