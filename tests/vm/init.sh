#!/bin/busybox sh
# /init of the initramfs built by tests/vm/run-trace.sh (runs inside the qemu VM, busybox ash).
# /etc/boot.conf (written by run-trace.sh) says how many runs this boot has; run N has its
# configuration in /etc/runs/N/: run.conf, tracer-args (one per line), modules.load (loaded
# before its tracer starts, removed after it), and maybe workload.sh and post.sh. The runs go
# one after the other; during run N, /out is a link to /res/N, where its results go, and
# /out/DONE is written last, as its "ran to the end" marker. At the end /res is tarred onto
# the raw virtio disk with serial BTNGOUT.
/bin/busybox mkdir -p /proc /sys /dev /tmp /res /bin /sbin /usr/bin /usr/sbin /mnt
/bin/busybox --install -s 2>/dev/null
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# the kernel may have found no /dev/console in the initramfs: take it from devtmpfs
exec </dev/console >/dev/console 2>&1
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t tmpfs tmpfs /tmp
# a CPU stuck in the kernel (soft lockup) ends the boot at once, with every CPU's stack on the
# console (the boot is "quiet": the stacks are printed at the default level, raised here)
echo 1 >/proc/sys/kernel/softlockup_all_cpu_backtrace 2>/dev/null
echo 1 >/proc/sys/kernel/softlockup_panic 2>/dev/null
echo 7 >/proc/sys/kernel/printk 2>/dev/null

. /etc/boot.conf
# VM_MONITOR's boots: the kernel's symbols, for tests/vm/guest-regs.py
[ "${KALLSYMS:-0}" = 1 ] && cat /proc/kallsyms >/res/kallsyms 2>/dev/null
[ -n "${LIBPATH:-}" ] && export LD_LIBRARY_PATH=$LIBPATH
# /out: the results directory of the run under way (until the first, the first's)
mkdir -p /res/1
ln -sfn /res/1 /out

