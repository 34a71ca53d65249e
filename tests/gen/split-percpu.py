#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Split a merged trace (any version and byte order, which the files keep) into the classic
per-device, per-CPU files (d<N>.blktrace.<CPU>, devices numbered in order of their device
number), spreading the records over 1..4 CPUs at random and numbering each file's records
from 1, so that blkparse reads them as blktrace wrote them. Prints the -i options that
name them.

    split-percpu.py MERGED.bin OUTDIR SEED
"""
import os
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blkrec  # noqa: E402 (the record layout, tests/gen/blkrec.py)


def main():
    data = open(sys.argv[1], 'rb').read()
    out, rnd = sys.argv[2], random.Random(int(sys.argv[3]))
    ncpu = rnd.randint(1, 4)
    recs = list(blkrec.records(data))
    devs = sorted(set(r.device for r in recs))
    files, seq = {}, {}
    for r in recs:
        cpu = rnd.randrange(ncpu) if rnd.random() < 0.7 else r.cpu % ncpu
        key = (r.device, cpu)
        seq[key] = seq.get(key, 0) + 1
        files.setdefault(('d%d' % devs.index(r.device), cpu), []).append(
            blkrec.pack(r._replace(cpu=cpu, seq=seq[key])))
    for i in range(len(devs)):
        for cpu in range(ncpu):
            with open(os.path.join(out, 'd%d.blktrace.%d' % (i, cpu)), 'wb') as fh:
                fh.write(b''.join(files.get(('d%d' % i, cpu), [])))
    print(' '.join('-i d%d' % i for i in range(len(devs))))


if __name__ == '__main__':
    main()
