# defrag-lib.sh --- sourced by tests/cli/defrag-*.sh: small images made
# with mke2fs and debugfs, and the oracles e2defrag is checked against
# (debugfs, e2fsck -fn, e2frag --json, sha256), never e2defrag itself.

set -u
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
export LC_ALL=C
ORACLE="python3 $top_srcdir/tests/cli/defrag-oracle.py"
# avoidable IMG: files in more pieces than their best, per the oracle.
. "$top_srcdir/tests/lib/best.sh"

for tool in mke2fs debugfs e2fsck python3 cmp; do
	command -v "$tool" >/dev/null 2>&1 || { echo "skip: $tool not found"; exit 77; }
done
command -v e2defrag >/dev/null 2>&1 || { echo "e2defrag not built" >&2; exit 1; }

# The test's own stderr, for the second-run check below when a caller
# sends e2defrag's output elsewhere.
exec 9>&2

T=$(mktemp -d "${TMPDIR:-/tmp}/e2defrag-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# gen FILE BYTES SEED: reproducible random contents.
gen() {
	python3 -c 'import random, sys
r = random.Random(int(sys.argv[3]))
with open(sys.argv[1], "wb") as f:
    n = int(sys.argv[2])
    while n > 0:
        k = min(n, 1 << 20)
        f.write(r.getrandbits(8 * k).to_bytes(k, "little"))
        n -= k' "$1" "$2" "$3"
}

# gen_sparse FILE SIZE SEED OFFSET...: holes, with 64 KiB of data at each OFFSET.
gen_sparse() {
	python3 -c 'import random, sys
r = random.Random(int(sys.argv[3]))
with open(sys.argv[1], "wb") as f:
    for off in sys.argv[4:]:
        f.seek(int(off))
        f.write(r.getrandbits(8 * 65536).to_bytes(65536, "little"))
    f.truncate(int(sys.argv[2]))' "$@"
}

# dbg IMG CMDFILE: run debugfs -w commands, failing on any error message.
dbg() {
	out=$(debugfs -w -f "$2" "$1" 2>&1 >/dev/null | grep -v '^debugfs [0-9]' |
	      grep -iv 'Allocated inode' || true)
	[ -z "$out" ] || fail "debugfs on $1: $out"
}

# make_image IMG TYPE BLOCKSIZE SIZE [MKE2FS-OPTIONS...]
make_image() {
	img=$1 type=$2 bs=$3 size=$4
	shift 4
	mke2fs -q -F -t "$type" -b "$bs" -E root_owner=0:0 "$@" "$img" "$size" \
		>/dev/null 2>&1 || fail "mke2fs -t $type -b $bs $img $size"
	# Not "needs a check": as if e2fsck had just run.
	debugfs -w -R "ssv lastcheck now" "$img" >/dev/null 2>&1
}

# interleave IMG DIR CHUNK N NAME...: write the NAMEd files (N chunks of
# CHUNK bytes each) so that their blocks alternate chunk by chunk, as
# recorders writing at once leave them: spacer files fill a region, and
# each stream in turn is written into the holes its share of spacers
# leaves.
interleave() {
	img=$1 dir=$2 chunk=$3 n=$4
	shift 4
	k=$#
	gen "$T/chunk" "$chunk" 7
	cmds=$T/cmds
	: > "$cmds"
	echo "mkdir /.sp" >> "$cmds"
	i=0
	while [ $i -lt $((n * k)) ]; do
		echo "write $T/chunk /.sp/s$i" >> "$cmds"
		i=$((i + 1))
	done
	dbg "$img" "$cmds"
	s=0
	for name in "$@"; do
		: > "$cmds"
		i=$s
		while [ $i -lt $((n * k)) ]; do
			echo "rm /.sp/s$i" >> "$cmds"
			i=$((i + k))
		done
		gen "$T/stream" $((chunk * n)) $((s + 100))
		echo "write $T/stream $dir/$name" >> "$cmds"
		dbg "$img" "$cmds"
		s=$((s + 1))
	done
	echo "rmdir /.sp" > "$cmds"
	dbg "$img" "$cmds"
}

# fragment IMG SRC DEST CHUNK: write SRC to DEST in the holes of a region
# of spacers, every other one removed, so that it comes out in pieces.
fragment() {
	img=$1 src=$2 dest=$3 chunk=$4
	size=$(stat -c %s "$src")
	n=$(( (size + chunk - 1) / chunk ))
	gen "$T/chunk" "$chunk" 9
	cmds=$T/cmds
	: > "$cmds"
	echo "mkdir /.fr" >> "$cmds"
	i=0
	while [ $i -lt $((2 * n)) ]; do
		echo "write $T/chunk /.fr/s$i" >> "$cmds"
		i=$((i + 1))
	done
	i=1
	while [ $i -lt $((2 * n)) ]; do
		echo "rm /.fr/s$i" >> "$cmds"
		i=$((i + 2))
	done
	echo "write $src $dest" >> "$cmds"
	i=0
	while [ $i -lt $((2 * n)) ]; do
		echo "rm /.fr/s$i" >> "$cmds"
		i=$((i + 2))
	done
	echo "rmdir /.fr" >> "$cmds"
	dbg "$img" "$cmds"
}

# check_clean IMG: e2fsck -fn finds nothing.
check_clean() {
	e2fsck -fn "$1" > "$T/fsck.out" 2>&1 ||
		{ cat "$T/fsck.out" >&2; fail "e2fsck -fn $1 is not clean"; }
}

# need_strace: skip (77) where the run cannot be traced.
need_strace() {
	command -v strace >/dev/null 2>&1 || { echo "skip: no strace"; exit 77; }
	strace -f -qq -o /dev/null true 2>/dev/null || { echo "skip: strace cannot trace here"; exit 77; }
}

# traced_cost ORIG: e2defrag -J on a copy of ORIG ($T/run.img, left
# e2fsck-clean; its result $T/run.json), every read, write and flush
# traced with strace and costed on the modeled disk by bench/iocost.py,
# which knows nothing of the planner, into $T/cost.json.
traced_cost() {
	_sc=openat,open,close,dup,dup2,dup3,lseek,read,write,pread64,pwrite64
	_sc=$_sc,preadv,pwritev,preadv2,pwritev2,fsync,fdatasync,sync,syncfs
	_sc=$_sc,sync_file_range,fadvise64,readahead,ioctl,fallocate
	cp --sparse=always "$1" "$T/run.img" || fail "copy of $1"
	# -C 9: the progress lines mark where the move phase starts.
	strace -f -qq -s 8 -e trace=$_sc -o "$T/trace" \
		"$top_builddir/defrag/e2defrag" -J -C 9 "$T/run.img" > "$T/run.json" 2> "$T/err" 9> /dev/null
	_rc=$?
	[ $_rc -le 1 ] || { cat "$T/err"; fail "$1: e2defrag exited $_rc"; }
	check_clean "$T/run.img"
	python3 "$top_srcdir/bench/iocost.py" --traced "$T/run.img" --progress-fd 9 \
		--result "$T/run.json" "$T/trace" "$1" > "$T/cost.json" ||
		fail "$1: iocost.py"
	rm -f "$T/trace"
}

# snapshot IMG OUT: paths, stat fields and checksums, per debugfs.
snapshot() {
	$ORACLE snapshot "$1" > "$2" || fail "snapshot of $1"
}

same_snapshot() {
	$ORACLE compare "$1" "$2" >&2 || fail "files changed: $1 vs $2"
}

# e2frag_field IMG KEY: a summary figure from e2frag --json.
e2frag_field() {
	e2frag --json "$1" > "$T/e2frag.json" 2>/dev/null
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]])' "$T/e2frag.json" "$2"
}

