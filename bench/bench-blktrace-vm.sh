#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tracer cost under load: our ./blktrace against the reference /usr/sbin/blktrace, tracing
# null_blk inside the qemu VM of tests/vm (Debian stock kernel, relay path), under the heaviest
# O_DIRECT load busybox can generate there.
#
#   bench/bench-blktrace-vm.sh [options]
#
# Load: per vCPU one reader (dd if=/dev/nullb0 of=/dev/null bs=4k iflag=direct) and one writer
# (dd if=/dev/zero of=/dev/nullb0 bs=4k oflag=direct), all concurrent, each a fixed number of
# 4 KiB I/Os on its own region of the device.
# Buffer settings: "-b 512 -n 4" (the default) and "-b 16 -n 2" (small, to provoke drops); for
# each, both tracers, interleaved, --runs times.
# Per run: I/Os issued (dd's record counts), events captured (records in the per-CPU files,
# parsed here), events per second of the I/O phase, dropped events (the tracer's own
# "Total: ... events (dropped N)" line), the tracer's CPU time user+sys (all threads, from start
# to exit, including the drain after SIGINT; run-trace.sh --tracer-cpu), CPU µs per captured event.
# Then per tracer and setting the means, and the ratio ours/reference of CPU per event.
#
# options:
#   --ios-per-job N     I/Os of each dd (default 50000: 2 vCPUs x 2 jobs = 200000 I/Os)
#   --runs N            runs of each tracer and setting (default 2)
#   --irqmode auto|0|1  null_blk irqmode; auto (default): one short calibration run per mode
#                       (reference tracer, default buffers), the one with more IOPS is used
#   --smp N / --mem MB  VM size (default 2 / 1024)
#   --keep DIR          keep every run's results (status, logs, trace files) under DIR
#
# Environment: OURS (default ./blktrace), REF (default /usr/sbin/blktrace).
# Exit 0 done, 1 a run failed, 2 usage, 77 the VM cannot run here (tests/vm/prepare.sh).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
prog=bench-blktrace-vm
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

OURS=${OURS:-./blktrace}
REF=${REF:-/usr/sbin/blktrace}
per_job=50000 runs=2 irqmode=auto smp=2 mem=1024 keep=
while [ $# -gt 0 ]; do
	case $1 in
	--ios-per-job) per_job=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--irqmode) irqmode=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--keep) keep=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	*) echo "$prog: unknown option $1" >&2; usage ;;
	esac
done
for v in "$per_job" "$runs" "$smp" "$mem"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$prog: not a positive number: $v" >&2; exit 2; }
done
case $irqmode in auto | 0 | 1) ;; *) echo "$prog: --irqmode must be auto, 0 or 1" >&2; exit 2 ;; esac

[ -x "$OURS" ] || die "'$OURS' not found; run 'make blktrace' first"
[ -x "$REF" ] || die "reference tracer '$REF' not installed (Debian package blktrace)"
command -v python3 >/dev/null || die "python3 is needed to count the trace records"

"$top/tests/vm/prepare.sh" -q
rc=$?
if [ $rc = 77 ]; then echo "$prog: SKIP: the VM cannot run here (see above)"; exit 77; fi
[ $rc = 0 ] || die "tests/vm/prepare.sh failed (exit $rc)"

TMP=$(mktemp -d /tmp/bench-blktrace-vm.XXXXXX) || die "cannot create a temporary directory"
# shellcheck disable=SC2317 # called from the trap
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -n "$keep" ]; then
	mkdir -p "$keep" || die "cannot create $keep"
	keep=$(cd "$keep" && pwd)
fi

# frozen copies: a rebuild of ./blktrace during the runs must not mix two binaries
{ cp "$OURS" "$TMP/ours" && cp "$REF" "$TMP/ref"; } || die "cannot copy the tracers"

# ---- the load (sourced by the VM's controller: busybox ash, $DEV, log, status, IOS, IOFAIL) ----
cat >"$TMP/workload.sh" <<'EOF'
# bench/bench-blktrace-vm.sh load: per vCPU one O_DIRECT 4 KiB reader and one writer, concurrent
n=BENCH_PER_JOB
ncpu=$(nproc)
j=0 pids=''
t0=$(cut -d' ' -f1 /proc/uptime)
while [ $j -lt $ncpu ]; do
	dd if="$DEV" of=/dev/null bs=4096 count=$n skip=$((2 * j * n)) iflag=direct 2>/tmp/bench-dd-r$j &
	pids="$pids $!"
	dd if=/dev/zero of="$DEV" bs=4096 count=$n seek=$(((2 * j + 1) * n)) oflag=direct conv=notrunc \
		2>/tmp/bench-dd-w$j &
	pids="$pids $!"
	j=$((j + 1))
