#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A merged trace with cgroup notes (include/blk/trace.h: BLK_TN_CGROUP, BLK_TN_CGPATH) and
what btt's "I/O by cgroup" section must say of it, computed here from the I/Os as generated.

    cgtrace.py [--no-notes] TRACE EXPECTED

Two devices (8,0 and 8,16), two CPUs; I/Os of three cgroups (ids 100 "/a", 200 "/b/c" and
300, which has no path note) and I/Os no run names (issued before the first note of their
CPU). Each I/O is Q, G, I, D, C (in time order); every CPU's events have their own sequence
numbers. EXPECTED: one line per (cgroup, device): name, device, I/Os, bytes, Q2C avg, Q2C
p99 (nearest rank), D2C avg, D2C p99, in nanoseconds. --no-notes: the same events, no notes
(the classic report must not change).
"""
import random
import struct
import sys

MAGIC = 0x65617407
TC_SHIFT = 16
TC = {'R': 1 << 0, 'W': 1 << 1, 'Q': 1 << 4, 'I': 1 << 5, 'D': 1 << 6, 'C': 1 << 7,
      'G': 1 << 4, 'N': 1 << 10}
TA = {'Q': 1, 'G': 4, 'D': 7, 'C': 8, 'I': 12}
TN_CGROUP, TN_CGPATH = 0x42, 0x43
DEVS = [(8 << 20) | 0, (8 << 20) | 16]
PATHS = {100: b'/a', 200: b'/b/c'}


def rec(seq, t, sector, nbytes, action, pid, dev, cpu, pdu=b''):
    return struct.pack('<IIQQIIIIIHH', MAGIC, seq, t, sector, nbytes, action, pid, dev, cpu, 0,
                       len(pdu)) + pdu


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    notes = '--no-notes' not in sys.argv
    out, exp = args
    rnd = random.Random(39)
    events = []  # (time, order, bytes)
    seq = {0: 0, 1: 0}
    runs = []  # (time, dev, cpu, first, count, cg)
    ios = []
    t = 1000000
    order = 0
    slots = list(range(4000))
    rnd.shuffle(slots)
    for n in range(4000):
        cpu = n % 2
        dev = DEVS[(n // 2) % 2]
        cg = None if n < 40 or n % 37 == 5 else rnd.choice([100, 200, 300])
        pid = 1000 + (cg or 0)
        sector = slots.pop() * 128  # no two I/Os share a sector: each C is one bio's
        nsec = rnd.choice([8, 16, 64])
        rw = rnd.choice('RW')
        t += rnd.randrange(1000, 20000)
        q = t
        g = q + rnd.randrange(100, 2000)
        i = g + rnd.randrange(100, 2000)
        d = i + rnd.randrange(100, 50000)
        c = d + rnd.randrange(10000, 3000000)
        seq[cpu] += 1
        qseq = seq[cpu]
        if cg is not None:
            runs.append((q, dev, cpu, qseq, 1, cg))
        for a, tt in (('Q', q), ('G', g), ('I', i), ('D', d), ('C', c)):
            if a != 'Q':
                seq[cpu] += 1
            s = qseq if a == 'Q' else seq[cpu]
            action = TA[a] | ((TC[rw] | TC[a]) << TC_SHIFT)
            events.append((tt, order, rec(s, tt, sector, nsec * 512, action, pid, dev, cpu)))
            order += 1
        ios.append((cg, dev, nsec * 512, c - q, c - d, q, c))
    if notes:
        seen = set()
        for (tt, dev, cpu, first, count, cg) in runs:
            if cg in PATHS and cg not in seen:
                seen.add(cg)
                pdu = struct.pack('<Q', cg) + PATHS[cg]
                events.append((tt, -2, rec(0, tt, 0, 0, (TC['N'] << TC_SHIFT) | TN_CGPATH, 0,
                                           dev, cpu, pdu)))
            pdu = struct.pack('<QII', cg, first, count)
            events.append((tt, -1, rec(0, tt, 0, 0, (TC['N'] << TC_SHIFT) | TN_CGROUP, 0, dev,
                                       cpu, pdu)))
    events.sort(key=lambda e: (e[0], e[1]))
    with open(out, 'wb') as f:
        for e in events:
            f.write(e[2])
    # btt follows the bios from the first note on (notes come before same-time events): the
    # I/Os queued before it are not in the table, those completed after it are counted apart
    first = min(r[0] for r in runs)
    rows = {}
    no_q = 0
    for (cg, dev, nbytes, q2c, d2c, q, c) in ios:
        if q < first:
            no_q += c >= first
            continue
        rows.setdefault((cg or 0, dev), []).append((nbytes, q2c, d2c))
    with open(exp, 'w') as f:
        f.write('no_q\t%d\n' % no_q)
        for (cg, dev) in sorted(rows):
            r = rows[(cg, dev)]
            name = '(no cgroup note)' if not cg else PATHS.get(cg, b'id %d' % cg).decode()
            q = sorted(x[1] for x in r)
            dd = sorted(x[2] for x in r)
            p99 = lambda v: v[max(0, -(-99 * len(v) // 100) - 1)]
            f.write('%s\t%d,%d\t%d\t%d\t%.9f\t%d\t%.9f\t%d\n' % (
                name, dev >> 20, dev & 0xfffff, len(r), sum(x[0] for x in r),
                sum(q) / len(q) / 1e9, p99(q), sum(dd) / len(dd) / 1e9, p99(dd)))


main()
