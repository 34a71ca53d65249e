# Shared helpers for the end-to-end tests (sourced). Each check prints one line:
# "PASS: what", "FAIL: what" or "SKIP: what (reason)"; the runner counts them.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${TEST_OUT:-$TOP/tests/out}
mkdir -p "$OUT"
BLKPARSE="$TOP/blkparse"
if [ -n "${VALGRIND:-}" ]; then
	mkdir -p "$OUT/memcheck"
	BLKPARSE="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file=$OUT/memcheck/vg.%p.log $BLKPARSE"
fi

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }

# check "what" expected-file actual-file
check_same() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		diff "$2" "$3" | head -n 6 | sed 's/^/    /'
	fi
}

# unpack tests/data/NAME into $OUT/data/NAME (once) and print that directory
unpack() {
	local src="$TOP/tests/data/$1" dst="$OUT/data/$1" f
	if [ ! -f "$dst/.unpacked" ] || [ "$src" -nt "$dst/.unpacked" ]; then
		rm -rf "$dst"
		mkdir -p "$dst"
		for f in "$src"/*.xz; do
			xz -dc "$f" >"$dst/$(basename "${f%.xz}")"
		done
		touch "$dst/.unpacked"
	fi
	echo "$dst"
}

is_root() { [ "$(id -u)" = 0 ]; }
