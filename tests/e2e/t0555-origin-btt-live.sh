#!/bin/bash
# Who caused each I/O, live (issue 39 sections 2 and 3): ext4 on a loop device traced with
# blktrace --origin (tracefs), two dd writers buffered to two files (16 and 24 MiB), then a
# direct reader of a third file and, after dropping the caches, a buffered reader of a
# fourth; sync. Where each file is on the disk comes from filefrag (FIEMAP), not from the
# tracer; each read and written byte from blkparse's text of the same trace. Checked in btt:
# - I/O by origin: each writer's row holds at least 99% of its file's bytes (though the
#   flusher queued them: BY OTHERS), each reader's row exactly what blkparse counts of its
#   file's sectors; the journal's I/O in a row of its own (journal, jbd2/...);
# - I/O by file: each file named by its path, with its bytes as blkparse counts them in
#   the file's extents, its writer or reader named with its pid;
# - btt --export (TSV): each file's rows carry its path, add up to those bytes, and name the
#   writer or reader as their origin (origin_pid, origin_comm);
# - btt --perfetto: each writer's dirtying bursts, instants on its thread's track, hold the
#   pages of its DIRTY notes (read from the tracer's per-CPU files, not through btt) and
#   name its file; the first is at the time of its first note (the merged file starts at
#   its first event: "before-trace-ns" says how long before, for the writer that starts
#   before the read of the disk's first block); their flows end exactly on
#   the I/O slices btt charges to the writer (origin-pid), each later than its instant.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
skip_under_valgrind "who caused each I/O, live" "the tracer runs natively; the plain and ASan runs run btt on the trace"
for tool in mkfs.ext4 filefrag; do
	if ! command -v $tool >/dev/null; then
		skip "who caused each I/O, live ($tool missing: tests/deps.sh installs e2fsprogs)"
		exit 0
	fi
done
tracer_setup "who caused each I/O, live" "$OUT/origin-live" 256M
mnt="$w/mnt"
mkdir -p "$mnt"
if ! mkfs.ext4 -q -F "$loop" >/dev/null 2>&1 || ! mount -t ext4 "$loop" "$mnt"; then
	skip "who caused each I/O, live (cannot make and mount ext4 on $loop)"
	exit 0
fi
trap 'umount "$mnt" 2>/dev/null; losetup -d "$loop" 2>/dev/null' EXIT
dd if=/dev/urandom of="$mnt/c" bs=1M count=8 status=none
dd if=/dev/urandom of="$mnt/d" bs=1M count=8 status=none
sync
echo 3 >/proc/sys/vm/drop_caches
d="$w/trace"
mkdir -p "$d"
(cd "$d" && exec "$BT" -d "$loop" --origin >summary.txt 2>err.txt) &
bt=$!
wait_tracing
dd if=/dev/zero of="$mnt/a" bs=64k count=256 status=none &
pa=$!
# a read of the disk's first block between the writers' starts: the merged file's time 0 is
# its first event; a writer's bursts that began before it are drawn at 0 (--perfetto below)
dd if="$loop" of=/dev/null bs=4k count=1 iflag=direct status=none
dd if=/dev/zero of="$mnt/b" bs=64k count=384 status=none &
pb=$!
wait $pa $pb
dd if="$mnt/c" of=/dev/null bs=64k iflag=direct status=none &
pc=$!
wait $pc
sync
dd if="$mnt/d" of=/dev/null bs=64k status=none &
pd=$!
wait $pd
sleep 0.5
kill -INT $bt
wait $bt
brc=$?
# each file's extents on the disk (512-byte sectors), from FIEMAP
for f in a b c d; do
	filefrag -e -b512 "$mnt/$f" | awk -v f=$f '$1 ~ /^[0-9]+:$/ {
		gsub(/\.\./, " "); gsub(/:/, " "); print f, $4, $5 }' >>"$w/extents"
done
umount "$mnt"
if [ $brc != 0 ]; then
	fail "who caused each I/O, live: blktrace rc=$brc: $(head -c 300 "$d/err.txt")"
	exit 0
