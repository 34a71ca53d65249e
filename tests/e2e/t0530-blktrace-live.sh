#!/bin/bash
# The tracer as users run it live (tracefs backend on this kernel): setups that fail leave
# the kernel as found, 'blktrace -k' stops a running trace cleanly, and the stdout stream
# under fio is in time order, loses nothing to a slow reader, and feeds blkiomon and
# blkparse sane numbers. Regression tests for issue 18, items 2-5.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
skip_under_valgrind "live tracing under fio" "the tracer runs natively; consumers under valgrind cannot keep up with fio's 300k events/s; the plain and ASan runs run it"
PY="python3 -B"
tracer_setup "live tracer tests" "$OUT/btlive" 256M

state() {
	for f in tracing_on current_tracer trace_clock options/bin buffer_size_kb; do
		echo "$f=$(cat "$T/$f")"
	done
	for f in enable act_mask start_lba end_lba pid; do
		echo "$f=$(cat /sys/block/$name/trace/$f)"
	done
	iowait_state "$T"
}
before=$(state)
same_state() { [ "$before" = "$(state)" ]; }
state_diff() { diff <(echo "$before") <(state) | grep '^[<>]' | tr '\n' ' '; }

# ---- 4. setups that fail: exit 1, one message naming the path, the kernel as found ----
for c in "-D /nonexistent/d" "-o /nonexistent/foo" "-D $w/file-not-dir/x"; do
	: >"$w/file-not-dir"
	"$BT" -d "$loop" $c -w 1 >"$w/fail.out" 2>"$w/fail.err"; rc=$?
	p=${c#-? }
	if [ $rc = 1 ] && grep -q "'${p%/*}\|'$p" "$w/fail.err" && same_state; then
		pass "blktrace $c: exit 1, names the path, tracefs and the device as found: $(head -n1 "$w/fail.err")"
	else
		fail "blktrace $c: rc=$rc, state: $(state_diff) err: $(head -c 300 "$w/fail.err")"
	fi
done
port=$(free_port)
"$BT" -d "$loop" -h 127.0.0.1 -p $port -w 1 >"$w/fail.out" 2>"$w/fail.err"; rc=$?
if [ $rc = 1 ] && grep -q "127.0.0.1" "$w/fail.err" && same_state; then
	pass "blktrace -h to a closed port: exit 1, names the server, kernel as found"
else
	fail "blktrace -h to a closed port: rc=$rc, state: $(state_diff) err: $(head -c 300 "$w/fail.err")"
fi
mkdir -p "$w/after-fail"
(cd "$w/after-fail" && "$BT" -d "$loop" -w 1 >out.txt 2>err.txt); rc=$?
if [ $rc = 0 ] && same_state; then
	pass "after the failed setups, the next 'blktrace -d $loop -w 1' runs: exit 0"
else
	fail "trace after failed setups: rc=$rc $(head -c 300 "$w/after-fail/err.txt")"
fi

# ---- 5. -k stops a running trace: the tracer notices, ends cleanly, everything restored ----
mkdir -p "$w/kill"
(cd "$w/kill" && "$BT" -d "$loop" -w 60 >out.txt 2>err.txt; echo $? >rc) &
bt=$!
if wait_tracing; then
	workload "$w/kill/expected.txt"
	sleep 0.3
	"$BT" -k -d "$loop" >"$w/kill/k.out" 2>"$w/kill/k.err"; krc=$?
	for i in $(seq 1 50); do kill -0 $bt 2>/dev/null || break; sleep 0.1; done
	if kill -0 $bt 2>/dev/null; then
		fail "-k during a trace: the running tracer did not stop within 5 s"
		kill -INT $bt
	fi
	wait $bt
	if [ $krc = 0 ] && [ "$(cat "$w/kill/rc")" = 0 ] && grep -q "$name" "$w/kill/err.txt" &&
		grep -qi "turned off\|stopped by" "$w/kill/err.txt" && same_state; then
		pass "-k during a trace: exit 0, the tracer stopped saying why ($(grep -i 'turned off\|stopped by' "$w/kill/err.txt" | head -n1)), state as found"
	else
		fail "-k during a trace: krc=$krc rc=$(cat "$w/kill/rc") state: $(state_diff) k: $(head -c 200 "$w/kill/k.err") tracer: $(head -c 300 "$w/kill/err.txt")"
	fi
	(cd "$w/kill" && $BLKPARSE -i "$name" >ours.txt 2>/dev/null)
	check_ios "trace stopped by -k" "$w/kill/expected.txt" "$w/kill/ours.txt"
else
	fail "-k during a trace: the tracer did not start"
	kill -INT $bt; wait $bt
fi
"$BT" -k -d "$loop" >/dev/null 2>"$w/kill/k2.err"; krc=$?
if [ $krc = 0 ] && same_state; then
	pass "-k with no trace running: exit 0, nothing changed ($(head -c 100 "$w/kill/k2.err"))"
else
	fail "-k with no trace running: krc=$krc $(state_diff) $(head -c 200 "$w/kill/k2.err")"
fi

# ---- 2, 3. the stdout stream under fio ----
if ! command -v fio >/dev/null; then
	skip "live stream under fio (fio not installed)"
	exit 0
fi
fiojob() { # seconds output
	fio --name=live --filename="$loop" --rw=randrw --ioengine=libaio --iodepth=16 --direct=1 \
		--bsrange=4k-128k --runtime="$1" --time_based=1 --output="$2" >/dev/null 2>&1
}
# prints "records backward-steps max-backward-ns notes" of a stream (times must not go back)
order() {
	PYTHONPATH="$TOP/tests/gen" $PY -c '
import sys, blkrec
n = back = worst = notes = 0
prev = None
for r in blkrec.records(open(sys.argv[1], "rb").read()):
    n += 1
    notes += bool(r.action & (1 << 26))
    if prev is not None and r.time < prev:
        back += 1
        worst = max(worst, prev - r.time)
    prev = r.time if prev is None else max(prev, r.time)
print(n, back, worst, notes)' "$1"
}

mkdir -p "$w/stream"
(cd "$w/stream" && "$BT" -d "$loop" -w 5 -o - >stream.bin 2>err.txt; echo $? >rc) &
bt=$!
wait_tracing
fiojob 3 "$w/stream/fio.txt"
wait $bt
read -r n back worst notes < <(order "$w/stream/stream.bin")
ev=$(awk '/Total:/ {print $2}' "$w/stream/err.txt")
if [ "$(cat "$w/stream/rc")" = 0 ] && [ "${n:-0}" -gt 10000 ] && [ "$back" = 0 ]; then
	pass "blktrace -o - under fio: $n records in time order (no step backwards)"
else
	fail "blktrace -o - under fio: rc=$(cat "$w/stream/rc") $n records, $back steps backwards (worst $worst ns)"
fi
if grep -qE "Total: +[0-9]+ events \(dropped 0\)" "$w/stream/err.txt"; then
	pass "blktrace -o - under fio: $ev events, none dropped"
else
	fail "blktrace -o - under fio: $(grep -E 'Total|dropped' "$w/stream/err.txt" | tr '\n' ' ')"
fi

# the reference blkparse reads the stream as ours does (README: -i - byte-identical)
if [ -x /usr/bin/blkparse ]; then
	/usr/bin/blkparse -i - <"$w/stream/stream.bin" >"$w/stream/ref.txt" 2>/dev/null
	$BLKPARSE -i - <"$w/stream/stream.bin" >"$w/stream/ours.txt" 2>/dev/null
	check_same "blkparse -i - on the live stream of $n records: same text as the reference blkparse" \
		"$w/stream/ref.txt" "$w/stream/ours.txt"
else
	skip "reference blkparse on the live stream (apt-get install blktrace)"
fi

# blkiomon fed live (the seed example of its use): no wrapped or impossible D2C
mkdir -p "$w/iomon"
(cd "$w/iomon" && "$BT" -d "$loop" -a issue -a complete -w 5 -o - 2>bt.err |
	"$TOP/blkiomon" -I 1 -h - >iomon.txt 2>iomon.err) &
bt=$!
wait_tracing
fiojob 3 "$w/iomon/fio.txt"
wait $bt
maxd2c=$(awk '/^d2c/ { for (i = 1; i <= NF; i++) if ($i == "max") { v = $(i + 1); sub(",", "", v); if (v + 0 > m) m = v + 0 } } END { print m + 0 }' "$w/iomon/iomon.txt")
if [ -s "$w/iomon/iomon.txt" ] && awk -v m="$maxd2c" 'BEGIN { exit !(m > 0 && m < 2000000) }'; then
	pass "blktrace -a issue -a complete -o - | blkiomon -I 1 -h -: largest d2c max ${maxd2c} us"
else
	fail "live blkiomon: largest d2c max '$maxd2c' us $(head -c 300 "$w/iomon/iomon.err")"
fi

# blkparse -i - fed live: queue depths within what fio keeps in flight
mkdir -p "$w/parse"
(cd "$w/parse" && "$BT" -d "$loop" -w 5 -o - 2>bt.err | $BLKPARSE -i - >live.txt 2>parse.err) &
bt=$!
wait_tracing
fiojob 3 "$w/parse/fio.txt"
wait $bt
depth=$(awk '/Read depth:/ { r = $3; wr = $6; print (r > wr ? r : wr); exit }' "$w/parse/live.txt")
if [ -n "$depth" ] && [ "$depth" -le 64 ]; then
	pass "blktrace -o - | blkparse -i - under fio (iodepth 16): depth ${depth}"
else
	fail "live blkparse: depth '$depth' $(tail -c 300 "$w/parse/parse.err")"
fi

# a reader that stalls for 2 s at the start (a terminal scrolled back, a busy pipeline):
# the default buffers hold the events, none is dropped, every one reaches the reader
mkdir -p "$w/slow"
(cd "$w/slow" && "$BT" -d "$loop" -w 5 -o - 2>err.txt |
	(sleep 2; cat >stream.bin); echo $? >rc) &
bt=$!
wait_tracing
fiojob 3 "$w/slow/fio.txt"
wait $bt
read -r n back worst notes < <(order "$w/slow/stream.bin")
ev=$(awk '/Total:/ {print $2}' "$w/slow/err.txt")
if grep -qE "Total: +[0-9]+ events \(dropped 0\)" "$w/slow/err.txt" && [ -n "$ev" ] &&
	[ "$((ev + notes))" = "$n" ] && [ "$back" = 0 ]; then
	pass "a reader stalled for 2 s: $ev events, none dropped, all $n records delivered in order"
else
	fail "stalled reader: $(grep -E 'Total|dropped|grown' "$w/slow/err.txt" | tr '\n' ' ') delivered $n records ($notes notes), $back backwards"
fi
if same_state; then
	pass "tracefs and device settings as found at the end"
else
	fail "final state differs: $(state_diff)"
fi
