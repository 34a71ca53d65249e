#!/bin/bash
# I/O wait notes (blktrace --iowait, include/blk/trace.h BLK_TN_IOWAIT) and the classic tools:
# the bundled real traces get waits (tests/gen/iowait.py: one per completed read, from its Q
# to its C), in side files beside the per-CPU files, in the merged file our blkparse -d
# writes, and in-band in a live-like stream. The reference tools must print exactly what
# they print for the same trace without them: the per-CPU directory (blkparse, -t, -s, -q),
# the merged file (btt, btt -A, blkparse -i -, -t, -s, verify_blkparse on its text, blkiomon),
# the stream (blkparse -i -, -t, -s, its -d dump through btt, blkiomon). The traces without
# waits are the same files with the waits taken out again by iowait.py strip (independently
# of the C library). Ours must do the same, carry the waits through -d with their times
# rebased, and print them with --iowait, each at the time computed here.
. "$(dirname "$0")/../lib.sh"

IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
IWB="memo python3 -B $TOP/tests/gen/iowait-btt.py"
BTT="$TOP/btt/btt"
MON="$TOP/blkiomon"
RB=/usr/bin/blkparse RBTT=/usr/bin/btt RMON=/usr/bin/blkiomon RVB=/usr/bin/verify_blkparse
if [ ! -x $RB ] || [ ! -x $RBTT ]; then
	skip "I/O wait notes and the reference tools (no /usr/bin/blkparse or btt: apt-get install blktrace)"
	exit 0
fi
w="$OUT/iowait-ref"
rm -rf "$w"
mkdir -p "$w"

