#!/bin/bash
# The files and dirtiers of blktrace --origin (issue 39, sections 2-3; include/blk/trace.h
# BLK_TN_DIRTY, BLK_TN_FMAP, BLK_TN_FILE), live through tracefs: ext4 on a loop device, a
# buffered dd writing a file of known size then sync, an O_DIRECT reader of a second file,
# a buffered reader of a third after dropping the caches. Decoded by tests/gen/originnotes.py:
# - the dirty runs of the dd's pid cover each page of its file exactly once;
# - the file maps cover every byte of each of the three files;
# - a file note names each of them by its path; the summary says what was written;
# - blkparse (ours and 1.2.0) prints, by default, exactly what it prints for the same files
#   without these notes; blkparse -d's merged file keeps them;
# - the same on XFS (iomap) where mkfs.xfs and the kernel's xfs are there;
# - -o - carries them too; after a SIGKILL blktrace -k turns the events off (with and
#   without the state file); every tracefs setting and event is as found at the end.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
RB=/usr/bin/blkparse
ON() { PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/originnotes.py" "$@"; }
skip_under_valgrind "blktrace --origin files live" "a live kernel trace; the plain and ASan runs run it"
tracer_setup "blktrace --origin files live" "$OUT/t0549" 512M
for c in mkfs.ext4 python3; do
	if ! command -v $c >/dev/null; then
		skip "blktrace --origin files live ($c missing: apt-get install e2fsprogs python3)"
		exit 0
	fi
done
if [ ! -e "$T/options/blk_cgroup" ] || [ ! -d "$T/events/writeback/writeback_dirty_folio" ] ||
	[ ! -d "$T/events/ext4" ]; then
	skip "blktrace --origin files live (no blk_cgroup option, writeback_dirty_folio or ext4 events in $T)"
	exit 0
fi
mnt="$w/mnt"
mkdir -p "$mnt"
if ! mkfs.ext4 -q -F "$loop" >"$w/mkfs.out" 2>&1 || ! mount -t ext4 "$loop" "$mnt" 2>>"$w/mkfs.out"; then
	skip "blktrace --origin files live (cannot make or mount ext4 on $loop: $(head -c 200 "$w/mkfs.out"))"
	exit 0
fi
bt=
# the tracer stopped and the file system gone on every exit path
cleanup() {
	[ -n "$bt" ] && kill -INT "$bt" 2>/dev/null && sleep 1
	umount "$mnt" 2>/dev/null
	losetup -d "$loop" 2>/dev/null
}
trap cleanup EXIT
mnt=$(cd "$mnt" && pwd -P)
EVENTS="writeback/writeback_dirty_folio filemap/mm_filemap_add_to_page_cache ext4/ext4_ext_map_blocks_exit ext4/ext4_ind_map_blocks_exit ext4/ext4_es_lookup_extent_exit iomap/iomap_iter_dstmap iomap/iomap_add_to_ioend"
tstate() { # the top-level tracefs settings and --origin's events
	local f
	for f in tracing_on current_tracer trace_clock options/bin options/blk_cgroup buffer_size_kb; do
		echo "$f=$(cat "$T/$f")"
	done
	for f in $EVENTS; do
		[ -e "$T/events/$f/enable" ] && echo "$f=$(cat "$T/events/$f/enable") $(cat "$T/events/$f/filter")"
	done
}
before=$(tstate)
# the readers' files, written and on disk before the trace
dd if=/dev/urandom of="$mnt/direct" bs=64k count=24 status=none
dd if=/dev/urandom of="$mnt/buffered" bs=4k count=300 status=none
sync
WB=$((80 * 65536 + 12288)) # the written file: 80 blocks of 64 KiB and 3 pages
ino() { stat -c %i "$mnt/$1"; }

# start_tracer DIR ARGS...: blktrace --origin in DIR, its pid in $bt
start_tracer() {
	local d=$1
	shift
	(cd "$d" && exec "$BT" --origin -d "$loop" "$@" >out.txt 2>err.txt) &
	bt=$!
	if ! wait_tracing; then
		fail "the tracer did not start: $(head -c 300 "$d/err.txt")"
		exit 0
	fi
}
stop_tracer() {
	sleep 0.3
	kill -INT "$bt"
	wait "$bt"
	rc=$?
	bt=
}

# 1. per-CPU files
d="$w/files"
mkdir -p "$d"
start_tracer "$d" -o t
rm -f "$mnt/written"
dd if=/dev/urandom of="$mnt/written" bs=64k count=80 status=none &
ddpid=$!
wait $ddpid
dd if=/dev/urandom of="$mnt/written" bs=4k count=3 seek=1280 conv=notrunc status=none &
ddpid2=$!
wait $ddpid2
sync
echo 3 >/proc/sys/vm/drop_caches
dd if="$mnt/direct" of=/dev/null bs=64k iflag=direct status=none
cat "$mnt/buffered" >/dev/null
stop_tracer
iw=$(ino written) id=$(ino direct) ib=$(ino buffered)
if [ $rc = 0 ] && grep -q "files and dirtiers from writeback/writeback_dirty_folio" "$d/err.txt"; then
	pass "blktrace --origin says which events it records: $(grep -o 'files and dirtiers from[^;]*' "$d/err.txt")"
else
	fail "blktrace --origin: rc=$rc $(tr '\n' ' ' <"$d/err.txt" | head -c 400)"
fi
line=$(grep "^  Origin: " "$d/out.txt")
if [[ "$line" =~ ^\ \ Origin:\ [1-9][0-9]*\ dirty\ runs,\ [1-9][0-9]*\ file\ maps,\ [1-9][0-9]*\ files\ named\ \([0-9]+\ not\ found\)$ ]]; then
	pass "the summary's origin line: $line"
else
	fail "the summary's origin line: '$line' in $(tr '\n' ' ' <"$d/out.txt")"
fi
ON dump "$d"/t.blktrace.* >"$d/notes.txt"
# the dd's runs cover pages 0..1279 of its file, the second dd's 1280..1282: each once
awk -v i="$iw" -v a="$ddpid" -v b="$ddpid2" '$1 == "dirty" && $6 == i {
		for (p = $7; p < $7 + $8; p++) { n[p]++; who[p] = $4 } }
	END { bad = 0
		for (p = 0; p < 1283; p++)
			if (n[p] != 1 || who[p] != (p < 1280 ? a : b)) { bad++; if (!first) first = p " (" n[p] "x, pid " who[p] ")" }
		for (p in n) if (p + 0 >= 1283) bad++
		print bad, first }' "$d/notes.txt" >"$d/dirty.txt"
