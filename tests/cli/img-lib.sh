# img-lib.sh --- setup shared by the e2fragimg tests (sourced, not run).
# Skips (77) when a tool is missing; gives a scratch directory that is
# removed on exit; `fail` records a failure, `finish` exits with the result.
set -u
export LC_ALL=C
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
PATH=${top_builddir:-$srcdir}/images:$PATH:/sbin:/usr/sbin
for tool in e2fragimg debugfs e2fsck python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not found"
		exit 77
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2fragimg-test.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
check() { python3 "$srcdir/tests/cli/img_check.py" "$@"; }
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# fsck_clean IMG: e2fsck -fn exits 0 and says nothing beyond its five
# passes and the summary (no "could be narrower", no fixes declined).
fsck_clean() {
	out=$(e2fsck -fn "$1" 2>&1)
	rc=$?
	extra=$(printf '%s\n' "$out" | grep -Ev \
		'^e2fsck [0-9.]+ \(|^Pass [1-5]: |^[^ ]+: [0-9]+/[0-9]+ files \(')
	if [ "$rc" -ne 0 ] || [ -n "$extra" ]; then
		printf '%s\n' "$out" | head -20
		return 1
	fi
	return 0
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	exit 0
}
