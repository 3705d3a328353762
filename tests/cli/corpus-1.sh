#!/bin/sh
# Every program on every even-numbered image of e2fsprogs' corpus (../shared/corpus):
# see corpus-lib.sh.
shard=0
. "$top_srcdir/tests/cli/corpus-lib.sh"
