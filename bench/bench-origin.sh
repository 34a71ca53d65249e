#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What blktrace --origin costs (issue 39): the tracer's CPU per I/O and the workload's time,
# with --origin and without, on ext4:
#   host  a loop device over a file in /dev/shm, on this machine's kernel (the tracefs
#         backend: a locked-down kernel has no relay files);
#   vm    the virtio disk of the tests' VM (tests/vm: Debian's 6.1 under qemu TCG, one boot for
#         every run), the relay backend and the tracefs backend.
# The workload is fixed: dd writes a file of --mb MiB in 4 KiB buffered writes, then sync;
# the caches dropped, dd reads it back in 64 KiB buffered reads, then 2048 of its 4 KiB
# blocks with O_DIRECT. The tracer writes per-CPU files.
# Configurations: tracefs, tracefs+origin (host and vm), relay, relay+origin (vm); --runs
# runs of each (default 3), the order of the configurations rotated from round to round.
# Per configuration, medians: the workload's seconds; the tracer's CPU seconds (user +
# system, all its threads) during the workload and from start to exit (the tracefs backend
# converts its pages after the stop, --origin's instance beside relay as it reads them); per
# I/O (the Q events in the trace, counted by our blkparse), the whole run's CPU in
# microseconds; the notes of --origin (dirty runs, file maps) and the trace's KiB. Then, per
# backend, what --origin adds: percent of the workload's time and microseconds per I/O.
#
#   bench/bench-origin.sh [host|vm|all] [--runs N] [--mb N]   (root; default all, --mb 1024
#   on the host and 64 in the VM)
#
# Environment: RUNS (as --runs), OURS (default ./blktrace), BLKPARSE (default ./blkparse), VM_APPEND (more
# kernel parameters for the VM, tests/vm/run-trace.sh). Takes the tests' kernel lock (host)
# and VM lock (vm). Exit 0 done, 1 a run failed, 2 usage, 77 cannot run here.
set -u
set -o pipefail
cd "$(dirname "$0")/.." || exit 1
prog=bench-origin
OURS=${OURS:-./blktrace}
BLKPARSE=${BLKPARSE:-./blkparse}
what=all runs=${RUNS:-3} mb=
while [ $# -gt 0 ]; do
	case $1 in
	host | vm | all) what=$1; shift ;;
	--runs) runs=${2:?}; shift 2 ;;
	--mb) mb=${2:?}; shift 2 ;;
	*) sed -n '3,28p' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$prog: SKIP: needs root" >&2; exit 77; }
for x in "$OURS" "$BLKPARSE"; do
	[ -x "$x" ] || { echo "$prog: '$x' not found; run 'make' first" >&2; exit 1; }
done
command -v mkfs.ext4 >/dev/null || { echo "$prog: SKIP: mkfs.ext4 missing" >&2; exit 77; }
TMP=$(mktemp -d)
loop= mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# frozen copies: a rebuild during the runs must not mix two binaries
cp "$OURS" "$TMP/blktrace" && cp "$BLKPARSE" "$TMP/blkparse" || exit 1
rows=$TMP/rows
: >"$rows"

# the workload, for bash here and busybox ash in the VM ($M the mount point, $MB)
cat >"$TMP/load.sh" <<'LOAD'
dd if=/dev/zero of="$M/f" bs=4096 count=$((MB * 256)) 2>/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
dd if="$M/f" of=/dev/null bs=65536 2>/dev/null
dd if="$M/f" of=/dev/null bs=4096 count=2048 iflag=direct 2>/dev/null
LOAD

# the configurations of round @r, rotated
order() { # r config...
	local r=$1 i n
	shift
	n=$#
	for i in $(seq 0 $((n - 1))); do
		eval "echo \${$(((i + r) % n + 1))}"
	done
}

# row TRACEDIR NAME CONFIG WORK_S CPU_IO CPU_ALL SUMMARY: one line of $rows
row() {
	local q notes kib
	q=$(cd "$1" && "$TMP/blkparse" -i "$2" -f '%a\n' 2>/dev/null | grep -c '^Q$')
	notes=$(sed -n 's/^ *Origin: \([0-9]*\) dirty runs, \([0-9]*\) file maps.*/\1+\2/p' "$7" | head -n 1)
	kib=$(du -sk "$1" | cut -f1)
	echo "$3 $4 $5 $6 $q ${notes:-0+0} $kib" >>"$rows"
}

