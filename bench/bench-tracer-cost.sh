#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What tracing costs a fast workload on this host (the tracefs backend: kernel lockdown):
# a loop device over a file in /dev/shm (the page cache), fio libaio 4 KiB random reads,
# iodepth 32, 2 jobs, --seconds each (default 8), the configurations interleaved for --runs
# rounds (default 3):
#   none      not traced
#   kernel    the kernel's blk tracer on with nobody reading (current_tracer blk, the
#             device's trace/enable, tracing_on, set by hand): the kernel's own cost
#   base      BASE's blktrace (a build of another tree: the read path before a change)
#   ours      blktrace -d DEV, per-CPU files (in /dev/shm)
#   iowait    blktrace -d DEV --iowait
#   pipe      blktrace -d DEV -o - | blkparse -i - >/dev/null
# Each round starts one configuration further on (the order rotates). Per configuration,
# medians over the rounds: IOPS, the loss against none, that loss over
# the kernel's own loss (the goal: at most 1.1), the events recorded and dropped, the
# tracer's CPU (user + system of blktrace, from /usr/bin/time; blkparse's apart) and its CPU
# per event, and the same for its CPU while the workload ran (live_s, read from /proc just
# before it is stopped: what it took from the workload; per-CPU files are converted from the
# kept pages after that). The machine may be shared: the load average is printed before and after, and
# every round's IOPS, and each round's own ratio to the kernel's loss with their median.
#
#   bench/bench-tracer-cost.sh [--runs N] [--seconds S] [--configs "none kernel ..."]
#
# Environment: OURS (default ./blktrace), BLKPARSE (default ./blkparse), BASE (a second
# blktrace for config "base"; without it, "base" is left out).
# Exit 0 done, 1 a run failed, 2 usage, 77 cannot run here (not root, no loop device, no
# tracefs, no fio).
set -u
cd "$(dirname "$0")/.." || exit 1
prog=bench-tracer-cost
OURS=${OURS:-./blktrace}
BLKPARSE=${BLKPARSE:-./blkparse}
BASE=${BASE:-}
runs=3 seconds=8 configs=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?}; shift 2 ;;
	--seconds) seconds=${2:?}; shift 2 ;;
	--configs) configs=${2:?}; shift 2 ;;
	*) sed -n '3,27p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$configs" ] || configs="none kernel${BASE:+ base} ours iowait pipe"
[ "$(id -u)" = 0 ] || { echo "$prog: SKIP: needs root" >&2; exit 77; }
command -v fio >/dev/null || { echo "$prog: SKIP: no fio" >&2; exit 77; }
[ -x "$OURS" ] && [ -x "$BLKPARSE" ] || { echo "$prog: run 'make' first" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "$prog: BASE '$BASE' is not executable" >&2; exit 1; }

# tracefs and loop devices are shared with the tests: their locks
exec 8>/tmp/blktrace-ng.kernel.lock
flock -n 8 || { echo "$prog: waiting for the kernel lock (a test traces)" >&2; flock 8; }
TMP=$(mktemp -d /dev/shm/$prog.XXXXXX)
loop=
trap '[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null; rm -rf "$TMP"' EXIT
truncate -s 1G "$TMP/disk.img"
dd if=/dev/zero of="$TMP/disk.img" bs=1M count=1024 conv=notrunc status=none
loop=$( (flock 6; losetup -f --show "$TMP/disk.img") 6>/tmp/blktrace-ng.losetup.lock) ||
	{ echo "$prog: SKIP: losetup failed" >&2; exit 77; }
