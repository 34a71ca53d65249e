#!/bin/bash
# The main job on the bundled sample: parse a real trace (ext4 workload on a virtio disk,
# captured with the classic tracer) and print its events' summary.
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib.sh"
d=$(unpack ext4-mixed)
echo "== blkparse -i ext4-mixed -D $d (first 15 events, then the summary)"
"$top/blkparse" -i ext4-mixed -D "$d" >"$OUT/demo.txt" || exit 1
head -n 15 "$OUT/demo.txt"
echo "   ..."
sed -n '/^CPU0 (/,$p' "$OUT/demo.txt"
echo "== full output: $OUT/demo.txt"
