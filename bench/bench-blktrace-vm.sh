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
# Per run: I/Os issued (dd's record counts); events captured (records in the per-CPU files,
# parsed here); events per second of the I/O phase; dropped events (the tracer's own
# "Total: ... events (dropped N)" line); cpu_s, the tracer's CPU time user+sys (all threads,
# start to exit incl. the drain after SIGINT; run-trace.sh --tracer-cpu) and cpu_us_per_event;
# io_us/ev, the tracer's CPU during the I/O phase only per event (no fixed start-up/teardown
# cost, a large part of cpu_s); vm_cpu%, its share of all busy vCPU time in the I/O phase.
# Under TCG guest time is host wall time: cpu_s and events/s grow when other host processes
# take qemu's CPU, vm_cpu% much less. Notes: "host-busy:X%" other host processes took X >= 10 %
# of the host's CPU during the run; "torn:Nx/MB" N places (M bytes in all) in the per-CPU files
# that are not a sequence of records; "unaccounted:N" events + dropped is N below the most of
# any run (all runs issue the same I/Os).
# Then per tracer and setting the means, and the ratios ours/reference.
#
# With --iowait: the cost of blktrace --iowait instead (ours only): null_blk completing each
# I/O after --completion-us (irqmode=2, so that the readers sleep: each read is an I/O wait),
# per vCPU --readers O_DIRECT 4 KiB readers; runs without --iowait, with --iowait=sched,
# =kprobe and =module (kernel/iowait built against the VM kernel's headers and insmod'ed),
# interleaved, and "probes": the module loaded (its kretprobes fire) with blktrace run without
# --iowait (what the probes cost before any event is recorded or read; IW_CONFIGS="none
# module probes" picks configurations). Per configuration: the workload's IOPS and its loss
# against the runs without --iowait, events and waits recorded, lost waits, the tracer's CPU
# (whole run, and I/O phase per block event), and its I/O-phase CPU beyond the runs without
# --iowait per wait.
#
# options:
#   --ios-per-job N     I/Os of each dd (default 100000: 2 vCPUs x 2 jobs = 400000 I/Os)
#   --runs N            runs of each tracer and setting (default 2)
#   --irqmode auto|0|1  null_blk irqmode; auto (default): one short calibration run per mode
#                       (reference tracer, default buffers), the one with more IOPS is used
#   --smp N / --mem MB  VM size (default 2 / 1024)
#   --keep DIR          keep every run's results (status, logs, trace files) under DIR
#   --iowait            measure --iowait (see above), with --completion-us N (default 50)
#                       and --readers N per vCPU (default 2); --ios-per-job is per reader
#
# Environment: OURS (default ./blktrace), REF (default /usr/sbin/blktrace), VM_APPEND (more
# kernel parameters, tests/vm/run-trace.sh): VM_APPEND="tsc=reliable clocksource=tsc" gives the
# guest the TSC as its clock, as real hardware has, instead of the HPET it picks under TCG
# (where each clock read is an emulated MMIO access). VM_TCG_THREAD=multi: each vCPU on a host
# thread of its own (MTTCG), as on a machine with two CPUs: the tracer's work then runs beside
# the workload instead of taking turns with it (the tests keep thread=single: under MTTCG a
# vCPU could run a stale translation of kernel text the other had just patched, seen as a soft
# lockup in about one boot in three of t0550; tests/vm/run-trace.sh).
# Exit 0 done, 1 a run failed, 2 usage, 77 the VM cannot run here (tests/vm/prepare.sh).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
prog=bench-blktrace-vm
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '4,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

OURS=${OURS:-./blktrace}
REF=${REF:-/usr/sbin/blktrace}
per_job=100000 runs=2 irqmode=auto smp=2 mem=1024 keep= iowait=0 compl_us=50 readers=2
while [ $# -gt 0 ]; do
	case $1 in
	--ios-per-job) per_job=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--irqmode) irqmode=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--keep) keep=${2:?}; shift 2 ;;
	--iowait) iowait=1; shift ;;
	--completion-us) compl_us=${2:?}; shift 2 ;;
	--readers) readers=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	*) echo "$prog: unknown option $1" >&2; usage ;;
	esac