# check_manifest IMG: every file of the manifest has its sha256, per debugfs
# (dumped under $T, which the test removes: the dumps are as large as IMG).
check_manifest() {
	rm -rf "$T/manifest" && mkdir "$T/manifest" || fail "mkdir $T/manifest"
	python3 - "$1" "$T/manifest" <<'PY' || fail "contents differ from the manifest of $1"
import hashlib, json, os, subprocess, sys
img, d = sys.argv[1], sys.argv[2]
files = json.load(open(img + ".json"))["files"]
cmds = os.path.join(d, "cmds")
with open(cmds, "w") as f:
    for i, x in enumerate(files):
        f.write('dump "%s" %s/%d\n' % (x["path"], d, i))
subprocess.run(["debugfs", "-f", cmds, img], capture_output=True, check=False)
bad = 0
for i, x in enumerate(files):
    p = "%s/%d" % (d, i)
    h = hashlib.sha256(open(p, "rb").read()).hexdigest() if os.path.exists(p) else None
    if h != x["sha256"]:
        print("%s: %s, manifest %s" % (x["path"], h, x["sha256"]))
        bad += 1
sys.exit(1 if bad else 0)
PY
	rm -rf "$T/manifest"
}

# freefrag IMG: "EXTENTS LARGEST_KB" of free space, per e2freefrag.
freefrag() {
	e2freefrag "$1" > "$T/freefrag.out" 2>&1 || fail "e2freefrag $1"
	awk '/^Num. free extent:/ { n = $4 } /^Max. free extent:/ { m = $4 }
	     END { if (n == "" || m == "") exit 1; print n, m }' "$T/freefrag.out" ||
		fail "e2freefrag $1: no figures"
}

