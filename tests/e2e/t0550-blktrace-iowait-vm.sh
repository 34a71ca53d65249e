#!/bin/bash
# blktrace --iowait on a kernel with kprobes and modules: Debian's stock 6.1 in qemu
# (tests/vm/), a null_blk disk completing every I/O after exactly 200 us (irqmode=2,
# completion_nsec=200000). The blk_iowait module (kernel/iowait, built here against that
# kernel's Debian linux-headers) loaded with insmod: N direct reads give N waits, each of
# the task that queued the read, overlapping it, at least 200 us long; its tracepoint's
# format has the kernel-track-event fields with the required types; rmmod leaves no probe.
# The same with the tracefs kprobe source (module not loaded): its kprobe events are gone
# after the run (SIGINT, SIGTERM, -w ending it, and an error: its output disk full). With maxactive=1 (the module's, and --iowait-maxactive=1) and several
# concurrent readers, the missed waits are counted and reported as lost. btt's "I/O wait by
# process" section on the module and kprobe traces: the readers' waits, their I/Os' D2C at
# least 2 ms, every number as recomputed from blkparse --iowait.
. "$(dirname "$0")/../lib.sh"

vm="$TOP/tests/vm"
IW=iw # python3 -B tests/gen/iowait.py (tests/lib.sh)
IWB="memo python3 -B $TOP/tests/gen/iowait-btt.py"
N=24
skip_under_valgrind "the I/O wait sources in a VM" "the tracer runs natively in the VM; the plain and ASan runs run it"
. "$vm/batch.sh"
vm_ready "I/O wait sources in a VM" || exit 0
w="$OUT/vm-iowait"
rm -rf "$w"
mkdir -p "$w"

# the module, built against the VM kernel's headers
ko= ko_old=
if [ -z "${VM_KDIR:-}" ]; then
	skip "the blk_iowait module in the VM (the kernel's linux-headers could not be had: see tests/vm/prepare.sh)"
else
	rm -rf "$w/mod"
	cp -r "$TOP/kernel/iowait" "$w/mod"
	if make -C "$w/mod" KDIR="$VM_KDIR" >"$w/mod.log" 2>&1 && [ -f "$w/mod/blk_iowait.ko" ]; then
		ko="$w/mod/blk_iowait.ko"
		if grep -qE "warning|error" "$w/mod.log"; then
			fail "make -C kernel/iowait KDIR=... : warnings: $(grep -E 'warning|error' "$w/mod.log" | head -n 3 | tr '\n' ' ')"
		else
			pass "make -C kernel/iowait KDIR=$VM_KDIR: blk_iowait.ko built without a warning"
		fi
	else
		fail "building the module: $(tail -n 5 "$w/mod.log" | tr '\n' ' ')"
	fi
	# the module as before 1.1 (no iowait_end): the tracer takes iowait's ends
	rm -rf "$w/mod-old"
	cp -r "$TOP/kernel/iowait" "$w/mod-old"
	if make -C "$w/mod-old" KDIR="$VM_KDIR" KCFLAGS=-DBLK_IOWAIT_NO_END >"$w/mod-old.log" 2>&1 &&
		[ -f "$w/mod-old/blk_iowait.ko" ]; then
		ko_old="$w/mod-old/blk_iowait.ko"
	else
		fail "building the module without iowait_end: $(tail -n 5 "$w/mod-old.log" | tr '\n' ' ')"
	fi
fi

# 2 ms: under TCG a task may take more than 200 us from submitting a bio to sleeping, and
# an I/O done by then is no wait at all
COMPL=2000000
NULLB="nr_devices=1 irqmode=2 completion_nsec=$COMPL"
# the workload starts once the I/O wait instance records (setting up kprobes takes a while)
ON='n=0; while [ $n -lt 200 ] && ! grep -qs "^1" /sys/kernel/tracing/instances/blktrace-iowait-*/tracing_on; do nap 50000; n=$((n + 1)); done'

cat >"$w/reads.sh" <<WL
$ON
cat /sys/kernel/tracing/events/blk_iowait/iowait/format >/out/iowait.format 2>/dev/null
cat /sys/kernel/tracing/events/blk_iowait/iowait_end/format >/out/iowait_end.format 2>/dev/null
for e in iowait iowait_end; do
	cat /sys/kernel/tracing/instances/blktrace-iowait-*/events/blk_iowait/\$e/enable >/out/\$e.enable 2>/dev/null
