#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bttexport.py: what tests/e2e/t1310-btt-export.sh compares btt --export's rows with.

    bttexport.py report BTT-OUTPUT
        btt -A --percentiles output -> one line per device and latency (Q2C, D2C):
        "DEV STAGE N MIN AVG MAX P50 P90 P99 P99.9 P99.99 PMAX", times in ns (Q2Cdm is Q2C)
    bttexport.py pcts BTT-OUTPUT
        btt --percentiles' table: "DEV STAGE N P50 P90 P99 P99.9 P99.99 MAX" (ns), Q2C and D2C
    bttexport.py perio PERIO-DUMP IO-TSV
        compare the rows of io.tsv with btt's -p dump of the same trace (its I/Os in the
        same order): device, sector, size, the Q, G, I, D and C times and the merge, every
        row on one wall clock base; prints "ok ROWS BASE" or what differs
    bttexport.py levels N
        the quantilesExact levels that pick the ranks btt's histogram reports for p50, p90,
        p99, p99.9, p99.99 and max over N values (ClickHouse takes index floor(level * N))
    bttexport.py pct N "BTT-VALUES" "SQL-VALUES"
        btt's percentiles against the exact ones: each within the histogram's stated error
        (the upper edge of a bucket 1/64 of a power of two wide, exact below 64 ns)
    bttexport.py iowait BLKPARSE-IOWAIT-TXT BASE HOST IOWAIT-TSV
        the rows of iowait.tsv against the "w" lines of blkparse --iowait of the same trace,
        in order: host, device and its numbers (io=, empty and 0 0 without), pid (tgid=),
        tid, comm, start_ns = BASE + start= (0 if before the epoch), duration (ns=), source,
        cpu (the line's CPU), waker cpu (-1 for "-"); prints "ok ROWS SUM-NS" or what differs
    bttexport.py iowsum BLKPARSE-IOWAIT-TXT
        "COUNT SUM-NS" of the waits blkparse --iowait lists
"""
import re
import sys

PCTS = [50, 90, 99, 99.9, 99.99, 100]


def ns(s):
    sec, _, frac = s.partition(".")
    return int(sec) * 1000000000 + int((frac + "000000000")[:9])


def devname(label):
    m = re.match(r"\(\s*(\d+),\s*(\d+)\)", label.strip())
    return "%s,%s" % (m.group(1), m.group(2)) if m else label.strip()


def report(path):
    lines = open(path).read().split("\n")
    avgs, pcts = {}, {}
    section, stage = None, None
    for ln in lines:
        m = re.match(r"^=+ (.*?) =+$", ln)
        if m:
            section, stage = m.group(1), None
            continue
        if section == "Per Device":
            m = re.match(r"^\s+(Q2Cdm|Q2C|D2C|\S+)\s+MIN\s+AVG\s+MAX\s+N$", ln)
            if m:
                stage = m.group(1).replace("dm", "")
                continue
            m = re.match(r"^(\(.*?\)|\S+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)$", ln)
            if m and stage in ("Q2C", "D2C"):
                avgs[(devname(m.group(1)), stage)] = (int(m.group(5)), ns(m.group(2)),
                                                      ns(m.group(3)), ns(m.group(4)))
        elif section == "Latency Percentiles (seconds)":
            f = [x.strip() for x in ln.split("|")]
            if len(f) == 2 and f[0] not in ("DEV", "Total") and not f[0].startswith("-"):
                v = f[1].split()
                if v[0] in ("Q2C", "D2C") and len(v) == 8:
                    pcts[(devname(f[0]), v[0])] = [ns(x) for x in v[2:]]
    for k in sorted(avgs):
        n, mn, avg, mx = avgs[k]
        print(k[0], k[1], n, mn, avg, mx, *pcts.get(k, []))


def perio(dump, tsv):
    ios, cur = [], None
    for ln in open(dump):
        m = re.match(r"^\s*(\d+),(\d+)\s*:\s+(\d+\.\d+) Q\s+(\d+)\+(\d+)", ln)
        if m:
            cur = {"dev": "%s,%s" % (m.group(1), m.group(2)), "Q": ns(m.group(3)),
                   "sector": int(m.group(4)), "n": int(m.group(5))}
            ios.append(cur)
            continue
        m = re.match(r"^\s+(\d+\.\d+) ([GIMDC])\s+\d+\+\d+", ln)
        if m and cur is not None:
            cur[m.group(2)] = ns(m.group(1))
    rows = [ln.rstrip("\n").split("\t") for ln in open(tsv)]
    col = {c: i for i, c in enumerate(rows[0])}
    rows = rows[1:]
    if len(rows) != len(ios):
        print("%d rows, %d I/Os in the -p dump" % (len(rows), len(ios)))
        return
    base, bad = None, []
    for i, (r, io) in enumerate(zip(rows, ios)):
        v = {k: int(r[col[k]]) for k in ("q_ns", "g_ns", "i_ns", "d_ns", "c_ns", "sector",
                                          "bytes", "merged")}
        if base is None:
            base = v["q_ns"] - io["Q"]
        want = {"q_ns": io["Q"] + base, "sector": io["sector"], "bytes": io["n"] * 512,
                "merged": 1 if "M" in io else 0}
        for st in "GIDC":
            want[st.lower() + "_ns"] = io[st] + base if st in io else 0
        diff = [k for k in want if want[k] != v[k]]
        if r[col["device"]] != io["dev"]:
            diff.append("device")
        if diff:
            bad.append("row %d (sector %s): %s" % (i + 1, r[col["sector"]], ", ".join(
                "%s %s, want %s" % (k, v.get(k, r[col["device"]]), want.get(k, io["dev"]))
                for k in diff)))
    print("ok %d %d" % (len(rows), base) if not bad else "%d rows differ: %s" % (
        len(bad), "; ".join(bad[:3])))


def pcts(path):
    """btt --percentiles' table: "DEV STAGE N P50 P90 P99 P99.9 P99.99 MAX" (ns)"""
    section = None
    for ln in open(path):
        m = re.match(r"^=+ (.*?) =+$", ln.rstrip("\n"))
        if m:
            section = m.group(1)
            continue
        if section != "Latency Percentiles (seconds)":
            continue
        f = [x.strip() for x in ln.split("|")]
        if len(f) == 2 and f[0] not in ("DEV", "Total") and not f[0].startswith("-"):
            v = f[1].split()
            if v[0] in ("Q2C", "D2C") and len(v) == 8:
                print(devname(f[0]), v[0], v[1], *[ns(x) for x in v[2:]])


def ranks(n):
    # btt's blk_hist_percentile(): the smallest value with at least p% at or below it
    return [min(max(int(p / 100.0 * n + 0.999999999), 1), n) for p in PCTS]


def levels(n):
    print(", ".join("%.12f" % ((r - 0.5) / n) if r < n else "1" for r in ranks(n)))


def pct(n, btt, sql):
    b = [int(x) for x in btt.split()]
    e = [int(x) for x in re.findall(r"\d+", sql)]
    bad = []
    for p, bv, ev in zip(PCTS, b, e):
        if not ev <= bv <= ev + (ev // 64 if ev >= 64 else 0):
            bad.append("p%g: btt %d, exact %d" % (p, bv, ev))
    if len(b) != len(PCTS) or len(e) != len(PCTS):
        bad.append("%d btt values, %d exact ones" % (len(b), len(e)))
    print("ok" if not bad else "; ".join(bad))


W_LINE = re.compile(r"^\s*\d+,\d+\s+(\d+)\s+\d+\s+\S+\s+(\d+)\s+w\s+N \[(.*?)\] (.*)$")


def bp_waits(path):
    """the waits of blkparse --iowait's text: dicts of the fields, in the order printed"""
    out = []
    for ln in open(path, errors="replace"):
        m = W_LINE.match(ln.rstrip("\n"))
        if not m:
            continue
        f = dict(kv.split("=", 1) for kv in m.group(4).split() if "=" in kv)
        st = f["start"]
        out.append({"cpu": int(m.group(1)), "tid": int(m.group(2)), "comm": m.group(3),
                    "start": -ns(st[1:]) if st.startswith("-") else ns(st),
                    "ns": int(f["ns"]), "tgid": int(f["tgid"]), "source": f["source"],
                    "waker": -1 if f["waker_cpu"] == "-" else int(f["waker_cpu"]),
                    "io": f.get("io")})
    return out


def iowait(bp, base, host, tsv):
    want = []
    for w in bp_waits(bp):
        io = w["io"] if w["io"] and w["io"] not in ("-", "none") else None
        maj, mi = io.split(",") if io else ("0", "0")
        start = max(0, base + w["start"])
        want.append([host, io or "", maj, mi, str(w["tgid"]), str(w["tid"]), w["comm"],
                     str(start), str(w["ns"]), w["source"], str(w["cpu"]), str(w["waker"])])
    lines = open(tsv).read().split("\n")
    hdr = lines[0].split("\t")
    cols = ["host", "device", "major", "minor", "pid", "tid", "comm", "start_ns",
            "duration_ns", "source", "cpu", "waker_cpu"]
    idx = [hdr.index(c) for c in cols]
    got = [[r.split("\t")[i] for i in idx] for r in lines[1:] if r]
    bad = 0
    if len(got) != len(want):
        print("rows: %d in %s, %d waits in %s" % (len(got), tsv, len(want), bp))
        bad = 1
    for n, (g, e) in enumerate(zip(got, want)):
        if g != e and bad < 5:
            print("row %d: %s\n  want %s" % (n + 1, " ".join(g), " ".join(e)))
            bad += 1
    if bad:
        sys.exit(1)
    print("ok %d %d" % (len(want), sum(int(e[8]) for e in want)))


cmd = sys.argv[1]
if cmd == "report":
    report(sys.argv[2])
elif cmd == "pcts":
    pcts(sys.argv[2])
elif cmd == "perio":
    perio(sys.argv[2], sys.argv[3])
elif cmd == "levels":
    levels(int(sys.argv[2]))
elif cmd == "pct":
    pct(int(sys.argv[2]), sys.argv[3], sys.argv[4])
elif cmd == "iowait":
    iowait(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
elif cmd == "iowsum":
    ws = bp_waits(sys.argv[2])
    print(len(ws), sum(w["ns"] for w in ws))
