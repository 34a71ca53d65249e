#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost of blktrace --iowait on this host, natively (the sched source: the one a
# locked-down kernel without kprobes or modules offers): a loop device over a file in the
# page cache, one dd reading it with O_DIRECT 4 KiB reads (each read an I/O wait), runs
# interleaved: no tracer, blktrace (tracefs blk tracer), blktrace --iowait.
# Per configuration: the reads per second (mean, and its loss against no tracer), the
# tracer's CPU (user + system) per read, the waits recorded.
#
#   bench/bench-iowait-host.sh [--reads N] [--runs N]   (root; takes the tests' kernel lock)
#
# Environment: OURS (default ./blktrace). Exit 0 done, 1 a run failed, 2 usage, 77 cannot
# run here (not root, no loop device, no tracefs).
set -u
cd "$(dirname "$0")/.." || exit 1
prog=bench-iowait-host
OURS=${OURS:-./blktrace}
reads=20000 runs=3
while [ $# -gt 0 ]; do
	case $1 in
	--reads) reads=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	*) sed -n '3,14p' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$prog: SKIP: needs root" >&2; exit 77; }
[ -x "$OURS" ] || { echo "$prog: '$OURS' not found; run 'make blktrace' first" >&2; exit 1; }

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

one() { # config run -> "config reads_per_s cpu_ticks waits"
	local c=$1 d=$TMP/$1-$2 bt= t0 t1 args=()
	mkdir -p "$d"
	case $c in
	blk) args=(-d "$loop") ;;
	iowait) args=(-d "$loop" --iowait) ;;
	esac
	if [ $c != none ]; then
		(cd "$d" && exec /usr/bin/time -f "%U %S" -o time.txt "$TOP_OURS" "${args[@]}" >summary.txt 2>err.txt) &
		bt=$!
		# recording: the blk tracer on, and for --iowait its instance
		for _ in $(seq 100); do
			[ "$(cat "$T/tracing_on")" = 1 ] && { [ $c = blk ] || grep -qs '^1' "$T"/instances/blktrace-iowait-*/tracing_on; } && break
			sleep 0.05
		done
		sleep 0.2
	fi
	t0=$(date +%s.%N)
	dd if="$loop" of=/dev/null bs=4096 count="$reads" iflag=direct 2>/dev/null
	t1=$(date +%s.%N)
	if [ -n "$bt" ]; then
		# the tracer is /usr/bin/time's child (time ignores SIGINT)
		kill -INT $(cat /proc/$bt/task/$bt/children) 2>/dev/null
		wait $bt || { echo "$prog: $c run $2: the tracer failed: $(head -c 200 "$d/err.txt")" >&2; return 1; }
	fi
	awk -v c="$c" -v n="$reads" -v a="$t0" -v b="$t1" -v f="$d/time.txt" -v s="$d/summary.txt" 'BEGIN {
		cpu = 0; if ((getline l < f) > 0) { split(l, x, " "); cpu = x[1] + x[2] }
		w = 0; while ((getline l < s) > 0) if (l ~ /Total:.* waits/) { split(l, y, " "); w = y[2] }
		printf "%s %.1f %.3f %d\n", c, n / (b - a), cpu, w }'
}
TOP_OURS=$(readlink -f "$OURS")
rows=$TMP/rows
: >"$rows"
for r in $(seq "$runs"); do
	for c in none blk iowait; do
		echo "$prog: $c, run $r ..." >&2
		one $c "$r" >>"$rows" || exit 1
	done
done
echo "blktrace --iowait (sched source) on $(uname -r), $(nproc) CPUs: dd O_DIRECT 4 KiB x $reads from a loop device, $runs runs each"
awk -v n="$reads" '{ k = $1; c[k]++; iops[k] += $2; cpu[k] += $3; w[k] += $4; if (!(k in s)) { s[k] = 1; o[++m] = k } }
	END {
		printf "%-7s %10s %7s %14s %8s\n", "config", "reads/s", "loss%", "tracer_us/read", "waits"
		for (i = 1; i <= m; i++) { k = o[i]; v = iops[k] / c[k]
			printf "%-7s %10.0f %7.2f %14s %8.0f\n", k, v, 100 * (iops["none"] / c["none"] - v) / (iops["none"] / c["none"]),
				k == "none" ? "-" : sprintf("%.2f", cpu[k] / c[k] * 1e6 / n), w[k] / c[k] }
	}' "$rows"
