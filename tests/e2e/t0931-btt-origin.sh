#!/bin/bash
# btt's "I/O by origin" and "I/O by file" sections (btt/origin/) on a trace with origin notes
# made by tests/gen/origintrace.py, which computes what they must say with a model of its own
# (dirty pages and mapped sectors in dicts): per origin (task, journal, metadata) the I/Os,
# bytes and bytes queued by another task exactly, the Q2C mean to the nanosecond and its 99th
# percentile within the histogram's 1/64; per file the I/Os, bytes read and written, Q2C sum
# and mean, readers and writers with their bytes, in both orders; the deleted file by inode,
# the bad notes counted. The same events without the notes: the report is the same but for
# the sections, which it does not print. btt --perfetto: each I/O slice's origin, file and
# cgroup arguments; an instant per dirtying burst on its task's thread track (its pages,
# bytes, file, offset, span, I/Os, pages not written) with a flow to each I/O that wrote its
# pages, as the generator's own model of the bursts says; what was not drawn said; each
# limit on the bursts (flows per bio, per burst, bursts at once) passed by a known amount,
# counted as such, the trace still whole.
. "$(dirname "$0")/../lib.sh"

GEN="$TOP/tests/gen/origintrace.py"
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
if ! command -v python3 >/dev/null; then
	skip "btt origin (python3 missing)"
	exit 0
fi
w="$OUT/t0931"
rm -rf "$w"
mkdir -p "$w"
python3 "$GEN" "$w/o.bin" "$w/o.json" || fail "btt origin: the generator failed"
python3 "$GEN" --no-notes "$w/plain.bin" "$w/plain.json" || fail "btt origin: the generator failed"
$BTT -i "$w/o.bin" >"$w/o.out" 2>"$w/o.err" || fail "btt origin: btt failed: $(head -c 300 "$w/o.err")"
$BTT -i "$w/plain.bin" >"$w/plain.out" 2>"$w/plain.err" ||
	fail "btt origin: btt failed on the trace without notes: $(head -c 300 "$w/plain.err")"

# checks OUT JSON: one line per check, "ok what" or "bad what"
check() {
	python3 - "$1" "$2" <<'EOF'
import json
import re
import sys

text = open(sys.argv[1]).read().split('\n')
exp = json.load(open(sys.argv[2]))


def section(title):
    """the lines of a section: from its title to the next section's"""
    try:
        i = text.index('==================== %s ====================' % title)
    except ValueError:
        return None
    j = i + 1
    while j < len(text) and not text[j].startswith('===================='):
        j += 1
    return text[i + 1:j]


def say(ok, what):
    print(('ok ' if ok else 'bad ') + what)


lines = section('I/O by origin')
rows = []
for l in lines or []:
    m = re.match(r'^ *\( *8, *0\) (\S+) +(\d+) (.*?) *\| +(\d+) +(\d+) +(\d+) \| +(\S+) +(\S+)$', l)
    if m:
        rows.append(m.groups())
want = exp['origins']
bad = []
if len(rows) != len(want):
    bad.append('%d rows, want %d' % (len(rows), len(want)))
for g, e in zip(rows, want):
    key = '%s %d %s' % (e['cls'], e['pid'], e['comm'])
    got = (g[0], int(g[1]), g[2], int(g[3]), int(g[4]), int(g[5]))
    if got != (e['cls'], e['pid'], e['comm'], e['ios'], e['bytes'], e['foreign']):
        bad.append('row %s, want %s %d %d %d' % (got, key, e['ios'], e['bytes'], e['foreign']))
        continue
    if e['q2c_avg'] == '-':
        if g[6] != '-' or g[7] != '-':
            bad.append('%s: Q2C %s %s, want -' % (key, g[6], g[7]))
        continue
    if abs(float(g[6]) - float(e['q2c_avg'])) > 1.5e-9:
        bad.append('%s: Q2C avg %s, want %s' % (key, g[6], e['q2c_avg']))
    v, p = round(float(g[7]) * 1e9), e['q2c_p99_ns']
    if not p <= v <= p + p / 64 + 1:
        bad.append('%s: Q2C p99 %d ns, want %d (+1/64)' % (key, v, p))
say(not bad and lines is not None, 'origin: %d rows (tasks by dirtied bytes, journal, metadata)%s'
    % (len(want), ': ' + '; '.join(bad) if bad else ''))
say(lines is not None and
    '%d origin notes could not be used (damaged, or naming an unknown file): skipped'
    % exp['bad_notes'] in lines, 'origin: the %d bad notes counted' % exp['bad_notes'])

lines = section('I/O by file')


def table(title):
    """[(name, ios, read, write, sum, avg, readers, writers)] of a table"""
    i = lines.index(title)
    out = []
    k = i + 2
    while k + 2 < len(lines) and lines[k]:
        m = re.match(r'^ *\( *8, *0\) (.*?) *\| +(\d+) +(\d+) +(\d+) \| +(\S+) +(\S+)$', lines[k])
        r = re.match(r'^    readers: (.*)$', lines[k + 1])
        w = re.match(r'^    writers: (.*)$', lines[k + 2])
        if not (m and r and w):
            return out + [('unreadable', lines[k])]
        lst = lambda s: [] if s == '-' else s.split(', ')
        out.append(m.groups()[:1] + tuple(int(x) for x in m.groups()[1:4]) + m.groups()[4:] +
                   (lst(r.group(1)), lst(w.group(1))))
        k += 3
    return out


for title, key in (('Top files by bytes:', 'by_bytes'), ('Top files by Q2C time:', 'by_q2c')):
    bad = []
    got = table(title) if lines and title in lines else None
    want = [(f['name'], f['ios'], f['read'], f['write'], f['q2c_sum'], f['q2c_avg'],
             f['readers'], f['writers']) for f in exp[key]]
    if got is None:
        bad.append('no table')
    elif got != want:
        bad.append('got %s, want %s' % (got, want))
    say(not bad, 'file: %s %d files (path or inode, I/Os, bytes, Q2C, readers and writers)%s'
        % (title, len(want), ': ' + '; '.join(bad) if bad else ''))
summary = '%d files with I/O, %d of them not named (deleted before the end): by inode' % (
    exp['nfiles'], exp['unnamed'])
say(lines is not None and summary in lines, 'file: "%s"' % summary)
say(lines is not None and
    '%d bios of no file (no file map covers them): not in the tables' % exp['no_file'] in lines,
    'file: the %d bios of no file counted' % exp['no_file'])
EOF
}
while read -r verdict what; do
	if [ "$verdict" = ok ]; then pass "btt origin: $what"; else fail "btt origin: $what"; fi
