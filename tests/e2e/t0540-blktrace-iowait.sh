#!/bin/bash
# blktrace --iowait on this kernel (lockdown, no kprobes, no modules: the scheduler
# tracepoint source): a loop device, one dd doing N direct 4 KiB reads; the waits recorded
# beside the block events must cover at least 90% of its reads, each overlapping one of
# them (decoded by tests/gen/iowait.py, not by our C library), with its pid and name. The
# reference tools print the same for the trace with its waits as without (the waits taken
# out again by iowait.py), on the directory, the merged file and the live -o - stream. Our
# btt's I/O wait section and its Perfetto export (dd's iowait slices on dd's thread track, with
# their flows) are checked against numbers computed again from blkparse --iowait, and our
# blkparse --iowait on the merged file against the same on the directory.
# The tasks that are woken often and never sleep in state D are left out of the waking
# events (the waits of a dd reading after that are all still there).
# Every exit path (-w, SIGINT, SIGTERM, blktrace -k, a setup error, SIGKILL and -k after)
# leaves tracefs, the device and the I/O wait state as found.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
IWB="memo python3 -B $TOP/tests/gen/iowait-btt.py"
N=300
skip_under_valgrind "blktrace --iowait" "the tracer runs natively; the plain and ASan runs run it"
if ! is_root; then
	skip "blktrace --iowait (needs root for loop devices and tracefs)"
	exit 0
fi
kernel_lock
w="$OUT/btiowait"
rm -rf "$w"; mkdir -p "$w"
truncate -s 64M "$w/disk.img"
loop=$(loop_attach "$w/disk.img" 2>/dev/null)
if [ -z "$loop" ]; then
	skip "blktrace --iowait (losetup failed: no loop device support)"
	exit 0
fi
trap 'losetup -d "$loop" 2>/dev/null' EXIT
name=$(basename "$loop")
T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
if [ -z "$T" ]; then
	mount -t tracefs none /sys/kernel/tracing 2>/dev/null && T=/sys/kernel/tracing
fi
if [ -z "$T" ] || ! grep -qw blk "$T/available_tracers" 2>/dev/null || [ ! -d "$T/events/sched/sched_switch" ]; then
	skip "blktrace --iowait (no tracefs with the blk tracer and the sched events)"
	exit 0
fi
expand_buffer "$T"
state() {
	for f in tracing_on current_tracer trace_clock options/bin buffer_size_kb; do
		echo "$f=$(cat "$T/$f")"
	done
	echo "enable=$(cat /sys/block/$name/trace/enable)"
	iowait_state "$T"
}
before=$(state)
same_state() { [ "$before" = "$(state)" ]; }
state_diff() { diff <(echo "$before") <(state) | grep '^[<>]' | tr '\n' ' '; }

# wait until our tracer records $loop and its I/O wait instance is on (at most 15 s)
wait_iowait() {
	local i x
	wait_tracing || return 1
	for i in $(seq 1 50); do
		for x in "$T"/instances/blktrace-iowait-*; do
			[ "$(cat "$x/tracing_on" 2>/dev/null)" = 1 ] && return 0
		done
		sleep 0.1
	done
	return 1
}
# the workload: one dd, N direct reads of 4 KiB; its pid in $1
reader() { # pidfile
	dd if="$loop" of=/dev/null bs=4096 count=$N skip=16 iflag=direct status=none &
	echo $! >"$1"
	wait $!
}

# 1. -w: the waits of the dd process
d="$w/run1"
mkdir -p "$d"
(cd "$d" && "$BT" -d "$loop" -w 6 --iowait >summary.txt 2>err.txt; echo $? >rc) &
bt=$!
wait_iowait
reader "$d/dd.pid"
wait $bt
pid=$(cat "$d/dd.pid")
if [ "$(cat "$d/rc")" = 0 ] && grep -q "the scheduler tracepoints, which measure uninterruptible sleeps, not only I/O waits" "$d/err.txt" &&
	grep -q "blk_iowait module is not loaded" "$d/err.txt" && grep -q "no kprobe events" "$d/err.txt"; then
	pass "--iowait -w 6: exit 0, the sched source, says what it measures and why the module and kprobes are not used"