# groups IMG: block groups, per dumpe2fs.
groups() {
	dumpe2fs -h "$1" 2>/dev/null | awk -F: '
		/^Block count:/ { b = $2 } /^Blocks per group:/ { g = $2 }
		/^First block:/ { f = $2 }
		END { if (g > 0) print int((b - f + g - 1) / g); else exit 1 }' ||
		fail "dumpe2fs -h $1"
}

# check_free_space IMG JSON EXTENTS0 [LARGEST0_KB]: after the run whose
# e2defrag --json output is JSON, e2freefrag finds no more free extents
# than EXTENTS0 or than there are block groups (and a largest one no
# smaller than LARGEST0_KB), and the figures the run reports are
# e2freefrag's.  The bound is what the tests' workloads reach, a guard
# against losing it; e2defrag(8) does not promise it in general.
check_free_space() {
	_g=$(groups "$1")
	set -- "$1" "$2" "$3" "${4:-0}" $(freefrag "$1")
	[ "$5" -le "$3" ] || [ "$5" -le "$_g" ] ||
		fail "$1: free extents $3 -> $5, in $_g block groups"
	[ "$6" -ge "$4" ] || fail "$1: largest free extent $4 KiB -> $6 KiB"
	[ "$(json_get "$2" 'j["result"]["free_extents_after"]')" -eq "$5" ] ||
		fail "$1: the run reports $(json_get "$2" 'j["result"]["free_extents_after"]') free extents, e2freefrag $5"
	[ "$(json_get "$2" 'j["result"]["largest_free_after"] // 1024')" -eq "$6" ] ||
		fail "$1: the run reports a largest free extent unlike e2freefrag's $6 KiB"
}

# pieces IMG PATH: pieces of PATH, per debugfs's block list.
pieces() {
	$ORACLE pieces "$1" > "$T/pieces.json" || fail "pieces of $1"
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/pieces.json" "$2"
}

# json_get FILE EXPR: evaluate a python expression over the JSON in FILE (as j).
json_get() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# small_image IMG TYPE [BS]: a small image with two interleaved files
# (/rec/a, /rec/b), a fragmented one (/frag) and some that are fine.
small_image() {
	img=$1 type=$2 bs=${3:-4096}
	make_image "$img" "$type" "$bs" 32M
	printf 'mkdir /rec\nmkdir /ok\n' > "$T/c"
	gen "$T/ok1" 100000 21
	printf 'write %s /ok/one\n' "$T/ok1" >> "$T/c"
	dbg "$img" "$T/c"
	interleave "$img" /rec $((bs * 2)) 40 a b
	gen "$T/frag" $((bs * 60)) 22
	fragment "$img" "$T/frag" /frag $((bs * 3))
	check_clean "$img"
}

