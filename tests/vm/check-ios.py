#!/usr/bin/env python3
"""check-ios.py EXPECTED BLKPARSE_OUTPUT [--actions QC] [--device MAJ,MIN] [--allow-empty]

Checks that every I/O listed in EXPECTED (lines "R|W SECTOR BYTES", '#' comments allowed, as
written by tests/vm/run-trace.sh) appears in blkparse's default text output with the right
sector, size (SECTOR + BYTES/512) and direction (R or W in the RWBS column), once for each
action in --actions (default: Q and C). BLKPARSE_OUTPUT may be '-' for stdin.

Prints each missing I/O and a summary line; exit 0 when nothing is missing, 1 when something
is, 2 on unusable input.
"""
import argparse
import collections
import re
import sys

# "  251,0    1        1     0.000000000   123  Q  WS 296 + 8 [dd]"
LINE = re.compile(
    r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+)\s+([A-Z]+)\s+([A-Z]+)\s+(\d+)\s+\+\s+(\d+)\b"
)


def read_expected(path):
    ios = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or parts[0] not in ("R", "W"):
                sys.exit(f"check-ios: {path}:{n}: expected 'R|W SECTOR BYTES', got {line!r}")
            sector, nbytes = int(parts[1]), int(parts[2])
            if nbytes % 512:
                sys.exit(f"check-ios: {path}:{n}: size {nbytes} is not a multiple of 512")
            ios.append((parts[0], sector, nbytes // 512))
    return ios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("expected")
    ap.add_argument("blkparse_output")
    ap.add_argument("--actions", default="QC", help="actions that must each be present (default QC)")
    ap.add_argument("--device", help="only count events of this MAJ,MIN")
    ap.add_argument("--allow-empty", action="store_true", help="an EXPECTED without I/Os is not an error")
    args = ap.parse_args()

    expected = read_expected(args.expected)
    f = sys.stdin if args.blkparse_output == "-" else open(args.blkparse_output, errors="replace")
    # seen[action][(dir, sector, nsectors)] = count
    seen = {a: collections.Counter() for a in args.actions}
    events = 0
    with f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            events += 1
            if args.device and f"{m.group(1)},{m.group(2)}" != args.device:
                continue
            action, rwbs = m.group(7), m.group(8)
            if action not in seen:
                continue
            sector, nsect = int(m.group(9)), int(m.group(10))
            for d in ("R", "W"):
                if d in rwbs:
                    seen[action][(d, sector, nsect)] += 1
    if events == 0:
        print("check-ios: no trace events found in the blkparse output", file=sys.stderr)

    want = collections.Counter(expected)
    missing = 0
    for io, count in sorted(want.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        for a in args.actions:
            have = seen[a][io]
            if have < count:
                missing += 1
                print(f"missing: {a} {io[0]} {io[1]} + {io[2]}" + (f" (x{count - have})" if count - have > 1 else ""))
    found = sum(1 for io in expected if all(seen[a][io] > 0 for a in args.actions))
    extra = {a: sum(seen[a].values()) - sum(min(seen[a][io], c) for io, c in want.items()) for a in args.actions}
    print(
        f"check-ios: {found}/{len(expected)} expected I/Os found as {'+'.join(args.actions)}"
        f" ({events} events parsed; other {'/'.join(f'{a}:{n}' for a, n in extra.items())})"
    )
    if not expected and not args.allow_empty:
        print("check-ios: EXPECTED lists no I/O (use --allow-empty if that is right)")
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
