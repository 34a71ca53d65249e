# SPDX-License-Identifier: GPL-2.0
"""
Device name notes (include/blk/trace.h BLK_TN_DEVNAME) for the tests, as blktrace writes
them: one before the first record of each per-CPU stream of a device, at that record's
time, naming the device of the stream's first event.

    devname.py add DIR NAME [DEVNAME]   note each DIR/NAME.blktrace.N (name: DEVNAME, else
                                        NAME); prints how many notes it added
    devname.py strip IN OUT             IN without its device name notes
    devname.py list FILE...             "FILE TIME MAJ,MIN CPU NAME" of each note
"""
import glob
import sys

import blkrec

TN_DEVNAME = 0x41


def is_devname(r):
    return r.action & blkrec.NOTIFY and (r.action & 0xffff) == TN_DEVNAME


def add(d, name, devname):
    n = 0
    for p in sorted(glob.glob("%s/%s.blktrace.[0-9]*" % (d, name))):
        data = open(p, "rb").read()
        recs = list(blkrec.records(data))
        ev = [r for r in recs if not r.action & blkrec.NOTIFY]
        if not recs or not ev:
            continue
        first = recs[0]
        note = blkrec.encode_note(first.version, first.endian, TN_DEVNAME, 0, ev[0].device,
                                  devname.encode(), time=first.time, cpu=first.cpu)
        open(p, "wb").write(note + data)
        n += 1
    print(n)


def strip(src, dst):
    data = open(src, "rb").read()
    out = bytearray()
    for r in blkrec.records(data):
        if not is_devname(r):
            out += data[r.offset:r.end]
    open(dst, "wb").write(out)


def list_notes(paths):
    for p in paths:
        for r in blkrec.records(open(p, "rb").read()):
            if is_devname(r):
                print(p, r.time, "%d,%d" % (r.device >> 20, r.device & 0xfffff), r.cpu,
                      r.pdu.decode(errors="replace"))


def main(argv):
    if len(argv) >= 3 and argv[0] == "add":
        add(argv[1], argv[2], argv[3] if len(argv) > 3 else argv[2])
    elif len(argv) == 3 and argv[0] == "strip":
        strip(argv[1], argv[2])
    elif len(argv) >= 2 and argv[0] == "list":
        list_notes(argv[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
