#!/bin/sh
# e2defrag on ext3 with 4 KiB blocks: see defrag-matrix.inc.
TYPE=ext3 BS=4096
. "$top_srcdir/tests/cli/defrag-matrix.inc"