done
i=0
while [ \$i -lt $N ]; do io_read \$((i * 8192 + 4096)) 4096; i=\$((i + 1)); done
WL
# several readers at once: more tasks waiting than maxactive=1
{
echo "$ON"
cat <<'WL'
for r in 0 1 2 3; do
	(i=0; while [ $i -lt 30 ]; do dd if="$DEV" of=/dev/null bs=4096 count=1 skip=$((r * 1000 + i)) iflag=direct 2>/dev/null; i=$((i + 1)); done) &
done
wait
WL
} >"$w/concurrent.sh"
cat >"$w/post.sh" <<'WL'
T=/sys/kernel/tracing
cat /sys/module/blk_iowait/parameters/nmissed >/out/nmissed 2>/dev/null
cat /sys/module/blk_iowait/parameters/functions >/out/functions 2>/dev/null
if [ -d /sys/module/blk_iowait ]; then
	rmmod blk_iowait
	echo "rmmod $?" >/out/rmmod
fi
ls $T/instances >/out/instances.after
cat $T/kprobe_events >/out/kprobe_events.after
cat /sys/kernel/debug/kprobes/list >/out/kprobes.after 2>&1
ls $T/events | grep -c blk_iowait >/out/events.after
WL
# after a SIGKILL: what the killed tracer left, then blktrace -k, then what is left
cat >"$w/post-kill.sh" <<'WL'
T=/sys/kernel/tracing
cat $T/kprobe_events >/out/kprobe_events.killed
ls $T/instances >/out/instances.killed
blktrace -k -d "$DEV" >/out/k.out 2>&1
echo "exit $?" >>/out/k.out
ls $T/instances >/out/instances.after
cat $T/kprobe_events >/out/kprobe_events.after
cat /sys/kernel/debug/kprobes/list >/out/kprobes.after 2>&1
ls $T/events | grep -c blk_iowait >/out/events.after
WL

# the runs share one boot of the VM (tests/vm/batch.sh): each is staged here, the VM runs them
# in turn (null_blk and the module loaded for each run and removed after it), then each is
# checked below
B="$w/batch"
vm_batch_new "$B"
stage() { # outdir run-trace-args...
	local d=$1
	shift
	rm -rf "$d"
	vm_batch_add "$B" "$d" --device nullb --nullb-params "$NULLB" --post "$w/post.sh" "$@"
}
# ran OUTDIR: the run ran to its end
ran() { vm_run_ended "$1"; }
notran() { vm_run_why "$1" "$B.log"; }
[ -n "$ko" ] && stage "$w/module" --module "$ko" --workload "$w/reads.sh" -- --iowait
[ -n "$ko_old" ] && stage "$w/module-old" --module "$ko_old" --workload "$w/reads.sh" -- --iowait
stage "$w/kprobe" --workload "$w/reads.sh" -- --iowait
# (idle until the tracer has ended, at most 60 s: a fixed 5 s was too short for the tracer's
# -w 2 and its teardown in a CI run on a loaded host, which then stopped it with SIGINT)
{
	cat "$w/reads.sh"
	echo 'n=0; while alive $BTPID && [ $n -lt 600 ]; do nap 100000; n=$((n + 1)); done'
} >"$w/reads-then-idle.sh"
stage "$w/kprobe-w" --workload "$w/reads-then-idle.sh" -- --iowait=kprobe -w 2
# the kprobe source stopped by SIGTERM, and ended by an error (its output disk full)
stage "$w/kprobe-term" --workload "$w/reads.sh" --stop-signal TERM -- --iowait=kprobe
{
	echo "$ON"
	echo 'dd if="$DEV" of=/dev/null bs=4096 count=3000 iflag=direct 2>/dev/null'
} >"$w/many-reads.sh"
stage "$w/kprobe-full" --workload "$w/many-reads.sh" --out-limit 64 -- --iowait=kprobe
# the kprobe source killed with SIGKILL (no cleanup runs), then blktrace -k (the last
# --post given is the one used)
stage "$w/kprobe-kill" --workload "$w/reads.sh" --stop-signal KILL --post "$w/post-kill.sh" -- --iowait=kprobe
[ -n "$ko" ] && stage "$w/missed-module" --module "$ko" --module-params "maxactive=1" --workload "$w/concurrent.sh" -- --iowait
stage "$w/missed-kprobe" --workload "$w/concurrent.sh" -- --iowait --iowait-maxactive=1
nruns=$(find "$B" -name '*.args' | wc -l)
vm_batch_boot "$B" "$TOP/blktrace" >"$B.log" 2>&1
brc=$?
if [ $brc = 0 ]; then
	pass "one boot of the VM ran the $nruns runs to the end ($(cat "$w/kprobe/vm-wall-seconds") s)"
