#!/bin/bash
# tests/vm/run-trace.sh — run a blktrace binary inside a qemu (TCG) VM with Debian's stock
# kernel (relay/debugfs path, lockdown none), on a traced device with a known workload, and
# bring the results back.
#
#   tests/vm/run-trace.sh TRACER_BINARY OUTDIR [options] [-- extra tracer args]
#   tests/vm/run-trace.sh TRACER_BINARY --batch DIR [--mem MB] [--smp N] [--keep]
#
# options of a run:
#   --device nullb|virtio   traced device: null_blk /dev/nullb0 (default), or a raw 64 MiB
#                           scratch virtio disk (--data-mb MB: larger; the boot's disk is as
#                           large as its runs ask, one disk for all of them)
#   --workload NAME|FILE    dio (default: 16 x 4 KiB O_DIRECT write at block i*37 + read at
#                           block i*53), dio-sizes (512 B..64 KiB), idle (no I/O), or a shell
#                           file sourced in the VM (busybox ash; $DEV is the device; call
#                           io_write/io_read BYTE_OFFSET BYTES so expected.txt is kept)
#   --timeout SEC           the run's time limit (default 120): the VM's watchdog reports and kills a
#                           run still under way after 3/4 of it (OUTDIR/hung: what hung), and
#                           qemu is stopped after the sum of its runs' limits and 30 s
#   --settle SEC            pause between trace setup and workload (default 1)
#   --stop-timeout SEC      how long the tracer may take to exit after SIGINT (default 20)
#   --stop-signal SIG       what stops the tracer after the workload: INT (default), TERM, HUP
#                           or KILL (nothing of the tracer's cleanup runs: --post sees what it left)
#                           (status tracer_stop=sigint, sigterm, sighup, sigkill)
#   --out-limit KB          the tracer's output directory a tmpfs of KB KiB: a disk that fills
#                           up during the trace
#   --nullb-params "..."    null_blk module parameters (default "nr_devices=1 irqmode=1")
#   --tracer-cpu            record the tracer's CPU time in status: tracer_cpu_sigint (just before
#                           SIGINT) and tracer_cpu_total (up to its exit), "UTIME STIME" in clock
#                           ticks of clk_tck (100) per second, all threads
#   --out-mb MB             room for the run's results on the raw output disk they are tarred
#                           onto (default 256)
#   --module FILE.ko        also insmod this module (built out of tree) before the tracer starts,
#                           with --module-params "..." (e.g. "maxactive=1")
#   --pre FILE              a shell file the VM sources once the run's modules are loaded and
#                           its device is found, before the tracer starts ($DEV the device): it
#                           may set DEV to a device it made (a dm device over a partition) and
#                           TRACE_ALSO to more devices to trace (each given to the tracer as -d)
#   --post FILE             a shell file the VM sources after the tracer has exited (and before
#                           the results are packed): e.g. rmmod and checks of what is left
#   --kmod NAME             a module of the VM's kernel (e.g. dm_mod), loaded at boot with the
#                           modules it needs
#   --tool FILE             a program copied into the VM's /bin with its shared libraries
#                           (e.g. /usr/sbin/dmsetup), for --pre, --post or the workload
# options of the VM:
#   --mem MB / --smp N      VM size (default 1024 / 2)
#   --keep                  keep the temporary work directory (initramfs, disk images)
# environment: VM_MONITOR=PATH  qemu's monitor on that unix socket, the kernel booted with
#                           nokaslr, OUTDIR/kallsyms the VM's symbols: tests/vm/guest-regs.py
#                           PATH OUTDIR/kallsyms names where a hung guest's vCPUs are
#              VM_APPEND="..."  more kernel parameters, e.g. "tsc=reliable clocksource=tsc"
#                           (under TCG the guest kernel picks the HPET, every clock read an
#                           emulated MMIO access: bench/bench-blktrace-vm.sh)
#              VM_TCG_THREAD=multi  a host thread per vCPU (MTTCG; default single: the
#                           vCPUs take turns on one thread, see the qemu command below)
#
# --batch DIR: one boot runs several runs in turn, each as a single run would (a boot under
# TCG costs several times what a short run does). DIR holds a file N.args per run (N = 1, 2, ...
# in the order they run), the arguments "OUTDIR [options of a run] [-- extra tracer args]"
# separated by NUL bytes: tests/vm/batch.sh writes them (vm_batch_add), and vm_batch_boot calls
# this script. null_blk is loaded for each nullb run with its parameters and removed after it,
# and so is a --module still loaded when the run (and its --post) ended: each run starts from
# the same state. A single run is a batch of one.
#
# In the VM: blktrace -d DEV -o trace -D /out/trace [extra args] &, workload, kill -INT, wait.
# OUTDIR receives: console.log (serial console of the whole boot), trace/ (trace.blktrace.N),
# expected.txt ("R|W SECTOR BYTES" per issued I/O), blktrace.stdout, blktrace.stderr,
# blktrace.rc, status (key=value), vm.log, workload.log, trace-files.txt, blktrace-version.txt,
# DONE, vm-wall-seconds (of the whole boot), vm-runs (the number of runs the boot had).
#
# Exit: 0 the VM ran its script to the end (whatever the tracer did: look at blktrace.rc and
# status; in a batch, every run's DONE is there); 77 the VM cannot be run here (prepare.sh's
# reason printed); 1 the VM did not finish (timeout, crash, missing results); 2 usage error.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=run-trace
die() { echo "$prog: ERROR: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
bad() { echo "$prog: $*" >&2; exit 2; }

[ $# -ge 2 ] || usage
tracer=$1
shift
mem=1024 smp=2 keep=0 batch=
if [ "$1" = --batch ]; then
	batch=${2:?}
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--mem) mem=${2:?}; shift 2 ;;
		--smp) smp=${2:?}; shift 2 ;;
		--keep) keep=1; shift ;;
		*) bad "unknown option $1 after --batch (the options of a run go into DIR/N.args)" ;;
		esac
	done
	[ -d "$batch" ] || bad "--batch: no directory $batch"