read -r nbad first <"$d/dirty.txt"
if [ "$nbad" = 0 ]; then
	pass "dirty runs: each of the $((WB / 4096)) pages of the written file charged once, to the dd that wrote it ($(awk -v i="$iw" '$1 == "dirty" && $6 == i' "$d/notes.txt" | wc -l) runs)"
else
	fail "dirty runs of inode $iw: $nbad pages wrong, first $first"
fi
if ON check --fmap "$iw:$WB" --fmap "$id:$((24 * 65536))" --fmap "$ib:$((300 * 4096))" \
	--file "$iw:$mnt/written" --file "$id:$mnt/direct" --file "$ib:$mnt/buffered" \
	"$d"/t.blktrace.* >"$d/check.txt" 2>&1; then
	pass "file maps cover every byte of the three files; file notes name them ($mnt/written, direct, buffered)"
else
	fail "file maps and names: $(head -5 "$d/check.txt" | tr '\n' ' ')"
fi
nf=$(awk '$1 == "file"' "$d/notes.txt" | wc -l)
nl=$(awk '$1 == "file" { print $3 }' "$d/notes.txt" | sort -u | wc -l)
if [ "$nf" -ge 3 ] && [ "$nl" = 1 ]; then
	pass "$nf file notes, all at the stream's last record's time"
else
	fail "file notes: $nf, times $nl distinct"
fi

