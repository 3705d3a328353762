#!/bin/sh
# run.sh DIR TARGET SECONDS E2FRAGIMG CORPUS SRCDIR --- `make fuzz`: run one
# libFuzzer target (fuzz.mk) for SECONDS, one process at nice 10, and end
# with the line `fuzz TARGET: N runs, C crashes`.  TARGET: read
# (DIR/e2frag-fuzz, target.c: the read-only paths) or run
# (DIR/e2defrag-run-fuzz, target_run.c: a whole e2defrag run).
# FUZZ_SEED=N fixes libFuzzer's seed (CI's brief run: the same inputs each
# time, so that a run fails only on a change, not by chance).
#
# Seeds: small images made here by E2FRAGIMG (1 KiB blocks), and the
# e2fsprogs test images in CORPUS of at most $FUZZ_MAX_LEN bytes once
# unpacked (skipped when CORPUS is absent); they are unpacked under DIR,
# never copied into the source tree.  FUZZ_MAX_LEN defaults to 256 KiB for
# read (FUZZ_MAX_LEN=2097152 adds ext3 and ext4 seeds) and 2 MiB for run,
# whose journal writes want ext3 and ext4.  The read target's seeds keep
# only metadata (e2image -r: it never reads contents), the run target's
# their files' contents too (its oracle compares them).  What the fuzzer
# adds to them stays in DIR/corpus-TARGET-MAXLEN for the next run and for
# `make fuzz-replay`.  A crash ends a libFuzzer run: the input is saved in
# DIR/crashes-TARGET/ and the fuzzer starts again for the time left.  Exit
# 1 when anything crashed.  To keep a crasher as a regression input, gzip
# it into tests/fuzz/regress/NAME.img.gz (make check replays it).
set -u
dir=$1 target=$2 seconds=$3 e2fragimg=$4 corpus=$5 srcdir=$6
case $target in
read) fuzzer=$dir/e2frag-fuzz max_len=${FUZZ_MAX_LEN:-262144} keep_data=0 ;;
run) fuzzer=$dir/e2defrag-run-fuzz max_len=${FUZZ_MAX_LEN:-2097152} keep_data=1 ;;
*) echo "fuzz: the target is read or run, not '$target'" >&2; exit 2 ;;
esac

case $seconds in
''|*[!0-9]*) echo "fuzz: FUZZ_SECONDS wants a number of seconds, not '$seconds'" >&2; exit 2 ;;
esac
# A corpus per target and input length: longer inputs would be cut.
corpus_out=$dir/corpus-$target-$max_len
seeds=$dir/seeds-$target crash_dir=$dir/crashes-$target
mkdir -p "$seeds" "$corpus_out" "$crash_dir" || exit 2

# Images e2fragimg makes: each workload that fits a small filesystem, on
# each type, with 1 KiB blocks and small groups so that there are several.
seed() {	# NAME TYPE SIZE OPTIONS...
	name=$1 type=$2 size=$3
	shift 3
	[ -s "$seeds/$name.img" ] && return
	"$e2fragimg" --type "$type" --size "$size" --block-size 1024 --seed 1 \
		"$@" "$seeds/$name.img" >/dev/null 2>"$seeds/$name.err" ||
		{ echo "fuzz: e2fragimg failed on seed $name:" >&2
		  cat "$seeds/$name.err" >&2; exit 2; }
	# The read target: only the metadata (it never reads the files'
	# contents, and mutating them would be time lost).
	[ "$keep_data" = 1 ] ||
		{ e2image -r "$seeds/$name.img" "$seeds/$name.meta" 2>/dev/null &&
		  mv "$seeds/$name.meta" "$seeds/$name.img"; }
	rm -f "$seeds/$name.img.json" "$seeds/$name.err"
}