log() { echo "VM: $*"; echo "$*" >>/out/vm.log; }
run() { log "+ $*"; "$@"; }
status() { echo "$1=$2" >>/out/status; }
# the end of the boot: the results onto the output disk, power off
finish() {
	if [ -n "${OUTDEV:-}" ]; then
		tar -cf "$OUTDEV" -C /res . && echo "VM: results written to $OUTDEV" ||
			echo "VM: ERROR: tar onto $OUTDEV failed"
		sync
		echo "VM: DONE"
	else
		echo "VM: ERROR: no output disk (virtio serial BTNGOUT) found; nothing can be brought back"
	fi
	poweroff -f
	sleep 5
}
# usec sleep without relying on a fractional "sleep"
nap() { usleep "$1" 2>/dev/null || sleep 1; }
# whole seconds since the boot
uptime_s() { local u; read -r u _ </proc/uptime; echo "${u%%.*}"; }
# CPU_U CPU_S CPU_CU CPU_CS := utime stime cutime cstime (clock ticks) of process $1, read with
# builtins only: a forked $(...) makes the shell wait, and that wait could reap another child
# (the controller) whose CPU time would then be added to this shell's cutime
read_cpu() {
	local line
	CPU_U='' CPU_S='' CPU_CU='' CPU_CS=''
	read -r line <"/proc/$1/stat" 2>/dev/null || return 1
	line=${line##*) }
	# shellcheck disable=SC2086
	set -- $line
	CPU_U=${12} CPU_S=${13} CPU_CU=${14} CPU_CS=${15}
}
# is process $1 running (not gone, not a zombie)?
alive() {
	local st
	st=$(sed -n 's/^[^)]*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

# load_modules FILE: its "NAME PARAMS" lines, in order (the host resolved the dependencies)
load_modules() { # FILE [DIR: a run's own copy of a module, before /lib/modules]
	local mod params ko
	while read -r mod params; do
		[ -z "$mod" ] && continue
		case $mod in \#*) continue ;; esac
		ko=/lib/modules/$mod.ko
		[ -n "${2:-}" ] && [ -f "$2/$mod.ko" ] && ko=$2/$mod.ko
		# shellcheck disable=SC2086
		if insmod "$ko" $params; then status "insmod_$mod" ok; else
			status "insmod_$mod" failed
			log "insmod $mod $params failed"
		fi
	done <"$1"
}
# unload_modules FILE: those of its modules still loaded, in reverse order
unload_modules() {
	local mod params list=
	while read -r mod params; do
		[ -n "$mod" ] && list="$mod $list"
	done <"$1"
	for mod in $list; do
		[ -d "/sys/module/$mod" ] || continue
		rmmod "$mod" 2>>/out/vm.log || log "warning: rmmod $mod failed: the next run finds it loaded"
	done
}

: >/out/status
log "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpus, lockdown: $(cat /sys/kernel/security/lockdown 2>/dev/null || echo n/a)"
load_modules /etc/modules.load

# ---- disks ------------------------------------------------------------------------------------
OUTDEV='' DATADEV=''
n=0
while [ $n -lt 100 ]; do
	for d in /sys/block/vd*; do
		[ -e "$d/serial" ] || continue
		case $(cat "$d/serial") in
		BTNGOUT) OUTDEV=/dev/${d##*/} ;;
		BTNGDATA) DATADEV=/dev/${d##*/} ;;
		esac
	done
	if [ -n "$OUTDEV" ] && { [ "$WANT_VIRTIO" != 1 ] || [ -n "$DATADEV" ]; }; then break; fi
	nap 100000
	n=$((n + 1))
done
[ -n "$OUTDEV" ] || { echo "VM: ERROR: output disk not found"; ls /sys/block; poweroff -f; }

# ---- workloads: each appends "DIR SECTOR BYTES" lines to /out/expected.txt ---------------------
IOS=0 IOFAIL=0
# io_write BYTE_OFFSET BYTES / io_read BYTE_OFFSET BYTES: one O_DIRECT I/O with busybox dd.
# BYTES must be a multiple of 4096 (below that busybox dd's buffer is not aligned, O_DIRECT fails
# with EINVAL and dd silently retries buffered), BYTE_OFFSET a multiple of 512.
io_check() {
	if [ $(($2 % 4096)) != 0 ] || [ "$2" -le 0 ] || [ $(($1 % 512)) != 0 ]; then
		log "io_$3 $1 $2: size must be a positive multiple of 4096 and offset of 512; not issued"
		IOFAIL=$((IOFAIL + 1))
		return 1
	fi
}
io_write() {
	io_check "$1" "$2" write || return
	if dd if=/dev/zero of="$DEV" bs="$2" count=1 seek="$1" oflag=direct,seek_bytes conv=notrunc 2>>/out/workload.log; then
		echo "W $(($1 / 512)) $2" >>/out/expected.txt
		IOS=$((IOS + 1))
	else
		log "write of $2 bytes at $1 failed"
		IOFAIL=$((IOFAIL + 1))
	fi
}
io_read() {
	io_check "$1" "$2" read || return
	if dd if="$DEV" of=/dev/null bs="$2" count=1 skip="$1" iflag=direct,skip_bytes 2>>/out/workload.log; then
		echo "R $(($1 / 512)) $2" >>/out/expected.txt
		IOS=$((IOS + 1))
	else
		log "read of $2 bytes at $1 failed"
		IOFAIL=$((IOFAIL + 1))
	fi
}
workload_dio() {
	# 16 x (4 KiB direct write at block i*37, 4 KiB direct read at block i*53)
	local i=0 s
	while [ $i -lt 16 ]; do
		s=$((i * 37))
		if dd if=/dev/zero of="$DEV" bs=4096 count=1 seek=$s oflag=direct conv=notrunc 2>>/out/workload.log; then
			echo "W $((s * 8)) 4096" >>/out/expected.txt
			IOS=$((IOS + 1))
		else
			log "dd write seek=$s failed"
			IOFAIL=$((IOFAIL + 1))
		fi
		s=$((i * 53))
		if dd if="$DEV" of=/dev/null bs=4096 count=1 skip=$s iflag=direct 2>>/out/workload.log; then
			echo "R $((s * 8)) 4096" >>/out/expected.txt
			IOS=$((IOS + 1))
		else
			log "dd read skip=$s failed"
			IOFAIL=$((IOFAIL + 1))
		fi
		i=$((i + 1))
	done
}
workload_dio_sizes() {
	# 4 KiB .. 64 KiB at offsets that are 512-byte but not 4 KiB aligned; writes, then reads of
	# the same places (64 KiB stays below null_blk's max_sectors_kb=127: no splits)
	local off=1049088 sz
	for sz in 4096 8192 16384 32768 65536; do
		io_write $off $sz
		off=$((off + 2 * sz + 1536))
	done
	off=1049088
	for sz in 4096 8192 16384 32768 65536; do
		io_read $off $sz
		off=$((off + 2 * sz + 1536))
	done
}
workload_idle() { sleep 1; }

# trace set up? (BLKTRACESETUP: /sys/block/DEV/trace/enable reads 1 and the relay files appear in
# debugfs block/DEV; block/DEV itself always exists with blk-mq debugfs)
traced() {
	[ "$(cat /sys/block/$DEVNAME/trace/enable 2>/dev/null)" = 1 ] || [ -e "/sys/kernel/debug/block/$DEVNAME/dropped" ]
}

# the global tracefs settings a tracer may change (the tracefs backend puts each back)
tracefs_settings() {
	local t=/sys/kernel/debug/tracing f
	for f in tracing_on current_tracer trace_clock buffer_size_kb saved_cmdlines_size options/bin; do
		echo "$f=$(cat "$t/$f" 2>/dev/null)"
	done
}

# The controller runs in the background: waits for the trace to be set up, runs the workload,
# stops the tracer with SIGINT. The tracer itself runs in the foreground, because a command
# started with '&' by a non-interactive shell has SIGINT ignored (a tracer relying on the
# default action would never stop).
controller() {
	local n=0 seen=0 stop ncpu BTPID=
	# (up to 60 s: a controller that gave up here left a tracer that nobody stopped, until the
	# watchdog; under TCG on a stalled host a fork and exec can take seconds)
	while [ $n -lt 600 ] && [ ! -s /tmp/bt.pid ]; do nap 100000; n=$((n + 1)); done
	read -r BTPID </tmp/bt.pid
	status start_wait_tenths $n
	[ -n "$BTPID" ] || { log "ERROR: the tracer did not start within 60 s"; return; }
	n=0
	while [ $n -lt 150 ] && alive $BTPID; do
		if traced; then seen=1; break; fi
		nap 100000
		n=$((n + 1))
	done
	status setup_seen $seen
	status setup_wait_tenths $n
	[ $seen = 1 ] || log "warning: no trace set up on $DEVNAME after $((n / 10)) s"
	# the tracer makes its readers (one a CPU on the relay path) just before BLKTRACESTART:
	# wait for them too (in a CI run on a loaded host the start came 1.4 s after the setup,
	# after SETTLE: the first writes of t0520's stream run were not traced)
	ncpu=$(grep -c '^processor' /proc/cpuinfo)
	n=0
	while [ $n -lt 150 ] && alive $BTPID && [ "$(ls /proc/$BTPID/task 2>/dev/null | wc -l)" -le "$ncpu" ]; do
		nap 100000
		n=$((n + 1))
	done
	status readers_wait_tenths $n
	sleep "$SETTLE"
	if alive $BTPID; then status alive_before_workload 1; else
		status alive_before_workload 0
		log "warning: the tracer exited before the workload"
	fi

	log "workload $WORKLOAD on $DEV"
	case $WORKLOAD in
	dio) workload_dio ;;
	dio-sizes) workload_dio_sizes ;;
	idle) workload_idle ;;
	custom) . "$RUNDIR/workload.sh" ;;
	*) log "unknown workload $WORKLOAD" ;;
	esac
	status workload_ios $IOS
	status workload_failures $IOFAIL
	log "workload done: $IOS I/Os, $IOFAIL failed"
	sleep 1

	stop=exited-early
	if alive $BTPID; then
		# TRACER_CPU=1 (run-trace --tracer-cpu): the tracer's own CPU time so far (all threads)
		if [ "${TRACER_CPU:-0}" = 1 ] && read_cpu $BTPID; then
			status tracer_cpu_sigint "$CPU_U $CPU_S"
		fi
		run kill -"$STOP_SIGNAL" $BTPID
		stop=sig$(echo "$STOP_SIGNAL" | tr 'A-Z' 'a-z')
		n=0
		while alive $BTPID && [ $n -lt $((STOP_TIMEOUT * 10)) ]; do nap 100000; n=$((n + 1)); done
		if alive $BTPID; then
			log "tracer still running ${STOP_TIMEOUT}s after SIG$STOP_SIGNAL: SIGKILL"
			kill -KILL $BTPID
			stop=killed
		fi
	fi
	status tracer_stop $stop
}

