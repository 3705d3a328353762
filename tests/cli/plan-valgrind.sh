#!/bin/sh
# The planner reads no uninitialized memory (valgrind memcheck): on the
# disk of defrag-freeruns.sh (four recorders in turns on a 32 MiB ext4
# disk with 1 KiB blocks), where a recording's largest pieces are costed
# as windows already in place (planner/window.c, aligned candidates),
# whose stream offsets were once read from uninitialized stack, so that
# plans could differ from run to run.  Skips without valgrind, and in a
# sanitizer build (valgrind cannot run an ASan binary).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v valgrind >/dev/null 2>&1 || { echo "skip: no valgrind"; exit 77; }
# The binary itself: defrag-lib.sh makes `e2defrag` a shell function, so
# `command -v` would name the function and the sanitizer check below
# would look at nothing.
bin=$top_builddir/defrag/e2defrag
[ -x "$bin" ] || fail "no $bin"
if nm "$bin" 2>/dev/null | grep -q __asan_init || ldd "$bin" 2>/dev/null | grep -q libasan; then
	echo "skip: a sanitizer build"
	exit 77
fi
img=$T/rec.img
e2fragimg -q -w streams -t ext4 -b 1024 -s 32M --streams 4 --chunk 64K \
	--total 19M "$img" || fail "e2fragimg"
valgrind -q --error-exitcode=99 --track-origins=yes "$bin" -n "$img" \
	> "$T/out" 2> "$T/vg"
rc=$?
[ $rc -ne 99 ] || { cat "$T/vg"; fail "valgrind found errors in e2defrag -n"; }
[ $rc -le 1 ] || { cat "$T/vg" "$T/out"; fail "e2defrag -n exited $rc"; }
grep -q "^  files selected: *4:" "$T/out" || { cat "$T/out"; fail "no plan for the four recordings"; }
echo "# e2defrag -n under valgrind: clean, exit $rc"
exit 0
