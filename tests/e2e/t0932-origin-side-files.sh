#!/bin/bash
# The origin notes in side files (blktrace --origin on the relay backend writes them to
# NAME.origin.blktrace.N beside the block events' NAME.blktrace.N): blkparse -i NAME reads
# them in step with the events as it reads the notes in-band (the tracefs backend's). The
# trace of tests/gen/origintrace.py (origin notes with what btt must say of them) is split
# per CPU twice, the notes in the block files ("in") and in side files ("side"):
# - blkparse's %o %O %f %F and its default text are the same for both, and the default
#   text is that of the block files alone (the notes show nowhere);
# - blkparse -d's merged file, with text and without (-O: the raw merge), gives btt the
#   same report for both (its origin and file sections are checked by t0931 for this
#   trace), and blkparse the same %o %O %f %F; so does its -d file of the trace read as a
#   stream (pipe mode: blktrace -o - | blkparse -i - -d - -O | btt -i -);
# - damage: a side file cut mid-record is an error naming it, the notes before the cut are
#   used; a record on another CPU is dropped with a warning; btt refuses a side file given
#   as its input and names the trace to merge.
. "$(dirname "$0")/../lib.sh"

GEN="$TOP/tests/gen/origintrace.py"
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
if ! command -v python3 >/dev/null; then
	skip "origin side files (python3 missing)"
	exit 0
fi
w="$OUT/t0932"
rm -rf "$w"
mkdir -p "$w/in" "$w/side" "$w/plain"
python3 -B "$GEN" "$w/o.bin" "$w/o.json" || fail "origin side files: the generator failed"
# in/t.blktrace.CPU: every record on its CPU; side/t.blktrace.CPU: all but the origin notes,
# which go to side/t.origin.blktrace.CPU; plain/t.blktrace.CPU: no origin notes
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/o.bin" "$w" <<'PY'
import os
import sys

import blkrec

files = {}
for r in blkrec.records(open(sys.argv[1], 'rb').read()):
    origin = r.action & blkrec.NOTIFY and (r.action & 0xffff) in (0x44, 0x45, 0x46)
    names = ['in/t', 'side/t.origin' if origin else 'side/t'] + ([] if origin else ['plain/t'])
    for n in names:
        files.setdefault((n, r.cpu), []).append(blkrec.pack(r))
for n in ('in/t', 'side/t', 'side/t.origin', 'plain/t'):
    for cpu in (0, 1):
        with open(os.path.join(sys.argv[2], '%s.blktrace.%d' % (n, cpu)), 'wb') as f:
            f.write(b''.join(files.get((n, cpu), [])))
PY
n=$(cat "$w"/side/t.origin.blktrace.* | wc -c)
if [ "$n" -gt 0 ] && [ -s "$w/side/t.blktrace.0" ]; then
	pass "origin side files: $n bytes of origin notes in t.origin.blktrace.0 and .1"
else
	fail "origin side files: the split made no side files"
	exit 0
fi
# lines with a file's path
named() { awk '$9 ~ /^\/mnt\//' "$1" | wc -l; }

F='%c %s %a %S %n %o %O %F %f\n'
(cd "$w/in" && $BLKPARSE -i t -f "$F" >../in.txt 2>../in.err)
(cd "$w/side" && $BLKPARSE -i t -f "$F" >../side.txt 2>../side.err)
if [ -s "$w/in.txt" ] && cmp -s "$w/in.txt" "$w/side.txt" && cmp -s "$w/in.err" "$w/side.err" &&
	[ "$(named "$w/side.txt")" -gt 0 ]; then
	pass "blkparse -f %o %O %f %F: the side files give what the notes in-band give ($(wc -l <"$w/side.txt") lines, $(named "$w/side.txt") named by their file)"
else
	fail "blkparse -f with side files: $(diff "$w/in.txt" "$w/side.txt" | head -n 4 | tr '\n' ' ') $(diff "$w/in.err" "$w/side.err" | head -c 200)"
fi
for n in side plain in; do
	(cd "$w/$n" && $BLKPARSE -i t >"../$n-def.txt" 2>/dev/null)
done
if cmp -s "$w/side-def.txt" "$w/plain-def.txt" && cmp -s "$w/in-def.txt" "$w/plain-def.txt"; then
	pass "blkparse's default text: the same with the notes in side files, in-band, or none"
else
	fail "default text: $(diff "$w/plain-def.txt" "$w/side-def.txt" | head -n 4 | tr '\n' ' ')"
fi

