#!/bin/bash
# The Perfetto trace writer (lib/perfetto/, the base of btt --perfetto, issue 14) end to end:
# tests/gen/perfetto-synth writes a synthetic block I/O trace through the API (three devices,
# overlapping I/Os on lanes, stage slices, counters, instants, flows, process and thread
# tracks, a wall clock), plain and gzip; protoc decodes both with the shared schema;
# tests/gen/perfetto-check.py checks what the trace processor relies on, and its summary must
# give back the numbers the generator computed from its I/Os. Then the checker must fail on
# deliberately broken files, each for its own reason.
. "$(dirname "$0")/../lib.sh"

SCHEMA="$SHARED_DIR/perfetto"
SYNTH="$TOP/tests/gen/perfetto-synth"
CHECK="$TOP/tests/gen/perfetto-check.py"
[ -n "${VALGRIND:-}" ] && SYNTH="$TOP/tests/vg.sh $SYNTH"

perfetto_tools "perfetto writer" || exit 0
check() { "$PY" "$CHECK" --schema "$SCHEMA" "$@"; }
decode() { protoc --decode=perfetto.protos.Trace -I "$SCHEMA" "$PROTO"; }
decode_file() { memo -s "$1" protoc --decode=perfetto.protos.Trace -I "$SCHEMA" "$PROTO"; }

w="$OUT/t1200"
rm -rf "$w"
mkdir -p "$w"

# ---- the synthetic trace, plain and gzip ----
n=300
[ -n "${VALGRIND:-}" ] && n=60
if $SYNTH -n $n -s 7 "$w/synth.pftrace" >"$w/expect.json" 2>"$w/synth.err" &&
	$SYNTH -n $n -s 7 "$w/synth.pftrace.gz" >"$w/expect-gz.json" 2>>"$w/synth.err"; then
	pass "perfetto-synth writes the trace plain and gzip"
else
	fail "perfetto-synth: $(head -n 3 "$w/synth.err")"
	exit 0
fi
if [ "$(head -c 2 "$w/synth.pftrace.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
	gzip -dc "$w/synth.pftrace.gz" | cmp -s - "$w/synth.pftrace"; then
	pass "the .gz output is gzip and holds the same bytes as the plain one"
else
	fail "the .gz output is not the plain trace gzipped"
fi

# ---- protoc decodes it with the schema ----
if decode_file "$w/synth.pftrace" >"$w/decoded.txt" 2>"$w/decode.err"; then
	packets=$(grep -c '^packet {' "$w/decoded.txt")
	want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["writer"]["packets"])' "$w/expect.json")
	if [ "$packets" = "$want" ]; then
		pass "protoc --decode=perfetto.protos.Trace decodes all $packets packets"
	else
		fail "protoc decodes $packets packets, the writer wrote $want"
	fi
else
	fail "protoc --decode: $(head -n 3 "$w/decode.err")"
fi
if gzip -dc "$w/synth.pftrace.gz" | decode >/dev/null 2>&1; then
	pass "protoc decodes the gunzipped .gz output"
else
	fail "protoc cannot decode the gunzipped .gz output"
fi

# ---- the checker passes it, and its summary matches the generator's numbers ----
if check "$w/synth.pftrace" >"$w/summary.json" 2>"$w/check.err"; then
	pass "perfetto-check finds nothing wrong in the synthetic trace"
else
	fail "perfetto-check on the synthetic trace: $(head -n 3 "$w/check.err")"
fi
if check "$w/synth.pftrace.gz" >"$w/summary-gz.json" 2>"$w/check-gz.err" &&
	cmp -s "$w/summary.json" "$w/summary-gz.json"; then
	pass "perfetto-check reads the .gz output and finds the same"
else
	fail "perfetto-check on the .gz output: $(head -n 3 "$w/check-gz.err")"
fi

"$PY" - "$w/expect.json" "$w/summary.json" <<'EOF'
import json, sys
exp = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
t = got["tracks"]
def check(what, want, have):
    print("%s: %s%s" % ("PASS" if want == have else "FAIL", what,
                        "" if want == have else ": want %r, got %r" % (want, have)))
w = exp["writer"]
check("summary: packets and bytes as the writer counted", (w["packets"], w["bytes"]),
      (got["packets"], got["bytes"]))
check("summary: one sequence, primary clock MONOTONIC (3)", ([1], 3),
      (got["sequences"], got["primary_clock"]))
check("summary: wall clock of the first event 1700000000.123456789 s",
      1700000000123456789, got["first_ts"] + got["realtime_offset_ns"])
