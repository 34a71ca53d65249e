#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""exportrows.py: what tests/gen/exportgen exports, computed here independently of the C
library (the rows, the derived intervals, TSV escaping, the batches and their ids), written
as the files of a tsv:DIR export: DIR/io.tsv and DIR/iowait.tsv. It also prints, with
--summary, one line per table: rows, batches, and sums of a few columns.

    exportrows.py [--rows N] [--waits N] [--host H] [--trace-id T] [--start NS] [--step NS]
                  [--batch-rows N] [--batch-bytes N] [--summary] DIR
"""
import argparse
import os

DAY_NS = 86400 * 10**9
M64 = (1 << 64) - 1
FNV_OFFSET = 0xCBF29CE484222325

IO_COLS = ("host device major minor pid comm rwbs sector bytes q_ns g_ns i_ns d_ns c_ns "
           "q2g_ns g2i_ns i2d_ns d2c_ns q2c_ns merged split pieces completions requeues no_q "
           "unfinished remap_major remap_minor remap_sector "
           "error cgroup origin_pid origin_comm file file_offset export_id batch_id").split()
CGROUPS = ["", "/", "/system.slice/db.service", "4242"]
FILES = ["", "/var/lib/db/base/16384/2619", "ino 131", "/tmp/tab\there"]
IOWAIT_COLS = ("host device major minor pid tid comm start_ns duration_ns source cpu "
               "waker_cpu export_id batch_id").split()
# the columns a batch id hashes: those before the ones added since (cgroup..file_offset)
ID_COLS = {"io": IO_COLS.index("cgroup"), "iowait": len(IOWAIT_COLS) - 2}

DEVS = [("sda", 8, 0), ("sdb", 8, 16), ("nvme0n1", 259, 0)]
COMMS = ["fio", "kworker/0:1H", "jbd2/sda1-8", "postgres: wal", "tab\there", "back\\slash",
         "new\nline"]
RWBS = ["R", "W", "WS", "RA"]
SOURCES = ["module", "kprobe", "sched"]


def fnv(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & M64
    return h


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def export_id(host, trace_id):
    h = fnv(FNV_OFFSET, b"blktrace-ng export 1\0")
    h = fnv(h, host.encode() + b"\0")
    return mix(fnv(h, trace_id.encode()))


def u64(v):
    return (v & M64).to_bytes(8, "little")


def batch_id(a, eid, table, no, first_row, vals):
    """the table, the batch limits, the batch's number, its first row's number and values"""
    h = fnv(FNV_OFFSET, u64(eid))
    h = fnv(h, table.encode() + b"\0")
    for v in (a.batch_rows, a.batch_bytes, no, first_row):
        h = fnv(h, u64(v))
    for v in vals:
        if isinstance(v, str):
            h = fnv(fnv(h, u64(len(v.encode()))), v.encode())
        else:
            h = fnv(h, u64(v))
    return mix(h)


def interval(a, b):
    return b - a if a and b and b >= a else 0


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def io_row(a, i):
    dev, major, minor = DEVS[i % 3]
    q = a.start + i * a.step
    g = 0 if i % 5 == 0 else q + 100
    ii = q + 200 + (i % 3) * 10
    d = q + 1000 + (i % 11) * 37
    c = d + 20000 + (i % 13) * 1001
    remap = (8, 1, i * 8 + 2048) if i % 17 == 0 else (0, 0, 0)
    merged = 1 if i % 5 == 0 else 0
    split = 1 if i % 7 == 3 else 0
    pieces = 2 + i % 3 if split else 1
    return c, [a.host, dev, major, minor, 1000 + i % 7, COMMS[i % 7], RWBS[i % 4], i * 8,
               4096 * (1 + i % 4), q, g, ii, d, c, interval(q, g), interval(g, ii),
               interval(ii, d), interval(d, c), interval(q, c), merged, split, pieces,
               0 if merged else pieces, 1 if i % 23 == 0 else 0, 0, 0,
               remap[0], remap[1], remap[2], -5 if i % 101 == 0 else 0,
               CGROUPS[i % 4], 3000 + i % 5 if i % 3 else 1000 + i % 7,
               "journal" if i % 11 == 0 else COMMS[(i + 1) % 7], FILES[i % 4],
               (i % 4 != 0) * i * 4096]


def wait_row(a, j):
    pid = 2000 + j % 5
    start = a.start + j * 5000
    dev = ("sda", 8, 0) if j % 2 == 0 else ("", 0, 0)
    return start, [a.host, dev[0], dev[1], dev[2], pid, pid + j % 2, "waiter%d" % (j % 5),
                   start, 100000 + (j % 9) * 1234, SOURCES[j % 3], j % 4,
                   -1 if j % 6 == 0 else (j + 1) % 4]


def line(vals):
    return "\t".join(esc(v) if isinstance(v, str) else str(v) for v in vals) + "\n"


def write_table(a, path, table, cols, rows):
    """rows: (time, values without the ids) in order; the batches as export.c makes them"""
    eid = export_id(a.host, a.trace_id)
    out = ["\t".join(cols) + "\n"]
    no, n, nbytes, day, sums, bid = 0, 0, 0, None, {}, 0
    for r, (t, vals) in enumerate(rows):
        if n and t // DAY_NS != day:
            no, n, nbytes = no + 1, 0, 0
        if not n:
            day = t // DAY_NS
            bid = batch_id(a, eid, table, no, r, vals[:ID_COLS[table]])
        text = line(vals + [eid, bid])
        out.append(text)
        n += 1
        nbytes += len(text.encode())
        for k, v in zip(cols, vals):
            if isinstance(v, int):
                sums[k] = sums.get(k, 0) + v
        if n >= a.batch_rows or nbytes >= a.batch_bytes:
            no, n, nbytes = no + 1, 0, 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(out))
    return len(out) - 1, no + (1 if n else 0), sums


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--waits", type=int, default=0)
    p.add_argument("--host", default="host-a")
    p.add_argument("--trace-id", default="trace-1")
    p.add_argument("--start", type=int, default=1764633599950000000)
    p.add_argument("--step", type=int, default=1000)
    p.add_argument("--batch-rows", type=int, default=65536)
    p.add_argument("--batch-bytes", type=int, default=16 << 20)
    p.add_argument("--summary", action="store_true")
    p.add_argument("dir")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    io = write_table(a, os.path.join(a.dir, "io.tsv"), "io", IO_COLS,
                     (io_row(a, i) for i in range(a.rows)))
    iw = write_table(a, os.path.join(a.dir, "iowait.tsv"), "iowait", IOWAIT_COLS,
                     (wait_row(a, j) for j in range(a.waits)))
    if a.summary:
        print("io rows=%d batches=%d bytes=%d q2c_ns=%d d2c_ns=%d" %
              (io[0], io[1], io[2].get("bytes", 0), io[2].get("q2c_ns", 0),
               io[2].get("d2c_ns", 0)))
        print("iowait rows=%d batches=%d duration_ns=%d" %
              (iw[0], iw[1], iw[2].get("duration_ns", 0)))


main()
