#!/bin/sh
# A run cut by a limit reads ahead only for the units it takes
# (defrag/units.h: units_fit).  On e2fragimg's nearly full
# 1 KiB-block disks, the plan made for a window of four fifths of the
# plain plan's longest unit (defrag-window.sh) starts with three small
# staging units before one too long for it; a run of
# those three used to read ahead, for the long unit it would not start,
# a buffer of its sources (55 MiB of the ext3 disk's 64: on a rotating
# disk, most of the window).  Every range the cut run asks the page cache
# to read ahead (strace: fadvise64 WILLNEED) must hold a block some file
# left in the run (debugfs, defrag-window-reads.py); e2fsck -fn clean,
# every file intact.  Skips without strace, or where it cannot trace.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
need_strace

for fs in ext2 ext3; do
	img=$T/$fs.img
	nearfull_disk $fs "$img"
	e2defrag --mbps 1 -n --json "$img" > "$T/plain.json" 2>/dev/null
	w=$(json_get "$T/plain.json" 'int(j["plan"]["longest_unit_seconds"] * 0.8)')
	e2defrag --mbps 1 -n --json --max-time "$w" --max-units 3 "$img" > "$T/win.json" 2>/dev/null
	set -- $(json_get "$T/win.json" '" ".join(str(v) for v in (j["plan"]["units_for_window"],
		j["plan"]["units_within_limit"], j["plan"]["units"]))')
	[ "$1 $2" = "True 3" ] && [ "$3" -gt 3 ] ||
		fail "$fs: no window's plan cut after 3 units (for window $1, within $2 of $3 units)"

	cp "$img" "$T/cut.img"
	strace -f -qq -e trace=fadvise64 -o "$T/trace" \
		e2defrag --mbps 1 --max-time "$w" --max-units 3 "$T/cut.img" > "$T/cut.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/cut.out"; fail "$fs: the cut run exited $rc, expected 1"; }
	check_clean "$T/cut.img"
	snapshot "$T/cut.img" "$T/cut.files.json"
	same_snapshot "$T/files.json" "$T/cut.files.json"
	python3 "$top_srcdir/tests/cli/defrag-window-reads.py" "$img" "$T/cut.img" "$T/trace" ||
		fail "$fs: the run cut after 3 units read ahead for moves it did not make"
	echo "ok $fs: a run of 3 of the $3 units (window $w s) reads ahead only for its own"
done
