#!/bin/sh
# e2defrag on ext4 with 1 KiB blocks: see defrag-matrix.inc.
TYPE=ext4 BS=1024
. "$top_srcdir/tests/cli/defrag-matrix.inc"
