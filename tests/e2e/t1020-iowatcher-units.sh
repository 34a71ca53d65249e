#!/bin/bash
# Units say what is computed (issue 18, item 10): iowatcher divides by powers of 1024, so
# its labels must say KiB/MiB/GiB. A synthetic trace with a known number of bytes: writes
# of 2 MiB every ms (2000 MiB/s = 1.95 GiB/s = 2.10 GB/s) and reads of 1 MiB every ms
# in between, for 2 s, reads above the writes on the device. Checked: the HTML report's
# read/write columns (bytes / 2^20, and a header saying MiB), the throughput graph (the
# level of each line read off the axis, times the factor its label names, must be the
# known rate within 2%) and the Device IO graph's offset axis (its top, times the factor
# its label names, must be the device's extent in bytes).
. "$(dirname "$0")/../lib.sh"

IOWBIN="$TOP/iowatcher/iowatcher"
if [ ! -x "$IOWBIN" ]; then
	fail "iowatcher is built ($IOWBIN missing)"
	exit 0
fi
read -ra VG <<<"$VG" # the valgrind run's command (tests/lib.sh), or none
if ! command -v python3 >/dev/null; then
	skip "iowatcher units (python3 missing)"
	exit 0
fi
w="$OUT/iowatcher-units"
rm -rf "$w"
mkdir -p "$w"

PYTHONPATH="$TOP/tests/gen" python3 -B - "$w/rate.bin" <<'EOF'
import sys, blkrec as b
DEV = b.mkdev(8, 16)
Q, D, C = (b.TA_QUEUE, b.TC_QUEUE), (b.TA_ISSUE, b.TC_ISSUE), (b.TA_COMPLETE, b.TC_COMPLETE)
MIB = 1 << 20
ev = []
for i in range(2000):
    t = 1000000 + i * 1000000  # ns
    # a 2 MiB write at t, a 1 MiB read half a ms later; reads start at 4000 MiB
    for t0, sec, nbytes, rw in ((t, i * 4096, 2 * MIB, b.TC_WRITE),
                                (t + 500000, 4000 * 2048 + i * 2048, MIB, b.TC_READ)):
        for dt, (code, cat) in ((0, Q), (10000, D), (100000, C)):
            ev.append((t0 + dt, sec, nbytes, b.act(code, cat | rw)))
ev.sort()
with open(sys.argv[1], 'wb') as f:
    for seq, (t, sec, nbytes, act) in enumerate(ev, 1):
        f.write(b.encode(7, '<', seq, t, sec, nbytes, act, 1234, DEV, 0))
EOF

# independently of iowatcher: bytes completed per direction and the device's extent
read -r rd wr ext < <($BLKPARSE -q -i "$w/rate.bin" -f '%a %d %S %n %N\n' |
	awk '{ e = $3 + $4; if (e > ext) ext = e }
		$1 == "C" && $2 ~ /R/ { rd += $5 } $1 == "C" && $2 ~ /W/ { wr += $5 }
		END { printf "%.0f %.0f %.0f\n", rd, wr, ext * 512 }')
if [ "$rd" = $((2000 * 1048576)) ] && [ "$wr" = $((4000 * 1048576)) ]; then
	pass "synthetic trace: $rd bytes read, $wr written (blkparse)"
else
	fail "synthetic trace: blkparse counts $rd bytes read, $wr written"
fi

"${VG[@]}" "$IOWBIN" -t "$w/rate.bin" -l rate -O tput -O io -o "$w/rate.svg" --html "$w/rate.html" \
	2>"$w/iow.err" || fail "iowatcher on the synthetic trace: $(head -c 200 "$w/iow.err")"

# the HTML summary: header cells and the row of the trace
res=$(python3 - "$w/rate.html" "$rd" "$wr" <<'EOF'
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
rd, wr = int(sys.argv[2]), int(sys.argv[3])
t = s[s.index('<table class="summary">'):]
t = t[:t.index('</table>')]
head = re.findall(r'<th>(.*?)</th>', t)
row = re.findall(r'<td>(.*?)</td>', t[t.index('<td>rate</td>'):])
cells = dict(zip(head, row))
bad = []
for name, want in (('read MiB', rd / 2**20), ('write MiB', wr / 2**20)):
    if name not in cells:
        bad.append('no column %r (columns: %s)' % (name, ', '.join(head)))
    elif cells[name] != '%.2f' % want:
        bad.append('%s %s, expected %.2f (bytes / 2^20)' % (name, cells[name], want))
if 'MiB/s' not in cells or 'duration' not in cells:
    bad.append('no column MiB/s (columns: %s)' % ', '.join(head))
else:
    secs = float(cells['duration'].split()[0])
    want = (rd + wr) / 2**20 / secs
    if abs(float(cells['MiB/s']) - want) > want * 0.005:
        bad.append('MiB/s %s, expected %.2f' % (cells['MiB/s'], want))
print('ok' if not bad else 'bad: ' + '; '.join(bad))
EOF
)
case $res in
ok) pass "--html: read and write MiB are bytes / 2^20 and the header says MiB (MiB/s too)" ;;
*) fail "--html: $res" ;;
esac