# expect_rc WANT CMD...: run CMD, its output to $T/out, and check its exit status.
expect_rc() {
	want=$1
	shift
	"$@" > "$T/out" 2>&1
	got=$?
	[ "$got" -eq "$want" ] || { cat "$T/out" >&2; fail "'$*' exited $got, expected $want"; }
}

# refused NAME REGEX IMG: e2defrag, -n, -f and -v each exit 8 on IMG with
# one line on its output that matches REGEX (grep, the whole line), and
# leave IMG byte for byte as it was (cmp).
refused() {
	_name=$1 _re=$2 _img=$3
	cp "$_img" "$T/orig.img"
	for opt in "" -n -f -v; do
		expect_rc 8 e2defrag $opt "$_img"
		[ "$(wc -l < "$T/out")" -eq 1 ] || { cat "$T/out"; fail "$_name: e2defrag $opt said more than one line"; }
		grep -q "$_re" "$T/out" || { cat "$T/out"; fail "$_name: e2defrag $opt: its line does not match '$_re'"; }
		cmp -s "$_img" "$T/orig.img" || fail "$_name: e2defrag $opt changed the image"
	done
	echo "# $_name: $(sed "s|$_img|IMG|" "$T/out")"
}

# fsck_damaged NAME IMG [REGEX]: e2fsck -fn calls IMG damaged (and says
# something matching REGEX, grep -E), the oracle that the test damaged it.
fsck_damaged() {
	# e2fsck -n exits 0 on a bad descriptor checksum, but says so.
	if e2fsck -fn "$2" > "$T/fsck.out" 2>&1 && ! grep -qE '\? no$|IGNORED' "$T/fsck.out"; then
		cat "$T/fsck.out"; fail "$1: e2fsck -fn finds the image clean: the test did not damage it"
	fi
	[ -z "${3:-}" ] || grep -qE "$3" "$T/fsck.out" ||
		{ cat "$T/fsck.out"; fail "$1: e2fsck -fn does not say '$3': the test damaged something else"; }
}

# damaged NAME PATTERN IMG: e2fsck -fn calls IMG damaged, and e2defrag
# refuses it (refused) with one line naming PATTERN and saying to run e2fsck.
damaged() {
	fsck_damaged "$1" "$3"
	refused "$1" "^e2defrag: $3: .*$2.*; run e2fsck -f first\. Nothing was changed\.\$" "$3"
}

# damaged_exactly NAME WHAT IMG [FSCK-REGEX]: the same, WHAT the whole
# problem named (no other found: no "and N more"), and e2fsck -fn saying
# FSCK-REGEX.
damaged_exactly() {
	fsck_damaged "$1" "$3" "${4:-}"
	refused "$1" "^e2defrag: $3: $2; run e2fsck -f first\. Nothing was changed\.\$" "$3"
}

# free_blocks IMG: free blocks, per dumpe2fs.
free_blocks() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Free blocks: *//p'
}

