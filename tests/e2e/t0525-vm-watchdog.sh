#!/bin/bash
# The VM harness's watchdog (tests/vm/init.sh): a run still under way after 3/4 of its
# --timeout is reported (OUTDIR/hung: its tasks, their states and wait channels) and killed,
# and the boot goes on to the next run, which runs as it would alone; run-trace says which run
# hung and exits 1. (A hang in one run of a batch had the VM killed after the sum of all the
# runs' limits, 840 s, with nothing saying which run or task hung.)
. "$(dirname "$0")/../lib.sh"

vm="$TOP/tests/vm"
skip_under_valgrind "the VM harness's watchdog" "nothing of ours runs under valgrind here"
skip_under_asan "the VM harness's watchdog" "it tests tests/vm/init.sh; the plain run covers it, the other VM scripts run blktrace under ASan"
. "$vm/batch.sh"
vm_ready "the VM harness's watchdog" || exit 0
w="$OUT/vm-watchdog"
rm -rf "$w"
mkdir -p "$w"
# a workload that never ends by itself (the tracer then is never stopped either)
echo 'sleep 600' >"$w/hang.sh"
B="$w/batch"
vm_batch_new "$B"
vm_batch_add "$B" "$w/hang" --workload "$w/hang.sh" --timeout 16
vm_batch_add "$B" "$w/after"
vm_batch_boot "$B" "$TOP/blktrace" >"$B.log" 2>&1
brc=$?
h="$w/hang/hung"
if [ $brc = 1 ] && grep -q "^run-trace: FAIL: run 1 ($w/hang): run 1 still under way after 12 s" "$B.log" &&
	[ "$(grep -c FAIL "$B.log")" = 1 ]; then
	pass "run-trace exit 1, naming the run that hung: $(grep FAIL "$B.log" | head -c 200)"
else
	fail "run-trace exit $brc (want 1 and one FAIL line for run 1): $(grep -E 'FAIL|ERROR' "$B.log" | head -n 3 | tr '\n' ' ')"
fi
if [ -f "$h" ] && grep -qE '^  [0-9]+ S sleep wchan=[a-z_]+ sleep 600 $' "$h" &&
	grep -qE '^  [0-9]+ [RS] blktrace wchan=' "$h" && grep -q '^    .*sysrq: Show Blocked State' "$h" &&
	grep -q '^hung=12$' "$w/hang/status" && [ "$(sed -n 's/^tracer_rc=//p' "$w/hang/status")" = 137 ]; then
	pass "the hung run's report lists its tasks with state and wait channel, the kernel's blocked tasks; its tracer was killed (exit 137)"
else
	fail "the hung run's report: $(head -c 400 "$h" 2>/dev/null) status: $(tr '\n' ' ' <"$w/hang/status" 2>/dev/null)"
fi
if [ -f "$w/after/DONE" ] && [ ! -f "$w/after/hung" ] && [ "$(sed -n 's/^tracer_stop=//p' "$w/after/status")" = sigint ] &&
	BLKPARSE="$TOP/blkparse" "$vm/validate.sh" --check "$w/after" >"$w/after.log" 2>&1; then
	pass "the run after it ran as alone: every I/O of its workload traced ($(grep -c PASS "$w/after.log") checks of validate.sh)"
else
	fail "the run after the hung one: $(grep -E 'FAIL' "$w/after.log" 2>/dev/null | head -n 3 | tr '\n' ' ') status: $(tr '\n' ' ' <"$w/after/status" 2>/dev/null | head -c 300)"
fi
