#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Compares a btt --perfetto export with btt's own numbers and with the blkparse text of the same
trace, and prints one PASS/FAIL line per check (tests/e2e/t1210-btt-perfetto.sh); it exits 0 when it
ran them all, whatever they found.

  perfetto-btt.py --name NAME --dump DUMP.json --summary SUMMARY.json --q2c PREFIX \
                  --report BTT.txt --blkparse TEXT

DUMP and SUMMARY are what tests/gen/perfetto-check.py --dump writes and prints for the
export; PREFIX is btt's -q NAME (kept for the caller, no longer compared: the export draws
every bio, btt's -q file the I/Os of btt 2.09's model, which loses split ones); BTT.txt
btt's report; TEXT the default blkparse output of the trace. Checks, per device:
  - every Q of the text with a size is one I/O slice (depth 0 on its "I/O" or "I/O not
    completed" lanes, without 'no Q' in its "bio" argument), at the Q's time, sector and
    bytes (issue 36: the bios model, not btt's); without Q or D events, each C is a slice
    of its own marked 'no Q';
  - each split bio ("bio" argument with 'split') holds its pieces: as many slices on the
    "I/O pieces" lanes inside it (same "bio-sector") as its "pieces" argument, which is the
    number of D events of the text over its sectors during it (less its R); each X of the
    text lies in a bio drawn split;
  - every I/O slice (completed or not) is tiled by its stage slices: the first begins with it,
    each begins where the one before ended, the last ends with it, so they add up to its width
    (a bio made by its C, 'no Q', has none);
  - "in driver": the same steps as counting D (+1), R (-1, once the device had a Q or A) and
    C (-1) in the blkparse text, never below 0;
  - "queued": the same steps as +1 at each I/O slice's begin and -1 at its end;
  - rates: the IOPS windows add up to the C events of the text, MB/s to their bytes, per
    direction; unplug (and timer unplug), requeue and message instants: as many as in the text;
  - one "queued" instant per I/O slice with a Q, every flow with both ends.
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

    # ---- the bios: each Q of the text is one slice, completed or not (issue 36) ----
    def sec_n(rest):
        m = re.match(r"^(\d+) \+ (\d+)", rest)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)

    def kind(args):
        return args.get("bio", "")

    total = 0
    for dp in devpaths:
        ev = text.get(devnum(dp), [])
        want = collections.Counter()
        for ns, act, rwbs, rest in ev:
            if act == "Q":
                sec, n = sec_n(rest)
                want[(ns, sec, n * 512)] += 1
        done = [x for x in slices[dp] if "no Q" not in kind(x[4])]
        gone = [x for x in lost[dp] if "no Q" not in kind(x[4])]
        have = collections.Counter((ts, args.get("sector"), args.get("bytes"))
                                   for ts, _, _, _, args in done + gone)
        check(name, "%s: the bios queued (%d Q with a size in the text) are the I/O slices with a Q: "
              "%d completed, %d on 'I/O not completed'" % (dp, sum(want.values()), len(done), len(gone)),
              sorted(want.items()), sorted(have.items()),
              None if want == have else "%d Q not drawn (first %r), %d slices without a Q of the text (first %r)"
              % (sum((want - have).values()), sorted(want - have)[:1], sum((have - want).values()),
                 sorted(have - want)[:1]))
        if not any(act in ("Q", "D") for _, act, _, _ in ev):
            nc = sum(1 for _, act, _, _ in ev if act == "C")
            noq = [x for x in slices[dp] if "no Q" in kind(x[4])]
            check(name, "%s: without Q or D events each of its %d C is a bio of its own, 'no Q'" % (dp, nc),
                  nc, len(noq))
        total += len(slices[dp])
        # a split bio holds its pieces: the requests (D of the text over its sectors) it went out in
        pcs = collections.defaultdict(list)
        for path, sname, ts, dur, depth, kids, args in dump["slices"]:
            if path == dp + " > I/O pieces" and depth == 0:
                pcs[args.get("bio-sector")].append((ts, dur))
        # a D again after an R is the same piece
        ds = [(ns, sec_n(rest), 1 if act == "D" else -1) for ns, act, rwbs, rest in ev if act in ("D", "R")]
        nsplit, bad, badd = 0, [], []
        # a device of bios without requests (dm: Q, X and C only) issues no piece
        has_d = any(act == "D" for _, act, _, _ in ev)
        for ts, dur, _, sname, args in slices[dp]:
            if "split" not in kind(args):
                continue
            nsplit += 1
            sec, n = args["sector"], args["bytes"] // 512
            npc = args.get("pieces", 1 if has_d else 0)
            inside = [p for p in pcs.get(sec, []) if ts <= p[0] and p[0] + p[1] <= ts + dur]
            if npc > 1 and len(inside) != min(npc, 64):
                bad.append((ts, sec, npc, len(inside)))
            nd = sum(k for dns, (dsec, dn), k in ds if ts <= dns <= ts + dur and dsec < sec + n and sec < dsec + dn)
            if nd != npc:
                badd.append((ts, sec, npc, nd))
        xs = [int(rest.split()[0]) for ns, act, rwbs, rest in ev if act == "X"]
        if xs or nsplit:
            check(name, "%s: each of the %d split bios completed holds its pieces (slices inside it on "
                  "'I/O pieces', as many as its 'pieces')" % (dp, nsplit), [], bad[:3])
            check(name, "%s: each split bio's 'pieces' = the D events of the text over its sectors "
                  "during it (less its R)" % dp, [], badd[:3])
            spans = [(x[4]["sector"], x[4]["sector"] + x[4]["bytes"] // 512) for x in slices[dp] + lost[dp]
                     if "split" in kind(x[4])]
            check(name, "%s: each of the %d X events of the text lies in a bio drawn split" % (dp, len(xs)),
                  [], [x for x in xs if not any(a <= x < b for a, b in spans)][:3])

    # ---- stages tile each I/O ----
    bad = []
    for dp in devpaths:
        for ts, dur, kids, sname, args in slices[dp] + lost[dp]:
            if not kids and "no Q" in kind(args):
                continue  # a bio made by its C: no stage
            ok = kids and kids[0][0] == ts and kids[-1][1] == ts + dur and \
                all(kids[i][1] == kids[i + 1][0] for i in range(len(kids) - 1)) and \
                sum(e - b for b, e in kids) == dur
            if not ok:
                bad.append((dp, sname, ts, dur, kids))
    check(name, "every I/O slice is tiled by its stage slices (they add up to its width)", [], bad[:3])

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
    n_io = sum(1 for v in list(slices.values()) + list(lost.values()) for x in v if "no Q" not in kind(x[4]))
    check(name, "one 'queued' instant on a process track per I/O slice with a Q (%d)" % n_io, n_io, queued)
    fl = summary["flows"]
    check(name, "every flow has both ends (%d flows)" % fl["started"], (fl["started"], 0),
          (fl["completed"], fl["open"]))
    # the FAIL lines say what failed; a non-zero status means the script itself broke
    return 0


if __name__ == "__main__":
    sys.exit(main())