# ---- host ----
host() {
	local T r c d bt args t0 t1 pid k0 k1 hz M MB=${mb:-1024}
	hz=$(getconf CLK_TCK)
	exec 8>/tmp/blktrace-ng.kernel.lock
	flock -n 8 || { echo "$prog: waiting for the kernel lock (a test traces)" >&2; flock 8; }
	T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	[ -n "$T" ] || { echo "$prog: SKIP: no tracefs" >&2; return 77; }
	d=/dev/shm
	[ -d $d ] && [ -w $d ] || d=$TMP
	truncate -s $((MB * 2 + 128))M "$d/bench-origin.$$.img" || return 1
	loop=$( (flock 6; losetup -f --show "$d/bench-origin.$$.img") 6>/tmp/blktrace-ng.losetup.lock)
	rm -f "$d/bench-origin.$$.img" # the loop device keeps it
	[ -n "$loop" ] || { echo "$prog: SKIP: losetup failed" >&2; return 77; }
	mnt=$TMP/mnt
	mkdir -p "$mnt"
	mkfs.ext4 -q -F "$loop" && mount -t ext4 "$loop" "$mnt" || return 1
	M=$mnt
	for r in $(seq "$runs"); do
		for c in $(order "$r" tracefs tracefs+origin); do
			echo "$prog: host $c, run $r ..." >&2
			d=$TMP/host-$c-$r
			mkdir -p "$d"
			rm -f "$mnt/f"
			sync
			echo 3 >/proc/sys/vm/drop_caches
			args=(-d "$loop" --backend=tracefs -o t)
			[ $c = tracefs+origin ] && args+=(--origin)
			# (GNU time ignores SIGINT: its child, the tracer, gets it)
			(cd "$d" && exec /usr/bin/time -f "%U %S" -o time.txt "$TMP/blktrace" "${args[@]}" \
				>summary.txt 2>err.txt) &
			bt=$!
			# recording: the blk tracer set and on
			for _ in $(seq 200); do
				[ "$(cat "$T/current_tracer")" = blk ] && [ "$(cat "$T/tracing_on")" = 1 ] && break
				sleep 0.05
			done
			sleep 0.3
			pid=$(tr -d " \n" </proc/$bt/task/$bt/children)
			[ -n "$pid" ] || { echo "$prog: host $c run $r: the tracer did not start: $(head -c 300 "$d/err.txt")" >&2; return 1; }
			k0=$(sed 's/^.*) //' /proc/$pid/stat | awk '{ print $12 + $13 }')
			t0=$(date +%s.%N)
			(. "$TMP/load.sh") || { echo "$prog: the workload failed" >&2; kill -INT $pid; wait $bt; return 1; }
			t1=$(date +%s.%N)
			k1=$(sed 's/^.*) //' /proc/$pid/stat | awk '{ print $12 + $13 }')
			kill -INT $pid
			wait $bt || { echo "$prog: host $c run $r: the tracer failed: $(head -c 300 "$d/err.txt")" >&2; return 1; }
			row "$d" t "host:$c" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
				"$(awk -v a="$k0" -v b="$k1" -v h="$hz" 'BEGIN { printf "%.2f", (b - a) / h }')" \
				"$(awk '{ printf "%.2f", $1 + $2 }' "$d/time.txt")" "$d/summary.txt"
		done
	done
	umount "$mnt" && mnt=
	losetup -d "$loop" && loop=
	flock -u 8
}

