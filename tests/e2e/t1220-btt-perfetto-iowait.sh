#!/bin/bash
# btt --perfetto with I/O waits (issue 15): on t0560's traces (the bundled real traces with
# tests/gen/iowait.py synth's waits: one for every second completed read, from 1 us after its
# Q to 2 us after its C, by the task that queued it), each wait is a slice "iowait" on its
# thread's track, with a flow from the end of the slice of the thread's last I/O completed
# before the wait's end. tests/gen/perfetto-iowait.py computes what is expected from
# blkparse --iowait's text, independently of btt: per thread the count, begin and duration of
# the slices and the track's name; each flow's two ends (perfetto-check.py --dump lists the
# flows); perfetto-check.py finds nothing wrong (no flow with one end). The same through a pipe
# with the waits in-band. btt's report is the same with --perfetto; the checker is seen to fail
# on a slice 1 ns short and on a flow gone.
. "$(dirname "$0")/../lib.sh"

SCHEMA="$SHARED_DIR/perfetto"
CHECK="$TOP/tests/gen/perfetto-check.py"
PIW="$TOP/tests/gen/perfetto-iowait.py"
IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"

perfetto_tools "btt --perfetto's I/O waits" || exit 0
w="$OUT/t1220"
rm -rf "$w"
mkdir -p "$w"

# check NAME PFTRACE BLKPARSE-TXT ERR: perfetto-check, then the waits against blkparse
check() {
	local t=$1 f=$2 bp=$3 err=$4
	if ! memo -o "$f.dump" "$PY" "$CHECK" --schema "$SCHEMA" --dump "$f.dump" "$f" >"$f.sum" 2>"$f.check"; then
		fail "$t: perfetto-check: $(head -n 3 "$f.check")"
		return 1
	fi
	pass "$t: perfetto-check finds nothing wrong (flows: $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["flows"])' "$f.sum"))"
	if r=$(memo "$PY" "$PIW" "$bp" "$f.dump" 2>&1); then
		pass "$t: the iowait slices per thread and their flows as blkparse --iowait gives them: $r"
	else
		fail "$t: iowait slices: $(echo "$r" | head -n 5 | tr '\n' ' ')"
		return 1
	fi
	# what stderr says: only the overlapping waits (synth makes them), as many as computed
	o=$(echo "$r" | sed -n 's/.*(\([0-9]*\) overlapping).*/\1/p')
	want=""
	[ "$o" != 0 ] && want="btt: warning: '$f': $o I/O waits overlap an earlier wait of their thread: drawn from its end (their 'ns' argument is the whole wait)"
	got=$(grep "I/O wait" "$err")
	[ "$got" = "$want" ] && pass "$t: stderr on the waits: ${got:-nothing}" ||
		fail "$t: stderr on the waits: '$got', want '$want'"
}

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
	[ "$k" -gt 0 ] || continue # complete-only: no Q, no wait made
	args=$(for n in $names; do printf -- '-i %s ' "$n"; done)
	(cd "$q" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1 && $BLKPARSE $args --iowait >bp.txt 2>/dev/null)
	if ! (cd "$q" && $BTT -i merged.bin >plain.txt 2>/dev/null &&
		$BTT -i merged.bin --perfetto="$q/w.pftrace" >btt.txt 2>btt.err); then
		fail "$t: btt --perfetto: $(head -n 3 "$q/btt.err")"
		continue
	fi
	checked=$((checked + 1))
	check_same "$t: btt's report with waits is the same with --perfetto" "$q/plain.txt" "$q/btt.txt"
	check "$t ($k waits)" "$q/w.pftrace" "$q/bp.txt" "$q/btt.err"
	# through a pipe, the waits in-band
	$IW merge "$p/live.bin" $(for n in $names; do ls "$p/$n".blktrace.*; done)
	$IW inband "$p/live.bin" "$q/live.bin" --every 2 >/dev/null
	$BLKPARSE -i - --iowait <"$q/live.bin" >"$q/live-bp.txt" 2>/dev/null
	$BLKPARSE -i - -d - -O <"$q/live.bin" 2>/dev/null | $BTT -i - --perfetto="$q/live.pftrace" >/dev/null 2>"$q/live.err"
	check "$t: through blkparse -i - -d - -O | btt -i -" "$q/live.pftrace" "$q/live-bp.txt" "$q/live.err"
	# the trace without waits: no iowait slice, no thread track
	(cd "$p" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1 && $BTT -i merged.bin --perfetto="$p/w.pftrace" >/dev/null 2>&1)
	if memo "$PY" "$CHECK" --schema "$SCHEMA" "$p/w.pftrace" >"$p/w.sum" 2>/dev/null && ! grep -q '\[tid ' "$p/w.sum" &&
		! grep -q '"iowait"' "$p/w.sum"; then
		pass "$t: without waits: no iowait slice, no thread track"
	else
		fail "$t: without waits: $(grep -m 2 'tid \|iowait' "$p/w.sum")"
	fi
done
if [ $checked = 0 ]; then
	fail "no bundled trace with waits to check"
	exit 0
fi

# the checker fails on a wait 1 ns short, and on a flow gone
q="$w/$t/waits"
"$PY" - "$q/w.pftrace.dump" "$w/short.json" "$w/noflow.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["slices"]:
    if s[1] == "iowait":
        s[3] -= 1
        break
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["flows"] = [f for f in d["flows"] if f[8] == "iowait"][1:] + [f for f in d["flows"] if f[8] != "iowait"]
json.dump(d, open(sys.argv[3], "w"))
PYEOF
for m in short noflow; do
	if ! "$PY" "$PIW" "$q/bp.txt" "$w/$m.json" >"$w/$m.out" 2>&1; then
		pass "$t: the checker fails on a dump with $m: $(head -n 1 "$w/$m.out")"
	else
		fail "$t: the checker took a dump with $m"
	fi
done