# 2. blkparse: the notes show nowhere by default; -d keeps them
strip() { # SRC DST: the records of SRC but the origin notes (codes 0x44 to 0x46)
	python3 - "$1" "$2" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, o = [], 0
while o + 48 <= len(d):
    action, plen = struct.unpack_from('<I', d, o + 28)[0], struct.unpack_from('<H', d, o + 46)[0]
    if not (action & (1 << 26) and (action & 0xffff) in (0x44, 0x45, 0x46)):
        out.append(d[o:o + 48 + plen])
    o += 48 + plen
open(sys.argv[2], 'wb').write(b''.join(out + [d[o:]]))
EOF
}
mkdir -p "$d/plain"
for f in "$d"/t.blktrace.*; do
	strip "$f" "$d/plain/$(basename "$f")"
done
nnotes=$(($(cat "$d"/t.blktrace.* | wc -c) - $(cat "$d"/plain/t.blktrace.* | wc -c)))
for o in "" -s; do
	(cd "$d" && $BLKPARSE -i t $o >"ours$o.txt" 2>"ours$o.err")
	(cd "$d/plain" && $BLKPARSE -i t $o >"ours$o.txt" 2>"ours$o.err")
	check_same "our blkparse $o: the same text with and without the origin notes ($nnotes bytes)" \
		"$d/plain/ours$o.txt" "$d/ours$o.txt"
	if [ -x $RB ]; then
		(cd "$d" && $RB -i t $o >"ref$o.txt" 2>"ref$o.err")
		r1=$?
		(cd "$d/plain" && $RB -i t $o >"ref$o.txt" 2>"ref$o.err")
		if [ $r1 = 0 ] && [ ! -s "$d/ref$o.err" ] && cmp -s "$d/ref$o.txt" "$d/plain/ref$o.txt"; then
			pass "blkparse 1.2.0 $o reads the files without a word, as without the origin notes"
		else
			fail "blkparse 1.2.0 $o: rc=$r1 $(head -c 300 "$d/ref$o.err") $(diff "$d/ref$o.txt" "$d/plain/ref$o.txt" | head -5)"
		fi
		check_same "our blkparse $o prints what blkparse 1.2.0 prints" "$d/ref$o.txt" "$d/ours$o.txt"
	else
		skip "blkparse 1.2.0 $o on the --origin files (no /usr/bin/blkparse: apt-get install blktrace)"
	fi
done
(cd "$d" && $BLKPARSE -i t -d merged.bin -O >/dev/null 2>&1)
ON dump "$d/merged.bin" | sort >"$d/merged-notes.txt"
sort "$d/notes.txt" | cmp -s - "$d/merged-notes.txt" &&
	pass "blkparse -d's merged file keeps every origin note ($(wc -l <"$d/notes.txt"))" ||
	fail "blkparse -d: $(wc -l <"$d/merged-notes.txt") origin notes, want $(wc -l <"$d/notes.txt")"

# 3. -o -: the notes in the stream, the files named at its end
d="$w/pipe"
mkdir -p "$d"
(cd "$d" && exec "$BT" --origin -d "$loop" -o - >stream.bin 2>err.txt) &
bt=$!
if wait_tracing; then
	dd if=/dev/urandom of="$mnt/piped" bs=64k count=16 status=none &
	ddpid=$!
	wait $ddpid
	sync
fi
stop_tracer
ip=$(ino piped)
if [ $rc = 0 ] && ON check --dirty "$ddpid:$ip:$((16 * 65536))" --fmap "$ip:$((16 * 65536))" \
	--file "$ip:$mnt/piped" "$d/stream.bin" >"$d/check.txt" 2>&1; then
	pass "-o -: the dd's dirty runs, its file's maps and name in the stream"
else
	fail "-o -: rc=$rc $(head -5 "$d/check.txt" | tr '\n' ' ') $(head -c 300 "$d/err.txt")"
fi

