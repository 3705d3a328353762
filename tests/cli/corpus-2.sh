#!/bin/sh
# Every program on every odd-numbered image of e2fsprogs' corpus (../shared/corpus):
# see corpus-lib.sh.
shard=1
. "$top_srcdir/tests/cli/corpus-lib.sh"
