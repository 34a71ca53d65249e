#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A merged trace with origin notes (include/blk/trace.h: BLK_TN_DIRTY, BLK_TN_FMAP,
BLK_TN_FILE) and what btt's "I/O by origin" and "I/O by file" sections, blkparse's origin
fields and btt --perfetto's dirtying bursts must say of it, computed here from the notes and
I/Os as generated, with a model of its own (a dict of dirty pages, a dict of mapped
sectors, a list of bursts), not lib/origin.c's runs.

    origintrace.py [--no-notes] TRACE EXPECTED.json

One device (8,0), two CPUs. Two dd writers dirty files /mnt/a and /mnt/b (and a file deleted
before the end: no FILE note), a flusher kworker queues the writes (one of them holding pages
of both writers and pages nobody dirtied), jbd2 writes the journal, the kworker a block of
no file (metadata), fio reads /mnt/c with O_DIRECT and writes it, a later map moves part of
/mnt/a and puts /mnt/e where the deleted file was (cat reads it), and three notes are bad
(a short DIRTY, a FILE of an unknown inode, a FILE with an unprintable path). Each I/O is Q,
G, I, D, C, done before the next is queued. --no-notes: the same events, no origin notes.

The bursts (btt(1) PERFETTO): the dirty runs of one task and file, each within GAP_NS of
the one before and all within SPAN_NS of the first. Here: dd 2001 dirties /mnt/a again after
a pause (a second burst), /mnt/b pages dirty already after a pause (a burst of no page of its
own: not drawn), dd 2002 dirties /mnt/b a page every 150 ms for 1.05 s (two bursts, one
write takes pages of both), /mnt/c pages written back 61 s later (the burst given up after
STALE_NS: no flow to that write), /mnt/a pages never written (pages-unwritten at the end).
Each drawn burst: its task, time, pages, bytes, file, offset, span, I/Os, pages not
written when drawn, and the I/Os (by Q time) its flows end on.
"""
import json
import random
import struct
import sys

MAGIC = 0x65617407
TC_SHIFT = 16
TC = {'R': 1 << 0, 'W': 1 << 1, 'Q': 1 << 4, 'I': 1 << 5, 'D': 1 << 6, 'C': 1 << 7,
      'G': 1 << 4, 'N': 1 << 10}
TA = {'Q': 1, 'G': 4, 'D': 7, 'C': 8, 'I': 12}
TN_PROCESS, TN_DIRTY, TN_FMAP, TN_FILE = 0, 0x44, 0x45, 0x46
DEV = (8 << 20) | 0
PAGE = 4096
KTHREADS = ('kworker/', 'flush-', 'kswapd', 'jbd2/', 'xfsaild/', 'xfs-', 'xfs_', 'ext4-',
            'btrfs-', 'writeback', 'kcompactd', 'khugepaged')
TASKS = {2001: 'dd', 2002: 'dd', 300: 'kworker/u8:2', 400: 'jbd2/sda1-8', 3001: 'fio',
         3002: 'cat'}
FILES = {11: '/mnt/a', 12: '/mnt/b', 13: '/mnt/c', 15: '/mnt/e'}  # 14: deleted
GAP_NS, SPAN_NS, STALE_NS = 200000000, 1000000000, 60000000000


def rec(seq, t, sector, nbytes, action, pid, cpu, pdu=b''):
    return struct.pack('<IIQQIIIIIHH', MAGIC, seq, t, sector, nbytes, action, pid, DEV, cpu, 0,
                       len(pdu)) + pdu


def note(t, code, pid, cpu, pdu):
    return rec(0, t, 0, 0, (TC['N'] << TC_SHIFT) | code, pid, cpu, pdu)


class Trace:
    def __init__(self, notes):
        self.notes = notes
        self.out = []
        self.t = 1000000
        self.seq = {0: 0, 1: 0}
        self.rnd = random.Random(39)
        self.sectors = {}  # sector -> (ino, file offset of its first byte)
        self.dirty = {}  # (ino, page) -> (pid, its burst)
        self.bursts = []  # each: dict of what its instant must say
        self.bkey = {}  # (pid, ino) -> its newest burst
        self.ios = []  # each: dict of what the sections must say
        self.n = 0
        self.bad = 0  # the damaged notes written
        self.late = 0  # writes of pages of bursts given up
        self.stale = 0  # bursts given up with pages not written

    def tick(self, lo=1000, hi=20000):
        self.t += self.rnd.randrange(lo, hi)
        return self.t

    def add(self, r, always=False):
        if self.notes or always:
            self.out.append(r)

    def fmap(self, ino, offset, sector, nbytes):
        self.add(note(self.tick(), TN_FMAP, 300, 0, struct.pack('<QQQQ', ino, offset, sector,
                                                               nbytes)))
        for i in range((nbytes + 511) // 512):
            self.sectors[sector + i] = (ino, offset + i * 512)

    def dirty_run(self, pid, ino, index, count):
        comm = TASKS[pid].encode().ljust(16, b'\0')
        t = self.tick()
        self.add(note(t, TN_DIRTY, pid, pid % 2,
                      struct.pack('<QQII', ino, index, count, PAGE) + comm))
        b = self.bkey.get((pid, ino))
        if b is None or t - b['t_last'] > GAP_NS or t - b['t_first'] >= SPAN_NS:
            b = {'tid': pid, 'comm': TASKS[pid], 'ino': ino, 't_first': t, 'pages': 0,
                 'left': 0, 'offset': index * PAGE, 'ios': [], 'open': True}
            self.bursts.append(b)
            self.bkey[(pid, ino)] = b
        b['t_last'] = t
        for p in range(index, index + count):
            if (ino, p) not in self.dirty:  # the first dirtier stays
                self.dirty[(ino, p)] = (pid, b)
                b['pages'] += 1
                b['left'] += 1

    def io(self, rw, pid, sector, nbytes):
        cpu = self.n % 2
        self.n += 1
        q = self.tick()
        for b in self.bursts:  # given up at this Q, before it: drawn with what it has
            if b['open'] and b['t_first'] + STALE_NS < q:
                b['open'] = False
                b['unwritten'] = b['left']
                self.stale += b['left'] > 0  # (the others were drawn before)
        g = q + self.rnd.randrange(100, 2000)
        i = g + self.rnd.randrange(100, 2000)
        d = i + self.rnd.randrange(100, 50000)
        c = d + self.rnd.randrange(100000, 3000000)
        self.t = c
        self.seq[cpu] += 1
        for a, tt in (('Q', q), ('G', g), ('I', i), ('D', d), ('C', c)):
            if a != 'Q':
                self.seq[cpu] += 1
            action = TA[a] | ((TC[rw] | TC[a]) << TC_SHIFT)
            self.add(rec(self.seq[cpu], tt, sector, nbytes, action, pid, cpu), True)
        self.ios.append(self.origin(rw, pid, sector, nbytes, q2c=c - q, q=q))

    def origin(self, rw, pid, sector, nbytes, q2c, q):
        """what the notes say of an I/O, at its Q: sector by sector"""
        comm = TASKS[pid]
        shares = {}
        touched = set()
        first = None
        for s in range(sector, sector + nbytes // 512):
            if s not in self.sectors:
                continue
            ino, off = self.sectors[s]
            if first is None:
                first = (ino, off)
            if rw == 'W':
                who = self.dirty.get((ino, off // PAGE))
                if who is not None:
                    shares[who[0]] = shares.get(who[0], 0) + 512
                touched.add((ino, off // PAGE))
        bursts = []
        for k in sorted(touched):
            if k in self.dirty:
                b = self.dirty.pop(k)[1]
                b['left'] -= 1
                if b not in bursts:
                    bursts.append(b)
        for b in bursts:
            if b['open']:
                b['ios'].append(q)
            else:
                self.late += 1
        rest = nbytes - sum(shares.values())
        if rest:
            shares[pid] = shares.get(pid, 0) + rest
        if comm.startswith('jbd2/'):
            kind = 'journal'
        elif rw == 'W' and first is None and comm.startswith(KTHREADS):
            kind = 'metadata'
        else:
            kind = 'task'
        top = max(shares, key=lambda p: (shares[p], -list(shares).index(p)))
        opid = top if kind == 'task' else pid
        return {'rw': rw, 'pid': opid, 'qpid': pid, 'kind': kind, 'file': first,
                'shares': list(shares.items()), 'bytes': nbytes, 'q2c': q2c,
                'sector': sector}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    out, exp = args
    tr = Trace('--no-notes' not in sys.argv)
    t0 = tr.tick()
    for pid, comm in sorted(TASKS.items()):
        tr.add(note(t0, TN_PROCESS, pid, 0, comm.encode().ljust(16, b'\0')), True)
    tr.fmap(11, 0, 2048, 256 * 1024)
    tr.fmap(12, 0, 8192, 128 * 1024)
    tr.fmap(13, 0, 32768, 256 * 1024)
    tr.fmap(14, 0, 16384, 64 * 1024)
    for p in range(0, 64, 8):
        tr.dirty_run(2001, 11, p, 8)
    tr.dirty_run(2002, 12, 0, 8)
    tr.dirty_run(2002, 12, 8, 8)
    tr.dirty_run(2002, 14, 0, 16)
    tr.dirty_run(2001, 12, 16, 4)
    tr.t += 300000000  # a burst of its own, of pages dirty already: not drawn
    tr.dirty_run(2001, 12, 2, 4)  # dirty already: dd 2002's stay
    # a damaged note: a DIRTY too short
    tr.add(note(tr.tick(), TN_DIRTY, 2001, 0, b'\0' * 20))
    tr.bad += 1
    for k in range(4):  # the flusher writes /mnt/a
        tr.io('W', 300, 2048 + k * 128, 65536)
    tr.io('W', 300, 8192 + 64, 65536)  # /mnt/b pages 8..23: dd 2002, dd 2001, nobody
    tr.io('W', 300, 8192, 32768)  # /mnt/b pages 0..7
    tr.io('W', 300, 16384, 65536)  # the file deleted later
    tr.io('W', 400, 100000, 16384)  # the journal
    tr.io('W', 300, 200, 4096)  # metadata
    for k in range(4):  # fio reads /mnt/c (O_DIRECT)
        tr.io('R', 3001, 32768 + k * 128, 65536)
    tr.io('W', 3001, 32768, 16384)  # and writes it
    # part of /mnt/a moves; dd 2001 dirties 5 of its pages after a pause (a second burst),
    # the flusher writes 8
    tr.fmap(11, 0, 50000, 64 * 1024)
    tr.t += 300000000
    tr.dirty_run(2001, 11, 0, 5)
    tr.io('W', 300, 50000, 32768)
    # dd 2002 dirties /mnt/b pages 24..31 a page every 150 ms: the last one 1.05 s after the
    # first, a burst of its own; one write takes them all
    for k in range(8):
        tr.t += 150000000 if k else 0
        tr.dirty_run(2002, 12, 24 + k, 1)
    tr.io('W', 300, 8192 + 24 * 8, 32768)
    # dd 2002 dirties /mnt/c pages 60..63, written 61 s later: given up before
    tr.dirty_run(2002, 13, 60, 4)
    tr.t += 61000000000
    tr.io('W', 300, 32768 + 60 * 8, 16384)
    # dd 2001 dirties /mnt/a pages 40..43, never written
    tr.dirty_run(2001, 11, 40, 4)
    # /mnt/e where the deleted file was: cat reads it
    tr.fmap(15, 0, 16384, 32 * 1024)
    tr.io('R', 3002, 16384, 32768)
    # the names, at the end: none for the deleted file; one unknown inode, one unprintable
    t = tr.tick()
    for ino, path in sorted(FILES.items()):
        tr.add(note(t, TN_FILE, 0, 0, struct.pack('<Q', ino) + path.encode()))
    tr.add(note(t, TN_FILE, 0, 0, struct.pack('<Q', 99) + b'/mnt/nowhere'))
    tr.add(note(t, TN_FILE, 0, 1, struct.pack('<Q', 13) + b'/mnt/c\x01'))
    tr.bad += 2
    with open(out, 'wb') as f:
        f.write(b''.join(tr.out))
    write_expected(tr, exp)


def p99(v):
    v = sorted(v)
    return v[max(0, -(-99 * len(v) // 100) - 1)]


def write_expected(tr, exp):
    cls_order = {'task': 0, 'journal': 1, 'metadata': 2}
    rows = {}
    files = {}
    for io in tr.ios:
        key = (cls_order[io['kind']], io['pid'])
        r = rows.setdefault(key, {'ios': 0, 'bytes': 0, 'foreign': 0, 'q2c': [],
                                  'comm': TASKS[io['pid']]})
        r['ios'] += 1
        r['q2c'].append(io['q2c'])
        for pid, b in io['shares']:
            if io['kind'] != 'task':
                r['bytes'] += b
                continue
            s = rows.setdefault((0, pid), {'ios': 0, 'bytes': 0, 'foreign': 0, 'q2c': [],
                                           'comm': TASKS[pid]})
            s['bytes'] += b
            if pid != io['qpid']:
                s['foreign'] += b
        if io['file'] is None:
            continue
        ino = io['file'][0]
        f = files.setdefault(ino, {'ios': 0, 'r': 0, 'w': 0, 'q2c': 0, 'tasks': {}})
        f['ios'] += 1
        f['q2c'] += io['q2c']
        f['r' if io['rw'] == 'R' else 'w'] += io['bytes']
        charges = [(io['pid'], io['bytes'])] if io['rw'] == 'R' else io['shares']
        for pid, b in charges:
            t = f['tasks'].setdefault(pid, {'r': 0, 'w': 0})
            t['r' if io['rw'] == 'R' else 'w'] += b
    names = ['task', 'journal', 'metadata']
    origins = []
    for (cls, pid) in sorted(rows):
        r = rows[(cls, pid)]
        origins.append({'cls': names[cls], 'pid': pid, 'comm': r['comm'], 'ios': r['ios'],
                        'bytes': r['bytes'], 'foreign': r['foreign'],
                        'q2c_avg': '%.9f' % (sum(r['q2c']) / len(r['q2c']) / 1e9)
                        if r['q2c'] else '-',
                        'q2c_p99_ns': p99(r['q2c']) if r['q2c'] else None})

    def tasks(f, k):
        return ['%s[%d] %d' % (TASKS[p], p, t[k]) for p, t in f['tasks'].items() if t[k]]

    flist = []
    for ino, f in files.items():
        flist.append({'name': FILES.get(ino, 'ino %d' % ino), 'ino': ino, 'ios': f['ios'],
                      'read': f['r'], 'write': f['w'],
                      'q2c_sum': '%.9f' % (f['q2c'] / 1e9),
                      'q2c_avg': '%.9f' % (f['q2c'] / f['ios'] / 1e9),
                      'readers': tasks(f, 'r'), 'writers': tasks(f, 'w'),
                      'bytes_key': f['r'] + f['w'], 'q2c_key': f['q2c']})
    by_bytes = sorted(flist, key=lambda f: (-f['bytes_key'], f['ino']))
    by_q2c = sorted(flist, key=lambda f: (-f['q2c_key'], -f['bytes_key'], f['ino']))
    # blkparse: for each Q, its origin and file (the other events of the I/O say the same)
    qs = []
    for io in tr.ios:
        name = io['kind'] if io['kind'] != 'task' else TASKS[io['pid']]
        fname = '-'
        off = '-'
        if io['file']:
            fname = FILES.get(io['file'][0], 'ino %d' % io['file'][0])
            off = str(io['file'][1])
        qs.append({'sector': io['sector'], 'opid': io['pid'], 'oname': name,
                   'file': fname, 'offset': off,
                   'ino': io['file'][0] if io['file'] else None})
    # btt --perfetto: the bursts with pages of their own, each an instant with its flows
    bursts = []
    for b in tr.bursts:
        if not b['pages']:
            continue
        args = {'pages': b['pages'], 'bytes': b['pages'] * PAGE, 'file-offset': b['offset'],
                'device': '8,0', 'ns': b['t_last'] - b['t_first'], 'ios': len(b['ios'])}
        if b['ino'] in FILES:
            args['file'] = FILES[b['ino']]
        else:
            args['file-ino'] = b['ino']
        unwritten = b['unwritten'] if not b['open'] else b['left']
        if unwritten:
            args['pages-unwritten'] = unwritten
        bursts.append({'track': '%s [tid %d]' % (b['comm'], b['tid']), 'ts': b['t_first'],
                       'args': args, 'flows': b['ios']})
    with open(exp, 'w') as f:
        json.dump({'origins': origins, 'by_bytes': by_bytes[:10], 'by_q2c': by_q2c[:10],
                   'nfiles': len(flist),
                   'unnamed': sum(1 for x in flist if x['ino'] not in FILES),
                   'no_file': sum(1 for io in tr.ios if io['file'] is None),
                   'bad_notes': tr.bad if tr.notes else 0, 'qs': qs,
                   'bursts': bursts,
                   'bursts_zero': sum(1 for b in tr.bursts if not b['pages']),
                   'bursts_stale': tr.stale,
                   'late': tr.late}, f, indent=1)


main()
