#!/bin/bash
# The relay path on a real kernel: Debian's stock kernel in qemu (tests/vm/), our blktrace
# tracing null_blk and a virtio disk through BLKTRACESETUP and the debugfs relay files,
# stopped by SIGINT; every I/O of the workload must come back, the trace must be torn down,
# and both blkparse versions must print the same for the files.
. "$(dirname "$0")/../lib.sh"

vm="$TOP/tests/vm"
if ! is_root; then
	skip "relay path in a VM (needs root to install qemu and the kernel image)"
	exit 0
fi
prep=$("$vm/prepare.sh" -q 2>&1)
rc=$?
if [ $rc = 77 ]; then
	skip "relay path in a VM ($(echo "$prep" | tail -n 1))"
	exit 0
elif [ $rc != 0 ]; then
	fail "relay path in a VM: tests/vm/prepare.sh failed: $(echo "$prep" | tail -n 3 | tr '\n' ' ')"
	exit 0
fi

run() { # label outdir run-trace-args...
	local label=$1 d=$2 line
	shift 2
	rm -rf "$d"
	BLKPARSE="$TOP/blkparse" "$vm/validate.sh" "$TOP/blktrace" "$d" "$@" >"$d.log" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS:* | FAIL:* | SKIP:*) echo "${line%%:*}: $label: ${line#*: }" ;;
		esac
	done <"$d.log"
	[ -f "$d/blktrace.stderr" ] || return
	if grep -q "tracefs" "$d/blktrace.stderr"; then
		fail "$label: the relay backend was used (stderr: $(head -c 200 "$d/blktrace.stderr"))"
	else
		pass "$label: the relay backend was used"
	fi
	if grep -qE "^  Total: +[1-9][0-9]* events \(dropped 0\)" "$d/blktrace.stdout"; then
		pass "$label: summary with counted events, no drops: $(grep Total "$d/blktrace.stdout" | tr -s ' ')"
	else
		fail "$label: summary: $(tr '\n' ' ' <"$d/blktrace.stdout")"
	fi
	if [ -x /usr/bin/blkparse ]; then
		/usr/bin/blkparse -i trace -D "$d/trace" >"$d/ref.txt" 2>/dev/null
		"$TOP/blkparse" -i trace -D "$d/trace" >"$d/ours.txt" 2>/dev/null
		check_same "$label: reference blkparse prints the same for the files" "$d/ref.txt" "$d/ours.txt"
	fi
}

run "VM null_blk" "$OUT/vm-nullb" --device nullb
run "VM virtio disk, -b 1024 -n 8" "$OUT/vm-virtio" --device virtio -- -b 1024 -n 8