done < <(check "$w/o.out" "$w/o.json")

# the rest of the report is the same without the notes, and the sections are not printed
strip() {
	awk '/^==================== I\/O by (origin|file) =/ { s = 1; next }
		s && /^(====================|# Total System)/ { s = 0 }
		!s { print }' "$1"
}
strip "$w/o.out" >"$w/o.rest"
if cmp -s "$w/o.rest" "$w/plain.out" && ! grep -q "I/O by origin\|I/O by file" "$w/plain.out"; then
	pass "btt origin: the notes change nothing else in the report; without them there are no sections"
else
	fail "btt origin: the report differs beyond the sections ($w/o.rest, $w/plain.out)"
fi
# with --percentiles, btt's own model of every bio runs from the start: the same sections
$BTT -i "$w/o.bin" --percentiles >"$w/pct.out" 2>"$w/pct.err" ||
	fail "btt origin: btt --percentiles failed: $(head -c 300 "$w/pct.err")"
awk '/^==================== I\/O by origin/,/^# Total System/' "$w/o.out" >"$w/sec.own"
awk '/^==================== I\/O by origin/,/^# Total System/' "$w/pct.out" >"$w/sec.shared"
cmp -s "$w/sec.own" "$w/sec.shared" && [ -s "$w/sec.own" ] &&
	pass "btt origin: the same sections when btt's model of every bio runs from the start (--percentiles)" ||
	fail "btt origin: other sections with --percentiles ($w/sec.own, $w/sec.shared)"

# blkparse's fields: each Q's origin (pid, name) and file (path, else "ino N"; offset) as the
# generator computed them, the other events of its I/O the same; the path of the deleted file
# is its inode number. The default output is the same with and without the notes, but for the
# warning that counts the bad ones.
$BLKPARSE -i "$w/o.bin" -f '%a %S|%o|%O|%f|%F\n' >"$w/bp.out" 2>"$w/bp.err" ||
	fail "blkparse origin: blkparse -f failed: $(head -c 300 "$w/bp.err")"
if out=$(python3 - "$w/o.json" "$w/bp.out" <<'EOF2'
import json
import sys

exp = json.load(open(sys.argv[1]))['qs']
lines = [l.rstrip('\n') for l in open(sys.argv[2]) if l[:2] in ('Q ', 'G ', 'I ', 'D ', 'C ')]
bad = []
if len(lines) != 5 * len(exp):
    bad.append('%d event lines, want %d' % (len(lines), 5 * len(exp)))
for k, e in enumerate(exp):
    want = '%d|%d|%s|%s|%s' % (e['sector'], e['opid'], e['oname'], e['file'], e['offset'])
    for a, l in zip('QGIDC', lines[5 * k:5 * k + 5]):
        if l != '%s %s' % (a, want):
            bad.append('"%s", want "%s %s"' % (l, a, want))
print('; '.join(bad[:5]) if bad else 'ok %d' % len(exp))
EOF2
); [ "${out%% *}" = ok ]; then
	pass "blkparse origin: %o %O %f %F of ${out#ok } I/Os (dirtier, queuer, journal, metadata; path, inode, offset) as computed, on all their events"
else
	fail "blkparse origin: $out ($w/bp.out against $w/o.json)"
fi
# the same through a pipe (pipe mode: one input, the notes in step by time and input order)
$BLKPARSE -i - -f '%a %S|%o|%O|%f|%F\n' <"$w/o.bin" >"$w/bp.pipe" 2>/dev/null
grep '^[QGIDC] ' "$w/bp.out" >"$w/bp.ev"
grep '^[QGIDC] ' "$w/bp.pipe" >"$w/bp.pipe.ev"
cmp -s "$w/bp.ev" "$w/bp.pipe.ev" && [ -s "$w/bp.ev" ] &&
	pass "blkparse origin: the same fields through a pipe (-i -)" ||
	fail "blkparse origin: other fields through a pipe ($w/bp.pipe.ev, $w/bp.ev)"
# per-CPU files (file mode: an input per CPU, the notes in step by time and by their file's
# order), read a whole batch ahead and two records ahead: the same origins and files (the
# names, written at the end, read ahead from the files at the first origin note)
mkdir -p "$w/pc"
python3 - "$w/o.bin" "$w/pc/o" <<'EOF2'
import struct
import sys

data, out, i = open(sys.argv[1], 'rb').read(), {}, 0
while i < len(data):
    n = 48 + struct.unpack_from('<H', data, i + 46)[0]
    out.setdefault(struct.unpack_from('<I', data, i + 40)[0], []).append(data[i:i + n])
    i += n
for cpu, recs in out.items():
    open('%s.blktrace.%d' % (sys.argv[2], cpu), 'wb').write(b''.join(recs))
EOF2
(cd "$w/pc" && $BLKPARSE -i o -f '%a %S|%o|%O|%f|%F\n' 2>/dev/null) | grep '^[QGIDC] ' >"$w/bp.pc.ev"
(cd "$w/pc" && $BLKPARSE -i o -b 2 -f '%a %S|%o|%O|%f|%F\n' 2>/dev/null) | grep '^[QGIDC] ' >"$w/bp.b2.ev"
cmp -s "$w/bp.ev" "$w/bp.pc.ev" && cmp -s "$w/bp.ev" "$w/bp.b2.ev" &&
	pass "blkparse origin: the same fields from per-CPU files, also read 2 records ahead (-b 2: the names read ahead)" ||
	fail "blkparse origin: other fields from per-CPU files ($w/bp.pc.ev, $w/bp.b2.ev against $w/bp.ev)"
$BLKPARSE -i "$w/o.bin" >"$w/bp.default" 2>"$w/bp.default.err"
$BLKPARSE -i "$w/plain.bin" >"$w/bp.plain" 2>"$w/bp.plain.err"
want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bad_notes"])' "$w/o.json")
if cmp -s "$w/bp.default" "$w/bp.plain" &&
	grep -q "^blkparse: warning: $want origin notes of blktrace --origin were damaged or named an unknown file, and were skipped\$" "$w/bp.default.err"; then
	pass "blkparse origin: the default output is the same without the notes; the $want bad notes are said"
else
	fail "blkparse origin: the default output differs, or the $want bad notes are not said ($w/bp.default, $w/bp.default.err)"
fi

# btt --perfetto: each I/O slice carries its origin ("origin", "origin-pid") and file ("file",
# the path: btt reads a file's names ahead, though they come at the end of the trace; else
# "file-ino" for the file deleted before the end; "file-offset")
# as computed; and, on tests/gen/cgtrace.py's trace, its cgroup: as many slices per cgroup
# ("cgroup" path, else "cgroup-id") as that generator counts I/Os, none on the others
if perfetto_tools "btt origin: --perfetto arguments"; then
	$BTT -i "$w/o.bin" --perfetto="$w/o.pftrace" >/dev/null 2>"$w/pf.err" &&
		"$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" \
			--dump "$w/o.pfdump" "$w/o.pftrace" >/dev/null 2>>"$w/pf.err" ||
		fail "btt origin: --perfetto failed or wrote a bad trace: $(head -c 300 "$w/pf.err")"
	python3 "$TOP/tests/gen/cgtrace.py" "$w/cg.bin" "$w/cg.exp" &&
		$BTT -i "$w/cg.bin" --perfetto="$w/cg.pftrace" >/dev/null 2>>"$w/pf.err" &&
		"$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" \
			--dump "$w/cg.pfdump" "$w/cg.pftrace" >/dev/null 2>>"$w/pf.err" ||
		fail "btt origin: --perfetto on the cgroup trace failed: $(head -c 300 "$w/pf.err")"
	while read -r verdict what; do
		if [ "$verdict" = ok ]; then pass "btt origin: --perfetto $what"; else fail "btt origin: --perfetto $what"; fi
	done < <(python3 - "$w/o.json" "$w/o.pfdump" "$w/cg.exp" "$w/cg.pfdump" <<'EOF2'
import collections
import json
import sys

qs = json.load(open(sys.argv[1]))['qs']
ios = [s[6] for s in json.load(open(sys.argv[2]))['slices'] if 'bytes' in s[6]]
bad = []
if len(ios) != len(qs):
    bad.append('%d I/O slices, want %d' % (len(ios), len(qs)))
for q, a in zip(qs, ios):
    want = {'sector': q['sector'], 'origin': q['oname'], 'origin-pid': q['opid']}
    if q['ino'] is not None and q['file'].startswith('/'):
        want.update({'file': q['file'], 'file-offset': int(q['offset'])})
    elif q['ino'] is not None:
        want.update({'file-ino': q['ino'], 'file-offset': int(q['offset'])})
    got = {k: a[k] for k in ('sector', 'origin', 'origin-pid', 'file', 'file-ino', 'file-offset')
           if k in a}
    if got != want:
        bad.append('slice %s, want %s' % (got, want))
print(('bad ' if bad else 'ok ') + 'origin and file arguments of %d I/O slices%s' % (
    len(qs), ': ' + '; '.join(bad[:3]) if bad else ''))
want = collections.Counter()
for line in open(sys.argv[3]):
    f = line.rstrip('\n').split('\t')
    if f[0] not in ('no_q', '(no cgroup note)'):
        want[f[0]] += int(f[2])
got = collections.Counter()
for s in json.load(open(sys.argv[4]))['slices']:
    a = s[6]
    if 'bytes' in a and ('cgroup' in a or 'cgroup-id' in a):
        got[a['cgroup'] if 'cgroup' in a else 'id %d' % a['cgroup-id']] += 1
print(('ok ' if got == want else 'bad ') + 'cgroup arguments: %s slices%s' % (
    dict(got), '' if got == want else ', want %s' % dict(want)))
EOF2
	)
	# the dirtying bursts: instants and flows as the generator's model has them
	while read -r verdict what; do
		if [ "$verdict" = ok ]; then pass "btt origin: --perfetto $what"; else fail "btt origin: --perfetto $what"; fi
	done < <(python3 - "$w/o.json" "$w/o.pfdump" <<'EOF2'
import json
import sys

exp = json.load(open(sys.argv[1]))
dump = json.load(open(sys.argv[2]))
want = sorted((b['track'], b['ts'], sorted(b['args'].items())) for b in exp['bursts'])
got = sorted((i[0], i[2], sorted(i[3].items())) for i in dump['instants'] if i[1] == 'dirty')
bad = ['got %s' % (g,) for g in got if g not in want] + ['want %s' % (x,) for x in want if x not in got]
print(('bad ' if bad else 'ok ') + '%d "dirty" instants on the dirtiers\' thread tracks (task, time, pages, bytes, file, offset, span, I/Os, pages unwritten)%s' % (
    len(want), ': ' + '; '.join(bad[:4]) if bad else ''))
# the flows from each instant: to the begin of the slice of each I/O (by its Q) that took its pages
want = sorted((b['track'], b['ts'], q) for b in exp['bursts'] for q in b['flows'])
dflows = [f for f in dump['flows'] if f[1] == 'instant' and f[3] == 'dirty']
got = sorted((f[0], f[2], f[7]) for f in dflows)
other = [f for f in dflows if not (f[5] == '8,0 > I/O' and f[6] == 'begin' and f[7] == f[9])]
into = {}
for t, ts, q in want:
    into[q] = into.get(q, 0) + 1
print(('ok ' if got == want and not other else 'bad ') + '%d flows from the bursts to the I/Os that wrote their pages (%d I/Os, %d with flows from two bursts), none elsewhere%s' % (
    len(want), len(into), sum(1 for n in into.values() if n > 1),
    '' if got == want and not other else ': got %s, want %s' % (got, want)))
EOF2
	)
	for remark in "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bursts_stale"])' "$w/o.json") dirtying bursts given up before their pages were all written (" \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["late"])' "$w/o.json") writes took pages of dirtying bursts given up already: no flow from them" \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bursts_zero"])' "$w/o.json") dirtying bursts of pages dirty already (none of their own) not drawn"; do
		grep -qF "$remark" "$w/pf.err" && pass "btt origin: --perfetto says: $remark" ||
			fail "btt origin: --perfetto does not say '$remark': $(grep -i burst "$w/pf.err" | head -c 300)"
	done
	# the tags btt --perfetto gives the dirty pages change nothing in the sections
	$BTT -i "$w/o.bin" --perfetto=/dev/null >"$w/pf.out" 2>/dev/null
	check_same "btt origin: the report is the same with --perfetto (its bursts' tags)" "$w/o.out" "$w/pf.out"
