#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
A small merged trace of bios that never complete, for btt --perfetto's "I/O not completed"
lanes (tests/e2e/t1210-btt-perfetto.sh): on 8,0, a read queued, given a request and issued
at time 0 whose C is not in the trace; a read completed 1 ms later; 61 s later a read
completed (the bios model gives up the first, in flight for more than 60 s: BIOS_STALE_NS)
and a write queued and issued that the trace ends before completing.

  stalebios.py OUT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkrec  # noqa: E402

CAT = {"Q": blkrec.TC_QUEUE, "G": blkrec.TC_QUEUE, "D": blkrec.TC_ISSUE, "C": blkrec.TC_COMPLETE}
TA = {"Q": blkrec.TA_QUEUE, "G": blkrec.TA_GETRQ, "D": blkrec.TA_ISSUE, "C": blkrec.TA_COMPLETE}
DEV, PID = blkrec.mkdev(8, 0), 100
S = 1000000000


def main():
    out = sys.argv[1]
    t = blkrec.Trace(version=7, endian="<")
    t.note(blkrec.TN_PROCESS, PID, DEV, b"fio\0")
    evs = []
    for base, sector, codes, rw in ((0, 1000, "QGD", blkrec.TC_READ), (1000000, 5000, "QGDC", blkrec.TC_READ),
                                    (61 * S, 9000, "QGDC", blkrec.TC_READ),
                                    (62 * S, 20000, "QGD", blkrec.TC_WRITE)):
        for k, code in enumerate(codes):
            evs.append((base + 1000 * k, sector, 8, code, rw))
    for seq, (ts, sector, nsec, code, rw) in enumerate(sorted(evs), 1):
        action = (rw | CAT[code]) << 16 | TA[code]
        t.rec(seq, ts, sector, nsec * 512, action, PID, DEV, 0)
    with open(out, "wb") as f:
        f.write(t.data())


if __name__ == "__main__":
    main()
