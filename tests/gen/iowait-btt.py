#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Check btt's "I/O wait by process" section against numbers computed here, independently of
btt, from blkparse's default text output with --iowait (its Q, D, C and w lines):

  iowait-btt.py BLKPARSE_TXT BTT_TXT
  iowait-btt.py strip BTT_TXT      print BTT_TXT without the section (from its title to the
                                   blank line after its "Waits from:" notes)
  iowait-btt.py section BTT_TXT    print only the section

The I/Os: a Q opens one at its device and sector (a second Q there replaces it), a D or C
takes those lying inside its range (a D again: the later one counts), a D or C before the
device's first Q is ignored, zero-length events too. Per process (a wait's tgid; a thread
belongs to the process its waits name, or to the process it leads): its waits' count,
total, p50/p99 (nearest rank: btt's histogram reports at most 1/64 above it), max, the
part of the waits during which the waiting thread had an I/O of its own in flight (Q to C,
or Q to the end of the wait when not completed by then), the bios it queued per device
with the mean Q2C and D2C of those that completed (ns, rounded down). From the first wait
note on, btt follows every bio by sector coverage (tests/gen/bioref.py's rule: a split
bio completes at its last piece); the I/Os queued before complete as above. A wait is on the device of its thread's
last completed I/O when that completed during the wait, else on the device of the note's
io= field. Per device: the waits on it and the process with the most wait time on it.
A wait another task's I/O ended (io=none woken_by=TID[NAME], the sched source) counts in
its process's waits with no own-I/O time and no device, and in the table of waits on
others' I/O: per process, those waits and their time, and per waker (the first four met)
its waits and time. A sleep of no I/O without woken_by (--iowait-all) is not counted.

Prints "ok: P processes, W waits, D devices" and exits 0, or the differences and exits 1.
"""
import bisect
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bioref import cut  # noqa: E402 (the rule of sector coverage, stated once)

HDR = re.compile(r'^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+)\.(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*(.*)$')
NS = 10**9


def ns_of(s):
    neg = s.startswith('-')
    a, b = s.lstrip('-').split('.')
    v = int(a) * NS + int(b.ljust(9, '0')[:9])
    return -v if neg else v


def parse_blkparse(path):
    """(events, waits): events (time, dev, action, sector, nsec, pid); waits dicts."""
    events, waits = [], []
    for line in open(path, errors='replace'):
        m = HDR.match(line)
        if not m:
            continue
        dev = (int(m.group(1)), int(m.group(2)))
        t = int(m.group(3)) * NS + int(m.group(4))
        pid, act, rest = int(m.group(5)), m.group(6), m.group(8)
        if act == 'w':
            f = dict(kv.split('=', 1) for kv in rest.split() if '=' in kv)
            # (the name runs to '] start=': a thread may be named '[pango] FcInit')
            comm = re.match(r'\[(.*?)\] start=', rest)
            io = f.get('io', '-')
            wb = re.search(r' woken_by=(\d+)\[(.*)\]$', rest)
            if io == 'none' and not wb:
                continue  # a sleep of no I/O (--iowait-all): not counted
            waits.append({'end': t, 'start': max(0, ns_of(f['start'])), 'ns': int(f['ns']),
                          'tgid': int(f['tgid']), 'tid': pid, 'comm': comm.group(1)[:16] if comm else '',
                          'io': None if io in ('-', 'none') else tuple(int(x) for x in io.split(',')),
                          'source': f.get('source'),
                          'waker': (int(wb.group(1)), wb.group(2)[:16]) if wb else None})
            continue
        if act not in ('Q', 'D', 'C'):
            continue
        f = rest.split()
        if len(f) < 3 or f[1] != '+':
            continue
        sector, nsec = int(f[0]), int(f[2])
        if nsec == 0:
            continue
        events.append((t, dev, act, sector, nsec, pid))
    return events, waits


def model(events, start=None):
    """The I/Os: dicts q, d, c (None), dev, pid, replaced (time). Those queued up to
    @start (the first wait note: btt follows bios from then on) as btt 2.09 pairs them,
    the later ones by sector coverage (tests/gen/bioref.py's rule)."""
    queued = {}  # dev -> {sector: io}
    keys = {}  # dev -> sorted sectors
    live = {}  # dev -> bios queued after @start, in flight, oldest first
    ios = []
    for t, dev, act, sector, nsec, pid in events:
        if act == 'Q':
            io = {'q': t, 'd': None, 'c': None, 'dev': dev, 'pid': pid, 'sector': sector,
                  'nsec': nsec, 'replaced': None}
            ios.append(io)
            if start is not None and t > start:
                io['issue'] = io['left'] = [(sector, sector + nsec)]
                live.setdefault(dev, []).append(io)
                continue
            q = queued.setdefault(dev, {})
            k = keys.setdefault(dev, [])
            if sector in q:
                q[sector]['replaced'] = t
            else:
                bisect.insort(k, sector)
            q[sector] = io
            continue
        for io in list(live.get(dev, [])):
            key = 'issue' if act == 'D' else 'left'
            got, io[key] = cut(io[key], sector, sector + nsec)
            if not got:
                continue
            if act == 'D':
                if io['d'] is None:
                    io['d'] = t
            else:
                io['c'] = t
                if not io['left']:
                    live[dev].remove(io)
        if dev not in queued:
            continue  # before the device's first Q
        q, k = queued[dev], keys[dev]
        i = bisect.bisect_left(k, sector)
        taken = []
        while i < len(k) and k[i] < sector + nsec:
            io = q[k[i]]
            if io['sector'] + io['nsec'] <= sector + nsec:
                taken.append(k[i])
            i += 1
        for s in taken:
            io = q[s]
            if act == 'D':
                io['d'] = t
            else:
                io['c'] = t
                del q[s]
                k.remove(s)
    return ios


def pct(sorted_v, p):
    n = len(sorted_v)
    rank = min(n, max(1, math.ceil(p / 100.0 * n - 1e-9)))
    return sorted_v[rank - 1]


def expected(events, waits):
    ios = model(events, min((w['end'] for w in waits), default=None))
    by_tid = {}
    for io in ios:
        by_tid.setdefault(io['pid'], []).append(io)
    for v in by_tid.values():
        v.sort(key=lambda io: io['q'])
    by_c = {}  # tid -> (completion times ascending, their I/Os)
    for tid, v in by_tid.items():
        done = sorted((io for io in v if io['c'] is not None), key=lambda io: io['c'])
        by_c[tid] = ([io['c'] for io in done], done)
    qs_of = {tid: [io['q'] for io in v] for tid, v in by_tid.items()}  # by_tid's queue times
    maxdur = {}
    for tid, v in by_tid.items():
        ends = [(io['c'] if io['c'] is not None else (io['replaced'] or 0)) - io['q'] for io in v]
        maxdur[tid] = max(ends + [0])
    devs_seen = {io['dev'] for io in ios}
    procs = {}
    thread_proc = {}
    dev_waits = {}  # (tgid, dev) -> [n, ns]
    for w in waits:
        tid, s, e = w['tid'], w['start'], w['end']
        p = procs.get(w['tgid'])
        if p is None:
            p = procs[w['tgid']] = {'tgid': w['tgid'], 'comm': w['comm'], 'leader': tid == w['tgid'],
                                    'waits': [], 'covered': 0, 'others': [0, 0, []]}
        elif tid == w['tgid']:
            # the leader's latest name (what a process that exec'ed became)
            p['comm'], p['leader'] = w['comm'], True
        thread_proc[tid] = w['tgid']
        p['waits'].append(w['ns'])
        if w['waker'] is not None:
            # on another task's I/O: no own-I/O time, no device; per waker, the first four
            o = p['others']
            o[0] += 1
            o[1] += w['ns']
            k = [x for x in o[2] if x[0] == w['waker'][0]]
            if k:
                k[0][2] += 1
                k[0][3] += w['ns']
            elif len(o[2]) < 4:
                o[2].append([w['waker'][0], w['waker'][1], 1, w['ns']])
            continue
        # the thread's own I/Os in flight during [s, e]
        v = by_tid.get(tid, [])
        qs = qs_of.get(tid, [])
        lo = bisect.bisect_left(qs, s - maxdur.get(tid, 0) - 1)
        hi = bisect.bisect_left(qs, e)
        spans = []
        last_c = None
        for io in v[lo:hi]:
            if io['c'] is not None and io['c'] <= e:
                end = io['c']
            elif io['c'] is None and io['replaced'] is not None and io['replaced'] <= e:
                continue  # replaced before the wait ended: no longer followed
            else:
                end = e  # still in flight
            a, b = max(io['q'], s), min(end, e)
            if b > a:
                spans.append((a, b))
        spans.sort()
        cov, cur_a, cur_b = 0, None, None
        for a, b in spans:
            if cur_b is None or a > cur_b:
                if cur_b is not None:
                    cov += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        if cur_b is not None:
            cov += cur_b - cur_a
        p['covered'] += cov
        # its device: the thread's last completion, when during the wait
        cs, done = by_c.get(tid, ([], []))
        j = bisect.bisect_right(cs, e)
        if j:
            last_c = done[j - 1]
        dev = None
        if last_c is not None and s <= last_c['c'] <= e:
            dev = last_c['dev']
        elif w['io'] is not None and w['io'] in devs_seen:
            dev = w['io']
        if dev is not None:
            x = dev_waits.setdefault((w['tgid'], dev), [0, 0])
            x[0] += 1
            x[1] += w['ns']
    # per process and device: the bios queued; the Q2C and D2C of those completed
    pdev = {}
    for tid, v in by_tid.items():
        tg = thread_proc.get(tid, tid if tid in procs else None)
        if tg is None:
            continue
        for io in v:
            x = pdev.setdefault((tg, io['dev']), [0, 0, 0, 0, 0])
            x[4] += 1
            if io['c'] is None:
                continue
            x[0] += 1
            x[1] += io['c'] - io['q'] if io['c'] > io['q'] else 1
            if io['d'] is not None:
                x[2] += io['c'] - io['d'] if io['c'] > io['d'] else 1
                x[3] += 1
    out = {}
    for tg, p in procs.items():
        ws = sorted(p['waits'])
        out[tg] = {'comm': p['comm'], 'waits': len(ws), 'total': sum(ws), 'p50': pct(ws, 50),
                   'p99': pct(ws, 99), 'max': ws[-1], 'covered': p['covered'],
                   'others': (p['others'][0], p['others'][1],
                              [tuple(x) for x in p['others'][2]]) if p['others'][0] else None,
                   'devs': {d: (x[4], x[1] // x[0] if x[0] else None, x[2] // x[3] if x[3] else None)
                            for (t, d), x in pdev.items() if t == tg}}
    order = sorted(out, key=lambda tg: (-out[tg]['total'], tg))
    devices = {}
    for d in sorted({d for (_, d) in dev_waits}):
        rows = [(tg, dev_waits[(tg, d)]) for tg in order if (tg, d) in dev_waits]
        n = sum(x[0] for _, x in rows)
        ns = sum(x[1] for _, x in rows)
        top = None
        for tg, x in rows:
            if top is None or x[1] > top[1][1]:
                top = (tg, x)
        devices[d] = {'waits': n, 'total': ns, 'top': top[0], 'top_waits': top[1][0],
                      'top_total': top[1][1]}
    return out, order, devices


def parse_btt(path):
    lines = open(path).read().split('\n')
    try:
        i = lines.index('==================== I/O wait by process ====================')
    except ValueError:
        return None, None, None
    procs, order, devices = {}, [], {}
    cur = None
    part = 'procs'
    for line in lines[i + 2:]:
        if line.startswith('Waits from:'):
            break
        if not line.strip():
            part = 'devs' if procs else part
            continue
        f = line.split()
        if f[0] == 'PID' and 'ON OTHERS(s)' in line:
            part = 'others'
            continue
        if f[0] in ('PID', 'DEV'):
            continue
        if part == 'others':
            m = re.match(r'^\s*(\d+) (.{16}) \| +(\d+) +(\S+) \| (.*)$', line)
            c = re.match(r'^ +\| +\| (.*)$', line)  # another waker of the same process
            rest = m.group(5) if m else c.group(1) if c else None
            if rest is None:
                raise SystemExit('iowait-btt: cannot read the line %r of %s' % (line, path))
            if m:
                cur = int(m.group(1))
                procs[cur]['others'] = (int(m.group(3)), ns_of(m.group(4)), [])
            k = re.match(r'^ *(\d+) (.{16}) +(\d+) +(\S+) \|', rest)
            if k:
                procs[cur]['others'][2].append((int(k.group(1)), k.group(2).rstrip(),
                                                int(k.group(3)), ns_of(k.group(4))))
            elif not re.match(r'^ *- +\|', rest):
                raise SystemExit('iowait-btt: cannot read the line %r of %s' % (line, path))
            continue
        if part == 'procs':
            m = re.match(r'^\s*(\d+) (.{16}) \| +(\d+) +(\S+) +(\S+) +(\S+) +(\S+) \| +(\S+) +\S+%$', line)
            if m:
                cur = int(m.group(1))
                order.append(cur)
                procs[cur] = {'comm': m.group(2).rstrip(), 'waits': int(m.group(3)),
                              'total': ns_of(m.group(4)), 'p50': ns_of(m.group(5)),
                              'p99': ns_of(m.group(6)), 'max': ns_of(m.group(7)),
                              'covered': ns_of(m.group(8)), 'devs': {}, 'others': None}
                continue
            m = re.match(r'^\s+\(\s*(\d+),\s*(\d+)\)\s+\| +(\d+) I/Os  Q2C avg +(\S+)  D2C avg +(\S+)$', line)
            if m and cur is not None:
                q2c = None if m.group(4) == '-' else ns_of(m.group(4))
                d2c = None if m.group(5) == '-' else ns_of(m.group(5))
                procs[cur]['devs'][(int(m.group(1)), int(m.group(2)))] = (
                    int(m.group(3)), q2c, d2c)
                continue
            raise SystemExit('iowait-btt: cannot read the line %r of %s' % (line, path))
        m = re.match(r'^\s*\(\s*(\d+),\s*(\d+)\) \| +(\d+) +(\S+) \| +(\d+) .{16} +(\d+) +(\S+) +\S+%$', line)
        if m:
            devices[(int(m.group(1)), int(m.group(2)))] = {
                'waits': int(m.group(3)), 'total': ns_of(m.group(4)), 'top': int(m.group(5)),
                'top_waits': int(m.group(6)), 'top_total': ns_of(m.group(7))}
        elif not re.match(r'^\s*\(\s*\d+,\s*\d+\) \| +0 +0\.000000000 \| +-$', line):
            raise SystemExit('iowait-btt: cannot read the line %r of %s' % (line, path))
    return procs, order, devices


def split(path):
    """(before, section, after) of a btt output, as lists of lines."""
    lines = open(path).read().split('\n')
    title = '==================== I/O wait by process ===================='
    if title not in lines:
        return lines, [], []
    i = lines.index(title)
    j = i
    while j < len(lines) and not lines[j].startswith('Waits from:') and not lines[j].startswith('No I/O wait'):
        j += 1
    while j < len(lines) and lines[j].strip():
        j += 1
    return lines[:i], lines[i:j + 1], lines[j + 1:]


def main(a):
    if len(a) == 2 and a[0] in ('strip', 'section'):
        b, sec, rest = split(a[1])
        sys.stdout.write('\n'.join(b + rest) if a[0] == 'strip' else '\n'.join(sec) + '\n' if sec else '')
        return 0
    if len(a) != 2:
        sys.exit(__doc__)
    events, waits = parse_blkparse(a[0])
    want, worder, wdev = expected(events, waits)
    got, gorder, gdev = parse_btt(a[1])
    if got is None:
        print('btt printed no I/O wait section')
        return 1
    bad = []
    if worder != gorder:
        bad.append('process order: want %s got %s' % (worder[:10], gorder[:10]))
    for tg in worder:
        w, g = want[tg], got.get(tg)
        if g is None:
            bad.append('process %d missing' % tg)
            continue
        if g['others'] is not None and not g['others'][0]:
            g['others'] = None  # a row for its NOT TIED time only (--iowait-all)
        for k in ('comm', 'waits', 'total', 'max', 'covered', 'devs', 'others'):
            if w[k] != g[k]:
                bad.append('process %d %s: want %r got %r' % (tg, k, w[k], g[k]))
        for k in ('p50', 'p99'):
            if not (w[k] <= g[k] <= w[k] + w[k] // 64 + 1):
                bad.append('process %d %s: want %d (up to 1/64 above) got %d' % (tg, k, w[k], g[k]))
    if wdev != gdev:
        bad.append('devices: want %r got %r' % (wdev, gdev))
    if bad:
        print('\n'.join(bad[:20]))
        return 1
    print('ok: %d processes, %d waits, %d devices' % (len(want), len(waits), len(wdev)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
