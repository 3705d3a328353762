# common.sh --- sourced by the shell tests: paths, a scratch directory,
# and the verdict helpers.  Exit codes: 0 pass, 77 skip, anything else fail.
set -u
export LC_ALL=C
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
PATH="$top_builddir/analyze:$top_builddir/defrag:$top_builddir/tui:$top_builddir/images:$top_builddir/tests/crash:$PATH:/sbin:/usr/sbin"
export PATH top_srcdir top_builddir

T=$(mktemp -d "${TMPDIR:-/tmp}/e2frag-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

ORACLE="python3 $top_srcdir/tests/lib/oracle.py"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "# $*"; }

# run_status CMD...: run, remember the exit code in $status, never abort.
run_status() { status=0; "$@" || status=$?; }

# expect_status WANT CMD...: the command must exit WANT.
expect_status() {
	want=$1; shift
	run_status "$@"
	[ "$status" -eq "$want" ] || fail "'$*' exited $status, expected $want"
}

# mkfs_img IMAGE TYPE BLOCKSIZE SIZE [mke2fs options...]: a fresh image.
mkfs_img() {
	img=$1 type=$2 bs=$3 size=$4; shift 4
	rm -f "$img"
	mke2fs -q -F -t "$type" -b "$bs" "$@" "$img" "$size" >/dev/null 2>&1 ||
		fail "mke2fs -t $type -b $bs $* $img $size"
}

# dfs IMAGE CMDFILE: run debugfs -w over a command file, quietly.
dfs() { debugfs -w -f "$2" "$1" >/dev/null 2>&1 || fail "debugfs -w -f $2 $1"; }

# fsck_clean IMAGE: e2fsck -fn must find nothing.
fsck_clean() {
	e2fsck -fn "$1" >"$T/fsck.out" 2>&1 || {
		cat "$T/fsck.out" >&2
		fail "e2fsck -fn $1 is not clean"
	}
}
