#!/bin/sh
# cutsweep.sh --- the power-cut harness.
#
#   cutsweep.sh [-a] [-r RANDOM] [-p PREFIX] [-t TORN] [-s SEED] [-n NAME] IMAGE WORKLOAD
#
# Runs WORKLOAD, a shell command that writes to the image named by $IMAGE
# (testmove "$IMAGE" /a /b, or e2defrag "$IMAGE"), on a copy of IMAGE with
# every write and flush logged (E2FRAG_IOLOG, writer/writer.h).  Then, for
# each cut point, rebuilds the image a power cut there would leave
# (iolog_replay): at every flush boundary, at RANDOM seeded random subsets
# of the writes between two flushes (a disk cache reorders writes between
# barriers), at PREFIX prefixes of them (with -a, at every prefix of the
# writes between two flushes), and at TORN torn writes: a disk
# writes only its 512-byte sector whole, so the write in flight may reach
# it in part, the first sectors new and the rest old, or any mix (the
# writes a tear could leave neither old nor new are listed by iolog_replay
# tears; the cuts are spread over the kinds of block they write: journal
# descriptor, copy, commit, revoke and superblock, superblock, descriptors,
# bitmaps, inode table, mapping blocks, data; the other writes of the
# epoch as in a random subset).  A journal's log area is filled with old
# bytes first (age_journal), as a used journal's is, so that a tear shows.
# Each is recovered as a user would (e2fsck -fy) and checked:
#   1. nothing lost: every path there before the run is there, the same
#      inode with the same type, permission bits, owner, group, link
#      count, size, contents (sha256), symlink target and extended
#      attributes (lib.sh's snapshot, from debugfs);
#   2. with a journal, replaying the journal alone (e2fsck -E journal_only)
#      finds no corrupt transaction and leaves a filesystem e2fsck -fn
#      finds clean; and before that, a log with data (dumpe2fs's journal
#      start) only under a superblock that says needs_recovery (else the
#      kernel wipes the log at mount, and the boot's e2fsck -p stops:
#      "needs_recovery flag is clear, but journal has data");
#   3. without, e2fsck fixes nothing but leaked blocks and counts (and,
#      with metadata_csum, a block bitmap checksum: see fsck_only_leaks).
# Prints "NAME: torn cuts T: KIND N, ..." and "NAME: cut points N, data
# lost L, not clean after replay C" (and the failing cuts on stderr);
# exits 0 when L and C are 0.  A step of the harness itself that fails
# (iolog_replay, a copy, the snapshot) ends it with exit 99 and no
# summary: a cut that was never made is no cut that passed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/crash/lib.sh"
need e2fsck debugfs dumpe2fs iolog_replay sha256sum cmp
need_iolog

random=50 prefix=10 torn=0 seed=1 name= every=0
while getopts ar:p:t:s:n: opt; do
	case $opt in
	a) every=1 ;;
	r) random=$OPTARG ;;
	p) prefix=$OPTARG ;;
	t) torn=$OPTARG ;;
	s) seed=$OPTARG ;;
	n) name=$OPTARG ;;
	*) echo "usage: $0 [-a] [-r N] [-p N] [-t N] [-s SEED] [-n NAME] IMAGE WORKLOAD" >&2; exit 16 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-a] [-r N] [-p N] [-t N] [-s SEED] [-n NAME] IMAGE WORKLOAD" >&2; exit 16; }
image=$1 workload=$2
: "${name:=$(basename "$image")}"
mkwork

# harness WHAT: a step of the harness failed: say so, exit 99.
harness() {
	echo "$name: $1 failed: the sweep is void" >&2
	echo "$name: $1 failed: the sweep is void"
	exit 99
}

cp --sparse=always "$image" "$WORK/base.img" || harness "copying $image"
# Start from what e2fsck calls clean, so that what it finds after a cut
# is the run's doing (generated images may hold things it would optimize).
e2fsck -fy "$WORK/base.img" > "$WORK/base.out" 2>&1
e2fsck -fn "$WORK/base.img" > "$WORK/base.out" 2>&1 ||
	{ cat "$WORK/base.out"; echo "$name: the image is not clean to begin with"; exit 99; }
journalled=no
dumpe2fs -h "$WORK/base.img" 2>/dev/null | grep -q '^Filesystem features:.*has_journal' &&
	journalled=yes
