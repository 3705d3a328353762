#!/bin/sh
# e2fsprogs' own corrupted test images (../shared/corpus, beside the
# project; or where configure --with-shared-dir says): e2frag must survive
# every one, under ASan/UBSan when built with
# --enable-sanitizers: no crash, no sanitizer report, no hang, exit 0, 1 or
# 8, and the image byte-identical afterwards.
. "$top_srcdir/tests/lib/common.sh"

corpus=${E2F_SHARED:-$top_srcdir/../shared}/corpus/e2fsprogs-images
[ -d "$corpus" ] || skip "no corpus at $corpus"

# Sanitizer reports must not hide behind e2frag's own exit codes.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=87:print_stacktrace=1"

count=0 bad=0
for f in "$corpus"/*; do
	name=$(basename "$f")
	case $f in
	*.gz) unpack="gunzip -c" ;;
	*.bz2) unpack="bunzip2 -c" ;;
	*.img) unpack="cat" ;;
	*) continue ;;
	esac
	$unpack "$f" > "$T/img" 2>/dev/null || fail "$name: does not unpack"
	before=$(sha256sum < "$T/img")
	for mode in text json; do
		opt=; [ $mode = json ] && opt=--json
		run_status timeout 30 e2frag $opt "$T/img" > "$T/out" 2> "$T/err"
		case $status in
		0|1|8) ;;
		124) echo "$name ($mode): hung (killed after 30 s)"; bad=$((bad + 1)) ;;
		*) echo "$name ($mode): exit $status"; head -20 "$T/err"; bad=$((bad + 1)) ;;
		esac
		if grep -qE "Sanitizer|runtime error" "$T/err"; then
			echo "$name ($mode): sanitizer report"; head -20 "$T/err"; bad=$((bad + 1))
		fi
		if [ $mode = json ] && [ "$status" -ne 8 ] &&
		   ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null; then
			echo "$name: --json output is not valid JSON"; bad=$((bad + 1))
		fi
	done
	[ "$(sha256sum < "$T/img")" = "$before" ] || { echo "$name: image changed"; bad=$((bad + 1)); }
	count=$((count + 1))
done
note "$count images, $bad problems"
[ "$count" -ge 231 ] || fail "only $count images read from $corpus"
[ "$bad" -eq 0 ] || fail "$bad problems"
