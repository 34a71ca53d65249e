#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Random small merged traces for differential runs of btt against the reference: several
devices (one maybe a device-mapper), process notes and messages, queued I/Os of odd sizes
(zero bytes, under a sector), the later events of a queued I/O (G S I M F D C R, remaps,
splits, plugs and unplugs, ranges covering several), passthrough records, and time that
sometimes steps back. Each seed gives the same bytes.

    btt-edge.py OUT.bin SEED EVENTS [ordered]

With "ordered", time never steps back (as in a trace blkparse merged).
"""
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blkrec  # noqa: E402 (the record layout, tests/gen/blkrec.py)

# action code -> category bit
CATEGORY = {1: 4, 2: 4, 3: 4, 4: 4, 5: 4, 6: 5, 7: 6, 8: 7, 9: 4, 10: 4, 11: 4, 12: 4, 13: 4,
            15: 4}
LATER = [4, 4, 12, 12, 7, 7, 8, 8, 8, 2, 3, 5, 6, 9, 10, 11, 15, 13]  # after a Q
NAMES = ['fio', 'tar', 'kworker/1:0', 'dd', 'postgres']


def note(t, pid, dev, kind, text):
    return blkrec.encode_note(7, '<', kind, pid, dev, text.encode(), time=t)


def gen(seed, n, ordered=False):
    r = random.Random(seed)
    devs = [blkrec.mkdev(8, m) for m in r.sample([0, 1, 16, 32, 48], r.randint(1, 3))]
    if r.random() < 0.3:
        devs.append(blkrec.mkdev(253, 0))
    pids = [r.randint(1, 50) for _ in range(r.randint(1, 4))] + [0]
    out, seq, t = [], 0, 0
    queued = []  # (device, sector, bytes)
    span = r.choice([64, 4096, 1 << 20])
    for i in range(n):
        back = r.random() <= 0.01
        t += r.randint(1, 200000) if not back else (0 if ordered else -r.randint(1, 50000))
        t = max(t, 0)
        dev = r.choice(devs)
        pid = r.choice(pids)
        x = r.random()
        if x < 0.03:
            out.append(note(t, pid, dev, blkrec.TN_PROCESS, r.choice(NAMES) + '\0'))
            continue
        if x < 0.04:
            out.append(note(t, pid, dev, blkrec.TN_MESSAGE, 'msg %d' % i))
            continue
        if x < 0.35 or not queued:
            code = 1
            s = r.randrange(0, span) * 8
            b = r.choice([512, 4096, 4096, 8192, 65536, 1024 * 1024])
            if r.random() < 0.02:
                b = r.choice([0, 100])
            queued.append((dev, s, b))
        else:
            d, s, b = r.choice(queued)
            dev = d if r.random() < 0.95 else dev
            code = r.choice(LATER)
            if code in (7, 8) and r.random() < 0.3:
                b += r.choice([4096, 8192, 65536])  # a request covering several
            if code == 8 and r.random() < 0.7:
                queued = [q for q in queued if q != (d, s, b)]
        pdu = b''
        if code in (10, 11):
            pdu = blkrec.unplug_pdu(r.randint(0, 40))
            s, b = 0, 0
        if code == 9:
            s, b = 0, 0
        if code == 15:
            pdu = blkrec.remap_pdu(r.choice(devs), dev, s)
            if r.random() < 0.5:
                dev = r.choice(devs)
        if code == 13:
            pdu = blkrec.split_pdu(s + 8)
        rw = 1 if r.random() < 0.5 else 2
        fs = blkrec.TC_PC if r.random() < 0.02 else blkrec.TC_FS  # passthrough now and then
        act = blkrec.act(code, (1 << CATEGORY[code]) | fs | rw)
        seq += 1
        out.append(blkrec.encode(7, '<', seq, t, s, b, act, pid, dev, r.randint(0, 1), pdu))
    return b''.join(out)


if __name__ == '__main__':
    with open(sys.argv[1], 'wb') as f:
        f.write(gen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] == ['ordered']))
