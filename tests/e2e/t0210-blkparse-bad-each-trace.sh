#!/bin/bash
# A corrupted copy of each bundled trace (truncated mid-record, flipped magic, absurd
# pdu_len, random bytes, zeros): one error line naming the file and offset, exit 1, no crash
# (this runs under ASan and valgrind too), and the complete events before the damage printed.
. "$(dirname "$0")/../lib.sh"

skip_vg_traces "damaged copies of the trace"
for t in $(bundled_traces); do
	src=$(unpack "$t")
	f0=$(ls "$src"/*.blktrace.0 | head -n1)
	name=$(basename "${f0%.blktrace.0}")
	# the end of the 700th record (or of the file): the 701st line of the bounds, or the last
	off=$(python3 -B "$TOP/tests/gen/blkrec.py" bounds "$f0" | awk 'NR <= 701 { o = $0 } END { print o }')
	for kind in truncated magic pdu random zeros; do
		w="$OUT/bad-each/$t/$kind"
		rm -rf "$w"; mkdir -p "$w"
		for f in "$src"/*.blktrace.*; do cp "$f" "$w/"; done
		case $kind in
		truncated) head -c $((off + 20)) "$f0" >"$w/$name.blktrace.0"; pat="truncated record at offset $off" ;;
		magic) python3 -B "$TOP/tests/gen/blkrec.py" poke "$w/$name.blktrace.0" "$off" magic 0xefbeadde
			pat="bad magic 0x[0-9a-f]+ at offset $off" ;;
		pdu) python3 -B "$TOP/tests/gen/blkrec.py" poke "$w/$name.blktrace.0" "$off" pdu_len 65535
			pat="(offset $off claims a 65535-byte payload|truncated record at offset $off)" ;;
		random) head -c 100000 /dev/urandom >"$w/$name.blktrace.0"; pat="bad magic 0x[0-9a-f]+ at offset 0" ;;
		zeros) head -c 100000 /dev/zero >"$w/$name.blktrace.0"; pat="bad magic 0x00000000 at offset 0" ;;
		esac
		ins=()
		for g in "$w"/*.blktrace.0; do g=$(basename "$g"); ins+=(-i "${g%.blktrace.0}"); done
		(cd "$w" && timeout 120 $BLKPARSE "${ins[@]}" >out.txt 2>err.txt)
		rc=$?
		nerr=$(grep -c "blktrace.0': " "$w/err.txt")
		if [ $rc = 1 ] && [ "$nerr" = 1 ] && grep -qE "$name.blktrace.0': .*$pat" "$w/err.txt"; then
			pass "$t, $kind copy: exit 1 and one error line: $(grep -oE "$pat" "$w/err.txt" | head -n1)"
		else
			fail "$t, $kind copy: rc=$rc, stderr: $(head -c 300 "$w/err.txt")"
		fi
		if [ "$kind" = truncated ] || [ "$kind" = magic ]; then
			# the events before the damage: the same as the file cut cleanly there
			c="$w/clean"; mkdir -p "$c"
			for f in "$src"/*.blktrace.*; do cp "$f" "$c/"; done
			head -c "$off" "$f0" >"$c/$name.blktrace.0"
			(cd "$c" && $BLKPARSE "${ins[@]}" >out.txt 2>/dev/null)
			check_same "$t, $kind copy: every complete event before the damage is printed" "$c/out.txt" "$w/out.txt"
		fi
	done
done
