#!/bin/bash
# Device name notes (issue 37; include/blk/trace.h BLK_TN_DEVNAME): blktrace names each traced
# device in a note at the head of each of its per-CPU streams, blkparse -d carries the notes
# into the merged file, and btt's Perfetto and export label the device by that name (-M still
# overrides; the classic report is unchanged). The bundled traces get the notes as blktrace
# writes them (tests/gen/devname.py): the reference tools must print exactly what they print
# without them (blkparse on the directory, -t -s -q; btt and btt -A, blkparse -i - and
# blkiomon on the merged file), and a trace without the notes keeps MAJ,MIN. As root, a live
# trace of a loop device: its files, its merged file and its -o - stream carry the name.
. "$(dirname "$0")/../lib.sh"

BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
RB=/usr/bin/blkparse RBTT=/usr/bin/btt RMON=/usr/bin/blkiomon
DN="python3 -B $TOP/tests/gen/devname.py"
if ! command -v python3 >/dev/null; then
	skip "device name notes (python3 missing)"
	exit 0
fi
w="$OUT/t0547"
rm -rf "$w"
mkdir -p "$w"
same() { check_same "$1" "$2" "$3"; }

# export_devices TSV-DIR: the io rows' distinct "device major,minor" pairs, one a line
export_devices() {
	awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["device"], $c["major"] "," $c["minor"] }' "$1/io.tsv" | sort -u
}