fi
tracer_path=$(command -v -- "$tracer" 2>/dev/null) || true
[ -n "$tracer_path" ] && [ -f "$tracer_path" ] && [ -x "$tracer_path" ] || die "tracer $tracer is not an executable file"
tracer_path=$(readlink -f "$tracer_path")
[ "$(head -c 4 "$tracer_path" | od -An -c | tr -d ' ')" = '177ELF' ] ||
	die "tracer $tracer_path is not an ELF binary (a script or libtool wrapper cannot run in the VM)"

# ---- prepared kernel, qemu, busybox -----------------------------------------------------------
vmenv=$("$here/prepare.sh" --env)
rc=$?
[ $rc = 0 ] || { [ $rc = 77 ] && echo "$prog: SKIP: VM not available (see above)" >&2; exit $rc; }
eval "$vmenv"

work=$(mktemp -d "${TMPDIR:-/tmp}/blktrace-vm.XXXXXX") || die "mktemp failed"
cleanup() {
	if [ $keep = 1 ]; then echo "$prog: kept work directory $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/runs,proc,sys,dev,tmp,res,lib/modules}

# ---- kernel modules, dependencies first (from modules.dep), built-ins skipped ---------------------
declare -A copied=()
: >"$root/etc/modules.load"
# mod_file NAME: copies the module into the initramfs (once); its dependencies are loaded at boot
mod_file() {
	local name=$1 line path deps d
	[ -n "${copied[$name]:-}" ] && return 0
	line=$(grep -E "(^|/)${name//_/[_-]}\.ko(\.xz|\.zst|\.gz)?:" "$VM_MODDIR/modules.dep" | head -n 1)
	if [ -z "$line" ]; then
		grep -qE "/${name//_/[_-]}\.ko\$" "$VM_MODDIR/modules.builtin" 2>/dev/null && { copied[$name]=builtin; return 0; }
		die "module $name is neither in modules.dep nor built in"
	fi
	path=${line%%:*}
	deps=${line#*:}
	for d in $deps; do
		d=${d##*/}
		boot_module "${d%%.ko*}"
	done
	case $path in
	*.ko) cp "$VM_MODDIR/$path" "$root/lib/modules/$name.ko" ;;
	*.ko.xz) xz -dc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	*.ko.zst) zstd -dqc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	*.ko.gz) gzip -dc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	esac || die "cannot copy module $path"
	copied[$name]=1
}
declare -A at_boot=()
boot_module() { # NAME: loaded once, at boot
	[ -n "${at_boot[$1]:-}" ] && return 0
	mod_file "$1"
	at_boot[$1]=1
	[ "${copied[$1]}" = builtin ] || echo "$1" >>"$root/etc/modules.load"
}
boot_module virtio_pci
boot_module virtio_blk

