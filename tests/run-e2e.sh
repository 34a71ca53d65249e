#!/bin/bash
# Runs every tests/e2e/t*.sh and counts their PASS/FAIL/SKIP lines.
top=$(cd "$(dirname "$0")/.." && pwd)
p=0 f=0 s=0 x=0
rm -rf "$top/tests/out/memcheck"
mkdir -p "$top/tests/out/memcheck"
for t in "$top"/tests/e2e/t*.sh; do
	[ -n "${ONLY:-}" ] && [[ $(basename "$t") != *${ONLY}* ]] && continue
	echo "== $(basename "$t")"
	while IFS= read -r line; do
		echo "$line"
		case $line in
		PASS:*) p=$((p + 1)) ;;
		FAIL:*) f=$((f + 1)) ;;
		SKIP:*) s=$((s + 1)) ;;
		XFAIL:*) x=$((x + 1)) ;;
		esac
	done < <(bash "$t" 2>&1; echo "__rc=$?")
done
# memory checkers write reports to files: any report is a failure
for log in "$top"/tests/out/memcheck/vg.*.log "$top"/tests/out/memcheck/asan.*; do
	[ -s "$log" ] || continue
	echo "FAIL: memory error report $log:"
	head -n 20 "$log" | sed 's/^/    /'
	f=$((f + 1))
done
echo "e2e: $p passed, $f failed, $s skipped ($x known gaps, XFAIL)"
echo "$p $f $s" >"$top/tests/out/.e2e-counts"
[ "$f" = 0 ]
