#!/bin/bash
# make fuzz: build the libFuzzer targets, one per parser, seed a small corpus for each,
# replay the saved reproducers of each in tests/fuzz/crashes/TARGET/, then fuzz each for
# FUZZ_SECONDS (default 60; 0 = run the seeds once). FUZZ_SECONDS is per target: make
# check passes 5 and runs this ahead of its other runs (nice -19 as root), so that each
# target has a core for its seconds. FUZZ_TARGETS="parse iomon" runs only those.
#   parse   tests/fuzz/fuzz-parse.c   blkparse's run (parse-run.c): binary reader, merge,
#                                     pipe-mode sorter, accounting, printing, -d, -t model
#   format  tests/fuzz/fuzz-format.c  -f/-F format strings: compile and render
#   iomon   tests/fuzz/fuzz-iomon.c   blkiomon's stream processing (mon-run.c)
#   btt     tests/fuzz/fuzz-btt.c     btt's run (btt/ without main.c): the I/O model and
#                                     every output subscribed to it, the report
# Each target's corpus is new every run (seeds from tests/data and tests/fuzz/gen-seeds.py,
# a few KiB each; FUZZ_KEEP_CORPUS=1 keeps what earlier runs found) and inputs are bounded
# (-max_len). The last line is "fuzz: N passed, N failed"; the exit status is non-zero if
# anything crashed. Crash inputs go to tests/out/fuzz-artifacts/TARGET/, logs to
# tests/out/fuzz-TARGET.log.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-parse format iomon btt}
out=tests/out
build=$out/fuzz-build
seed_bytes=4096

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

