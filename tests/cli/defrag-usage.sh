#!/bin/sh
# Bad command lines exit 16 with one message (--max-time 1x names the
# units it takes), --help and --version 0;
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
	    "--newer-than 5y" "--max-time -1" "--max-time 1x" "--max-time 1h30m" "--max-time 1e3" "--max-time +5" "--max-time 0x10" "--max-time inf" "-C notanumber" "-C 99" "--buffer 1" \
	    "--rpm 0" "--seek-ms 0.1 --track-seek-ms 2" "-z"; do
	expect_rc 16 e2defrag $args "$T/fs.img"
	[ "$(wc -l < "$T/out")" -le 2 ] || { cat "$T/out"; fail "'$args': more than a short message"; }
done
# A count is digits alone, as a duration is (strtoull would take a sign
# and blanks before it).
for units in " 3" "+3" "-1" 0 3x; do
	expect_rc 16 e2defrag --max-units "$units" "$T/fs.img"
	grep -q "^e2defrag: --max-units wants a number from 1 up, not '$units'" "$T/out" ||
		{ cat "$T/out"; fail "--max-units '$units': no clear message"; }
done
# A duration with a unit it does not know is named, with the ones it does.
expect_rc 16 e2defrag --max-time 1x "$T/fs.img"
grep -q "^e2defrag: --max-time wants a duration: .* not '1x'" "$T/out" || { cat "$T/out"; fail "--max-time 1x: no clear message"; }
expect_rc 8 e2defrag "$T/fs.img" /no/such/file
grep -q "no such file" "$T/out" || fail "missing PATH not named"
cmp -s "$T/fs.img" "$T/orig.img" || fail "a refused command line wrote to the image"
# Dates and durations that are valid.
for when in 2020-01-01 "2020-01-01 12:00" 2020-01-01T12:00:00 @0 90s 30m 12h 7d 2w; do
	expect_rc 0 e2defrag -n --newer-than "$when" "$T/fs.img"
done
for time in 0 90 90s 30m 1h 1.5h; do
	expect_rc 0 e2defrag -n --max-time "$time" "$T/fs.img"
done
exit 0