else
	fail "--iowait -w 6: rc=$(cat "$d/rc") $(head -c 400 "$d/err.txt")"
fi
if grep -qE "^=== $name.iowait ===" "$d/summary.txt" && grep -qE "^  Total: +[0-9]+ waits \(lost 0\)" "$d/summary.txt" &&
	grep -q "source sched, [0-9]* uninterruptible sleeps without an I/O" "$d/summary.txt"; then
	pass "summary: the waits per CPU, lost 0, the sleeps not kept: $(grep -A3 iowait "$d/summary.txt" | grep Total | tr -s ' ')"
else
	fail "summary: $(tr '\n' ' ' <"$d/summary.txt")"
fi
read -r _ reads _ waits _ ov _ named < <($IW overlap "$d" "$name" "$pid")
if [ "${reads:-0}" = $N ] && [ "${waits:-0}" -ge $((N * 9 / 10)) ] && [ "$ov" = "$waits" ] && [ "$named" = "$waits" ]; then
	pass "dd (pid $pid): $waits waits for its $reads direct reads, each overlapping one of them, tgid and name dd"
else
	fail "dd (pid $pid): reads=$reads waits=$waits overlapping=$ov named=$named (want $N reads, >= $((N * 9 / 10)) waits, all overlapping and named)"
fi
if same_state; then
	pass "after -w: tracefs, the device and the I/O wait state as found"
else
	fail "after -w: $(state_diff)"
fi
# our blkparse --iowait shows them, the default output is the reference's
"$BLKPARSE" -i "$name" -D "$d" --iowait 2>/dev/null | awk -v p="$pid" '$6 == "w" && $5 == p && $8 == "[dd]"' >"$d/iw.txt"
if [ "$(wc -l <"$d/iw.txt")" = "$waits" ] && grep -q "source=sched io=7,$(cat /sys/block/$name/dev | cut -d: -f2)$" "$d/iw.txt"; then
	pass "blkparse --iowait prints the $waits waits of dd with source=sched and its device"
else
	fail "blkparse --iowait: $(wc -l <"$d/iw.txt") lines of dd, $waits expected: $(head -n 2 "$d/iw.txt")"
fi

# 1b. the tasks woken for each read that never sleep in state D (the loop worker,
# ksoftirqd) are left out of the waking events after a second of reads: every read of a
# dd started after that still has its wait, none lost
d="$w/filter"
mkdir -p "$d"
# (stopped with SIGINT once the reads are done: a -w 5 ran out before them in a CI run under
# load, and dd's reads were not in the trace at all)
(cd "$d" && exec "$BT" -d "$loop" --iowait >summary.txt 2>err.txt) &
bt=$!
wait_iowait
dd if="$loop" of=/dev/null bs=4096 count=3000 iflag=direct status=none
sleep 2.2
reader "$d/dd.pid"
kill -INT $bt
wait $bt
echo $? >"$d/rc"
read -r _ reads _ fwaits _ ov _ named < <($IW overlap "$d" "$name" "$(cat "$d/dd.pid")")
left=$(sed -n 's/.*, \([0-9]*\) tasks never seen in state D left out of the wakings (\([0-9]*\) of their.*/\1 \2/p' "$d/summary.txt")
if [ "$(cat "$d/rc")" = 0 ] && [ "${left% *}" -ge 1 ] 2>/dev/null && [ "${left#* }" = 0 ] &&
	grep -qE "^  Total: +[0-9]+ waits \(lost 0\)" "$d/summary.txt" && [ "${reads:-0}" = $N ] &&
	[ "${fwaits:-0}" -ge $((N * 9 / 10)) ] && [ "$ov" = "$fwaits" ] && [ "$named" = "$fwaits" ]; then
	pass "waking filter: ${left% *} tasks left out of the wakings, then dd's $reads reads have $fwaits waits (run 1: $waits), each overlapping one, lost 0"
