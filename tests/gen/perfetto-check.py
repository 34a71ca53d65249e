#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Checks a Perfetto trace (protobuf, gzip or not) for what the trace processor relies on, and
prints a summary as JSON (per track: slices, durations, instants, counter values) that tests
compare with the numbers they expect.

  perfetto-check.py [--schema DIR] [--allow-open] [--each] [--dump OUT] FILE

The schema (DIR/perfetto_trace.proto, default ../shared/perfetto beside the tree) is compiled
with protoc into a temporary directory (or, with PERFETTO_CHECK_CACHE=DIR, once into DIR, kept
by the hash of schema and protoc); python3-protobuf decodes each packet. Checks:
  - the file is a sequence of whole Trace.packet fields (no other field, no truncated packet),
    each a TracePacket the schema decodes;
  - sequences: a packet that needs incremental state (SEQ_NEEDS_INCREMENTAL_STATE, interned
    ids, sequence clocks) comes after SEQ_INCREMENTAL_STATE_CLEARED on its sequence; interned
    ids (names, categories, annotation names and string values) are defined on the same
    sequence before use (or in the same packet), and never redefined to another string;
  - time: every track event has a timestamp that converts to the primary clock (incremental
    sequence clocks replayed as the trace processor does); no track goes back in time;
  - tracks: described (TrackDescriptor) before any event uses them, parents before children,
    never redescribed differently; counter values only on counter tracks, slices and instants
    only on the others; extra counter values paired with counter tracks;
  - slices: every SLICE_END closes the last open slice of its track (none open: error), so
    slices nest strictly; no slice left open at the end (unless --allow-open);
  - flows: a terminating flow id was started before; no flow has only one end. A flow id on
    several events and never terminated goes, as the trace processor takes it, from the
    earliest event to the next by time (whatever their order in the file), and is complete
    at the end (counted with the terminated ones).