# the graphs: a value on the axis is read off the tick labels (linear in y); the label's
# unit gives its factor, whatever it says
res=$(python3 - "$w/rate.svg" "$rd" "$wr" "$ext" <<'EOF'
import re, statistics, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
rd, wr, ext = (int(x) for x in sys.argv[2:])
F = {'B': 1}
for i, p in enumerate('KMGT', 1):
    F[p + 'iB'] = 1024 ** i
    F[p + 'B'] = 1000 ** i
root = ET.parse(sys.argv[1]).getroot()
graphs = {g.get('id'): g for g in root.iter(NS + 'svg') if g.get('class') == 'graph'}
bad, out = [], []
def axis(g):
    pa = next(r for r in g.iter(NS + 'rect') if r.get('class') == 'plot-area')
    y0, h = float(pa.get('y')), float(pa.get('height'))
    ticks = [(float(t.get('y')), float(t.text)) for t in g.iter(NS + 'text') if t.get('class') == 'ytick']
    ylabel = next(t.text for t in g.iter(NS + 'text') if t.get('class') == 'ylabel')
    # the label of 0 sits as far below the axis' bottom as every label below its value
    off = next(y for y, v in ticks if v == 0) - (y0 + h)
    (ya, va), (yb, vb) = ticks[0], ticks[-1]
    value = lambda y: va + (y + off - ya) * (vb - va) / (yb - ya)
    return y0, h, value, ylabel
def unit_factor(label, per_s):
    m = re.search(r'\b([KMGT]?i?B)' + ('/s' if per_s else r'\b'), label)
    return (m.group(1), F[m.group(1)]) if m and m.group(1) in F else (None, None)
# throughput: the median level of each line
y0, h, value, ylabel = axis(graphs['graph-tput'])
u, f = unit_factor(ylabel, True)
if not f:
    bad.append('throughput label %r names no byte unit' % ylabel)
else:
    paths = [p for p in graphs['graph-tput'].iter(NS + 'path') if 'series' in p.get('class', '')]
    for p, want, what in zip(paths, (rd / 2.0, wr / 2.0), ('reads', 'writes')):
        ys = [float(v) for v in re.findall(r'-?[0-9.]+', p.get('d'))][1::2]
        got = value(statistics.median(ys)) * f
        out.append('%s %.3f %s/s' % (what, got / f, u))
        if abs(got - want) > want * 0.02:
            bad.append('%s at %.3f %s/s = %.4g B/s, the trace has %.4g B/s' % (what, got / f, u, got, want))
# Device IO: the top of the offset axis is the device's extent
y0, h, value, ylabel = axis(graphs['graph-io'])
u2, f2 = unit_factor(ylabel, False)
if not f2:
    bad.append('offset label %r names no byte unit' % ylabel)
else:
    top = value(y0) * f2
    out.append('offset top %.2f %s' % (top / f2, u2))
    if abs(top - ext) > ext * 0.002:
        bad.append('offset axis tops at %.2f %s = %.4g B, the device extent is %d B' % (top / f2, u2, top, ext))
print(('ok ' if not bad else 'bad: ' + '; '.join(bad) + ' -- ') + ', '.join(out) + ' (' + ylabel + ')')
EOF
)
case $res in
ok*) pass "graphs: the axis labels name the units computed: ${res#ok }" ;;
*) fail "graphs: $res" ;;
esac