else
	fail "waking filter: rc=$(cat "$d/rc") left='$left' reads=$reads waits=$fwaits overlapping=$ov named=$named; $(grep -A4 iowait "$d/summary.txt" | tr '\n' ' ')"
fi
if same_state; then
	pass "after the waking filter: tracefs, the device and the I/O wait state as found"
else
	fail "after the waking filter: $(state_diff)"
fi

# 2. the reference tools: the same with and without the waits
if [ -x /usr/bin/blkparse ] && [ -x /usr/bin/btt ]; then
	p="$d/plain"
	mkdir -p "$p"
	cp "$d/$name".blktrace.* "$p/"
	for o in "" -t -s; do
		(cd "$d" && /usr/bin/blkparse -i "$name" $o >"ref$o.txt" 2>&1)
		(cd "$p" && /usr/bin/blkparse -i "$name" $o >"ref$o.txt" 2>&1)
		check_same "reference blkparse $o: the directory with the waits' files prints as without them" "$p/ref$o.txt" "$d/ref$o.txt"
	done
	(cd "$d" && $BLKPARSE -i "$name" >ours.txt 2>/dev/null)
	check_same "our blkparse on the directory prints what the reference prints" "$d/ref.txt" "$d/ours.txt"
	(cd "$d" && "$BLKPARSE" -i "$name" -d merged.bin -O >/dev/null 2>&1)
	$IW strip "$d/merged.bin" "$p/merged.bin"
	got=$($IW count "$d/merged.bin" | awk '{print $3}')
	if [ "$got" -ge "$waits" ]; then
		pass "blkparse -d carries the $got waits into the merged file"
	else
		fail "blkparse -d: $got waits in the merged file, at least $waits expected"
	fi
	for x in "$d" "$p"; do
		(cd "$x" && /usr/bin/btt -i merged.bin >btt.txt 2>&1 && /usr/bin/btt -i merged.bin -A >btt-A.txt 2>&1)
		/usr/bin/blkparse -i - <"$x/merged.bin" >"$x/rm.txt" 2>&1
	done
	check_same "reference btt on the merged file: as without the waits" "$p/btt.txt" "$d/btt.txt"
	check_same "reference btt -A on the merged file" "$p/btt-A.txt" "$d/btt-A.txt"
	check_same "reference blkparse -i - < merged file" "$p/rm.txt" "$d/rm.txt"
else
	skip "reference comparison of a live --iowait trace (no /usr/bin/blkparse or btt)"
fi

# our btt: the section "I/O wait by process" lists dd with its waits, each number as computed
# again from blkparse --iowait (tests/gen/iowait-btt.py)
d="$w/run1"
[ -f "$d/merged.bin" ] || (cd "$d" && "$BLKPARSE" -i "$name" -d merged.bin -O >/dev/null 2>&1)
(cd "$d" && "$TOP/btt/btt" -i merged.bin >obtt.txt 2>&1)
(cd "$d" && "$BLKPARSE" -i "$name" --iowait >bp-iw.txt 2>/dev/null)

# the merged file read back with --iowait: the lines of the directory, in their order, each
# wait on the time base of the event before it (tests/gen/iowait-merged.py compare)
"$BLKPARSE" -i "$d/merged.bin" --iowait >"$d/m-iw.txt" 2>"$d/m-iw.err"
if r=$(python3 -B "$TOP/tests/gen/iowait-merged.py" compare "$d/bp-iw.txt" "$d/m-iw.txt" 2>&1) && [ ! -s "$d/m-iw.err" ]; then
	pass "blkparse -i merged.bin --iowait: the lines of the directory's, each wait on its events' time base: $r"
else
	fail "blkparse -i merged.bin --iowait against the directory: $r $(head -c 200 "$d/m-iw.err")"