fi

# btt --perfetto's limits on the bursts, each passed by a known amount: 17 tasks each dirty a
# page, one write takes all 17 (16 flows into a bio at most: 1 not drawn); a task dirties 4100
# pages written one by one (4096 flows from a burst at most: 4 not drawn); then a task dirties
# one page of each of 70000 files, never written (65536 bursts not drawn at once at most: the
# 4464 oldest given up)
python3 - "$w/lim.bin" <<'EOF2'
import struct
import sys

DEV, PAGE, out, t = 8 << 20, 4096, [], [1000000]


def rec(sector, nbytes, action, pid, pdu=b''):
    t[0] += 1000
    return struct.pack('<IIQQIIIIIHH', 0x65617407, 0, t[0], sector, nbytes, action, pid, DEV, 0, 0,
                       len(pdu)) + pdu


def note(code, pid, pdu):
    out.append(rec(0, 0, (1 << 10) << 16 | code, pid, pdu))


def dirty(pid, ino, index, count):
    note(0x44, pid, struct.pack('<QQII', ino, index, count, PAGE) + b'w'.ljust(16, b'\0'))


def write(sector, nbytes):
    for code, cat in ((1, 1 << 4), (4, 1 << 4), (12, 1 << 5), (7, 1 << 6), (8, 1 << 7)):
        out.append(rec(sector, nbytes, code | (2 | cat) << 16, 300))