Errors go to stderr, one line each naming the packet and its offset; the exit status is then 1.
--dump OUT writes every slice, counter value and instant to OUT (JSON, times as the trace
processor would see them) for tests that compare them with other tools' numbers: slices as
[track path, name, begin, duration, depth, [children as [begin, end]], {args}], counter
values as {path: [[time, value], ...]}, instants as [path, name, time, {args}], completed flows
as [from path, event type, time, slice name, slice begin, to path, type, time, name, begin]
(the slice of an end event is the one it closes; of an instant, begin is null): the
terminated ones as they end, then those never terminated, a pair per step by time.
"""
import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

SEQ_CLEARED = 1
SEQ_NEEDS = 2
BOOTTIME = 6
TYPE_NAMES = {1: "begin", 2: "end", 3: "instant", 4: "counter"}
KINDS = {
    "event_names": "name",
    "event_categories": "name",
    "debug_annotation_names": "name",
    "debug_annotation_string_values": "str",
}


class Fail(Exception):
    pass


def load_schema(schema_dir):
    proto = os.path.join(schema_dir, "perfetto_trace.proto")
    if not os.path.exists(proto):
        raise Fail("no schema '%s'" % proto)
    protoc = shutil.which("protoc")
    if not protoc:
        raise Fail("protoc not found (install protobuf-compiler)")
    cache = os.environ.get("PERFETTO_CHECK_CACHE")
    if cache:
        return load_cached(cache, protoc, schema_dir, proto)
    out = tempfile.mkdtemp(prefix="perfetto-check.")
    try:
        subprocess.run([protoc, "--python_out=" + out, "-I", schema_dir, proto], check=True)
        sys.path.insert(0, out)
        import perfetto_trace_pb2  # noqa: E402
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return perfetto_trace_pb2


def load_cached(cache, protoc, schema_dir, proto):
    """The module protoc makes of the schema, kept in CACHE under the hash of the schema and
    of protoc (0.25 s of protoc a run saved): made into a new directory renamed into place,
    so that runs at the same time never see half of one."""
    st = os.stat(protoc)
    h = hashlib.sha1(("%s %d %d\n" % (os.path.realpath(protoc), st.st_size, st.st_mtime_ns)).encode())
    with open(proto, "rb") as f:
        h.update(f.read())
    d = os.path.join(cache, "pb2-" + h.hexdigest()[:16])
    if not os.path.exists(os.path.join(d, "perfetto_trace_pb2.py")):
        os.makedirs(cache, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".pb2.", dir=cache)
        try:
            subprocess.run([protoc, "--python_out=" + tmp, "-I", schema_dir, proto], check=True)
            os.rename(tmp, d)
        except OSError:
            pass  # another run put it there first
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.path.insert(0, d)
    import perfetto_trace_pb2  # noqa: E402
    return perfetto_trace_pb2


def read_varint(buf, at):
    v = shift = 0
    while True:
        if at >= len(buf):
            return None, at
        b = buf[at]
        at += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, at
        shift += 7
        if shift > 63:
            return None, at


def packets(buf):
    """(offset, bytes) of each Trace.packet; raises Fail on anything else."""
    at = 0
    while at < len(buf):
        start = at
        key, at = read_varint(buf, at)
        if key is None:
            raise Fail("offset %d: truncated key" % start)
        if key != (1 << 3 | 2):
            raise Fail("offset %d: field %d wire type %d where Trace has only packet (1, length-delimited)"
                       % (start, key >> 3, key & 7))
        n, at = read_varint(buf, at)
        if n is None or at + n > len(buf):
            raise Fail("offset %d: packet of %s bytes runs past the end of the file (%d bytes): truncated"
                       % (start, n, len(buf)))
        yield start, buf[at:at + n]
        at += n


class Track:
    def __init__(self, desc, path, kind):
        self.desc = desc
        self.path = path
        self.kind = kind
        self.incremental = kind == "counter" and desc.counter.is_incremental
        self.last_ts = None
        self.stack = []
        self.value = 0


class Checker:
    def __init__(self, pb, allow_open, each, dump=False):
        self.dump = {"slices": [], "counters": {}, "instants": [], "flows": []} if dump else None
        self.flow_from = {}  # flow id -> where it started (dump)
        self.flow_steps = {}  # flow id -> where its later events were, not terminated (dump)
        self.ts_now = None
        self.pb = pb
        self.allow_open = allow_open
        self.each = each
        self.errors = []
        self.where = ""
        self.seqs = {}
        self.tracks = {}
        self.primary = None
        self.builtin = {}  # clock id -> (its value, primary value) of the last snapshot
        self.realtime_offset = None
        self.flows = {}  # open flow id -> number of events so far
        self.flow_done = 0
        self.flow_started = 0
        self.summary = {}
        self.args = {}
        self.first_ts = self.last_ts = None
        self.npackets = 0

    def error(self, msg):
        self.errors.append("%s: %s" % (self.where, msg))

    def seq(self, sid):
        if sid not in self.seqs:
            self.seqs[sid] = {"cleared": False, "interned": {k: {} for k in KINDS},
                              "clock": None, "clocks": {}}
        return self.seqs[sid]

    # ---- clocks ----
    def snapshot(self, seq, snap):
        if snap.HasField("primary_trace_clock"):
            p = snap.primary_trace_clock
            if self.primary is not None and self.primary != p:
                self.error("primary_trace_clock changes from %d to %d" % (self.primary, p))
            self.primary = p
        primary = self.primary if self.primary is not None else BOOTTIME
        values = {c.clock_id: c.timestamp for c in snap.clocks}
        ref = None
        if primary in values:
            ref = (primary, values[primary], values[primary])
        else:
            for cid, v in values.items():
                if cid < 64 and cid in self.builtin:
                    own, prim = self.builtin[cid]
                    ref = (cid, v, prim + (v - own))
                    break
        if ref is None:
            self.error("clock snapshot with no path to the primary clock %d" % primary)
            return
        for c in snap.clocks:
            base = ref[2] - c.timestamp  # this clock's time + base = the primary clock's
            if 64 <= c.clock_id < 128:
                if seq is None:
                    self.error("sequence clock %d in a snapshot without a sequence" % c.clock_id)
                    continue
                if c.unit_multiplier_ns not in (0, 1):
                    self.error("clock %d: unit_multiplier_ns %d is not supported by this checker"
                               % (c.clock_id, c.unit_multiplier_ns))
                seq["clocks"][c.clock_id] = {"incremental": c.is_incremental,
                                             "value": c.timestamp, "base": base}
            elif c.clock_id < 64:
                if c.is_incremental:
                    self.error("builtin clock %d marked incremental" % c.clock_id)
                self.builtin[c.clock_id] = (c.timestamp, ref[2])
                if c.clock_id == 1:
                    self.realtime_offset = -base
            else:
                self.error("global clock %d is not supported by this checker" % c.clock_id)

    def to_trace_time(self, seq, pkt):
        clock = pkt.timestamp_clock_id if pkt.HasField("timestamp_clock_id") else None
        if clock is None and seq is not None:
            clock = seq["clock"]
        if clock is None:
            clock = BOOTTIME
        ts = pkt.timestamp
        if 64 <= clock < 128:
            c = seq["clocks"].get(clock) if seq is not None else None
            if c is None:
                self.error("timestamp on sequence clock %d, which no snapshot of this sequence defines" % clock)
                return None
            if c["incremental"]:
                c["value"] += ts
                return c["value"] + c["base"]
            return ts + c["base"]
        primary = self.primary if self.primary is not None else BOOTTIME
        if clock == primary:
            return ts
        if clock in self.builtin:
            own, prim = self.builtin[clock]
            return prim + (ts - own)
        self.error("timestamp on clock %d, which no snapshot relates to the primary clock %d" % (clock, primary))
        return None

    # ---- interning ----
    def intern(self, seq, data):
        for kind, field in KINDS.items():
            table = seq["interned"][kind]
            for e in getattr(data, kind):
                v = getattr(e, field)
                if isinstance(v, bytes):
                    v = v.decode("utf-8", "replace")
                if e.iid == 0:
                    self.error("%s entry with iid 0" % kind)
                elif e.iid in table and table[e.iid] != v:
                    self.error("%s iid %d redefined from '%s' to '%s'" % (kind, e.iid, table[e.iid], v))
                table[e.iid] = v

    def lookup(self, seq, kind, iid):
        v = seq["interned"][kind].get(iid) if seq is not None else None
        if v is None:
            self.error("%s iid %d used before it is defined on this sequence" % (kind, iid))
            return "?%d" % iid
        return v

    # ---- tracks ----
    def describe(self, d):
        if d.uuid == 0:
            self.error("track descriptor with uuid 0")
            return
        kind = ("process" if d.HasField("process") else "thread" if d.HasField("thread")
                else "counter" if d.HasField("counter") else "slice")
        if d.HasField("process"):
            name = "%s [pid %d]" % (d.process.process_name, d.process.pid)
        elif d.HasField("thread"):
            name = "%s [tid %d]" % (d.thread.thread_name, d.thread.tid)
        else:
            name = d.name
        path = name
        if d.HasField("parent_uuid") and kind not in ("process", "thread"):
            parent = self.tracks.get(d.parent_uuid)
            if parent is None:
                self.error("track %d described before its parent %d" % (d.uuid, d.parent_uuid))
            else:
                path = parent.path + " > " + name
        old = self.tracks.get(d.uuid)
        if old is not None:
            if old.desc != d:
                self.error("track %d described again, differently" % d.uuid)
            return
        self.tracks[d.uuid] = Track(d, path, kind)
        s = self.summary.setdefault(path, {"kind": kind, "uuids": 0})
        if s["kind"] != kind:
            self.error("tracks named '%s' are of kinds %s and %s" % (path, s["kind"], kind))
        s["uuids"] += 1

    def track_at(self, uuid, ts, what):
        t = self.tracks.get(uuid)
        if t is None:
            self.error("%s on track %d, which is not described (yet)" % (what, uuid))
            return None
        if ts is not None:
            if t.last_ts is not None and ts < t.last_ts:
                self.error("%s on track %d ('%s') at %d, before its previous event at %d"
                           % (what, uuid, t.path, ts, t.last_ts))
            t.last_ts = ts if t.last_ts is None else max(ts, t.last_ts)
        return t

    def counter_value(self, t, v, is_double):
        s = self.summary[t.path]
        if t.incremental:
            if is_double:
                self.error("double value on incremental counter track '%s'" % t.path)
            t.value += v
        else:
            t.value = v
        v = t.value
        if self.dump is not None:
            self.dump["counters"].setdefault(t.path, []).append([self.ts_now, v])
        if "values" not in s:
            s.update(values=0, min=v, max=v, last=v, sum=0)
        s["values"] += 1
        s["min"] = min(s["min"], v)
        s["max"] = max(s["max"], v)
        s["last"] = v
        s["sum"] += v

    # ---- events ----
    def event(self, seq, pkt, ts):
        e = pkt.track_event
        if ts is None:
            if not pkt.HasField("timestamp"):
                self.error("track event without a timestamp")
            return
        if not e.HasField("track_uuid"):
            self.error("track event without track_uuid")
            return
        what = TYPE_NAMES.get(e.type, "type %d" % e.type)
        t = self.track_at(e.track_uuid, ts, what)
        name = None
        if e.HasField("name_iid"):
            name = self.lookup(seq, "event_names", e.name_iid)
        elif e.HasField("name"):
            name = e.name
        for iid in e.category_iids:
            self.lookup(seq, "event_categories", iid)
        args = {}
        for a in e.debug_annotations:
            an = self.lookup(seq, "debug_annotation_names", a.name_iid) if a.HasField("name_iid") else a.name
            if a.HasField("string_value_iid"):
                args[an] = self.lookup(seq, "debug_annotation_string_values", a.string_value_iid)
            else:
                for f in ("string_value", "uint_value", "int_value", "bool_value", "double_value"):
                    if a.HasField(f):
                        args[an] = getattr(a, f)
            self.args[an] = self.args.get(an, 0) + 1
        self.ts_now = ts
        self.extra_counters(e, ts)
        self.flows_of(e, t, what, ts, name)
        if t is None:
            return
        s = self.summary[t.path]
        if e.type == 4:
            if t.kind != "counter":
                self.error("counter value on track %d ('%s'), which is not a counter track" % (e.track_uuid, t.path))
                return
            if e.HasField("counter_value"):
                self.counter_value(t, e.counter_value, False)
            elif e.HasField("double_counter_value"):
                self.counter_value(t, e.double_counter_value, True)
            else:
                self.error("counter event without a value")
            return
        if t.kind == "counter":
            self.error("%s on counter track %d ('%s')" % (what, e.track_uuid, t.path))
            return
        if e.type == 1:
            if name is None:
                self.error("slice begin without a name on '%s'" % t.path)
            t.stack.append((name, ts, [], args))
            s["max_depth"] = max(s.get("max_depth", 0), len(t.stack))
        elif e.type == 2:
            if not t.stack:
                self.error("slice end on track %d ('%s') with no slice open" % (e.track_uuid, t.path))
                return
            bname, bts, kids, bargs = t.stack.pop()
            dur = ts - bts
            if t.stack:
                t.stack[-1][2].append([bts, ts])
            if self.dump is not None:
                bargs.update(args)
                self.dump["slices"].append([t.path, bname, bts, dur, len(t.stack), kids, bargs])
            names = s.setdefault("names", {})
            n = names.setdefault(bname, {"count": 0, "total_ns": 0, "min_ns": dur, "max_ns": dur})
            n["count"] += 1
            n["total_ns"] += dur
            n["min_ns"] = min(n["min_ns"], dur)
            n["max_ns"] = max(n["max_ns"], dur)
            if self.each:
                n.setdefault("each_ns", []).append(dur)
            s["slices"] = s.get("slices", 0) + 1
            if not t.stack:
                d0 = s.setdefault("depth0", {"count": 0, "total_ns": 0})
                d0["count"] += 1
                d0["total_ns"] += dur
        elif e.type == 3:
            if name is None:
                self.error("instant without a name on '%s'" % t.path)
            inst = s.setdefault("instants", {})
            inst[name] = inst.get(name, 0) + 1
            if self.dump is not None:
                self.dump["instants"].append([t.path, name, ts, args])
        else:
            self.error("track event of type %d" % e.type)

    def extra_counters(self, e, ts):
        for uuids, values, is_double in ((e.extra_counter_track_uuids, e.extra_counter_values, False),
                                         (e.extra_double_counter_track_uuids, e.extra_double_counter_values, True)):
            if len(uuids) != len(values):
                self.error("%d extra counter tracks for %d values" % (len(uuids), len(values)))
            for uuid, v in zip(uuids, values):
                t = self.track_at(uuid, ts, "extra counter value")
                if t is None:
                    continue
                if t.kind != "counter":
                    self.error("extra counter value for track %d ('%s'), which is not a counter track" % (uuid, t.path))
                    continue
                self.counter_value(t, v, is_double)

    def flows_of(self, e, t, what, ts, name):
        # where: the event, and the slice it belongs to (an end: the one it closes)
        where = None
        if self.dump is not None and t is not None:
            sl = t.stack[-1] if e.type == 2 and t.stack else (name, ts) if e.type == 1 else (name, None)
            where = [t.path, what, ts, sl[0], sl[1]]
        for f in list(e.flow_ids) + list(e.flow_ids_old):
            if f in self.flows:
                self.flows[f] += 1
                if where is not None:
                    self.flow_steps.setdefault(f, []).append(where)
            else:
                self.flows[f] = 1
                self.flow_started += 1
                if where is not None:
                    self.flow_from[f] = where
        for f in list(e.terminating_flow_ids) + list(e.terminating_flow_ids_old):
            if f not in self.flows:
                self.error("terminating flow id %d that no earlier event started" % f)
                continue
            del self.flows[f]
            self.flow_done += 1
            if where is not None and f in self.flow_from:
                self.dump["flows"].append(self.flow_from.pop(f) + where)

    # ---- packets ----
    def packet(self, off, data):
        self.npackets += 1
        self.where = "packet %d at offset %d" % (self.npackets, off)
        try:
            pkt = self.pb.TracePacket.FromString(data)
        except Exception as ex:  # DecodeError
            self.error("does not decode as a TracePacket: %s" % ex)
            return
        seq = None
        if pkt.HasField("trusted_packet_sequence_id"):
            seq = self.seq(pkt.trusted_packet_sequence_id)
        flags = pkt.sequence_flags
        needs = bool(flags & SEQ_NEEDS) or pkt.HasField("interned_data")
        if flags & SEQ_CLEARED or pkt.incremental_state_cleared:
            if seq is None:
                self.error("incremental state cleared without a sequence id")
            else:
                seq.update(cleared=True, interned={k: {} for k in KINDS}, clock=None, clocks={})
        if needs:
            if seq is None:
                self.error("incremental state (flags or interned data) without a sequence id")
            elif not seq["cleared"]:
                self.error("needs incremental state on sequence %d before SEQ_INCREMENTAL_STATE_CLEARED"
                           % pkt.trusted_packet_sequence_id)
        if pkt.HasField("trace_packet_defaults") and seq is not None:
            d = pkt.trace_packet_defaults
            if d.HasField("timestamp_clock_id"):
                seq["clock"] = d.timestamp_clock_id
        if pkt.HasField("interned_data") and seq is not None:
            self.intern(seq, pkt.interned_data)
        if pkt.HasField("clock_snapshot"):
            self.snapshot(seq, pkt.clock_snapshot)
        ts = None
        if pkt.HasField("timestamp"):
            clock = pkt.timestamp_clock_id if pkt.HasField("timestamp_clock_id") else (seq or {}).get("clock")
            if clock is not None and 64 <= clock < 128 and not needs:
                self.error("timestamp on sequence clock %d without SEQ_NEEDS_INCREMENTAL_STATE" % clock)
            ts = self.to_trace_time(seq, pkt)
            if ts is not None:
                self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
                self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if pkt.HasField("track_descriptor"):
            self.describe(pkt.track_descriptor)
        if pkt.HasField("track_event"):
            self.event(seq, pkt, ts)

    def finish(self):
        self.where = "end of trace"
        for uuid, t in sorted(self.tracks.items()):
            if t.stack and not self.allow_open:
                self.error("track %d ('%s') ends with %d slice(s) open, the first '%s' from %d"
                           % (uuid, t.path, len(t.stack), t.stack[0][0], t.stack[0][1]))
            if t.stack:
                s = self.summary[t.path]
                s["open"] = s.get("open", 0) + len(t.stack)
        for f, n in sorted(self.flows.items()):
            if n < 2:
                self.error("flow %d has only one end" % f)
                continue
            # never terminated: from its earliest event on, by time (a stable sort: at one
            # time, in the file's order)
            self.flow_done += 1
            if self.dump is not None and f in self.flow_from:
                evs = sorted([self.flow_from.pop(f)] + self.flow_steps.pop(f, []), key=lambda w: w[2])
                for a, b in zip(evs, evs[1:]):
                    self.dump["flows"].append(a + b)
        self.flows = {f: n for f, n in self.flows.items() if n < 2}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schema", default=os.path.join(here, "..", "..", "..", "shared", "perfetto"))
    ap.add_argument("--allow-open", action="store_true", help="slices may be open at the end")
    ap.add_argument("--each", action="store_true", help="list every slice duration")
    ap.add_argument("--dump", metavar="OUT", help="write every slice, counter value and instant to OUT")
    ap.add_argument("file")
    a = ap.parse_args()
    try:
        with open(a.file, "rb") as f:
            buf = f.read()
    except OSError as ex:
        print("perfetto-check: cannot read '%s': %s" % (a.file, ex.strerror), file=sys.stderr)
        return 2
    if buf[:2] == b"\x1f\x8b":
        try:
            buf = gzip.decompress(buf)
        except (OSError, EOFError) as ex:
            print("perfetto-check: '%s': bad gzip: %s" % (a.file, ex), file=sys.stderr)
            return 1
    try:
        pb = load_schema(a.schema)
    except Fail as ex:
        print("perfetto-check: %s" % ex, file=sys.stderr)
        return 3
    except ImportError as ex:
        print("perfetto-check: cannot load the compiled schema: %s (install python3-protobuf)" % ex,
              file=sys.stderr)
        return 3
    c = Checker(pb, a.allow_open, a.each, a.dump is not None)
    try:
        for off, data in packets(buf):
            c.packet(off, data)
        c.finish()
    except Fail as ex:
        c.errors.append(str(ex))
    for e in c.errors[:50]:
        print("perfetto-check: %s: %s" % (a.file, e), file=sys.stderr)
    if len(c.errors) > 50:
        print("perfetto-check: %s: %d more errors" % (a.file, len(c.errors) - 50), file=sys.stderr)
    out = {
        "packets": c.npackets,
        "bytes": len(buf),
        "sequences": sorted(c.seqs),
        "primary_clock": c.primary,
        "realtime_offset_ns": c.realtime_offset,
        "first_ts": c.first_ts,
        "last_ts": c.last_ts,
        "flows": {"started": c.flow_started, "completed": c.flow_done, "open": len(c.flows)},
        "args": dict(sorted(c.args.items())),
        "tracks": dict(sorted(c.summary.items())),
        "errors": len(c.errors),
    }
    if a.dump:
        with open(a.dump, "w") as f:
            f.write(json.dumps(c.dump))  # the C encoder (json.dump is pure Python)
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    print()
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
