#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
A small merged trace of a dm device stacked on a disk, for btt --perfetto's remap flows
(tests/e2e/t1210-btt-perfetto.sh): N writes queued on dm-0 (253,0), each remapped (A) onto
8,0 at sector + 2048 and queued there (Q G I D C), then completed on dm-0; a TN_PROCESS
note names the writer, a TN_TIMESTAMP note dates the trace, a message note is on 8,0.

  dmtrace.py N OUT
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkrec  # noqa: E402

TC = {"write": 1 << 1, "queue": 1 << 4, "issue": 1 << 6, "complete": 1 << 7, "notify": 1 << 10}
TA = {"Q": 1, "G": 4, "D": 7, "C": 8, "I": 12, "A": 15}
CAT = {"Q": "queue", "G": "queue", "I": "queue", "A": "queue", "D": "issue", "C": "complete"}
DM, SDA, PID = blkrec.mkdev(253, 0), blkrec.mkdev(8, 0), 4242


def act(code):
    return (TC["write"] | TC[CAT[code]]) << 16 | TA[code]


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    t = blkrec.Trace(version=7, endian="<")
    recs = []

    def rec(time, sector, nbytes, a, dev, pdu=b"", pid=PID):
        recs.append((time, len(recs), sector, nbytes, a, pid, dev, pdu))

    notify = TC["notify"] << 16
    rec(0, 0, 0, notify | 0, SDA, b"dd\0".ljust(16, b"\0"))
    rec(0, 0, 0, notify | 1, SDA, struct.pack("<II", 1700000000, 250000000))
    for i in range(n):
        q = i * 20000
        sec = 8 * i
        rec(q, sec, 4096, act("Q"), DM)
        rec(q + 100, sec + 2048, 4096, act("A"), SDA, struct.pack(">IIQ", DM, SDA, sec))
        rec(q + 200, sec + 2048, 4096, act("Q"), SDA)
        rec(q + 300, sec + 2048, 4096, act("G"), SDA)
        rec(q + 400, sec + 2048, 4096, act("I"), SDA)
        rec(q + 500, sec + 2048, 4096, act("D"), SDA)
        if i == 1:
            rec(q + 600, 0, 0, notify | 2, SDA, b"a message on 8,0 \xff\x01\0")
        rec(q + 30000 + i, sec + 2048, 4096, act("C"), SDA)
        rec(q + 30100 + i, sec, 4096, act("C"), DM)
    # in time order, as blkparse -d writes a merged trace (the I/Os overlap)
    for i, (time, _, sector, nbytes, a, pid, dev, pdu) in enumerate(sorted(recs)):
        t.rec(i + 1, time, sector, nbytes, a, pid, dev, 0, pdu)
    with open(out, "wb") as f:
        f.write(t.data())


if __name__ == "__main__":
    main()
