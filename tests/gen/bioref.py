#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bioref.py: every bio of a trace, worked out from its records alone (decoded here with
blkrec.py, not by btt; a merged trace as blkparse -d writes it, records in time order),
for the tests of what btt counts over every bio (issue 36: --export, --percentiles, the
I/O wait section, --perfetto).

    bioref.py bios TRACE.bin
        one line per bio, in the order they are done:
        "DEV SECTOR NSEC Q D C PIECES PID NOQ" (times in ns, "-" when absent)
    bioref.py export TRACE.bin IO.TSV
        btt --export's io.tsv against them: per device, one row per bio that completed
        (sector, size, pid, the Q, first D and last C on one wall-clock base, pieces),
        and the rows' completions adding up to the device's C events; prints
        "ok ROWS BASE" or what differs
    bioref.py pct TRACE.bin
        per device and in total, "DEV KIND N v1 v2 ..." with the sorted Q2C, D2C and Q2D
        of the bios that have both ends (the exact values btt's percentiles estimate)
    bioref.py stats TRACE.bin
        per device, "DEV KIND N MIN AVG MAX" of the Q2C and D2C of those bios (ns)
    bioref.py perpid TRACE.bin
        "PID N" per pid: the bios each queued

The rule (btt/model/bios.h, implemented here independently and plainly): a Q of n sectors
is a bio with those sectors still to issue and to complete. A D takes, from every bio in
flight on its device, the sectors it covers that they still have to issue (each bio that
takes some went out in one more piece); a C takes the sectors still to complete; a bio
with none left is done at that C. What a D or C covers that no bio takes is a bio whose Q
is not in the trace (NOQ 1). An R gives the sectors it covers back to issue to the bios
that had issued them; the D that issues them again is no new piece. An X whose new sector
is its own (dm's: the bio cut to its rest, its front completed with it) leaves the newest
bio holding that sector only its rest to issue and complete.
"""
import sys
from collections import Counter, defaultdict

import blkrec


ACTS = {blkrec.TA_QUEUE: "Q", blkrec.TA_ISSUE: "D", blkrec.TA_COMPLETE: "C",
        blkrec.TA_REQUEUE: "R", blkrec.TA_SPLIT: "X"}


def events(path):
    """(device "MAJ,MIN", action letter, sector, sectors, time, pid, X's new sector or None)
    of Q, D, C, R and X"""
    for r in blkrec.records(open(path, "rb").read()):
        if r.action & ((blkrec.TC_NOTIFY | blkrec.TC_PC) << 16):
            continue
        a = ACTS.get(r.action & 0xffff & ~blkrec.TA_CGROUP)
        if a:
            new = int.from_bytes(r.pdu[:8], "big") if a == "X" and len(r.pdu) >= 8 else None
            yield ("%d,%d" % (r.device >> 20, r.device & 0xfffff), a, r.sector, r.bytes >> 9,
                   r.time, r.pid, new)


def cut(spans, a, e):
    """take [a, e) out of spans: (what was taken in sectors, the spans left)"""
    got, left = 0, []
    for s, t in spans:
        lo, hi = max(s, a), min(t, e)
        if lo >= hi:
            left.append((s, t))
            continue
        got += hi - lo
        if s < lo:
            left.append((s, lo))
        if hi < t:
            left.append((hi, t))
    return got, left


def bios(path):
    live = defaultdict(list)  # device -> bios in flight, oldest first
    done = []
    for dev, act, sector, n, t, pid, new in events(path):
        if act == "X":
            held = [b for b in live[dev] if b["sector"] <= sector < b["sector"] + b["nsec"]]
            if new == sector and held and held[-1]["sector"] < sector:
                b = held[-1]
                _, b["left"] = cut(b["left"], b["sector"], sector)
                _, b["issue"] = cut(b["issue"], b["sector"], sector)
            continue
        if n == 0:
            continue
        a, e = sector, sector + n
        if act == "Q":
            live[dev].append({"dev": dev, "sector": a, "nsec": n, "q": t, "d": None,
                              "c": None, "pieces": 0, "pid": pid, "noq": 0, "requeued": 0,
                              "requeues": 0, "issue": [(a, e)], "left": [(a, e)]})
            continue
        if act == "R":
            for b in live[dev]:
                lo, hi = max(a, b["sector"]), min(e, b["sector"] + b["nsec"])
                if lo >= hi:
                    continue
                b["issue"].append((lo, hi))
                b["requeued"] += 1
                b["requeues"] += 1
            continue
        rest = [(a, e)]
        for b in list(live[dev]):
            key = "issue" if act == "D" else "left"
            got, b[key] = cut(b[key], a, e)
            if not got:
                continue
            _, rest = cut(rest, max(a, b["sector"]), min(e, b["sector"] + b["nsec"]))
            if act == "D":
                if b["requeued"]:
                    b["requeued"] -= 1
                else:
                    b["pieces"] += 1
                if b["d"] is None:
                    b["d"] = t
            else:
                b["c"] = t
                if not b["left"]:
                    live[dev].remove(b)
                    done.append(b)
        for s, u in rest:
            b = {"dev": dev, "sector": s, "nsec": u - s, "q": None, "d": None, "c": None,
                 "pieces": 0, "pid": 0, "noq": 1, "requeued": 0, "requeues": 0, "issue": [],
                 "left": [(s, u)]}
            if act == "D":
                b["d"], b["pieces"] = t, 1
                live[dev].append(b)
            else:
                b["c"], b["left"] = t, []
                done.append(b)
    return done, [b for dev in live for b in live[dev]]


def completions(path):
    c = Counter()
    for dev, act, _, n, _, _, _ in events(path):
        if act == "C" and n:
            c[dev] += 1
    return c


def fmt(v):
    return "-" if v is None else str(v)


def cmd_bios(path):
    done, _ = bios(path)
    for b in done:
        print(b["dev"], b["sector"], b["nsec"], fmt(b["q"]), fmt(b["d"]), fmt(b["c"]),
              b["pieces"], b["pid"], b["noq"])


def cmd_export(path, tsv):
    done, _ = bios(path)
    lines = [ln.rstrip("\n").split("\t") for ln in open(tsv)]
    col = {c: i for i, c in enumerate(lines[0])}
    rows = lines[1:]

    # the wall clock of trace time 0: the earliest completion's row against its time
    base = 0
    if rows and done:
        base = min(int(r[col["c_ns"]]) for r in rows) - min(b["c"] for b in done)
    want = Counter()
    for b in done:
        want[(b["dev"], b["sector"], b["nsec"], b["q"] if b["q"] is not None else -1,
              b["d"] if b["d"] is not None else -1, b["c"], b["pieces"], b["pid"],
              b["noq"], b["requeues"])] += 1
    got = Counter()
    for r in rows:
        v = {k: int(r[col[k]]) for k in ("sector", "bytes", "q_ns", "d_ns", "c_ns", "pieces",
                                          "pid", "no_q", "requeues")}
        dev = "%s,%s" % (r[col["major"]], r[col["minor"]])
        got[(dev, v["sector"], v["bytes"] // 512, v["q_ns"] - base if v["q_ns"] else -1,
             v["d_ns"] - base if v["d_ns"] else -1, v["c_ns"] - base, v["pieces"],
             v["pid"], v["no_q"], v["requeues"])] += 1
    bad = []
    miss, extra = want - got, got - want
    if miss or extra:
        bad.append("%d bios without their row (e.g. %s), %d rows of no bio (e.g. %s)" % (
            sum(miss.values()), list(miss)[:2], sum(extra.values()), list(extra)[:2]))
    rc = Counter()
    for r in rows:
        rc["%s,%s" % (r[col["major"]], r[col["minor"]])] += int(r[col["completions"]])
    cc = completions(path)
    if rc != cc:
        bad.append("completions per device: rows %s, C events %s" % (dict(rc), dict(cc)))
    print("ok %d %d" % (len(rows), base) if not bad else "; ".join(bad))


def cmd_pct(path):
    done, _ = bios(path)
    kinds = {"Q2C": ("q", "c"), "D2C": ("d", "c"), "Q2D": ("q", "d")}
    out = defaultdict(list)
    for b in done:
        for k, (x, y) in kinds.items():
            if b[x] is not None and b[y] is not None:
                v = max(b[y] - b[x], 1)
                out[(b["dev"], k)].append(v)
                out[("Total", k)].append(v)
    for (dev, k) in sorted(out):
        v = sorted(out[(dev, k)])
        print(dev, k, len(v), *v)


def cmd_stats(path):
    """per device: "DEV KIND N MIN AVG MAX" of Q2C and D2C (AVG rounded, as SQL's round())"""
    done, _ = bios(path)
    out = defaultdict(list)
    for b in done:
        if b["q"] is not None:
            out[(b["dev"], "Q2C")].append(max(b["c"] - b["q"], 1))
        if b["d"] is not None:
            out[(b["dev"], "D2C")].append(max(b["c"] - b["d"], 1))
    for (dev, k) in sorted(out):
        v = out[(dev, k)]
        print(dev, k, len(v), min(v), round(sum(v) / len(v)), max(v))


def cmd_perpid(path):
    c = Counter()
    for dev, act, _, n, _, pid, _ in events(path):
        if act == "Q" and n:
            c[pid] += 1
    for pid in sorted(c):
        print(pid, c[pid])


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "bios":
        cmd_bios(sys.argv[2])
    elif cmd == "export":
        cmd_export(sys.argv[2], sys.argv[3])
    elif cmd == "pct":
        cmd_pct(sys.argv[2])
    elif cmd == "stats":
        cmd_stats(sys.argv[2])
    elif cmd == "perpid":
        cmd_perpid(sys.argv[2])
    else:
        sys.exit("bioref.py: unknown command '%s'" % cmd)
