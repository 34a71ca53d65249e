#!/bin/bash
# The relay path on a real kernel: Debian's stock kernel in qemu (tests/vm/), our blktrace
# tracing null_blk and a virtio disk through BLKTRACESETUP and the debugfs relay files,
# stopped by SIGINT; every I/O of the workload must come back, the trace must be torn down,
# the files must name the device (a device name note), and both blkparse versions must print
# the same for the files.
. "$(dirname "$0")/../lib.sh"

vm="$TOP/tests/vm"
skip_under_valgrind "the relay path in a VM" "the tracer runs natively in the VM, valgrind would only check blkparse on its files; the plain and ASan runs run it"
. "$vm/batch.sh"
vm_ready "relay path in a VM" || exit 0

# the five runs below share one boot of the VM (tests/vm/batch.sh): they are staged, the VM
# runs them in turn, then each is checked
B="$OUT/vm-relay-batch"
vm_batch_new "$B"
# a TCG guest on a busy machine (make check runs other tests beside this one), with an
# ASan-built tracer, can take several times its usual 10 s: the time limit leaves room
VMT="--timeout 400"
vm_batch_add "$B" "$OUT/vm-nullb" --device nullb $VMT
vm_batch_add "$B" "$OUT/vm-virtio" --device virtio $VMT -- -b 1024 -n 8
# blktrace -k from another shell during a relay trace: the running tracer notices the
# teardown, ends by itself with a message, exit 0, the I/Os before -k in its files
d="$OUT/vm-kill"
rm -rf "$d"; mkdir -p "$d"
cat >"$d.workload" <<'WL'
for i in 0 1 2 3 4 5 6 7; do io_write $((i * 8192)) 4096; io_read $((i * 12288)) 4096; done
# a second tracer on the busy device names the one that holds it (found under debugfs
# block/NAME, the relay files it reads), without hinting -k
echo "$BTPID" >/out/first.pid
timeout 10 blktrace -d "$DEV" -D /tmp -o second >/out/second.out 2>&1
echo "exit $?" >>/out/second.out
sleep 1
blktrace -k -d "$DEV" >/out/kill.out 2>&1
echo "exit $?" >>/out/kill.out
sleep 2
WL
vm_batch_add "$B" "$d" --workload "$d.workload" $VMT
# -o - on the relay path: writers on both CPUs at once, the stream in time order
d="$OUT/vm-stream"
rm -rf "$d"; mkdir -p "$d"
cat >"$d.workload" <<'WL'
for w in 0 1 2 3; do
	(for i in $(seq 0 149); do dd if=/dev/zero of="$DEV" bs=4096 count=1 seek=$((w * 1000 + i)) oflag=direct conv=notrunc 2>/dev/null; done) &
done
wait
WL
vm_batch_add "$B" "$d" --workload "$d.workload" $VMT -- -o -
# the tracefs backend on this kernel (6.1: its blk tracer's ring-buffer entries, not 6.18's)
vm_batch_add "$B" "$OUT/vm-tracefs" --device virtio --workload dio-sizes $VMT -- --backend=tracefs
vm_batch_boot "$B" "$TOP/blktrace" >"$B.log" 2>&1
brc=$?
if [ $brc = 0 ]; then
	pass "VM relay: one boot ran the 5 runs to the end ($(cat "$OUT/vm-nullb/vm-wall-seconds") s)"
else
	fail "VM relay: the boot of the 5 runs: run-trace exit $brc: $(grep -E 'FAIL|ERROR' "$B.log" | head -n 3 | tr '\n' ' ')"
fi

