#!/bin/bash
# blkiomon on a stream out of time order, as 'blktrace -a issue -a complete -o -' sends it
# (each CPU's records in chunks): completions read before their issue pair as in the classic
# tool, and a completion older than the issue it meets is counted and left out instead of
# giving a negative D2C wrapped to 18446744073709...
. "$(dirname "$0")/../lib.sh"

MON="$TOP/blkiomon"
[ -n "${VALGRIND:-}" ] && MON="$VG $MON"
w="$OUT/mon-unordered"
rm -rf "$w"
mkdir -p "$w"
if ! command -v python3 >/dev/null; then
	skip "blkiomon on unordered streams (python3 not installed)"
	exit 0
fi

# CPU 0 issues, CPU 1 completes (4 KiB reads); the stream has CPU 1's first chunk, then CPU
# 0's, then CPU 1's second. Sectors 8 and 64: completions read before their issues (pairs).
# Sector 128: D@50 and D@70, then C@60 (completes the D@50, which the D@70 replaced: it is
# older than the D waiting) and C@80. The expected D2C line is computed from the pairs.
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/unordered.bin" >"$w/expected.txt" <<'EOF'
import sys, blkrec as b
def rec(seq, t, act, sector, cpu):
    return b.encode(7, '<', seq, t, sector, 4096, act, 1, b.mkdev(8, 0), cpu)
D = b.act(b.TA_ISSUE, b.TC_READ | b.TC_ISSUE | b.TC_FS)
C = b.act(b.TA_COMPLETE, b.TC_READ | b.TC_COMPLETE | b.TC_FS)
ms = 10**6
cpu0 = [(10, D, 8), (30, D, 8), (31, D, 64), (50, D, 128), (70, D, 128), (71, D, 256)]
cpu1a = [(20, C, 8), (33, C, 64)]
cpu1b = [(40, C, 8), (60, C, 128), (80, C, 128), (75, C, 256)]
pairs = [(10, 20), (30, 40), (31, 33), (70, 80), (71, 75)]   # issue, completion (ms)
out, seq = b'', {0: 0, 1: 0}
for cpu, part in ((1, cpu1a), (0, cpu0), (1, cpu1b)):
    for t, a, s in part:
        seq[cpu] += 1
        out += rec(seq[cpu], t * ms, a, s, cpu)
open(sys.argv[1], 'wb').write(out)
v = [(c - d) * 1000 for d, c in pairs]
n, s, q = len(v), sum(v), sum(x * x for x in v)
print('d2c read (usec): num %d, min %d, max %d, sum %d, squ %d, avg %.1f, var %.1f' %
      (n, min(v), max(v), s, q, s / n, (q - s * s / n) / n))
EOF
$MON -I 1 --trace-time -h "$w/got.txt" -D "$w/debug.txt" <"$w/unordered.bin" 2>"$w/err.txt"
rc=$?
huge=$(grep -E '^(d2c|throughput|sizes) ' "$w/got.txt" | grep -oE '[0-9]{13,}' | head -n 1)
if [ $rc != 0 ] || [ -n "$huge" ]; then
	fail "unordered stream: rc=$rc, a wrapped value in the report: ${huge:-none}"
else
	pass "unordered stream: no wrapped D2C or throughput"
fi
grep '^d2c read' "$w/got.txt" >"$w/got-d2c.txt"
check_same "unordered stream: the D2C line has the 5 true pairs" "$w/expected.txt" "$w/got-d2c.txt"
if grep -qx 'completions before their issue (left out): 1' "$w/got.txt" &&
	grep -q 'completions before their issue 1$' "$w/debug.txt" &&
	grep -q 'warning: 1 completions came before the issue they met' "$w/err.txt"; then
	pass "unordered stream: the completion older than its issue is counted (report, -D, stderr)"
else
	fail "unordered stream: count missing: $(grep before "$w/got.txt" "$w/debug.txt") $(head -c 300 "$w/err.txt")"
fi

if [ -x /usr/bin/blkiomon ]; then
	# the reference pairs the same records (it reads the input within its first interval)
	( (cat "$w/unordered.bin"; sleep 1.5) | /usr/bin/blkiomon -I 1 -h "$w/ref.txt" >/dev/null 2>&1 )
	grep -v '^time: ' "$w/ref.txt" >"$w/ref.exp"
	grep -v -e '^time: ' -e '^completions before their issue' "$w/got.txt" >"$w/ref.got"
	check_same "unordered stream: the reference's report, but for the added count line" \
		"$w/ref.exp" "$w/ref.got"
	# random traces whose time sometimes steps back (tests/gen/btt-edge.py, unordered)
	for s in 2 5; do
		python3 "$TOP/tests/gen/btt-edge.py" "$w/r$s.bin" $s 3000
		( (cat "$w/r$s.bin"; sleep 1.6) | /usr/bin/blkiomon -I 1 -h "$w/r$s.ref" >/dev/null 2>&1 ) &
		(cat "$w/r$s.bin"; sleep 2.5) | $MON -I 60 -h "$w/r$s.txt" 2>/dev/null
		wait
		grep -v '^time: ' "$w/r$s.ref" >"$w/r$s.exp"
		grep -v -e '^time: ' -e '^completions before their issue' "$w/r$s.txt" >"$w/r$s.got"
		check_same "random unordered trace $s: the reference's report (time lines masked)" \
			"$w/r$s.exp" "$w/r$s.got"
	done
else
	skip "blkiomon unordered streams against the reference (no /usr/bin/blkiomon)"
fi
