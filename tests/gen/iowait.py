#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
I/O wait notes for the tests, independently of the C library (the layout is in blkrec.py):

  iowait.py synth DIR NAME [--every K] [--early]
      write DIR/NAME.iowait.blktrace.CPU: one wait per K-th completed read of the per-CPU
      files DIR/NAME.blktrace.*, from 1 us after its Q to 2 us after its C, by the task that
      queued it, on the CPU of the C (a wait ending before the first event too with --early)
  iowait.py inband IN OUT [--every K]
      copy the stream IN with such waits put in-band (after the C that ends them)
  iowait.py merge OUT FILE...
      write the records of the per-CPU FILEs in one time-ordered stream, as blktrace -o -
      writes it (ties: in the order of the FILEs, each file's own order kept)
  iowait.py strip IN OUT
      copy IN without its I/O wait notes
  iowait.py list FILE...
      print each wait note: "END START DURATION TGID TID COMM CPU SOURCE FLAGS REBASE"
  iowait.py overlap DIR NAME PID
      the reads of task PID in DIR/NAME.blktrace.* (each from its Q to the C of its sector)
      and its waits in DIR/NAME.iowait.blktrace.*: print "reads R waits W overlapping O
      named N" (W: its waits but those another task's I/O ended; O: those overlapping one of its reads; N: waits whose tgid is PID and name
      the task's, from its process note)
  iowait.py match DIR NAME MIN_NS
      every read of DIR/NAME.blktrace.* (Q to the C of its sector) against the waits of the
      task that queued it: print "reads R own O matched M long L waits W sources S": O
      reads completed while their task still ran (in its context: it never slept), M reads
      overlapped by a wait of their task, L with such a wait that ended after the C and
      at least MIN_NS after the Q (a device that completes in MIN_NS)
  iowait.py count FILE...
      print how many records and how many wait notes FILE holds
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkrec  # noqa: E402

TA_QUEUE, TA_COMPLETE = 1, 8
TC_READ = 1 << 16


def raw(data, r):
    return data[r.offset:r.offset + (48 if r.version == 7 else 64) + len(r.pdu)]


def waits_for(recs, every):
    """(C record, wait record bytes) for every K-th completed read in @recs (time order)."""
    queued = {}
    n = 0
    out = []
    for r in recs:
        code = r.action & 0xffff
        if r.action & (1 << (10 + 16)):
            continue
        if code == TA_QUEUE and r.action & TC_READ:
            queued[(r.device, r.sector)] = r
        elif code == TA_COMPLETE and (r.device, r.sector) in queued:
            q = queued.pop((r.device, r.sector))
            n += 1
            if n % every:
                continue
            start, end = q.time + 1000, r.time + 2000
            w = blkrec.iowait_rec(7, '<', end, end - start, q.pid, q.pid, 'reader%d' % q.pid,
                                  r.device, r.cpu, io_dev=r.device, waker_cpu=r.cpu,
                                  sleep_cpu=q.cpu, source=3,
                                  flags=blkrec.IOWAIT_F_IO | blkrec.IOWAIT_F_IO_CHECKED)
            out.append((r, w))
    return out


def synth(d, name, every, early):
    recs = []
    for p in sorted(glob.glob(os.path.join(d, name + '.blktrace.*'))):
        recs += list(blkrec.records(open(p, 'rb').read()))
    recs.sort(key=lambda r: r.time)
    per_cpu = {}
    for c, w in waits_for(recs, every):
        per_cpu.setdefault(c.cpu, []).append((c.time + 2000, w))
    if early and recs:
        first = recs[0]
        per_cpu.setdefault(first.cpu, []).insert(0, (first.time - 5000, blkrec.iowait_rec(
            7, '<', first.time - 5000, 3000, 1, 1, 'early', first.device, first.cpu)))
    for cpu, ws in per_cpu.items():
        ws.sort(key=lambda x: x[0])
        with open(os.path.join(d, '%s.iowait.blktrace.%d' % (name, cpu)), 'wb') as f:
            f.write(b''.join(w for _, w in ws))
    print(sum(len(v) for v in per_cpu.values()))


def inband(src, dst, every):
    data = open(src, 'rb').read()
    recs = list(blkrec.records(data))
    extra = {id(c): w for c, w in waits_for(sorted(recs, key=lambda r: r.time), every)}
    with open(dst, 'wb') as f:
        for r in recs:
            f.write(raw(data, r))
            if id(r) in extra:
                f.write(extra[id(r)])
    print(len(extra))


def merge(dst, paths):
    allr = []
    for i, p in enumerate(paths):
        data = open(p, 'rb').read()
        for r in blkrec.records(data):
            allr.append((r.time, i, r.offset, raw(data, r)))
    allr.sort(key=lambda x: x[:3])
    with open(dst, 'wb') as f:
        f.write(b''.join(x[3] for x in allr))


def strip(src, dst):
    data = open(src, 'rb').read()
    with open(dst, 'wb') as f:
        for r in blkrec.records(data):
            if not blkrec.is_iowait(r):
                f.write(raw(data, r))


def listing(paths):
    for p in paths:
        for r in blkrec.records(open(p, 'rb').read()):
            if blkrec.is_iowait(r):
                w = blkrec.iowait(r)
                print(w.end, w.start, w.duration, w.tgid, w.tid, w.comm, w.cpu, w.source,
                      w.flags, w.rebase)


def overlap(d, name, pid):
    recs = []
    for p in sorted(glob.glob(os.path.join(d, name + '.blktrace.*'))):
        recs += list(blkrec.records(open(p, 'rb').read()))
    recs.sort(key=lambda r: r.time)
    comm = None
    queued, reads = {}, []
    for r in recs:
        code = r.action & 0xffff
        if r.action & (1 << 26):
            if code == 0 and r.pid == pid:
                comm = r.pdu.rstrip(b'\0').decode(errors='replace')
            continue
        if code == TA_QUEUE and r.pid == pid and r.action & TC_READ:
            queued[(r.device, r.sector)] = r.time
        elif code == TA_COMPLETE and (r.device, r.sector) in queued:
            reads.append((queued.pop((r.device, r.sector)), r.time))
    waits = []
    for p in sorted(glob.glob(os.path.join(d, name + '.iowait.blktrace.*'))):
        waits += [blkrec.iowait(r) for r in blkrec.records(open(p, 'rb').read())
                  if blkrec.is_iowait(r)]
    # its waits on its own reads: those another task's I/O ended (BLK_IOWAIT_F_WAKER_IO, 1 << 3:
    # a sleep of dd without a read in flight, woken by a task that queued I/O) are not
    mine = [w for w in waits if w.tid == pid and not w.flags & (1 << 3)]
    reads.sort()
    ov = named = 0
    for w in mine:
        if any(q < w.end and c > w.start for q, c in reads):
            ov += 1
        if w.tgid == pid and w.comm == comm:
            named += 1
    print('reads %d waits %d overlapping %d named %d' % (len(reads), len(mine), ov, named))


def match(d, name, min_ns):
    recs = []
    for p in sorted(glob.glob(os.path.join(d, name + '.blktrace.*'))):
        recs += list(blkrec.records(open(p, 'rb').read()))
    recs.sort(key=lambda r: r.time)
    queued, reads = {}, []
    for r in recs:
        code = r.action & 0xffff
        if r.action & (1 << 26):
            continue
        if code == TA_QUEUE and r.action & TC_READ:
            queued[(r.device, r.sector)] = (r.time, r.pid)
        elif code == TA_COMPLETE and (r.device, r.sector) in queued:
            q, pid = queued.pop((r.device, r.sector))
            reads.append((q, r.time, pid, r.pid))
    waits = []
    for p in sorted(glob.glob(os.path.join(d, name + '.iowait.blktrace.*'))):
        waits += [blkrec.iowait(r) for r in blkrec.records(open(p, 'rb').read())
                  if blkrec.is_iowait(r)]
    matched = long_ = own = 0
    for q, c, pid, cpid in reads:
        ws = [w for w in waits if w.tid == pid and w.start < c and w.end > q]
        if cpid == pid and not ws:
            own += 1  # completed while its task still ran: it never waited
        elif ws:
            matched += 1
            long_ += any(w.end >= c and w.end - q >= min_ns for w in ws)
        elif '-v' in sys.argv:
            print('unmatched read: Q %d C %d pid %d (C by %d)' % (q, c, pid, cpid))
    print('reads %d own %d matched %d long %d waits %d sources %s' % (
        len(reads), own, matched, long_, len(waits),
        ','.join(sorted(set(w.source for w in waits))) or '-'))


def count(paths):
    for p in paths:
        rs = list(blkrec.records(open(p, 'rb').read()))
        print(p, len(rs), sum(1 for r in rs if blkrec.is_iowait(r)))


def main(a):
    every = 1
    if '--every' in a:
        i = a.index('--every')
        every = int(a[i + 1])
        del a[i:i + 2]
    early = '--early' in a
    a = [x for x in a if x not in ('--early', '-v')]
    if len(a) >= 3 and a[0] == 'synth':
        synth(a[1], a[2], every, early)
    elif len(a) == 3 and a[0] == 'inband':
        inband(a[1], a[2], every)
    elif len(a) >= 3 and a[0] == 'merge':
        merge(a[1], a[2:])
    elif len(a) == 3 and a[0] == 'strip':
        strip(a[1], a[2])
    elif len(a) >= 2 and a[0] == 'list':
        listing(a[1:])
    elif len(a) == 4 and a[0] == 'overlap':
        overlap(a[1], a[2], int(a[3]))
    elif len(a) == 4 and a[0] == 'match':
        match(a[1], a[2], int(a[3]))
    elif len(a) >= 2 and a[0] == 'count':
        count(a[1:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