name=${loop##*/}
T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
[ -n "$T" ] || { echo "$prog: SKIP: no tracefs" >&2; exit 77; }
[ "$(cat "$T/current_tracer")" = nop ] || { echo "$prog: tracefs in use ($(cat "$T/current_tracer"))" >&2; exit 1; }

fio_run() { # -> IOPS
	fio --name=r --filename="$loop" --rw=randread --bs=4k --ioengine=libaio --iodepth=32 \
		--numjobs=2 --direct=1 --time_based --runtime="$seconds" --group_reporting \
		--output-format=json >"$1/fio.json" 2>"$1/fio.err" || return 1
	python3 -c 'import json, sys; print("%.0f" % json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' "$1/fio.json"
}

ring_events() { # events the ring took (entries + overrun over the CPUs)
	cat "$T"/per_cpu/cpu*/stats | awk '/^entries:|^overrun:/ { n += $2 } END { print n + 0 }'
}

wait_tracing() {
	for _ in $(seq 200); do
		[ "$(cat "$T/tracing_on")" = 1 ] && [ "$(cat "/sys/block/$name/trace/enable")" = 1 ] && break
		sleep 0.05
	done
	[ $1 = iowait ] && for _ in $(seq 200); do
		grep -qs '^1' "$T"/instances/blktrace-iowait-*/tracing_on && break
		sleep 0.05
	done
	sleep 0.3
}

tracer_of() { # PID -> the blktrace processes below it
	local p a
	for p in $(pgrep -x blktrace); do
		a=$p
		while [ "${a:-1}" -gt 1 ]; do
			[ "$a" = "$1" ] && { echo "$p"; break; }
			a=$(awk '{ print $4 }' "/proc/$a/stat" 2>/dev/null)
		done
	done
}

one() { # config round -> "config iops cpu_s events dropped parse_cpu_s"
	local c=$1 d=$TMP/$1-$2 bt= bin=$TOP_OURS args=() iops ev=0 on tr tp p
	mkdir -p "$d"
	case $c in
	none) ;;
	kernel)
		on=$(cat "$T/tracing_on") tr=$(cat "$T/current_tracer")
		echo 0 >"$T/tracing_on"
		echo 1 >"/sys/block/$name/trace/enable"
		echo blk >"$T/current_tracer"
		echo >"$T/trace"
		echo 1 >"$T/tracing_on"
		;;
	base) bin=$TOP_BASE args=(-d "$loop") ;;
	ours) args=(-d "$loop") ;;
	iowait) args=(-d "$loop" --iowait) ;;
	pipe) args=(-d "$loop" -o -) ;;
	esac
	if [ ${#args[@]} -gt 0 ]; then
		if [ $c = pipe ]; then
			(cd "$d" && /usr/bin/time -f "%U %S" -o time.txt "$bin" "${args[@]}" 2>err.txt |
				/usr/bin/time -f "%U %S" -o ptime.txt "$TOP_PARSE" -i - >/dev/null 2>perr.txt) &
		else
			(cd "$d" && exec /usr/bin/time -f "%U %S" -o time.txt "$bin" "${args[@]}" >out.txt 2>err.txt) &
		fi
		bt=$!
		wait_tracing $c
	fi
	iops=$(fio_run "$d") || { echo "$prog: $c round $2: fio failed: $(head -c 300 "$d/fio.err")" >&2; return 1; }
	if [ $c = kernel ]; then
		echo 0 >"$T/tracing_on"
		ev=$(ring_events)
		echo "$tr" >"$T/current_tracer"
		echo 0 >"/sys/block/$name/trace/enable"
		echo "$on" >"$T/tracing_on"
	elif [ -n "$bt" ]; then
		# the tracer is a child of /usr/bin/time (which ignores SIGINT), below $bt
		tp=$(tracer_of "$bt")
		# its CPU while the workload ran (what it took from it), before it ends
		for p in $tp; do awk '{ print $14 + $15 }' "/proc/$p/stat"; done |
			awk -v hz="$(getconf CLK_TCK)" '{ t += $1 } END { printf "%.2f\n", t / hz }' >"$d/live.txt"
		kill -INT $tp 2>/dev/null
		wait $bt
		cat "$d/out.txt" "$d/err.txt" 2>/dev/null | grep -q "Total:" || { echo "$prog: $c round $2: the tracer failed: $(head -c 300 "$d/err.txt")" >&2; return 1; }
	fi
	cat "$d/out.txt" "$d/err.txt" >"$d/summary.txt" 2>/dev/null
	awk -v c="$c" -v iops="$iops" -v ev="$ev" -v f="$d/time.txt" -v pf="$d/ptime.txt" -v s="$d/summary.txt" -v lf="$d/live.txt" 'BEGIN {
		live = 0; if ((getline l < lf) > 0) live = l + 0
		cpu = 0; if ((getline l < f) > 0) { split(l, x, " "); cpu = x[1] + x[2] }
		pcpu = 0; if ((getline l < pf) > 0) { split(l, x, " "); pcpu = x[1] + x[2] }
		drop = 0
		while ((getline l < s) > 0) if (l ~ /^  Total:.* events/) {
			split(l, y, " "); ev = y[2]; sub(/.*dropped /, "", l); drop = l + 0 }
		printf "%s %s %.2f %d %d %.2f %.2f\n", c, iops, cpu, ev, drop, pcpu, live }'
	rm -f "$d"/*.blktrace.* 2>/dev/null
}

TOP_OURS=$(readlink -f "$OURS")
TOP_PARSE=$(readlink -f "$BLKPARSE")
TOP_BASE=${BASE:+$(readlink -f "$BASE")}
rows=$TMP/rows
: >"$rows"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# a first fio run warms the loop device's pages
fio_run "$TMP" >/dev/null
# each round starts one configuration further on: a slot that is slower for a while (what
# else the machine runs) falls on each configuration in turn
read -ra order <<<"$configs"
for r in $(seq "$runs"); do
	for i in $(seq 0 $((${#order[@]} - 1))); do
		c=${order[$(((i + r - 1) % ${#order[@]}))]}
		echo "$prog: $c, round $r ..." >&2
		one $c "$r" >>"$rows" || exit 1
	done
done
echo "tracer cost on $(uname -r), $(nproc) CPUs: a loop device over /dev/shm, fio libaio randread 4 KiB, iodepth 32, 2 jobs, ${seconds} s; $runs interleaved rounds, medians; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after (the machine may be shared)"
[ -n "$BASE" ] && echo "base: $TOP_BASE; ours: $TOP_OURS"
python3 -c '
import statistics, sys
v = {}
for l in open(sys.argv[1]):
    c, iops, cpu, ev, drop, pcpu, live = l.split()
    v.setdefault(c, []).append((float(iops), float(cpu), int(ev), int(drop), float(pcpu), float(live)))
m = {c: [statistics.median(x[i] for x in xs) for i in range(6)] for c, xs in v.items()}
none = m.get("none", [0])[0]
kloss = none - m["kernel"][0] if "kernel" in m and none else None
print("%-7s %9s %7s %9s %10s %8s %9s %11s %7s %9s %9s" % ("config", "IOPS", "loss%", "x_kernel", "events", "dropped", "cpu_s", "us/event", "live_s", "live_us/e", "parse_s"))
for c in sys.argv[2].split():
    if c not in m:
        continue
    iops, cpu, ev, drop, pcpu, live = m[c]
    loss = "%.1f" % (100 * (none - iops) / none) if none and c != "none" else "-"
    ratio = "%.2f" % ((none - iops) / kloss) if kloss and c not in ("none", "kernel") else "-"
    per = "%.3f" % (cpu * 1e6 / ev) if ev and c not in ("none", "kernel") else "-"
    traced = c not in ("none", "kernel")
    lper = "%.3f" % (live * 1e6 / ev) if ev and traced else "-"
    print("%-7s %9.0f %7s %9s %10d %8d %9s %11s %7s %9s %9s" % (c, iops, loss, ratio, ev, drop,
        "%.2f" % cpu if traced else "-", per, "%.2f" % live if traced else "-", lper,
        "%.2f" % pcpu if c == "pipe" else "-"))
print("IOPS per round: " + "; ".join("%s %s" % (c, " ".join("%.0f" % x[0] for x in v[c])) for c in sys.argv[2].split() if c in v))
# the same ratio within each round (its own none and kernel, run next to it: a slow spell of a
# shared machine falls on all three), and its median: steadier than the ratio of medians
if "none" in v and "kernel" in v:
    per = {}
    for c in sys.argv[2].split():
        if c in v and c not in ("none", "kernel"):
            per[c] = [(n[0] - x[0]) / (n[0] - k[0]) for n, k, x in zip(v["none"], v["kernel"], v[c]) if n[0] > k[0]]
    print("x_kernel per round: " + "; ".join("%s %s (median %.2f)" % (c, " ".join("%.2f" % r for r in rs),
        statistics.median(rs)) for c, rs in per.items() if rs))
' "$rows" "$configs"
