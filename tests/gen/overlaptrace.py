#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
A small merged trace of overlapping reads, for btt --perfetto's stages
(tests/e2e/t1210-btt-perfetto.sh): N pairs on 8,0, each a read of 64 KiB (Q G D) and, while
it is in flight, a read of 4 KiB inside its range (Q G D), then both completed. btt's model
(btt 2.09's rules) gives the large read the small one's G, which comes after the large
one's D: its drawing must leave that G out and keep its D2C (a live trace of fio at queue
depth 64 on a loop device had 272 such I/Os). The first event is at time 0, as in a trace
merged by blkparse -d.

  overlaptrace.py N OUT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkrec  # noqa: E402

CAT = {"Q": blkrec.TC_QUEUE, "G": blkrec.TC_QUEUE, "D": blkrec.TC_ISSUE, "C": blkrec.TC_COMPLETE}
TA = {"Q": blkrec.TA_QUEUE, "G": blkrec.TA_GETRQ, "D": blkrec.TA_ISSUE, "C": blkrec.TA_COMPLETE}
DEV, PID = blkrec.mkdev(8, 0), 100


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    t = blkrec.Trace(version=7, endian="<")
    t.note(blkrec.TN_PROCESS, PID, DEV, b"fio\0")
    evs = []
    for k in range(n):
        base = k * 100000
        big, small = 8192 * k + 1000, 8192 * k + 1050
        evs += [(base, big, 128, "Q"), (base + 500, big, 128, "G"), (base + 1000, big, 128, "D"),
                (base + 2000, small, 8, "Q"), (base + 2500, small, 8, "G"),
                (base + 3000, small, 8, "D"), (base + 8000, big, 128, "C"),
                (base + 9000, small, 8, "C")]
    for seq, (ts, sector, nsec, code) in enumerate(sorted(evs), 1):
        action = (blkrec.TC_READ | CAT[code]) << 16 | TA[code]
        t.rec(seq, ts, sector, nsec * 512, action, PID, DEV, 0)
    with open(out, "wb") as f:
        f.write(t.data())


if __name__ == "__main__":
    main()