# watchdog N SECONDS (in the background during run N): a run still under way after SECONDS (a
# hang: a task stuck in the kernel, a workload that never ends) is reported in /res/N/hung (its
# tasks, their states, kernel stacks and wait channels, the kernel's list of blocked tasks),
# its processes are killed so the boot goes on to the next run, and if even then it does not
# end within 30 s, the results so far are written out and the VM powers off
hang_report() { # N SECONDS MYPID
	local p pid line comm st cmd d='' u=''
	: >/tmp/hang.pids
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[ "$pid" = 1 ] || [ "$pid" = "$3" ] && continue
		read -r line <"$p/stat" 2>/dev/null || continue
		comm=${line#*(}
		comm=${comm%%)*}
		st=${line##*) }
		st=${st%% *}
		cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 120)
		[ -n "$cmd" ] || [ "$st" = D ] || continue
		[ "$st" = D ] && d="$d $comm($(cat "$p/wchan" 2>/dev/null))"
		[ -n "$cmd" ] && u="$u $comm:$st" && echo "$pid" >>/tmp/hang.pids
		echo "  $pid $st $comm wchan=$(cat "$p/wchan" 2>/dev/null) $cmd"
		[ "$st" = D ] && sed 's/^/      /' "$p/stack" 2>/dev/null
	done >/tmp/hang.tasks
	{
		echo "run $1 still under way after $2 s; tasks in D state:${d:- none}; processes:$u"
		cat /tmp/hang.tasks
		echo w >/proc/sysrq-trigger 2>/dev/null
		echo "  the kernel's last lines (sysrq w: blocked tasks):"
		dmesg -s 1048576 | tail -n 80 | sed 's/^/    /'
	} >"/res/$1/hung"
}
# run_ends N SECONDS: run N writes its DONE marker within SECONDS
run_ends() {
	local end=$(($(uptime_s) + $2))
	while [ "$(uptime_s)" -lt $end ]; do
		[ -f "/res/$1/DONE" ] && return 0
		sleep 1
	done
	[ -f "/res/$1/DONE" ]
}
watchdog() { # N SECONDS
	local me pid
	read -r me _ </proc/self/stat
	run_ends "$1" "$2" && return
	hang_report "$1" "$2" "$me"
	echo "VM: WATCHDOG: $(head -n 1 "/res/$1/hung")"
	tail -n +2 "/res/$1/hung"
	echo "hung=$2" >>"/res/$1/status"
	# the processes the report lists (kernel threads, with no command line, are not)
	while read -r pid; do kill -KILL "$pid" 2>/dev/null; done </tmp/hang.pids
	run_ends "$1" 30 && return
	echo "VM: WATCHDOG: run $1 did not end either after its processes were killed: the boot ends here"
	finish
}

