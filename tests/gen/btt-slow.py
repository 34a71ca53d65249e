#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Merged traces (time in order) where some requests take long: their issue-to-completion
interval reaches back over many live periods of the fast ones, so btt's "I/O Active
Period" section merges far back. Each seed gives the same bytes.

    btt-slow.py OUT.bin SEED IOS mixed
        two devices, latencies from microseconds to seconds (some over 2^32 ns),
        requeues, and a few requests queued (some issued) that never complete
    btt-slow.py OUT.bin SEED IOS relayout
        40000 requests that never complete first, then IOS requests of which one in ten
        waits over 4.4 s (its G, I and D more than 2^32 ns after its Q): btt lays its
        tree out again while such requests are in flight
    btt-slow.py OUT.bin SEED IOS burst
        20000 requests issued at once that never complete, then IOS requests that do:
        many issue times in flight, few live periods to group
"""
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blkrec  # noqa: E402 (the record layout, tests/gen/blkrec.py)

US = 1000
DEV_A, DEV_B = blkrec.mkdev(8, 0), blkrec.mkdev(8, 16)
Q, R, G, D, C, I = 1, 6, 4, 7, 8, 12
CATEGORY = {Q: 4, G: 4, I: 4, R: 6, D: 6, C: 7}


def mixed(n, ev):
    t = 10**6
    for k in range(random.randrange(0, 50)):
        s = random.randrange(1 << 31, 1 << 32) * 8
        ev.append((t + k, Q, s, DEV_A, 100))
        if random.random() < 0.5:
            ev.append((t + k + 5, D, s, DEV_A, 100))  # issued, never completed
    for _ in range(n):
        dev = random.choice([DEV_A, DEV_B])
        t += random.randrange(1, 200) * US
        s = random.randrange(0, 1 << 30) * 8
        lat = random.choice([5, 20, 100, 1000]) * US
        if random.random() < 0.03:
            lat = random.randrange(10**6, 6 * 10**9)
        ev.append((t, Q, s, dev, 100))
        g = t + random.randrange(1, 30) * US
        ev.append((g, G, s, dev, 100))
        i = g + random.randrange(1, 30) * US
        ev.append((i, I, s, dev, 100))
        d = i + random.randrange(1, lat // US + 2) * US
        ev.append((d, D, s, dev, 100))
        if random.random() < 0.02:
            ev.append((d + 3 * US, R, s, dev, 100))
            d += random.randrange(5, 500) * US
            ev.append((d, D, s, dev, 100))
        ev.append((d + lat, C, s, dev, 0))


def relayout(n, ev):
    for k in range(40000):
        ev.append((1000 + k, Q, random.randrange(1 << 31, 1 << 32) * 8, DEV_A, 100))
    for k in range(n):
        t = 10**9 + k * 50 * US
        s = random.randrange(0, 1 << 30) * 8
        slow = k % 10 == 0
        step = 100000 * US if slow else 10 * US
        g = t + (4400000 * US if slow else 10 * US)
        ev.append((t, Q, s, DEV_A, 100))
        ev.append((g, G, s, DEV_A, 100))
        ev.append((g + step, I, s, DEV_A, 100))
        ev.append((g + 2 * step, D, s, DEV_A, 100))
        ev.append((g + 3 * step, C, s, DEV_A, 0))


def burst(n, ev):
    for k in range(20000):
        s = (1 << 33) + k * 8
        ev.append((10**6 + k, Q, s, DEV_A, 100))
        ev.append((10**6 + k + 1, D, s, DEV_A, 100))
    t = 2 * 10**9
    for _ in range(n):
        t += random.randrange(100, 200) * US
        s = random.randrange(0, 1 << 30) * 8
        ev.append((t, Q, s, DEV_A, 100))
        ev.append((t + 5 * US, D, s, DEV_A, 100))
        ev.append((t + 20 * US, C, s, DEV_A, 0))


def main():
    out_name, seed, n, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    random.seed(seed)
    ev = []
    {'mixed': mixed, 'relayout': relayout, 'burst': burst}[mode](n, ev)
    # stable: events at the same time keep the order they were made in
    ev = [e for _, e in sorted(((e[0], i), e) for i, e in enumerate(ev))]
    name = b'slow\0'
    out = [blkrec.encode_note(7, '<', blkrec.TN_PROCESS, 100, DEV_A, name)]
    for seq, (t, code, sector, dev, pid) in enumerate(ev, 1):
        cats = (1 << CATEGORY[code]) | blkrec.TC_FS | blkrec.TC_WRITE  # the category, fs, write
        out.append(blkrec.encode(7, '<', seq, t, sector, 4096, blkrec.act(code, cats), pid, dev,
                                 0))
    with open(out_name, 'wb') as f:
        f.write(b''.join(out))


if __name__ == '__main__':
    main()
