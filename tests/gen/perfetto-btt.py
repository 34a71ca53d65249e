#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Compares a btt --perfetto export with btt's own numbers and with the blkparse text of the same
trace, and prints one PASS/FAIL line per check (tests/e2e/t1210-btt-perfetto.sh); it exits 0 when it
ran them all, whatever they found.

  perfetto-btt.py --name NAME --dump DUMP.json --summary SUMMARY.json --q2c PREFIX \
                  --report BTT.txt --blkparse TEXT

DUMP and SUMMARY are what tests/gen/perfetto-check.py --dump writes and prints for the
export; PREFIX is btt's -q NAME (files PREFIX_<dev>_q2c.dat, one line "Q-time Q2C" per I/O);
BTT.txt btt's report; TEXT the default blkparse output of the trace. Checks, per device:
  - its I/O slices (depth 0 on its "I/O" lanes) are as many as the lines of its -q file, and
    all devices' together as btt's Q2C N (plus Q2Cdm N);
  - the multiset of (begin, duration) of its I/O slices printed as btt prints them is the
    multiset of the lines of its -q file;
  - every I/O slice (completed or not) is tiled by its stage slices: the first begins with it,
    each begins where the one before ended, the last ends with it, so they add up to its width;
    D2C stages: as many and as long in all as btt's D2C (N, AVG);
  - "in driver": the same steps as counting D (+1), R (-1, once the device had a Q or A) and
    C (-1) in the blkparse text, never below 0;
  - "queued": the same steps as +1 at each I/O slice's begin and -1 at its end;
  - rates: the IOPS windows add up to the C events of the text, MB/s to their bytes, per
    direction; unplug (and timer unplug), requeue and message instants: as many as in the text;
  - one "queued" instant per I/O slice, every flow with both ends.
