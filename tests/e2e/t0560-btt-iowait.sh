#!/bin/bash
# btt's "I/O wait by process" section (issue 15), on the bundled real traces with I/O wait
# notes added (tests/gen/iowait.py synth: one wait for every second completed read, from 1 us
# after its Q to 2 us after its C, by the task that queued it). Every number of the section
# (per process: waits, total, p50/p99 within the histogram's 1/64, max, own-I/O time, I/Os
# per device with mean Q2C and D2C; per device: its waits and who waited on it most) is
# computed again by tests/gen/iowait-btt.py from our blkparse --iowait text, independently
# of btt; the same through a pipe (blkparse -i - -d - -O | btt -i -) with the waits in-band.
# The rest of btt's output is what it is for the trace without the waits; --iowait-only
# prints the section alone; a trace without waits has no section (--iowait-only says so).
# The checker is seen to fail on a section one nanosecond off.
. "$(dirname "$0")/../lib.sh"

IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
IWB="memo python3 -B $TOP/tests/gen/iowait-btt.py"
BTT="$TOP/btt/btt"
if [ ! -x "$BTT" ]; then
	fail "btt: $BTT not built"
	exit 0
fi
[ -n "${VALGRIND:-}" ] && BTT="$VG $BTT"
if ! command -v python3 >/dev/null; then
	skip "btt's I/O wait section (python3 missing)"
	exit 0
fi
w="$OUT/btt-iowait"
rm -rf "$w"
mkdir -p "$w"

checked=0
for t in $(bundled_traces); do
	d=$(unpack "$t")
	names=$(cd "$d" && ls *.blktrace.0 2>/dev/null | sed 's/\.blktrace\.0$//')
	[ -n "$names" ] || continue
	p="$w/$t/plain" q="$w/$t/waits"
	mkdir -p "$p" "$q"
	k=0
	for n in $names; do
		cp "$d/$n".blktrace.* "$p/"
		cp "$d/$n".blktrace.* "$q/"
		k=$((k + $($IW synth "$q" "$n" --every 2)))
	done
	args=$(for n in $names; do printf -- '-i %s ' "$n"; done)
	for x in "$p" "$q"; do
		(cd "$x" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1)
		(cd "$x" && $BTT -i merged.bin >btt.txt 2>btt.err)
	done
	if [ "$k" = 0 ]; then
		# a trace without Q events (complete-only): no read to wait for
		if ! grep -q "I/O wait by process" "$q/btt.txt" && cmp -s "$p/btt.txt" "$q/btt.txt"; then
			pass "$t: no waits (no Q events to make them from): no I/O wait section"
		else
			fail "$t: a section without waits"
		fi
		continue
	fi
	checked=$((checked + 1))
	(cd "$q" && $BLKPARSE $args --iowait >bp.txt 2>/dev/null)

	# 1. the numbers, computed again from blkparse's text
	if r=$($IWB "$q/bp.txt" "$q/btt.txt" 2>&1); then
		pass "$t: the section's numbers as computed from blkparse --iowait: $r"
	else
		fail "$t: the section's numbers: $(echo "$r" | head -n 5 | tr '\n' ' ')"
	fi
	# 2. the rest of the report is the report of the trace without waits
	$IWB strip "$q/btt.txt" >"$q/btt-stripped.txt"
	check_same "$t: btt with the waits is btt without them plus the section" "$p/btt.txt" "$q/btt-stripped.txt"
	# 3. --iowait-only: the section alone
	(cd "$q" && $BTT -i merged.bin --iowait-only >only.txt 2>&1)
	$IWB section "$q/btt.txt" >"$q/section.txt"
	check_same "$t: --iowait-only prints the section alone" "$q/section.txt" "$q/only.txt"
	# 4. through a pipe, the waits in-band in a live-like stream
	$IW merge "$p/live.bin" $(for n in $names; do ls "$p/$n".blktrace.*; done)
	$IW inband "$p/live.bin" "$q/live.bin" --every 2 >/dev/null
	$BLKPARSE -i - -d - -O <"$q/live.bin" 2>/dev/null | $BTT -i - >"$q/live-btt.txt" 2>&1
	$BLKPARSE -i - --iowait <"$q/live.bin" >"$q/live-bp.txt" 2>/dev/null
	if r=$($IWB "$q/live-bp.txt" "$q/live-btt.txt" 2>&1); then
		pass "$t: through blkparse -i - -d - -O | btt -i -: $r"
	else
		fail "$t: through a pipe: $(echo "$r" | head -n 5 | tr '\n' ' ')"
	fi
	# 5. the trace without waits: no section, --iowait-only says there is nothing
	(cd "$p" && $BTT -i merged.bin --iowait-only >only.txt 2>&1)
	if ! grep -q "I/O wait by process" "$p/btt.txt" && grep -q "^No I/O wait notes in this trace" "$p/only.txt"; then
		pass "$t: without waits: no section; --iowait-only says there are none"
	else
		fail "$t: without waits: $(head -c 300 "$p/only.txt")"
	fi
done
if [ $checked = 0 ]; then
	fail "no bundled trace to check"
	exit 0
fi

# the checker fails on a section one nanosecond off (a process's own-I/O time)
t=$(bundled_traces | grep -x nullb-randrw || bundled_traces | grep -v complete-only | head -n 1)
q="$w/$t/waits"
if [ -f "$q/btt.txt" ]; then
	python3 -c '
import re, sys
out, done = [], False
for line in open(sys.argv[1]).read().split("\n"):
    m = None if done else re.match(r"^(.* \| +\d+\.\d{8})(\d)( +\S+%)$", line)
    if m:
        line, done = m.group(1) + str((int(m.group(2)) + 1) % 10) + m.group(3), True
    out.append(line)
sys.stdout.write("\n".join(out))' "$q/btt.txt" >"$q/btt-off.txt"
	if ! cmp -s "$q/btt.txt" "$q/btt-off.txt" && ! $IWB "$q/bp.txt" "$q/btt-off.txt" >"$q/off.out" 2>&1 &&
		grep -q covered "$q/off.out"; then
		pass "$t: the checker fails on an own-I/O time 1 ns off: $(head -n 1 "$q/off.out")"
	else
		fail "$t: the checker took a wrong section: $(head -c 200 "$q/off.out")"
	fi
fi