if [ $journalled = yes ]; then
	age_journal "$WORK/base.img" "$seed" || harness "age_journal"
	e2fsck -fn "$WORK/base.img" > "$WORK/base.out" 2>&1 ||
		{ cat "$WORK/base.out"; echo "$name: not clean after age_journal"; exit 99; }
fi
snapshot "$WORK/base.img" "$WORK/before"

# The run.
cp --sparse=always "$WORK/base.img" "$WORK/run.img" || harness "copying the image"
( export IMAGE="$WORK/run.img" E2FRAG_IOLOG="$WORK/run.log"; sh -c "$workload" ) \
	> "$WORK/run.out" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$WORK/run.out"; echo "$name: the workload failed (exit $rc)"; exit 99; }
[ -s "$WORK/run.log" ] || { echo "$name: the workload wrote nothing"; exit 99; }

# The log must account for every byte the run changed.  Replaying it
# whole also lists the writes a tear could leave neither old nor new.
iolog_replay info "$WORK/run.log" > "$WORK/info" || harness "iolog_replay info"
cp --sparse=always "$WORK/base.img" "$WORK/full.img" || harness "copying the image"
iolog_replay tears "$WORK/run.log" "$WORK/full.img" > "$WORK/tears" || harness "iolog_replay tears"
cmp -s "$WORK/full.img" "$WORK/run.img" ||
	{ echo "$name: replaying the whole log does not give the image after the run"; exit 99; }
tear_kinds "$WORK/base.img" "$WORK/run.img" "$WORK/tears" > "$WORK/tears.kind" || harness "tear_kinds"

# Cut points: EPOCH MODE ARG [SEED KIND].  Torn cuts take the kinds of
# block in turn, a random write of each kind each time.
awk -v random="$random" -v prefix="$prefix" -v torn="$torn" -v seed="$seed" -v every="$every" '
	FILENAME ~ /tears.kind$/ {
		k = $NF
		if (!(k in nk)) { kinds[nkinds++] = k; nk[k] = 0 }
		we[k, nk[k]] = $2; wi[k, nk[k]++] = $4
		next
	}
	/^epoch/ { n[$2] = $4; if ($4 > 1) big[nbig++] = $2; last = $2 }
	END {
		for (k = 0; k <= last; k++) {
			print k, "prefix", 0
			for (i = 1; every && i < n[k]; i++)
				print k, "prefix", i
		}
		print last, "all", 0
		srand(seed)
		for (i = 0; i < random && nbig; i++) {
			k = big[int(rand() * nbig)]
			print k, "subset", int(rand() * 2147483647)
		}
		for (i = 0; i < prefix && nbig; i++) {
			k = big[int(rand() * nbig)]
			print k, "prefix", 1 + int(rand() * (n[k] - 1))
		}
		for (i = 0; i < torn && nkinds; i++) {
			k = kinds[i % nkinds]
			j = int(rand() * nk[k])
			print we[k, j], "torn", wi[k, j], int(rand() * 2147483647), k
		}
	}' "$WORK/tears.kind" "$WORK/info" > "$WORK/cuts" || harness "listing the cut points"
[ -s "$WORK/cuts" ] || harness "listing the cut points"

# fsck_only_leaks OUT: e2fsck -fy output that fixed nothing but blocks
# marked in use that nothing uses (leaked) and free counts, and the space
# the quota files count for an id (a cut between the inode and the quota
# file blocks: e2fsck -f recomputes it; the id's inode count must agree,
# no entry may be missing).  With
# metadata_csum and no journal, a cut between a block bitmap and the
# descriptor holding its checksum also leaves that checksum to fix: no
# order of two writes avoids it (the kernel's no-journal mode has the
# same window), and the bitmap itself is then old or new, both right.
fsck_only_leaks() {
	awk '
	/^e2fsck [0-9]/ || /^Pass [1-5]/ || /^$/ || /^Fix\? yes$/ { next }
	/^Free blocks count wrong/ { next }
	/^Block bitmap differences: Group [0-9]+ block bitmap does not match checksum\.$/ { next }
	/^FIXED\.$/ { next }
	/^Update quota info for quota type [0-9]+\? yes$/ { next }
	/^\[QUOTA WARNING\] Usage inconsistent for ID [0-9]+:actual \([0-9]+, [0-9]+\) != expected \([0-9]+, [0-9]+\)$/ {
		s = $0; gsub(/[^0-9]+/, " ", s); split(s, v, " ")
		if (v[3] == v[5])	# ID, space, inodes, space, inodes
			next
	}
	/: \*\*\*\*\* FILE SYSTEM WAS MODIFIED \*\*\*\*\*$/ { next }
	/: [0-9]+\/[0-9]+ files .* blocks$/ { next }
	/^Block bitmap differences: / {
		s = $0; sub(/^Block bitmap differences: +/, "", s)
		# only "-N" and "-(N--M)": blocks to free, never "+" (in use
		# yet marked free: a file would share them)
		if (s ~ /^(-[0-9]+|-\([0-9]+--[0-9]+\))( +(-[0-9]+|-\([0-9]+--[0-9]+\)))*$/)
			next
	}
	{ print; bad = 1 }
	END { exit bad }' "$1"
}