# same WHAT A B: the two files are equal
same() { check_same "$1" "$2" "$3"; }
# The reference tools through the memo (tests/lib.sh): the plain, ASan and valgrind runs hand
# them the same files (the side files and streams iowait.py makes are the same bytes in each),
# and their runs were half of this script's CPU time in each run.
# ref_dir DIR CMD...: CMD in DIR, the per-CPU files there its input
ref_dir() {
	local dir=$1 f ins=()
	shift
	for f in "$dir"/*.blktrace.*; do ins+=(-i "$f"); done
	(cd "$dir" && memo "${ins[@]}" "$@")
}

# blkiomon on a stream: its -h report (time lines masked) and -b records; one long interval
# so that the wall clock does not cut the input (as t0600 does)
mon() { # blkiomon-binary stream outprefix
	(cat "$2"; sleep 2.5) | $1 -I 60 -h "$3.h" -b "$3.b" >"$3.out" 2>&1
	grep -v '^time: ' "$3.h" >"$3.txt"
	od -An -tx1 -v "$3.b" | wc -l >>"$3.txt"
}

mon_pids=()
for t in $(bundled_traces); do
	d=$(unpack "$t")
	names=$(cd "$d" && ls *.blktrace.0 2>/dev/null | sed 's/\.blktrace\.0$//')
	[ -n "$names" ] || continue
	p="$w/$t/plain" q="$w/$t/waits"
	mkdir -p "$p" "$q"
	nwaits=0
	for n in $names; do
		cp "$d/$n".blktrace.* "$p/"
		cp "$d/$n".blktrace.* "$q/"
		k=$($IW synth "$q" "$n" --every 2 --early)
		nwaits=$((nwaits + k - 1)) # less the one that ends before the first event
	done
	args=$(for n in $names; do printf -- '-i %s ' "$n"; done)

	# 1. the directory: the side files change nothing, for the reference and for ours
	for o in "" -t -s -q; do
		ref_dir "$p" $RB $args $o >"$p/ref$o.txt" 2>"$p/ref$o.err"
		ref_dir "$q" $RB $args $o >"$q/ref$o.txt" 2>"$q/ref$o.err"
		same "$t: reference blkparse $o on the directory: side files change nothing" "$p/ref$o.txt" "$q/ref$o.txt"
		# -t replays the classic tool's allocator: only on the C library it models
		[ "$o" = -t ] && type have_modelled_glibc >/dev/null 2>&1 && ! have_modelled_glibc && continue
		(cd "$q" && $BLKPARSE $args $o >"ours$o.txt" 2>"ours$o.err")
		same "$t: our blkparse $o beside side files prints what the reference prints" "$p/ref$o.txt" "$q/ours$o.txt"
	done

	# 2. the merged file: ours carries the waits; taken out again, it is the plain dump
	(cd "$p" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1)
	(cd "$q" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>merged.err)
	$IW strip "$q/merged.bin" "$q/stripped.bin"
	same "$t: our -d dump with the waits taken out is the plain dump" "$p/merged.bin" "$q/stripped.bin"
	got=$($IW count "$q/merged.bin" | awk '{print $3}')
	if [ "$got" = "$nwaits" ] && grep -q "1 I/O waits ended before the trace's first event" "$q/merged.err"; then
		pass "$t: the dump carries all $nwaits waits (and says it left out the one that ended before the first event)"
	else
		fail "$t: the dump holds $got waits, $nwaits expected; stderr: $(head -c 200 "$q/merged.err")"
	fi
	for v in p q; do
		x=${!v}
		(cd "$x" && memo -i merged.bin $RBTT -i merged.bin >rbtt.txt 2>&1 &&
			memo -i merged.bin $RBTT -i merged.bin -A >rbtt-A.txt 2>&1)
		(cd "$x" && $BTT -i merged.bin >obtt.txt 2>&1)
		for o in "" -t -s; do
			memo -s "$x/merged.bin" $RB -i - $o >"$x/rm$o.txt" 2>"$x/rm$o.err"
		done
		memo $RVB "$x/rm.txt" >"$x/rvb.txt" 2>&1
		$BLKPARSE -i "$x/merged.bin" >"$x/om.txt" 2>/dev/null
	done
	same "$t: reference btt on the merged file: the waits change nothing" "$p/rbtt.txt" "$q/rbtt.txt"
	same "$t: reference btt -A on the merged file" "$p/rbtt-A.txt" "$q/rbtt-A.txt"
	for o in "" -t -s; do
		same "$t: reference blkparse -i - $o < merged file" "$p/rm$o.txt" "$q/rm$o.txt"
		same "$t: reference blkparse -i - $o < merged file: stderr" "$p/rm$o.err" "$q/rm$o.err"
	done
	same "$t: reference verify_blkparse on that text" "$p/rvb.txt" "$q/rvb.txt"
	# ours adds its I/O wait section (t0560 checks it) and changes nothing else
	$IWB strip "$q/obtt.txt" >"$q/obtt-stripped.txt"
	same "$t: our btt on the merged file, its I/O wait section taken out" "$p/obtt.txt" "$q/obtt-stripped.txt"
	same "$t: our blkparse on the merged file (without --iowait)" "$p/om.txt" "$q/om.txt"

	# 3. a live stream (blktrace -o -): waits in-band after the completion that ends each
	$IW merge "$p/live.bin" $(for n in $names; do ls "$p/$n".blktrace.*; done)
	k=$($IW inband "$p/live.bin" "$q/live.bin" --every 3)
	$IW strip "$q/live.bin" "$q/live-stripped.bin"
	same "$t: the stream with its $k waits taken out is the stream" "$p/live.bin" "$q/live-stripped.bin"
	for v in p q; do
		x=${!v}
		for o in "" -t -s; do
			memo -s "$x/live.bin" $RB -i - $o >"$x/rl$o.txt" 2>"$x/rl$o.err"
		done
		memo -s "$x/live.bin" -o "$x/rl.bin" $RB -i - -d "$x/rl.bin" -O >/dev/null 2>&1
		(cd "$x" && memo -i rl.bin $RBTT -i rl.bin >rl-btt.txt 2>&1)
		$BLKPARSE -i - <"$x/live.bin" >"$x/ol.txt" 2>/dev/null
	done
	for o in "" -t -s; do
		same "$t: reference blkparse -i - $o < stream: the waits change nothing" "$p/rl$o.txt" "$q/rl$o.txt"
	done
	same "$t: reference blkparse -i - -d of the stream, through reference btt" "$p/rl-btt.txt" "$q/rl-btt.txt"
	same "$t: our blkparse -i - < stream (without --iowait)" "$p/ol.txt" "$q/ol.txt"
	if [ -x $RMON ] && { [ ${#mon_pids[@]} -lt 2 ] || [ -z "${VALGRIND:-}" ]; }; then
		for v in p q; do
			x=${!v}
			mon $RMON "$x/live.bin" "$x/rmon" &
			mon_pids+=($!)
			mon "$MON" "$x/live.bin" "$x/omon" &
			mon_pids+=($!)
		done
	fi

	# 4. --iowait: each wait printed at its end and start, on the events' time base
	(cd "$q" && $BLKPARSE $args --iowait >ours-iw.txt 2>/dev/null)
	grep -v '^ *[0-9]*,[0-9]* *[0-9]* *0 *[0-9.]* *[0-9]* *w   N ' "$q/ours-iw.txt" >"$q/ours-iw-rest.txt"
	same "$t: --iowait adds its lines and changes no other" "$p/ref.txt" "$q/ours-iw-rest.txt"
	genesis=$(PYTHONPATH="$TOP/tests/gen" python3 -B -c '
import sys, blkrec
print(min(r.time for p in sys.argv[1:] for r in blkrec.records(open(p, "rb").read())
          if not r.action & (1 << 26)))' "$p"/*.blktrace.*)
	$IW list "$q"/*.iowait.blktrace.* | awk -v g="$genesis" '$1 >= g {
		e = $1 - g; s = $2 - g
		printf "%d.%09d %s %d.%09d %s %s\n", e / 1e9, e % 1e9, $5, s / 1e9, s % 1e9, $3, $6 }' |
		sort >"$q/iw-expected.txt"
	awk '$6 == "w" { sub(/^start=/, "", $9); sub(/^ns=/, "", $10); c = $8; gsub(/[][]/, "", c)
		print $4, $5, $9, $10, c }' "$q/ours-iw.txt" | sort >"$q/iw-got.txt"
	if [ "$(wc -l <"$q/iw-expected.txt")" = "$nwaits" ] && cmp -s "$q/iw-expected.txt" "$q/iw-got.txt"; then
		pass "$t: --iowait prints the $(wc -l <"$q/iw-got.txt") waits at their end and start times (ns since the first event), tid, duration and name"
	else
		fail "$t: --iowait lines differ from the notes: $(diff "$q/iw-expected.txt" "$q/iw-got.txt" | head -n 4 | tr '\n' ' ')"
	fi
	$BLKPARSE -i "$q/merged.bin" --iowait 2>/dev/null | awk '$6 == "w"' >"$q/merged-iw.txt"
	if [ "$(wc -l <"$q/merged-iw.txt")" = "$nwaits" ]; then
		pass "$t: --iowait on the merged file prints its $nwaits waits"
	else
		fail "$t: --iowait on the merged file: $(wc -l <"$q/merged-iw.txt") wait lines, $nwaits expected"
	fi
done

for pid in "${mon_pids[@]}"; do wait "$pid"; done
for t in $(bundled_traces); do
	p="$w/$t/plain" q="$w/$t/waits"
	[ -f "$p/rmon.txt" ] || continue
	same "$t: reference blkiomon on the stream: the waits change nothing" "$p/rmon.txt" "$q/rmon.txt"
	same "$t: our blkiomon on the stream: the waits change nothing" "$p/omon.txt" "$q/omon.txt"
done
