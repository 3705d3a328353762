#!/bin/sh
# Every input make fuzz once crashed a program on (tests/fuzz/regress/,
# gzipped images) goes through both fuzz targets again, built as the
# programs are (tests/fuzz/replay: e2frag's reports, e2fragmap's map, and
# e2defrag -n's checks and plan; tests/fuzz/replay-run: a whole e2defrag
# run in memory and its oracle), through e2frag and e2defrag -n -f
# themselves, each ending with an exit status the man pages document and
# no crash or sanitizer report, and through a real e2defrag -f run on a
# copy, which keeps the promise make fuzz-replay checks (replay-kept.sh:
# refused, exit 8 and the image unchanged; accepted, e2fsck -fn clean and
# every file as it was).
. "$top_srcdir/tests/lib/common.sh"

dir=$T
n=0
for gz in "$top_srcdir"/tests/fuzz/regress/*.img.gz; do
	[ -e "$gz" ] || continue
	name=$(basename "$gz" .gz)
	gzip -dc "$gz" > "$dir/$name" || exit 1
	n=$((n + 1))
done
[ "$n" -gt 0 ] || skip "no regression inputs in tests/fuzz/regress"

fail=0
# The target, all inputs in one process (ASan and UBSan abort on a report).
if ! "$top_builddir/tests/fuzz/replay" "$dir"/*.img > "$dir/replay.out" 2>&1 ||
   ! grep -qx "replayed $n inputs" "$dir/replay.out"; then
	echo "FAIL: replay"
	cat "$dir/replay.out"
	fail=1
fi
if ! "$top_builddir/tests/fuzz/replay-run" "$dir"/*.img > "$dir/replay-run.out" 2>&1 ||
   ! grep -qx "replayed $n inputs" "$dir/replay-run.out"; then
	echo "FAIL: replay-run"
	cat "$dir/replay-run.out"
	fail=1
fi
# The promise, on copies (the inputs stay as they are for the loop below).
mkdir "$dir/kept" && cp "$dir"/*.img "$dir/kept/" || exit 1
TMPDIR=$dir sh "$top_srcdir/tests/fuzz/replay-kept.sh" e2defrag "$dir/kept" ||
	fail=1
# The programs.  e2frag: 0, 1 or 8; e2defrag -n: 0, 1 or 8.
for img in "$dir"/*.img; do
	for prog in "e2frag" "e2frag --json" "e2defrag -n -f"; do
		# shellcheck disable=SC2086
		$prog "$img" > "$dir/out" 2> "$dir/err"
		rc=$?
		case $rc in
		0|1|8) ;;
		*) echo "FAIL: $prog $(basename "$img"): exit $rc"; fail=1 ;;
		esac
		if grep -qE 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$dir/err"; then
			echo "FAIL: $prog $(basename "$img"): sanitizer report"
			head -n 20 "$dir/err"
			fail=1
		fi
	done
done
echo "$n regression inputs replayed"
exit $fail