# 4. SIGKILL: the events stay on; blktrace -k turns them off (from the state file, and
# without it: those with a filter of blktrace's making)
for how in state nostate; do
	d="$w/kill-$how"
	mkdir -p "$d"
	(cd "$d" && exec "$BT" --origin -d "$loop" >/dev/null 2>err.txt) &
	bt=$!
	if ! wait_tracing; then
		fail "SIGKILL ($how): the tracer did not start: $(head -c 300 "$d/err.txt")"
		continue
	fi
	kill -KILL "$bt"
	wait "$bt" 2>/dev/null
	bt=
	left=$(cat "$T/events/writeback/writeback_dirty_folio/enable")
	if [ $how = nostate ]; then
		st=/run/blktrace-ng/tracefs.state
		oldclock=$(sed -n 's/^trace_clock //p' $st) oldkb=$(sed -n 's/^buffer_size_kb //p' $st)
		oldon=$(sed -n 's/^tracing_on //p' $st) oldcg=$(sed -n 's/^options\/blk_cgroup //p' $st)
		rm -f $st
	fi
	"$BT" -k -d "$loop" >"$d/k.out" 2>&1
	if [ $how = nostate ]; then
		[ -n "$oldclock" ] && echo "$oldclock" >"$T/trace_clock"
		[ -n "$oldkb" ] && echo "$oldkb" >"$T/buffer_size_kb"
		[ -n "$oldcg" ] && echo "$oldcg" >"$T/options/blk_cgroup"
		[ -n "$oldon" ] && echo "$oldon" >"$T/tracing_on"
	fi
	on=$(for f in $EVENTS; do [ -e "$T/events/$f/enable" ] && cat "$T/events/$f/enable"; done | grep -c 1)
	if [ "$left" = 1 ] && [ "$on" = 0 ] && grep -q "events off" "$d/k.out"; then
		pass "SIGKILL ($how): --origin's events left on; blktrace -k turns them off: $(tr '\n' ' ' <"$d/k.out")"
	else
		fail "SIGKILL ($how): events left=$left, $on still on after -k: $(tr '\n' ' ' <"$d/k.out")"
		for f in $EVENTS; do
			[ -e "$T/events/$f/enable" ] && echo 0 >"$T/events/$f/enable" && echo 0 >"$T/events/$f/filter"
		done
	fi
done

# 5. XFS (iomap: iomap_iter_dstmap for reads, iomap_add_to_ioend for writeback)
if ! command -v mkfs.xfs >/dev/null; then
	skip "--origin on XFS (mkfs.xfs missing: apt-get install xfsprogs)"
elif ! grep -qw xfs /proc/filesystems && ! modprobe xfs 2>/dev/null; then
	skip "--origin on XFS (this kernel has no xfs file system)"
elif ! umount "$mnt" || ! mkfs.xfs -q -f "$loop" >"$w/mkfs.out" 2>&1 ||
	! mount -t xfs "$loop" "$mnt" 2>>"$w/mkfs.out"; then
	fail "--origin on XFS: cannot make or mount XFS on $loop: $(head -c 200 "$w/mkfs.out")"
else
	d="$w/xfs"
	mkdir -p "$d"
	dd if=/dev/urandom of="$mnt/direct" bs=64k count=24 status=none
	dd if=/dev/urandom of="$mnt/buffered" bs=4k count=300 status=none
	sync
	start_tracer "$d" -o t
	dd if=/dev/urandom of="$mnt/written" bs=64k count=80 status=none &
	ddpid=$!
	wait $ddpid
	sync
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$mnt/direct" of=/dev/null bs=64k iflag=direct status=none
	cat "$mnt/buffered" >/dev/null
	stop_tracer
	iw=$(ino written) id=$(ino direct) ib=$(ino buffered)
	if [ $rc = 0 ] && ON check --dirty "$ddpid:$iw:$((80 * 65536))" --fmap "$iw:$((80 * 65536))" \
		--fmap "$id:$((24 * 65536))" --fmap "$ib:$((300 * 4096))" --file "$iw:$mnt/written" \
		--file "$id:$mnt/direct" --file "$ib:$mnt/buffered" "$d"/t.blktrace.* >"$d/check.txt" 2>&1; then
		pass "XFS: the dd's pages charged to it once each; maps cover the three files; names ($(grep -h Origin "$d/out.txt"))"
	else
		fail "XFS: rc=$rc $(head -5 "$d/check.txt" | tr '\n' ' ') $(head -c 300 "$d/err.txt")"
	fi
fi

after=$(tstate)
if [ "$before" = "$after" ]; then
	pass "every tracefs setting and --origin event as found at the end"
else
	fail "tracefs changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
fi
