#!/bin/bash
# A tracer that cleans up after anything and says who holds what (issue 37), through
# tracefs on this kernel:
# - a blktrace killed with SIGKILL leaves the blk tracer set up, with its trace clock, ring
#   size and the device's trace (its act_mask); its state file under /run says what it found;
# - a new blktrace then says no process reads the blk tracer and hints 'blktrace -k';
# - 'blktrace -k' puts every setting back as found (tracing_on, current_tracer,
#   trace_clock, buffer_size_kb, options/bin, the device's trace/enable: its act_mask gone
#   with it),
#   naming the killed tracer's pid, and removes the state file;
# - a second blktrace while one traces names that process (pid, command) and does not
#   suggest -k; the first is not disturbed;
# - without CAP_SYS_ADMIN, blktrace and blktrace -k say tracing needs root.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
STATE=/run/blktrace-ng/tracefs.state
skip_under_valgrind "cleanup after SIGKILL" "the tracer is killed with SIGKILL on purpose; the plain and ASan runs run it"
tracer_setup "cleanup after SIGKILL" "$OUT/t0505" 16M

state() {
	local f
	for f in tracing_on current_tracer trace_clock options/bin buffer_size_kb saved_cmdlines_size; do
		echo "$f=$(cat "$T/$f")"
	done
	echo "enable=$(cat "/sys/block/$name/trace/enable")"
	echo "act_mask=$(cat "/sys/block/$name/trace/act_mask")"
}
before=$(state)
put_back() { # what the test found, when a check failed
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo 0 >"$T/options/bin"
	echo 0 >"/sys/block/$name/trace/enable"
	echo "$before" | sed -n 's/^trace_clock=.*\[\(.*\)\].*/\1/p' >"$T/trace_clock"
	echo "$before" | sed -n 's/^buffer_size_kb=//p' | sed 's/ .*//' >"$T/buffer_size_kb"
	echo "$before" | sed -n 's/^tracing_on=//p' >"$T/tracing_on"
	rm -f "$STATE"
}

# 1. SIGKILL while tracing with settings of its own (a ring of 2 MiB, reads and writes only)
d="$w/kill"
mkdir -p "$d"
(cd "$d" && exec "$BT" -d "$loop" -b 2048 -a read -a write >/dev/null 2>err.txt) &
bt=$!
if ! wait_tracing; then
	fail "SIGKILL: the tracer did not start: $(head -c 300 "$d/err.txt")"
	kill -INT $bt
	wait $bt
	exit 0
fi
during=$(state)
kill -KILL $bt
wait $bt 2>/dev/null
after_kill=$(state)
if [ "$after_kill" != "$before" ] && grep -q "^trace_clock=.*\[mono\]" <<<"$after_kill" &&
	[ "$(grep '^buffer_size_kb=' <<<"$after_kill")" != "$(grep '^buffer_size_kb=' <<<"$before")" ] &&
	[ "$(grep '^act_mask=' <<<"$after_kill")" != "$(grep '^act_mask=' <<<"$before")" ]; then
	pass "SIGKILL leaves the blk tracer set up: $(diff <(echo "$before") <(echo "$after_kill") | grep '^>' | tr '\n' ' ')"
else
	fail "SIGKILL: expected the tracer's clock, ring size and act_mask left: $(echo "$after_kill" | tr '\n' ' ')"
fi
if [ -f "$STATE" ] && grep -q "^pid $bt$" "$STATE" && grep -q "^buffer_size_kb " "$STATE"; then
	pass "the killed tracer's state file is there ($STATE, pid $bt)"
else
	fail "no state file of pid $bt: $(cat "$STATE" 2>&1 | head -c 300)"
fi

# 2. a new tracer: refused, nobody reads the blk tracer, the hint is -k
"$BT" -d "$loop" -w 1 >/dev/null 2>"$d/stale.err"
rc=$?
if [ $rc = 1 ] && grep -q "no process reads" "$d/stale.err" && grep -q "blktrace -k" "$d/stale.err"; then
	pass "a new blktrace after the SIGKILL: exit 1, no process reads the blk tracer, hint -k"