# copy_libs PROGRAM: its shared libraries and the loader into the initramfs, their directories
# added to libdirs (the VM's LD_LIBRARY_PATH); 1 when ldd names one it cannot find
libdirs=
copy_libs() {
	local lib d
	ldd "$1" >"$work/ldd.txt" 2>&1 || return 0 # a static program
	while read -r lib; do
		[ -f "$lib" ] || die "ldd names $lib which does not exist"
		mkdir -p "$root$(dirname "$lib")"
		[ -f "$root$lib" ] || cp -L "$lib" "$root$lib"
		d=$(dirname "$lib")
		case ":$libdirs:" in *":$d:"*) ;; *) libdirs=${libdirs:+$libdirs:}$d ;; esac
	done < <(sed -n -e 's/^.*=> \(\/[^ ]*\) (0x.*$/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*$/\1/p' "$work/ldd.txt")
	! grep -q 'not found' "$work/ldd.txt"
}
# copy_program FILE: run-trace --tool
copy_program() {
	[ -f "$1" ] && [ -x "$1" ] || return 1
	cp -L "$1" "$root/bin/${1##*/}" && copy_libs "$1" ||
		die "--tool $1: unresolved libraries: $(grep 'not found' "$work/ldd.txt")"
}

# ---- the runs ---------------------------------------------------------------------------------
# the VM's time limit: the sum of its runs' and 30 s for the boot (a run's own limit counts from its start)
outdirs=() total_timeout=30 out_mb_sum=0 want_virtio=0 data_mb=64
# add_run N OUTDIR [options of a run] [-- extra tracer args]: stages run N in /etc/runs/N
add_run() {
	local n=$1 outdir=$2 device=nullb workload=dio timeout=120 settle=1 stop_timeout=20 tracer_cpu=0
	local out_mb=256 extra_mod= extra_mod_params= post_file= nullb_params="nr_devices=1 irqmode=1"
	local stop_signal=INT out_limit= pre_file=
	local extra=() workload_file= v a m rdir
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--device) device=${2:?}; shift 2 ;;
		--workload) workload=${2:?}; shift 2 ;;
		--timeout) timeout=${2:?}; shift 2 ;;
		--settle) settle=${2:?}; shift 2 ;;
		--stop-timeout) stop_timeout=${2:?}; shift 2 ;;
		--stop-signal) stop_signal=${2:?}; shift 2 ;;
		--out-limit) out_limit=${2:?}; shift 2 ;;
		--nullb-params) nullb_params=${2?}; shift 2 ;;
		--tracer-cpu) tracer_cpu=1; shift ;;
		--out-mb) out_mb=${2:?}; shift 2 ;;
		--data-mb)
			[[ ${2:-} =~ ^[0-9]+$ ]] || bad "--data-mb: not a number: ${2:-}"
			[ "$2" -gt $data_mb ] && data_mb=$2
			shift 2
			;;
		--module) extra_mod=${2:?}; shift 2 ;;
		--module-params) extra_mod_params=${2?}; shift 2 ;;
		--post) post_file=${2:?}; shift 2 ;;
		--pre) pre_file=${2:?}; shift 2 ;;
		--kmod) boot_module "${2:?}"; shift 2 ;;
		--tool) copy_program "${2:?}" || bad "--tool: no program $2"; shift 2 ;;
		--mem | --smp | --keep)
			[ -z "$batch" ] || bad "$1 is an option of the VM, not of a run (give it after --batch DIR)"
			case $1 in
			--mem) mem=${2:?}; shift ;;
			--smp) smp=${2:?}; shift ;;
			--keep) keep=1 ;;
			esac
			shift
			;;
		--) shift; extra=("$@"); break ;;
		-h | --help) usage ;;
		*) bad "unknown option $1" ;;
		esac
	done
	case $device in nullb | virtio) ;; *) bad "--device must be nullb or virtio" ;; esac
	for v in "$timeout" "$stop_timeout" "$out_mb"; do
		[[ $v =~ ^[0-9]+$ ]] || bad "not a number: $v"
	done
	[[ $settle =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "--settle: not a number: $settle"
	case $stop_signal in INT | TERM | HUP | KILL) ;; *) bad "--stop-signal must be INT, TERM, HUP or KILL" ;; esac
	[[ $out_limit =~ ^[0-9]*$ ]] || bad "--out-limit: not a number: $out_limit"
	[[ $nullb_params =~ ^[A-Za-z0-9_=,\ .-]*$ ]] || bad "bad --nullb-params"
	[[ $extra_mod_params =~ ^[A-Za-z0-9_=,\ .-]*$ ]] || bad "bad --module-params"
	if [ -n "$extra_mod" ]; then
		[ -f "$extra_mod" ] || bad "--module: no file $extra_mod"
		extra_mod=$(readlink -f "$extra_mod")
	fi
	if [ -n "$post_file" ]; then
		[ -f "$post_file" ] || bad "--post: no file $post_file"
		post_file=$(readlink -f "$post_file")
	fi
	if [ -n "$pre_file" ]; then
		[ -f "$pre_file" ] || bad "--pre: no file $pre_file"
		pre_file=$(readlink -f "$pre_file")
	fi
	case $workload in
	dio | dio-sizes | idle) ;;
	*)
		[ -f "$workload" ] || bad "unknown workload $workload (dio, dio-sizes, idle or a file)"
		workload_file=$(readlink -f "$workload")
		workload=custom
		;;
	esac
	mkdir -p "$outdir" || die "cannot create $outdir"
	outdir=$(cd "$outdir" && pwd)
	# remove what an earlier run left (only the names this script produces)
	rm -rf "$outdir/trace" "$outdir"/{DONE,console.log,expected.txt,blkparse.txt,blkparse.err,check-ios.txt,blktrace.stdout,blktrace.stderr,blktrace.rc,blktrace-k.out,status,vm.log,workload.log,trace-files.txt,blktrace-version.txt,vm-wall-seconds,vm-runs,hung}
	outdirs+=("$outdir")
	total_timeout=$((total_timeout + timeout))
	out_mb_sum=$((out_mb_sum + out_mb))

	rdir=$root/etc/runs/$n
	mkdir -p "$rdir"
	# the modules this run loads before its tracer starts, and removes after it
	: >"$rdir/modules.load"
	if [ $device = nullb ]; then
		mod_file null_blk
		echo "null_blk $nullb_params" >>"$rdir/modules.load"
	else
		want_virtio=1
	fi
	if [ -n "$extra_mod" ]; then
		m=$(basename "$extra_mod" .ko)
		# the run's own copy: two runs of a batch may load two builds of one module
		cp "$extra_mod" "$rdir/$m.ko"
		echo "$m $extra_mod_params" >>"$rdir/modules.load"
	fi
	{
		echo "DEVICE_KIND=$device"
		echo "WORKLOAD=$workload"
		echo "SETTLE=$settle"
		echo "STOP_TIMEOUT=$stop_timeout"
		echo "STOP_SIGNAL=$stop_signal"
		echo "OUT_LIMIT_KB=$out_limit"
		echo "TRACER_CPU=$tracer_cpu"
		# the VM's watchdog ends a run still under way after 3/4 of its --timeout (init.sh)
		echo "RUN_TIMEOUT=$((timeout * 3 / 4))"
	} >"$rdir/run.conf"
	: >"$rdir/tracer-args"
	for a in "${extra[@]}"; do
		case $a in *$'\n'*) die "tracer arguments cannot contain newlines" ;; esac
		printf '%s\n' "$a" >>"$rdir/tracer-args"
	done
	[ -n "$workload_file" ] && cp "$workload_file" "$rdir/workload.sh"
	[ -n "$post_file" ] && cp "$post_file" "$rdir/post.sh"
	[ -n "$pre_file" ] && cp "$pre_file" "$rdir/pre.sh"
	return 0
}

