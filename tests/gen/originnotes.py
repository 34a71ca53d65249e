#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The origin notes of blktrace --origin (include/blk/trace.h: BLK_TN_DIRTY, BLK_TN_FMAP,
BLK_TN_FILE) read from trace files, listed or checked against files of known content.

    originnotes.py dump FILE...
    originnotes.py check [--dirty PID:INO:BYTES]... [--fmap INO:BYTES]... [--file INO:PATH]...
                         FILE...

dump: one line per note: "dirty DEV TIME PID COMM INO INDEX COUNT PAGE", "fmap DEV TIME PID
INO OFFSET SECTOR BYTES", "file DEV TIME INO PATH".
check (status 1 with a line per failure):
  --dirty: the dirty runs of task PID for inode INO cover its pages 0 .. BYTES/page - 1
    exactly (each once; no run of another task for that inode);
  --fmap: the file maps of INO cover its bytes 0 .. BYTES - 1;
  --file: a file note names INO as PATH.
"""
import struct
import sys

import blkrec

TN_DIRTY, TN_FMAP, TN_FILE = 0x44, 0x45, 0x46


def notes(paths):
    out = []
    for p in paths:
        with open(p, 'rb') as f:
            data = f.read()
        for r in blkrec.records(data):
            if not (r.action & blkrec.NOTIFY):
                continue
            code = r.action & 0xffff
            e = r.endian
            if code == TN_DIRTY and len(r.pdu) == 40:
                ino, index, count, page = struct.unpack(e + 'QQII', r.pdu[:24])
                comm = r.pdu[24:40].split(b'\0')[0].decode('utf-8', 'replace')
                out.append(('dirty', r.device, r.time, r.pid, comm, ino, index, count, page))
            elif code == TN_FMAP and len(r.pdu) == 32:
                ino, off, sector, nbytes = struct.unpack(e + 'QQQQ', r.pdu)
                out.append(('fmap', r.device, r.time, r.pid, ino, off, sector, nbytes))
            elif code == TN_FILE and len(r.pdu) > 8:
                ino, = struct.unpack(e + 'Q', r.pdu[:8])
                out.append(('file', r.device, r.time, ino,
                            r.pdu[8:].decode('utf-8', 'surrogateescape')))
    return out


def check(args, paths):
    ns = notes(paths)
    bad = []
    for kind, spec in args:
        if kind == '--dirty':
            pid, ino, size = (int(x) for x in spec.split(':'))
            runs = [n for n in ns if n[0] == 'dirty' and n[5] == ino]
            if not runs:
                bad.append('no dirty run of inode %d' % ino)
                continue
            page = runs[0][8]
            want = (size + page - 1) // page
            seen = [0] * want
            for n in runs:
                if n[3] != pid:
                    bad.append('inode %d: pages %d+%d charged to pid %d (%s), not %d'
                               % (ino, n[6], n[7], n[3], n[4], pid))
                    continue
                for i in range(n[6], n[6] + n[7]):
                    if i >= want:
                        bad.append('inode %d: page %d beyond its %d pages' % (ino, i, want))
                        break
                    seen[i] += 1
            missing = [i for i, c in enumerate(seen) if c == 0]
            twice = [i for i, c in enumerate(seen) if c > 1]
            if missing:
                bad.append('inode %d: %d of %d pages in no dirty run (first %d)'
                           % (ino, len(missing), want, missing[0]))
            if twice:
                bad.append('inode %d: %d pages in more than one run (first %d)'
                           % (ino, len(twice), twice[0]))
        elif kind == '--fmap':
            ino, size = (int(x) for x in spec.split(':'))
            spans = sorted((n[5], n[5] + n[7]) for n in ns if n[0] == 'fmap' and n[4] == ino)
            end = 0
            for a, b in spans:
                if a > end:
                    break
                end = max(end, b)
            if end < size:
                bad.append('inode %d: file maps cover bytes 0..%d only, of %d (%d maps)'
                           % (ino, end, size, len(spans)))
        elif kind == '--file':
            ino, path = spec.split(':', 1)
            names = [n[4] for n in ns if n[0] == 'file' and n[3] == int(ino)]
            if names != [path]:
                bad.append('inode %s: file notes %r, not [%r]' % (ino, names, path))
    for b in bad:
        print(b)
    return 1 if bad else 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ('dump', 'check'):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == 'dump':
        for n in notes(argv[2:]):
            print(' '.join(str(x) for x in n))
        return 0
    args, paths, i = [], [], 2
    while i < len(argv):
        if argv[i] in ('--dirty', '--fmap', '--file'):
            args.append((argv[i], argv[i + 1]))
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    return check(args, paths)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
