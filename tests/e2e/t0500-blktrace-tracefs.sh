#!/bin/bash
# The tracer on this kernel (lockdown: relay files refused, so the tracefs backend): trace a
# scratch loop device during a known workload and check that every I/O is seen with the
# right sector, size and direction, that both blkparse versions print the same for our
# files, that tracefs and the device are left as found, and the stop paths.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
tracer_setup "blktrace tests" "$OUT/bt" 64M

state() {
	for f in tracing_on current_tracer trace_clock options/bin saved_cmdlines_size; do
		echo "$f=$(cat "$T/$f")"
	done
	echo "buffer_size_kb=$(cat "$T/buffer_size_kb")"
	echo "enable=$(cat /sys/block/$name/trace/enable)"
	iowait_state "$T"
}

before=$(state)

# 1. -w: stop after a few seconds
mkdir -p "$w/run1"
(cd "$w/run1" && "$BT" -d "$loop" -w 4 >summary.txt 2>err.txt; echo $? >rc) &
bt=$!
wait_tracing
workload "$w/run1/expected.txt"
wait $bt
if [ "$(cat "$w/run1/rc")" = 0 ] && grep -q "using the tracefs blk tracer" "$w/run1/err.txt"; then
	pass "blktrace -w 4: exit 0, says it uses tracefs and why: $(head -c 160 "$w/run1/err.txt")"
else
	fail "blktrace -w 4: rc=$(cat "$w/run1/rc") $(cat "$w/run1/err.txt")"
fi
if grep -qE "^  Total: +[0-9]+ events \(dropped 0\)" "$w/run1/summary.txt"; then
	pass "summary printed with events and dropped count: $(grep Total "$w/run1/summary.txt")"
else
	fail "summary: $(cat "$w/run1/summary.txt")"
fi
(cd "$w/run1" && $BLKPARSE -i "$name" >ours.txt 2>/dev/null)
check_ios "tracefs run (-w)" "$w/run1/expected.txt" "$w/run1/ours.txt"
if [ -x /usr/bin/blkparse ]; then
	(cd "$w/run1" && /usr/bin/blkparse -i "$name" >ref.txt 2>/dev/null)
	check_same "reference blkparse prints the same for our files" "$w/run1/ref.txt" "$w/run1/ours.txt"
	# -t on a live trace: the elapsed times, stale ones included, as the reference prints
	if needs_modelled_glibc "reference blkparse -t prints the same for our files"; then
		(cd "$w/run1" && /usr/bin/blkparse -i "$name" -t >ref-t.txt 2>/dev/null)
		(cd "$w/run1" && $BLKPARSE -i "$name" -t >ours-t.txt 2>/dev/null)
		check_same "reference blkparse -t prints the same for our files" "$w/run1/ref-t.txt" "$w/run1/ours-t.txt"
	fi
fi
after=$(state)
if [ "$before" = "$after" ]; then
	pass "tracefs and device trace settings restored after -w"
else
	fail "state changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
fi

# 2. SIGINT mid-trace, then trace again right away without -k
for sig in INT TERM; do
	mkdir -p "$w/run-$sig"
	(cd "$w/run-$sig" && exec "$BT" -d "$loop" >summary.txt 2>err.txt) &
	bt=$!
	wait_tracing
	workload "$w/run-$sig/expected.txt"
	kill -$sig $bt
	wait $bt
	rc=$?
	(cd "$w/run-$sig" && $BLKPARSE -i "$name" >ours.txt 2>err-parse.txt)
	prc=$?
	if [ $rc = 0 ] && [ $prc = 0 ] && [ "$before" = "$(state)" ]; then
		pass "SIG$sig mid-trace: exit 0, files parse cleanly, settings restored"
	else
		fail "SIG$sig: blktrace rc=$rc, blkparse rc=$prc $(head -c 200 "$w/run-$sig/err-parse.txt")"
	fi
	check_ios "run stopped by SIG$sig" "$w/run-$sig/expected.txt" "$w/run-$sig/ours.txt"
done

# 3. -o - into blkparse -i -, checked against the same stream parsed afterwards
mkdir -p "$w/pipe"
(cd "$w/pipe" && "$BT" -d "$loop" -w 4 -o - 2>err.txt | tee stream.bin | $BLKPARSE -i - >live.txt 2>/dev/null) &
bt=$!
wait_tracing
workload "$w/pipe/expected.txt"
wait $bt
(cd "$w/pipe" && $BLKPARSE -i - <stream.bin >after.txt 2>/dev/null)
check_same "blktrace -o - | blkparse -i -: same text as parsing the stream afterwards" "$w/pipe/after.txt" "$w/pipe/live.txt"
check_ios "blktrace -o - | blkparse -i -" "$w/pipe/expected.txt" "$w/pipe/live.txt"
if grep -q "Total:" "$w/pipe/err.txt" && ! grep -q "Total:" "$w/pipe/live.txt"; then
	pass "-o -: the summary goes to stderr, not into the stream"
else
	fail "-o -: summary placement"
fi

# 3b. btrace: the wrapper prints events live
mkdir -p "$w/btrace"
(cd "$w/btrace" && "$TOP/btrace" -w 4 "$loop" >out.txt 2>err.txt) &
bt=$!
wait_tracing
workload "$w/btrace/expected.txt"
wait $bt
check_ios "btrace -w 4 DEV" "$w/btrace/expected.txt" "$w/btrace/out.txt"
"$TOP/btrace" >/dev/null 2>&1; rc=$?
if [ $rc = 2 ]; then pass "btrace without a device: usage, exit 2"; else fail "btrace usage: rc=$rc"; fi

