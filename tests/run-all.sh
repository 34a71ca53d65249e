#!/bin/bash
# make check: unit tests, then end-to-end tests; the last line is the total.
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/tests/out"
rm -f "$top/tests/out/.unit-counts" "$top/tests/out/.e2e-counts"
"$top/tests/run-unit.sh" "$@"
"$top/tests/run-e2e.sh"
read -r up uf <"$top/tests/out/.unit-counts" 2>/dev/null || { up=0; uf=1; }
read -r ep ef es <"$top/tests/out/.e2e-counts" 2>/dev/null || { ep=0; ef=1; es=0; }
echo "$((up + ep)) passed, $((uf + ef)) failed, $es skipped"
[ $((uf + ef)) = 0 ]