# fill_free IMG PATH: a file (block-mapped, 1 KiB blocks) that takes every
# free block: data plus the indirect blocks it needs.
fill_free() {
	n=$(python3 -c 'import sys
free = int(sys.argv[1])
def meta(n):
    m = 1 if n > 12 else 0
    if n > 268:
        m += 1 + (n - 268 + 255) // 256
    return m
n = free
while n + meta(n) > free:
    n -= 1
print(n)' "$(free_blocks "$1")")
	gen "$T/filler" $((n * 1024)) 31
	printf 'write %s %s\n' "$T/filler" "$2" > "$T/c"
	dbg "$1" "$T/c"
	[ "$(free_blocks "$1")" -eq 0 ] || fail "fill_free left $(free_blocks "$1") blocks free"
}

# crowded IMG SEP FREE-RUNS...: an 8 MiB ext2 image (1 KiB blocks) with /a
# in 40 pieces of 2 blocks, 60 blocks apart, the space between them taken
# by /b (larger than /a, so it cannot be moved out of /a's way), free
# space only in runs of the given sizes, each after a file /sN of SEP
# blocks (10: small enough to be moved out of the way; 100: not), and
# everything else full.
crowded() {
	img=$1 sep=$2
	shift 2
	make_image "$img" ext2 1024 8M
	gen "$T/c2" 2048 41
	gen "$T/c60" $((60 * 1024)) 46
	: > "$T/c"
	i=0
	while [ $i -lt 40 ]; do
		echo "write $T/c2 /x$i" >> "$T/c"
		echo "write $T/c60 /y$i" >> "$T/c"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt 40 ]; do echo "rm /x$i" >> "$T/c"; i=$((i + 1)); done
	gen "$T/a" $((80 * 1024)) 42
	echo "write $T/a /a" >> "$T/c"
	i=0
	while [ $i -lt 40 ]; do echo "rm /y$i" >> "$T/c"; i=$((i + 1)); done
	gen "$T/b" $((2500 * 1024)) 43
	echo "write $T/b /b" >> "$T/c"
	gen "$T/s" $((sep * 1024)) 44
	k=0
	for size in "$@"; do
		gen "$T/hole$k" $((size * 1024)) 45
		echo "write $T/s /s$k" >> "$T/c"
		echo "write $T/hole$k /hole$k" >> "$T/c"
		k=$((k + 1))
	done
	dbg "$img" "$T/c"
	fill_free "$img" /filler
	: > "$T/c"
	k=0
	for size in "$@"; do echo "rm /hole$k" >> "$T/c"; k=$((k + 1)); done
	dbg "$img" "$T/c"
	check_clean "$img"
}

# uninit_map IMG PATH: the logical ranges of PATH's uninitialized extents,
# merged, per debugfs's extent list.
uninit_map() {
	debugfs -R "ex $2" "$1" 2>/dev/null | python3 -c 'import re, sys
r = []
for line in sys.stdin:
    m = re.match(r"\s*(\d+)/\s*(\d+)\s+\d+/\s*\d+\s+(\d+)\s*-\s*(\d+)\s+\d+\s*-\s*\d+\s+\d+\s*(Uninit)?", line)
    if m and m.group(1) == m.group(2) and m.group(5):
        a, b = int(m.group(3)), int(m.group(4))
        if r and r[-1][1] + 1 == a:
            r[-1][1] = b
        else:
            r.append([a, b])
for a, b in r:
    print("%d-%d" % (a, b))'
}

# e2defrag ARGS...: the program, and then, after every run that wrote (not
# -n, exit 0 or 1, not cut short by --max-time), a second run of the same
# options on a copy of the image: one run is a fixed point (e2defrag(8)),
# so the second must leave the copy byte-identical (cmp).  -z and -C are
# left out of the second run (its own undo file would be a new file, and
# the progress descriptor belongs to the first); E2D_NO_SECOND_RUN=1
# turns the check off for a test that means to stop a run half-way.
e2defrag() {
	command e2defrag "$@"
	_rc=$?
	[ "${E2D_NO_SECOND_RUN:-0}" = 1 ] && return $_rc
	[ $_rc -eq 0 ] || [ $_rc -eq 1 ] || return $_rc
	_img= _skip=0 _args= _paths=
	while [ $# -gt 0 ]; do
		case $1 in
		-n|--dry-run|-h|--help|-V|--version|--max-time|--max-time=*) _skip=1 ;;
		-z|-C|--undo|--progress-fd) shift ;;
		-z*|-C*|--undo=*|--progress-fd=*) ;;
		--min-score|--newer-than|--rpm|--mbps|--seek-ms|--track-seek-ms|--buffer)
			_args="$_args $1 $2"; shift ;;
		-*) _args="$_args $1" ;;
		*) if [ -z "$_img" ]; then _img=$1; else _paths="$_paths $1"; fi ;;
		esac
		shift
	done
	[ $_skip -eq 0 ] && [ -f "$_img" ] || return $_rc
	cp "$_img" "$_img.second" || fail "copy of $_img"
	# shellcheck disable=SC2086
	command e2defrag $_args "$_img.second" $_paths > "$T/second.out" 2>&1
	_rc2=$?
	if ! cmp -s "$_img" "$_img.second"; then
		cat "$T/second.out" >&9
		rm -f "$_img.second"
		fail "a second run (e2defrag$_args IMG$_paths) changed $_img: the first was no fixed point" 2>&9
	fi
	rm -f "$_img.second"
	[ $_rc2 -eq $_rc ] || [ $_rc2 -eq 0 ] ||
		fail "a second run (e2defrag$_args IMG$_paths) on $_img exited $_rc2, the first $_rc" 2>&9
	return $_rc
}

