# SPDX-License-Identifier: GPL-2.0
"""
The trace record layout for the test scripts, stated once (include/blk/trace.h is the
C statement of it): encode records of version 7 (48-byte header) or 8 (64-byte header) in
either byte order, their payloads (notes, remaps, unplugs, splits), and read them back.

    import blkrec
    t = blkrec.Trace(version=7, endian='<')
    t.rec(seq, time, sector, nbytes, action, pid, dev, cpu, pdu=b'', error=0)
    t.note(blkrec.TN_PROCESS, pid, dev, b'fio\\0')
    open('x.bin', 'wb').write(t.data())
    for r in blkrec.records(open('x.bin', 'rb').read()): print(r.time, r.action)

Scripts in tests/gen import it from their own directory; the e2e scripts run Python with
PYTHONPATH="$TOP/tests/gen" python3 -B (no bytecode left in the tree). As a command it
lists record offsets and damages records (see USAGE at the end).
"""
import collections
import struct
import sys

MAGIC = 0x65617400
V1 = '{}IIQQIIIIIHH'  # magic seq time sector bytes action pid device cpu error pdu_len
V2 = '{}IIQQIIQIIHH12x'  # magic seq time sector bytes pid action device cpu error pdu_len
HDR = {7: 48, 8: 64}  # header size by version

# categories: bits 16..31 of a version-7 action (BLK_TC_*), bits 16.. of a version-8 one
TC_READ, TC_WRITE, TC_FLUSH, TC_SYNC, TC_QUEUE, TC_REQUEUE, TC_ISSUE, TC_COMPLETE, \
    TC_FS, TC_PC, TC_NOTIFY, TC_AHEAD, TC_META, TC_DISCARD, TC_DRV_DATA, TC_FUA = \
    (1 << i for i in range(16))
# categories of version 8 only, beyond bit 31 of its 64-bit action (BLK_TC2_*, already shifted)
TC2_ZONE_APPEND, TC2_ZONE_RESET, TC2_ZONE_RESET_ALL, TC2_ZONE_FINISH, TC2_ZONE_OPEN, \
    TC2_ZONE_CLOSE, TC2_WRITE_ZEROES = (1 << i for i in range(32, 39))
# action codes: the low 16 bits (BLK_TA_*)
TA_QUEUE, TA_BACKMERGE, TA_FRONTMERGE, TA_GETRQ, TA_SLEEPRQ, TA_REQUEUE, TA_ISSUE, \
    TA_COMPLETE, TA_PLUG, TA_UNPLUG_IO, TA_UNPLUG_TIMER, TA_INSERT, TA_SPLIT, TA_BOUNCE, \
    TA_REMAP, TA_ABORT, TA_DRV_DATA, TA_ZONE_PLUG, TA_ZONE_UNPLUG = range(1, 20)
TA_CGROUP = 1 << 8
# notes: the code of an action with TC_NOTIFY (BLK_TN_*)
TN_PROCESS, TN_TIMESTAMP, TN_MESSAGE = 0, 1, 2
NOTIFY = TC_NOTIFY << 16  # the notify bit of an action

_NAMES = {7: 'magic seq time sector bytes action pid device cpu error pdu_len'.split(),
          8: 'magic seq time sector bytes pid action device cpu error pdu_len'.split()}

Record = collections.namedtuple(
    'Record', 'offset version seq time sector bytes action pid device cpu error pdu endian')
Record.end = property(lambda r: r.offset + HDR[r.version] + len(r.pdu),
                      doc='the offset just past the record')


def mkdev(major, minor):
    """The kernel's dev_t encoding used in records."""
    return (major << 20) | minor


def act(code, cats=0):
    """An action: code (TA_* or TN_*) and categories (TC_* or'ed)."""
    return code | cats << 16


def notify(kind, cgroup=False):
    """The action of a note of @kind (TN_*)."""
    return NOTIFY | kind | (TA_CGROUP if cgroup else 0)


def encode(version, endian, seq, time, sector, nbytes, action, pid, dev, cpu, pdu=b'',
           error=0):
    if version == 7:
        hdr = struct.pack(V1.format(endian), MAGIC | 7, seq, time, sector, nbytes,
                          action & 0xffffffff, pid, dev, cpu, error, len(pdu))
    else:
        hdr = struct.pack(V2.format(endian), MAGIC | 8, seq, time, sector, nbytes, pid,
                          action, dev, cpu, error, len(pdu))
    return hdr + pdu


