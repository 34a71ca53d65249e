# SPDX-License-Identifier: GPL-2.0
"""
The trace record layout for the test scripts, stated once (include/blk/trace.h is the
C statement of it): encode records of version 7 (48-byte header) or 8 (64-byte header) in
either byte order, and read them back.

    import blkrec
    t = blkrec.Trace(version=7, endian='<')
    t.rec(seq, time, sector, nbytes, action, pid, dev, cpu, pdu=b'', error=0)
    open('x.bin', 'wb').write(t.data())
    for r in blkrec.records(open('x.bin', 'rb').read()): print(r.time, r.action)
"""
import collections
import struct

MAGIC = 0x65617400
V1 = '{}IIQQIIIIIHH'  # magic seq time sector bytes action pid device cpu error pdu_len
V2 = '{}IIQQIIQIIHH12x'  # magic seq time sector bytes pid action device cpu error pdu_len

Record = collections.namedtuple(
    'Record', 'offset version seq time sector bytes action pid device cpu error pdu')


def mkdev(major, minor):
    """The kernel's dev_t encoding used in records."""
    return (major << 20) | minor


def encode(version, endian, seq, time, sector, nbytes, action, pid, dev, cpu, pdu=b'',
           error=0):
    if version == 7:
        hdr = struct.pack(V1.format(endian), MAGIC | 7, seq, time, sector, nbytes,
                          action & 0xffffffff, pid, dev, cpu, error, len(pdu))
    else:
        hdr = struct.pack(V2.format(endian), MAGIC | 8, seq, time, sector, nbytes, pid,
                          action, dev, cpu, error, len(pdu))
    return hdr + pdu


class Trace:
    def __init__(self, version=7, endian='<'):
        self.version = version
        self.e = endian
        self.recs = []

    def rec(self, seq, time, sector, nbytes, act, pid, dev, cpu, pdu=b'', error=0):
        self.recs.append(encode(self.version, self.e, seq, time, sector, nbytes, act, pid,
                                dev, cpu, pdu, error))

    def data(self):
        return b''.join(self.recs)


def records(data):
    """Yield every whole record of @data (any version and byte order) as a Record."""
    off = 0
    while off + 48 <= len(data):
        e = '<'
        magic = struct.unpack_from('<I', data, off)[0]
        if magic & 0xffffff00 != MAGIC:
            e = '>'
            magic = struct.unpack_from('>I', data, off)[0]
            if magic & 0xffffff00 != MAGIC:
                raise ValueError('bad magic 0x%08x at offset %d' % (magic, off))
        version = magic & 0xff
        if version == 7:
            f = struct.unpack_from(V1.format(e), data, off)
            hdr = 48
            seq, time, sector, nbytes, action, pid, dev, cpu, err, plen = f[1:]
        elif version == 8:
            if off + 64 > len(data):
                return
            f = struct.unpack_from(V2.format(e), data, off)
            hdr = 64
            seq, time, sector, nbytes, pid, action, dev, cpu, err, plen = f[1:]
        else:
            raise ValueError('version %d at offset %d' % (version, off))
        if off + hdr + plen > len(data):
            return
        yield Record(off, version, seq, time, sector, nbytes, action, pid, dev, cpu, err,
                     data[off + hdr:off + hdr + plen])
        off += hdr + plen
