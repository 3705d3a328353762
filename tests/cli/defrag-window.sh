#!/bin/sh
# A plan made for the window (planner/plan_search.c, plan_opts.window):
# on e2fragimg's nearly full 1 KiB-block disks the plan that writes least
# packs the recordings with direct moves, in sweeps, as one long unit; a
# --max-time shorter than that unit (nine tenths of it: the window plan's
# longest unit, as a run that ends after it with its last commit and the
# journal's checkpoint, takes 112 s of ext3's 118) gets the plan whose units fit (the
# moves on a slow modeled disk, --mbps 1, so that the window is minutes
# and no scan or plan uses it up), as many files at best, writing at most
# twice what needed moving, and says so.  That plan's units each leave the
# filesystem no worse (runs cut after 1 and 3 units: pieces and read time
# from debugfs, interleave sets), e2fsck -fn clean, every file intact;
# one whole run in the window reaches what one run without a window
# does, and so do nights of 3 units.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }

for fs in ext2 ext3; do
	img=$T/$fs.img
	nearfull_disk $fs "$img"
	cp "$img" "$T/one.img"
	e2defrag --mbps 1 "$T/one.img" > /dev/null 2>&1 || fail "$fs: one run"
	figures "$T/one.img" "$T/one"

	# Without a window: the plan that writes least, one unit most of it.
	e2defrag --mbps 1 -n --json "$img" > "$T/plain.json" 2>/dev/null
	[ "$(json_get "$T/plain.json" 'j["plan"]["units_for_window"]')" = False ] ||
		fail "$fs: a plan made for a window without --max-time"
	w=$(json_get "$T/plain.json" 'int(j["plan"]["longest_unit_seconds"] * 0.9)')
	best=$(json_get "$T/plain.json" 'j["plan"]["files_best"]')
	[ "$w" -gt 20 ] || fail "$fs: the longest unit is only $w/0.9 s: no case"

	# With a window shorter than that unit: a plan whose units fit.
	e2defrag --mbps 1 -n --json --max-time "$w" "$img" > "$T/win.json" 2>/dev/null
	set -- $(json_get "$T/win.json" '" ".join(str(v) for v in (j["plan"]["units_for_window"],
		j["plan"]["longest_unit_seconds"] <= '"$w"', j["plan"]["files_best"],
		j["plan"]["bytes_to_write"] <= 2 * j["plan"]["bytes_needing_move"], j["plan"]["units"]))')
	[ "$1 $2 $3 $4" = "True True $best True" ] ||
		fail "$fs --max-time $w: for window $1, fits $2, at best $3 (without: $best), within twice $4"
	e2defrag --mbps 1 -n --max-time "$w" "$img" > "$T/win.txt" 2>&1
	grep -q "^  window: *units made to fit --max-time" "$T/win.txt" ||
		{ cat "$T/win.txt"; fail "$fs: -n does not say the plan is made for the window"; }
	echo "ok $fs: a window of $w s gets $5 units that fit, $best files at best"

	# Its units each leave the disk no worse.
	for n in 1 3; do
		cp "$img" "$T/cut.img"
		stopped "$T/cut.img" "$T/run.json" "$fs --max-units $n" \
			--mbps 1 --max-time "$w" --max-units $n
		[ "$(json_get "$T/run.json" 'j["plan"]["units_for_window"]')" = True ] ||
			fail "$fs --max-units $n: the run did not take the window's plan"
		figures "$T/cut.img" "$T/after"
		noworse "$T/before" "$T/after" "$fs window, $n units"
		echo "ok $fs window, $n units: $(tr '\n' ' ' < "$T/before")-> $(tr '\n' ' ' < "$T/after")"
	done

	# Nights of 3 units each: each leaves the disk no worse than the night
	# before, and they reach what one run without a window does.  Planned
	# again after a night, the plan is the same less the units done, and
	# so are its units' estimates (iomodel.c charges a read-ahead to the
	# unit it reads for: before, ext3's first night had the long unit at
	# 72 s, the reads for it charged to the three before it, and every
	# night after found it at 134 s, longer than the window, and stopped).
	cp "$img" "$T/nights.img"
	cp "$T/before" "$T/last"; cp "$T/before.sets" "$T/last.sets"
	k=0
	while [ $k -lt 40 ]; do
		cp "$T/nights.img" "$T/prev.img"
		e2defrag --mbps 1 --max-time "$w" --max-units 3 "$T/nights.img" > /dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] || fail "$fs: night $k exit $rc"
		k=$((k + 1))
		figures "$T/nights.img" "$T/nights"
		noworse "$T/last" "$T/nights" "$fs: night $k"
		cp "$T/nights" "$T/last"; cp "$T/nights.sets" "$T/last.sets"
		[ $rc -eq 0 ] && break
		cmp -s "$T/nights.img" "$T/prev.img" && break
	done
	check_clean "$T/nights.img"
	snapshot "$T/nights.img" "$T/nights.json"
	same_snapshot "$T/files.json" "$T/nights.json"
	cmp -s "$T/one" "$T/nights" ||
		fail "$fs: $k nights reach $(cat "$T/nights"), one run $(cat "$T/one")"
	echo "ok $fs: $k nights of 3 units, each no worse: $(tr '\n' ' ' < "$T/nights")"
	cp "$img" "$T/night.img"
	e2defrag --mbps 1 --max-time "$w" "$T/night.img" > "$T/night.txt" 2>&1 ||
		{ cat "$T/night.txt"; fail "$fs: one night in the window: exit $?"; }
	check_clean "$T/night.img"
	figures "$T/night.img" "$T/night"
	cmp -s "$T/one" "$T/night" ||
		fail "$fs: a night in the window reaches $(cat "$T/night"), one run $(cat "$T/one")"
	echo "ok $fs: one night of $w s reaches what one run does: $(tr '\n' ' ' < "$T/one")"
done