done
for p in $pids; do wait $p || IOFAIL=$((IOFAIL + 1)); done
t1=$(cut -d' ' -f1 /proc/uptime)
# readers: records read from the device; writers: records written to it (full + partial)
ios=$(cat /tmp/bench-dd-r* | sed -n 's/^\([0-9]*\)+\([0-9]*\) records in$/\1 \2/p'
	cat /tmp/bench-dd-w* | sed -n 's/^\([0-9]*\)+\([0-9]*\) records out$/\1 \2/p')
ios=$(echo "$ios" | awk '{ s += $1 + $2 } END { print s + 0 }')
IOS=$((IOS + ios))
cat /tmp/bench-dd-* >>/out/workload.log
status bench_jobs $((2 * ncpu))
status bench_ios "$ios"
status bench_io_seconds "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
log "bench: $ios I/Os by $((2 * ncpu)) dd jobs in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
EOF

# ---- record counter: every record of every per-CPU file (48-byte header + pdu) ----------------
cat >"$TMP/count.py" <<'EOF'
import glob, struct, sys
total = bad = 0
for path in sorted(glob.glob(sys.argv[1] + "/trace.blktrace.*")):
    data = open(path, "rb").read()
    off, n = 0, len(data)
    fmt = None
    while off + 48 <= n:
        if fmt is None:
            fmt = "<" if struct.unpack_from("<I", data, off)[0] >> 8 == 0x656174 else ">"
        magic, = struct.unpack_from(fmt + "I", data, off)
        if magic >> 8 != 0x656174:
            bad += 1
            break
        pdu, = struct.unpack_from(fmt + "H", data, off + 46)
        off += 48 + pdu
        total += 1
    if off != n:
        bad += 1
print(total, bad)
EOF

# run_one NAME TRACER IRQMODE PER_JOB B N -> $TMP/runs/NAME
run_one() {
	local out=$TMP/runs/$1 wl=$TMP/workload-$4.sh
	sed "s/BENCH_PER_JOB/$4/" "$TMP/workload.sh" >"$wl"
	mkdir -p "$out"
	# trace data: ~5.5 events of 48 bytes per I/O; the output disk holds the tar of it
	local out_mb=$(((4 * smp * $4 * 300) / 1048576 + 64))
	[ $out_mb -lt 256 ] && out_mb=256
	[ $((out_mb + 256)) -gt "$mem" ] && echo "$prog: warning: the trace may not fit into the VM's $mem MB (--mem)" >&2
	"$top/tests/vm/run-trace.sh" "$2" "$out" --device nullb --workload "$wl" \
		--nullb-params "nr_devices=1 irqmode=$3" --smp "$smp" --mem "$mem" --out-mb "$out_mb" \
		--tracer-cpu --timeout 900 --stop-timeout 60 -- -b "$5" -n "$6" >"$out/run-trace.log" 2>&1
}
get() { sed -n "s/^$2=//p" "$1/status" 2>/dev/null | tail -n 1; }

# ---- irqmode: the one with more IOPS --------------------------------------------------------------
if [ "$irqmode" = auto ]; then
	best=0 best_iops=-1
	for m in 0 1; do
		run_one cal-irq$m "$TMP/ref" $m $((per_job / 2)) 512 4 ||
			die "calibration run irqmode=$m failed: $(tail -n 3 "$TMP/runs/cal-irq$m/run-trace.log")"
		iops=$(awk -v i="$(get "$TMP/runs/cal-irq$m" bench_ios)" -v s="$(get "$TMP/runs/cal-irq$m" bench_io_seconds)" \
			'BEGIN { printf "%.0f", (s > 0 ? i / s : 0) }')
		echo "$prog: calibration: null_blk irqmode=$m: $iops IOPS (reference tracer, -b 512 -n 4)" >&2
		[ "$iops" -gt "$best_iops" ] && best=$m best_iops=$iops
		rm -rf "$TMP/runs/cal-irq$m/trace"
	done
	irqmode=$best
fi
echo "$prog: null_blk irqmode=$irqmode, $smp vCPUs, $((2 * smp)) dd jobs x $per_job I/Os, $runs run(s) each" >&2