"""
import argparse
import collections
import glob
import json
import os
import re
import sys

WINDOW_S = 0.01
LINE = re.compile(r"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+)\.(\d+)\s+\d+\s+(\S+)\s+(\S+)\s*(.*)$")

fails = 0


def check(name, what, want, have, detail=None):
    global fails
    ok = want == have
    if not ok:
        fails += 1
    extra = "" if ok else ": want %r, got %r" % (want, have) if detail is None else ": " + detail
    print("%s: %s: %s%s" % ("PASS" if ok else "FAIL", name, what, extra))


def series(points):
    """[[t, v], ...] -> [(t, last v at t), ...]"""
    out = []
    for t, v in points:
        if out and out[-1][0] == t:
            out[-1] = (t, v)
        else:
            out.append((t, v))
    return out


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first difference at step %d: want %r, got %r" % (i, x, y)
    return "want %d steps, got %d" % (len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    for opt in ("name", "dump", "summary", "q2c", "report", "blkparse"):
        ap.add_argument("--" + opt, required=True)
    a = ap.parse_args()
    name = a.name
    dump = json.load(open(a.dump))
    summary = json.load(open(a.summary))
    report = open(a.report, errors="replace").read()

    # ---- the text: per device, its events ----
    text = collections.defaultdict(list)  # dev -> [(ns, action, rwbs, rest)]
    with open(a.blkparse, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            dev = "%s,%s" % (m.group(1), m.group(2))
            ns = int(m.group(3)) * 1000000000 + int(m.group(4).ljust(9, "0")[:9])
            act, rest = m.group(5), m.group(7)
            # btt takes no zero-byte Q, G, S, I, M, D or C (flushes without data)
            if act in ("Q", "G", "S", "I", "M", "F", "B", "D", "C") and \
                    not re.match(r"^\d+ \+ [1-9]", rest):
                continue
            text[dev].append((ns, act, m.group(6), rest))

    slices = collections.defaultdict(list)  # device path -> depth-0 I/O slices
    lost = collections.defaultdict(list)
    stages = collections.defaultdict(list)
    for path, sname, ts, dur, depth, kids, args in dump["slices"]:
        parts = path.split(" > ")
        if len(parts) != 2 or parts[1] not in ("I/O", "I/O not completed"):
            continue
        if depth == 0:
            (slices if parts[1] == "I/O" else lost)[parts[0]].append((ts, dur, kids, sname, args))
        elif parts[1] == "I/O":
            stages[sname].append(dur)
    devpaths = sorted(set(p.split(" > ")[0] for p in summary["tracks"]
                          if " > " in p and p.split(" > ")[1] == "in driver"))

    def devname(path):  # "8,0 (sda)" -> the name in btt's file names
        m = re.match(r"^(\d+,\d+)(?: \((.*)\))?$", path)
        return m.group(2) or m.group(1)

    def devnum(path):
        return path.split(" ")[0]

    # ---- I/O slices against btt -q and its report ----
    total = 0
    for dp in devpaths:
        qf = "%s_%s_q2c.dat" % (a.q2c, devname(dp))
        lines = sorted(open(qf).read().split("\n")[:-1]) if os.path.exists(qf) else []
        got = sorted("%f %f" % (ts / 1e9, dur / 1e9) for ts, dur, _, _, _ in slices[dp])
        check(name, "%s: I/O slices as many as btt -q's Q2C lines (%d)" % (dp, len(lines)),
              len(lines), len(slices[dp]))
        check(name, "%s: (begin, duration) of the I/O slices = btt -q's (Q time, Q2C) lines" % dp,
              lines, got, None if lines == got else first_diff(lines, got))
        total += len(slices[dp])
    n_q2c = sum(int(m.group(1)) for m in
                re.finditer(r"^Q2C(?:dm)?\s+\S+\s+\S+\s+\S+\s+(\d+)$", report.split("Device Overhead")[0], re.M))
    check(name, "all I/O slices = btt's Q2C N (+ Q2Cdm N) of the report (%d)" % n_q2c, n_q2c, total)

    # ---- stages tile each I/O ----
    bad = []
    for dp in devpaths:
        for ts, dur, kids, sname, _ in slices[dp] + lost[dp]:
            ok = kids and kids[0][0] == ts and kids[-1][1] == ts + dur and \
                all(kids[i][1] == kids[i + 1][0] for i in range(len(kids) - 1)) and \
                sum(e - b for b, e in kids) == dur
            if not ok:
                bad.append((dp, sname, ts, dur, kids))
    check(name, "every I/O slice is tiled by its stage slices (they add up to its width)", [], bad[:3])
    m = re.search(r"^D2C\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)$", report.split("Device Overhead")[0], re.M)
    d2c = stages.get("D2C", [])
    if m:
        n, avg = int(m.group(4)), float(m.group(2))
        have = (len(d2c), abs(sum(d2c) / 1e9 / max(len(d2c), 1) - avg) <= 5e-10 + avg * 1e-12)
        check(name, "D2C stage slices: btt's D2C N (%d) and AVG (%s s)" % (n, m.group(2)), (n, True), have)

    # ---- counters ----
    ctr = dump["counters"]
    for dp in devpaths:
        ev = text.get(devnum(dp), [])
        v, had_q, want = 0, False, []
        for ns, act, rwbs, rest in ev:
            if act in ("Q", "A"):
                had_q = True
            if act == "D":
                v += 1
            elif act == "C" or (act == "R" and had_q):
                if v == 0:
                    continue
                v -= 1
            else:
                continue
            want.append((ns, v))
        want = series(want)
        got = series(ctr.get(dp + " > in driver", []))
        got = [(t, v) for t, v in got]
        check(name, "%s: 'in driver' steps = D, R, C of the blkparse text (%d steps)" % (dp, len(want)),
              want, got, None if want == got else first_diff(want, got))
        steps = sorted([(ts, 1) for ts, dur, _, _, _ in slices[dp] + lost[dp]] +
                       [(ts + dur, -1) for ts, dur, _, _, _ in slices[dp] + lost[dp]])
        v, want = 0, []
        for t, d in steps:
            v += d
            want.append((t, v))
        want = series(want)
        got = series(ctr.get(dp + " > queued", []))
        check(name, "%s: 'queued' steps = the I/O slices' begins and ends" % dp, want, got,
              None if want == got else first_diff(want, got))
        for rd, dirn in ((True, "read"), (False, "write")):
            cs = [(ns, rest) for ns, act, rwbs, rest in ev if act == "C" and ("W" in rwbs) != rd]
            nbytes = 0
            for ns, rest in cs:
                m = re.match(r"^\d+ \+ (\d+)", rest)
                if m:
                    nbytes += int(m.group(1)) * 512
            iops = sum(v for t, v in ctr.get("%s > %s IOPS" % (dp, dirn), []))
            mbs = sum(v for t, v in ctr.get("%s > %s MB/s" % (dp, dirn), []))
            check(name, "%s: %s IOPS windows add up to the %d %s completions" % (dp, dirn, len(cs), dirn),
                  len(cs), round(iops * WINDOW_S))
            check(name, "%s: %s MB/s windows add up to their %d bytes" % (dp, dirn, nbytes),
                  True, abs(mbs * 1e6 * WINDOW_S - nbytes) <= 1e-6 * max(nbytes, 1),
                  "%f bytes" % (mbs * 1e6 * WINDOW_S))
        inst = summary["tracks"].get(dp, {}).get("instants", {})
        had_q = False
        counts = collections.Counter()
        for ns, act, rwbs, rest in ev:
            if act in ("Q", "A"):
                had_q = True
            if act in ("U", "UT") or (act == "R" and had_q) or (act == "m" and had_q):
                counts[act] += 1
        check(name, "%s: unplug, timer unplug, requeue and message instants as in the text" % dp,
              [counts["U"], counts["UT"], counts["R"], counts["m"]],
              [inst.get("unplug", 0), inst.get("unplug (timer)", 0), inst.get("requeue", 0),
               inst.get("message", 0)])

    # ---- processes and flows ----
    queued = sum(t.get("instants", {}).get("queued", 0) for p, t in summary["tracks"].items()
                 if t["kind"] == "process")
    n_io = sum(len(v) for v in slices.values()) + sum(len(v) for v in lost.values())
    check(name, "one 'queued' instant on a process track per I/O slice (%d)" % n_io, n_io, queued)
    fl = summary["flows"]
    check(name, "every flow has both ends (%d flows)" % fl["started"], (fl["started"], 0),
          (fl["completed"], fl["open"]))
    # the FAIL lines say what failed; a non-zero status means the script itself broke
    return 0


if __name__ == "__main__":
    sys.exit(main())