check() { # label outdir [backend: relay (default) or tracefs]
	local label=$1 d=$2 line backend=${3:-relay}
	vm_run_ended "$d" || { fail "$label: $(vm_run_why "$d" "$B.log")"; return; }
	BLKPARSE="$TOP/blkparse" "$vm/validate.sh" --check "$d" >"$d.log" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS:* | FAIL:* | SKIP:*) echo "${line%%:*}: $label: ${line#*: }" ;;
		esac
	done <"$d.log"
	[ -f "$d/blktrace.stderr" ] || return
	if [ "$backend" = tracefs ]; then
		grep -q "using the tracefs blk tracer" "$d/blktrace.stderr" &&
			pass "$label: the tracefs backend was used" ||
			fail "$label: the tracefs backend was not used (stderr: $(head -c 200 "$d/blktrace.stderr"))"
		# a ring not yet expanded ("7 (expanded: 1408)") is put back at the size it expands
		# to, which the kernel rounds to its pages (1410)
		kb() { sed -n 's/^buffer_size_kb=\(.*expanded: \)\{0,1\}\([0-9]*\).*/\2/p' "$1"; }
		if [ -s "$d/tracefs-before.txt" ] &&
			cmp -s <(grep -v '^buffer_size_kb=' "$d/tracefs-before.txt") <(grep -v '^buffer_size_kb=' "$d/tracefs-after.txt") &&
			[ "$(kb "$d/tracefs-after.txt")" -ge "$(kb "$d/tracefs-before.txt")" ] &&
			[ "$(kb "$d/tracefs-after.txt")" -le "$(($(kb "$d/tracefs-before.txt") + 4))" ]; then
			pass "$label: tracefs settings as found after the run: $(tr '\n' ' ' <"$d/tracefs-after.txt")"
		else
			fail "$label: tracefs settings before: $(tr '\n' ' ' <"$d/tracefs-before.txt" 2>&1), after: $(tr '\n' ' ' <"$d/tracefs-after.txt" 2>&1)"
		fi
	elif grep -q "tracefs" "$d/blktrace.stderr"; then
		fail "$label: the relay backend was used (stderr: $(head -c 200 "$d/blktrace.stderr"))"
	else
		pass "$label: the relay backend was used"
	fi
	if [ "$backend" = tracefs ] && [ -s "$d/blkparse.txt" ]; then
		# converted at the end, after the workload's processes exited: named all the same
		names=$(awk '$6 == "Q" { print $NF }' "$d/blkparse.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
		if [ -n "$names" ] && ! awk '$6 == "Q" && $NF !~ /^\[dd\]$/ { exit 1 }' "$d/blkparse.txt" >/dev/null; then
			fail "$label: Q events without their process's name: $names"
		elif [ -n "$names" ]; then
			pass "$label: every Q event names its (exited) process: $names"
		else
			fail "$label: no Q events in blkparse's text"
		fi
	fi
	if grep -qE "^  Total: +[1-9][0-9]* events \(dropped 0\)" "$d/blktrace.stdout"; then
		pass "$label: summary with counted events, no drops: $(grep Total "$d/blktrace.stdout" | tr -s ' ')"
	else
		fail "$label: summary: $(tr '\n' ' ' <"$d/blktrace.stdout")"
	fi
	# the device name note (issue 37) at the head of each file with records, relay too
	PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/devname.py" list "$d"/trace/trace.blktrace.* \
		>"$d/devname.txt" 2>&1
	if [ -s "$d/devname.txt" ] && [ "$(awk '{ print $5 }' "$d/devname.txt" | sort -u | wc -l)" = 1 ] &&
		awk '$5 !~ /^[a-z][a-z0-9_-]*$/ { exit 1 }' "$d/devname.txt"; then
		pass "$label: the files name the device: $(awk '{ print $3, $5 }' "$d/devname.txt" | sort -u)"
	else
		fail "$label: device name notes: $(head -c 300 "$d/devname.txt")"
	fi
	if [ -x /usr/bin/blkparse ]; then
		/usr/bin/blkparse -i trace -D "$d/trace" >"$d/ref.txt" 2>/dev/null
		"$TOP/blkparse" -i trace -D "$d/trace" >"$d/ours.txt" 2>/dev/null
		check_same "$label: reference blkparse prints the same for the files" "$d/ref.txt" "$d/ours.txt"
	fi
}