def encode_note(version, endian, kind, pid, dev, pdu, time=0, seq=0, cpu=0):
    """A note (sector and bytes 0): TN_PROCESS (pdu: the name, NUL-terminated as the
    kernel writes it), TN_MESSAGE (the text), TN_TIMESTAMP (timestamp_pdu())."""
    return encode(version, endian, seq, time, 0, 0, notify(kind), pid, dev, cpu, pdu)


def pack(r):
    """Encode a Record again (e.g. one from records() with fields changed by _replace)."""
    return encode(r.version, r.endian, r.seq, r.time, r.sector, r.bytes, r.action, r.pid,
                  r.device, r.cpu, r.pdu, r.error)


# payloads: those of the kernel are big-endian whatever the byte order of the header
def remap_pdu(device_from, device_to, sector_from):
    """The payload of a remap (struct blk_io_trace_remap)."""
    return struct.pack('>IIQ', device_from, device_to, sector_from)


def unplug_pdu(count):
    """The payload of an unplug (TA_UNPLUG_IO, TA_UNPLUG_TIMER, TA_ZONE_UNPLUG): a count."""
    return struct.pack('>Q', count)


def split_pdu(new_sector):
    """The payload of a split: the sector where the second part starts."""
    return struct.pack('>Q', new_sector)


def timestamp_pdu(endian, sec, nsec):
    """The payload of a TN_TIMESTAMP note: the wall clock, in the header's byte order."""
    return struct.pack(endian + 'II', sec, nsec)


def read_timestamp(r):
    """(seconds, nanoseconds) of the TN_TIMESTAMP note @r."""
    return struct.unpack(r.endian + 'II', r.pdu)


class Trace:
    def __init__(self, version=7, endian='<'):
        self.version = version
        self.e = endian
        self.recs = []

    def rec(self, seq, time, sector, nbytes, act, pid, dev, cpu, pdu=b'', error=0):
        self.recs.append(encode(self.version, self.e, seq, time, sector, nbytes, act, pid,
                                dev, cpu, pdu, error))

    def note(self, kind, pid, dev, pdu, time=0, seq=0, cpu=0):
        self.recs.append(encode_note(self.version, self.e, kind, pid, dev, pdu, time, seq,
                                     cpu))

    def data(self):
        return b''.join(self.recs)


def layout_at(data, off):
    """(version, byte order) of the record header at @off, from its magic; ValueError if
    there is none."""
    e = '<'
    magic = struct.unpack_from('<I', data, off)[0]
    if magic & 0xffffff00 != MAGIC:
        e = '>'
        magic = struct.unpack_from('>I', data, off)[0]
        if magic & 0xffffff00 != MAGIC:
            raise ValueError('bad magic 0x%08x at offset %d' % (magic, off))
    if magic & 0xff not in HDR:
        raise ValueError('version %d at offset %d' % (magic & 0xff, off))
    return magic & 0xff, e


def _decode(data, off):
    """The whole record at @off, None if cut short; ValueError if none starts there."""
    version, e = layout_at(data, off)
    if version == 7:
        if off + 48 > len(data):
            return None
        f = struct.unpack_from(V1.format(e), data, off)
        seq, time, sector, nbytes, action, pid, dev, cpu, err, plen = f[1:]
    else:
        if off + 64 > len(data):
            return None
        f = struct.unpack_from(V2.format(e), data, off)
        seq, time, sector, nbytes, pid, action, dev, cpu, err, plen = f[1:]
    hdr = HDR[version]
    if off + hdr + plen > len(data):
        return None
    return Record(off, version, seq, time, sector, nbytes, action, pid, dev, cpu, err,
                  data[off + hdr:off + hdr + plen], e)


def record_at(data, off):
    """The whole record at @off as a Record, or None when @data holds none there (bad
    magic, unknown version, cut short)."""
    if off + 4 > len(data):
        return None
    try:
        return _decode(data, off)
    except ValueError:
        return None


def records(data):
    """Yield every whole record of @data (any version and byte order) as a Record; stop
    at a record cut short, ValueError at one that is not a record."""
    off = 0
    while off + 48 <= len(data):
        r = _decode(data, off)
        if r is None:
            return
        yield r
        off = r.end


def _field(version, name):
    """(offset in the header, struct code) of the field @name."""
    off = 0
    for code, n in zip((V1 if version == 7 else V2)[2:], _NAMES[version]):
        if n == name:
            return off, code
        off += struct.calcsize(code)
    raise KeyError(name)


