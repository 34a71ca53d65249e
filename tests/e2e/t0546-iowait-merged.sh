#!/bin/bash
# I/O waits in a merged file read back: blkparse -i MERGED --iowait (and -i - < MERGED)
# against the per-CPU files of the same trace. Read back, a merged file's times go back to
# 0 at the second batch of 512 records: the classic tool takes its time base again while it
# is 0, and a blkparse -d dump's first event is at 0 (reference blkparse -i - prints the
# event lines so, ours the same). Every wait must still be printed, on the time base of the
# event printed before it, also the one that ended between the two batches
# (tests/gen/iowait-merged.py gen puts one there; it used to be dropped as "ended before
# the trace's first event"), and carried on by a -d dump of the merged file. btt's I/O
# wait section on both dumps is as computed again from the blkparse text
# (tests/gen/iowait-btt.py).
. "$(dirname "$0")/../lib.sh"

IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
IWM="python3 -B $TOP/tests/gen/iowait-merged.py"
IWB="memo python3 -B $TOP/tests/gen/iowait-btt.py"
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$VG $BTT"
if ! command -v python3 >/dev/null; then
	skip "I/O waits in a merged file read back (python3 missing)"
	exit 0
fi
d="$OUT/iowait-merged"
rm -rf "$d"
mkdir -p "$d"
n=$($IWM gen "$d" x)

(cd "$d" && $BLKPARSE -i x -d merged.bin -O >/dev/null 2>dump.err)
got=$($IW count "$d/merged.bin" | awk '{ print $3 }')
if [ "$got" = "$n" ] && [ ! -s "$d/dump.err" ]; then
	pass "blkparse -d carries the $n waits of the side files into the merged file"
else
	fail "blkparse -d: $got waits in the merged file, $n expected; $(head -c 200 "$d/dump.err")"
fi
(cd "$d" && $BLKPARSE -i x --iowait >dir.txt 2>dir.err)
$BLKPARSE -i "$d/merged.bin" --iowait >"$d/merged.txt" 2>"$d/merged.err"
$BLKPARSE -i - --iowait <"$d/merged.bin" >"$d/pipe.txt" 2>"$d/pipe.err"
for v in merged pipe; do
	if r=$($IWM compare "$d/dir.txt" "$d/$v.txt" 2>&1) && [ ! -s "$d/$v.err" ] &&
		[ "$(awk '$6 == "w"' "$d/$v.txt" | wc -l)" = "$n" ]; then
		pass "blkparse $([ $v = pipe ] && echo "-i - <" || echo "-i") merged.bin --iowait: the lines of the per-CPU files, in their order, each wait on the time base of the event before it: $r"
	else
		fail "blkparse --iowait on the merged file ($v): $r $(head -c 200 "$d/$v.err")"
	fi
done
case $r in
*"shifts 0,"*) pass "the times printed go back to 0 part way (the case looked at here)" ;;
*) fail "the merged file read back keeps one time base ($r): the test does not look at the case it is for" ;;
esac
if [ -x /usr/bin/blkparse ]; then
	/usr/bin/blkparse -i - <"$d/merged.bin" >"$d/ref.txt" 2>&1
	awk '$6 != "w"' "$d/merged.txt" >"$d/merged-events.txt"
	check_same "without its wait lines, that is what reference blkparse -i - prints for the merged file (times back to 0 included)" "$d/ref.txt" "$d/merged-events.txt"
else
	skip "reference blkparse on the merged file (no /usr/bin/blkparse)"
fi

# a dump of the merged file carries every wait on, with the events' times
$BLKPARSE -i "$d/merged.bin" -d "$d/again.bin" -O >/dev/null 2>"$d/again.err"
got=$($IW count "$d/again.bin" | awk '{ print $3 }')
if [ "$got" = "$n" ] && [ ! -s "$d/again.err" ]; then
	pass "blkparse -i merged.bin -d: the $n waits travel on"
else
	fail "blkparse -i merged.bin -d: $got waits, $n expected; $(head -c 200 "$d/again.err")"
fi

# btt's section: on the merged file as computed from the per-CPU text, on the dump of it as
# computed from the merged file's text (the times it was given)
$BTT -i "$d/merged.bin" >"$d/btt.txt" 2>&1
$BTT -i "$d/again.bin" >"$d/btt-again.txt" 2>&1
for x in "btt.txt dir.txt merged.bin" "btt-again.txt merged.txt again.bin"; do
	set -- $x
	if r=$($IWB "$d/$2" "$d/$1" 2>&1) && grep -q "$n waits" <<<"$r"; then
		pass "btt -i $3: its I/O wait section as computed from blkparse --iowait on $([ $2 = dir.txt ] && echo 'the per-CPU files' || echo 'the merged file'): $r"
	else
		fail "btt -i $3: its I/O wait section: $r"
	fi
done
