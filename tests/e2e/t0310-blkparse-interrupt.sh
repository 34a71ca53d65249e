#!/bin/bash
# Ctrl-C (SIGINT to the whole process group) on a live pipe, on file input and on btrace:
# blkparse prints what it read and the summary, as parsing the same bytes afterwards does.
# No kernel tracing: tests/gen/interrupt.py plays the tracer, writing a generated trace
# slowly and, when interrupted, the rest of its "buffers" (or nothing more, never closing).
. "$(dirname "$0")/../lib.sh"

if ! command -v python3 >/dev/null; then
	skip "blkparse interrupts (python3 not installed)"
	exit 0
fi
w="$OUT/interrupt"
rm -rf "$w"
mkdir -p "$w"
INTR="python3 $TOP/tests/gen/interrupt.py"
# one CPU: the stream is in time order, so its text does not depend on how it is batched
"$TOP/tests/gen/gentrace" -c 1 -n 20000 -s 3 -o live -D "$w"
stream="$w/live.blktrace.0"
size=$(stat -c %s "$stream")

# events printed, the summary last (the per-CPU block and the skips line)
complete() { # file
	[ "$(tail -n 1 "$1")" = "Skips: 0 forward (0 -   0.0%)" ] && grep -q '^CPU0 (8,0):$' "$1"
}

# one interrupt: the tracer drains 3 more chunks and closes; all of it is printed
$INTR run --feed "$stream $w/copy1.bin 200 0.05 drain:3" --wait 1 \
	--stdout "$w/int1.txt" --stderr "$w/int1.err" -- $BLKPARSE -i - >"$w/int1.rc"
$BLKPARSE -i - <"$w/copy1.bin" >"$w/after1.txt" 2>/dev/null
got=$(stat -c %s "$w/copy1.bin")
if [ "$got" -ge "$size" ]; then
	fail "SIGINT on a pipe: the writer had finished before the interrupt ($got bytes)"
elif ! grep -q '^rc=0 writer=0 ' "$w/int1.rc"; then
	fail "SIGINT on a pipe: $(cat "$w/int1.rc") (want blkparse status 0, no write error in the tracer) $(head -c 300 "$w/int1.err")"
elif ! complete "$w/int1.txt"; then
	fail "SIGINT on a pipe: no summary at the end ($(wc -l <"$w/int1.txt") lines, $(tail -n 1 "$w/int1.txt"))"
else
	check_same "SIGINT on a pipe: the input is read to its end ($got of $size bytes written), all printed with the summary" \
		"$w/after1.txt" "$w/int1.txt"
fi

# two interrupts, a writer that stops writing but never closes: the second one cuts the pipe
$INTR run --feed "$stream $w/copy2.bin 200 0.05 hang" --wait 1 --signals 2 --timeout 10 \
	--stdout "$w/int2.txt" --stderr "$w/int2.err" -- $BLKPARSE -i - >"$w/int2.rc"
$BLKPARSE -i - <"$w/copy2.bin" >"$w/after2.txt" 2>/dev/null
if ! grep -q '^rc=0 ' "$w/int2.rc"; then
	fail "second SIGINT on a pipe left open: $(cat "$w/int2.rc") (want status 0 at once) $(head -c 300 "$w/int2.err")"
elif ! grep -q "interrupted: stopped reading '-' before its end" "$w/int2.err"; then
	fail "second SIGINT on a pipe: no warning that the input was cut: $(head -c 300 "$w/int2.err")"
else
	check_same "second SIGINT cuts a pipe left open: what was read is printed with the summary ($(cat "$w/int2.rc"))" \
		"$w/after2.txt" "$w/int2.txt"
fi

# file input: an interrupt while blkparse waits on a slow reader of its output stops the
# reading; the text is that of the records handled so far, as parsing just those gives
"$TOP/tests/gen/gentrace" -c 1 -n 300000 -s 5 -o big -D "$w/file"
(cd "$w/file" && $INTR run --after-bytes 200000 --stdout "$w/int3.txt" --stderr "$w/int3.err" \
	-- $BLKPARSE -i big >"$w/int3.rc")
shown=$(sed -n '/^CPU0 (big):$/q;p' "$w/int3.txt" | grep -c '^ *[0-9]*,')
mkdir -p "$w/prefix"
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/file/big.blktrace.0" "$shown" "$w/prefix/big.blktrace.0" <<'EOF'
# the records up to the N-th one blkparse prints (events and messages; other notes do not print)
import sys, blkrec
data, want, off, shown = open(sys.argv[1], 'rb').read(), int(sys.argv[2]), 0, 0
for r in blkrec.records(data):
    if shown >= want:
        break
    if not r.action & blkrec.NOTIFY or r.action & 0xffff == blkrec.TN_MESSAGE:
        shown += 1
    off = r.end
open(sys.argv[3], 'wb').write(data[:off])
EOF
(cd "$w/prefix" && $BLKPARSE -i big >"$w/after3.txt" 2>/dev/null)
if ! grep -q '^rc=0 ' "$w/int3.rc"; then
	fail "SIGINT on file input: $(cat "$w/int3.rc") (want status 0) $(head -c 300 "$w/int3.err")"
elif [ "$shown" -lt 1000 ] || [ "$shown" -ge 290000 ]; then
	fail "SIGINT on file input: $shown events printed (the interrupt should come after the first 200 kB of text, long before the end)"
elif ! grep -q 'interrupted: the rest of the input was not read' "$w/int3.err"; then
	fail "SIGINT on file input: no warning that the input was not read to its end"
else
	check_same "SIGINT on file input stops reading: $shown events and their summary, as parsing just those records" \
		"$w/after3.txt" "$w/int3.txt"
fi

# btrace: Ctrl-C reaches blktrace and blkparse, and btrace returns after the summary
mkdir -p "$w/bin"
cp "$TOP/btrace" "$w/bin/btrace"
cat >"$w/bin/blktrace" <<EOF
#!/bin/sh
exec $INTR write "$stream" "$w/copy4.bin" 200 0.05 drain:3
EOF
cat >"$w/bin/blkparse" <<EOF
#!/bin/sh
exec $BLKPARSE "\$@"
EOF
chmod +x "$w/bin/blktrace" "$w/bin/blkparse"
$INTR run --ready "$w/copy4.bin" --wait 1 --stdout "$w/int4.txt" --stderr "$w/int4.err" -- sh "$w/bin/btrace" /dev/loop0 >"$w/int4.rc"
$BLKPARSE -b 100000 -i - <"$w/copy4.bin" >"$w/after4.txt" 2>/dev/null
# dash waits for the pipeline, then ends by the signal (the classic btrace does the same)
if ! grep -q -E '^rc=(0|-2) ' "$w/int4.rc"; then
	fail "SIGINT on btrace: $(cat "$w/int4.rc") $(head -c 300 "$w/int4.err")"
elif ! complete "$w/int4.txt"; then
	fail "SIGINT on btrace: no summary ($(wc -l <"$w/int4.txt") lines) $(head -c 300 "$w/int4.err")"
else
	check_same "SIGINT on btrace: the tracer's last events and the summary are printed before btrace returns ($(cat "$w/int4.rc"))" \
		"$w/after4.txt" "$w/int4.txt"
fi
