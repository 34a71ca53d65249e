#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Check blkparse's %z wall-clock times against the per-CPU trace files they come from.

    wallcheck.py stream OUT PERCPU...
        Write the records of the per-CPU files to OUT as one stream in trace-time order,
        as a live 'blktrace -o -' would send them.
    wallcheck.py check MODE TEXT PERCPU...
        TEXT is blkparse output with -f '%M,%m %c %s %T.%t %z %a\\n'. Each line's %z must be
        the wall clock of its event, found by device, CPU and sequence number in the per-CPU
        files: the timestamp note's wall clock plus the event's distance from the note (the
        note with the latest trace time). MODE says which time is expected:
          exact      that one
          estimated  that of a merged file (blkparse -d), whose events were rebased: early
                     by the time from the first event's process note to the event
          classic    that of blkparse 1.2.0 reading per-CPU files: early by the time from
                     the timestamp note to the first event
        Prints a summary line; exit status 1 on the first mismatch (which it prints).
Times are local: set TZ.
"""
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blkrec  # noqa: E402 (the record layout, tests/gen/blkrec.py)

NS = 10**9


def records(path):
    return blkrec.records(open(path, 'rb').read())


def load(paths):
    events, notes, stamps = {}, [], []
    first = None
    for p in paths:
        for r in records(p):
            seq, t, action, pid, dev, cpu = r.seq, r.time, r.action, r.pid, r.device, r.cpu
            if action & blkrec.NOTIFY:
                code = action & 0xff
                if code == blkrec.TN_TIMESTAMP and len(r.pdu) == 8:
                    stamps.append((t,) + blkrec.read_timestamp(r))
                elif code == blkrec.TN_PROCESS:
                    notes.append((t, dev, cpu, pid))
                continue
            events[(dev, cpu, seq)] = t
            if first is None or t < first[0]:
                first = (t, dev, cpu, pid)
    return events, notes, max(stamps), first


def hms(ns):
    tm = time.localtime(ns // NS)
    return '%02d:%02d:%02d.%06d' % (tm.tm_hour, tm.tm_min, tm.tm_sec, ns % NS // 1000)


def check(mode, text, paths):
    time.tzset()
    events, notes, (ts_t, ts_s, ts_ns), first = load(paths)
    early = 0
    if mode == 'estimated':
        note = min(n[0] for n in notes if n[1:] == first[1:])
        early = first[0] - note
    elif mode == 'classic':
        early = first[0] - ts_t
    n = 0
    for line in open(text):
        w = line.split()
        if len(w) != 6 or ',' not in w[0]:
            continue
        mj, mn = (int(x) for x in w[0].split(','))
        key = ((mj << 20) | mn, int(w[1]), int(w[2]))
        want = hms(ts_s * NS + ts_ns + events[key] - ts_t - early)
        if w[4] != want:
            print('%s: line %d: %%z %s, expected %s (event %s at %d ns, %s mode)' %
                  (text, n + 1, w[4], want, key, events[key], mode))
            return 1
        n += 1
    if not n:
        print('%s: no event lines' % text)
        return 1
    print('%d %%z times as expected (%s; early by %d ns)' % (n, mode, early))
    return 0


def stream(out, paths):
    recs = []
    for p in paths:
        data = open(p, 'rb').read()
        for r in blkrec.records(data):
            recs.append((r.time, len(recs), data[r.offset:r.end]))
    with open(out, 'wb') as o:
        for r in sorted(recs):
            o.write(r[2])
    return 0


def main():
    if len(sys.argv) > 3 and sys.argv[1] == 'stream':
        return stream(sys.argv[2], sys.argv[3:])
    if len(sys.argv) > 4 and sys.argv[1] == 'check':
        return check(sys.argv[2], sys.argv[3], sys.argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