# ---- the runs ------------------------------------------------------------------------------------------
rows=$TMP/rows.tsv
: >"$rows"
failed=0
for bn in "512 4" "16 2"; do
	read -r b n <<<"$bn"
	for r in $(seq 1 "$runs"); do
		for t in ours ref; do
			name=$t-b$b-n$n-$r
			dir=$TMP/runs/$name
			echo "$prog: $name ..." >&2
			if ! run_one "$name" "$TMP/$t" "$irqmode" "$per_job" "$b" "$n"; then
				echo "$prog: FAIL: $name: $(tail -n 3 "$dir/run-trace.log")" >&2
				failed=1
				continue
			fi
			note=
			[ "$(get "$dir" tracer_stop)" = sigint ] && [ "$(get "$dir" tracer_rc)" = 0 ] ||
				note="${note}tracer:$(get "$dir" tracer_stop)/exit$(get "$dir" tracer_rc) "
			[ "$(get "$dir" workload_failures)" = 0 ] || note="${note}io-failures:$(get "$dir" workload_failures) "
			[ "$(get "$dir" teardown_ok)" = 1 ] || note="${note}not-torn-down "
			read -r events bad < <(python3 "$TMP/count.py" "$dir/trace")
			[ "$bad" = 0 ] || note="${note}unparsable-files:$bad "
			dropped=$(sed -n 's/^ *Total:.*(dropped \([0-9]*\)).*$/\1/p' "$dir/blktrace.stdout" |
				awk '{ s += $1; n++ } END { print n ? s : "?" }')
			read -r cu cs <<<"$(get "$dir" tracer_cpu_total)"
			read -r iu is <<<"$(get "$dir" tracer_cpu_sigint)"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "-b $b -n $n" \
				"$(get "$dir" bench_ios)" "$events" "$(get "$dir" bench_io_seconds)" "$dropped" \
				$((${cu:-0} + ${cs:-0})) $((${iu:-0} + ${is:-0})) "$r" "${note:--}" >>"$rows"
			if [ -n "$keep" ]; then
				rm -rf "${keep:?}/$name" && cp -r "$dir" "$keep/$name"
			fi
			rm -rf "$dir"
		done
	done
done

# ---- table -----------------------------------------------------------------------------------------------
[ -s "$rows" ] || die "no run succeeded"
echo
echo "null_blk irqmode=$irqmode, $smp vCPUs, $((2 * smp)) concurrent dd jobs (4 KiB O_DIRECT, ${smp} readers + ${smp} writers) x $per_job I/Os"
echo "cpu_s: tracer user+sys, start to exit (incl. drain after SIGINT); cpu@int: up to SIGINT; 10 ms ticks"
awk -F'\t' '
function row(t, bf, ios, ev, sec, dr, ticks, iticks, note) {
	printf "%-6s %-12s %8s %9s %9.0f %8s %7.2f %7.2f %16.2f  %s\n", t, bf, ios, ev,
		(sec > 0 ? ev / sec : 0), dr, ticks / 100, iticks / 100, (ev > 0 ? ticks * 1e4 / ev : 0), note
}
BEGIN {
	printf "%-6s %-12s %8s %9s %9s %8s %7s %7s %16s\n", "tracer", "buffers", "ios", "events",
		"events/s", "dropped", "cpu_s", "cpu@int", "cpu_us_per_event"
}
{
	row($1, $2, $3, $4, $5, $6, $7, $8, $10 == "-" ? "" : $10)
	k = $1 SUBSEP $2
	if (!(k in n)) order[++nk] = k
	n[k]++; ios[k] += $3; ev[k] += $4; sec[k] += $5; dr[k] += $6; ticks[k] += $7; iticks[k] += $8
	if (!($2 in bufs)) { bufs[$2] = 1; border[++nb] = $2 }
}
END {
	print ""
	print "means:"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP); c = n[k]
		row(p[1], p[2], sprintf("%.0f", ios[k] / c), sprintf("%.0f", ev[k] / c), sec[k] / c,
			sprintf("%.0f", dr[k] / c), ticks[k] / c, iticks[k] / c, "")
	}
	print ""
	for (j = 1; j <= nb; j++) {
		bf = border[j]
		o = "ours" SUBSEP bf; r = "ref" SUBSEP bf
		if (ev[o] > 0 && ev[r] > 0 && ticks[r] > 0)
			printf "CPU per event, ours/reference, %s: %.2f  (%.2f / %.2f us)\n", bf,
				(ticks[o] / ev[o]) / (ticks[r] / ev[r]), ticks[o] * 1e4 / ev[o], ticks[r] * 1e4 / ev[r]
	}
}' "$rows"
[ -n "$keep" ] && echo "per-run results kept under $keep"
exit $failed