for dev, e in exp["devices"].items():
    lanes = t.get(dev + " > I/O", {})
    check("%s: %d I/Os on %d lanes (the most in flight at once)" % (dev, e["ios"], e["lanes"]),
          (e["ios"], e["lanes"], e["io_total_ns"], 0),
          (lanes.get("depth0", {}).get("count"), lanes.get("uuids"),
           lanes.get("depth0", {}).get("total_ns"), lanes.get("open", 0)))
    if e["stages"]:
        stages = {k: v["total_ns"] for k, v in lanes["names"].items() if k in e["stages"]}
        check("%s: stage slices inside the I/Os, total time of each" % dev, e["stages"], stages)
        counts = {k: v["count"] for k, v in lanes["names"].items() if k in e["stages"]}
        check("%s: one slice of each stage per I/O, nested in it (depth 2)" % dev,
              ({k: e["ios"] for k in e["stages"]}, 2), (counts, lanes.get("max_depth")))
    infl = t.get(dev + " > in flight", {})
    check("%s: in flight back to 0, one value per dispatch and completion" % dev,
          (0, 0, 2 * e["ios"]), (infl.get("last"), infl.get("min"), infl.get("values")))
    if e["stages"]:
        q = t.get(dev + " > queued", {})
        check("%s: queued back to 0 (+1 at Q, -1 at D)" % dev, (0, 2 * e["ios"]),
              (q.get("last"), q.get("values")))
    iops = t.get(dev + " > IOPS", {})
    check("%s: IOPS windows add up to the I/Os (1 ms windows)" % dev, e["ios"] * 1000,
          iops.get("sum"))
check("flows: every queued instant and dm-0 I/O reaches its I/O",
      {"started": exp["flows"], "completed": exp["flows"], "open": 0}, got["flows"])
check("instants: unplug, requeue, messages",
      (exp["unplugs"], exp["requeues"], exp["messages"]),
      (t["8,0 (sda)"]["instants"]["unplug"], t["8,16 (sdb) > I/O"]["instants"]["requeue"],
       sum(t[d].get("instants", {}).get("message", 0) for d in exp["devices"])))
proc = t.get("fio [pid 4321]", {})
check("process track: one queued instant per I/O the process issued",
      sum(e["ios"] for d, e in exp["devices"].items() if d != "8,16 (sdb)") +
      exp["devices"]["8,16 (sdb)"]["ios"] // 2, proc.get("instants", {}).get("queued"))
check("args: sector, bytes, rwbs, pid, process on every I/O; remapped-from on dm-0's",
      [sum(e["ios"] for e in exp["devices"].values())] * 5 + [exp["devices"]["253,0 (dm-0)"]["ios"]],
      [got["args"].get(k) for k in ("sector", "bytes", "rwbs", "pid", "process", "remapped-from")])
EOF

# size: bytes per I/O and per event of the equivalent blktrace trace (Q G I D C per I/O,
# Q A C for a dm-0 I/O; a binary trace takes about 48 bytes an event). The descriptors weigh
# more in the smaller trace of the valgrind run, so the bound holds for the full one only.
if [ -n "${VALGRIND:-}" ]; then
	skip "size per event under valgrind (it writes $n I/Os a device, the bound is for 300)"
else
	"$PY" - "$w/expect.json" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
ios = sum(d["ios"] for d in e["devices"].values())
dm = e["devices"]["253,0 (dm-0)"]["ios"]
events = 5 * (ios - dm) + 3 * dm
b = e["writer"]["bytes"]
per = b / events
print("%s: size: %d bytes, %d packets (%.1f bytes each), %.1f bytes per I/O, %.1f per blktrace event (at most 56)"
      % ("PASS" if per <= 56 else "FAIL", b, e["writer"]["packets"], b / e["writer"]["packets"],
         b / ios, per))
EOF
fi

# ---- the checker fails on broken files, each for its reason ----
while read -r kind why; do
	f="$w/broken-$kind.pftrace"
	if ! $SYNTH --broken "$kind" "$f" 2>"$w/broken.err"; then
		fail "perfetto-synth --broken $kind: $(head -n 1 "$w/broken.err")"
		continue
	fi
	check "$f" >/dev/null 2>"$f.err"
	rc=$?
	if [ $rc = 1 ] && grep -q -- "$why" "$f.err"; then
		pass "perfetto-check fails on $kind: $(head -n 1 "$f.err" | sed 's/^[^:]*: [^:]*: //')"
	else
		fail "perfetto-check on $kind: exit $rc, want 1 with '$why': $(head -n 2 "$f.err")"
	fi
done <<'EOF'
end-without-begin slice end on track 1 ('t') with no slice open
undescribed-track begin on track 3, which is not described
undefined-iid event_names iid 2 used before it is defined
iid-on-other-sequence event_names iid 1 used before it is defined on this sequence
flow-one-end flow 77 has only one end
counter-on-slice-track counter value on track 1 ('t'), which is not a counter track
slice-on-counter-track instant on counter track 2
time-backwards end on track 1 ('t') at 4000, before its previous event at 6000
no-incremental-state needs incremental state on sequence 3 before SEQ_INCREMENTAL_STATE_CLEARED
unclosed-slice ends with 1 slice(s) open
truncated runs past the end of the file
EOF
# an open slice is allowed when asked for
if check --allow-open "$w/broken-unclosed-slice.pftrace" >"$w/open.json" 2>/dev/null &&
	grep -q '"open": 1' "$w/open.json"; then
	pass "perfetto-check --allow-open accepts an open slice and counts it"
else
	fail "perfetto-check --allow-open on an open slice"
fi
# protoc itself finds nothing wrong with most broken files: it checks the wire format only
if decode <"$w/broken-end-without-begin.pftrace" >/dev/null 2>&1 &&
	! decode <"$w/broken-truncated.pftrace" >/dev/null 2>&1; then
	pass "protoc decodes a file with an end without begin, not a truncated one (why the checker exists)"
else
	fail "protoc on the broken files"
fi
