#!/bin/bash
# The whole test run of `make check`: plain, ASan+UBSan, valgrind. Prints each run's lines
# and ends with the total "N passed, N failed, N skipped".
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tp=0 tf=0 ts=0
run() { # label command...
	local label=$1 line p f s
	shift
	echo "######## $label"
	"$@" 2>&1 | tee "$top/tests/out/.run.log"
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$top/tests/out/.run.log" | tail -n1 | sed -E 's/^[A-Za-z]+: //')
	if [ -z "$line" ]; then
		echo "$label: no result line (the run broke)"
		tf=$((tf + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + ${s:-0}))
	echo "######## $label: $line"
}
mkdir -p "$top/tests/out"
if command -v clang-format >/dev/null; then
	if make --no-print-directory format-check >"$top/tests/out/.format.log" 2>&1; then
		echo "PASS: clang-format: the tree is formatted"; tp=$((tp + 1))
	else
		echo "FAIL: clang-format: $(grep -c warning "$top/tests/out/.format.log") places differ (make format)"
		tf=$((tf + 1))
	fi
else
	echo "SKIP: clang-format not installed"; ts=$((ts + 1))
fi
run "plain build" ./tests/run-all.sh "$@"
if [ -z "${CHECK_QUICK:-}" ]; then
	if command -v clang >/dev/null || gcc -fsanitize=address -x c -o /dev/null - <<<'int main(void){return 0;}' 2>/dev/null; then
		run "ASan+UBSan build" make --no-print-directory asan
	else
		echo "SKIP: ASan run (no sanitizer runtime)"; ts=$((ts + 1))
	fi
	if command -v clang >/dev/null; then
		run "fuzzing (${FUZZ_SECONDS:-30} s)" env FUZZ_SECONDS="${FUZZ_SECONDS:-30}" ./tests/fuzz/run-fuzz.sh
	else
		echo "SKIP: fuzzing (clang not installed)"; ts=$((ts + 1))
	fi
	if command -v valgrind >/dev/null; then
		run "valgrind" env VALGRIND=1 ./tests/run-all.sh "$@"
	else
		echo "SKIP: valgrind run (valgrind not installed)"; ts=$((ts + 1))
	fi
fi
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
