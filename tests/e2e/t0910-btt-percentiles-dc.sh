#!/bin/bash
# btt --percentiles on traces without Q events (issue 18, item 8). A trace recorded with
# `blktrace -a issue -a complete` has only D and C events: the classic report has no D2C
# (btt 2.09 measures D2C from a queued I/O), but the percentile table must give D2C from
# the D and the C of each request, and "no data" (not rows of zeros) for Q2C and Q2D.
# The D+C trace is nullb-randrw filtered with `blkparse -a issue -a complete -d` (what the
# kernel's action mask would have kept); the D2C times are paired independently here from
# blkparse's text output (the C that starts at the sector of the last D), and each
# percentile must be within the histogram's stated 1/64 of the exact one.
. "$(dirname "$0")/../lib.sh"

BTT="$TOP/btt/btt"
if [ ! -x "$BTT" ]; then
	fail "btt: $BTT not built"
	exit 0
fi
[ -n "${VALGRIND:-}" ] && BTT="$VG $BTT"
if ! command -v python3 >/dev/null; then
	skip "btt --percentiles on a D+C trace (python3 missing)"
	exit 0
fi
w="$OUT/btt-pct-dc"
rm -rf "$w"
mkdir -p "$w"

d=$(unpack nullb-randrw)
$BLKPARSE -i "$d/nullb-randrw.bin" -a issue -a complete -d "$w/dc.bin" -O 2>"$w/filter.err"
$BLKPARSE -i "$w/dc.bin" >"$w/dc.txt" 2>/dev/null
acts=$(awk '$6 ~ /^[A-Z]$/ && NF >= 8 { print $6 }' "$w/dc.txt" | sort -u | tr -d '\n')
if [ "$acts" = CD ]; then
	pass "D+C trace: only D and C events ($(grep -c ' [DC] ' "$w/dc.txt") lines)"
else
	fail "D+C trace: actions '$acts', expected only C and D"
fi

(cd "$w" && $BTT -i dc.bin --percentiles >pct.out 2>pct.err)
rc=$?
[ $rc = 0 ] || fail "btt --percentiles on the D+C trace: status $rc: $(head -c 200 "$w/pct.err")"
# the classic part stays the reference's (which reports no D2C without Qs)
if [ -x /usr/bin/btt ]; then
	mkdir -p "$w/ref"
	(cd "$w/ref" && /usr/bin/btt -i ../dc.bin >ref.out 2>/dev/null)
	awk '/^==================== Latency Percentiles/ { skip = 1 }
		!skip { print } skip && /^     Total \| Q2D/ { skip = 2; next }
		skip == 2 && /^$/ { skip = 0 }' "$w/pct.out" >"$w/classic"
	check_same "btt --percentiles on the D+C trace: classic report as btt 2.09's" \
		"$w/ref/ref.out" "$w/classic"
else
	skip "btt --percentiles on the D+C trace: classic report (no /usr/bin/btt)"
fi

# the values are seconds (checked below against nanoseconds / 10^9): the title says so
if grep -q '^==================== Latency Percentiles (seconds) ====================$' "$w/pct.out"; then
	pass "btt --percentiles: the table's title gives its unit (seconds)"
else
	fail "btt --percentiles: no unit in the title: $(grep -m1 'Latency Percentiles' "$w/pct.out")"
fi

res=$(python3 - "$w/dc.txt" "$w/pct.out" <<'PY'
import math, sys
P = (50, 90, 99, 99.9, 99.99, 100)
issued, d2c = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 10 or f[5] not in ('D', 'C') or f[8] != '+':
        continue
    s, ns = f[3].split('.')
    t = int(s) * 10**9 + int(ns)
    key = (f[0], f[7])
    if f[5] == 'D':
        issued[key] = t
    elif key in issued:
        d2c.setdefault(f[0], []).append(t - issued.pop(key))
rows = {}
for line in open(sys.argv[2]):
    if '|' not in line:
        continue
    dev, rest = line.split('|', 1)
    f = rest.split()
    if f and f[0] in ('Q2C', 'D2C', 'Q2D'):
        rows[(dev.replace(' ', ''), f[0])] = f[1:]
bad, n = [], 0
def check(key, vals):
    global n
    vals = sorted(vals)
    r = rows.get((key, 'D2C'))
    if not r or len(r) != 7:
        bad.append('%s D2C: row %s' % (key, r))
        return
    if int(r[0]) != len(vals):
        bad.append('%s D2C: N %s, %d pairs in the text' % (key, r[0], len(vals)))
    for p, g in zip(P, r[1:]):
        exact = vals[max(0, math.ceil(p * len(vals) / 100 - 1e-9) - 1)]
        n += 1
        if abs(float(g) * 1e9 - exact) > exact / 64 + 1:
            bad.append('%s D2C p%s: %s vs exact %.9f' % (key, p, g, exact / 1e9))
    for kind in ('Q2C', 'Q2D'):
        if rows.get((key, kind)) != ['0', 'no', 'data']:
            bad.append('%s %s: %s, expected 0 no data' % (key, kind, rows.get((key, kind))))
alls = []
for dev, vals in d2c.items():
    ma, mi = dev.split(',')
    check('(%d,%d)' % (int(ma), int(mi)), vals)
    alls += vals
check('Total', alls)
print('ok %d' % n if not bad and n else 'bad ' + '; '.join(bad[:4]) + (' (none checked)' if not n else ''))
PY
)
case $res in
ok*) pass "btt --percentiles on the D+C trace: ${res#ok } D2C values within 1/64 of the exact percentiles, Q2C and Q2D 'no data'" ;;
*) fail "btt --percentiles on the D+C trace: $res" ;;
esac

# a trace of completions only (blktrace -a complete): nothing to measure, every row says so
c=$(unpack complete-only)
(cd "$w" && $BTT -i "$c/complete-only.bin" --percentiles-only >conly.out 2>conly.err)
rows=$(grep -cE '\| (Q2C|D2C|Q2D) ' "$w/conly.out")
nodata=$(grep -cE '^ *[^|]+\| (Q2C|D2C|Q2D) +0 +no data$' "$w/conly.out")
if [ "$rows" = 6 ] && [ "$nodata" = 6 ] && ! grep -q '0\.000000000' "$w/conly.out"; then
	pass "btt --percentiles-only on a C-only trace: 'no data' on every row, no zeros"
else
	fail "btt --percentiles-only on a C-only trace: $nodata of 6 rows 'no data': $(head -c 300 "$w/conly.out")"
fi
