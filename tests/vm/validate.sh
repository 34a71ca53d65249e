#!/bin/bash
# tests/vm/validate.sh — run a tracer in the VM (run-trace.sh) and check what it brought back:
#
#   tests/vm/validate.sh TRACER_BINARY OUTDIR [run-trace options] [-- extra tracer args]
#   tests/vm/validate.sh --check OUTDIR      (a run that ran already, e.g. in a batch)
#
# Checks (one "PASS: ..."/"FAIL: ..." line each, or one "SKIP: ..." when no VM can run here):
# the VM ran to the end, the tracer exited 0 after SIGINT, per-CPU trace files came back,
# blkparse (${BLKPARSE:-/usr/bin/blkparse}) parses them, every I/O in expected.txt is there as
# Q and C with the right sector, size and direction (check-ios.py), the trace was torn down.
# The last line is "N passed, N failed". Exit 0 all passed, 1 a failure, 77 skipped.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
tracer=$1 out=$2
shift 2
BLKPARSE=${BLKPARSE:-/usr/bin/blkparse}
np=0 nf=0
pass() { echo "PASS: $*"; np=$((np + 1)); }
fail() { echo "FAIL: $*"; nf=$((nf + 1)); }
finish() { echo "$np passed, $nf failed"; [ $nf = 0 ]; exit $?; }

if [ "$tracer" = --check ]; then
	[ -f "$out/DONE" ] || { fail "vm: the VM ran the script to the end (no $out/DONE)"; finish; }
else
	"$here/run-trace.sh" "$tracer" "$out" "$@"
	rc=$?
	if [ $rc = 77 ]; then echo "SKIP: vm: no VM here (see above)"; exit 77; fi
	if [ $rc != 0 ]; then fail "vm: the VM ran the script to the end (run-trace exit $rc)"; finish; fi
fi
pass "vm: the VM ran the script to the end (the boot of $(cat "$out/vm-runs") run(s): $(cat "$out/vm-wall-seconds") s)"
get() { sed -n "s/^$1=//p" "$out/status" | tail -n 1; }

[ "$(get tracer_stop)" = sigint ] && [ "$(get tracer_rc)" = 0 ] &&
	pass "vm: tracer exited 0 after SIGINT" ||
	fail "vm: tracer exited 0 after SIGINT (stop: $(get tracer_stop), exit $(get tracer_rc); stderr: $(head -c 300 "$out/blktrace.stderr"))"

nfiles=$(ls "$out/trace"/trace.blktrace.* 2>/dev/null | wc -l)
[ "$nfiles" -ge 1 ] && pass "vm: $nfiles per-CPU trace files" || fail "vm: per-CPU trace files (none in $out/trace)"

if "$BLKPARSE" -i trace -D "$out/trace" >"$out/blkparse.txt" 2>"$out/blkparse.err"; then
	pass "vm: blkparse parses the trace ($(grep -c . "$out/blkparse.txt") lines)"
else
	fail "vm: blkparse parses the trace ($(head -n 3 "$out/blkparse.err"))"
fi

if [ "$(get workload_failures)" != 0 ]; then fail "vm: workload ($(get workload_failures) I/Os failed)"; fi
if "$here/check-ios.py" "$out/expected.txt" "$out/blkparse.txt" >"$out/check-ios.txt"; then
	pass "vm: $(tail -n 1 "$out/check-ios.txt" | sed 's/^check-ios: //')"
else
	fail "vm: $(tail -n 1 "$out/check-ios.txt" | sed 's/^check-ios: //')"
	head -n 10 "$out/check-ios.txt" | sed 's/^/    /'
fi

[ "$(get teardown_ok)" = 1 ] && pass "vm: trace torn down after exit" ||
	fail "vm: trace torn down after exit (still set up; blktrace -k: $(tr '\n' ' ' <"$out/blktrace-k.out" 2>/dev/null))"
finish