else
	fail "the boot of the $nruns runs: run-trace exit $brc: $(grep -E 'FAIL|ERROR' "$B.log" | head -n 3 | tr '\n' ' ')"
fi
get() { sed -n "s/^$2=//p" "$1/status" 2>/dev/null | tail -n 1; }
# btt on a run's trace: each read is a dd of its own (io_read), so the dd rows: their waits
# (at least the reads matched), each dd's mean D2C at least the 2 ms completion time (a wait
# may be shorter: under TCG a task can take over a millisecond from its Q to sleeping); the
# whole section as recomputed from blkparse --iowait (tests/gen/iowait-btt.py)
btt_check() { # label outdir source matched-reads
	local d=$2 n d2c r
	(cd "$d/trace" && "$BLKPARSE" -i trace -d "$d/merged.bin" -O >/dev/null 2>&1 &&
		"$BLKPARSE" -i trace --iowait >"$d/bp-iw.txt" 2>/dev/null)
	"$TOP/btt/btt" -i "$d/merged.bin" --iowait-only >"$d/btt-iw.txt" 2>&1
	read -r n d2c < <(awk '$3 == "|" && $4 ~ /^[0-9]+$/ && $1 ~ /^[0-9]+$/ { dd = ($2 == "dd"); if (dd) n += $4 }
		dd && / I\/Os  Q2C avg / { v = $NF * 1e9; if (!k++ || v < m) m = v } END { printf "%d %.0f\n", n, m }' "$d/btt-iw.txt")
	if r=$($IWB "$d/bp-iw.txt" "$d/btt-iw.txt" 2>&1) && [ "${n:-0}" -ge "$4" ] &&
		[ "${d2c:-0}" -ge $COMPL ] && grep -q "^Waits from: $3$" "$d/btt-iw.txt"; then
		pass "$1: btt --iowait-only: $n waits of the dd processes, their I/Os' least mean D2C $d2c ns >= the 2 ms completion time; $r"
	else
		fail "$1: btt's I/O wait section: $n waits of dd (want >= $4), least D2C $d2c ns (want >= $COMPL), source $3: $r $(head -c 300 "$d/btt-iw.txt")"
	fi
}

# a read completed before its task could sleep needs no wait: in its own context (the C
# record's pid is the reader's: "own"), or, under TCG on a busy host, while the reader's vCPU
# or the reader itself was kept from running (its C by another task): a read with no wait is
# allowed only while the tracer says that no probe missed a wait and no wait was lost
no_missed() { # outdir
	grep -qE "^  Total: +[0-9]+ waits \(lost 0\)" "$1/blktrace.stdout" &&
		! grep -qE "[1-9][0-9]* (missed by the probes|entries whose return was missed)" "$1/blktrace.stdout"
}
# how many reads must have a wait: a read completed in its own task's context never slept
# (under TCG on a busy host that happens to several of 24: the vCPU kept from running past
# the completion time); of the others all but N/4 (kept off their CPU) had one, and at least
# half of all the reads had one
reads_waited() { # matched own
	[ "${1:-0}" -ge $((N / 2)) ] && [ $((N - ${1:-0} - ${2:-0})) -le $((N / 4)) ]
}
# the state a run must leave: no instance of ours, no kprobe event or kprobe, module gone
clean_after() { # outdir
	! grep -q blktrace-iowait "$1/instances.after" && [ ! -s "$1/kprobe_events.after" ] &&
		! grep -qE "io_schedule|blk_io_schedule" "$1/kprobes.after" && [ "$(cat "$1/events.after")" = 0 ]
}

# 1. the module source
if [ -n "$ko" ]; then
	d="$w/module"
	if ran "$d"; then
		read -r _ reads _ own _ m _ long _ nw _ src < <($IW match "$d/trace" trace $COMPL)
		if [ "$(get "$d" insmod_blk_iowait)" = ok ] && [ "$(get "$d" tracer_rc)" = 0 ] &&
			grep -q "the blk_iowait module's tracepoints" "$d/blktrace.stderr" && [ "$src" = module ]; then
			pass "module source: insmod in the VM, the tracer uses it and says so: $(grep -o 'I/O waits: [^(]*' "$d/blktrace.stderr")"
		else
			fail "module source: insmod=$(get "$d" insmod_blk_iowait) rc=$(get "$d" tracer_rc) sources=$src $(head -c 300 "$d/blktrace.stderr")"
		fi
		if [ "$reads" = $N ] && reads_waited "$m" "$own" && [ "$long" = "$m" ] && no_missed "$d"; then
			pass "module source: of $N direct reads, the $m its task waited for ($own completed in its task's context, $((N - m - own)) while it was kept off its CPU under TCG: it never slept) each matched by a wait of that task that ends after the completion and at least the 2 ms completion time after the queueing ($nw waits in all, none missed by the probes)"
		else
			fail "module source: reads=$reads own=$own matched=$m long=$long waits=$nw (want $N reads, at least half matched by one wait each and all but N/4 of the others completed in their own task, none missed) $(grep -E 'missed|lost' "$d/blktrace.stdout" | tr '\n' ' ')"
		fi
		btt_check "module source" "$d" module "${m:-$N}"
		if grep -qE "^  Total: +[0-9]+ waits \(lost 0\)" "$d/blktrace.stdout"; then
			pass "module source: no wait lost: $(grep -A4 iowait "$d/blktrace.stdout" | grep Total | tr -s ' ')"
		else
			fail "module source: summary $(tr '\n' ' ' <"$d/blktrace.stdout")"
		fi
		f="$d/iowait.format"
		if grep -qP '^\tfield:char track_event_type;\toffset:\d+;\tsize:1;\tsigned:1;$' "$f" &&
			grep -qP '^\tfield:__data_loc char\[\] slice_name;\toffset:\d+;\tsize:4;' "$f" &&
			grep -qP '^\tfield:int pid;' "$f" && grep -qP '^\tfield:u64 duration_ns;' "$f" &&
			grep -qP '^\tfield:int waker_cpu;' "$f" && ! grep -q 'scope_' "$f"; then
			pass "the tracepoint's format: char track_event_type, __data_loc char[] slice_name (Perfetto's kernel track events, thread-scoped), pid, duration_ns, waker_cpu"
		else
			fail "the tracepoint's format: $(grep field: "$f" | tr '\t\n' '  ' | head -c 400)"
		fi
		f="$d/iowait_end.format"
		if [ "$(cat "$d/iowait_end.enable" 2>/dev/null)" = 1 ] && [ "$(cat "$d/iowait.enable" 2>/dev/null)" = 0 ] &&
			grep -qP '^\tfield:u64 duration_ns;' "$f" && grep -qP '^\tfield:int pid;' "$f" &&
			grep -qP '^\tfield:int tgid;' "$f" && grep -qP '^\tfield:int waker_cpu;' "$f" &&
			grep -qP '^\tfield:int sleep_cpu;' "$f" && grep -qP '^\tfield:int func;' "$f" &&
			grep -qP '^\tfield:char comm\[16\];' "$f" && ! grep -q 'track_event_type' "$f"; then
			pass "module source: the tracer records iowait_end (one event a wait: duration_ns, pid, tgid, waker_cpu, sleep_cpu, func, comm), not iowait, whose 'B' events are then never built"
		else
			fail "module source: events enabled in the instance: iowait_end=$(cat "$d/iowait_end.enable" 2>/dev/null) iowait=$(cat "$d/iowait.enable" 2>/dev/null) (want 1 and 0); iowait_end's format: $(grep field: "$f" | tr '\t\n' '  ' | head -c 400)"
		fi
		if [ "$(cat "$d/rmmod")" = "rmmod 0" ] && clean_after "$d" && grep -q "io_schedule" "$d/functions"; then
			pass "rmmod blk_iowait: exit 0, no kprobe left (kprobes/list), no event, no instance (probed: $(cat "$d/functions"))"
		else
			fail "after the module: $(cat "$d/rmmod") kprobes: $(head -c 200 "$d/kprobes.after") events=$(cat "$d/events.after") instances: $(cat "$d/instances.after")"
		fi
	else
		fail "module source: $(notran "$d")"
	fi
fi

# 1b. a module before 1.1 (no iowait_end): the tracer takes the ends of iowait (its filter
# drops the 'B' events), with the same waits
if [ -n "$ko_old" ]; then
	d="$w/module-old"
	if ran "$d"; then
		read -r _ reads _ own _ m _ long _ nw _ src < <($IW match "$d/trace" trace $COMPL)
		if [ "$(get "$d" tracer_rc)" = 0 ] && [ "$src" = module ] &&
			[ "$(cat "$d/iowait.enable" 2>/dev/null)" = 1 ] && [ ! -s "$d/iowait_end.format" ] &&
			[ "$reads" = $N ] && reads_waited "$m" "$own" && [ "$long" = "$m" ] && no_missed "$d" &&
			clean_after "$d"; then
			pass "module source without iowait_end (a module before 1.1): the tracer records iowait's ends instead; of $N direct reads the $m its task waited for each matched by a wait at least the completion time ($nw waits, none missed), nothing left after rmmod"
		else
			fail "module source without iowait_end: rc=$(get "$d" tracer_rc) sources=$src iowait enabled=$(cat "$d/iowait.enable" 2>/dev/null) reads=$reads own=$own matched=$m long=$long waits=$nw $(head -c 300 "$d/blktrace.stderr")"
		fi
	else
		fail "module source without iowait_end: $(notran "$d")"
	fi
fi

# 2. the kprobe source (no module)
d="$w/kprobe"
if ran "$d"; then
	read -r _ reads _ own _ m _ long _ nw _ src < <($IW match "$d/trace" trace $COMPL)
	if [ "$(get "$d" tracer_rc)" = 0 ] && grep -q "tracefs kprobe events" "$d/blktrace.stderr" &&
		grep -q "module is not loaded" "$d/blktrace.stderr" && [ "$src" = kprobe ]; then
		pass "kprobe source: chosen without the module, and says why not the module"
	else
		fail "kprobe source: rc=$(get "$d" tracer_rc) sources=$src $(head -c 300 "$d/blktrace.stderr")"
	fi
	if [ "$reads" = $N ] && reads_waited "$m" "$own" && [ "$long" = "$m" ] && no_missed "$d"; then
		pass "kprobe source: of $N direct reads, the $m its task waited for ($own completed in its task's context, $((N - m - own)) while it was kept off its CPU under TCG: it never slept) each matched by a wait of that task that ends after the completion and at least the 2 ms completion time after the queueing ($nw waits in all, none missed by the probes)"
	else
		fail "kprobe source: reads=$reads own=$own matched=$m long=$long waits=$nw (want $N reads, at least half matched by one wait each and all but N/4 of the others completed in their own task, none missed) $(grep -E 'missed|lost' "$d/blktrace.stdout" | tr '\n' ' ')"
	fi
	btt_check "kprobe source" "$d" kprobe "${m:-$N}"
	if clean_after "$d"; then
		pass "kprobe source: its kprobe events and instance are removed at the end"
	else
		fail "kprobe source left: kprobe_events: $(head -c 200 "$d/kprobe_events.after") kprobes: $(head -c 200 "$d/kprobes.after")"
	fi
else
	fail "kprobe source: $(notran "$d")"
fi

# 2b. the kprobe source ending by itself (-w 2, the workload idle after its reads until it has):
# its kprobe events and instance are removed on that path too
d="$w/kprobe-w"
if ran "$d"; then
	if [ "$(get "$d" tracer_rc)" = 0 ] && [ "$(get "$d" tracer_stop)" = exited-early ] && clean_after "$d" &&
		grep -q "tracefs kprobe events" "$d/blktrace.stderr"; then
		pass "kprobe source, -w 2: the tracer ends by itself (exit 0) and leaves no kprobe event, kprobe or instance"
	else
		fail "kprobe source, -w 2: rc=$(get "$d" tracer_rc) stop=$(get "$d" tracer_stop) kprobe_events: $(head -c 200 "$d/kprobe_events.after") instances: $(cat "$d/instances.after" 2>/dev/null)"
	fi
else
	fail "kprobe source, -w 2: $(notran "$d")"
fi

# 2c. SIGTERM, and an error during the trace (its output disk full: a 64 KiB tmpfs, filled
# before the end: 3000 reads, over 128 KiB of records per CPU, the size written at once): the kprobe
# events and instance are removed on those paths too
d="$w/kprobe-term"
if ran "$d"; then
	if [ "$(get "$d" tracer_rc)" = 0 ] && [ "$(get "$d" tracer_stop)" = sigterm ] && clean_after "$d" &&
		grep -q "tracefs kprobe events" "$d/blktrace.stderr"; then
		pass "kprobe source, SIGTERM: the tracer ends (exit 0) and leaves no kprobe event, kprobe or instance"
	else
		fail "kprobe source, SIGTERM: rc=$(get "$d" tracer_rc) stop=$(get "$d" tracer_stop) kprobe_events: $(head -c 200 "$d/kprobe_events.after") instances: $(cat "$d/instances.after" 2>/dev/null)"
	fi
else
	fail "kprobe source, SIGTERM: $(notran "$d")"
fi
d="$w/kprobe-full"
if ran "$d"; then
	if [ "$(get "$d" out_limit_kb)" = 64 ] && [ "$(get "$d" tracer_rc)" != 0 ] &&
		[ "$(get "$d" tracer_stop)" = exited-early ] && grep -qi "no space left" "$d/blktrace.stderr" && clean_after "$d"; then
		pass "kprobe source, output disk full: the tracer stops by itself (exit $(get "$d" tracer_rc): $(grep -i -m1 'no space' "$d/blktrace.stderr" | head -c 160)) and leaves no kprobe event, kprobe or instance"
	else
		fail "kprobe source, output disk full: limit=$(get "$d" out_limit_kb) rc=$(get "$d" tracer_rc) stop=$(get "$d" tracer_stop) stderr: $(head -c 300 "$d/blktrace.stderr") kprobe_events: $(head -c 200 "$d/kprobe_events.after") instances: $(cat "$d/instances.after" 2>/dev/null)"
	fi
else
	fail "kprobe source, output disk full: $(notran "$d")"
fi

# 2d. SIGKILL: the kprobe events (libtracefs's dynamic events) and the instance stay; blktrace -k
# removes them, saying so
d="$w/kprobe-kill"
if ran "$d"; then
	if grep -q "blktrace_iowait_[0-9]*/" "$d/kprobe_events.killed" && grep -q blktrace-iowait "$d/instances.killed" &&
		grep -q "^exit 0" "$d/k.out" && grep -q "left-over tracefs entries removed" "$d/k.out" && clean_after "$d"; then
		pass "kprobe source, SIGKILL: $(grep -c . "$d/kprobe_events.killed") kprobe events left, blktrace -k removes them and the instance: $(grep -m1 'left-over' "$d/k.out" | head -c 160)"
	else
		fail "kprobe source, SIGKILL then -k: stop=$(get "$d" tracer_stop) killed: $(head -c 200 "$d/kprobe_events.killed") $(cat "$d/instances.killed" 2>/dev/null); -k: $(head -c 300 "$d/k.out"); after: $(head -c 200 "$d/kprobe_events.after") $(cat "$d/instances.after" 2>/dev/null)"
	fi
else
	fail "kprobe source, SIGKILL: $(notran "$d")"
fi

# 3. maxactive 1, four readers at once: missed waits counted and reported
for s in module kprobe; do
	d="$w/missed-$s"
	[ $s = module ] && [ -z "$ko" ] && continue
	ran "$d" || { fail "maxactive=1 ($s): $(notran "$d")"; continue; }
	lost=$(sed -n 's/^  Total: *[0-9]* waits (lost \([0-9]*\)).*/\1/p' "$d/blktrace.stdout")
	if [ "$(get "$d" tracer_rc)" = 0 ] && [ "${lost:-0}" -gt 0 ] && grep -q "are missing I/O waits ([0-9]* so far" "$d/blktrace.stderr" &&
		grep -q "I/O waits of .*iowait were lost" "$d/blktrace.stderr" && clean_after "$d" &&
		{ [ $s = kprobe ] || [ "$(cat "$d/nmissed")" -ge "$lost" ]; }; then
		pass "maxactive=1 ($s), 4 readers: $lost missed waits counted as lost and reported (on stderr at the first: $(grep -o 'missing I/O waits ([0-9]* so far' "$d/blktrace.stderr" | head -n 1))"
	else
		fail "maxactive=1 ($s): rc=$(get "$d" tracer_rc) lost=$lost nmissed=$(cat "$d/nmissed" 2>/dev/null) $(head -c 300 "$d/blktrace.stderr")"
	fi
done