fi
row=$(grep -E "^ +$pid dd +\| " "$d/obtt.txt")
nrow=$(echo "$row" | awk '{ print $4 }')
if [ -n "$row" ] && [ "${nrow:-0}" -ge $((N * 9 / 10)) ] && r=$($IWB "$d/bp-iw.txt" "$d/obtt.txt" 2>&1); then
	pass "btt: dd (pid $pid) with $nrow waits for its $N reads ($(echo "$row" | awk '{ print "total", $5, "s, p50", $6, "s, own I/O", $NF }')); $r"
else
	fail "btt's I/O wait section: row '$row'; check: $r"
fi
# our btt --perfetto: dd's waits are iowait slices on dd's thread track, with their flows, as
# computed again from blkparse --iowait (tests/gen/perfetto-iowait.py)
SCHEMA="$SHARED_DIR/perfetto"
if [ -f "$SCHEMA/perfetto_trace.proto" ] && /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null; then
	(cd "$d" && "$TOP/btt/btt" -i merged.bin --perfetto="$d/dd.pftrace" >/dev/null 2>"$d/pf.err")
	if /usr/bin/python3 "$TOP/tests/gen/perfetto-check.py" --schema "$SCHEMA" --dump "$d/pf.dump" \
		"$d/dd.pftrace" >"$d/pf.sum" 2>"$d/pf.check" &&
		r=$(/usr/bin/python3 "$TOP/tests/gen/perfetto-iowait.py" "$d/bp-iw.txt" "$d/pf.dump" 2>&1); then
		nsl=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for s in d["slices"] if s[0] == "dd [tid %s]" % sys.argv[2] and s[1] == "iowait"))' "$d/pf.dump" "$pid")
		if [ "${nsl:-0}" -ge $((N * 9 / 10)) ]; then
			pass "btt --perfetto: $nsl iowait slices on dd's thread track 'dd [tid $pid]', each as blkparse --iowait gives it, with its flow: $r"
		else
			fail "btt --perfetto: $nsl iowait slices on 'dd [tid $pid]' (want >= $((N * 9 / 10))): $r"
		fi
	else
		fail "btt --perfetto of the live trace: $(head -n 2 "$d/pf.check") $r"
	fi
else
	skip "btt --perfetto of the live trace (no Perfetto schema or python3-protobuf)"
fi

