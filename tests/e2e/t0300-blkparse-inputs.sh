#!/bin/bash
# Input variants and stream behaviour: gzip by content, merged files, live pipes, -d - purity,
# and a merged dump that fio replays.
. "$(dirname "$0")/../lib.sh"

src=$(unpack ext4-mixed)
w="$OUT/inputs"
rm -rf "$w"; mkdir -p "$w"
(cd "$src" && $BLKPARSE -i ext4-mixed >"$w/plain.txt" 2>/dev/null)

# gzip-compressed per-CPU files, detected by content (same names) and with a .gz suffix
mkdir -p "$w/gz1" "$w/gz2"
for c in 0 1; do
	gzip -c "$src/ext4-mixed.blktrace.$c" >"$w/gz1/ext4-mixed.blktrace.$c"
	gzip -c "$src/ext4-mixed.blktrace.$c" >"$w/gz2/ext4-mixed.blktrace.$c.gz"
done
(cd "$w/gz1" && $BLKPARSE -i ext4-mixed >"$w/gz1.txt" 2>/dev/null)
check_same "gzip per-CPU files (detected by content) give the same text" "$w/plain.txt" "$w/gz1.txt"
(cd "$w/gz2" && $BLKPARSE -i ext4-mixed 2>/dev/null | sed 's/\.gz added$/ added/' >"$w/gz2.txt")
check_same "gzip per-CPU files named .gz give the same text" "$w/plain.txt" "$w/gz2.txt"

# merged file: as -i FILE, as stdin, gzip-compressed on stdin
$BLKPARSE -i - <"$src/ext4-mixed.bin" >"$w/stdin.txt" 2>/dev/null
$BLKPARSE -i "$src/ext4-mixed.bin" >"$w/file.txt" 2>/dev/null
check_same "merged file given with -i FILE reads like -i - < FILE" "$w/stdin.txt" "$w/file.txt"
gzip -c "$src/ext4-mixed.bin" | $BLKPARSE -i - >"$w/stdin-gz.txt" 2>/dev/null
check_same "gzip-compressed merged stream on a pipe" "$w/stdin.txt" "$w/stdin-gz.txt"

# -d - writes only the binary stream to stdout, and it parses back identically
(cd "$src" && $BLKPARSE -i ext4-mixed -d - >"$w/dash.bin" 2>"$w/dash.err")
check_same "-d - writes exactly the merged binary to stdout" "$src/ext4-mixed.bin" "$w/dash.bin"
(cd "$src" && $BLKPARSE -i ext4-mixed -d - -O 2>/dev/null | $BLKPARSE -i - >"$w/piped.txt" 2>/dev/null)
check_same "blkparse -d - -O | blkparse -i - gives the frombin text" "$w/stdin.txt" "$w/piped.txt"

# -d out.bin.gz writes gzip, read back by content
(cd "$src" && $BLKPARSE -i ext4-mixed -d "$w/out.bin.gz" -O >/dev/null 2>&1)
gzip -dc "$w/out.bin.gz" >"$w/out.bin"
check_same "-d NAME.gz writes a gzip-compressed merged trace" "$src/ext4-mixed.bin" "$w/out.bin"

# live pipe: events are printed as they arrive, not at the end of input
half=150000
fifo="$w/fifo"
mkfifo "$fifo"
rm -f "$w/paused"
(head -c $half "$src/ext4-mixed.bin"; touch "$w/paused"; sleep 6; tail -c +$((half + 1)) "$src/ext4-mixed.bin") >"$fifo" &
feeder=$!
$BLKPARSE -i - <"$fifo" >"$w/live.txt" 2>/dev/null &
parser=$!
# while the writer pauses (6 s: room for a slow start under valgrind on a loaded machine),
# the first half must show up
for i in $(seq 1 100); do [ -e "$w/paused" ] && break; sleep 0.1; done
early=0
for i in $(seq 1 50); do
	early=$(grep -c ' [QGIDCMPU] ' "$w/live.txt" 2>/dev/null)
	[ "${early:-0}" -gt 1000 ] && break
	sleep 0.1
done
wait $feeder $parser
if [ "${early:-0}" -gt 1000 ]; then
	pass "live pipe: $early events printed while the writer was still pausing"
else
	fail "live pipe: only ${early:-0} events printed before the end of input"
fi
check_same "live pipe: complete output same as from a file" "$w/stdin.txt" "$w/live.txt"

# the reference reads our dump identically
if [ -x /usr/bin/blkparse ]; then
	/usr/bin/blkparse -i - <"$w/dash.bin" >"$w/ref-of-ours.txt" 2>/dev/null
	/usr/bin/blkparse -i - <"$src/ext4-mixed.bin" >"$w/ref-of-ref.txt" 2>/dev/null
	check_same "reference blkparse reads our -d dump like its own" "$w/ref-of-ref.txt" "$w/ref-of-ours.txt"
else
	skip "reference blkparse not installed (apt-get install blktrace)"
fi

# fio replays our merged dump (needs root for a loop device)
if ! command -v fio >/dev/null; then
	skip "fio replay of the -d dump (fio not installed)"
elif ! is_root; then
	skip "fio replay of the -d dump (needs root for a loop device)"
else
	img="$w/replay.img"
	truncate -s 300M "$img"
	loop=$(loop_attach "$img" 2>/dev/null)
	if [ -z "$loop" ]; then
		skip "fio replay of the -d dump (losetup failed)"
	else
		fio --name=replay --read_iolog="$w/dash.bin" --replay_redirect="$loop" \
			--replay_no_stall=1 --ioengine=psync --output-format=terse \
			>"$w/fio.out" 2>"$w/fio.err"
		rc=$?
		losetup -d "$loop"
		rkb=$(awk -F';' 'NF > 50 {print $6}' "$w/fio.out" | head -n1)
		wkb=$(awk -F';' 'NF > 50 {print $47}' "$w/fio.out" | head -n1)
		qkb=$(sed -n '/^Total/,/^$/s/^ Reads Queued: *[0-9]*, *\([0-9]*\)KiB.*/\1/p' "$w/plain.txt")
		if [ $rc = 0 ] && [ "$rkb" = "$qkb" ] && [ "${wkb:-0}" -gt 0 ]; then
			pass "fio --read_iolog replays the -d dump: $rkb KiB read (= Reads Queued), $wkb KiB written"
		else
			fail "fio replay: rc=$rc read=$rkb KiB (queued $qkb) write=$wkb KiB $(head -c 300 "$w/fio.err")"
		fi
	fi
fi
