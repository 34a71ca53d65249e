#!/bin/bash
# Process names survive a busy machine (the tracefs backend keeps the ring's pages until the
# end and names their tasks then, from the kernel's saved_cmdlines, which keeps only the last
# few thousand tasks it saw): a dd reads a loop device and exits; then more distinct tasks than
# saved_cmdlines holds run and sleep briefly (with --iowait the kernel records the name of
# every task it switches to); only then is the tracer stopped. Every Q of the dd must still be
# named [dd] (the tracer kept the names the kernel gave while it ran), none "unknown".
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
N=40
skip_under_valgrind "tracefs names under churn" "a live kernel trace; the plain and ASan runs run it"
tracer_setup "tracefs names under churn" "$OUT/t0536" 16M
size=$(cat "$T/saved_cmdlines_size" 2>/dev/null)
if [ -z "$size" ]; then
	skip "tracefs names under churn (no saved_cmdlines_size in $T)"
	exit 0
fi
d="$w/t"
mkdir -p "$d"
(cd "$d" && exec "$BT" --iowait -d "$loop" -o t >out.txt 2>err.txt) &
bt=$!
if ! wait_tracing; then
	fail "tracefs names under churn: the tracer did not start: $(head -c 300 "$d/err.txt")"
	kill -INT $bt
	wait $bt
	exit 0
fi
dd if="$loop" of=/dev/null bs=4096 count=$N iflag=direct status=none
# more distinct tasks than saved_cmdlines keeps (now, with the tracer's own raise), each
# switched to at least once
now=$(cat "$T/saved_cmdlines_size")
churn=$((2 * now))
for ((i = 0; i < churn; i += 200)); do
	pids=()
	for ((k = 0; k < 200; k++)); do
		/bin/true &
		pids+=($!)
	done
	wait "${pids[@]}" # not the tracer's
done
kill -INT $bt
wait $bt
rc=$?
(cd "$d" && $BLKPARSE -i t -f '%a %C\n' >q.txt 2>q.err)
nq=$(awk '$1 == "Q"' "$d/q.txt" | wc -l)
named=$(awk '$1 == "Q" && $2 == "dd"' "$d/q.txt" | wc -l)
unknown=$(awk '$1 == "Q" && $2 == "unknown"' "$d/q.txt" | wc -l)
if [ $rc = 0 ] && [ "$nq" = $N ] && [ "$named" = $N ]; then
	pass "tracefs names under churn: all $N Qs of the dd named [dd] after $churn other tasks ran (saved_cmdlines keeps $now)"
else
	fail "tracefs names under churn: rc=$rc, $nq Qs (want $N), $named named dd, $unknown unknown, after $churn tasks ($d)"
fi