else
	fail "a new blktrace after the SIGKILL: rc=$rc $(head -c 400 "$d/stale.err")"
fi

# 3. -k puts every setting back, as found
"$BT" -k -d "$loop" >"$d/k.out" 2>&1
krc=$?
now=$(state)
if [ $krc = 0 ] && [ "$now" = "$before" ] && grep -q "blktrace $bt (killed)" "$d/k.out" && [ ! -e "$STATE" ]; then
	pass "blktrace -k puts back every setting the killed tracer changed: $(tr '\n' ' ' <"$d/k.out")"
else
	fail "blktrace -k after SIGKILL: rc=$krc $(tr '\n' ' ' <"$d/k.out") differs: $(diff <(echo "$before") <(echo "$now") | tr '\n' ' ')"
	put_back
fi

# 4. a second tracer while one traces: names it, no -k hint, the first undisturbed
d="$w/busy"
mkdir -p "$d"
(cd "$d" && exec "$BT" -d "$loop" -w 30 >out.txt 2>err.txt) &
bt=$!
if wait_tracing; then
	"$BT" -d "$loop" -w 1 -D "$d/second" >/dev/null 2>"$d/second.err"
	rc=$?
	"$BT" --backend=tracefs -d "$loop" -w 1 -D "$d/third" >/dev/null 2>"$d/third.err"
	rc3=$?
	dd if="$loop" of=/dev/null bs=4096 count=16 iflag=direct status=none
	sleep 0.5
	alive=0
	kill -0 $bt 2>/dev/null && alive=1
	if [ $rc = 1 ] && grep -q "process $bt (blktrace)" "$d/second.err" && ! grep -q -- "blktrace -k" "$d/second.err" && [ $alive = 1 ]; then
		pass "a second blktrace names the one tracing (pid $bt, blktrace), without a -k hint: $(head -n 1 "$d/second.err")"
	else
		fail "a second blktrace: rc=$rc alive=$alive $(head -c 400 "$d/second.err")"
	fi
	if [ $rc3 = 1 ] && grep -q "process $bt (blktrace) is tracing" "$d/third.err" && ! grep -q -- "blktrace -k" "$d/third.err"; then
		pass "--backend=tracefs: the same, the blk tracer in use by pid $bt: $(head -n 1 "$d/third.err")"
	else
		fail "--backend=tracefs while one traces: rc=$rc3 $(head -c 400 "$d/third.err")"
	fi
	kill -INT $bt
	wait $bt
	(cd "$d" && $BLKPARSE -i "$name" 2>/dev/null | grep -c ' C ' >nc)
	if [ "$(cat "$d/nc")" -ge 16 ] && [ "$(state)" = "$before" ] && [ ! -e "$STATE" ]; then
		pass "the first tracer went on: $(cat "$d/nc") completions, settings as found, no state file left"
	else
		fail "the first tracer: $(cat "$d/nc") completions; $(diff <(echo "$before") <(state) | tr '\n' ' ') state file: $(ls "$STATE" 2>&1)"
		put_back
	fi
else
	fail "busy: the first tracer did not start: $(head -c 300 "$d/err.txt")"
	kill -INT $bt
	wait $bt
fi

# 5. without CAP_SYS_ADMIN
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BT" -d "$loop" -w 1 >/dev/null 2>"$w/user.err"
	rc=$?
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BT" -k -d "$loop" >/dev/null 2>"$w/userk.err"
	krc=$?
	if [ $rc = 1 ] && grep -q "needs root: the CAP_SYS_ADMIN capability" "$w/user.err" &&
		[ $krc = 1 ] && grep -q "needs root" "$w/userk.err" && [ "$(state)" = "$before" ]; then
		pass "without CAP_SYS_ADMIN: exit 1, tracing needs root: $(head -n 1 "$w/user.err")"
	else
		fail "without CAP_SYS_ADMIN: rc=$rc krc=$krc $(head -c 300 "$w/user.err") / $(head -c 200 "$w/userk.err")"
	fi
else
	skip "without CAP_SYS_ADMIN (no setpriv: util-linux)"
fi