for t in ext4-mixed multi-dev part-remap; do
	if [ -n "${VALGRIND:-}" ] && [[ " $VG_TRACES " != *" $t "* ]]; then
		skip "$t: device name notes under valgrind (valgrind takes $VG_TRACES; the plain and ASan runs check $t)"
		continue
	fi
	d=$(unpack "$t")
	names=$(cd "$d" && ls *.blktrace.0 | sed 's/\.blktrace\.0$//')
	p="$w/$t/plain" q="$w/$t/named"
	mkdir -p "$p" "$q"
	nnotes=0
	for n in $names; do
		cp "$d/$n".blktrace.* "$p/"
		cp "$d/$n".blktrace.* "$q/"
		k=$(PYTHONPATH="$TOP/tests/gen" $DN add "$q" "$n" "dn-$n")
		nnotes=$((nnotes + k))
	done
	args=$(for n in $names; do printf -- '-i %s ' "$n"; done)

	# 1. the per-CPU directory: the notes change nothing for the reference, nor for ours
	if [ -x $RB ]; then
		for o in "" -t -s -q; do
			(cd "$p" && $RB $args $o >"ref$o.txt" 2>"ref$o.err")
			(cd "$q" && $RB $args $o >"ref$o.txt" 2>"ref$o.err")
			if [ "$o" = -t ]; then
				# the elapsed times blkparse 1.2.0 reads from stale memory (doc/blkparse.1
				# -t) move with any record added to a file: all else is the same
				for v in p q; do
					sed -E 's/\( *[0-9]+\)/(T)/' "${!v}/ref-t.txt" >"${!v}/ref-t-masked.txt"
				done
				n=$(diff "$p/ref-t.txt" "$q/ref-t.txt" | grep -c '^<')
				same "$t: reference blkparse -t on the directory: the notes change nothing but the stale elapsed times ($n lines)" \
					"$p/ref-t-masked.txt" "$q/ref-t-masked.txt"
				have_modelled_glibc || continue
				(cd "$q" && $BLKPARSE $args -t >ours-t.txt 2>ours-t.err)
				same "$t: our blkparse -t on the noted files prints what the reference prints for them, stale times included" \
					"$q/ref-t.txt" "$q/ours-t.txt"
				continue
			fi
			same "$t: reference blkparse $o on the directory: the $nnotes notes change nothing" \
				"$p/ref$o.txt" "$q/ref$o.txt"
			(cd "$q" && $BLKPARSE $args $o >"ours$o.txt" 2>"ours$o.err")
			same "$t: our blkparse $o on the noted files prints what the reference prints" \
				"$p/ref$o.txt" "$q/ours$o.txt"
		done
	else
		skip "$t: reference blkparse on noted files (no /usr/bin/blkparse: apt-get install blktrace)"
	fi

	# 2. blkparse -d carries every note; taken out again, the dump is the plain one
	(cd "$p" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1)
	(cd "$q" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1)
	PYTHONPATH="$TOP/tests/gen" $DN strip "$q/merged.bin" "$q/stripped.bin"
	same "$t: our -d dump with the device name notes taken out is the plain dump" \
		"$p/merged.bin" "$q/stripped.bin"
	got=$(PYTHONPATH="$TOP/tests/gen" $DN list "$q/merged.bin" | wc -l)
	[ "$got" = "$nnotes" ] && pass "$t: the merged file carries the $nnotes notes" ||
		fail "$t: the merged file carries $got notes, $nnotes written"

	# 3. the merged file: the reference tools print what they print without the notes
	if [ -x $RBTT ]; then
		for v in p q; do
			x=${!v}
			(cd "$x" && $RBTT -i merged.bin >rbtt.txt 2>&1 && $RBTT -i merged.bin -A >rbtt-A.txt 2>&1)
			for o in "" -t -s; do
				$RB -i - $o <"$x/merged.bin" >"$x/rm$o.txt" 2>"$x/rm$o.err"
			done
		done
		same "$t: reference btt on the merged file: the notes change nothing" "$p/rbtt.txt" "$q/rbtt.txt"
		same "$t: reference btt -A on the merged file" "$p/rbtt-A.txt" "$q/rbtt-A.txt"
		for o in "" -t -s; do
			same "$t: reference blkparse -i - $o < merged file" "$p/rm$o.txt" "$q/rm$o.txt"
			same "$t: reference blkparse -i - $o < merged file: stderr" "$p/rm$o.err" "$q/rm$o.err"
		done
	fi
	if [ -x $RMON ] && [ "$t" = ext4-mixed ]; then
		for v in p q; do
			x=${!v}
			(cat "$x/merged.bin"; sleep 2.5) | $RMON -I 60 -h "$x/rmon.h" >/dev/null 2>&1
			grep -v '^time: ' "$x/rmon.h" >"$x/rmon.txt"
		done
		same "$t: reference blkiomon on the merged stream: the notes change nothing" \
			"$p/rmon.txt" "$q/rmon.txt"
	fi

	# 4. our btt: the classic report unchanged; the export names the devices by the notes
	for v in p q; do
		x=${!v}
		(cd "$x" && $BTT -i merged.bin >obtt.txt 2>/dev/null &&
			$BTT -i merged.bin --export="tsv:$x/x" >/dev/null 2>"$x/x.err")
		export_devices "$x/x" >"$x/x-devs.txt"
	done
	same "$t: our btt's report on the merged file: the notes change nothing" "$p/obtt.txt" "$q/obtt.txt"
	bad=$(awk '$1 != $2' "$p/x-devs.txt")
	[ -s "$p/x-devs.txt" ] && [ -z "$bad" ] &&
		pass "$t: without notes the export's device is MAJ,MIN: $(awk '{ print $1 }' "$p/x-devs.txt" | tr '\n' ' ')" ||
		fail "$t: export without notes: $(tr '\n' ' ' <"$p/x-devs.txt")"
	PYTHONPATH="$TOP/tests/gen" $DN list "$q/merged.bin" | awk '{ print $5, $3 }' | sort -u >"$q/want-devs.txt"
	awk 'NR == FNR { seen[$2] = 1; next } seen[$2]' "$p/x-devs.txt" "$q/want-devs.txt" >"$q/want-shown.txt"
	same "$t: the export names each device as its note does ($(tr '\n' ' ' <"$q/want-shown.txt"))" \
		"$q/want-shown.txt" "$q/x-devs.txt"
	# -M still decides
	awk '{ print "mapped-" NR, $2 }' "$p/x-devs.txt" >"$q/devmap"
	(cd "$q" && $BTT -i merged.bin -M devmap --export="tsv:$q/xm" >/dev/null 2>"$q/xm.err")
	export_devices "$q/xm" >"$q/xm-devs.txt"
	awk '{ print $1, $2 }' "$q/devmap" | sort -u >"$q/want-mapped.txt"
	same "$t: with -M the export takes the map's names" "$q/want-mapped.txt" "$q/xm-devs.txt"
done

# 5. Perfetto: the device's track is "MAJ,MIN (name)" with the note, "MAJ,MIN" without
tracks() { # pftrace: the device tracks' names (those with an "I/O" child)
	"$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" "$1" |
		"$PY" -c 'import json, sys
print("\n".join(sorted(set(k.split(" > ")[0] for k in json.load(sys.stdin)["tracks"] if k.endswith(" > I/O")))))'
}
if perfetto_tools "device name notes in btt --perfetto"; then
	t=ext4-mixed p="$w/$t/plain" q="$w/$t/named"
	(cd "$p" && $BTT -i merged.bin --perfetto=pf.pftrace >/dev/null 2>&1)
	(cd "$q" && $BTT -i merged.bin --perfetto=pf.pftrace >/dev/null 2>&1 &&
		$BTT -i merged.bin -M devmap --perfetto=pfm.pftrace >/dev/null 2>&1)
	a=$(tracks "$p/pf.pftrace") b=$(tracks "$q/pf.pftrace") c=$(tracks "$q/pfm.pftrace")
	if [ "$a" = "254,16" ] && [ "$b" = "254,16 (dn-ext4-mixed)" ] && [ "$c" = "254,16 (mapped-1)" ]; then
		pass "$t: Perfetto device track: '$a' without the note, '$b' with it, '$c' with -M"
	else
		fail "$t: Perfetto device tracks: without '$a', with '$b', with -M '$c'"
	fi
