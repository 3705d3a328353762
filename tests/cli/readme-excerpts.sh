#!/bin/sh
# The README's excerpts (make demo's table, e2frag's report, e2fragmap's
# screen) and doc/map-demo.svg are what the programs print now: made
# again from the demo image by doc/readme-excerpts.sh and compared with
# the blocks between <!-- excerpt NAME --> and <!-- /excerpt --> in
# README.md.  On a difference: run make readme-excerpts, and read the
# prose around what changed.
. "$top_srcdir/tests/lib/common.sh"
command -v python3 > /dev/null || skip "no python3"
run_status sh "$top_srcdir/doc/readme-excerpts.sh" "$top_builddir" --check
exit $status