# end_run: the run's last status lines and its DONE marker
end_run() {
	status vm_seconds $(($(uptime_s) - T0))
	echo ok >/out/DONE
	[ -n "${WDPID:-}" ] && kill "$WDPID" 2>/dev/null
	WDPID=
}

# run_one N: run N of this boot, from /etc/runs/N, its results in /res/N
run_one() {
	RUNDIR=/etc/runs/$1
	mkdir -p "/res/$1"
	ln -sfn "/res/$1" /out
	T0=$(uptime_s)
	. "$RUNDIR/run.conf"
	[ -f /out/status ] || : >/out/status
	status run "$1 of $RUNS"
	status kernel "$(uname -r)"
	status cpus "$(grep -c ^processor /proc/cpuinfo)"
	# qemu runs with -nic none: only "lo" may be here
	status net_ifaces "$(ls /sys/class/net 2>/dev/null | tr '\n' ' ')"
	status device_kind "$DEVICE_KIND"
	status workload "$WORKLOAD"
	watchdog "$1" "${RUN_TIMEOUT:-90}" &
	WDPID=$!
	load_modules "$RUNDIR/modules.load" "$RUNDIR"

	case $DEVICE_KIND in
	nullb) DEV=/dev/nullb0 ;;
	virtio) DEV=$DATADEV ;;
	esac
	n=0
	while [ -n "$DEV" ] && [ ! -b "$DEV" ] && [ $n -lt 100 ]; do nap 100000; n=$((n + 1)); done
	if [ -z "$DEV" ] || [ ! -b "$DEV" ]; then
		log "ERROR: traced device ($DEVICE_KIND) not found"
		status error "no traced device"
		ls /sys/block >>/out/vm.log
		unload_modules "$RUNDIR/modules.load"
		end_run
		return
	fi
	# run-trace --pre: what the test sets up on the device before the tracer starts; it may
	# set DEV to a device it made and TRACE_ALSO to more devices to trace
	TRACE_ALSO=
	if [ -f "$RUNDIR/pre.sh" ]; then
		log "pre script on $DEV"
		if ! . "$RUNDIR/pre.sh" >>/out/pre.log 2>&1 || [ ! -b "$DEV" ]; then
			log "ERROR: the pre script failed (pre.log); device '$DEV'"
			status error "pre script failed"
			unload_modules "$RUNDIR/modules.load"
			end_run
			return
		fi
	fi
	DEVNAME=${DEV##*/}
	status device "$DEV"
	status device_majmin "$(cat /sys/block/$DEVNAME/dev)"
	log "run $1 of $RUNS: traced device $DEV ($(cat /sys/block/$DEVNAME/dev)), scheduler: $(cat /sys/block/$DEVNAME/queue/scheduler 2>/dev/null), out disk $OUTDEV"

	: >/out/expected.txt
	set --
	for a in $TRACE_ALSO; do set -- "$@" -d "$a"; done
	while IFS= read -r a; do set -- "$@" "$a"; done <"$RUNDIR/tracer-args"
	mkdir -p /out/trace
	# run-trace --out-limit KB: the trace directory a tmpfs of that size (a disk that fills up)
	if [ -n "${OUT_LIMIT_KB:-}" ]; then
		mount -t tmpfs -o "size=${OUT_LIMIT_KB}k" tmpfs /out/trace && status out_limit_kb "$OUT_LIMIT_KB" ||
			log "ERROR: cannot mount a ${OUT_LIMIT_KB} KiB tmpfs on /out/trace"
	fi
	cd /out || return
	timeout 5 blktrace -V >/out/blktrace-version.txt 2>&1

	tracefs_settings >/out/tracefs-before.txt
	rm -f /tmp/bt.pid
	controller &
	CTLPID=$!
	# TRACER_CPU=1: the tracer's whole CPU time (all threads, up to its exit) is the growth of this
	# shell's cutime/cstime across the foreground run (the only child reaped in between)
	[ "${TRACER_CPU:-0}" = 1 ] && read_cpu $$ && CPU0_CU=$CPU_CU CPU0_CS=$CPU_CS
	# one output name is for one device: with TRACE_ALSO, each device's files are named after it
	[ -z "$TRACE_ALSO" ] && set -- -o trace "$@"
	log "+ blktrace -d $DEV -D /out/trace $*"
	sh -c 'echo $$ >/tmp/bt.pid; exec blktrace "$@"' blktrace -d "$DEV" -D /out/trace "$@" \
		</dev/null >/out/blktrace.stdout 2>/out/blktrace.stderr
	rc=$?
	if [ "${TRACER_CPU:-0}" = 1 ] && [ -n "${CPU0_CU:-}" ] && read_cpu $$; then
		status tracer_cpu_total "$((CPU_CU - CPU0_CU)) $((CPU_CS - CPU0_CS))"
		status clk_tck 100
	fi
	wait $CTLPID
	echo $rc >/out/blktrace.rc
	status tracer_rc $rc
	log "blktrace exit status $rc ($(sed -n 's/^tracer_stop=//p' /out/status))"
	cat /out/blktrace.stdout /out/blktrace.stderr

	tracefs_settings >/out/tracefs-after.txt

	# run-trace --post: what the test wants done once the tracer has exited
	if [ -f "$RUNDIR/post.sh" ]; then
		log "post script"
		. "$RUNDIR/post.sh" >>/out/post.log 2>&1
	fi

	# the tracer must have torn its trace down; if not, blktrace -k does it
	if traced; then
		status teardown_ok 0
		log "warning: a trace is still set up on $DEVNAME after the tracer exited: blktrace -k"
		timeout 10 blktrace -k -d "$DEV" >/out/blktrace-k.out 2>&1
		echo "exit $?" >>/out/blktrace-k.out
		traced && status teardown_after_k 0 || status teardown_after_k 1
	else
		status teardown_ok 1
	fi
	ls -ln /out/trace >/out/trace-files.txt
	cd /
	unload_modules "$RUNDIR/modules.load"
	end_run
}

r=1
while [ $r -le "$RUNS" ]; do
	run_one $r
	r=$((r + 1))
done
finish
