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
#   writer or reader as their origin (origin_pid, origin_comm).
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