# ---- vm ----
vm() {
	local b=$TMP/batch r c n d MB=${mb:-64} args cu cs
	. tests/vm/batch.sh
	exec 7>/tmp/blktrace-ng.vm.lock
	flock -n 7 || { echo "$prog: waiting for the VM lock" >&2; flock 7; }
	tests/vm/prepare.sh -q || return $?
	cat >"$TMP/pre.sh" <<'PRE'
mkfs.ext4 -q -F "$DEV" 2>>/out/workload.log || return 1
mkdir -p /mnt/b
mount -t ext4 "$DEV" /mnt/b || return 1
PRE
	{
		echo "M=/mnt/b MB=$MB"
		echo 'tticks() { sed "s/^.*) //" "/proc/$(cat /tmp/bt.pid)/stat" | awk "{ print \$12 + \$13 }"; }'
		echo 'k0=$(tticks) t0=$(cut -d" " -f1 /proc/uptime)'
		cat "$TMP/load.sh"
		echo 't1=$(cut -d" " -f1 /proc/uptime) k1=$(tticks)'
		echo 'status bench_work_seconds "$(awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.2f\", b - a }")"'
		echo 'status bench_tracer_ticks $((k1 - k0))'
	} >"$TMP/work.sh"
	echo 'umount /mnt/b' >"$TMP/post.sh"
	vm_batch_new "$b"
	n=0
	for r in $(seq "$runs"); do
		for c in $(order "$r" relay relay+origin tracefs tracefs+origin); do
			n=$((n + 1))
			args=(--backend="${c%+origin}")
			[ "$c" != "${c%+origin}" ] && args+=(--origin)
			vm_batch_add "$b" "$TMP/vm-$n-$c" --device virtio --data-mb $((MB * 2 + 128)) \
				--kmod crc32c_generic --kmod ext4 --tool "$(command -v mkfs.ext4)" \
				--pre "$TMP/pre.sh" --post "$TMP/post.sh" --workload "$TMP/work.sh" \
				--tracer-cpu --timeout 600 -- "${args[@]}"
		done
	done
	echo "$prog: the VM, $n runs in one boot ..." >&2
	vm_batch_boot "$b" "$TMP/blktrace" >"$TMP/vm.out" 2>&1 || {
		echo "$prog: the VM: $(tail -n 3 "$TMP/vm.out")" >&2
		return 1
	}
	for d in "$TMP"/vm-*; do
		c=${d##*/vm-*-}
		[ "$(cat "$d/blktrace.rc" 2>/dev/null)" = 0 ] ||
			{ echo "$prog: vm $c: the tracer failed: $(head -c 300 "$d/blktrace.stderr")" >&2; return 1; }
		read -r cu cs < <(sed -n 's/^tracer_cpu_total=//p' "$d/status")
		row "$d/trace" trace "vm:$c" "$(sed -n 's/^bench_work_seconds=//p' "$d/status")" \
			"$(awk -v t="$(sed -n 's/^bench_tracer_ticks=//p' "$d/status")" 'BEGIN { printf "%.2f", t / 100 }')" \
			"$(awk -v u="$cu" -v s="$cs" 'BEGIN { printf "%.2f", (u + s) / 100 }')" "$d/blktrace.stdout"
	done
	flock -u 7
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rc=0
case $what in
host) host || rc=$? ;;
vm) vm || rc=$? ;;
all)
	host || rc=$?
	[ $rc = 0 ] || [ $rc = 77 ] && { vm || rc=$?; }
	;;
esac
[ -s "$rows" ] || exit $rc
echo "blktrace --origin's cost on $(uname -r) ($(nproc) CPUs; the VM: Debian's 6.1, 2 vCPUs, TCG), $(date -u '+%Y-%m-%d %H:%M UTC'): ext4, dd writes ${mb:-1024 (host) / 64 (vm)} MiB in 4 KiB buffered writes + sync, reads it back (64 KiB buffered, then 2048 x 4 KiB O_DIRECT); $runs runs per configuration, interleaved, medians; load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
python3 -c '
import statistics, sys
v = {}
for l in open(sys.argv[1]):
    c, work, cio, call, q, notes, kib = l.split()
    d, f = notes.split("+")
    v.setdefault(c, []).append((float(work), float(cio), float(call), int(q), int(d), int(f), int(kib)))
med = lambda xs: statistics.median(xs)
m = {c: [med([x[i] for x in xs]) for i in range(7)] for c, xs in v.items()}
print("%-22s %9s %9s %10s %8s %11s %7s %7s %8s" % ("config", "work_s", "cpu_io_s", "cpu_all_s", "I/Os", "us_per_I/O", "dirty", "fmaps", "KiB"))
for c in sorted(m):
    w, cio, call, q, d, f, kib = m[c]
    print("%-22s %9.3f %9.2f %10.2f %8d %11.1f %7d %7d %8d" % (c, w, cio, call, q, 1e6 * call / q if q else 0, d, f, kib))
for c in sorted(m):
    if not c.endswith("+origin") or c[:-7] not in m:
        continue
    b, o = m[c[:-7]], m[c]
    ub = 1e6 * b[2] / b[3] if b[3] else 0
    uo = 1e6 * o[2] / o[3] if o[3] else 0
    print("%s: --origin adds %+.1f%% to the workload'"'"'s time, %+.1f us of tracer CPU per I/O (%.1f -> %.1f), %+.2f s of CPU during the workload" % (
        c[:-7], 100 * (o[0] - b[0]) / b[0], uo - ub, ub, uo, o[1] - b[1]))
print("per run (work_s): " + "; ".join("%s %s" % (c, " ".join("%.2f" % x[0] for x in xs)) for c, xs in sorted(v.items())))
' "$rows"
exit $rc
