#!/bin/bash
# Runs the cmocka unit test binaries given as arguments, TEST_JOBS (default 4) at a time
# (under valgrind with VALGRIND=1, and UNIT_CHECK_EVERY=64: see test-qtree.c); prints their results in argument order and
# "unit: N passed, N failed".
out=${TEST_OUT:-$(cd "$(dirname "$0")" && pwd)/out}
jobs=${TEST_JOBS:-4}
logs=$out/unit-logs
rm -rf "$logs"
mkdir -p "$logs"
p=0 f=0
run_one() { # binary
	local log="$logs/$(basename "$1").log"
	if [ -n "${VALGRIND:-}" ]; then
		UNIT_CHECK_EVERY=64 valgrind -q --leak-check=full --error-exitcode=99 --read-inline-info=no "$1" >"$log" 2>&1
	else
		"$1" >"$log" 2>&1
	fi
	echo "__rc=$?" >>"$log"
}
for t in "$@"; do
	[ -x "$t" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	run_one "$t" &
done
wait
for t in "$@"; do
	[ -x "$t" ] || continue
	log="$logs/$(basename "$t").log"
	rc=$(sed -n 's/^__rc=//p' "$log")
	grep -E '^\[  (PASSED|FAILED)|^\[  ERROR|^==' "$log" | sed "s|^|$(basename "$t"): |"
	np=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
	nf=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
	p=$((p + ${np:-0})); f=$((f + ${nf:-0}))
	if [ "$rc" != 0 ] && [ -z "$nf" ]; then f=$((f + 1)); echo "$(basename "$t"): exit status $rc"; fi
done
[ -n "${VALGRIND:-}" ] && echo "note: under valgrind the unit tests that compare a model after every step (test-qtree) take the same steps and compare every 64th (UNIT_CHECK_EVERY=64); the plain and ASan runs compare after each"
echo "unit: $p passed, $f failed"
echo "$p $f" >"$out/.unit-counts"
[ "$f" = 0 ]
