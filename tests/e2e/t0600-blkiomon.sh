#!/bin/bash
# blkiomon against the reference outputs (commands as in MANIFEST.md: the merged trace fed
# through a pipe held open 2.5 s, -I 1), with the wall-clock "time:" lines and the time
# field of the binary records masked; then the additions: trace-time intervals, CSV,
# percentiles, and no crash where the reference dies (D2C under 1 us).
. "$(dirname "$0")/../lib.sh"

MON="$TOP/blkiomon"
[ -n "${VALGRIND:-}" ] && MON="$VG $MON"
w="$OUT/mon"
rm -rf "$w"; mkdir -p "$w"

# the binary records without their 8-byte time field
strip_time() {
	python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
sys.stdout.buffer.write(b''.join(d[i + 8:i + 424] for i in range(0, len(d), 424)))
PY
}

skip_vg_traces "blkiomon golden report"
for t in $(bundled_traces); do
	d=$(unpack "$t")
	[ -f "$d/$t.blkiomon.txt" ] || continue
	# The reference read the whole file within its first 1 s interval, so its report is
	# one interval.  Wall-clock intervals start on a whole second, so with -I 1 a slow
	# build (ASan, valgrind) or a busy machine may cut the same input in two: compare
	# with one long interval, which our blkiomon reports at the end of input (the same
	# single report).  -I 1 cutting by wall clock is checked below with a paused writer.
	iv=60
	(cat "$d/$t.bin"; sleep 2.5) | $MON -I $iv -h "$w/$t.txt" -b "$w/$t.bin" 2>"$w/$t.err"
	rc=$?
	grep -v '^time: ' "$d/$t.blkiomon.txt" >"$w/$t.exp"
	grep -v '^time: ' "$w/$t.txt" >"$w/$t.got"
	check_same "blkiomon $t: -h report (time lines masked)" "$w/$t.exp" "$w/$t.got"
	strip_time "$d/$t.blkiomon.bin" >"$w/$t.expbin"
	strip_time "$w/$t.bin" >"$w/$t.gotbin"
	check_same "blkiomon $t: -b records (time field masked)" "$w/$t.expbin" "$w/$t.gotbin"
done

# wall clock: the first half of a trace, a 2.2 s pause, the second half: -I 1 reports
# at least twice and the reports add up to the whole trace
d=$(unpack nullb-randrw)
PYTHONPATH="$TOP/tests/gen" python3 -B - "$d/nullb-randrw.bin" "$w/half1.bin" "$w/half2.bin" <<'PY'
import sys, blkrec
d = open(sys.argv[1], 'rb').read()
cut, i = len(d) // 2, 0
for r in blkrec.records(d):         # cut on a record boundary
    if i >= cut:
        break
    i = r.end
open(sys.argv[2], 'wb').write(d[:i])
open(sys.argv[3], 'wb').write(d[i:])
PY
(cat "$w/half1.bin"; sleep 2.2; cat "$w/half2.bin") | $MON -I 1 -h "$w/wall.txt" 2>/dev/null
n=$(grep -c '^sizes read' "$w/wall.txt")
total=$(sed -n 's/^sizes read (bytes): num \([0-9]*\),.*/\1/p' "$w/wall.txt" | paste -sd+ | bc)
ref=$(sed -n 's/^sizes read (bytes): num \([0-9]*\),.*/\1/p' "$d/nullb-randrw.blkiomon.txt")
if [ "$n" -ge 2 ] && [ "$total" = "$ref" ]; then
	pass "-I 1 by wall clock: a paused writer gives $n reports adding up to the whole trace ($total reads)"
else
	fail "-I 1 by wall clock: $n reports, $total reads (whole trace: $ref)"
fi

# a request that completes less than 1 us after issue: the reference dies of SIGFPE
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/fast.bin" <<'PY'
import sys, blkrec as b
def rec(seq, t, act, sector=8):
    return b.encode(7, '<', seq, t, sector, 4096, act, 1, b.mkdev(8, 0), 0)
D = b.act(b.TA_ISSUE, b.TC_READ | b.TC_ISSUE | b.TC_FS)
C = b.act(b.TA_COMPLETE, b.TC_READ | b.TC_COMPLETE | b.TC_FS)
open(sys.argv[1], 'wb').write(rec(1, 1000, D) + rec(2, 1500, C) + rec(3, 5000, D, 16) + rec(4, 90000, C, 16))
PY
$MON -I 1 --trace-time -h "$w/fast.txt" <"$w/fast.bin" 2>"$w/fast.err"
rc=$?
if [ $rc = 0 ] && grep -q "d2c read (usec): num 2, min 0, max 85" "$w/fast.txt" && grep -q "less than 1 us" "$w/fast.err"; then
	pass "D2C under 1 us: reported (min 0) with a warning, no crash"
else
	fail "D2C under 1 us: rc=$rc $(head -c 200 "$w/fast.err")"
fi
if [ -x /usr/bin/blkiomon ]; then
	( (cat "$w/fast.bin"; sleep 1.5) | /usr/bin/blkiomon -I 1 -h /dev/null >/dev/null 2>&1 ) 2>/dev/null
	rrc=$?
	[ $rrc -ge 128 ] && pass "the reference blkiomon dies on the same input (status $rrc)" ||
		skip "the reference blkiomon did not crash on it (status $rrc)"
