# corpus-lib.sh --- sourced by corpus-1.sh and corpus-2.sh, which set
# $shard to 0 or 1: each takes every second image, so that the two halves
# run side by side under `make -j2 check`.
#
# e2fsprogs' own test images (../shared/corpus, beside the project; most
# are deliberately corrupted): every program survives every one, under
# ASan/UBSan when built with --enable-sanitizers (no crash, no sanitizer
# report, no hang), and e2defrag never writes a damaged one.
#
#   e2frag --json        exit 0, 1 or 8, valid JSON, the image unchanged
#                        (and the text report of every second image);
#   e2fragmap            shows the map and quits on q, or exits 8 (on a
#                        pty, q typed once the map is drawn: pty_run.py);
#   e2defrag -n          exit 0, 1 or 8, the image unchanged;
#   e2defrag -f          on a copy.  Where e2fsck -fn finds a problem
#                        (or is one of the two images it does not end
#                        on, f_illitable_flexbg and f_misstable: they are
#                        damaged, and not run through it), the copy stays
#                        byte-identical and
#                        the exit is 0, 1 (nothing moved) or 8.  Where
#                        e2fsck -fn finds nothing, a run that writes leaves
#                        the image clean for e2fsck -fn and every file as
#                        it was (debugfs rdump, sha256 of each file); a
#                        refusal (exit 8) must come from the superblock's
#                        state or features, never from a damage check
#                        that e2fsck disagrees with.
. "$top_srcdir/tests/lib/common.sh"

corpus=${E2F_SHARED:-$top_srcdir/../shared}/corpus/e2fsprogs-images
[ -d "$corpus" ] || skip "no corpus at $corpus"

# Sanitizer reports must not hide behind the programs' own exit codes.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=87:print_stacktrace=1"

# Limits that only a hang reaches: a loaded CI machine under the
# sanitizers may take many times what an idle one does.
limit=120
# e2fsck -fn runs for over ten minutes without ending on these two.
fsck_hangs=" f_illitable_flexbg.img.gz f_misstable.img.gz "

index=0 count=0 bad=0 wrote=0 refused=0
problem() { echo "$name: $*"; bad=$((bad + 1)); }

# ran WHAT STATUS ALLOWED...: the status is one of ALLOWED, and no
# sanitizer report in $T/err.
ran() {
	what=$1 st=$2
	shift 2
	if [ "$st" -eq 124 ]; then
		problem "$what: hung (killed)"
	else
		case " $* " in
		*" $st "*) ;;
		*) problem "$what: exit $st"; head -20 "$T/err" ;;
		esac
	fi
	if grep -qE "Sanitizer|runtime error" "$T/err"; then
		problem "$what: sanitizer report"; head -20 "$T/err"
	fi
}

# tree IMG DIR: "sha256 type path" of every file in IMG, per debugfs rdump.
tree() {
	rm -rf "$2"
	mkdir -p "$2"
	debugfs -R "rdump / $2" "$1" > /dev/null 2>&1
	(cd "$2" && find . -type f -exec sha256sum {} + | sort -k 2
	 find . ! -type f -printf '%y %p %l\n' | sort -k 2)
}

for f in "$corpus"/*; do
	name=$(basename "$f")
	case $f in
	*.gz) unpack="gunzip -c" ;;
	*.bz2) unpack="bunzip2 -c" ;;
	*.img) unpack="cat" ;;
	*) continue ;;
	esac
	index=$((index + 1))
	[ $((index % 2)) -eq "$shard" ] || continue
	$unpack "$f" > "$T/img" 2>/dev/null || fail "$name: does not unpack"
	before=$(sha256sum < "$T/img")

	# e2frag
	modes=json
	[ $((count % 2)) -eq 0 ] && modes="json text"
	for mode in $modes; do
		opt=; [ $mode = json ] && opt=--json
		run_status timeout $limit e2frag $opt "$T/img" > "$T/out" 2> "$T/err"
		ran "e2frag $opt" "$status" 0 1 8
		if [ $mode = json ] && [ "$status" -ne 8 ] &&
		   ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null; then
			problem "--json output is not valid JSON"
		fi
	done

	# e2fragmap: the map drawn, then q; or one line and exit 8.
	run_status env TERM=xterm python3 "$top_srcdir/tests/lib/pty_run.py" \
		--wait '?:keys' --keys q --timeout $limit -- \
		e2fragmap "$T/img" > "$T/err" 2>&1
	ran e2fragmap "$status" 0 8
	if [ "$status" -eq 0 ] && ! grep -q "?:keys" "$T/err"; then
		problem "e2fragmap: exit 0 without showing the map"
	fi

	# e2defrag -n
	run_status timeout $limit e2defrag -n "$T/img" > "$T/out" 2> "$T/err"
	ran "e2defrag -n" "$status" 0 1 8
	[ "$(sha256sum < "$T/img")" = "$before" ] || problem "e2frag, e2fragmap or e2defrag -n changed the image"

	# Damaged or clean, by e2fsck -fn (a problem it only reports counts).
	clean=no
	cp "$T/img" "$T/fsck.img"
	case $fsck_hangs in
	*" $name "*) status=4; echo "(e2fsck -fn does not end on it)" > "$T/fsck.out" ;;
	*) run_status timeout $limit e2fsck -fn "$T/fsck.img" > "$T/fsck.out" 2>&1 ;;
	esac
	[ "$status" -ne 124 ] || problem "e2fsck -fn did not end in $limit s: is it a new hang?"
	# ("Optimize? no" is e2fsck offering a better extent tree: not damage.)
	[ "$status" -eq 0 ] && ! grep -v 'Optimize? no$' "$T/fsck.out" |
		grep -qE '\? no$|IGNORED' && clean=yes

	# e2defrag on a copy
	cp "$T/img" "$T/copy"
	run_status timeout $limit e2defrag -f "$T/copy" > "$T/out" 2> "$T/err"
	if [ $clean = no ]; then
		ran "e2defrag (damaged)" "$status" 0 1 8
		cmp -s "$T/img" "$T/copy" || problem "damaged, but e2defrag wrote to it (exit $status)"
		[ "$status" -eq 8 ] && refused=$((refused + 1))
	else
		ran "e2defrag (clean)" "$status" 0 1 8
		if grep -q "run e2fsck -f first" "$T/err"; then
			problem "e2defrag calls it damaged, e2fsck -fn does not: $(head -1 "$T/err")"
		fi
		if ! cmp -s "$T/img" "$T/copy"; then
			wrote=$((wrote + 1))
			[ "$status" -ne 8 ] || problem "e2defrag refused but wrote"
			timeout $limit e2fsck -fn "$T/copy" > "$T/fsck.out" 2>&1 ||
				{ problem "not clean after e2defrag"; head -10 "$T/fsck.out"; }
			tree "$T/img" "$T/before" > "$T/before.sums"
			tree "$T/copy" "$T/after" > "$T/after.sums"
			cmp -s "$T/before.sums" "$T/after.sums" ||
				{ problem "files differ after e2defrag"; diff "$T/before.sums" "$T/after.sums" | head; }
		fi
	fi
	count=$((count + 1))
done
rm -rf "$T/before" "$T/after"
note "$count of $index images; e2defrag wrote $wrote clean ones and refused $refused damaged ones; $bad problems"
[ "$index" -ge 231 ] || fail "only $index images read from $corpus"
[ "$wrote" -ge 3 ] || fail "e2defrag wrote only $wrote images: the clean ones were not exercised"
[ "$bad" -eq 0 ] || fail "$bad problems"
