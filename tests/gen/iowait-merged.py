#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
I/O waits in a merged file read back (blkparse -i MERGED --iowait) against the same trace
read from its per-CPU files, independently of the C library:

  iowait-merged.py gen DIR NAME
      write DIR/NAME.blktrace.{0,1} and DIR/NAME.iowait.blktrace.{0,1}: 3 tasks doing 700
      reads, each read Q G D C 1 us apart on one CPU (alternating), 10 us between reads,
      one wait per read from 1.5 us after its Q to 0.5 us after its C; a process note
      before each task's first event on a CPU. The wait of read 127 ends between the
      512th and the 513th event (the end of the classic tool's first batch when the
      merged file is read back). Prints the number of waits.
  iowait-merged.py compare DIR_TXT MERGED_TXT
      the event and wait lines of blkparse's default output (--iowait) on the per-CPU
      files and on the merged file: the same lines in the same order; each event's time
      may differ from its per-CPU time by a shift (the classic tool takes the time base
      again while it is 0, and a merged file's first event is at 0: from the second batch
      on, times are relative to that batch's first event), and each wait line must be on
      the time base of the event line printed before it (the first event's, if none),
      its start= by the same shift and its other fields unchanged. Prints "ok: L lines,
      W waits, shifts S" and exits 0, or the differences and exits 1.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkrec  # noqa: E402

NS = 10**9
DEV = blkrec.mkdev(7, 0)
T0 = 5 * NS + 123456
TC_READ = blkrec.TC_READ


def gen(d, name):
    tr = {c: blkrec.Trace() for c in (0, 1)}
    waits = {0: [], 1: []}
    seq = {0: 0, 1: 0}
    named = set()
    events = []
    for i in range(700):
        cpu, pid = i % 2, 100 + i % 3
        q = T0 + i * 10000
        if (cpu, pid) not in named:
            named.add((cpu, pid))
            tr[cpu].note(blkrec.TN_PROCESS, pid, DEV, b'reader%d\0' % pid, time=q - 20, cpu=cpu)
        sector = 2048 + 8 * i
        for k, code, cats in ((0, blkrec.TA_QUEUE, blkrec.TC_QUEUE),
                              (1, blkrec.TA_GETRQ, 0),
                              (2, blkrec.TA_ISSUE, blkrec.TC_ISSUE),
                              (3, blkrec.TA_COMPLETE, blkrec.TC_COMPLETE)):
            seq[cpu] += 1
            t = q + k * 1000
            tr[cpu].rec(seq[cpu], t, sector, 4096, blkrec.act(code, TC_READ | cats), pid,
                        DEV, cpu)
            events.append(t)
        end = q + 3000 + 500
        waits[cpu].append(blkrec.iowait_rec(
            7, '<', end, end - (q + 1500), pid, pid, 'reader%d' % pid, DEV, cpu, io_dev=DEV,
            waker_cpu=cpu, sleep_cpu=cpu, source=3,
            flags=blkrec.IOWAIT_F_IO | blkrec.IOWAIT_F_IO_CHECKED))
    events.sort()
    # the wait of read 127 falls between the 512th and the 513th event
    assert events[511] < T0 + 127 * 10000 + 3500 < events[512]
    for c in (0, 1):
        open(os.path.join(d, '%s.blktrace.%d' % (name, c)), 'wb').write(tr[c].data())
        open(os.path.join(d, '%s.iowait.blktrace.%d' % (name, c)), 'wb').write(
            b''.join(waits[c]))
    print(sum(len(w) for w in waits.values()))


LINE = re.compile(r'^\s*(\d+,\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d{9})\s+(\d+)\s+(\S+)\s+(.*)$')


def lines(path):
    """[(key, time_ns, start_ns or None, is_wait)] of the event and wait lines of @path."""
    out = []
    for s in open(path, errors='replace'):
        m = LINE.match(s)
        if not m:
            continue
        dev, cpu, seq, sec, nsec, pid, act, rest = m.groups()
        t = int(sec) * NS + int(nsec)
        start = None
        if act == 'w':
            ms = re.search(r' start=(-?)(\d+)\.(\d{9}) ', ' ' + rest + ' ')
            if not ms:
                continue
            start = (int(ms.group(2)) * NS + int(ms.group(3))) * (-1 if ms.group(1) else 1)
            rest = re.sub(r'start=\S+ ?', '', rest)
        out.append(((dev, cpu, seq, pid, act, rest.strip()), t, start, act == 'w'))
    return out


def compare(dir_txt, merged_txt):
    a, b = lines(dir_txt), lines(merged_txt)
    errs = []
    ka, kb = [x[0] for x in a], [x[0] for x in b]
    if ka != kb:
        i = next((i for i, (x, y) in enumerate(zip(ka, kb)) if x != y), min(len(ka), len(kb)))
        errs.append('line %d differs: per-CPU %s, merged %s (%d and %d lines, %d and %d waits)'
                    % (i + 1, ka[i] if i < len(ka) else 'end', kb[i] if i < len(kb) else 'end',
                       len(ka), len(kb), sum(x[3] for x in a), sum(x[3] for x in b)))
    shift = None
    shifts = set()
    nw = 0
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] != y[0]:
            break
        d = x[1] - y[1]
        if not x[3]:
            shift = d
            shifts.add(d)
            continue
        nw += 1
        if shift is None:
            shift = next((p[1] - q[1] for p, q in zip(a, b) if not p[3]), d)
        if d != shift or x[2] - y[2] != shift:
            errs.append('wait line %d (%s): end %d start %d in the merged file, want %d and %d '
                        '(the time base of the event before it)'
                        % (i + 1, ' '.join(x[0][:4]), y[1], y[2], x[1] - shift, x[2] - shift))
            if len(errs) > 5:
                break
    if errs:
        print('\n'.join(errs))
        sys.exit(1)
    print('ok: %d lines, %d waits, shifts %s' % (len(a), nw, ','.join(str(s) for s in sorted(shifts))))


def main(a):
    if len(a) == 3 and a[0] == 'gen':
        gen(a[1], a[2])
    elif len(a) == 3 and a[0] == 'compare':
        compare(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