# 4. -D, -o NAME, -a/-A filtering and the v1 file layout
mkdir -p "$w/mask"
(cd "$w/mask" && "$BT" -d "$loop" -w 3 -a complete -D out -o mytrace >summary.txt 2>err.txt) &
bt=$!
wait_tracing
workload "$w/mask/expected.txt"
wait $bt
(cd "$w/mask" && $BLKPARSE -i mytrace -D out >ours.txt 2>/dev/null)
acts=$(awk '$6 ~ /^[A-Z]+$/ {print $6}' "$w/mask/ours.txt" | sort -u | tr '\n' ' ')
if [ "$acts" = "C " ]; then
	pass "-a complete -D out -o mytrace: out/mytrace.blktrace.N hold only completions"
else
	fail "-a complete: actions seen: '$acts'"
fi

# 4b. the output disk fills up: the run stops, says so, exits 1, settings restored
mkdir -p "$w/full"
if mount -t tmpfs -o size=12k none "$w/full" 2>/dev/null; then
	("$BT" -d "$loop" -w 20 -D "$w/full" >"$w/full.out" 2>"$w/full.err"; echo $? >"$w/full.rc") &
	bt=$!
	wait_tracing
	# about 12000 events: several times the output buffer, so writes fail mid-run
	dd if=/dev/zero of="$loop" bs=4096 count=2000 oflag=direct status=none
	for k in $(seq 1 50); do kill -0 $bt 2>/dev/null || break; sleep 0.2; done
	if kill -0 $bt 2>/dev/null; then
		kill -INT $bt
		wait $bt
		fail "output disk full: blktrace did not stop by itself"
	else
		wait $bt
		if [ "$(cat "$w/full.rc")" = 1 ] && grep -q "No space left on device" "$w/full.err" && [ "$before" = "$(state)" ]; then
			pass "output disk full: run stopped early, error reported, exit 1, settings restored"
		else
			fail "output disk full: rc=$(cat "$w/full.rc") $(head -c 300 "$w/full.err")"
		fi
	fi
	umount "$w/full"
else
	skip "output disk full (cannot mount a small tmpfs)"
fi

# 4c. the device goes away mid-trace (loop device detached): clean end, settings restored
truncate -s 16M "$w/gone.img"
gone=$(loop_attach "$w/gone.img" 2>/dev/null)
if [ -n "$gone" ]; then
	mkdir -p "$w/gone"
	(cd "$w/gone" && "$BT" -d "$gone" -w 5 >out.txt 2>err.txt; echo $? >rc) &
	bt=$!
	loop=$gone wait_tracing
	dd if=/dev/zero of="$gone" bs=4096 count=3 oflag=direct status=none
	losetup -d "$gone"
	wait $bt
	(cd "$w/gone" && $BLKPARSE -i "$(basename "$gone")" >parsed.txt 2>/dev/null)
	nc=$(grep -c ' C ' "$w/gone/parsed.txt")
	if [ "$(cat "$w/gone/rc")" = 0 ] && [ "$nc" -ge 3 ] && [ "$before" = "$(state)" ] &&
		! losetup -a | grep -q "$w/gone.img"; then
		pass "device detached mid-trace: exit 0, its $nc completions kept, settings restored, device released"
	else
		fail "device detached mid-trace: rc=$(cat "$w/gone/rc") completions=$nc $(head -c 200 "$w/gone/err.txt")"
	fi
else
	skip "device detached mid-trace (no second loop device)"
fi

# 4d. a blk tracer left set up (a tracer killed with SIGKILL): refused with a hint, -k resets it
echo blk >"$T/current_tracer"
echo 1 >"/sys/block/$name/trace/enable"
"$BT" -d "$loop" -w 1 >/dev/null 2>"$w/stale.err"; rc=$?
"$BT" -k -d "$loop" >/dev/null 2>"$w/kill.err"; krc=$?
if [ $rc = 1 ] && grep -q "no process reads" "$w/stale.err" && grep -q "blktrace -k" "$w/stale.err" &&
	[ $krc = 0 ] && [ "$before" = "$(state)" ]; then
	pass "blk tracer left set up: refused with a hint to -k; -k puts tracefs back"
else
	fail "stale blk tracer: rc=$rc krc=$krc $(cat "$w/stale.err" "$w/kill.err" | head -c 300)"
	echo nop >"$T/current_tracer"; echo 0 >"/sys/block/$name/trace/enable"
fi

# 5. errors: a missing device, an option error
"$BT" -d /dev/does-not-exist -w 1 >/dev/null 2>"$w/err1.txt"; rc=$?
if [ $rc = 1 ] && grep -q "/dev/does-not-exist" "$w/err1.txt"; then
	pass "missing device: exit 1 naming it"
else
	fail "missing device: rc=$rc $(cat "$w/err1.txt")"
fi
"$BT" -d "$loop" -b 0 >/dev/null 2>"$w/err2.txt"; rc=$?
if [ $rc = 1 ] && grep -q "'-b'" "$w/err2.txt"; then
	pass "bad -b value: exit 1 naming the option"
else
	fail "bad -b value: rc=$rc $(cat "$w/err2.txt")"
fi
if [ "$before" = "$(state)" ]; then
	pass "tracefs and device settings as found at the end"
else
	fail "final state differs: $(diff <(echo "$before") <(state) | tr '\n' ' ')"
fi
