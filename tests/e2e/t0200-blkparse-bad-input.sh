#!/bin/bash
# Damaged input: a one-line error naming the file and the byte offset, exit status 1, no
# crash, and every complete event before the damage printed first.
. "$(dirname "$0")/../lib.sh"

src=$(unpack ext4-mixed)
w="$OUT/bad"
rm -rf "$w"; mkdir -p "$w"

# record boundaries of a per-CPU file (offsets of every record start, then the end)
bounds() { python3 -B "$TOP/tests/gen/blkrec.py" bounds "$1"; }
# poke FILE OFFSET FIELD VALUE: damage the record at OFFSET (tests/gen/blkrec.py)
poke() { python3 -B "$TOP/tests/gen/blkrec.py" poke "$@"; }

mk() { # name: make $w/name/t.blktrace.{0,1} from the sample, file 0 to be damaged
	mkdir -p "$w/$1"
	cp "$src/ext4-mixed.blktrace.0" "$w/$1/t.blktrace.0"
	cp "$src/ext4-mixed.blktrace.1" "$w/$1/t.blktrace.1"
}

expect_error() { # name pattern-for-stderr
	local n=$1 pat=$2 rc
	(cd "$w/$n" && timeout 60 $BLKPARSE -i t >out.txt 2>err.txt)
	rc=$?
	if [ $rc = 1 ] && grep -q "t.blktrace.0" "$w/$n/err.txt" && grep -qE "$pat" "$w/$n/err.txt"; then
		pass "bad input '$n': exit 1, error names the file and $(grep -oE "$pat" "$w/$n/err.txt" | head -n1)"
	else
		fail "bad input '$n': rc=$rc, stderr: $(head -c 300 "$w/$n/err.txt")"
	fi
}

b=($(bounds "$src/ext4-mixed.blktrace.0"))
mid=${b[2000]}

# 1. truncated mid-record: every complete event first, then the error
mk truncated
head -c $((mid + 30)) "$src/ext4-mixed.blktrace.0" >"$w/truncated/t.blktrace.0"
expect_error truncated "truncated record at offset $mid"
mk clean-cut
head -c "$mid" "$src/ext4-mixed.blktrace.0" >"$w/clean-cut/t.blktrace.0"
(cd "$w/clean-cut" && $BLKPARSE -i t >out.txt 2>err.txt)
check_same "truncated trace: all complete events are printed" "$w/clean-cut/out.txt" "$w/truncated/out.txt"
if command -v /usr/bin/blkparse >/dev/null; then
	(cd "$w/clean-cut" && /usr/bin/blkparse -i t >ref.txt 2>/dev/null)
	check_same "cleanly cut trace: same text as the reference blkparse" "$w/clean-cut/ref.txt" "$w/clean-cut/out.txt"
fi

# 2. flipped magic in the middle
mk magic
poke "$w/magic/t.blktrace.0" "$mid" magic 0
expect_error magic "bad magic 0x00000000 at offset $mid"

# 3. absurd pdu_len: the next record header is misaligned
mk pdu
poke "$w/pdu/t.blktrace.0" "$mid" pdu_len 61695
expect_error pdu "(offset $mid claims a 61695-byte payload|truncated record at offset $mid)"

# 4. random bytes, 5. zeros: not a trace at all
mk random
head -c 65536 /dev/urandom >"$w/random/t.blktrace.0"
expect_error random "not a block trace: bad magic 0x[0-9a-f]+ at offset 0"
mk zeros
head -c 65536 /dev/zero >"$w/zeros/t.blktrace.0"
expect_error zeros "not a block trace: bad magic 0x00000000 at offset 0"

# 6. wrong version byte
mk version
poke "$w/version/t.blktrace.0" 0 magic 0x65617409
expect_error version "unsupported trace version 9 at offset 0"

# 7. a trace of only a few bytes
mk tiny
printf 'abc' >"$w/tiny/t.blktrace.0"
expect_error tiny "at offset 0"

# 8. no files at all / empty trace files
(cd "$w" && $BLKPARSE -i nothing-here >/dev/null 2>err-none.txt); rc=$?
if [ $rc = 1 ] && grep -q "No input files found for nothing-here" "$w/err-none.txt"; then
	pass "missing input: 'No input files found', exit 1"
else
	fail "missing input: rc=$rc $(cat "$w/err-none.txt")"
fi
mkdir -p "$w/empty" && : >"$w/empty/e.blktrace.0"
(cd "$w/empty" && $BLKPARSE -i e >out.txt 2>err.txt); rc=$?
if grep -q "empty" "$w/empty/err.txt"; then
	pass "empty trace files: a warning says so (rc=$rc)"
else
	fail "empty trace files: no warning"
fi

# 9. damaged merged file on stdin
head -c $((mid + 7)) "$src/ext4-mixed.bin" >"$w/cut.bin"
($BLKPARSE -i - <"$w/cut.bin" >"$w/cut.out" 2>"$w/cut.err"); rc=$?
if [ $rc = 1 ] && grep -qE "truncated record at offset|bad magic" "$w/cut.err" && [ -s "$w/cut.out" ]; then
	pass "damaged stream on stdin: events printed, then the error, exit 1"
else
	fail "damaged stream on stdin: rc=$rc $(head -c 200 "$w/cut.err")"
fi

# 10. write errors are reported: -d and -o to a full disk
(cd "$src" && $BLKPARSE -i ext4-mixed -d /dev/full -O >/dev/null 2>"$w/full.err"); rc=$?
if [ $rc = 1 ] && grep -q "No space left on device" "$w/full.err"; then
	pass "-d onto a full disk: reported, exit 1"
else
	fail "-d onto a full disk: rc=$rc $(cat "$w/full.err")"
fi
(cd "$src" && $BLKPARSE -i ext4-mixed -o /dev/full >/dev/null 2>"$w/full2.err"); rc=$?
if [ $rc = 1 ] && grep -q "No space left on device" "$w/full2.err"; then
	pass "-o onto a full disk: reported, exit 1"
else
	fail "-o onto a full disk: rc=$rc $(cat "$w/full2.err")"
fi