done
for v in "$per_job" "$runs" "$smp" "$mem" "$compl_us" "$readers"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$prog: not a positive number: $v" >&2; exit 2; }
done
case $irqmode in auto | 0 | 1) ;; *) echo "$prog: --irqmode must be auto, 0 or 1" >&2; exit 2 ;; esac

[ -x "$OURS" ] || die "'$OURS' not found; run 'make blktrace' first"
[ $iowait = 1 ] || [ -x "$REF" ] || die "reference tracer '$REF' not installed (Debian package blktrace)"
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
cp "$OURS" "$TMP/ours" || die "cannot copy the tracer"
[ $iowait = 1 ] || cp "$REF" "$TMP/ref" || die "cannot copy the reference tracer"

# ---- the load (sourced by the VM's controller: busybox ash, $DEV, log, status, IOS, IOFAIL) ----
cat >"$TMP/workload.sh" <<'EOF'
# bench/bench-blktrace-vm.sh load: per vCPU one O_DIRECT 4 KiB reader and one writer, concurrent
n=BENCH_PER_JOB
ncpu=$(nproc)
j=0 pids=''
# busy ticks of the whole VM (/proc/stat: all but idle and iowait) and the tracer's ticks
# (/tmp/bt.pid, written by init.sh), to get its share of the VM's CPU during the I/O phase
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
tticks() { sed 's/^.*) //' "/proc/$(cat /tmp/bt.pid)/stat" | awk '{ print $12 + $13 }'; }
b0=$(busy) k0=$(tticks)
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
b1=$(busy) k1=$(tticks)
status bench_busy_ticks $((b1 - b0))
status bench_tracer_ticks $((k1 - k0))
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
# prints: records, torn places (where the stream stopped being a sequence of records: counting
# resumes at the next offset where two consecutive records parse), bytes skipped there
import glob, struct, sys
total = torn = skipped = 0

def rec_len(data, off, fmt):
    """length of the record at off, or 0 when there is none"""
    if off + 48 > len(data):
        return 0
    magic, = struct.unpack_from(fmt + "I", data, off)
    if magic >> 8 != 0x656174:
        return 0
    pdu, = struct.unpack_from(fmt + "H", data, off + 46)
    return 48 + pdu if off + 48 + pdu <= len(data) else 0

for path in sorted(glob.glob(sys.argv[1] + "/trace.blktrace.*")):
    data = open(path, "rb").read()
    off, n = 0, len(data)
    fmt = "<" if n >= 4 and struct.unpack_from("<I", data, 0)[0] >> 8 == 0x656174 else ">"
    magic = b"\x07tae" if fmt == "<" else b"eat\x07"
    while off < n:
        l = rec_len(data, off, fmt)
        if l:
            off += l
            total += 1
            continue
        torn += 1
        p = off + 1
        while True:
            p = data.find(magic, p)
            if p < 0:
                p = n
                break
            l = rec_len(data, p, fmt)
            if l and (p + l == n or rec_len(data, p + l, fmt)):
                break
            p += 1
        skipped += p - off
        off = p
print(total, torn, skipped)
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
# host CPU ticks (USER_HZ) busy in all processes, and used by our waited-for children (qemu...):
# 'times' runs in this shell (no subshell, which would have its own children times)
host_busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# (sets OUR_TICKS: a $(...) around it would run 'times' in a subshell)
our_ticks() {
	times >"$TMP/times"
	OUR_TICKS=$(tail -n 1 "$TMP/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.0f", s * 100 }')
}

# ---- --iowait: its cost -----------------------------------------------------------------------------------
if [ $iowait = 1 ]; then
	eval "$("$top/tests/vm/prepare.sh" --env)"
	ko=
	if [ -n "${VM_KDIR:-}" ] && cp -r "$top/kernel/iowait" "$TMP/mod" &&
		make -C "$TMP/mod" KDIR="$VM_KDIR" >"$TMP/mod.log" 2>&1; then
		ko=$TMP/mod/blk_iowait.ko
	else
		echo "$prog: note: the module could not be built (no kernel headers?): no module runs" >&2
	fi
	cat >"$TMP/iw-workload.sh" <<'EOF'
