#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Check the I/O waits of btt --perfetto against blkparse --iowait of the same trace:

  perfetto-iowait.py BLKPARSE_TXT DUMP_JSON [HOLD_NS]

DUMP_JSON is perfetto-check.py --dump's. From blkparse's text (its Q, C and w lines; the
bios followed by the sectors they cover, independently of btt: see bios()):
  - per thread, its waits are the "iowait" slices of one track, named "COMM [tid TID]" with
    the comm of its waits; as many, each beginning at the wait's start (0 if before) and
    lasting to its end, with argument ns = the wait's duration; a wait that begins before
    the end of the thread's wait before it (in blkparse's order; only made-up traces have
    them) begins at that end instead (and ends there if it ended before);
  - flows: each wait whose thread has an I/O (by its Q's pid) completed at or before the
    wait's end, at most HOLD_NS (default 50 ms) before it, and not already the start of an
    earlier wait's flow, has one flow, from the end of that I/O's slice (the last such I/O:
    its C time, its slice beginning at its Q) on an I/O lane to the end of the wait's slice;
    no other flow ends on a wait.

Prints "ok: T threads, W waits, F flows" and exits 0, or the differences and exits 1.
"""
import bisect
import importlib.util
import json
import math
import os
import re
import sys
from collections import defaultdict

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("iowait_btt", os.path.join(here, "iowait-btt.py"))
ib = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ib)


def bios(events):
    """Every queued bio, done at the C that completes its last sector (btt --perfetto draws
    each bio, issue 36): dicts q, c (None), pid. A C takes, from the bios in flight on its
    device, oldest first, the sectors of its range that no older bio took."""
    flight = {}  # dev -> [io], oldest first
    ios = []
    for t, dev, act, sector, nsec, pid in events:
        if act == 'Q':
            io = {'q': t, 'c': None, 'pid': pid, 'span': (sector, sector + nsec), 'left': nsec}
            flight.setdefault(dev, []).append(io)
            ios.append(io)
        elif act == 'C':
            spans = [(sector, sector + nsec)]
            for io in flight.get(dev, []):
                a, b = io['span']
                rest = []
                for s, e in spans:
                    lo, hi = max(s, a), min(e, b)
                    if lo >= hi:
                        rest.append((s, e))
                        continue
                    io['left'] -= min(hi - lo, io['left'])
                    rest += [x for x in ((s, lo), (hi, e)) if x[0] < x[1]]
                spans = rest
                if io['left'] == 0:
                    io['c'] = t
            if dev in flight:
                flight[dev] = [io for io in flight[dev] if io['c'] is None]
    return ios


def main(a):
    bp, dump = a[0], json.load(open(a[1]))
    hold = int(a[2]) if len(a) > 2 else 50000000
    events, waits = ib.parse_blkparse(bp)
    ios = bios(events)
    errs = []

    # the slices, per track
    got = defaultdict(list)
    for path, name, begin, dur, depth, kids, args in dump["slices"]:
        if name == "iowait":
            got[path].append((begin, dur, args.get("ns")))
    want = defaultdict(list)
    comm, prev = {}, {}
    overlap = 0
    for w in waits:
        b, e = w["start"], w["end"]
        if w["tid"] in prev and b < prev[w["tid"]]:
            overlap += 1
            b = prev[w["tid"]]
            e = max(e, b)
        prev[w["tid"]] = e
        w["drawn_end"] = e
        want[w["tid"]].append((b, e - b, w["ns"]))
        comm.setdefault(w["tid"], w["comm"])
    paths = {}
    for p in got:
        m = re.match(r"^(.*) \[tid (\d+)\]$", p)
        if not m:
            errs.append("iowait slices on track '%s', not a thread's" % p)
            continue
        tid = int(m.group(2))
        if tid in paths:
            errs.append("thread %d's waits on two tracks" % tid)
        paths[tid] = p
        if m.group(1) != comm.get(tid, m.group(1)):
            errs.append("track '%s': named '%s', its waits say '%s'" % (p, m.group(1), comm[tid]))
    for tid in sorted(set(want) | set(paths)):
        g = sorted(got.get(paths.get(tid), []))
        e = sorted(want.get(tid, []))
        if len(g) != len(e):
            errs.append("thread %d: %d iowait slices, %d waits in blkparse" % (tid, len(g), len(e)))
        elif g != e:
            diff = [(x, y) for x, y in zip(g, e) if x != y]
            errs.append("thread %d: %d slices differ, first (begin, dur, ns) %s, blkparse %s"
                        % (tid, len(diff), diff[0][0], diff[0][1]))

    # the flows that end on a wait: [from path, type, ts, name, begin, to path, type, ts, name, begin]
    flows = {}
    for f in dump.get("flows", []):
        if f[8] != "iowait":
            continue
        if f[6] != "end":
            errs.append("a flow ends on a wait's %s, not its end" % f[6])
        flows[(f[5], f[7])] = f
    done = defaultdict(list)  # tid -> completed I/Os (c, q), by completion
    for io in ios:
        if io["c"] is not None:
            done[io["pid"]].append((io["c"], io["q"]))
    for v in done.values():
        v.sort()
    taken = set()
    nflow = 0
    for w in sorted(waits, key=lambda w: (w["end"], w["tid"])):
        # the last I/O of the thread completed by the wait's end (done's lists are sorted)
        mine = done.get(w["tid"], [])
        i = bisect.bisect_right(mine, (w["end"], math.inf))
        exp = mine[i - 1] if i and w["end"] - mine[i - 1][0] <= hold else None
        if exp in taken:
            exp = None
        f = flows.pop((paths.get(w["tid"]), w["drawn_end"]), None)
        if exp is None and f is None:
            continue
        if exp is None:
            errs.append("thread %d: a flow into its wait ending at %d, none expected" % (w["tid"], w["end"]))
        elif f is None:
            errs.append("thread %d: no flow into its wait ending at %d (from its I/O completed at %d)"
                        % (w["tid"], w["end"], exp[0]))
        elif not f[0].endswith("> I/O") or f[1] != "end" or (f[2], f[4]) != exp:
            errs.append("thread %d: the flow into its wait ending at %d comes from %s at %s (slice from %s), "
                        "not the end of its I/O queued at %d, completed at %d"
                        % (w["tid"], w["end"], f[0], f[2], f[4], exp[1], exp[0]))
        else:
            nflow += 1
        if exp is not None:
            taken.add(exp)
    for k in flows:
        errs.append("a flow into a wait on '%s' at %d that no wait of blkparse has" % k)
    if errs:
        print("\n".join(errs[:20]))
        return 1
    print("ok: %d threads, %d waits (%d overlapping), %d flows" % (len(want), len(waits), overlap, nflow))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
