#!/bin/bash
# The whole test run of `make check`: the suite as built, under ASan+UBSan and under
# valgrind, and the fuzz targets. The plain and valgrind runs start together, the ASan tree is
# built and run beside them; the fuzzing starts when the plain run ends (tests/lib.sh's locks
# keep the scripts that need the kernel's tracer or the VM to one at a time). Each run's
# lines are printed when it ends, then the total "N passed, N failed, N skipped".
# CHECK_QUICK=1: the plain run only.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/tests/out
mkdir -p "$out"
tp=0 tf=0 ts=0
t0=$SECONDS
# what the reference tools, generators and checkers give is kept for the three runs
# (memo in tests/lib.sh)
export MEMO_DIR=$out/memo
rm -rf "$MEMO_DIR"
mkdir -p "$MEMO_DIR"
# the locks the scripts take (tests/lib.sh lock_log), summed at the end: the kernel's tracer
# and the VM slots are what the runs wait on
export LOCK_LOG=$out/locks.log
rm -f "$LOCK_LOG"
# count LABEL LOG: add the run's result line to the totals
count() {
	local label=$1 log=$2 line p f s
	local cpu
	cpu=$(sed -n 's/^__cgcpu=//p' "$log")
	echo "######## $label ($(sed -n 's/^__seconds=//p' "$log") s${cpu:+, CPU $cpu s with all it started})"
	grep -v -e '^__seconds=' -e '^__cgcpu=' "$log"
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1 | sed -E 's/^[A-Za-z]+: //')
	if [ -z "$line" ]; then
		echo "FAIL: $label: no result line (the run broke)"
		tf=$((tf + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + ${s:-0}))
	echo "######## $label: $line"
}
# The CPU time of each run with all it started, where a cgroup v1 cpuacct hierarchy is
# writable (root): a group per run (tests/run-e2e.sh makes one per script inside), printed
# beside its wall time
cgcheck=
if [ -w /sys/fs/cgroup/cpuacct ] && mkdir -p /sys/fs/cgroup/cpuacct/blktrace-ng-check.$$ 2>/dev/null; then
	cgcheck=/sys/fs/cgroup/cpuacct/blktrace-ng-check.$$
fi
# start LOG COMMAND...: run it in the background, its output, duration and CPU time into LOG
start() {
	local log=$1 cg=
	shift
	if [ -n "$cgcheck" ]; then
		cg=$cgcheck/$(basename "$log" .log | tr -d .)
		mkdir -p "$cg" 2>/dev/null || cg=
	fi
	(
		[ -n "$cg" ] && echo "$BASHPID" >"$cg/cgroup.procs" 2>/dev/null
		s=$SECONDS
		"$@" >"$log" 2>&1
		echo "__seconds=$((SECONDS - s))" >>"$log"
		[ -n "$cg" ] && echo "__cgcpu=$(awk '{ printf "%.0f", $1 / 1e9 }' "$cg/cpuacct.usage")" >>"$log"
	) &
}

if command -v clang-format >/dev/null; then
	if make --no-print-directory format-check >"$out/.format.log" 2>&1; then
		echo "PASS: clang-format: the tree is formatted"; tp=$((tp + 1))
	else
		echo "FAIL: clang-format: $(grep -c warning "$out/.format.log") places differ (make format)"
		tf=$((tf + 1))
	fi
else
	echo "SKIP: clang-format not installed"; ts=$((ts + 1))
fi

# the ASan tree's build, then at once its run (beside the rest of the plain run: the plain
# run leaves a core idle while it waits on the VM and on live traces). The build runs ahead of
# the other runs' scripts (as root: nice -10, as the VM's qemu): the whole ASan run waits for
# it, and among a dozen scripts and a guest it took 361 s of wall time for its 81 CPU s.
asan_all() {
	local s=$SECONDS bprio=()
	[ "$(id -u)" = 0 ] && bprio=(nice -n -10)
	"${bprio[@]}" make --no-print-directory asan-build >"$out/.asan-build.log" 2>&1
	echo "__seconds=$((SECONDS - s))" >>"$out/.asan-build.log"
	[ -r "$cgcheck/asan/cpuacct.usage" ] &&
		echo "__cgcpu=$(awk '{ printf "%.0f", $1 / 1e9 }' "$cgcheck/asan/cpuacct.usage")" >>"$out/.asan-build.log"
	if grep -q . <(grep -v -e '^__seconds=' -e '^__cgcpu=' "$out/.asan-build.log"); then
		echo "__build_failed"
		return 1
	fi
	make --no-print-directory asan-run
}

