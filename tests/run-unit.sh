#!/bin/bash
# Runs the cmocka unit test binaries given as arguments; prints "unit: N passed, N failed".
p=0 f=0
for t in "$@"; do
	[ -x "$t" ] || continue
	if [ -n "${VALGRIND:-}" ]; then
		out=$(valgrind -q --leak-check=full --error-exitcode=99 "$t" 2>&1); rc=$?
	else
		out=$("$t" 2>&1); rc=$?
	fi
	echo "$out" | grep -E '^\[  (PASSED|FAILED)|^\[  ERROR|^==' | sed "s|^|$(basename "$t"): |"
	np=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
	nf=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
	p=$((p + ${np:-0})); f=$((f + ${nf:-0}))
	if [ $rc != 0 ] && [ -z "$nf" ]; then f=$((f + 1)); echo "$(basename "$t"): exit status $rc"; fi
done
echo "unit: $p passed, $f failed"
mkdir -p "$(dirname "$0")/out"
echo "$p $f" >"$(dirname "$0")/out/.unit-counts"
[ "$f" = 0 ]