fi

# trace time: the same report every run, last interval included
d=$(unpack nullb-randrw)
$MON -I 1 --trace-time -h "$w/tt1.txt" <"$d/nullb-randrw.bin" 2>/dev/null
$MON -I 1 --trace-time -h "$w/tt2.txt" <"$d/nullb-randrw.bin" 2>/dev/null
n=$(grep -c '^device:' "$w/tt1.txt")
if [ "$n" -ge 2 ] && cmp -s "$w/tt1.txt" "$w/tt2.txt"; then
	pass "--trace-time: $n interval reports from a file, identical on two runs"
else
	fail "--trace-time: $n reports, runs identical: $(cmp -s "$w/tt1.txt" "$w/tt2.txt" && echo yes || echo no)"
fi
total=$(sed -n 's/^sizes read (bytes): num \([0-9]*\),.*/\1/p' "$w/tt1.txt" | paste -sd+ | bc)
ref=$(sed -n 's/^sizes read (bytes): num \([0-9]*\),.*/\1/p' "$d/nullb-randrw.blkiomon.txt")
if [ "$total" = "$ref" ]; then
	pass "--trace-time: the intervals add up to the whole trace ($total reads)"
else
	fail "--trace-time: intervals sum to $total reads, the whole trace has $ref"
fi

# a record far ahead in trace time (a damaged time: 2^62 ns, 146 years, later) ends the
# last interval; the empty ones between are skipped, not reported one by one (that took
# one call per second of trace time: it never ended)
python3 - "$d/nullb-randrw.bin" "$w/far.bin" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
last = d[-48:] if len(d) >= 48 else d
# the stream's first record, as an issue, 2^62 ns after the stream's first time
magic, seq, t, sector, nbytes, action = struct.unpack_from('<IIQQII', d, 0)
issue = (1 << 16 + 6) | (1 << 16) | 7  # read, issue; __BLK_TA_ISSUE
rec = struct.pack('<IIQQIIIIIHH', magic, seq, t + (1 << 62), sector, nbytes, issue,
                  *struct.unpack_from('<IIIHH', d, 32)[:3], 0, 0)
open(sys.argv[2], 'wb').write(d + rec)
PY
timeout 60 $MON -I 1 --trace-time -h "$w/far.txt" <"$w/far.bin" 2>/dev/null
rc=$?
sed 's/ (end of trace)$//' "$w/tt1.txt" >"$w/far.exp"
if [ $rc = 0 ] && cmp -s "$w/far.exp" "$w/far.txt"; then
	pass "--trace-time: a record 2^62 ns ahead ends the last interval, the empty ones between are not reported"
else
	fail "--trace-time: a record 2^62 ns ahead: exit $rc (124: still running after 60 s), same reports: $(cmp -s "$w/far.exp" "$w/far.txt" && echo yes || echo no)"
fi

# CSV and percentiles
$MON -I 1 --trace-time --csv "$w/mon.csv" --percentiles -h "$w/pct.txt" <"$d/nullb-randrw.bin" 2>/dev/null
if python3 - "$w/mon.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
for r in rows:
    assert int(r["d2c_p50_us"]) <= int(r["d2c_p99_us"]) <= int(r["d2c_p999_us"]), r
print(len(rows))
PY
then
	pass "--csv: a header and one row per device and interval, readable by Python's csv"
else
	fail "--csv output not readable"
fi
if grep -q "^d2c percentiles (usec): p50 [0-9]*, p99 [0-9]*, p99.9 [0-9]*, max [0-9]*$" "$w/pct.txt"; then
	pass "--percentiles: p50/p99/p99.9 line per device and interval"
else
	fail "--percentiles: no percentile line"
fi
$MON >/dev/null 2>"$w/noint.err"; rc=$?
if [ $rc = 1 ] && grep -q "interval" "$w/noint.err"; then
	pass "no -I: usage and exit 1"
else
	fail "no -I: rc=$rc"
fi

# differential runs on random traces (tests/gen/btt-edge.py, time in order): the reference
# reads each within its first 1 s interval; ours reports one long interval at end of input
if [ -x /usr/bin/blkiomon ]; then
	for s in 2 3 4; do
		python3 "$TOP/tests/gen/btt-edge.py" "$w/r$s.bin" $s 2000 ordered
		( (cat "$w/r$s.bin"; sleep 1.6) | /usr/bin/blkiomon -I 1 -h "$w/r$s.ref" >/dev/null 2>&1 ) &
		(cat "$w/r$s.bin"; sleep 2.5) | $MON -I 60 -h "$w/r$s.txt" 2>/dev/null
		wait
		grep -v '^time: ' "$w/r$s.ref" >"$w/r$s.exp"
		grep -v '^time: ' "$w/r$s.txt" >"$w/r$s.got"
		check_same "blkiomon random trace $s: same report as the reference (time lines masked)" \
			"$w/r$s.exp" "$w/r$s.got"
	done
else
	skip "blkiomon differential runs (no reference at /usr/bin/blkiomon; apt-get install blktrace)"
fi
