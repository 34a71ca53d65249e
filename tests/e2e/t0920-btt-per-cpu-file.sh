#!/bin/bash
# btt -i on one CPU's file of a per-CPU trace (NAME.blktrace.N beside NAME.blktrace.M) is
# refused with the merge that makes the file btt reads (issue 37): the events of one CPU
# alone made a silently wrong report. btt 2.09 reads such a file (doc/btt.1 says so).
# A trace of one CPU, whose only file is the whole trace, is still read as btt 2.09 reads it.
. "$(dirname "$0")/../lib.sh"

BTT="$TOP/btt/btt"
w="$OUT/t0920"
rm -rf "$w"
mkdir -p "$w/pc" "$w/sub"
d=$(unpack nullb-randrw)
for f in "$d"/nullb-randrw.blktrace.*; do
	cp "$f" "$w/pc/loop0.blktrace.${f##*.blktrace.}"
done
n=$(find "$w/pc" -name "loop0.blktrace.*" | wc -l)

# in the directory of the files, and with a path to them
for in in loop0.blktrace.1 "$w/pc/loop0.blktrace.0"; do
	base=${in%.blktrace.*}
	e="$w/sub"
	[ "${in#/}" = "$in" ] && e="$w/pc"
	(cd "$e" && "$BTT" -i "$in" >btt.out 2>btt.err)
	rc=$?
	want1="btt: '$in' is one of $n per-CPU files of a trace: btt reads the trace merged into one file"
	want2="hint: run 'blkparse -i $base -d $base.bin -O' and then 'btt -i $base.bin'"
	if [ $rc = 1 ] && [ "$(sed -n 1p "$e/btt.err")" = "$want1" ] &&
		[ "$(sed -n 2p "$e/btt.err")" = "$want2" ] && [ ! -s "$e/btt.out" ]; then
		pass "btt -i $(basename "$in") ($n per-CPU files): exit 1, the file named, the merge hint, no report"
	else
		fail "btt -i $in: exit $rc, out $(wc -c <"$e/btt.out") bytes, err: $(head -n 2 "$e/btt.err" | tr '\n' '|')"
	fi
done

# the hint's commands, as given (ours on PATH), give the merged trace's report
h=$(sed -n 2p "$w/pc/btt.err")
cmds=$(echo "$h" | sed -n "s/^hint: run '\([^']*\)' and then '\([^']*\)'$/\1;\2/p")
exp="$d/nullb-randrw.btt.txt"
if [ -n "$cmds" ] && [ -f "$exp" ]; then
	(cd "$w/pc" && export PATH="$TOP:$TOP/btt:$PATH" && sh -c "${cmds%%;*}" >merge.out 2>&1 &&
		sh -c "${cmds#*;}" >hint.out 2>hint.err)
	check_same "btt -i loop0.blktrace.1: the hint's two commands give the merged trace's report" \
		"$exp" "$w/pc/hint.out"
else
	fail "btt -i loop0.blktrace.1: no commands in the hint ($h), or no stored report ($exp)"
fi

# the reference btt reads the one file and prints a report (the difference doc/btt.1 states)
if [ -x /usr/bin/btt ]; then
	(cd "$w/pc" && /usr/bin/btt -i loop0.blktrace.1 >ref.out 2>ref.err)
	rc=$?
	if [ $rc = 0 ] && grep -q "ALL" "$w/pc/ref.out"; then
		pass "btt 2.09 reads loop0.blktrace.1 and prints a report of it (exit 0): the documented difference"
	else
		fail "btt 2.09 on loop0.blktrace.1: exit $rc $(head -c 200 "$w/pc/ref.err")"
	fi
else
	skip "btt 2.09 on one per-CPU file (no /usr/bin/btt: apt-get install blktrace)"
fi

# an I/O-wait side file: the hint names the trace's base name, which blkparse -i merges it with
cp "$w/pc/loop0.blktrace.0" "$w/pc/loop0.iowait.blktrace.0"
cp "$w/pc/loop0.blktrace.1" "$w/pc/loop0.iowait.blktrace.1"
(cd "$w/pc" && "$BTT" -i loop0.iowait.blktrace.0 >iw.out 2>iw.err)
rc=$?
if [ $rc = 1 ] && grep -qxF "hint: run 'blkparse -i loop0 -d loop0.bin -O' and then 'btt -i loop0.bin'" "$w/pc/iw.err"; then
	pass "btt -i loop0.iowait.blktrace.0: refused, the hint merges 'loop0'"
else
	fail "btt -i loop0.iowait.blktrace.0: exit $rc: $(head -n 2 "$w/pc/iw.err" | tr '\n' '|')"
fi

# one CPU's trace: its only file is read as before, the report btt 2.09 prints for it
mkdir -p "$w/one"
cp "$w/pc/loop0.blktrace.0" "$w/one/one.blktrace.0"
(cd "$w/one" && "$BTT" -i one.blktrace.0 >file.txt 2>file.err)
rc=$?
if [ $rc != 0 ] || [ ! -s "$w/one/file.txt" ]; then
	fail "btt -i one.blktrace.0 (no sibling): exit $rc $(head -c 200 "$w/one/file.err")"
elif [ -x /usr/bin/btt ]; then
	(cd "$w/one" && /usr/bin/btt -i one.blktrace.0 >ref.txt 2>/dev/null)
	check_same "btt -i one.blktrace.0 (no sibling): read, the report btt 2.09 prints" \
		"$w/one/ref.txt" "$w/one/file.txt"
else
	pass "btt -i one.blktrace.0 (no sibling): read, a report printed (no btt 2.09 to compare)"
fi
