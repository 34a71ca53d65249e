#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write synthetic seed inputs for a fuzz target into the directory given.

Usage: gen-seeds.py DIR [parse|iomon|format|btt] (default parse); prints the number written.

The captured traces in tests/data have no message, cgroup, PC, requeue, sleep, zone or
byte-swapped records; these seeds have all of them, in versions 7 and 8, little- and
big-endian, plain and gzip, with sequence gaps, in pipe mode and two-CPU merge mode, and
with the control bytes of each target (see the comment at the top of fuzz-parse.c,
fuzz-iomon.c, fuzz-format.c, fuzz-btt.c) varied. Each seed is a few KiB: one step of the workload on
one device (the steps and devices vary from seed to seed).
"""
import gzip
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gen"))
import blkrec  # noqa: E402  the record layout, stated once for the test scripts
from blkrec import Trace, mkdev  # noqa: E402

TC = {n: 1 << i for i, n in enumerate(
    "read write flush sync queue requeue issue complete fs pc notify ahead meta discard "
    "drv_data fua".split())}
TA = {n: i + 1 for i, n in enumerate(
    "queue backmerge frontmerge getrq sleeprq requeue issue complete plug unplug_io "
    "unplug_timer insert split bounce remap abort drv_data zone_plug zone_unplug".split())}
TA_CGROUP = 1 << 8
TN_PROCESS, TN_TIMESTAMP, TN_MESSAGE = 0, 1, 2
# the category each action carries in the kernel
TA_CAT = {"queue": "queue", "backmerge": "queue", "frontmerge": "queue", "getrq": "queue",
          "sleeprq": "queue", "requeue": "requeue", "issue": "issue", "complete": "complete",
          "plug": "queue", "unplug_io": "queue", "unplug_timer": "queue", "insert": "queue",
          "split": None, "bounce": None, "remap": "queue", "abort": "queue",
          "drv_data": "drv_data", "zone_plug": "queue", "zone_unplug": "queue"}
TC2_ZONE_APPEND = 1 << 32
TC2_WRITE_ZEROES = 1 << 38


def action(name, cats=(), extra=0):
    a = TA[name]
    c = TA_CAT[name]
    bits = TC[c] if c else 0
    for x in cats:
        bits |= TC[x]
    return a | (bits << 16) | extra


def notify(code, cgroup=False):
    return (TC["notify"] << 16) | code | (TA_CGROUP if cgroup else 0)


DEVS = [mkdev(8, 0), mkdev(8, 16), mkdev(253, 0)]


def scenario(t, cpus=(0, 1), gap=False, skew=0, steps=range(4), devs=DEVS):
    """Records of a small workload (dm, the third device, for the -t Q..C path)."""
    e = t.e
    seq = {}
    clock = [1000000 + skew]

    def put(cpu, dev, *a, **k):
        s = seq.get((dev, cpu), 1)
        seq[(dev, cpu)] = s + (2 if gap and s % 7 == 3 else 1)
        clock[0] += 1700 + 13 * s
        t.rec(s, clock[0], *a, dev=dev, cpu=cpu, **k)

    for cpu in cpus:
        for dev in devs:
            put(cpu, dev, 0, 0, notify(TN_PROCESS), 100, pdu=b"fio\0")
            put(cpu, dev, 0, 0, notify(TN_PROCESS), 200,
                pdu=b"kworker/u8:2-events_unbound\0")
            put(cpu, dev, 0, 0, notify(TN_TIMESTAMP), 0, pdu=blkrec.timestamp_pdu(e, 1700000000, 123456789))
    for i in steps:
        for cpu in cpus:
            for dev in devs:
                w = i % 2
                rw = ("write",) if w else ("read",)
                sec = 2048 * (i + 1) + 8 * cpu
                pid = 100 if i % 3 else 200
                put(cpu, dev, 0, 0, notify(TN_MESSAGE), pid, pdu=b"fio: step %d\0" % i)
                put(cpu, dev, 0, 0, notify(TN_MESSAGE, cgroup=True), pid,
                    pdu=struct.pack(e + "II", 7, 42) + b"cg msg\0")
                put(cpu, dev, sec, 4096, action("queue", rw + ("fs", "sync")), pid)
                put(cpu, dev, sec + 8, 4096, action("queue", rw + ("fs",)), pid)
                put(cpu, dev, sec + 8, 4096, action("backmerge", rw + ("fs",)), pid)
                put(cpu, dev, sec - 8, 4096, action("frontmerge", rw + ("fs",)), pid)
                put(cpu, dev, sec, 8192, action("getrq", rw + ("fs",)), pid)
                put(cpu, dev, 0, 0, action("plug"), pid)
                put(cpu, dev, sec, 8192, action("sleeprq", rw + ("fs",)), pid)
                put(cpu, dev, sec, 8192, action("insert", rw + ("fs", "meta")), pid)
                put(cpu, dev, 0, 0, action("unplug_io"), pid, pdu=blkrec.unplug_pdu(1))
                put(cpu, dev, 0, 0, action("unplug_timer"), pid, pdu=blkrec.unplug_pdu(2))
                put(cpu, dev, sec, 8192, action("issue", rw + ("fs", "fua")), pid)
                if i == 2:
                    put(cpu, dev, sec, 8192, action("requeue", rw + ("fs",)), pid)
                    put(cpu, dev, sec, 8192, action("issue", rw + ("fs",)), pid)
                put(cpu, dev, sec, 8192, action("split", rw), pid,
                    pdu=blkrec.split_pdu(sec + 8))
                put(cpu, dev, sec, 8192, action("bounce", rw), pid)
                put(cpu, dev, sec, 8192, action("remap", rw + ("fs",)), pid,
                    pdu=blkrec.remap_pdu(mkdev(8, 0), mkdev(8, 1), sec - 2048))
                put(cpu, dev, sec, 8192, action("drv_data", rw), pid, pdu=b"\x01\x02\x03\x04")
                put(cpu, dev, sec, 8192, action("complete", rw + ("fs",)), pid,
                    error=5 if i == 3 else 0)
                # passthrough (PC) requests carry the command in the payload
                cdb = bytes([0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0] + [0] * 6)
                for a in ("queue", "getrq", "insert", "issue", "requeue", "issue", "complete"):
                    put(cpu, dev, 0, 0, action(a, rw + ("pc",)), pid, pdu=cdb)
                put(cpu, dev, sec, 4096, action("abort", rw), pid)
                put(cpu, dev, sec, 4096, action("queue", rw + ("fs",), extra=TA_CGROUP), pid,
                    pdu=struct.pack(e + "II", 7, 42))
                put(cpu, dev, sec, 4096, 0x63 | (TC["queue"] << 16), pid)  # unknown action
                if t.version == 8:
                    put(cpu, dev, sec, 4096, action("zone_plug", rw), pid)
                    put(cpu, dev, sec, 4096, action("zone_unplug", rw), pid,
                        pdu=blkrec.unplug_pdu(3))
                    put(cpu, dev, sec, 4096, action("queue", ("write", "fs"),
                                                    extra=TC2_ZONE_APPEND), pid)
                    put(cpu, dev, sec, 4096, action("complete", ("write", "fs"),
                                                    extra=TC2_WRITE_ZEROES), pid)


def pipe_stream(version, endian, gap=False, **k):
    t = Trace(version, endian)
    scenario(t, gap=gap, **k)
    recs = t.recs
    # a live trace interleaves CPUs out of time order: swap some neighbours
    for i in range(5, len(recs) - 1, 9):
        recs[i], recs[i + 1] = recs[i + 1], recs[i]
    return t.data()


def cpu_stream(version, endian, cpu, **k):
    t = Trace(version, endian)
    scenario(t, cpus=(cpu,), skew=cpu * 900, **k)
    return t.data()


def equalise(a, b, version, endian):
    """Pad the two per-CPU streams with message records to the same length."""
    hdr = 48 if version == 7 else 64

    def msg(cpu, n):
        t = Trace(version, endian)
        t.rec(0, 10 ** 12, 0, 0, notify(TN_MESSAGE), 1, mkdev(8, 0), cpu, pdu=b"p" * n)
        return t.data()

    if 0 < abs(len(a) - len(b)) < hdr:
        if len(a) > len(b):
            a += msg(0, 100)
        else:
            b += msg(1, 100)
    if len(a) < len(b):
        a += msg(0, len(b) - len(a) - hdr)
    elif len(b) < len(a):
        b += msg(1, len(a) - len(b) - hdr)
    assert len(a) == len(b)
    return a + b


def small(n):
    """The workload of seed number @n: one step on one device."""
    return {"steps": (n % 4,), "devs": (DEVS[n % 3],)}


def trace_seeds(prefix):
    """Trace seeds; @prefix(ctl_name) gives the control bytes for a seed kind."""
    seeds = {}
    n = 0
    for v in (7, 8):
        for name, e in (("le", "<"), ("be", ">")):
            seeds["synth-v%d-%s" % (v, name)] = prefix("pipe") + pipe_stream(v, e, **small(n))
            seeds["synth-v%d-%s-gaps" % (v, name)] = prefix("gaps") + pipe_stream(
                v, e, gap=True, **small(n + 1))
            seeds["synth-v%d-%s-merge" % (v, name)] = prefix("merge") + equalise(
                cpu_stream(v, e, 0, **small(n + 2)), cpu_stream(v, e, 1, **small(n + 2)), v, e)
            n += 3
        seeds["synth-v%d-gz" % v] = prefix("gz") + gzip.compress(pipe_stream(v, "<", **small(n)))
        n += 1
    base = pipe_stream(7, "<", **small(2))
    # two gzip members back to back
    half = len(base) // 96 * 48
    seeds["synth-v7-gz2"] = prefix("pipe") + gzip.compress(base[:half]) + gzip.compress(
        base[half:])
    return seeds, base


def parse_seeds():
    ctl = {"pipe": b"\x00\x00", "gaps": b"\x0a\x00", "merge": b"\x01\x00", "gz": b"\x04\x00"}
    seeds, base = trace_seeds(lambda k: ctl[k])
    # the options of byte 0 (batch sizes, window, -h, sort keys, a regular file) and of
    # byte 1 (no -t/-s/-v, --cgroup, -d, -w, -f, -F, -O)
    for c0 in (0x02, 0x06, 0x08, 0x10, 0x30, 0x50, 0x70, 0x80, 0x81, 0x8b):
        seeds["synth-v7-le-ctl%02x" % c0] = bytes([c0, 0]) + base
    for c1 in (0x07, 0x08, 0x10, 0x20, 0x40, 0x80, 0xc0):
        seeds["synth-v7-le-opt%02x" % c1] = bytes([0, c1]) + base
        seeds["synth-v7-le-merge-opt%02x" % c1] = bytes([1, c1]) + seeds["synth-v7-le-merge"][2:]
    return seeds


def iomon_seeds():
    ctl = {"pipe": b"\x09", "gaps": b"\x3b", "merge": b"\x19", "gz": b"\x4f"}
    seeds, base = trace_seeds(lambda k: ctl[k])
    for c in (0x00, 0x08, 0x0b, 0x38, 0x78, 0x89, 0xfe, 0xff):
        seeds["synth-v7-le-ctl%02x" % c] = bytes([c]) + base
    return seeds


def btt_seeds():
    ctl = {"pipe": b"\x01\x65\x00", "gaps": b"\x00\x1f\x40", "merge": b"\x23\x80\x0c",
           "gz": b"\x41\x10\x00"}
    seeds, base = trace_seeds(lambda k: ctl[k])
    # each bit of the three control bytes once, and all outputs at once
    for i in range(24):
        c = bytearray(3)
        c[i // 8] = 1 << (i % 8)
        seeds["synth-v7-le-ctl%06x" % (c[0] << 16 | c[1] << 8 | c[2])] = bytes(c) + base
    seeds["synth-v7-le-ctl-all"] = b"\x3f\xff\xf0" + base
    seeds["synth-v7-le-ctl-iowait-perfetto"] = b"\xc1\x00\x00" + base
    return seeds


FORMATS = [
    "%D %2c %8s %5T.%9t %5p %2a %3d %S %n\n",
    "%M,%m cpu%c #%s %T.%t pid=%p %a %d sec=%S blks=%n bytes=%N err=%e [%C] pdu=%P\n",
    "%D %a %d %S + %n (%e) [%C] %u\n",
    "%-10a|%10d|%-5M|%05m|%.3S|%%|%z|%g|%U\n",
    "%z %u %P %C",
    "plain text without fields",
    "%",
    "%-",
    "%5",
    "%Q bad",
    "%*d",
    "%99999999999999999999d",
]


def format_seeds():
    seeds = {}
    for i, f in enumerate(FORMATS):
        for ctl in (0x00, 0x17, 0x1f):
            seeds["format-%02d-ctl%02x" % (i, ctl)] = bytes([ctl]) + f.encode()
    return seeds


def main():
    out = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else "parse"
    seeds = {"parse": parse_seeds, "iomon": iomon_seeds, "format": format_seeds,
             "btt": btt_seeds}[target]()
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(len(seeds))


if __name__ == "__main__":
    main()
