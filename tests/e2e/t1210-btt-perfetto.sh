#!/bin/bash
# btt --perfetto=FILE (issues 14, 36): every bundled trace, a synthetic one (gentrace: two disks,
# partitions, requeues, splits, messages), overlapping reads, bios that never complete and a dm
# device stacked on a disk (tests/gen/dmtrace.py) exported; protoc decodes each export with the
# shared schema, tests/gen/perfetto-check.py checks what the trace processor relies on, and
# tests/gen/perfetto-btt.py compares the export with the blkparse text: every Q with a size one
# bio slice, each split bio's pieces (the text's D over it), the counters (D/R/C steps of "in
# driver", completions and bytes per window), unplug/requeue/message instants. Then: btt's
# report is the same with the option, .gz output, a damaged trace (the error names file and
# offset, the export written so far is a valid closed trace), a file that cannot be created. As
# root, live traces too: fio at queue depth 64 (two jobs, mixed sizes, overlapping) on a loop
# device, every I/O it issued seen; and 128 KiB reads through 16 KiB requests, every bio split.
. "$(dirname "$0")/../lib.sh"

SCHEMA="$SHARED_DIR/perfetto"
CHECK="$TOP/tests/gen/perfetto-check.py"
CMP="$TOP/tests/gen/perfetto-btt.py"
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"

perfetto_tools "btt --perfetto" || exit 0
decode() { protoc --decode=perfetto.protos.Trace -I "$SCHEMA" "$PROTO"; }
decode_file() { memo -s "$1" protoc --decode=perfetto.protos.Trace -I "$SCHEMA" "$PROTO"; }

w="$OUT/t1210"
rm -rf "$w"
mkdir -p "$w"

# export NAME MERGED TEXT [btt options]: export, decode, check, compare
export_one() {
	local t=$1 bin=$2 txt=$3 d="$w/$1"
	shift 3
	mkdir -p "$d"
	if ! (cd "$d" && $BTT -i "$bin" -q q "$@" >plain.txt 2>/dev/null &&
		$BTT -i "$bin" -q q "$@" --perfetto="$d/$t.pftrace" >btt.txt 2>btt.err); then
		fail "$t: btt --perfetto: $(head -n 3 "$d/btt.err")"
		return 1
	fi
	check_same "$t: btt's report is the same with --perfetto" "$d/plain.txt" "$d/btt.txt"
	if decode_file "$d/$t.pftrace" >"$d/decoded.txt" 2>"$d/decode.err"; then
		pass "$t: protoc --decode=perfetto.protos.Trace decodes the export ($(grep -c '^packet {' "$d/decoded.txt") packets)"
	else
		fail "$t: protoc --decode: $(head -n 3 "$d/decode.err")"
	fi
	if memo -o "$d/dump.json" "$PY" "$CHECK" --schema "$SCHEMA" --dump "$d/dump.json" "$d/$t.pftrace" >"$d/summary.json" 2>"$d/check.err"; then
		pass "$t: perfetto-check finds nothing wrong in the export"
	else
		fail "$t: perfetto-check: $(head -n 3 "$d/check.err")"
		return 1
	fi
	"$PY" "$CMP" --name "$t" --dump "$d/dump.json" --summary "$d/summary.json" --q2c "$d/q" \
		--report "$d/btt.txt" --blkparse "$txt" 2>"$d/cmp.err" ||
		fail "$t: perfetto-btt.py could not compare: $(tail -n 2 "$d/cmp.err")"
}

# ---- the bundled traces ----
for t in $(bundled_traces); do
	d=$(unpack "$t")
	export_one "$t" "$d/$t.bin" "$d/$t.blkparse.txt"
	# a trace of completions only: each C is a bio drawn (issue 36), a slice for a 48-byte record
	"$PY" - "$t" "$d/$t.bin" "$w/$t/$t.pftrace" <<'EOF'
import os, sys
t, b, p = sys.argv[1:]
nb, np = os.path.getsize(b), os.path.getsize(p)
most = 1.6 if t == "complete-only" else 1
print("%s: %s: export %d bytes for a merged trace of %d (%.2fx; the target is at most %gx)"
      % ("PASS" if np <= nb * most else "FAIL", t, np, nb, np / nb, most))