# btt on blkparse -d's merged files: the same report (origin and file sections included)
for how in text raw; do
	o=
	[ $how = raw ] && o=-O
	(cd "$w/in" && $BLKPARSE -i t -d "../in-$how.bin" $o >/dev/null 2>"../in-$how.err")
	(cd "$w/side" && $BLKPARSE -i t -d "../side-$how.bin" $o >/dev/null 2>"../side-$how.err")
	$BTT -i "$w/in-$how.bin" >"$w/in-$how.btt" 2>&1
	$BTT -i "$w/side-$how.bin" >"$w/side-$how.btt" 2>&1
	$BLKPARSE -i "$w/in-$how.bin" -f "$F" >"$w/in-$how.txt" 2>&1
	$BLKPARSE -i "$w/side-$how.bin" -f "$F" >"$w/side-$how.txt" 2>&1
	if grep -q "I/O by origin" "$w/side-$how.btt" && grep -q "I/O by file" "$w/side-$how.btt" &&
		cmp -s "$w/in-$how.btt" "$w/side-$how.btt" && cmp -s "$w/in-$how.err" "$w/side-$how.err"; then
		pass "blkparse -d $o (side files): btt's report is the in-band notes' (I/O by origin, I/O by file)"
	else
		fail "blkparse -d $o with side files: btt differs: $(diff "$w/in-$how.btt" "$w/side-$how.btt" | head -n 6 | tr '\n' ' ') $(diff "$w/in-$how.err" "$w/side-$how.err" | head -c 200)"
	fi
	if cmp -s "$w/in-$how.txt" "$w/side-$how.txt" && [ "$(named "$w/side-$how.txt")" -gt 0 ]; then
		pass "blkparse -d $o (side files): the merged file prints the in-band notes' %o %O %f %F"
	else
		fail "blkparse -d $o with side files: the merged file's %o %f differ: $(diff "$w/in-$how.txt" "$w/side-$how.txt" | head -n 4 | tr '\n' ' ')"
	fi
done

# a stream with the notes in-band (blktrace -o -, or this merged trace read as one): its -d
# file, with text or without, gives btt the report it gives for the stream itself
$BTT -i "$w/o.bin" >"$w/stream.btt" 2>&1
for o in "" -O; do
	$BLKPARSE -i "$w/o.bin" -d "$w/stream$o.bin" $o >/dev/null 2>"$w/stream$o.err"
	$BTT -i "$w/stream$o.bin" >"$w/stream$o.btt" 2>&1
	if grep -q "I/O by origin" "$w/stream.btt" && cmp -s "$w/stream.btt" "$w/stream$o.btt"; then
		pass "blkparse -i STREAM -d $o: btt's report is the stream's (its notes among the events)"
	else
		fail "blkparse -i STREAM -d $o: btt differs: $(diff "$w/stream.btt" "$w/stream$o.btt" | head -n 6 | tr '\n' ' ')"
	fi
done

# damage: t.origin.blktrace.1 cut in its last record
x="$w/cut"
mkdir -p "$x"
cp "$w"/side/t.* "$x/"
size=$(stat -c %s "$x/t.origin.blktrace.1")
truncate -s $((size - 5)) "$x/t.origin.blktrace.1"
(cd "$x" && $BLKPARSE -i t -f "$F" >side.txt 2>side.err)
rc=$?
if [ $rc = 1 ] && grep -q "'t.origin.blktrace.1': truncated record at offset" "$x/side.err" &&
	[ "$(named "$x/side.txt")" -gt 0 ] && [ "$(wc -l <"$x/side.txt")" = "$(wc -l <"$w/side.txt")" ]; then
	pass "a side file cut mid-record: exit 1, said ($(grep -m1 truncated "$x/side.err")); every event printed, $(named "$x/side.txt") of $(named "$w/side.txt") named"
else
	fail "a cut side file: rc=$rc, $(named "$x/side.txt") events named: $(head -c 300 "$x/side.err")"
fi
# a record on another CPU than its file's
y="$w/badcpu"
mkdir -p "$y"
cp "$w"/side/t.* "$y/"
python3 -B - "$y/t.origin.blktrace.0" <<'PY'
import struct
import sys

d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<I', d, 40, 7)  # the first record's cpu field
open(sys.argv[1], 'wb').write(d)
PY
(cd "$y" && $BLKPARSE -i t -f "$F" >side.txt 2>side.err)
rc=$?
if [ $rc = 0 ] && grep -q "1 records of the origin files were dropped because their cpu field did not match" "$y/side.err"; then
	pass "a side record on another CPU: dropped, counted and said"
else
	fail "a side record on another CPU: rc=$rc $(head -c 300 "$y/side.err")"
fi
$BTT -i "$w/side/t.origin.blktrace.0" >"$w/btt-side.out" 2>"$w/btt-side.err"
rc=$?
if [ $rc = 1 ] && grep -q "hint: run 'blkparse -i $w/side/t -d $w/side/t.bin -O'" "$w/btt-side.err"; then
	pass "btt refuses a side file as its input and names the trace to merge"
else
	fail "btt -i t.origin.blktrace.0: rc=$rc $(head -c 300 "$w/btt-side.err")"
fi
