#!/bin/bash
# One run of the suite: unit tests, then end-to-end tests; the last line is the total.
# TEST_OUT (default tests/out) holds its logs and scratch files: runs with different
# TEST_OUT can go on at the same time (make check runs the valgrind run beside the ASan one).
top=$(cd "$(dirname "$0")/.." && pwd)
export TEST_OUT=${TEST_OUT:-$top/tests/out}
mkdir -p "$TEST_OUT"
rm -f "$TEST_OUT/.unit-counts" "$TEST_OUT/.e2e-counts"
"$top/tests/run-unit.sh" "$@"
"$top/tests/run-e2e.sh"
read -r up uf <"$TEST_OUT/.unit-counts" 2>/dev/null || { up=0; uf=1; }
read -r ep ef es <"$TEST_OUT/.e2e-counts" 2>/dev/null || { ep=0; ef=1; es=0; }
echo "$((up + ep)) passed, $((uf + ef)) failed, $es skipped"
[ $((uf + ef)) = 0 ]
