#!/bin/sh
# The write log of the power-cut tests ($E2FRAG_IOLOG: every byte written,
# to any path) is a test hook: only a build configured with --enable-iolog
# has it.  Without, no program even holds the variable's name and setting
# it logs nothing; with, a run logs its writes (the crash tests rely on it).
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/fs.img" ext2
case ${E2F_ENABLE_IOLOG:-} in
yes)
	E2FRAG_IOLOG=$T/log e2defrag "$T/fs.img" > "$T/out" 2>&1 || { cat "$T/out"; fail "e2defrag failed"; }
	[ "$(head -c 8 "$T/log" 2>/dev/null)" = E2FIOLG1 ] || fail "--enable-iolog: no write log"
	echo "# built with --enable-iolog: the log is written; a default build has no such hook"
	;;
no)
	for prog in e2frag e2defrag e2fragmap e2fragimg; do
		path=$(command -v $prog) || fail "$prog not built"
		! grep -aq E2FRAG_IOLOG "$path" || fail "$prog holds E2FRAG_IOLOG in a default build"
	done
	E2FRAG_IOLOG=$T/log e2defrag "$T/fs.img" > "$T/out" 2>&1 || { cat "$T/out"; fail "e2defrag failed"; }
	[ "$(pieces "$T/fs.img" /frag)" -eq 1 ] || fail "e2defrag did not move /frag"
	[ ! -e "$T/log" ] || fail "a default build wrote the log E2FRAG_IOLOG names"
	;;
*)
	fail "E2F_ENABLE_IOLOG is '${E2F_ENABLE_IOLOG:-}': run through make check"
	;;
esac
exit 0