fi
(cd "$d" && $BLKPARSE -i "$name" >"$w/text.txt" 2>/dev/null &&
	$BLKPARSE -i "$name" -d "$w/merged.bin" -O >/dev/null 2>&1) &&
	"$TOP/btt/btt" -i "$w/merged.bin" >"$w/btt.txt" 2>"$w/btt.err" ||
	{ fail "who caused each I/O, live: blkparse/btt: $(head -n 2 "$w/btt.err")"; exit 0; }
# per file, the bytes of blkparse's Q events inside its extents ("FILE R|W BYTES")
awk 'FNR == NR { n++; f[n] = $1; a[n] = $2; b[n] = $3; next }
	$6 == "Q" && $8 ~ /^[0-9]+$/ && $9 == "+" {
		s = $8; e = s + $10; rw = ($7 ~ /W/) ? "W" : "R"
		for (i = 1; i <= n; i++) {
			lo = s > a[i] ? s : a[i]; hi = e < b[i] + 1 ? e : b[i] + 1
			if (hi > lo) by[f[i] " " rw] += (hi - lo) * 512
		}
	}
	END { for (k in by) print k, by[k] }' "$w/extents" "$w/text.txt" | sort >"$w/text-bytes"
tb() { awk -v k="$1 $2" '$1 " " $2 == k { print $3 }' "$w/text-bytes"; }
# btt's tables (a device's label "(  7,  2)" is three fields): "I/O by origin" rows as
# "KIND PID COMMAND IOS BYTES BYOTHERS"; "I/O by file" from the top by bytes as
# "PATH READ WRITE", then its readers and writers on a line
awk '/^=+ I\/O by origin/ { s = 1; next } /^=+ / { s = 0 }
	s && $4 ~ /^(task|journal|metadata)$/ && $7 == "|" { print $4, $5, $6, $8, $9, $10 }' "$w/btt.txt" >"$w/origins"
awk '/^Top files by bytes/ { s = 1; next } /^Top files by Q2C/ { s = 0 }
	s && $4 ~ /^\// && $5 == "|" { print $4, $7, $8; getline; r = $0; getline; print r " /" $0 }' "$w/btt.txt" >"$w/files"
for spec in a:$pa:16 b:$pb:24; do
	IFS=: read -r f pid mib <<<"$spec"
	want=$((mib * 1048576))
	read -r _ _ _ _ bytes others < <(awk -v p=$pid '$1 == "task" && $2 == p' "$w/origins")
	if [ -n "$bytes" ] && [ "$bytes" -ge $((want * 99 / 100)) ] && [ "$bytes" -le "$want" ]; then
		pass "writer $f: dd[$pid] charged $bytes of the $want bytes it wrote ($others queued by others: the flusher)"
	else
		fail "writer $f: dd[$pid] charged ${bytes:-nothing} of $want: $(tr '\n' ' ' <"$w/origins")"
	fi
	got=$(awk -v p="$mnt/$f" '$1 == p { print $3 }' "$w/files")
	[ -n "$got" ] && [ "$got" = "$(tb $f W)" ] && grep -A1 "^$mnt/$f " "$w/files" | grep -q "writers: dd\[$pid\]" &&
		pass "file $f: named by its path, $got bytes written (blkparse: the same in its extents), by dd[$pid]" ||
		fail "file $f: btt ${got:-not listed}, blkparse $(tb $f W) bytes written in its extents: $(grep -A1 "^$mnt/$f " "$w/files" | tr '\n' ' ')"