n=BENCH_PER_JOB
ncpu=$(nproc)
j=0 pids=''
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
tticks() { sed 's/^.*) //' "/proc/$(cat /tmp/bt.pid)/stat" | awk '{ print $12 + $13 }'; }
# start once the I/O wait instance records (when there is one)
k=0
while [ $k -lt 100 ] && [ -n "$(ls /sys/kernel/tracing/instances 2>/dev/null)" ] &&
	! grep -qs "^1" /sys/kernel/tracing/instances/*/tracing_on; do
	nap 50000
	k=$((k + 1))
done
b0=$(busy) k0=$(tticks)
t0=$(cut -d' ' -f1 /proc/uptime)
while [ $j -lt $((ncpu * BENCH_READERS)) ]; do
	dd if="$DEV" of=/dev/null bs=4096 count=$n skip=$((j * n)) iflag=direct 2>/tmp/bench-dd-r$j &
	pids="$pids $!"
	j=$((j + 1))
done
for p in $pids; do wait $p || IOFAIL=$((IOFAIL + 1)); done
t1=$(cut -d' ' -f1 /proc/uptime)
b1=$(busy) k1=$(tticks)
status bench_busy_ticks $((b1 - b0))
status bench_tracer_ticks $((k1 - k0))
ios=$(cat /tmp/bench-dd-r* | sed -n 's/^\([0-9]*\)+\([0-9]*\) records in$/\1 \2/p' | awk '{ s += $1 + $2 } END { print s + 0 }')
IOS=$((IOS + ios))
status bench_ios "$ios"
status bench_io_seconds "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
EOF
	sed -i "s/BENCH_PER_JOB/$per_job/; s/BENCH_READERS/$readers/" "$TMP/iw-workload.sh"
	rows=$TMP/iw-rows.tsv
	: >"$rows"
	failed=0
	cfgs="none sched kprobe"
	[ -n "$ko" ] && cfgs="$cfgs module probes"
	cfgs=${IW_CONFIGS:-$cfgs}
	for r in $(seq 1 "$runs"); do
		for c in $cfgs; do
			dir=$TMP/runs/iw-$c-$r
			mkdir -p "$dir"
			args=(--device nullb --workload "$TMP/iw-workload.sh" --smp "$smp" --mem "$mem"
				--nullb-params "nr_devices=1 irqmode=2 completion_nsec=$((compl_us * 1000))"
				--tracer-cpu --timeout 900 --stop-timeout 60 --out-mb 512)
			[ $c = module ] || [ $c = probes ] && args+=(--module "$ko")
			targs=()
			[ $c = none ] || [ $c = probes ] || targs=("--iowait=$c")
			echo "$prog: --iowait $c, run $r ..." >&2
			if ! "$top/tests/vm/run-trace.sh" "$TMP/ours" "$dir" "${args[@]}" -- "${targs[@]}" >"$dir/run-trace.log" 2>&1; then
				echo "$prog: FAIL: $c run $r: $(tail -n 3 "$dir/run-trace.log")" >&2
				failed=1
				continue
			fi
			read -r events _ < <(python3 "$TMP/count.py" "$dir/trace")
			waits=$(PYTHONPATH="$top/tests/gen" python3 -B -c '
import glob, sys, blkrec
print(sum(1 for p in glob.glob(sys.argv[1] + "/trace.iowait.blktrace.*")
          for r in blkrec.records(open(p, "rb").read()) if blkrec.is_iowait(r)))' "$dir/trace")
			lost=$(sed -n 's/^ *Total:.* waits (lost \([0-9]*\)).*$/\1/p' "$dir/blktrace.stdout")
			read -r cu cs <<<"$(get "$dir" tracer_cpu_total)"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$(get "$dir" bench_ios)" \
				"$(get "$dir" bench_io_seconds)" "$events" "$waits" "${lost:--}" \
				$((${cu:-0} + ${cs:-0})) "$(get "$dir" bench_tracer_ticks)" "$(get "$dir" tracer_rc)" >>"$rows"
			if [ -n "$keep" ]; then
				rm -rf "${keep:?}/iw-$c-$r" && cp -r "$dir" "$keep/iw-$c-$r"
			fi
			rm -rf "$dir"
		done
	done
	[ -s "$rows" ] || die "no run succeeded"
	echo
	echo "blktrace --iowait on null_blk (irqmode=2, completion $compl_us us), $smp vCPUs, $((smp * readers)) O_DIRECT 4 KiB readers x $per_job reads${VM_APPEND:+, kernel parameters: $VM_APPEND}"
	echo "cpu_s: tracer user+sys, start to exit; io_us/ev: its I/O-phase CPU per block event; extra_us/wait:"
	echo "its I/O-phase CPU beyond the mean of the runs without --iowait, per wait recorded"
	awk -F'\t' '
	{
		k = $1; n[k]++; ios[k] += $2; sec[k] += $3; ev[k] += $4; w[k] += $5
		lost[k] += ($6 == "-" ? 0 : $6); cpu[k] += $7; io[k] += $8
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		printf "run  %-7s iops %8.0f events %8d waits %7d lost %5s cpu_s %6.2f io_us/ev %6.2f exit %s\n",
			k, ($3 > 0 ? $2 / $3 : 0), $4, $5, $6, $7 / 100, ($4 > 0 ? $8 * 1e4 / $4 : 0), $9
	}
	END {
		print ""
		base = ("none" in n && sec["none"] > 0) ? ios["none"] / sec["none"] : 0
		bio = ("none" in n) ? io["none"] / n["none"] : 0
		printf "%-8s %9s %8s %9s %8s %6s %7s %9s %13s\n", "source", "iops", "loss%", "events", "waits",
			"lost", "cpu_s", "io_us/ev", "extra_us/wait"
		for (i = 1; i <= nk; i++) {
			k = order[i]; c = n[k]; iops = sec[k] > 0 ? ios[k] / sec[k] : 0
			printf "%-8s %9.0f %8.2f %9.0f %8.0f %6.0f %7.2f %9.2f %13s\n", k, iops,
				(base > 0 ? 100 * (base - iops) / base : 0), ev[k] / c, w[k] / c, lost[k] / c,
				cpu[k] / c / 100, (ev[k] > 0 ? io[k] * 1e4 / ev[k] : 0),
				(k == "none" || w[k] == 0) ? "-" : sprintf("%.2f", (io[k] / c - bio) * 1e4 / (w[k] / c))
		}
	}' "$rows"
	exit $failed
fi

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
			our_ticks
			h0=$(host_busy) o0=$OUR_TICKS w0=$(date +%s.%N)
			run_one "$name" "$TMP/$t" "$irqmode" "$per_job" "$b" "$n"
			rc=$?
			our_ticks
			h1=$(host_busy) o1=$OUR_TICKS w1=$(date +%s.%N)
			if [ $rc != 0 ]; then
				echo "$prog: FAIL: $name: $(tail -n 3 "$dir/run-trace.log")" >&2
				failed=1
				continue
			fi
			note=
			[ "$(get "$dir" tracer_stop)" = sigint ] && [ "$(get "$dir" tracer_rc)" = 0 ] ||
				note="${note}tracer:$(get "$dir" tracer_stop)/exit$(get "$dir" tracer_rc) "
			[ "$(get "$dir" workload_failures)" = 0 ] || note="${note}io-failures:$(get "$dir" workload_failures) "
			[ "$(get "$dir" teardown_ok)" = 1 ] || note="${note}not-torn-down "
			read -r events torn skipped < <(python3 "$TMP/count.py" "$dir/trace")
			[ "$torn" = 0 ] || note="${note}torn:${torn}x/${skipped}B "
			dropped=$(sed -n 's/^ *Total:.*(dropped \([0-9]*\)).*$/\1/p' "$dir/blktrace.stdout" |
				awk '{ s += $1; n++ } END { print n ? s : "?" }')
			read -r cu cs <<<"$(get "$dir" tracer_cpu_total)"
			read -r iu is <<<"$(get "$dir" tracer_cpu_sigint)"
			# other host processes' CPU during the run, in % of the host's capacity
			other=$(awk -v h=$((h1 - h0)) -v o=$((o1 - o0)) -v w0="$w0" -v w1="$w1" -v n="$(nproc)" \
				'BEGIN { x = 100 * (h - o) / ((w1 - w0) * n * 100); printf "%.0f", (x < 0 ? 0 : x) }')
			[ "$other" -ge 10 ] && note="${note}host-busy:${other}% "
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "-b $b -n $n" \
				"$(get "$dir" bench_ios)" "$events" "$(get "$dir" bench_io_seconds)" "$dropped" \
				$((${cu:-0} + ${cs:-0})) $((${iu:-0} + ${is:-0})) "$r" "${note:--}" \
				"$(get "$dir" bench_tracer_ticks)" "$(get "$dir" bench_busy_ticks)" >>"$rows"
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
echo "cpu_s: tracer user+sys (guest clock, 10 ms ticks), start to exit incl. the drain after SIGINT;"
echo "io_us/ev: tracer CPU during the I/O phase only (no start-up, settle, drain, teardown) per event"
echo "vm_cpu%: the tracer's share of all busy vCPU time during the I/O phase (less sensitive than"
echo "cpu_s and events/s to how much host CPU qemu got: TCG guest time is host wall time)"
awk -F'\t' '
function row(t, bf, ios, ev, sec, dr, ticks, ioticks, share, note) {
	printf "%-6s %-12s %8s %9s %9.0f %8s %7.2f %16.2f %8.2f %7.1f  %s\n", t, bf, ios, ev,
		(sec > 0 ? ev / sec : 0), dr, ticks / 100, (ev > 0 ? ticks * 1e4 / ev : 0),
		(ev > 0 ? ioticks * 1e4 / ev : 0), share, note
}
BEGIN {
	printf "%-6s %-12s %8s %9s %9s %8s %7s %16s %8s %7s\n", "tracer", "buffers", "ios", "events",
		"events/s", "dropped", "cpu_s", "cpu_us_per_event", "io_us/ev", "vm_cpu%"
}
# first pass: the most events + dropped of any run (all runs issue the same I/Os)
NR == FNR { if ($4 + $6 > most) most = $4 + $6; next }
{
	note = $10 == "-" ? "" : $10
	# more than a few notes (process names...) short: events neither in the files nor counted dropped
	if (most - ($4 + $6) > 20) note = note "unaccounted:" (most - $4 - $6) " "
	row($1, $2, $3, $4, $5, $6, $7, $11, ($12 > 0 ? 100 * $11 / $12 : 0), note)
	k = $1 SUBSEP $2
	if (!(k in n)) order[++nk] = k
	n[k]++; ios[k] += $3; ev[k] += $4; sec[k] += $5; dr[k] += $6; ticks[k] += $7
	tt[k] += $11; bt[k] += $12
	if (!($2 in bufs)) { bufs[$2] = 1; border[++nb] = $2 }
}
END {
	print ""
	print "means:"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP); c = n[k]
		row(p[1], p[2], sprintf("%.0f", ios[k] / c), sprintf("%.0f", ev[k] / c), sec[k] / c,
			sprintf("%.0f", dr[k] / c), ticks[k] / c, tt[k] / c, (bt[k] > 0 ? 100 * tt[k] / bt[k] : 0), "")
	}
	print ""
	for (j = 1; j <= nb; j++) {
		bf = border[j]
		o = "ours" SUBSEP bf; r = "ref" SUBSEP bf
		if (ev[o] > 0 && ev[r] > 0 && ticks[r] > 0)
			printf "ours/reference %s: CPU per event %.2f (%.2f / %.2f us), I/O phase only %.2f, VM CPU share %.2f\n",
				bf, (ticks[o] / ev[o]) / (ticks[r] / ev[r]), ticks[o] * 1e4 / ev[o], ticks[r] * 1e4 / ev[r],
				(tt[r] > 0 ? (tt[o] / ev[o]) / (tt[r] / ev[r]) : 0),
				(tt[r] > 0 && bt[o] > 0 ? (tt[o] / bt[o]) / (tt[r] / bt[r]) : 0)
	}
}' "$rows" "$rows"
[ -n "$keep" ] && echo "per-run results kept under $keep"
exit $failed