if [ -n "$batch" ]; then
	n=1
	while [ -f "$batch/$n.args" ]; do
		mapfile -d '' -t args <"$batch/$n.args"
		[ ${#args[@]} -ge 1 ] || bad "$batch/$n.args: no output directory"
		add_run "$n" "${args[@]}"
		n=$((n + 1))
	done
	[ $n -gt 1 ] || bad "--batch: no $batch/1.args"
	[ "$(find "$batch" -maxdepth 1 -name '*.args' | wc -l)" = $((n - 1)) ] ||
		bad "--batch: $batch: the N.args files must be numbered 1, 2, ... without a gap"
else
	add_run 1 "$@"
fi
nruns=${#outdirs[@]}
for v in "$mem" "$smp"; do [[ $v =~ ^[0-9]+$ ]] || bad "not a number: $v"; done
# boot-level modules before any run's (configfs for null_blk is one of its dependencies)
[ -n "${copied[null_blk]:-}" ] && boot_module configfs

# ---- initramfs ----------------------------------------------------------------------------------
cp "$VM_BUSYBOX" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
cp "$tracer_path" "$root/bin/blktrace"
chmod 755 "$root/bin/blktrace"
if [ "$(id -u)" = 0 ]; then
	mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null
	mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null
fi

# the tracer's shared libraries and the loader (libdirs: where they are)
copy_libs "$tracer_path" || die "tracer has unresolved libraries: $(grep 'not found' "$work/ldd.txt")"
{
	echo "LIBPATH=$libdirs"
	echo "RUNS=$nruns"
	echo "WANT_VIRTIO=$want_virtio"
	# with the monitor: the kernel's symbols (nokaslr: the same in every boot) for guest-regs.py
	echo "KALLSYMS=$([ -n "${VM_MONITOR:-}" ] && echo 1 || echo 0)"
} >"$root/etc/boot.conf"

(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) >"$work/initrd.cpio" || die "cpio failed"

# ---- disks -----------------------------------------------------------------------------------------
truncate -s "${out_mb_sum}M" "$work/out.img"
drives=(-drive "file=$work/out.img,format=raw,if=none,id=btout"
	-device "virtio-blk-pci,drive=btout,serial=BTNGOUT")
if [ $want_virtio = 1 ]; then
	truncate -s "${data_mb}M" "$work/data.img"
	drives+=(-drive "file=$work/data.img,format=raw,if=none,id=btdata"
		-device "virtio-blk-pci,drive=btdata,serial=BTNGDATA")
fi

# ---- boot ---------------------------------------------------------------------------------------------
# -nic none: the VM has no network device at all. no_timer_check: on a busy host the emulated
# timer can miss the kernel's IO-APIC timer check at boot, which then panics ("IO-APIC + timer
# doesn't work!", seen under make check at load 13)
cmdline="console=ttyS0 quiet panic=-1 no_timer_check${VM_APPEND:+ $VM_APPEND}"
monitor=()
if [ -n "${VM_MONITOR:-}" ]; then
	# kernel addresses the same in every boot: the kallsyms of one (OUTDIR/kallsyms) name them
	cmdline+=" nokaslr"
	monitor=(-monitor "unix:$VM_MONITOR,server,nowait")
fi
# thread=single: the vCPUs take turns on one host thread. With a thread each (MTTCG, qemu's
# default), a vCPU could go on running a stale translation of kernel text that the other had
# just patched (a tracepoint's or kprobe's jump label, text_poke_bp()): it looped on the int3
# of the patch with interrupts off, inside __schedule(), and the patching CPU waited for its
# acknowledgement forever (soft lockup in smp_call_function_many_cond(), seen in t0550 when
# a run enabled its kprobe events, about one boot in three)
# (VM_TCG_THREAD=multi for benchmarks that accept that risk: the tests keep single)
tcg_thread=${VM_TCG_THREAD:-single}
case $tcg_thread in single | multi) ;; *) bad "VM_TCG_THREAD must be single or multi" ;; esac
qemu=(timeout -k 5 "$total_timeout" "$VM_QEMU" -accel "tcg,thread=$tcg_thread" -m "$mem" -smp "$smp" -nographic -no-reboot
	-nic none -kernel "$VM_VMLINUZ" -initrd "$work/initrd.cpio"
	-append "$cmdline" "${drives[@]}" "${monitor[@]}")
echo "$prog: booting $VM_KERNEL_PKG for $nruns run(s), tracer $tracer_path" >&2
t0=$(date +%s.%N)
"${qemu[@]}" </dev/null >"$work/console.log" 2>&1
qrc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
for o in "${outdirs[@]}"; do cp "$work/console.log" "$o/console.log"; done
console=${outdirs[0]}/console.log

if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	under=$(grep -o 'VM: run [0-9]* of [0-9]*' "$console" | tail -n 1)
	echo "$prog: FAIL: the VM did not power off within $total_timeout s (${under:+last begun: ${under#VM: }; }console: $console)" >&2
	tail -n 15 "$console" | sed 's/^/    /' >&2
	exit 1
fi
mkdir -p "$work/res"
if ! tar -xf "$work/out.img" -C "$work/res" 2>"$work/tar.err"; then
	echo "$prog: FAIL: no result archive on the output disk (qemu exit $qrc; console: $console)" >&2
	sed 's/^/    tar: /' "$work/tar.err" >&2
	tail -n 15 "$console" | sed 's/^/    /' >&2
	exit 1
fi
get() { sed -n "s/^$2=//p" "$1/status" 2>/dev/null | tail -n 1; }
rc=0
n=1
for o in "${outdirs[@]}"; do
	if [ -d "$work/res/$n" ]; then
		(cd "$work/res/$n" && tar -cf - .) | tar -xf - -C "$o" || die "cannot copy the results of run $n into $o"
	fi
	if [ -f "$work/res/kallsyms" ]; then
		cp "$work/res/kallsyms" "$o/kallsyms" || die "cannot copy the kernel's symbols into $o"
	fi
	echo "$wall" >"$o/vm-wall-seconds"
	echo "$nruns" >"$o/vm-runs"
	if [ -f "$o/hung" ]; then
		echo "$prog: FAIL: run $n ($o): $(head -n 1 "$o/hung") (the VM's watchdog killed it: $o/hung)" >&2
		rc=1
	fi
	if [ ! -f "$o/DONE" ]; then
		echo "$prog: FAIL: the VM did not run its script to the end of run $n (no DONE marker; console: $console)" >&2
		tail -n 15 "$console" | sed 's/^/    /' >&2
		rc=1
		n=$((n + 1))
		continue
	fi
	nfiles=$(ls "$o/trace" 2>/dev/null | wc -l)
	echo "$prog: run $n of $nruns ran to the end (boot: $wall s): tracer exit $(get "$o" tracer_rc) ($(get "$o" tracer_stop))," \
		"$(get "$o" workload_ios) I/Os ($(get "$o" workload_failures) failed) on $(get "$o" device) $(get "$o" device_majmin)," \
		"$nfiles trace file(s) in $o/trace, teardown_ok=$(get "$o" teardown_ok)" >&2
	n=$((n + 1))
done
exit $rc