cuts=0 lost=0 unclean=0
while read -r epoch mode arg tseed kind; do
	cuts=$((cuts + 1))
	cp --sparse=always "$WORK/base.img" "$WORK/cut.img" || harness "copying the image"
	if [ "$mode" = torn ]; then
		what="cut $epoch torn $arg $tseed ($kind)"
		iolog_replay apply "$WORK/run.log" "$WORK/cut.img" "$epoch" torn "$arg" "$tseed" ||
			harness "$what: iolog_replay apply (exit $?)"
	else
		what="cut $epoch $mode $arg"
		iolog_replay apply "$WORK/run.log" "$WORK/cut.img" "$epoch" "$mode" $([ "$mode" = all ] || echo "$arg") ||
			harness "$what: iolog_replay apply (exit $?)"
	fi
	cp --sparse=always "$WORK/cut.img" "$WORK/user.img" || harness "copying the cut image"
	e2fsck -fy "$WORK/user.img" > "$WORK/user.out" 2>&1
	urc=$?
	snapshot "$WORK/user.img" "$WORK/after"
	if [ $urc -gt 1 ] || ! cmp -s "$WORK/before" "$WORK/after"; then
		lost=$((lost + 1))
		echo "$name: $what: data lost (e2fsck -fy exit $urc)" >&2
		snapshot_diff "$WORK/before" "$WORK/after" | head -5 >&2
	fi
	if [ $journalled = yes ]; then
		dumpe2fs -h "$WORK/cut.img" > "$WORK/sb.out" 2>/dev/null
		if grep -q '^Journal start: *[1-9]' "$WORK/sb.out" &&
		   ! grep -q '^Filesystem features:.* needs_recovery' "$WORK/sb.out"; then
			unclean=$((unclean + 1))
			echo "$name: $what: the log has data, the superblock no needs_recovery" >&2
		fi
		cp --sparse=always "$WORK/cut.img" "$WORK/jo.img" || harness "copying the cut image"
		# A transaction whose commit block fails its checksum is not
		# replayed, and recovery says it was corrupt: a torn commit
		# the writer could have avoided (writer/journal.c).
		if ! e2fsck -y -E journal_only "$WORK/jo.img" > "$WORK/jo.out" 2>&1 ||
		   grep 'was corrupt' "$WORK/jo.out" > "$WORK/fsck.out" ||
		   ! e2fsck -fn "$WORK/jo.img" > "$WORK/fsck.out" 2>&1; then
			unclean=$((unclean + 1))
			echo "$name: $what: not clean after replaying the journal" >&2
			grep -v '^Pass [1-5]' "$WORK/fsck.out" | head -8 >&2
		fi
	elif ! fsck_only_leaks "$WORK/user.out" > "$WORK/bad" || [ $urc -gt 1 ]; then
		unclean=$((unclean + 1))
		echo "$name: $what: e2fsck fixed more than leaks (exit $urc)" >&2
		head -8 "$WORK/bad" >&2
	fi
done < "$WORK/cuts"

if [ "$torn" -gt 0 ]; then
	echo "$name: torn cuts $(awk '$2 == "torn"' "$WORK/cuts" | wc -l):" \
		$(awk '$2 == "torn" { print $5 }' "$WORK/cuts" | sort | uniq -c |
		  awk '{ printf "%s %d, ", $2, $1 }' | sed 's/, $//')
fi
echo "$name: cut points $cuts, data lost $lost, not clean after replay $unclean"
[ $lost -eq 0 ] && [ $unclean -eq 0 ]