def get_field(data, off, name):
    """The header field @name (as in _NAMES) of the record at @off."""
    version, e = layout_at(data, off)
    o, code = _field(version, name)
    return struct.unpack_from(e + code, data, off + o)[0]


def set_field(buf, off, name, value):
    """Overwrite the header field @name of the record at @off in the bytearray @buf, in
    the record's own layout: to damage a record (any value, magic and pdu_len too)."""
    version, e = layout_at(buf, off)
    o, code = _field(version, name)
    struct.pack_into(e + code, buf, off + o, value)


# ---- I/O wait notes (include/blk/trace.h: BLK_TN_IOWAIT, struct blk_iowait_pdu) ----
TN_IOWAIT = 0x40
IOWAIT_ACTION = NOTIFY | TN_IOWAIT
IOWAIT_MAGIC = 0x54574f49
IOWAIT_PDU = '{}IHHQQIIIiiBBBB16s'  # magic version len duration rebase tgid tid io_dev
#                                    waker_cpu sleep_cpu source flags func reserved comm
IOWAIT_SOURCES = {1: 'module', 2: 'kprobe', 3: 'sched'}
IOWAIT_F_IO, IOWAIT_F_IO_CHECKED, IOWAIT_F_TGID_UNKNOWN = 1, 2, 4

Wait = collections.namedtuple(
    'Wait', 'end duration start rebase tgid tid device io_dev cpu waker_cpu sleep_cpu '
    'source flags func comm')


def iowait_pdu(duration, tgid, tid, comm, io_dev=0, waker_cpu=-1, sleep_cpu=-1, source=3,
               flags=0, func=0, rebase=0, endian='<'):
    return struct.pack(IOWAIT_PDU.format(endian), IOWAIT_MAGIC, 1, 64, duration, rebase,
                       tgid, tid, io_dev, waker_cpu, sleep_cpu, source, flags, func, 0,
                       comm.encode()[:16])


def iowait_rec(version, endian, end, duration, tgid, tid, comm, dev, cpu, **kw):
    """A whole I/O wait note (record + payload) in byte order @endian."""
    return encode(version, endian, 0, end, 0, 0, IOWAIT_ACTION, tid, dev, cpu,
                  iowait_pdu(duration, tgid, tid, comm, endian=endian, **kw))


def is_iowait(r):
    return r.action & 0xffffffff == IOWAIT_ACTION


def iowait(r):
    """The Wait of Record @r (an I/O wait note), decoded independently of the C library."""
    for e in '<>':
        f = struct.unpack_from(IOWAIT_PDU.format(e), r.pdu, 0)
        if f[0] == IOWAIT_MAGIC:
            break
    else:
        raise ValueError('bad I/O wait payload magic at offset %d' % r.offset)
    (_, version, plen, duration, rebase, tgid, tid, io_dev, waker, sleep, source, flags,
     func, _, comm) = f
    if version != 1 or plen < 64:
        raise ValueError('I/O wait payload version %d len %d at offset %d'
                         % (version, plen, r.offset))
    return Wait(r.time, duration, r.time - duration, rebase, tgid, tid, r.device, io_dev,
                r.cpu, waker, sleep, IOWAIT_SOURCES.get(source, 'unknown'), flags, func,
                comm.rstrip(b'\0').decode(errors='replace'))


USAGE = '''usage: blkrec.py bounds FILE
           the offset of every record of the trace FILE, one a line, then its end
       blkrec.py poke FILE OFFSET FIELD VALUE
           set the header field FIELD (magic seq time sector bytes action pid device cpu
           error pdu_len) of the record at OFFSET to VALUE (a number, or rec:OFF: that
           field of the record at OFF), in the record's own layout: to damage a trace'''


def main(argv):
    if len(argv) == 2 and argv[0] == 'bounds':
        end = 0
        for r in records(open(argv[1], 'rb').read()):
            print(r.offset)
            end = r.end
        print(end)
        return 0
    if len(argv) == 5 and argv[0] == 'poke':
        path, off, field, val = argv[1], int(argv[2]), argv[3], argv[4]
        d = bytearray(open(path, 'rb').read())
        v = get_field(d, int(val[4:]), field) if val.startswith('rec:') else int(val, 0)
        set_field(d, off, field, v)
        open(path, 'wb').write(d)
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
