#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Split a merged little-endian v1 trace into the classic per-device, per-CPU files
(d<N>.blktrace.<CPU>, devices numbered in order of their device number), spreading the
records over 1..4 CPUs at random and numbering each file's records from 1, so that
blkparse reads them as blktrace wrote them. Prints the -i options that name them.

    split-percpu.py MERGED.bin OUTDIR SEED
"""
import os
import random
import struct
import sys

RECORD = struct.Struct('<IIQQIIIIIHH')


def main():
    data = open(sys.argv[1], 'rb').read()
    out, rnd = sys.argv[2], random.Random(int(sys.argv[3]))
    ncpu = rnd.randint(1, 4)
    recs, off = [], 0
    while off + RECORD.size <= len(data):
        f = list(RECORD.unpack_from(data, off))
        recs.append((f, data[off + RECORD.size:off + RECORD.size + f[10]]))
        off += RECORD.size + f[10]
    devs = sorted(set(f[7] for f, _ in recs))
    files, seq = {}, {}
    for f, pdu in recs:
        cpu = rnd.randrange(ncpu) if rnd.random() < 0.7 else f[8] % ncpu
        f[8] = cpu
        key = (f[7], cpu)
        seq[key] = seq.get(key, 0) + 1
        f[1] = seq[key]
        files.setdefault(('d%d' % devs.index(f[7]), cpu), []).append(RECORD.pack(*f) + pdu)
    for i in range(len(devs)):
        for cpu in range(ncpu):
            with open(os.path.join(out, 'd%d.blktrace.%d' % (i, cpu)), 'wb') as fh:
                fh.write(b''.join(files.get(('d%d' % i, cpu), [])))
    print(' '.join('-i d%d' % i for i in range(len(devs))))


if __name__ == '__main__':
    main()
