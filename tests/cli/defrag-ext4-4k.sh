#!/bin/sh
# e2defrag on ext4 with 4 KiB blocks: see defrag-matrix.inc.
TYPE=ext4 BS=4096
. "$top_srcdir/tests/cli/defrag-matrix.inc"