check "VM null_blk" "$OUT/vm-nullb"
check "VM virtio disk, -b 1024 -n 8" "$OUT/vm-virtio"
check "VM virtio disk, --backend=tracefs" "$OUT/vm-tracefs" tracefs

# the run stopped by blktrace -k
d="$OUT/vm-kill"
get() { sed -n "s/^$1=//p" "$d/status" 2>/dev/null | tail -n 1; }
if vm_run_ended "$d"; then
	"$TOP/blkparse" -i trace -D "$d/trace" >"$d/parsed.txt" 2>/dev/null
	if [ "$(get tracer_stop)" = exited-early ] && [ "$(get tracer_rc)" = 0 ] &&
		grep -q "torn down from outside" "$d/blktrace.stderr" && grep -q "exit 0" "$d/kill.out" &&
		[ "$(get teardown_ok)" = 1 ]; then
		pass "VM relay: blktrace -k during a trace: the tracer ended by itself, exit 0 ($(head -n1 "$d/blktrace.stderr"))"
	else
		fail "VM relay: -k during a trace: stop=$(get tracer_stop) rc=$(get tracer_rc) k: $(tr '\n' ' ' <"$d/kill.out") stderr: $(head -c 300 "$d/blktrace.stderr")"
	fi
	first=$(cat "$d/first.pid" 2>/dev/null)
	if [ -n "$first" ] && grep -q "is being traced by process $first (blktrace); stop it first (kill -INT $first)" "$d/second.out" &&
		! grep -q -- "-k" "$d/second.out" && grep -q "^exit 1$" "$d/second.out"; then
		pass "VM relay: a second tracer names the process that holds the device: $(head -n1 "$d/second.out")"
	else
		fail "VM relay: second tracer on the busy device (first: pid ${first:-?}): $(tr '\n' ' ' <"$d/second.out" 2>/dev/null)"
	fi
	if "$vm/check-ios.py" "$d/expected.txt" "$d/parsed.txt" >"$d/check-ios.txt"; then
		pass "VM relay: trace stopped by -k: $(tail -n 1 "$d/check-ios.txt" | sed 's/^check-ios: //')"
	else
		fail "VM relay: trace stopped by -k: $(tail -n 1 "$d/check-ios.txt")"
	fi
else
	fail "VM relay: -k during a trace: $(vm_run_why "$d" "$B.log")"
fi

# the -o - stream
d="$OUT/vm-stream"
if vm_run_ended "$d"; then
	read -r n back < <(PYTHONPATH="$TOP/tests/gen" python3 -B -c '
import sys, blkrec
n = back = 0
prev = None
for r in blkrec.records(open(sys.argv[1], "rb").read()):
    n += 1
    if prev is not None and r.time < prev:
        back += 1
    prev = r.time if prev is None else max(prev, r.time)
print(n, back)' "$d/blktrace.stdout")
	cpus=$("$TOP/blkparse" -i - <"$d/blktrace.stdout" 2>/dev/null | awk '$6 == "C" {print $2}' | sort -u | wc -l)
	writes=$("$TOP/blkparse" -i - <"$d/blktrace.stdout" 2>/dev/null | awk '$6 == "C" && $7 ~ /W/' | wc -l)
	if [ "$(get tracer_rc)" = 0 ] && [ "${n:-0}" -gt 1000 ] && [ "$back" = 0 ] && [ "$writes" -ge 600 ]; then
		pass "VM relay: -o - stream of $n records from $cpus CPUs in time order, all 600 writes completed in it"
	else
		fail "VM relay: -o - stream: rc=$(get tracer_rc) $n records, $back steps back, $writes write completions, $cpus CPUs $(head -c 200 "$d/blktrace.stderr")"
	fi
else
	fail "VM relay: -o - stream: $(vm_run_why "$d" "$B.log")"
fi
