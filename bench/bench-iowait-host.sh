#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost of blktrace --iowait on this host, natively (the sched source: the one a
# locked-down kernel without kprobes or modules offers): a loop device over a file in the
# page cache, one reader doing O_DIRECT 4 KiB reads (each read an I/O wait), runs
# interleaved: no tracer, blktrace (tracefs blk tracer), blktrace --iowait, and with BASE
# set, blktrace --iowait of that other build (before/after a change, in the same runs).
# Per configuration, medians over the runs: the reads per second (and the loss against no
# tracer and against blktrace), with --fio the median read latency (fio's clat p50: what
# the tracer adds to each read, much steadier than reads/s on a loaded machine), the
# tracer's CPU (user + system) per read and the waits recorded per 100 reads (both over
# the warm-up's reads and the workload's), the events or waits lost. The load average is
# printed before and after.
#
# Before each measured workload the reader reads for --warmup seconds (default 1.5, the
# same for every configuration): the tracer's steady state (its waking filter is learnt in
# the first second), not its start.
#
# --configs LIST picks the configurations (default "none blk iowait"); "origin" is blktrace
# --origin (the cgroup of each I/O, issue 39: blk_cgroup on, its notes written).
#
#   bench/bench-iowait-host.sh [--reads N] [--runs N] [--fio] [--warmup S] [--configs LIST]
#   (root; takes the tests' kernel lock)
#
# Environment: OURS (default ./blktrace), BASE (a second blktrace, config "base").
# Exit 0 done, 1 a run failed, 2 usage, 77 cannot run here (not root, no loop device, no
# tracefs, --fio without fio).
set -u
cd "$(dirname "$0")/.." || exit 1
prog=bench-iowait-host
OURS=${OURS:-./blktrace}
BASE=${BASE:-}
reads=20000 runs=3 fio=0 warmup=1.5 configs=
while [ $# -gt 0 ]; do
	case $1 in
	--reads) reads=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--fio) fio=1; shift ;;
	--warmup) warmup=${2:?}; shift 2 ;;
	--configs) configs=${2:?}; shift 2 ;;
	*) sed -n '3,25p' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$prog: SKIP: needs root" >&2; exit 77; }
[ -x "$OURS" ] || { echo "$prog: '$OURS' not found; run 'make blktrace' first" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "$prog: BASE '$BASE' is not executable" >&2; exit 1; }
[ $fio = 0 ] || command -v fio >/dev/null || { echo "$prog: SKIP: --fio: no fio" >&2; exit 77; }

# tracefs and loop devices are shared with the tests: their locks
exec 8>/tmp/blktrace-ng.kernel.lock
flock -n 8 || { echo "$prog: waiting for the kernel lock (a test traces)" >&2; flock 8; }
TMP=$(mktemp -d)
trap 'losetup -d "$loop" 2>/dev/null; rm -rf "$TMP"' EXIT
truncate -s $((reads * 4096 + 1048576)) "$TMP/disk.img"
loop=$( (flock 6; losetup -f --show "$TMP/disk.img") 6>/tmp/blktrace-ng.losetup.lock) ||
	{ echo "$prog: SKIP: losetup failed" >&2; exit 77; }
cat "$TMP/disk.img" >/dev/null # the backing file in the page cache
T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
[ -n "$T" ] || { mount -t tracefs none /sys/kernel/tracing 2>/dev/null && T=/sys/kernel/tracing; }
[ -n "$T" ] || { echo "$prog: SKIP: no tracefs" >&2; exit 77; }

workload() { # -> "reads_per_s clat_p50_ns" (clat "-" with dd)
	local t0 t1
	if [ $fio = 1 ]; then
		fio --name=r --filename="$loop" --direct=1 --rw=read --bs=4k --ioengine=psync \
			--size=$((reads * 4096)) --output-format=json >"$TMP/fio.json" 2>/dev/null || return 1
		python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.1f %d" % (r["iops"], r["clat_ns"]["percentile"]["50.000000"]))' "$TMP/fio.json"
	else
		t0=$(date +%s.%N)
		dd if="$loop" of=/dev/null bs=4096 count="$reads" iflag=direct 2>/dev/null || return 1
		t1=$(date +%s.%N)
		awk -v n="$reads" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f -\n", n / (b - a) }'
	fi
}