# ---- build: every source once (objects in $build), then one link per target ----
CFLAGS_FUZZ="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Iinclude -I. -Itests/fuzz"
lib_src="lib/*.c common.c"
# btt links the Perfetto writer and the export besides the core library
btt_lib_src="lib/perfetto/*.c lib/export/*.c"
declare -A target_src=(
	[parse]="tests/fuzz/fuzz-parse.c parse-run.c parse-print.c parse-iowait.c parse-origin.c compat/*.c"
	[format]="tests/fuzz/fuzz-format.c"
	[iomon]="tests/fuzz/fuzz-iomon.c mon-run.c"
	[btt]="tests/fuzz/fuzz-btt.c $btt_lib_src $(ls btt/*.c btt/*/*.c | grep -v '^btt/main\.c$' | tr '\n' ' ')"
)
mkdir -p "$build"
echo "building the fuzz targets ($targets) in $build"
objs_of() { # sources... -> object paths
	local s
	for s in "$@"; do echo "$build/$(echo "${s%.c}" | tr / _).o"; done
}
compile() { # source
	local o
	o=$(objs_of "$1")
	# rebuilt when the source or any header of the tree is newer
	if [ ! -f "$o" ] || [ "$1" -nt "$o" ] ||
		[ -n "$(find include compat tests/fuzz lib btt -maxdepth 2 -name '*.h' -newer "$o" | head -n1)" ] ||
		[ -n "$(find . -maxdepth 1 -name '*.h' -newer "$o" | head -n1)" ]; then
		# the -t model's own comparisons (heap addresses and sizes) are no guide to
		# new input: its edges count, its comparisons are not traced (they took 40%
		# of the parse target's comparison tracing, itself 19% of the time)
		# the same for btt's -o histogram files, 1,024 lines of compares each (half of
		# the btt target's comparison tracing, 15% of its time)
		# and for the histograms' bucket loops (lib/hist.c: btt's percentiles, blkiomon)
		# and the protobuf encoder of the Perfetto exports (lib/perfetto/protobuf.c), pure
		# output (together 3-4% of the btt target's time)
		case $1 in
		compat/heapemu.c | compat/classicmem.c | lib/hist.c | lib/perfetto/protobuf.c)
			extra=-fno-sanitize-coverage=trace-cmp ;;
		btt/report/event-files.c) extra="-Ibtt -fno-sanitize-coverage=trace-cmp" ;;
		btt/* | tests/fuzz/fuzz-btt.c) extra=-Ibtt ;;
		*) extra= ;;
		esac
		# shellcheck disable=SC2086
		clang $CFLAGS_FUZZ $extra -c -o "$o" "$1" || return 1
		# the btt target sends the files btt creates to a null stream (see fuzz-btt.c)
		if [ "$1" = btt/report/outfile.c ]; then
			objcopy --redefine-sym fopen64=fuzz_btt_fopen --redefine-sym fclose=fuzz_btt_fclose \
				--redefine-sym unlink=fuzz_btt_unlink "$o" || { rm -f "$o"; return 1; }
		fi
	fi
}
export -f compile objs_of
export build CFLAGS_FUZZ
all_src=$(for t in $targets; do echo ${target_src[$t]}; done; echo $lib_src)
# shellcheck disable=SC2086
if ! printf '%s\n' $all_src | sort -u | xargs -P 2 -I{} bash -c 'compile {}'; then
	echo "run-fuzz: build failed (libFuzzer needs the clang runtime, e.g. libclang-rt-dev)" >&2
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
# the export's HTTP (in btt's objects) loads libcurl at run time
libs=-ldl
for t in $targets; do
	# shellcheck disable=SC2046,SC2086
	if ! clang -g -fsanitize=fuzzer,address,undefined -o "tests/fuzz/fuzz-$t" \
		$(objs_of ${target_src[$t]} $lib_src) $libs -lz -lm; then
		echo "run-fuzz: link of tests/fuzz/fuzz-$t failed" >&2
		echo "fuzz: 0 passed, 1 failed"
		exit 1
	fi
done

# ---- seeds ----
prefix() { printf "$1"; } # control bytes, as printf escapes
seed_traces() { # target corpus-dir: captured traces (first $seed_bytes), control bytes per target
	local t=$1 dir=$2 f base name one pipe merge gz
	case $t in
	parse) pipe='\0\0' merge='\1\0' gz='\12\0' ;;
	iomon) pipe='\11' merge='\31' gz='\117' ;;
	btt) pipe='\1\145\0' merge='\0\0\0' gz='\43\32\1' ;;
	*) return 0 ;;
	esac
	for f in tests/data/*/*.blktrace.0.xz tests/data/*/*.bin.xz; do
		[ -f "$f" ] || continue
		base=$(basename "${f%.xz}")
		name=$(basename "$(dirname "$f")")-$base
		{ prefix "$pipe"; xz -dc "$f" 2>/dev/null | head -c $seed_bytes; } >"$dir/seed-$name"
		case $f in
		*.blktrace.0.xz)
			# two-CPU merge (parse: halves of equal size, the target's split falls between)
			one=${f%.blktrace.0.xz}.blktrace.1.xz
			if [ -f "$one" ] && [ "$t" = parse ]; then
				{
					prefix "$merge"
					xz -dc "$f" 2>/dev/null | head -c $((seed_bytes / 2))
					xz -dc "$one" 2>/dev/null | head -c $((seed_bytes / 2))
				} >"$dir/seed-${name%.0}.merge"
			fi
			;;
		*.bin.xz)
			{ prefix "$gz"; xz -dc "$f" 2>/dev/null | head -c $seed_bytes | gzip -c; } \
				>"$dir/seed-$name.gz"
			;;
		esac
	done
}

# a quarantine of 4 MiB (ASan's default is 256) still holds the frees of the last ten runs
# or more (a parse run frees about 200 KiB), and is kinder to the caches than 16 MiB was;
# allocation stacks of 5 frames are cheaper to record than 10. Together 10-15% more parse
# runs and 15-25% more btt runs a CPU second than 16 MiB and 10 frames (same saved corpus)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:quarantine_size_mb=4:malloc_context_size=5}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
fuzz_ubsan=$UBSAN_OPTIONS
# known, already saved UBSan reports are suppressed while fuzzing (see the file)
[ -f tests/fuzz/known-ubsan.supp ] && fuzz_ubsan="$fuzz_ubsan:suppressions=$top/tests/fuzz/known-ubsan.supp"

passed=0
failed=0
# crash-, leak-, timeout- and oom- files are what libFuzzer writes on a failure
crashes() { find "$1" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) "${@:2}"; }
for t in $targets; do
	bin=tests/fuzz/fuzz-$t
	corpus=$out/fuzz-corpus/$t
	artifacts=$out/fuzz-artifacts/$t
	log=$out/fuzz-$t.log
	case $t in
	format) max_len=512 ;;
	*) max_len=8192 ;;
	esac
	[ "${FUZZ_KEEP_CORPUS:-}" = 1 ] || rm -rf "$corpus"
	mkdir -p "$corpus" "$artifacts"
	seed_traces "$t" "$corpus"
	if command -v python3 >/dev/null 2>&1; then
		python3 tests/fuzz/gen-seeds.py "$corpus" "$t" >/dev/null ||
			echo "run-fuzz: warning: tests/fuzz/gen-seeds.py failed; $t fuzzed without its seeds" >&2
	else
		echo "run-fuzz: note: python3 not found; $t fuzzed without the synthetic seeds" >&2
	fi
	echo "$t: corpus $corpus: $(find "$corpus" -type f | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB"

	# reproducers of earlier crashes are regression tests: each must run cleanly now
	for c in tests/fuzz/crashes/"$t"/*; do
		[ -f "$c" ] || continue
		case $c in *.txt | *.md | *.supp) continue ;; esac
		if "./$bin" -timeout=25 "$c" >"$out/fuzz-replay.log" 2>&1; then
			echo "PASS: $t reproducer $c"
			passed=$((passed + 1))
		else
			echo "FAIL: $t reproducer $c still crashes:"
			grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ ' "$out/fuzz-replay.log" | head -n 12 | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done

	if [ "$seconds" = 0 ]; then
		limit=-runs=0 # -max_total_time=0 would mean no limit: only run the corpus
	else
		limit=-max_total_time=$seconds
	fi
	touch "$out/.fuzz-start"
	before=$(crashes "$artifacts" | wc -l)
	# stderr closed (-close_fd_mask=2): the tools' messages for damaged input would fill
	# the log; libFuzzer and the sanitizers keep their own copy of it for their reports.
	# -entropic=0: with the parse target's ~27,000 features, libFuzzer 14's entropic
	# schedule spends two thirds of the time updating feature frequencies (310 exec/s
	# against 2,357 without it, measured on the same corpus for 15 s)
	UBSAN_OPTIONS=$fuzz_ubsan "./$bin" "$limit" -max_len=$max_len -timeout=25 -rss_limit_mb=1024 \
		-entropic=0 -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	after=$(crashes "$artifacts" | wc -l)
	[ -n "$cov" ] && echo "$t: last status: $cov"
	echo "$t: executions: ${execs:-unknown} (${rate:-?}/s)"
	if [ $rc -ne 0 ] || [ "$after" -gt "$before" ]; then
		echo "FAIL: $t: fuzzer found a crash (exit $rc); new artifacts in $artifacts:"
		crashes "$artifacts" -newer "$out/.fuzz-start" | sed 's/^/    /'
		grep -E 'ERROR:|SUMMARY:|runtime error|^ *#[0-9]+ 0x' "$log" | head -n 20 | sed 's/^/    /'
		failed=$((failed + 1))
	else
		echo "PASS: $t: no crash in ${seconds}s"
		passed=$((passed + 1))
	fi
done

echo "fuzz: $passed passed, $failed failed"
[ $failed = 0 ]