done
for spec in c:$pc d:$pd; do
	IFS=: read -r f pid <<<"$spec"
	want=$(tb $f R)
	read -r _ _ _ _ bytes _ < <(awk -v p=$pid '$1 == "task" && $2 == p' "$w/origins")
	[ -n "$want" ] && [ "$want" -ge 8388608 ] && [ "$bytes" = "$want" ] &&
		pass "reader $f: dd[$pid] charged every byte blkparse reads in its file's extents ($bytes)" ||
		fail "reader $f: dd[$pid] charged ${bytes:-nothing}, blkparse ${want:-none} read in its extents"
	got=$(awk -v p="$mnt/$f" '$1 == p { print $2 }' "$w/files")
	[ "$got" = "$want" ] && grep -A1 "^$mnt/$f " "$w/files" | grep -q "readers: dd\[$pid\] $want" &&
		pass "file $f: named by its path, its $got bytes read by dd[$pid]" ||
		fail "file $f: btt ${got:-not listed} bytes read, blkparse ${want:-none}"
done
# blkparse's %f from the per-CPU files: the Q events that name each file's path carry the
# bytes blkparse's text has in its extents (the names come at the end of the trace: they are
# read ahead at the first origin note)
(cd "$d" && $BLKPARSE -i "$name" -f '%a %n %f\n' 2>/dev/null) |
	awk '$1 == "Q" && $3 ~ /^\// { by[$3] += $2 * 512 } END { for (f in by) print f, by[f] }' >"$w/bp-f"
for spec in a:W b:W c:R d:R; do
	IFS=: read -r f rw <<<"$spec"
	got=$(awk -v p="$mnt/$f" '$1 == p { print $2 }' "$w/bp-f")
	[ -n "$got" ] && [ "$got" = "$(tb $f $rw)" ] &&
		pass "blkparse %f: the Q events naming $mnt/$f carry $got bytes, as its extents in the text" ||
		fail "blkparse %f: ${got:-no} bytes of Q events name $mnt/$f, $(tb $f $rw) in its extents"
done
j=$(awk '$1 == "journal" && $3 ~ /^jbd2\// { n += $4 } END { print n + 0 }' "$w/origins")
[ "$j" -gt 0 ] && pass "the journal's I/O labelled: $j I/Os of jbd2 in the journal's row" ||
	fail "no journal row: $(tr '\n' ' ' <"$w/origins")"
grep -q '^  Origin: [1-9][0-9]* dirty runs, [1-9][0-9]* file maps, [1-9][0-9]* files named' "$d/summary.txt" &&
	pass "blktrace's summary: $(grep '^  Origin:' "$d/summary.txt" | sed 's/^ *//')" ||
	fail "blktrace's summary has no Origin line with notes: $(tail -n 3 "$d/summary.txt" | tr '\n' ' ')"
# the export's rows: per file path, the bytes and the origins ("PATH BYTES PID:COMM ...")
if "$TOP/btt/btt" -i "$w/merged.bin" --export="tsv:$w/x" >/dev/null 2>"$w/x.err"; then
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["file"] != "" { b[$c["file"]] += $c["bytes"]; o[$c["file"], $c["origin_pid"] ":" $c["origin_comm"]] = 1 }
		END { for (k in o) { split(k, p, SUBSEP); l[p[1]] = l[p[1]] " " p[2] }
			for (f in b) print f, b[f], l[f] }' "$w/x/io.tsv" >"$w/x-files"
	for spec in a:$pa:W b:$pb:W c:$pc:R d:$pd:R; do
		IFS=: read -r f pid rw <<<"$spec"
		read -r _ bytes origins < <(awk -v p="$mnt/$f" '$1 == p' "$w/x-files")
		[ -n "$bytes" ] && [ "$bytes" = "$(tb $f $rw)" ] && [ "$origins" = "$pid:dd" ] &&
			pass "export: file $f's rows carry its path, $bytes bytes (blkparse: the same), origin dd[$pid]" ||
			fail "export: file $f: ${bytes:-no} bytes (blkparse $(tb $f $rw)), origins '${origins:-none}', want $pid:dd"
	done
else
	fail "btt --export: $(head -n 2 "$w/x.err")"
