#!/bin/bash
# fsync's waits (issue 39 section 2): a database's fsync waits on the journal thread's commit,
# not on I/O of its own, so the sched source of --iowait, which keeps a sleep only while the
# task has an I/O of its own in flight, lost most of it. The tracer now also keeps a sleep
# whose waker queued I/O on a traced device while it slept, and names the waker.
# ext4 on a loop device, fio writing 16 KiB buffered with an fsync every 8 writes, traced
# with --iowait; against fio's own figures (its JSON: the fsyncs and their total time):
# - blkparse --iowait: at least 90% of the fsyncs have a wait of fio woken by the journal
#   thread (woken_by=PID[jbd2/...]), each within the span of one fsync's time;
# - btt's I/O wait by process: fio's waits add up to at least 80% of its fsync time (own
#   data writes plus the commits), and its "ON OTHERS" row names the journal thread with
#   the time of those waits (as blkparse's text adds them up);
# - without a waker with I/O (the sleeps of a task woken by one that queued nothing), the
#   sleeps stay out, as before (unit: test-waitjoin).
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
skip_under_valgrind "fsync waits" "the tracer runs natively; the plain and ASan runs run it"
for tool in fio mkfs.ext4 python3; do
	if ! command -v $tool >/dev/null; then
		skip "fsync waits ($tool missing: tests/deps.sh installs it)"
		exit 0
	fi
done
tracer_setup "fsync waits" "$OUT/iowait-fsync" 256M
mnt="$w/mnt"
mkdir -p "$mnt"
if ! mkfs.ext4 -q -F "$loop" >/dev/null 2>&1 || ! mount -t ext4 "$loop" "$mnt"; then
	skip "fsync waits (cannot make and mount ext4 on $loop)"
	exit 0
fi
trap 'umount "$mnt" 2>/dev/null; losetup -d "$loop" 2>/dev/null' EXIT
d="$w/trace"
mkdir -p "$d"
(cd "$d" && exec "$BT" -d "$loop" --iowait >summary.txt 2>err.txt) &
bt=$!
for i in $(seq 1 50); do
	for x in "$T"/instances/blktrace-iowait-*; do
		[ "$(cat "$x/tracing_on" 2>/dev/null)" = 1 ] && break 2
	done
	sleep 0.1
done
fio --name=fsync --filename="$mnt/f" --rw=write --bs=16k --size=24M --fsync=8 \
	--ioengine=psync --output-format=json --output="$w/fio.json" >/dev/null 2>&1
frc=$?
sleep 0.5
kill -INT $bt
wait $bt
brc=$?
umount "$mnt"
if [ $frc != 0 ] || [ $brc != 0 ]; then
	fail "fsync waits: fio rc=$frc, blktrace rc=$brc: $(head -c 300 "$d/err.txt")"
	exit 0
fi
# fio's figures: its pid is not in the JSON; the fsyncs and their time are
read -r nsync sync_ns < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["sync"]
lat = j["lat_ns"]
print(j["total_ios"], int(lat["mean"] * j["total_ios"]))' "$w/fio.json")
(cd "$d" && $BLKPARSE -i "$name.iowait" --iowait >"$w/waits.txt" 2>/dev/null &&
	$BLKPARSE -i "$name" -d "$w/merged.bin" -O >/dev/null 2>&1 &&
	"$TOP/btt/btt" -i "$w/merged.bin" >"$w/btt.txt" 2>"$w/btt.err")
# fio's waits woken by the journal thread, and their time
read -r nj jns jbd < <(awk '/\[fio\]/ && / woken_by=[0-9]+\[jbd2\// {
	n++; for (i = 1; i <= NF; i++) { if ($i ~ /^ns=/) s += substr($i, 4); if ($i ~ /^woken_by=/) w = $i } }
	END { printf "%d %d %s\n", n, s, w }' "$w/waits.txt")
if [ "${nsync:-0}" -gt 0 ] && [ "$nj" -ge $((nsync * 9 / 10)) ] && [ "$jns" -le "$sync_ns" ]; then
	pass "fsync waits: $nj of fio's $nsync fsyncs have a wait woken by the journal thread ($jbd), $((jns / 1000)) us of fio's $((sync_ns / 1000)) us in fsync"
else
	fail "fsync waits: fio's waits woken by jbd2: ${nj:-0} ($((${jns:-0} / 1000)) us); fsyncs $nsync ($((sync_ns / 1000)) us)"
fi
# btt: fio's row, and its ON OTHERS row
read -r fwaits fns < <(awk '/^=+ I\/O wait by process/ { s = 1 } s && $2 == "fio" && $3 == "|" { print $4, int($5 * 1e9); exit }' "$w/btt.txt")
read -r onw onns wcomm wns < <(awk '/ON OTHERS/ { s = 1; next } s && $2 == "fio" { print $4, int($5 * 1e9), $8, int($10 * 1e9); exit }' "$w/btt.txt")
if [ -n "$fns" ] && [ "$fns" -ge $((sync_ns * 8 / 10)) ] && [ "$onw" = "$nj" ] &&
	[ $((onns - jns)) -le 1000 ] && [ $((jns - onns)) -le 1000 ] && [[ "$wcomm" == jbd2/* ]]; then
	pass "fsync waits: btt: fio waited $((fns / 1000)) us (>= 80% of its $((sync_ns / 1000)) us in fsync), $onw waits ($((onns / 1000)) us) on $wcomm's I/O, as blkparse's text adds them up"
else
	fail "fsync waits: btt: fio waits ${fwaits:-none} ($((${fns:-0} / 1000)) us), on others ${onw:-none} ($((${onns:-0} / 1000)) us, by ${wcomm:-none}); text: $nj ($((jns / 1000)) us), fsync $((sync_ns / 1000)) us: $(grep -A3 'ON OTHERS' "$w/btt.txt" | tr '\n' ' ')"
fi
# the whole section, as tests/gen/iowait-btt.py works it out from blkparse --iowait's text
# (the waits on others' I/O with their wakers included)
(cd "$d" && $BLKPARSE -i "$name" --iowait >"$w/bp-iw.txt" 2>/dev/null)
if r=$(python3 -B "$TOP/tests/gen/iowait-btt.py" "$w/bp-iw.txt" "$w/btt.txt" 2>&1); then
	pass "fsync waits: btt's I/O wait section as computed from blkparse --iowait: $r"
else
	fail "fsync waits: btt's I/O wait section differs from blkparse --iowait's: $(echo "$r" | head -n 3 | tr '\n' ' ')"
fi