EOF
done
skip_vg_traces "btt --perfetto"

# what cannot be drawn is said
if grep -q "device 252,0 has completions only (25000 C, no Q events): each is drawn as a bio of its own" "$w/complete-only/btt.err" 2>/dev/null; then
	pass "complete-only: stderr says its I/Os are drawn from their completions alone"
elif [ -d "$w/complete-only" ]; then
	fail "complete-only: no remark on stderr: $(head -n 2 "$w/complete-only/btt.err")"
fi
if grep -q "3089 bios remapped from a device without bios in flight" "$w/part-remap/btt.err" 2>/dev/null &&
	[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["args"].get("remapped-from"))' "$w/part-remap/summary.json")" = 3089 ]; then
	pass "part-remap: each remapped I/O says where it came from (3089 'remapped-from'), stderr why there is no flow"
elif [ -d "$w/part-remap" ]; then
	fail "part-remap: remapped-from arguments or the remark: $(head -n 2 "$w/part-remap/btt.err")"
fi

# ---- synthetic: two disks with partitions, requeues and messages; a dm device ----
n=40000
[ -n "${VALGRIND:-}" ] && n=4000
# gen_trace DIR DISKS [gentrace options]: DIR/gen.bin merged by blkparse -d, DIR/gen.txt its text
gen_trace() {
	local g=$1 ndisk=$2 ins=() k
	shift 2
	mkdir -p "$g"
	for ((k = 0; k < ndisk; k++)); do ins+=(-i "gen$k"); done
	"$TOP/tests/gen/gentrace" -d "$ndisk" "$@" -o gen -D "$g" >/dev/null &&
		(cd "$g" && "$TOP/blkparse" "${ins[@]}" -d gen.bin -O >/dev/null &&
			"$TOP/blkparse" "${ins[@]}" >gen.txt)
}
g="$w/gen"
gen_trace "$g" 2 -c 2 -n $n -s 5
export_one gen "$g/gen.bin" "$g/gen.txt"
if ! "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["tracks"]; sys.exit(not (sum(v.get("instants", {}).get("requeue", 0) for v in d.values()) and sum(v.get("instants", {}).get("message", 0) for v in d.values())))' "$w/gen/summary.json"; then
	fail "gen: the synthetic trace has no requeue or message instant to compare"
fi
# three disks, three CPUs' files, big-endian: I/Os still queued at the trace's last time, the
# last of them queued at that very time (its slice, 1 ns wide, ends after the others': the
# 'queued' counter went back to 0 at that time, one I/O too early, when its end's count was
# the one counted in btt's order instead of the drawing's)
g="$w/gen-end"
gen_trace "$g" 3 -c 3 -n 41000 -s 14 --big-endian
if [ "$(awk '$1 == "8,16" { a = $6 } END { print a }' "$g/gen.txt")" = Q ]; then
	export_one gen-end "$g/gen.bin" "$g/gen.txt"
else
	fail "gen-end: 8,16's last event is not a Q (gentrace changed?)"
fi
# overlapping reads: btt's model gives an I/O the G of the one inside it, after its D, and
# loses the inner one; the bios model (issue 36) draws both reads of each pair, each with its
# own G: no stage left out
"$PY" "$TOP/tests/gen/overlaptrace.py" 30 "$w/overlap.bin"
"$TOP/blkparse" -i "$w/overlap.bin" >"$w/overlap.txt"
export_one overlap "$w/overlap.bin" "$w/overlap.txt"
if ! grep -q "stages .* are not drawn" "$w/overlap/btt.err" &&
	[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tracks"]["8,0 > I/O"]["names"]["Q2G"]["count"])' "$w/overlap/summary.json")" = 60 ]; then
	pass "overlap: the 60 reads drawn, each with its Q2G stage, none left out"
else
	fail "overlap: stages left out, or not 60 Q2G: $(head -n 2 "$w/overlap/btt.err")"
