#!/bin/sh
# fuzz.sh [SECONDS] --- the fuzz targets' figures in bench/README.md, from
# the build tree after ./bootstrap:
#   - runs per 5 minutes of each target (tests/fuzz: read, the read-only
#     paths; run, a whole e2defrag run in memory), each run alone, one
#     after the other, through `make fuzz` (one process at nice 10);
#     SECONDS each (300; fewer are scaled to 5 minutes, and the table says
#     so);
#   - the run target's coverage of writer/ and of defrag/move.c and
#     defrag/execute.c, per function: a second build of the targets
#     instrumented for it (clang -fprofile-instr-generate
#     -fcoverage-mapping, under cov-build/) runs once every input make fuzz
#     kept and seeded the run target with (libFuzzer's -runs=0), and
#     llvm-profdata and llvm-cov read the counts.
# Prints the two tables' rows and the functions never entered.  The
# corpora are make fuzz's own (fuzz-build/): what the timed runs kept
# stays for the next make fuzz.
set -eu
secs=${1:-300}
export LC_ALL=C
case $secs in
''|*[!0-9]*|0) echo "fuzz.sh: SECONDS wants a positive number, not '$secs'" >&2; exit 2 ;;
esac
tests/fuzz/have-fuzzer || { echo "fuzz.sh: no clang with libFuzzer here" >&2; exit 2; }
for tool in llvm-profdata llvm-cov python3; do
	command -v "$tool" >/dev/null || { echo "fuzz.sh: no $tool" >&2; exit 2; }
done

make -s fuzz-target images/e2fragimg >/dev/null
echo "| target | measured | ran | runs | runs per 5 minutes |"
echo "|---|---|---:|---:|---:|"
for t in read run; do
	when=$(date -u '+%Y-%m-%d %H:%M')
	load=$(cut -d' ' -f1 /proc/loadavg)
	make -s fuzz FUZZ_TARGETS="$t" FUZZ_SECONDS="$secs" > "fuzz-build/bench-$t.log" 2>&1 || true
	runs=$(sed -n "s/^fuzz $t: \([0-9]*\) runs.*/\1/p" "fuzz-build/bench-$t.log")
	crashes=$(sed -n "s/^fuzz $t: [0-9]* runs, \([0-9]*\) crash.*/\1/p" "fuzz-build/bench-$t.log")
	[ -n "$runs" ] || { cat "fuzz-build/bench-$t.log" >&2; exit 1; }
	echo "| $t | $when UTC, load $load, $(git rev-parse --short HEAD 2>/dev/null || echo '?') | $secs s, $crashes crashes | $runs | $((runs * 300 / secs)) |"
done

# Coverage: the run target over everything it was seeded with and kept.
cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping"
ldflags="-fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping"
make -s fuzz-target FUZZ_BUILD=cov-build FUZZ_CFLAGS="$cflags" FUZZ_LDFLAGS="$ldflags" >/dev/null
rm -f cov-build/*.profraw
set --
for d in fuzz-build/corpus-run-* fuzz-build/seeds-run fuzz-build/regress fuzz-build/e2fsprogs-2097152; do
	[ -d "$d" ] && set -- "$@" "$d"
done
inputs=$(find "$@" -type f | wc -l)
LLVM_PROFILE_FILE=cov-build/run-%p.profraw \
	cov-build/e2defrag-run-fuzz -runs=0 -max_len=4194304 -timeout=60 "$@" \
	> cov-build/run.log 2>&1 || { tail -n 20 cov-build/run.log >&2; exit 1; }
llvm-profdata merge -o cov-build/run.profdata cov-build/*.profraw
llvm-cov export -format=text -skip-expansions \
	-instr-profile=cov-build/run.profdata cov-build/e2defrag-run-fuzz \
	writer/*.c defrag/move.c defrag/execute.c > cov-build/run.json
python3 - "$inputs" <<'EOF'
import json, os, sys
data = json.load(open('cov-build/run.json'))['data'][0]
files = {}
for fn in data['functions']:
    for path in fn['filenames']:
        rel = os.path.relpath(path)
        if rel.startswith('writer/') or rel in ('defrag/move.c', 'defrag/execute.c'):
            name = fn['name'].split(':')[-1]
            files.setdefault(rel, {})[name] = max(fn['count'],
                                                 files.get(rel, {}).get(name, 0))
            break
print('\ncoverage of the run target, %s inputs run once each:\n' % sys.argv[1])
print('| file | functions hit | lines hit |')
print('|---|---:|---:|')
lines = {os.path.relpath(f['filename']): f['summary']['lines'] for f in data['files']}
hit = total = 0
unhit = []
for rel in sorted(files):
    fns = files[rel]
    h = sum(1 for c in fns.values() if c)
    l = lines.get(rel, {'covered': 0, 'count': 0})
    print('| %s | %d of %d | %d of %d (%.0f%%) |' % (rel, h, len(fns), l['covered'],
          l['count'], 100.0 * l['covered'] / l['count'] if l['count'] else 0))
    if rel != 'writer/iolog.c':	# the power-cut harness's write log
        hit += h
        total += len(fns)
    unhit += ['%s: %s' % (rel, n) for n, c in sorted(fns.items()) if not c]
print('\nwithout writer/iolog.c (the write-log test hook): %d of %d functions hit' % (hit, total))
print('never entered:' if unhit else 'every function entered')
for u in unhit:
    print('  ' + u)
EOF
