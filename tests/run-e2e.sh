#!/bin/bash
# Runs every tests/e2e/t*.sh, TEST_JOBS (default 4) at a time, and counts their
# PASS/FAIL/SKIP lines. Each script's output goes to its own log; the logs are printed in
# name order once all have ended, so the output reads the same whatever the timing.
# Scripts that touch state the whole machine shares (the tracefs blk tracer; the qemu VM)
# take a lock in tests/lib.sh (kernel_lock, vm_lock), so they run one at a time, also
# across the plain, ASan and valgrind runs of make check.
# Each script runs in a scratch directory of its own, tests/out/cwd/NAME, so that a file a
# tool writes into its working directory (btt's per-device files, say) lands in no source
# directory and in no other script's way.
# ONLY=PATTERN runs the scripts whose name contains PATTERN.
top=$(cd "$(dirname "$0")/.." && pwd)
out=${TEST_OUT:-$top/tests/out}
jobs=${TEST_JOBS:-4}
logs=$out/e2e-logs
p=0 f=0 s=0 x=0
rm -rf "$out/memcheck" "$logs" "$out/cwd"
mkdir -p "$out/memcheck" "$logs" "$out/cwd"

all=()
for t in "$top"/tests/e2e/t*.sh; do
	[ -n "${ONLY:-}" ] && [[ $(basename "$t") != *${ONLY}* ]] && continue
	all+=("$t")
done
# the longest first, so that the run does not end waiting for one of them
# (under valgrind the VM and live-trace scripts are skipped, and the tools' own work is long)
longest="t0520 t0550 t1000 t0900 t1600 t0530 t1300 t1310 t0527 t0600 t0500 t0700 t0510 t0400 t0320"
[ -n "${VALGRIND:-}" ] && longest="t0900 t1310 t1000 t0700 t1300 t0400 t0800 t0510 t0500 t0545"
order=()
for long in $longest; do
	for t in "${all[@]}"; do [[ $(basename "$t") == $long-* ]] && order+=("$t"); done
done
for t in "${all[@]}"; do
	case " ${order[*]} " in *" $t "*) ;; *) order+=("$t") ;; esac
done

# Each script's CPU time with everything it started, waited for or not (a ClickHouse server,
# a proxy), where a cgroup v1 cpuacct hierarchy is writable (root): a group per script, its
# cpuacct.usage at the end (__cgcpu, seconds); elsewhere "-". A group left busy by a process
# that outlived its script is left behind. The groups are made inside the one this runner is
# in (tests/check.sh's group of the run), whose count then includes them.
cgrun=
cgcur=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpuacct\(,[^:]*\)\{0,1\}:\(.*\)/\3/p' /proc/self/cgroup 2>/dev/null)
if [ -n "$cgcur" ] && [ -w "/sys/fs/cgroup/cpuacct${cgcur%/}" ]; then
	cgrun=/sys/fs/cgroup/cpuacct${cgcur%/}/e2e.$$
	mkdir -p "$cgrun" 2>/dev/null || cgrun=
fi
run_one() { # script
	local log="$logs/$(basename "$1").log" t0=$SECONDS rc cpu dir="$out/cwd/$(basename "$1" .sh)"
	local cg= cgcpu=- start
	start=$(date +%s)
	mkdir -p "$dir"
	if [ -n "$cgrun" ]; then
		cg=$cgrun/$(basename "$1" .sh)
		mkdir -p "$cg" 2>/dev/null || cg=
	fi
	# the CPU time of the script and everything it waited for (bash's times: the children's
	# user and system time, the second line)
	cpu=$(
		[ -n "$cg" ] && echo "$BASHPID" >"$cg/cgroup.procs" 2>/dev/null
		cd "$dir" && bash "$1" >"$log" 2>&1
		echo "$?"
		times
	)
	rc=$(echo "$cpu" | head -n 1)
	cpu=$(echo "$cpu" | sed -n 3p | awk '{ u = $1; s = $2; sub(/m/, " ", u); sub(/s/, "", u); sub(/m/, " ", s); sub(/s/, "", s)
		split(u, a, " "); split(s, b, " "); printf "%.0f", a[1] * 60 + a[2] + b[1] * 60 + b[2] }')
	if [ -n "$cg" ]; then
		cgcpu=$(awk '{ printf "%.0f", $1 / 1e9 }' "$cg/cpuacct.usage" 2>/dev/null)
		rmdir "$cg" 2>/dev/null
	fi
	echo "__rc=$rc __seconds=$((SECONDS - t0)) __cpu=$cpu __cgcpu=${cgcpu:--} __start=$start" >>"$log"
	# its locks released (tests/lib.sh lock_log)
	[ -n "${LOCK_LOG:-}" ] && echo "$(date +%s) $out $(basename "$1" .sh) all end" >>"$LOCK_LOG"
}
for t in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	run_one "$t" &
done
wait

for t in "${all[@]}"; do
	log="$logs/$(basename "$t").log"
	echo "== $(basename "$t") ($(sed -n 's/^__rc=.* __seconds=\([0-9]*\) __cpu=\([0-9]*\) __cgcpu=\([0-9-]*\).*/\1 s, CPU \2 s, with all it started \3 s/p' "$log"))"
	while IFS= read -r line; do
		case $line in
		__rc=*) continue ;;
		PASS:*) p=$((p + 1)) ;;
		FAIL:*) f=$((f + 1)) ;;
		SKIP:*) s=$((s + 1)) ;;
		XFAIL:*) x=$((x + 1)) ;;
		esac
		echo "$line"
	done <"$log"
done
# memory checkers write reports to files: any report is a failure
for log in "$out"/memcheck/vg.*.log "$out"/memcheck/asan.*; do
	[ -s "$log" ] || continue
	echo "FAIL: memory error report $log:"
	head -n 20 "$log" | sed 's/^/    /'
	f=$((f + 1))
done
[ -n "$cgrun" ] && rmdir "$cgrun" 2>/dev/null
echo "e2e: $p passed, $f failed, $s skipped ($x known gaps, XFAIL)"
echo "$p $f $s" >"$out/.e2e-counts"
[ "$f" = 0 ]
