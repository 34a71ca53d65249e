#!/bin/bash
# blkiomon's throughput of requests over 4 MiB (large discards): by default as the classic
# tool computes it (size * 1000 in 32 bits, wrapping), checked against the reference and
# against the same arithmetic done here; --exact-throughput against the true values.
. "$(dirname "$0")/../lib.sh"

MON="$TOP/blkiomon"
[ -n "${VALGRIND:-}" ] && MON="$VG $MON"
w="$OUT/mon-thrput"
rm -rf "$w"
mkdir -p "$w"
if ! command -v python3 >/dev/null; then
	skip "blkiomon throughput of large requests (python3 not installed)"
	exit 0
fi

# requests one after another (bytes, D2C in us, write): around the 4294967-byte limit, 8 and
# 64 MiB (the writes of 8 MiB and more are discards). Prints the throughput lines, first as
# the classic tool computes them, then the true ones.
PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/big.bin" >"$w/expected.txt" <<'EOF'
import sys, blkrec as b
reqs = [(4096, 100, 0), (1 << 20, 2000, 0), (4 << 20, 5000, 1), (4294967, 3000, 0),
        (4294968, 3000, 0), (8 << 20, 12345, 1), (64 << 20, 50000, 1), (64 << 20, 1000, 0),
        (8 << 20, 777, 0), (32 << 20, 40000, 1)]
def rec(seq, t, act, sector, nbytes):
    return b.encode(7, '<', seq, t, sector, nbytes, act, 1, b.mkdev(8, 0), 0)
out, t, seq = bytes(), 10**9, 1
for i, (n, us, wr) in enumerate(reqs):
    # the bit these "discards" have always carried is 1 << 4, TC_QUEUE (TC_DISCARD is 1 << 13)
    cat = (b.TC_WRITE | (b.TC_QUEUE if n >= 8 << 20 else 0)) if wr else b.TC_READ
    out += rec(seq, t, b.act(b.TA_ISSUE, cat | b.TC_ISSUE | b.TC_FS), 1000 * i + 8, n)
    out += rec(seq + 1, t + us * 1000 + 17, b.act(b.TA_COMPLETE, cat | b.TC_COMPLETE | b.TC_FS),
               1000 * i + 8, n)
    seq, t = seq + 2, t + us * 1000 + 50000
open(sys.argv[1], 'wb').write(out)
def line(name, v):
    n, s, q = len(v), sum(v), sum(x * x for x in v)
    sum2 = (s * s) % 2**64        # the variance squares the sum in 64 bits
    return '%s: num %d, min %d, max %d, sum %d, squ %d, avg %.1f, var %.1f' % (
        name, n, min(v), max(v), s, q % 2**64, s / n, (float(q % 2**64) - float(sum2) / n) / n)
for exact in (0, 1):
    for wr, name in ((0, 'throughput read (bytes/msec)'), (1, 'throughput write (bytes/msec)')):
        v = [(n * 1000 if exact else (n * 1000) % 2**32) // us for n, us, w in reqs if w == wr]
        print(line(name, v))
EOF
head -n 2 "$w/expected.txt" >"$w/exp-classic.txt"
tail -n 2 "$w/expected.txt" >"$w/exp-exact.txt"

$MON -I 1 --trace-time -h "$w/classic.txt" -b "$w/classic.bin" <"$w/big.bin" 2>/dev/null
grep '^throughput' "$w/classic.txt" >"$w/got-classic.txt"
check_same "large requests: throughput as the classic tool computes it (size * 1000 in 32 bits)" \
	"$w/exp-classic.txt" "$w/got-classic.txt"
$MON -I 1 --trace-time --exact-throughput -h "$w/exact.txt" -b "$w/exact.bin" <"$w/big.bin" 2>/dev/null
grep '^throughput' "$w/exact.txt" >"$w/got-exact.txt"
check_same "--exact-throughput: the true throughput of requests over 4 MiB" \
	"$w/exp-exact.txt" "$w/got-exact.txt"
grep -v '^throughput' "$w/classic.txt" >"$w/rest-classic.txt"
grep -v '^throughput' "$w/exact.txt" >"$w/rest-exact.txt"
check_same "--exact-throughput changes nothing but the throughput lines" \
	"$w/rest-classic.txt" "$w/rest-exact.txt"
# the binary records: throughput summaries (offsets 336..415) hold the same numbers
python3 - "$w/exact.bin" "$w/exact.txt" <<'EOF' && pass "--exact-throughput: -b records hold the exact throughput" || fail "--exact-throughput: -b records differ from the text"
import re, struct, sys
rec = open(sys.argv[1], 'rb').read()
assert len(rec) == 424, len(rec)
for off, name in ((336, 'read'), (376, 'write')):
    mn, mx, sm, sq, num = struct.unpack_from('>5Q', rec, off)
    m = re.search(r'^throughput %s \(bytes/msec\): num (\d+), min (\d+), max (\d+), sum (\d+), squ (\d+)' % name,
                  open(sys.argv[2]).read(), re.M)
    assert m and tuple(int(x) for x in m.groups()) == (num, mn, mx, sm, sq), (name, m.groups(), (num, mn, mx, sm, sq))
EOF

if [ -x /usr/bin/blkiomon ]; then
	( (cat "$w/big.bin"; sleep 1.5) | /usr/bin/blkiomon -I 1 -h "$w/ref.txt" -b "$w/ref.bin" >/dev/null 2>&1 )
	grep -v '^time: ' "$w/ref.txt" >"$w/ref.exp"
	grep -v '^time: ' "$w/classic.txt" >"$w/ref.got"
	check_same "large requests: the reference's report (time line masked)" "$w/ref.exp" "$w/ref.got"
	python3 - "$w/ref.bin" "$w/classic.bin" <<'EOF' && pass "large requests: the reference's -b record (time field masked)" || fail "large requests: -b record differs from the reference's"
import sys
a, b = (open(p, 'rb').read() for p in sys.argv[1:3])
assert len(a) == len(b) == 424 and a[8:] == b[8:]
EOF
else
	skip "blkiomon throughput against the reference (no /usr/bin/blkiomon)"
fi