# figures IMG OUT: the whole filesystem's pieces and modeled read time
# (debugfs block lists and the read model, tests/cli/defrag-units.py) and
# its interleave sets (e2frag): their number in OUT, each interleaved
# file's set in OUT.sets ("ino set" lines).
figures() {
	python3 "$top_srcdir/tests/cli/defrag-units.py" metrics "$1" > "$2" ||
		fail "metrics of $1"
	echo "sets $(e2frag_field "$1" interleave_sets)" >> "$2"
	python3 -c 'import json, sys
for f in json.load(open(sys.argv[1]))["files"]:
    if f.get("interleave_set"):
        print(f["ino"], f["interleave_set"])' "$T/e2frag.json" > "$2.sets" ||
		fail "the interleave sets of $1"
}

# noworse BEFORE AFTER WHAT: figures AFTER no worse than BEFORE; the
# interleave sets no more, and each within one set of BEFORE (no file
# interleaved that was not, no two sets joined: doc/design.md).
noworse() {
	python3 "$top_srcdir/tests/cli/defrag-units.py" noworse "$1" "$2" ||
		fail "$3: the filesystem is worse: $(cat "$1") -> $(cat "$2")"
	[ "$(sed -n 's/^sets //p' "$2")" -le "$(sed -n 's/^sets //p' "$1")" ] ||
		fail "$3: more interleave sets: $(cat "$1") -> $(cat "$2")"
	python3 "$top_srcdir/tests/cli/defrag-units.py" within "$1.sets" "$2.sets" ||
		fail "$3: interleave sets not within those before"
}

# stopped IMG JSON WHAT ARGS...: e2defrag ARGS --json IMG stops at its
# limit (exit 1), its JSON into JSON; e2fsck -fn clean and every file as
# in $T/files.json.
stopped() {
	_st_img=$1 _st_json=$2 _st_what=$3
	shift 3
	e2defrag "$@" --json "$_st_img" > "$_st_json" 2> "$T/stopped.err"
	_st_rc=$?
	[ $_st_rc -eq 1 ] || { cat "$T/stopped.err"; fail "$_st_what: exit $_st_rc, expected 1"; }
	check_clean "$_st_img"
	snapshot "$_st_img" "$T/stopped.files.json"
	same_snapshot "$T/files.json" "$T/stopped.files.json"
}

# nearfull_disk FS IMG: e2fragimg's nearly full disk (recordings on a
# disk kept full, 1 KiB blocks, seed 3: the plan stages files aside) as
# IMG, e2fsck -fn clean, its files in $T/files.json, its figures in
# $T/before.
nearfull_disk() {
	e2fragimg -q -w nearfull -t "$1" -b 1024 -S 3 "$2" > /dev/null 2>&1 ||
		fail "e2fragimg nearfull $1"
	check_clean "$2"
	snapshot "$2" "$T/files.json"
	figures "$2" "$T/before"
}