# ext2 in 256 KiB.  ext3 and ext4 need 2 MiB for their journal (1024
# blocks): only when FUZZ_MAX_LEN lets them in (each run then costs
# several times more).
seed streams-ext2 ext2 256K --workload streams --streams 3 --total 96K --blocks-per-group 256
seed writers-ext2 ext2 256K --workload parallel-writers --streams 2 --total 64K
seed turns-ext2 ext2 256K --workload turns --blocks-per-group 256
seed aged-ext2 ext2 256K --workload aged
if [ "$max_len" -ge 2097152 ]; then
	seed streams-ext3 ext3 2M --workload streams --streams 3 --total 256K \
		--blocks-per-group 1024
	seed streams-ext4 ext4 2M --workload streams --streams 3 --total 256K \
		--blocks-per-group 1024
	seed turns-ext4 ext4 2M --workload turns --blocks-per-group 1024
	seed nearfull-ext4 ext4 2M --workload nearfull --blocks-per-group 256 \
		--chunk 4K --sync 64K
	seed nearfull-ext3 ext3 2M --workload nearfull --blocks-per-group 1024 \
		--chunk 4K --sync 64K
	# Quota files, which a move that changes a file's block count writes.
	if [ ! -s "$seeds/quota-ext4.img" ] && [ -s "$seeds/streams-ext4.img" ]; then
		cp "$seeds/streams-ext4.img" "$seeds/quota-ext4.tmp" &&
			tune2fs -O quota -Q usrquota,grpquota "$seeds/quota-ext4.tmp" \
				>/dev/null 2>&1 &&
			mv "$seeds/quota-ext4.tmp" "$seeds/quota-ext4.img"
		rm -f "$seeds/quota-ext4.tmp"
	fi
fi

# What crashed a program once: the first inputs run, so that a regression
# is the first thing found.
mkdir -p "$dir/regress"
for gz in "$srcdir"/tests/fuzz/regress/*.img.gz; do
	[ -e "$gz" ] && gzip -dc "$gz" > "$dir/regress/$(basename "$gz" .gz)"
done

# The e2fsprogs images small enough to be worth mutating.
if [ -d "$corpus" ]; then
	unpacked=$dir/e2fsprogs-$max_len
	mkdir -p "$unpacked"
	for gz in "$corpus"/*.img.gz; do
		out=$unpacked/$(basename "$gz" .gz)
		[ -e "$out" ] && continue
		bytes=$(gzip -l "$gz" | awk 'NR == 2 { print $2 }')
		if [ "$bytes" -le "$max_len" ]; then
			gzip -dc "$gz" > "$out"
		fi
	done
	set -- "$dir/regress" "$seeds" "$unpacked"
else
	echo "fuzz: $corpus is absent; seeding with generated images only" >&2
	set -- "$dir/regress" "$seeds"
fi

# Run, and again after each crash, until the time is used.
runs=0 crashes=0 start=$(date +%s) log=$dir/fuzz-$target.log
: > "$log.all"
while :; do
	left=$((seconds - ($(date +%s) - start)))
	[ "$left" -gt 0 ] || break
	# No fill of new memory and a small quarantine: the planner allocates
	# and frees a lot, and the defaults make a run spend most of its time
	# faulting fresh pages in.
	ASAN_OPTIONS=${ASAN_OPTIONS:-max_malloc_fill_size=0:quarantine_size_mb=16} \
	nice -n 10 "$fuzzer" -max_total_time="$left" -max_len="$max_len" \
		${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crash_dir/" "$corpus_out" "$@" > "$log" 2>&1
	rc=$?
	cat "$log" >> "$log.all"
	# The executions: the final statistics, or after a crash the last
	# status line (#N) before it.
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	[ -n "$n" ] || n=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
	runs=$((runs + ${n:-0}))
	[ "$rc" -eq 0 ] && break
	crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	if [ -z "$crash" ]; then
		echo "fuzz: the fuzzer stopped (exit $rc) without a crash input:" >&2
		tail -n 20 "$log" >&2
		exit 2
	fi
	crashes=$((crashes + 1))
	echo "fuzz $target: crash $crashes: $crash" >&2
	# A seed that crashes would crash every start again: out with it
	# (these are DIR's copies; make fuzz unpacks or makes them again).
	for d in "$@"; do
		for f in "$d"/*; do
			cmp -s "$f" "$crash" && rm -f "$f"
		done
	done
	grep -m 3 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" >&2
	[ "$crashes" -lt 100 ] || break
done
echo "fuzz $target: $runs runs, $crashes crashes"
[ "$crashes" -eq 0 ]