fi
if perfetto_tools "who caused each I/O, live: --perfetto's dirtying bursts"; then
	if "$TOP/btt/btt" -i "$w/merged.bin" --perfetto="$w/o.pftrace" >/dev/null 2>"$w/pf.err" &&
		"$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" \
			--dump "$w/pf.dump" "$w/o.pftrace" >/dev/null 2>>"$w/pf.err"; then
		while read -r verdict what; do
			if [ "$verdict" = ok ]; then pass "$what"; else fail "$what"; fi
		done < <(PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/pf.dump" "$mnt" "$d/$name.blktrace." \
			a:$pa:16 b:$pb:24 <<'EOF'
import glob
import json
import sys

import blkrec

dump = json.load(open(sys.argv[1]))
mnt, prefix = sys.argv[2], sys.argv[3]
# the tracer's own records: each task's DIRTY notes (time, pages), the first event's time
dirty = {}
genesis = None
for f in sorted(glob.glob(prefix + '*')):
    for r in blkrec.records(open(f, 'rb').read()):
        if not r.action & blkrec.NOTIFY:
            genesis = r.time if genesis is None else min(genesis, r.time)
        elif r.action & 0xffff == 0x44 and len(r.pdu) >= 40:
            count = int.from_bytes(r.pdu[16:20], 'little')
            dirty.setdefault(r.pid, []).append((r.time, count))
slices = {}
for s in dump['slices']:
    if s[0].endswith('> I/O') and 'origin-pid' in s[6]:
        slices.setdefault(s[6]['origin-pid'], set()).add((s[2], s[1]))
for spec in sys.argv[4:]:
    f, pid, mib = spec.split(':')
    pid, want = int(pid), int(mib) << 20
    track = 'dd [tid %d]' % pid
    inst = sorted((i[2], i[3]) for i in dump['instants'] if i[0] == track and i[1] == 'dirty')
    notes = sorted(dirty.get(pid, []))
    pages = sum(a['pages'] for _, a in inst)
    bad = []
    if not inst:
        bad.append('no instant')
    if pages != sum(c for _, c in notes) or pages * 4096 != want:
        bad.append('%d pages, its DIRTY notes %d, its file %d' % (
            pages, sum(c for _, c in notes), want // 4096))
    if any(a.get('file') != '%s/%s' % (mnt, f) or a['bytes'] != a['pages'] * 4096 for _, a in inst):
        bad.append('files %s' % sorted(set(a.get('file', a.get('file-ino')) for _, a in inst)))
    print(('bad ' if bad else 'ok ') + 'perfetto: writer %s: dd[%d] dirtied %d pages in %d bursts, instants on its thread track, its file named (its %d DIRTY notes say %d pages)%s' % (
        f, pid, pages, len(inst), len(notes), sum(c for _, c in notes), ': ' + '; '.join(bad) if bad else ''))
    if inst and notes:
        ts, a = inst[0]
        got = ts - a.get('before-trace-ns', 0)
        exp = notes[0][0] - genesis
        print(('ok ' if abs(got - exp) <= 1000000 else 'bad ') +
              'perfetto: writer %s: its first burst at %d ns from the first event (%s), its first DIRTY note at %d (within 1 ms)' % (
                  f, got, 'drawn at 0, before-trace-ns %d' % a['before-trace-ns'] if 'before-trace-ns' in a else 'drawn there', exp))
    fl = [x for x in dump['flows'] if 'dirty' in (x[3], x[8]) and track in (x[0], x[5])]
    to = set((x[7], x[8]) for x in fl if x[0] == track and x[1] == 'instant' and x[6] == 'begin')
    mine = slices.get(pid, set())
    print(('ok ' if fl and to == mine and len(to) == len(fl) else 'bad ') +
          'perfetto: writer %s: %d flows from its bursts end on the %d I/O slices charged to dd[%d] (origin-pid), each later than its instant%s' % (
              f, len(fl), len(mine), pid, '' if to == mine and len(to) == len(fl) else
              ': %d to others, %d of its I/Os without, %d not from an earlier instant' % (
                  len(to - mine), len(mine - to), len(fl) - len(to))))
EOF
		)
	else
		fail "btt --perfetto: $(head -n 3 "$w/pf.err")"
	fi
fi