asan=0
if [ -z "${CHECK_QUICK:-}" ]; then
	if command -v clang >/dev/null || gcc -fsanitize=address -x c -o /dev/null - <<<'int main(void){return 0;}' 2>/dev/null; then
		asan=1
		start "$out/.asan.log" asan_all
		asan_pid=$!
	fi
fi
# the valgrind run, the longest of the three (its slowest scripts take minutes under
# valgrind), starts with the others: started after the plain run, it was the end of make check
# with a core idle in its last minutes
vg_pid=
if [ -z "${CHECK_QUICK:-}" ] && command -v valgrind >/dev/null; then
	start "$out/.valgrind.log" make --no-print-directory valgrind
	vg_pid=$!
fi
start "$out/.plain.log" ./tests/run-all.sh "$@"
wait $!
count "plain build" "$out/.plain.log"
if [ -n "${CHECK_QUICK:-}" ]; then
	echo "SKIP: ASan+UBSan, valgrind and fuzzing runs (CHECK_QUICK is set)"
	ts=$((ts + 1))
else
	pids=()
	[ $asan = 1 ] && pids+=($asan_pid)
	[ -n "$vg_pid" ] && pids+=($vg_pid)
	if command -v clang >/dev/null; then
		# the fuzzer runs ahead of the ASan and valgrind runs' scripts (as root: nice -19),
		# so that it has a core for its seconds: among their eight scripts it had a fifth
		# of one (800 runs a second where it does 5,000)
		prio=()
		[ "$(id -u)" = 0 ] && prio=(nice -n -19)
		start "$out/.fuzz.log" "${prio[@]}" env FUZZ_SECONDS="${FUZZ_SECONDS:-5}" ./tests/fuzz/run-fuzz.sh
		pids+=($!)
	fi
	wait "${pids[@]}"
	if [ $asan = 1 ] && grep -q '^__build_failed' "$out/.asan.log"; then
		echo "FAIL: ASan build: $(grep -v -e '^__seconds=' -e '^__cgcpu=' "$out/.asan-build.log" | tail -n 5 | tr '\n' ' ')"
		tf=$((tf + 1))
	elif [ $asan = 1 ]; then count "ASan+UBSan build" "$out/.asan.log"
	elif ! command -v clang >/dev/null; then echo "SKIP: ASan run (no sanitizer runtime)"; ts=$((ts + 1)); fi
	if [ -f "$out/.valgrind.log" ] && command -v valgrind >/dev/null; then count "valgrind" "$out/.valgrind.log"
	else echo "SKIP: valgrind run (valgrind not installed)"; ts=$((ts + 1)); fi
	if command -v clang >/dev/null; then count "fuzzing (${FUZZ_SECONDS:-5} s per target)" "$out/.fuzz.log"
	else echo "SKIP: fuzzing (clang not installed)"; ts=$((ts + 1)); fi
fi
[ -f "$MEMO_DIR/log" ] && echo "memo: $(grep -c '^miss ' "$MEMO_DIR/log") results kept, $(grep -c '^hit ' "$MEMO_DIR/log") replayed, $(grep -c '^nokeep ' "$MEMO_DIR/log") not kept (naming a run's own path) ($MEMO_DIR/log)"
# every failing line again at the end, with its run, so that the end of a long log says what broke
if [ "$tf" != 0 ]; then
	echo "failures:"
	for f in .plain.log .asan.log .valgrind.log .fuzz.log .format.log; do
		[ -f "$out/$f" ] && grep -E '^(FAIL|not ok)' "$out/$f" | sed "s|^|  ${f#.}: |" | head -n 50
	done
fi
# per lock: the seconds it was held (from a take to the script's drop or end), in all runs
[ -f "$LOCK_LOG" ] && awk '
	$5 == "take" { k = $2 " " $3 " " $4; sub(/[0-9]+$/, "", k); at[k] = $1; name[k] = $4; next }
	{ for (k in at) if (index(k, $2 " " $3 " ") == 1 && ($4 == "all" || k ~ (" " $4 "$"))) {
		l = name[k]; sub(/[0-9]+$/, "", l); held[l] += $1 - at[k]; n[l]++; delete at[k] } }
	END { for (l in held) printf "locks: %s held %d s by %d scripts\n", l, held[l], n[l] }' "$LOCK_LOG" | sort
if [ -n "$cgcheck" ]; then
	echo "check: $((SECONDS - t0)) s, CPU $(awk '{ printf "%.0f", $1 / 1e9 }' "$cgcheck/cpuacct.usage") s in the runs"
	rmdir "$cgcheck"/* "$cgcheck" 2>/dev/null
else
	echo "check: $((SECONDS - t0)) s"
fi
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
