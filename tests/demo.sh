#!/bin/bash
# The main job. As root on Linux: trace a scratch loop device during a short built-in
# workload and print the parsed events and summary. Elsewhere: parse the bundled sample
# trace (a real ext4 workload) and say why.
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib.sh"
why=""
if [ "$(id -u)" != 0 ]; then
	why="not root (tracing needs root)"
elif ! command -v losetup >/dev/null; then
	why="losetup not available"
fi
# btt --perfetto of the merged trace BIN into OUT, and how to open it
perfetto_demo() { # BIN OUT
	if "$top/btt/btt" -i "$1" --perfetto="$2" >/dev/null 2>"$2.err"; then
		echo "== every I/O on a timeline: $2"
		echo "   open https://ui.perfetto.dev and drag the file onto the page (or \"Open trace file\");"
		echo "   it is read in the browser, nothing is uploaded"
	else
		echo "== btt --perfetto failed: $(cat "$2.err")"
	fi
}
if [ -z "$why" ]; then
	w="$OUT/demo"
	rm -rf "$w"; mkdir -p "$w"
	truncate -s 64M "$w/disk.img"
	loop=$(loop_attach "$w/disk.img" 2>/dev/null) || why="no loop device could be set up"
fi
if [ -z "$why" ]; then
	trap 'losetup -d "$loop"' EXIT
	name=$(basename "$loop")
	echo "== tracing $loop (scratch file $w/disk.img) during a short workload"
	(cd "$w" && "$top/blktrace" -d "$loop" -w 3 >"$w/summary.txt" 2>"$w/blktrace.err") &
	bt=$!
	sleep 1
	for i in 0 1 2 3; do
		dd if=/dev/zero of="$loop" bs=4096 count=1 seek=$((i * 64)) oflag=direct status=none
		dd if="$loop" of=/dev/null bs=4096 count=1 skip=$((i * 96)) iflag=direct status=none
	done
	dd if=/dev/urandom of="$loop" bs=4096 count=4 seek=2000 conv=fsync status=none
	wait $bt
	cat "$w/blktrace.err" "$w/summary.txt"
	if [ -s "$w/$name.blktrace.0" ] || [ -s "$w/$name.blktrace.1" ]; then
		echo "== blkparse -i $name -D $w"
		"$top/blkparse" -i "$name" -D "$w"
		if "$top/iowatcher/iowatcher" -t "$w/$name" -o "$w/$name.svg" -T "$loop during the demo workload" 2>"$w/iowatcher.err"; then
			echo "== graphs of this trace: $w/$name.svg"
		else
			echo "== iowatcher could not draw the trace: $(cat "$w/iowatcher.err")"
		fi
		if "$top/blkparse" -i "$name" -D "$w" -d "$w/$name.bin" -O 2>/dev/null; then
			perfetto_demo "$w/$name.bin" "$w/$name.pftrace"
		fi
		exit 0
	fi
	why="the trace came back empty"
fi
d=$(unpack ext4-mixed)
echo "== live tracing skipped: $why"
echo "== parsing the bundled sample instead: blkparse -i ext4-mixed -D $d (first 15 events, then the summary)"
"$top/blkparse" -i ext4-mixed -D "$d" >"$OUT/demo.txt" || exit 1
head -n 15 "$OUT/demo.txt"
echo "   ..."
sed -n '/^CPU0 (/,$p' "$OUT/demo.txt"
echo "== full output: $OUT/demo.txt"
if "$top/iowatcher/iowatcher" -t "$d/ext4-mixed.bin" -o "$OUT/ext4-mixed.svg" -T "ext4-mixed (bundled sample)" 2>"$OUT/iowatcher.err"; then
	echo "== graphs of the sample: $OUT/ext4-mixed.svg"
else
	echo "== iowatcher could not draw the sample: $(cat "$OUT/iowatcher.err")"
fi
perfetto_demo "$d/ext4-mixed.bin" "$OUT/ext4-mixed.pftrace"
