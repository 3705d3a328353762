#!/bin/sh
# Bad command lines exit 16 with one message, --help and --version 0;
# a PATH that is not in the filesystem exits 8; nothing is written.
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/fs.img" ext4
cp "$T/fs.img" "$T/orig.img"
expect_rc 0 e2defrag --help
grep -q "Usage: e2defrag" "$T/out" || fail "--help"
expect_rc 0 e2defrag --version
grep -q "^e2defrag " "$T/out" || fail "--version"
expect_rc 16 e2defrag
for args in "--bogus" "-x" "--min-score 101" "--min-score x" "--newer-than yesterday" \
	    "--newer-than 5y" "--max-time -1" "-C notanumber" "-C 99" "--buffer 1" \
	    "--rpm 0" "--seek-ms 0.1 --track-seek-ms 2" "-z"; do
	expect_rc 16 e2defrag $args "$T/fs.img"
	[ "$(wc -l < "$T/out")" -le 2 ] || { cat "$T/out"; fail "'$args': more than a short message"; }
done
expect_rc 8 e2defrag "$T/fs.img" /no/such/file
grep -q "no such file" "$T/out" || fail "missing PATH not named"
cmp -s "$T/fs.img" "$T/orig.img" || fail "a refused command line wrote to the image"
# Dates and durations that are valid.
for when in 2020-01-01 "2020-01-01 12:00" 2020-01-01T12:00:00 @0 90s 30m 12h 7d 2w; do
	expect_rc 0 e2defrag -n --newer-than "$when" "$T/fs.img"
done
exit 0
