#!/bin/bash
# Golden tests: our blkparse against the reference blkparse 1.2.0 outputs stored with each
# real trace (commands as in each MANIFEST.md), byte for byte, and the merged binary dump.
. "$(dirname "$0")/../lib.sh"

skip_vg_traces "blkparse golden outputs (11 comparisons)"
for t in $(bundled_traces); do
	d=$(unpack "$t")
	inputs=()
	for f in "$d"/*.blktrace.0; do f=$(basename "$f"); inputs+=(-i "${f%.blktrace.0}"); done
	run() { # suffix args...
		local sfx=$1; shift
		(cd "$d" && $BLKPARSE "${inputs[@]}" -D . "$@" >"$OUT/$t.got$sfx" 2>"$OUT/$t.err$sfx")
		check_same "blkparse golden $t ${sfx:-(default)}" "$d/$t.blkparse$sfx.txt" "$OUT/$t.got$sfx"
	}
	run ""
	run -s -s
	# -t: the classic tool prints times computed from uninitialised memory for requests it
	# never saw queued; we replay its allocations on a model of glibc's allocator
	# (compat/heapemu.c, compat/classicmem.c), so these lines must match too.
	needs_modelled_glibc "blkparse golden $t -t" && run -t -t
	run -q -q
	run -f -f "%D %2c %8s %5T.%9t %5p %2a %3d %S %n\n"
	run -f2 -f "%M,%m cpu%c #%s %T.%t pid=%p %a %d sec=%S blks=%n bytes=%N err=%e [%C] pdu=%P\n"
	run -F -F "C,%D %a %d %S + %n (%e) [%C]\n" -F "Q,%D %a %d %S + %n [%C]\n"
	run -a-write -a write
	(cd "$d" && $BLKPARSE "${inputs[@]}" -D . -d "$OUT/$t.dump.bin" -O >/dev/null 2>&1)
	check_same "blkparse golden $t -d merged binary" "$d/$t.bin" "$OUT/$t.dump.bin"
	(cd "$d" && $BLKPARSE -i - <"$t.bin" >"$OUT/$t.got-frombin" 2>/dev/null)
	check_same "blkparse golden $t -i - < merged.bin" "$d/$t.blkparse-frombin.txt" "$OUT/$t.got-frombin"
done
