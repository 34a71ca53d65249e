#!/bin/bash
# make fuzz: build the libFuzzer target tests/fuzz/fuzz-reader, seed a corpus from the
# traces in tests/data (and tests/fuzz/gen-seeds.py), replay the saved reproducers in
# tests/fuzz/crashes/, then fuzz for FUZZ_SECONDS (default 60; 0 = run the corpus once).
# The last line is "fuzz: N passed, N failed"; the exit status is non-zero if anything
# crashed. Crash inputs go to tests/out/fuzz-artifacts/, the log to tests/out/fuzz.log.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

seconds=${FUZZ_SECONDS:-60}
bin=tests/fuzz/fuzz-reader
out=tests/out
corpus=$out/fuzz-corpus
artifacts=$out/fuzz-artifacts
log=$out/fuzz.log
seed_bytes=65536

if ! command -v clang >/dev/null 2>&1; then
	echo "SKIP: clang not installed"
	exit 0
fi
case $seconds in
'' | *[!0-9]*)
	echo "run-fuzz: FUZZ_SECONDS must be a whole number of seconds (got '$seconds')" >&2
	echo "fuzz: 0 passed, 1 failed"
	exit 1
	;;
esac

mkdir -p "$corpus" "$artifacts"

echo "building $bin"
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-Iinclude -I. tests/fuzz/fuzz-reader.c lib/*.c compat/*.c common.c -lz -o "$bin"; then
	echo "run-fuzz: build failed (libFuzzer needs the clang runtime, e.g. libclang-rt-dev)" >&2
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi

# Seeds: byte 0 is the target's control byte (bit 0 clear: pipe mode, set: two-CPU merge).
# prefix BYTE-OCTAL: print the control byte
prefix() { printf "\\$1"; }
nseeds=0
for f in tests/data/*/*.blktrace.0.xz tests/data/*/*.bin.xz; do
	[ -f "$f" ] || continue
	base=$(basename "${f%.xz}")
	dir=$(basename "$(dirname "$f")")
	# pipe mode, default batch
	{ prefix 000; xz -dc "$f" 2>/dev/null | head -c $seed_bytes; } >"$corpus/seed-$dir-$base"
	nseeds=$((nseeds + 1))
	case $f in
	*.blktrace.0.xz)
		# two-CPU merge: the first halves of CPU 0's and CPU 1's files, equal sizes so the
		# target's midpoint split falls between them
		one=${f%.blktrace.0.xz}.blktrace.1.xz
		if [ -f "$one" ]; then
			{
				prefix 001
				xz -dc "$f" 2>/dev/null | head -c $((seed_bytes / 2))
				xz -dc "$one" 2>/dev/null | head -c $((seed_bytes / 2))
			} >"$corpus/seed-$dir-${base%.0}.merge"
			nseeds=$((nseeds + 1))
		fi
		;;
	*.bin.xz)
		# gzip-compressed input, small batches and a small reorder window
		{ prefix 012; xz -dc "$f" 2>/dev/null | head -c $((seed_bytes / 4)) | gzip -c; } \
			>"$corpus/seed-$dir-$base.gz"
		nseeds=$((nseeds + 1))
		;;
	esac
done
# synthetic seeds: record kinds, versions and byte orders the captured traces lack
if command -v python3 >/dev/null 2>&1; then
	if n=$(python3 tests/fuzz/gen-seeds.py "$corpus"); then
		nseeds=$((nseeds + n))
	else
		echo "run-fuzz: warning: tests/fuzz/gen-seeds.py failed; fuzzing without its seeds" >&2
	fi
else
	echo "run-fuzz: note: python3 not found; fuzzing without the synthetic seeds" >&2
fi
echo "corpus $corpus: $nseeds seeds, $(find "$corpus" -type f | wc -l) files"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

passed=0
failed=0

# Reproducers of earlier crashes are regression tests: each must run cleanly now.
for c in tests/fuzz/crashes/*; do
	[ -f "$c" ] || continue
	case $c in *.txt | *.md | *.supp) continue ;; esac
	if "./$bin" "$c" >"$out/fuzz-replay.log" 2>&1; then
		echo "PASS: reproducer $c"
		passed=$((passed + 1))
	else
		echo "FAIL: reproducer $c still crashes:"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ ' "$out/fuzz-replay.log" | head -n 12 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done

# crash-, leak-, timeout- and oom- files are what libFuzzer writes on a failure
crashes() { find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) "$@"; }
if [ "$seconds" = 0 ]; then
	limit=-runs=0	# -max_total_time=0 would mean no limit: only run the corpus
	echo "running the corpus once (log: $log)"
else
	limit=-max_total_time=$seconds
	echo "fuzzing for ${seconds}s (log: $log)"
fi
touch "$out/.fuzz-start"
before=$(crashes | wc -l)
fuzz_ubsan=$UBSAN_OPTIONS
# known, already saved UBSan reports are suppressed while fuzzing (see the file)
[ -f tests/fuzz/known-ubsan.supp ] && fuzz_ubsan="$fuzz_ubsan:suppressions=$top/tests/fuzz/known-ubsan.supp"
UBSAN_OPTIONS=$fuzz_ubsan "./$bin" "$limit" -timeout=25 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" \
	>"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
after=$(crashes | wc -l)
[ -n "$cov" ] && echo "last status: $cov"
echo "executions: ${execs:-unknown}"
if [ $rc -ne 0 ] || [ "$after" -gt "$before" ]; then
	echo "FAIL: fuzzer found a crash (exit $rc); new artifacts in $artifacts:"
	crashes -newer "$out/.fuzz-start" | sed 's/^/    /'
	grep -E 'ERROR:|SUMMARY:|runtime error|^ *#[0-9]+ 0x' "$log" | head -n 20 | sed 's/^/    /'
	failed=$((failed + 1))
else
	echo "PASS: no crash in ${seconds}s"
	passed=$((passed + 1))
fi

echo "fuzz: $passed passed, $failed failed"
[ $failed = 0 ]
