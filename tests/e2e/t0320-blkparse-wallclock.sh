#!/bin/bash
# %z (wall clock) in every input mode: per-CPU files, the same records as one live stream on
# a pipe, and the merged file of blkparse -d (by name and on a pipe). tests/gen/wallcheck.py
# computes each event's wall clock from the per-CPU files (timestamp note + distance from it)
# and checks every line; the live stream must also read exactly as the reference reads it.
. "$(dirname "$0")/../lib.sh"

if ! command -v python3 >/dev/null; then
	skip "%z wall clock (python3 not installed)"
	exit 0
fi
# a zone with a half-hour offset, written out so that no zone database is needed
export TZ=IST-5:30
W="python3 $TOP/tests/gen/wallcheck.py"
F='%M,%m %c %s %T.%t %z %a\n'
w="$OUT/wallclock"
rm -rf "$w"
mkdir -p "$w"
REF=/usr/bin/blkparse
[ -x $REF ] || REF=

# check "what" MODE TEXT DIR: every %z line of TEXT against the per-CPU files in DIR
wcheck() {
	local msg
	if msg=$(memo $W check "$2" "$3" "$4"/*.blktrace.* 2>&1); then
		pass "$1: $msg"
	else
		fail "$1: $msg"
	fi
}

# the bundled traces, and a generated one with 2 devices of 3 CPUs (under valgrind: fewer)
"$TOP/tests/gen/gentrace" -c 3 -d 2 -n 30000 -s 11 -o gen -D "$w/gen"
traces=("$TOP"/tests/data/*/ "$w/gen/")
[ -n "${VALGRIND:-}" ] && traces=("$TOP/tests/data/ext4-mixed/" "$w/gen/")
for d in "${traces[@]}"; do
	t=$(basename "$d")
	[ "$t" = gen ] || d=$(unpack "$t")
	inputs=()
	for f in "$d"/*.blktrace.0; do f=$(basename "$f"); inputs+=(-i "${f%.blktrace.0}"); done
	(cd "$d" && $BLKPARSE "${inputs[@]}" -q -f "$F" >"$w/$t.percpu.txt" 2>/dev/null)
	wcheck "$t: per-CPU files" exact "$w/$t.percpu.txt" "$d"

	memo -o "$w/$t.live.bin" $W stream "$w/$t.live.bin" "$d"/*.blktrace.*
	$BLKPARSE -i - -q -f "$F" <"$w/$t.live.bin" >"$w/$t.live.txt" 2>/dev/null
	wcheck "$t: live stream on a pipe" exact "$w/$t.live.txt" "$d"
	if [ -n "$REF" ]; then
		$REF -i - -q -f "$F" <"$w/$t.live.bin" >"$w/$t.live.ref" 2>/dev/null
		check_same "$t: live stream on a pipe reads as the reference reads it" \
			"$w/$t.live.ref" "$w/$t.live.txt"
		# 1.2.0 leaves the start of tracing out of per-CPU files (1.3.0 fixed it; we follow)
		(cd "$d" && $REF "${inputs[@]}" -q -f "$F" >"$w/$t.percpu.ref" 2>/dev/null)
		wcheck "$t: the reference's per-CPU %z is early by the time to the first event" \
			classic "$w/$t.percpu.ref" "$d"
	fi

	(cd "$d" && $BLKPARSE "${inputs[@]}" -d "$w/$t.merged.bin" -O >/dev/null 2>&1)
	$BLKPARSE -i "$w/$t.merged.bin" -q -f "$F" >"$w/$t.merged.txt" 2>"$w/$t.merged.err"
	wcheck "$t: merged file (-d), by name" estimated "$w/$t.merged.txt" "$d"
	$BLKPARSE -i - -q -f "$F" <"$w/$t.merged.bin" >"$w/$t.merged-pipe.txt" 2>/dev/null
	wcheck "$t: merged file (-d) on a pipe" estimated "$w/$t.merged-pipe.txt" "$d"
	if [ -s "$w/$t.merged.err" ]; then
		fail "$t: merged file: unexpected diagnostics: $(head -c 300 "$w/$t.merged.err")"
	fi
done

# a merged file whose first event has no process note: dated by the timestamp note, warned
d=$(unpack ext4-mixed)
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/ext4-mixed.merged.bin" "$w/nonote.bin" <<'EOF'
# drop the process notes of the first event's process (ext4lazyinit, pid 126)
import sys, blkrec
data, out = open(sys.argv[1], 'rb').read(), bytearray()
for r in blkrec.records(data):
    if not (r.action & blkrec.NOTIFY and r.action & 0xffff == blkrec.TN_PROCESS and r.pid == 126):
        out += data[r.offset:r.end]
open(sys.argv[2], 'wb').write(out)
EOF
$BLKPARSE -i "$w/nonote.bin" -q -f "$F" >"$w/nonote.txt" 2>"$w/nonote.err"
wcheck "merged file without the first event's process note" classic "$w/nonote.txt" "$d"
if grep -q 'warning: %z may be early' "$w/nonote.err"; then
	pass "merged file without the first event's process note: warned"
else
	fail "merged file without the first event's process note: no warning: $(head -c 300 "$w/nonote.err")"
fi
$BLKPARSE -i "$w/nonote.bin" -q >/dev/null 2>"$w/nonote-noz.err"
if [ -s "$w/nonote-noz.err" ]; then
	fail "merged file without %z: unexpected diagnostics: $(head -c 300 "$w/nonote-noz.err")"
else
	pass "merged file without the first event's process note, no %z: no warning"
fi