fi
# bios that never complete (issue 36): one whose C is not in the trace, given up 60 s on, and
# one in flight at the end: on 'I/O not completed', each with its cause, stderr counting them
"$PY" "$TOP/tests/gen/stalebios.py" "$w/stale.bin"
"$TOP/blkparse" -i "$w/stale.bin" >"$w/stale.txt"
export_one stale "$w/stale.bin" "$w/stale.txt"
if grep -q "'$w/stale/stale.pftrace': 1 bios in flight for more than 60 s (their completion not in the trace) were given up" "$w/stale/btt.err" &&
	grep -q "'$w/stale/stale.pftrace': 1 bios still in flight when the trace ended are on 'I/O not completed' tracks" "$w/stale/btt.err" &&
	[ "$("$PY" -c 'import json, sys
print(sorted((s[6]["sector"], s[6]["lost"]) for s in json.load(open(sys.argv[1]))["slices"]
             if s[0] == "8,0 > I/O not completed" and s[4] == 0))' "$w/stale/dump.json")" = \
	"[(1000, 'given up: in flight for more than 60 s (BIOS_STALE_NS)'), (20000, 'still in flight when the trace ended')]" ]; then
	pass "stale: the bio without its C given up after 60 s, the one in flight at the end: each its cause, on stderr and in 'lost'"
else
	fail "stale: the causes of the bios not completed: $(head -n 2 "$w/stale/btt.err")"
fi
"$PY" "$TOP/tests/gen/dmtrace.py" 20 "$w/dm.bin"
"$TOP/blkparse" -i "$w/dm.bin" >"$w/dm.txt"
export_one dm "$w/dm.bin" "$w/dm.txt"
"$PY" - "$w/dm/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
def check(what, want, have):
    print("%s: dm: %s%s" % ("PASS" if want == have else "FAIL", what,
                            "" if want == have else ": want %r, got %r" % (want, have)))
check("20 flows from dm-0's I/Os to the I/Os they became on 8,0, 40 from the process",
      {"started": 60, "completed": 60, "open": 0}, s["flows"])
check("the 8,0 I/Os say where they came from", 20, s["args"].get("remapped-from"))
t = s["tracks"]["253,0 > I/O"]["names"]
check("dm-0's I/Os: Q2A and A2C stages", (20, 20), (t["Q2A"]["count"], t["A2C"]["count"]))
check("clock snapshot: the TN_TIMESTAMP note's wall clock 1700000000.25 s at trace time 0",
      1700000000250000000, s["realtime_offset_ns"] + s["first_ts"])
check("the message note is an instant on 8,0", {"message": 1}, s["tracks"]["8,0"].get("instants"))
EOF

# the clock snapshot dates the first event as blkparse's %z does (a merged, rebased trace)
d=$(unpack ext4-mixed)
z=$(TZ=UTC "$TOP/blkparse" -i "$d/ext4-mixed.bin" -f "%z\n" 2>/dev/null | head -n 1)
ours=$("$PY" -c 'import json,sys,time; s=json.load(open(sys.argv[1])); ns=s["realtime_offset_ns"]+s["first_ts"]; print(time.strftime("%H:%M:%S", time.gmtime(ns // 10**9)) + ".%06d" % (ns % 10**9 // 1000))' "$w/ext4-mixed/summary.json" 2>/dev/null)
if [ -n "$z" ] && [ "$z" = "$ours" ]; then
	pass "ext4-mixed: the clock snapshot dates the first event at $ours, as blkparse's %z"
else
	fail "ext4-mixed: the clock snapshot dates the first event at '$ours', blkparse's %z says '$z'"
fi

# ---- gzip ----
if $BTT -i "$d/ext4-mixed.bin" --perfetto="$w/ext4.pftrace.gz" >/dev/null 2>&1 &&
	[ "$(head -c 2 "$w/ext4.pftrace.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
	gzip -dc "$w/ext4.pftrace.gz" | cmp -s - "$w/ext4-mixed/ext4-mixed.pftrace"; then
	pass "--perfetto=FILE.gz writes gzip, the same trace as the plain file"
else
	fail "--perfetto=FILE.gz is not the plain export gzipped"
fi

# ---- a damaged trace: the usual error, and a valid closed export of what came before ----
cut=$((48 * 3000 + 17))
head -c $cut "$d/ext4-mixed.bin" >"$w/cut.bin"
$BTT -i "$w/cut.bin" --perfetto="$w/cut.pftrace" >/dev/null 2>"$w/cut.err"
rc=$?
if [ $rc = 1 ] && grep -q "cut.bin" "$w/cut.err" && grep -qi "offset" "$w/cut.err"; then
	pass "damaged trace: exit 1, the error names the file and the offset: $(head -n 1 "$w/cut.err")"
else
	fail "damaged trace: exit $rc: $(head -n 2 "$w/cut.err")"
fi
if memo "$PY" "$CHECK" --schema "$SCHEMA" "$w/cut.pftrace" >"$w/cut.json" 2>"$w/cut.check" &&
	decode <"$w/cut.pftrace" >/dev/null 2>&1 &&
	[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tracks"]["254,16 > I/O"]["depth0"]["count"])' "$w/cut.json")" -gt 100 ]; then
	pass "damaged trace: the export of what came before decodes and passes the checker"
else
	fail "damaged trace: the export is not a valid closed trace: $(head -n 2 "$w/cut.check")"
fi
# garbage in the middle: the magic of record 2000
GEN="$TOP/tests/gen" "$PY" - "$d/ext4-mixed.bin" "$w/bad.bin" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["GEN"])
import blkrec
data = bytearray(open(sys.argv[1], "rb").read())
off = [r.offset for r in blkrec.records(bytes(data))][2000]
data[off:off + 4] = b"XXXX"
open(sys.argv[2], "wb").write(data)
EOF
$BTT -i "$w/bad.bin" --perfetto="$w/bad.pftrace" >/dev/null 2>"$w/bad.err"
rc=$?
if [ $rc = 1 ] && "$PY" "$CHECK" --schema "$SCHEMA" "$w/bad.pftrace" >/dev/null 2>&1; then
	pass "bad magic in the middle: exit 1 ($(head -n 1 "$w/bad.err")), the export is valid"
else
	fail "bad magic in the middle: exit $rc, or an invalid export: $(head -n 2 "$w/bad.err")"
fi

# ---- a file that cannot be created: one message in the house style, before reading ----
$BTT -i "$d/ext4-mixed.bin" --perfetto=/nonexistent/dir/x.pftrace >"$w/nodir.out" 2>"$w/nodir.err"
rc=$?
if [ $rc = 1 ] && [ ! -s "$w/nodir.out" ] &&
	[ "$(head -n 1 "$w/nodir.err")" = "btt: cannot create Perfetto trace '/nonexistent/dir/x.pftrace': No such file or directory" ] &&
	grep -q '^hint: ' "$w/nodir.err" && [ "$(wc -l <"$w/nodir.err")" = 2 ]; then
	pass "an uncreatable --perfetto file: exit 1 before the report, one error and a hint"
else
	fail "an uncreatable --perfetto file: exit $rc: $(cat "$w/nodir.err")"
fi

# ---- live traces: fio at queue depth 64 on a loop device, overlapping I/Os of mixed sizes;
# and 128 KiB reads through a queue of 16 KiB requests (every bio split) ----
# (real kernel events, as a user records them: on such a trace the model gives some I/Os an
# overlapping one's G after their D, which the synthetic traces above had not shown)
# live NAME MAX_SECTORS_KB FIO-OPTIONS...: NAME's trace (max_sectors_kb of the loop device:
# 0 leaves it)
live() {
	local t=$1 kb=$2 lw="$w/$1" loop name r q
	shift 2
	if ! is_root; then
		skip "$t: btt --perfetto on a live trace (needs root for a loop device and tracefs)"
		return
	fi
	if [ -n "${VALGRIND:-}" ] || ! command -v fio >/dev/null; then
		skip "$t: btt --perfetto on a live trace (${VALGRIND:+under valgrind: the tracer and fio run natively in the plain and ASan runs}${VALGRIND:-no fio})"
		return
	fi
	kernel_lock
	mkdir -p "$lw/tr"
	truncate -s 64M "$lw/disk.img"
	loop=$(loop_attach --direct-io=on "$lw/disk.img" 2>/dev/null)
	if [ -z "$loop" ]; then
		skip "$t: btt --perfetto on a live trace (losetup failed)"
		return
	fi
	name=$(basename "$loop")
	[ "$kb" = 0 ] || echo "$kb" >"/sys/block/$name/queue/max_sectors_kb"
	trap 'losetup -d "$loop" 2>/dev/null' EXIT
	"$TOP/blktrace" -d "$loop" -D "$lw/tr" -w 8 >"$lw/bt.out" 2>"$lw/bt.err" &
	r=$!
	if ! wait_tracing; then
		kill "$r" 2>/dev/null
		wait "$r"
		losetup -d "$loop"
		trap - EXIT
		skip "$t: btt --perfetto on a live trace (no tracefs blk tracer: $(tail -n 1 "$lw/bt.err"))"
		return
	fi
	fio --name="$t" --filename="$loop" --direct=1 --ioengine=libaio --group_reporting "$@" \
		--output-format=json >"$lw/fio.out" 2>"$lw/fio.err"
	kill -INT "$r" 2>/dev/null
	wait "$r"
	losetup -d "$loop"
	trap - EXIT
	kernel_unlock
	if ! grep -q "Total: .* events (dropped 0)" "$lw/bt.out"; then
		fail "$t: the tracer dropped events or failed: $(grep Total "$lw/bt.out") $(tail -n 1 "$lw/bt.err")"
		return
	fi
	(cd "$lw/tr" && "$TOP/blkparse" -i "$name" -d ../live.bin -O >/dev/null &&
		"$TOP/blkparse" -i "$name" >../live.txt) 2>"$lw/bp.err" ||
		{ fail "$t: blkparse: $(head -n 2 "$lw/bp.err")"; return; }
	# every I/O fio issued was seen queued
	q=$(awk '$6 == "Q" { n++ } END { print n + 0 }' "$lw/live.txt")
	ios=$("$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["total_ios"] + j["write"]["total_ios"])' "$lw/fio.out" 2>/dev/null)
	if [ "$q" = "$ios" ] && [ "$ios" -gt 0 ]; then
		pass "$t: all $ios I/Os fio issued were traced (Q events)"
	else
		fail "$t: fio issued '$ios' I/Os, the trace has $q Q events"
	fi
	export_one "$t" "$lw/live.bin" "$lw/live.txt"
}
live live 0 --iodepth=64 --numjobs=2 --rw=randrw --bssplit=4k/50:16k/20:64k/20:128k/10 \
	--size=8M --io_size=160M --randseed=7
# every bio split (issue 36): 128 KiB reads through requests of at most 16 KiB, 8 pieces each;
# btt's model completed none of them
live live-split 16 --iodepth=8 --rw=randread --bs=128k --size=32M --io_size=64M --randseed=7
if [ -f "$w/live-split/dump.json" ]; then
	"$PY" - "$w/live-split/dump.json" <<'EOF'
import json, sys
sl = [s for s in json.load(open(sys.argv[1]))["slices"] if s[4] == 0]
bios = [s for s in sl if s[0].endswith("> I/O")]
pieces = [s for s in sl if s[0].endswith("> I/O pieces")]
lost = [s for s in sl if s[0].endswith("> I/O not completed")]
ok = bios and all(s[6].get("pieces") == 8 and "split" in s[6].get("bio", "") for s in bios) and \
    len(pieces) == 8 * len(bios) and not lost
print("%s: live-split: %d bios of 128 KiB completed, each split with 8 pieces of 16 KiB inside "
      "(%d piece slices), none on 'I/O not completed' (%d)"
      % ("PASS" if ok else "FAIL", len(bios), len(pieces), len(lost)))
EOF
fi