note(0, 300, b'kworker/u8:2'.ljust(16, b'\0'))
note(0x45, 300, struct.pack('<QQQQ', 11, 0, 0, 1 << 30))  # file 11: 1 GiB at sector 0
for k in range(17):
    dirty(1000 + k, 11, k, 1)
write(0, 17 * PAGE)
dirty(2000, 11, 100, 4100)
for k in range(4100):
    write((100 + k) * 8, PAGE)
t[0] += 2000000000  # those are drawn: their pages went, they grow no more
write(1 << 20, 512)
for k in range(70000):
    dirty(3000, 100 + k, 0, 1)
write(1 << 21, 512)
open(sys.argv[1], 'wb').write(b''.join(out))
EOF2
$BTT -i "$w/lim.bin" --perfetto="$w/lim.pftrace" >/dev/null 2>"$w/lim.err" ||
	fail "btt origin: --perfetto on the limits' trace failed: $(head -c 300 "$w/lim.err")"
for remark in "4464 dirtying bursts given up before their pages were all written (0 60 s after they began, 4464 once 65536 more had begun" \
	"5 flows from dirtying bursts not drawn (1 to bios with 16 already, 4 from bursts with 4096 already, 0 to bios not drawn)"; do
	grep -qF "$remark" "$w/lim.err" && pass "btt origin: --perfetto's limits: $remark" ||
		fail "btt origin: --perfetto's limits: not said: '$remark': $(grep -i burst "$w/lim.err" | head -c 400)"
done
# and the trace is whole: 4103 writes' queued flows, 16 + 4096 from the bursts, each with two ends
if [ -n "${PY:-}" ]; then
	if "$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" "$w/lim.pftrace" >"$w/lim.sum" 2>"$w/lim.check" &&
		[ "$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["flows"])' "$w/lim.sum")" = "{'started': 8215, 'completed': 8215, 'open': 0}" ]; then
		pass "btt origin: --perfetto's limits: perfetto-check finds nothing wrong, 8215 flows with both ends"
	else
		fail "btt origin: --perfetto's limits: perfetto-check: $(head -n 3 "$w/lim.check") $(grep -A3 flows "$w/lim.sum" | tr '\n' ' ')"
	fi
fi