fi

# 6. live: blktrace writes the notes, in the files and in the -o - stream
skip_under_valgrind "device name notes of a live trace" "the tracer runs natively; the plain and ASan runs run it"
tracer_setup "device name notes of a live trace" "$OUT/t0547-live" 64M
dev=$(printf '%d,%d' "0x$(stat -c %t "$loop")" "0x$(stat -c %T "$loop")")
mkdir -p "$w/files"
(cd "$w/files" && "$TOP/blktrace" -d "$loop" -w 3 >sum.txt 2>err.txt; echo $? >rc) &
bt=$!
wait_tracing
workload "$w/files/expected.txt"
wait $bt
(cd "$w/files" && PYTHONPATH="$TOP/tests/gen" $DN list "$name".blktrace.* >notes.txt)
# every file with events has the note (a CPU's file of notes only may have it too: the tracer
# names the device in each stream it writes, and the workload's events may all be on one CPU)
nfiles=0 unnamed=
for f in "$w/files/$name".blktrace.*; do
	PYTHONPATH="$TOP/tests/gen" python3 -B -c '
import sys, blkrec
sys.exit(not any(not r.action & blkrec.NOTIFY for r in blkrec.records(open(sys.argv[1], "rb").read())))' "$f" || continue
	nfiles=$((nfiles + 1))
	grep -q "^$(basename "$f") " "$w/files/notes.txt" || unnamed="$unnamed $(basename "$f")"
done
bad=$(awk -v n="$name" -v d="$dev" '$3 != d || $5 != n' "$w/files/notes.txt")
if [ "$(cat "$w/files/rc")" = 0 ] && [ -z "$unnamed" ] && [ -z "$bad" ] && [ "$nfiles" -gt 0 ]; then
	pass "live: each of the $nfiles per-CPU files with events names the device: $(head -n 1 "$w/files/notes.txt")"
else
	fail "live: rc=$(cat "$w/files/rc"), $nfiles files with events, without the note:${unnamed:- none}, notes: $(tr '\n' ';' <"$w/files/notes.txt")"
fi
(cd "$w/files" && $BLKPARSE -i "$name" >ours.txt 2>/dev/null && $BLKPARSE -i "$name" -d merged.bin -O >/dev/null 2>&1 &&
	$BTT -i merged.bin --export="tsv:$w/files/x" >/dev/null 2>&1)
check_ios "live trace with its notes" "$w/files/expected.txt" "$w/files/ours.txt"
if [ -x $RB ]; then
	(cd "$w/files" && $RB -i "$name" >ref.txt 2>/dev/null)
	same "live: the reference blkparse prints the same for the noted files" "$w/files/ref.txt" "$w/files/ours.txt"
fi
got=$(export_devices "$w/files/x" | tr '\n' ' ')
[ "$got" = "$name $dev " ] && pass "live: the export names the device '$name' ($dev)" ||
	fail "live: export devices '$got', want '$name $dev'"
if [ -n "${PY:-}" ]; then
	(cd "$w/files" && $BTT -i merged.bin --perfetto=pf.pftrace >/dev/null 2>&1)
	got=$(tracks "$w/files/pf.pftrace")
	[ "$got" = "$dev ($name)" ] && pass "live: the Perfetto device track is '$got'" ||
		fail "live: Perfetto device track '$got', want '$dev ($name)'"
fi
# the -o - stream, through blkparse -i - -d - into btt
mkdir -p "$w/stream"
(cd "$w/stream" && "$TOP/blktrace" -d "$loop" -w 3 -o - 2>err.txt >stream.bin; echo $? >rc) &
bt=$!
wait_tracing
workload "$w/stream/expected.txt"
wait $bt
$BLKPARSE -i - -d - -O <"$w/stream/stream.bin" 2>/dev/null | (cd "$w/stream" && $BTT -i - --export="tsv:$w/stream/x" >/dev/null 2>&1)
got=$(export_devices "$w/stream/x" | tr '\n' ' ')
n=$(PYTHONPATH="$TOP/tests/gen" $DN list "$w/stream/stream.bin" | wc -l)
[ "$(cat "$w/stream/rc")" = 0 ] && [ "$n" -ge 1 ] && [ "$got" = "$name $dev " ] &&
	pass "live -o -: $n notes in the stream; blkparse -i - -d - | btt -i - --export names the device '$name'" ||
	fail "live -o -: rc=$(cat "$w/stream/rc"), $n notes, export devices '$got'"