one() { # config run -> "config reads_per_s clat cpu_s waits lost"
	local c=$1 d=$TMP/$1-$2 bt= bin=$TOP_OURS args=() w warm
	mkdir -p "$d"
	case $c in
	blk) args=(-d "$loop") ;;
	iowait) args=(-d "$loop" --iowait) ;;
	origin) args=(-d "$loop" --origin) ;;
	base) args=(-d "$loop" --iowait) bin=$TOP_BASE ;;
	esac
	if [ $c != none ]; then
		(cd "$d" && exec /usr/bin/time -f "%U %S" -o time.txt "$bin" "${args[@]}" >summary.txt 2>err.txt) &
		bt=$!
		# recording: the blk tracer on, and for --iowait its instance
		for _ in $(seq 100); do
			[ "$(cat "$T/tracing_on")" = 1 ] && { { [ $c = blk ] || [ $c = origin ]; } || grep -qs '^1' "$T"/instances/blktrace-iowait-*/tracing_on; } && break
			sleep 0.05
		done
		sleep 0.2
	fi
	timeout -s INT "$warmup" dd if="$loop" of=/dev/null bs=4096 iflag=direct 2>"$d/warm.txt"
	warm=$(sed -n 's/^\([0-9]*\)+[0-9]* records in$/\1/p' "$d/warm.txt")
	w=$(workload) || { echo "$prog: $c run $2: the workload failed" >&2; return 1; }
	if [ -n "$bt" ]; then
		# the tracer is /usr/bin/time's child (time ignores SIGINT)
		kill -INT $(cat /proc/$bt/task/$bt/children) 2>/dev/null
		wait $bt || { echo "$prog: $c run $2: the tracer failed: $(head -c 200 "$d/err.txt")" >&2; return 1; }
	fi
	awk -v c="$c" -v w="$w" -v warm="${warm:-0}" -v f="$d/time.txt" -v s="$d/summary.txt" 'BEGIN {
		cpu = 0; if ((getline l < f) > 0) { split(l, x, " "); cpu = x[1] + x[2] }
		n = 0; lost = 0
		while ((getline l < s) > 0) if (l ~ /Total:.* waits/) { split(l, y, " "); n = y[2]; sub(/.*lost /, "", l); lost = l + 0 }
		printf "%s %s %.3f %d %d %d\n", c, w, cpu, n, lost, warm }'
}
TOP_OURS=$(readlink -f "$OURS")
TOP_BASE=${BASE:+$(readlink -f "$BASE")}
configs=${configs:-"none blk iowait${BASE:+ base}"}
rows=$TMP/rows
: >"$rows"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$runs"); do
	for c in $configs; do
		echo "$prog: $c, run $r ..." >&2
		one $c "$r" >>"$rows" || exit 1
	done
done
echo "blktrace ($configs) on $(uname -r), $(nproc) CPUs: $([ $fio = 1 ] && echo fio psync || echo dd) O_DIRECT 4 KiB x $reads from a loop device ($warmup s of reads before), $runs interleaved runs each, medians; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
[ -n "$BASE" ] && echo "base: $TOP_BASE; iowait: $TOP_OURS"
python3 -c '
import statistics, sys
reads = int(sys.argv[2])
v = {}
for l in open(sys.argv[1]):
    c, iops, clat, cpu, w, lost, warm = l.split()
    # the tracer ran through the warm-up too: its CPU and waits per read of both
    n = reads + int(warm)
    v.setdefault(c, []).append((float(iops), None if clat == "-" else int(clat), float(cpu) * 1e6 / n, 100.0 * int(w) / n, int(lost)))
med = lambda xs: statistics.median(xs) if xs else None
m = {c: [med([x[i] for x in xs if x[i] is not None]) for i in range(5)] for c, xs in v.items()}
print("%-7s %10s %7s %7s %9s %7s %14s %8s %7s" % ("config", "reads/s", "loss%", "vs_blk%", "clat_p50", "+ns", "tracer_us/read", "waits%", "lost"))
for c in v:
    iops, clat, cpu, w, lost = m[c]
    loss = lambda ref: "%.2f" % (100 * (m[ref][0] - iops) / m[ref][0]) if ref in m else "-"
    print("%-7s %10.0f %7s %7s %9s %7s %14s %8s %7.0f" % (
        c, iops, loss("none"), loss("blk") if c not in ("none", "blk") and "blk" in m else "-",
        "-" if clat is None else "%d" % clat,
        "-" if clat is None or m["none"][1] is None else "%+d" % (clat - m["none"][1]),
        "-" if c == "none" else "%.2f" % cpu, "-" if c in ("none", "blk", "origin") else "%.2f" % w, lost))
print("reads/s per run: " + "; ".join("%s %s" % (c, " ".join("%.0f" % x[0] for x in xs)) for c, xs in v.items()))
' "$rows" "$reads"