# 3. -o -: the waits in-band, in time order; the reference ignores them, our pipeline carries them
d="$w/pipe"
mkdir -p "$d"
(cd "$d" && "$BT" -d "$loop" -w 6 --iowait -o - >stream.bin 2>err.txt; echo $? >rc) &
bt=$!
wait_iowait
reader "$d/dd.pid"
wait $bt
read -r n back nw < <(PYTHONPATH="$TOP/tests/gen" python3 -B -c '
import sys, blkrec
n = back = nw = 0
prev = None
for r in blkrec.records(open(sys.argv[1], "rb").read()):
    n += 1
    nw += blkrec.is_iowait(r)
    if prev is not None and r.time < prev:
        back += 1
    prev = r.time if prev is None else max(prev, r.time)
print(n, back, nw)' "$d/stream.bin")
if [ "$(cat "$d/rc")" = 0 ] && [ "${nw:-0}" -ge $((N * 9 / 10)) ] && [ "$back" = 0 ]; then
	pass "-o -: $n records in time order, $nw waits in-band among them"
else
	fail "-o -: rc=$(cat "$d/rc") $n records, $back steps back, $nw waits $(head -c 200 "$d/err.txt")"
fi
$IW strip "$d/stream.bin" "$d/plain.bin"
if [ -x /usr/bin/blkparse ]; then
	for o in "" -t -s; do
		/usr/bin/blkparse -i - $o <"$d/stream.bin" >"$d/r$o.txt" 2>&1
		/usr/bin/blkparse -i - $o <"$d/plain.bin" >"$d/p$o.txt" 2>&1
		check_same "reference blkparse -i - $o < the stream: as without the waits" "$d/p$o.txt" "$d/r$o.txt"
	done
fi
if [ -x /usr/bin/blkiomon ]; then
	for v in stream plain; do
		(cat "$d/$v.bin"; sleep 2.5) | /usr/bin/blkiomon -I 60 -h "$d/$v.mon" >/dev/null 2>&1
		grep -v '^time: ' "$d/$v.mon" >"$d/$v.mon.txt"
	done
	check_same "reference blkiomon on the stream: as without the waits" "$d/plain.mon.txt" "$d/stream.mon.txt"
fi
"$BLKPARSE" -i - -d - -O <"$d/stream.bin" 2>/dev/null | "$TOP/btt/btt" -i - >"$d/btt.txt" 2>&1
"$BLKPARSE" -i - -d - -O <"$d/plain.bin" 2>/dev/null | "$TOP/btt/btt" -i - >"$d/btt-plain.txt" 2>&1
$IWB strip "$d/btt.txt" >"$d/btt-stripped.txt"
check_same "blkparse -i - -d - -O | btt -i -: the waits change nothing in btt's report but add its I/O wait section" "$d/btt-plain.txt" "$d/btt-stripped.txt"
"$BLKPARSE" -i - --iowait <"$d/stream.bin" >"$d/bp-iw.txt" 2>/dev/null
if r=$($IWB "$d/bp-iw.txt" "$d/btt.txt" 2>&1); then
	pass "that btt's I/O wait section, as computed again from blkparse -i - --iowait: $r"
else
	fail "btt's I/O wait section through the pipe: $r"
fi
"$BLKPARSE" -i - -d "$d/piped.bin" -O <"$d/stream.bin" 2>/dev/null
if [ "$($IW count "$d/piped.bin" | awk '{print $3}')" = "$nw" ]; then
	pass "blkparse -i - -d: the $nw waits of the stream travel on into the dump"
else
	fail "blkparse -i - -d: $($IW count "$d/piped.bin") (want $nw waits)"
fi
if same_state; then pass "after -o -: state as found"; else fail "after -o -: $(state_diff)"; fi

# 4. the other exit paths
for sig in INT TERM; do
	d="$w/sig-$sig"
	mkdir -p "$d"
	(cd "$d" && exec "$BT" -d "$loop" --iowait >summary.txt 2>err.txt) &
	bt=$!
	wait_iowait
	reader "$d/dd.pid"
	kill -$sig $bt
	wait $bt
	rc=$?
	read -r _ reads _ waits _ ov _ < <($IW overlap "$d" "$name" "$(cat "$d/dd.pid")")
	if [ $rc = 0 ] && [ "${waits:-0}" -ge $((N * 9 / 10)) ] && same_state; then
		pass "SIG$sig: exit 0, $waits waits kept, state as found"
	else
		fail "SIG$sig: rc=$rc waits=$waits $(state_diff) $(head -c 200 "$d/err.txt")"
	fi
done
d="$w/kill"
mkdir -p "$d"
(cd "$d" && "$BT" -d "$loop" --iowait >summary.txt 2>err.txt; echo $? >rc) &
bt=$!
wait_iowait
reader "$d/dd.pid"
"$BT" -k -d "$loop" >"$d/k.out" 2>&1; krc=$?
for i in $(seq 1 100); do kill -0 $bt 2>/dev/null || break; sleep 0.1; done
if kill -0 $bt 2>/dev/null; then
	kill -INT $bt
	fail "blktrace -k: the --iowait trace did not end"
fi
wait $bt
if [ "$(cat "$d/rc")" = 0 ] && [ $krc = 0 ] && same_state &&
	{ [ -s "$d/$name.iowait.blktrace.0" ] || [ -s "$d/$name.iowait.blktrace.1" ]; }; then
	pass "blktrace -k: the --iowait trace ends by itself, exit 0, waits kept, state as found"
else
	fail "blktrace -k: rc=$(cat "$d/rc") krc=$krc $(state_diff) $(head -c 300 "$d/err.txt")"
fi
for s in module kprobe; do
	"$BT" -d "$loop" -w 1 --iowait=$s -D "$w/err-$s" >/dev/null 2>"$w/err-$s.txt"; rc=$?
	if [ $rc = 1 ] && grep -q "cannot record I/O waits: --iowait=$s:" "$w/err-$s.txt" && grep -q "^hint:" "$w/err-$s.txt" && same_state; then
		pass "--iowait=$s here: exit 1, says why ($(head -n 1 "$w/err-$s.txt" | cut -c1-120)), state as found"
	else
		fail "--iowait=$s: rc=$rc $(state_diff) $(head -c 300 "$w/err-$s.txt")"
	fi
done
"$BT" -d "$loop" -w 1 --iowait-all >/dev/null 2>"$w/err-usage.txt"; rc=$?
if [ $rc = 1 ] && grep -q "'--iowait'" "$w/err-usage.txt"; then
	pass "--iowait-all without --iowait: exit 1 naming the option"
else
	fail "--iowait-all without --iowait: rc=$rc $(cat "$w/err-usage.txt")"
fi
# a tracer killed with SIGKILL leaves its instance: refused next time? no: -k removes it
d="$w/sigkill"
mkdir -p "$d"
(cd "$d" && exec "$BT" -d "$loop" --iowait >/dev/null 2>err.txt) &
bt=$!
wait_iowait
kill -KILL $bt
wait $bt 2>/dev/null
left=$(ls "$T/instances" | grep -c '^blktrace-iowait-')
"$BT" -k -d "$loop" >"$d/k.out" 2>&1; krc=$?
# -k puts back the trace clock and ring size the killed tracer found (its state file, t0505)
if [ "$left" -ge 1 ] && [ $krc = 0 ] && grep -q "left-over tracefs entries removed" "$d/k.out" && same_state; then
	pass "SIGKILL leaves the I/O wait instance; blktrace -k removes it and resets the blk tracer: $(tr '\n' ' ' <"$d/k.out")"
else
	fail "SIGKILL then -k: left=$left krc=$krc $(state_diff) $(tr '\n' ' ' <"$d/k.out")"
	for x in "$T"/instances/blktrace-iowait-*; do [ -d "$x" ] && rmdir "$x"; done
	echo nop >"$T/current_tracer"; echo 0 >"$T/options/bin"; echo 0 >"/sys/block/$name/trace/enable"
fi

# 5. --iowait-all: the sleeps without an I/O are kept too, labelled
d="$w/all"
mkdir -p "$d"
(cd "$d" && "$BT" -d "$loop" -w 5 --iowait --iowait-all >summary.txt 2>err.txt; echo $? >rc) &
bt=$!
wait_iowait
reader "$d/dd.pid"
sleep 0.5
wait $bt
"$BLKPARSE" -i "$name" -D "$d" --iowait 2>/dev/null | awk '$6 == "w"' >"$d/iw.txt"
if [ "$(cat "$d/rc")" = 0 ] && grep -q "all of them are kept" "$d/err.txt" && grep -q " 0 uninterruptible sleeps without an I/O of the task in flight on a traced device not kept" "$d/summary.txt" &&
	[ "$(grep -c "io=7," "$d/iw.txt")" -ge $((N * 9 / 10)) ]; then
	pass "--iowait-all: none dropped, $(grep -c 'io=none' "$d/iw.txt") sleeps without an I/O kept as io=none beside $(grep -c 'io=7,' "$d/iw.txt") I/O waits"
else
	fail "--iowait-all: rc=$(cat "$d/rc") $(grep -A5 iowait "$d/summary.txt" | tr '\n' ' ')"
fi
if same_state; then
	pass "tracefs, the device and the I/O wait state as found at the end"
else
	fail "final state: $(state_diff)"
fi
