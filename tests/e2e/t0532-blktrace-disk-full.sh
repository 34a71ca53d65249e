#!/bin/bash
# The output disk fills during a trace (issue 37): the summary counts what the per-CPU
# files hold (not the events read from the kernel), says how many were not written, to
# which file and why, the files end on a whole record, and blktrace exits non-zero.
# A tmpfs of 256 KiB is the output directory; direct 4 KiB writes to a loop device fill it.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
skip_under_valgrind "blktrace on a full disk" "the tracer runs natively; the plain and ASan runs run it"
if ! command -v python3 >/dev/null; then
	skip "blktrace on a full disk (python3 missing)"
	exit 0
fi
tracer_setup "blktrace on a full disk" "$OUT/t0532" 64M
mkdir -p "$w/full"
if ! mount -t tmpfs -o size=256k tmpfs "$w/full" 2>"$w/mount.err"; then
	skip "blktrace on a full disk (cannot mount a tmpfs: $(head -c 200 "$w/mount.err"))"
	exit 0
fi
trap 'umount "$w/full" 2>/dev/null; losetup -d "$loop" 2>/dev/null' EXIT
state() {
	echo "tracer=$(cat "$T/current_tracer") on=$(cat "$T/tracing_on") enable=$(cat /sys/block/$name/trace/enable)"
}
before=$(state)

(cd "$w" && "$BT" -d "$loop" -D full -w 60 >summary.txt 2>err.txt; echo $? >rc) &
bt=$!
if ! wait_tracing; then
	fail "blktrace on a full disk: the tracer did not start: $(head -c 300 "$w/err.txt")"
	kill -INT $bt
	wait $bt
	exit 0
fi
# 4 KiB direct writes (about 6 records, 400 bytes, each) until the tracer gives up
for i in $(seq 0 19); do
	[ -s "$w/rc" ] && break
	dd if=/dev/zero of="$loop" bs=4k count=1000 seek=$((i * 1000 % 16000)) oflag=direct status=none
done
wait $bt
rc=$(cat "$w/rc")
if [ "$rc" != 0 ] && grep -q "'full/$name.blktrace.[0-9]*': write failed: No space left on device" "$w/err.txt"; then
	pass "blktrace on a full disk: exit $rc, $(grep -m1 'No space' "$w/err.txt")"
else
	fail "blktrace on a full disk: rc=$rc, err: $(head -c 400 "$w/err.txt")"
fi

# each file: its records (whole ones up to its end), the events among them (not notes)
PYTHONPATH="$TOP/tests/gen" python3 -B -c '
import os, sys, blkrec
for p in sys.argv[1:]:
    data = open(p, "rb").read()
    n = ev = end = 0
    for r in blkrec.records(data):
        n += 1
        ev += not (r.action & blkrec.NOTIFY)
        end = r.end
    print(p.rsplit(".", 1)[1], ev, n, len(data), end)' "$w"/full/"$name".blktrace.* >"$w/files.txt"
bad=""
total=0
while read -r cpu ev n size end; do
	total=$((total + ev))
	line=$(grep -E "^  CPU +$cpu:" "$w/summary.txt")
	want=$(printf '  CPU%3d: %20d events, %8d KiB data' "$cpu" "$ev" $(((size + 1023) / 1024)))
	[ "$line" = "$want" ] || bad="$bad CPU$cpu: '$line' but the file holds $ev events, $size bytes;"
	[ "$end" = "$size" ] || bad="$bad CPU$cpu: the file ends inside a record ($end of $size bytes);"
done <"$w/files.txt"
if [ -z "$bad" ] && [ -s "$w/files.txt" ]; then
	pass "the per-CPU lines count the events in the files, each file ends on a whole record: $(tr '\n' ' ' <"$w/files.txt")"
else
	fail "per-CPU lines against the files:$bad"
fi
if grep -qE "^  Total: +$total events \(dropped [0-9]+\)" "$w/summary.txt"; then
	pass "the Total line counts the $total events in the files"
else
	fail "Total line: $(grep Total "$w/summary.txt") but the files hold $total events"
fi
nw=$(grep -c "^  Not written: [1-9][0-9]* events of CPU [0-9]*: 'full/$name.blktrace.[0-9]*': write failed: No space left on device$" "$w/summary.txt")
if [ "$nw" -ge 1 ]; then
	pass "the summary says what was not written, where and why: $(grep -m1 'Not written' "$w/summary.txt")"
else
	fail "no 'Not written' line: $(cat "$w/summary.txt")"
fi
# blkparse reads the files to their end, its count the summary's
(cd "$w/full" && $BLKPARSE -i "$name" >"$w/parse.txt" 2>"$w/parse.err")
prc=$?
if [ $prc = 0 ] && [ ! -s "$w/parse.err" ]; then
	pass "blkparse reads the files of the full disk cleanly"
else
	fail "blkparse on the files: rc=$prc $(head -c 300 "$w/parse.err")"
fi
if [ "$(state)" = "$before" ]; then
	pass "tracefs and the device as found after the write failure"
else
	fail "state after the write failure: $(state), was $before"
fi
