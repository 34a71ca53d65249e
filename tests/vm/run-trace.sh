#!/bin/bash
# tests/vm/run-trace.sh — run a blktrace binary inside a qemu (TCG) VM with Debian's stock
# kernel (relay/debugfs path, lockdown none), on a traced device with a known workload, and
# bring the results back.
#
#   tests/vm/run-trace.sh TRACER_BINARY OUTDIR [options] [-- extra tracer args]
#
# options:
#   --device nullb|virtio   traced device: null_blk /dev/nullb0 (default), or a raw 64 MiB
#                           scratch virtio disk
#   --workload NAME|FILE    dio (default: 16 x 4 KiB O_DIRECT write at block i*37 + read at
#                           block i*53), dio-sizes (512 B..64 KiB), idle (no I/O), or a shell
#                           file sourced in the VM (busybox ash; $DEV is the device; call
#                           io_write/io_read BYTE_OFFSET BYTES so expected.txt is kept)
#   --timeout SEC           qemu wall-clock limit (default 120)
#   --settle SEC            pause between trace setup and workload (default 1)
#   --stop-timeout SEC      how long the tracer may take to exit after SIGINT (default 20)
#   --nullb-params "..."    null_blk module parameters (default "nr_devices=1 irqmode=1")
#   --mem MB / --smp N      VM size (default 1024 / 2)
#   --keep                  keep the temporary work directory (initramfs, disk images)
#   --tracer-cpu            record the tracer's CPU time in status: tracer_cpu_sigint (just before
#                           SIGINT) and tracer_cpu_total (up to its exit), "UTIME STIME" in clock
#                           ticks of clk_tck (100) per second, all threads
#   --out-mb MB             size of the raw output disk the results are tarred onto (default 256)
#   --module FILE.ko        also insmod this module (built out of tree) after the others, with
#                           --module-params "..." (e.g. "maxactive=1")
#   --post FILE             a shell file the VM sources after the tracer has exited (and before
#                           the results are packed): e.g. rmmod and checks of what is left
#
# In the VM: blktrace -d DEV -o trace -D /out/trace [extra args] &, workload, kill -INT, wait.
# OUTDIR receives: console.log (serial console), trace/ (trace.blktrace.N), expected.txt
# ("R|W SECTOR BYTES" per issued I/O), blktrace.stdout, blktrace.stderr, blktrace.rc, status
# (key=value), vm.log, workload.log, trace-files.txt, blktrace-version.txt, DONE, vm-wall-seconds.
#
# Exit: 0 the VM ran its script to the end (whatever the tracer did: look at blktrace.rc and
# status); 77 the VM cannot be run here (prepare.sh's reason printed); 1 the VM did not finish
# (timeout, crash, missing results); 2 usage error.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=run-trace
die() { echo "$prog: ERROR: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

[ $# -ge 2 ] || usage
tracer=$1 outdir=$2
shift 2
device=nullb workload=dio timeout=120 settle=1 stop_timeout=20 mem=1024 smp=2 keep=0
tracer_cpu=0 out_mb=256 extra_mod= extra_mod_params= post_file=
nullb_params="nr_devices=1 irqmode=1"
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--device) device=${2:?}; shift 2 ;;
	--workload) workload=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--settle) settle=${2:?}; shift 2 ;;
	--stop-timeout) stop_timeout=${2:?}; shift 2 ;;
	--nullb-params) nullb_params=${2?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--tracer-cpu) tracer_cpu=1; shift ;;
	--out-mb) out_mb=${2:?}; shift 2 ;;
	--module) extra_mod=${2:?}; shift 2 ;;
	--module-params) extra_mod_params=${2?}; shift 2 ;;
	--post) post_file=${2:?}; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	-h | --help) usage ;;
	*) echo "$prog: unknown option $1" >&2; usage ;;
	esac
done
case $device in nullb | virtio) ;; *) echo "$prog: --device must be nullb or virtio" >&2; exit 2 ;; esac
for v in "$timeout" "$stop_timeout" "$mem" "$smp" "$out_mb"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "$prog: not a number: $v" >&2; exit 2; }
done
[[ $settle =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$prog: --settle: not a number: $settle" >&2; exit 2; }
[[ $nullb_params =~ ^[A-Za-z0-9_=,\ .-]*$ ]] || { echo "$prog: bad --nullb-params" >&2; exit 2; }
[[ $extra_mod_params =~ ^[A-Za-z0-9_=,\ .-]*$ ]] || { echo "$prog: bad --module-params" >&2; exit 2; }
if [ -n "$extra_mod" ]; then
	[ -f "$extra_mod" ] || { echo "$prog: --module: no file $extra_mod" >&2; exit 2; }
	extra_mod=$(readlink -f "$extra_mod")
fi
if [ -n "$post_file" ]; then
	[ -f "$post_file" ] || { echo "$prog: --post: no file $post_file" >&2; exit 2; }
	post_file=$(readlink -f "$post_file")
fi
workload_file=
case $workload in
dio | dio-sizes | idle) ;;
*)
	[ -f "$workload" ] || { echo "$prog: unknown workload $workload (dio, dio-sizes, idle or a file)" >&2; exit 2; }
	workload_file=$(readlink -f "$workload")
	workload=custom
	;;
esac

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

mkdir -p "$outdir" || die "cannot create $outdir"
outdir=$(cd "$outdir" && pwd)
# remove what an earlier run left (only the names this script produces)
rm -rf "$outdir/trace" "$outdir"/{DONE,console.log,expected.txt,blkparse.txt,blkparse.err,check-ios.txt,blktrace.stdout,blktrace.stderr,blktrace.rc,blktrace-k.out,status,vm.log,workload.log,trace-files.txt,blktrace-version.txt,vm-wall-seconds}

work=$(mktemp -d "${TMPDIR:-/tmp}/blktrace-vm.XXXXXX") || die "mktemp failed"
cleanup() {
	if [ $keep = 1 ]; then echo "$prog: kept work directory $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- initramfs ----------------------------------------------------------------------------------
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,out,lib/modules}
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

# shared libraries of a dynamically linked tracer, and the loader
libdirs=
if ldd "$tracer_path" >"$work/ldd.txt" 2>&1; then
	while read -r lib; do
		[ -f "$lib" ] || die "ldd names $lib which does not exist"
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
		d=$(dirname "$lib")
		case ":$libdirs:" in *":$d:"*) ;; *) libdirs=${libdirs:+$libdirs:}$d ;; esac
	done < <(sed -n -e 's/^.*=> \(\/[^ ]*\) (0x.*$/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*$/\1/p' "$work/ldd.txt")
	grep -q 'not found' "$work/ldd.txt" && die "tracer has unresolved libraries: $(grep 'not found' "$work/ldd.txt")"
fi

# kernel modules, dependencies first (from modules.dep), built-ins skipped
declare -A loaded=()
: >"$root/etc/modules.load"
add_module() { # NAME [PARAMS]
	local name=$1 params=${2:-} line path deps d
	[ -n "${loaded[$name]:-}" ] && return 0
	line=$(grep -E "(^|/)${name//_/[_-]}\.ko(\.xz|\.zst|\.gz)?:" "$VM_MODDIR/modules.dep" | head -n 1)
	if [ -z "$line" ]; then
		grep -qE "/${name//_/[_-]}\.ko\$" "$VM_MODDIR/modules.builtin" 2>/dev/null && { loaded[$name]=builtin; return 0; }
		die "module $name is neither in modules.dep nor built in"
	fi
	path=${line%%:*}
	deps=${line#*:}
	for d in $deps; do
		d=${d##*/}
		add_module "${d%%.ko*}"
	done
	case $path in
	*.ko) cp "$VM_MODDIR/$path" "$root/lib/modules/$name.ko" ;;
	*.ko.xz) xz -dc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	*.ko.zst) zstd -dqc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	*.ko.gz) gzip -dc "$VM_MODDIR/$path" >"$root/lib/modules/$name.ko" ;;
	esac || die "cannot copy module $path"
	loaded[$name]=1
	echo "$name $params" >>"$root/etc/modules.load"
}
add_module virtio_pci
add_module virtio_blk
if [ $device = nullb ]; then
	add_module configfs
	add_module null_blk "$nullb_params"
fi
if [ -n "$extra_mod" ]; then
	m=$(basename "$extra_mod" .ko)
	cp "$extra_mod" "$root/lib/modules/$m.ko"
	echo "$m $extra_mod_params" >>"$root/etc/modules.load"
fi

{
	echo "DEVICE_KIND=$device"
	echo "WORKLOAD=$workload"
	echo "SETTLE=$settle"
	echo "STOP_TIMEOUT=$stop_timeout"
	echo "LIBPATH=$libdirs"
	echo "TRACER_CPU=$tracer_cpu"
} >"$root/etc/run.conf"
: >"$root/etc/tracer-args"
for a in "${extra[@]}"; do
	case $a in *$'\n'*) die "tracer arguments cannot contain newlines" ;; esac
	printf '%s\n' "$a" >>"$root/etc/tracer-args"
done
[ -n "$workload_file" ] && cp "$workload_file" "$root/etc/workload.sh"
[ -n "$post_file" ] && cp "$post_file" "$root/etc/post.sh"

(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) >"$work/initrd.cpio" || die "cpio failed"

# ---- disks -----------------------------------------------------------------------------------------
truncate -s "${out_mb}M" "$work/out.img"
drives=(-drive "file=$work/out.img,format=raw,if=none,id=btout"
	-device "virtio-blk-pci,drive=btout,serial=BTNGOUT")
if [ $device = virtio ]; then
	truncate -s 64M "$work/data.img"
	drives+=(-drive "file=$work/data.img,format=raw,if=none,id=btdata"
		-device "virtio-blk-pci,drive=btdata,serial=BTNGDATA")
fi

# ---- boot ---------------------------------------------------------------------------------------------
# -nic none: the VM has no network device at all
qemu=(timeout -k 5 "$timeout" "$VM_QEMU" -accel tcg -m "$mem" -smp "$smp" -nographic -no-reboot
	-nic none -kernel "$VM_VMLINUZ" -initrd "$work/initrd.cpio"
	-append "console=ttyS0 quiet panic=-1" "${drives[@]}")
echo "$prog: booting $VM_KERNEL_PKG ($device, workload $workload, tracer $tracer_path${extra:+, args: ${extra[*]}})" >&2
t0=$(date +%s.%N)
"${qemu[@]}" </dev/null >"$outdir/console.log" 2>&1
qrc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "$wall" >"$outdir/vm-wall-seconds.tmp"

if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	echo "$prog: FAIL: the VM did not power off within $timeout s (console: $outdir/console.log)" >&2
	tail -n 15 "$outdir/console.log" | sed 's/^/    /' >&2
	exit 1
fi
if ! tar -xf "$work/out.img" -C "$outdir" 2>"$work/tar.err"; then
	echo "$prog: FAIL: no result archive on the output disk (qemu exit $qrc; console: $outdir/console.log)" >&2
	sed 's/^/    tar: /' "$work/tar.err" >&2
	tail -n 15 "$outdir/console.log" | sed 's/^/    /' >&2
	exit 1
fi
mv "$outdir/vm-wall-seconds.tmp" "$outdir/vm-wall-seconds"
if [ ! -f "$outdir/DONE" ]; then
	echo "$prog: FAIL: the VM did not run its script to the end (no DONE marker; console: $outdir/console.log)" >&2
	tail -n 15 "$outdir/console.log" | sed 's/^/    /' >&2
	exit 1
fi
get() { sed -n "s/^$1=//p" "$outdir/status" | tail -n 1; }
nfiles=$(ls "$outdir/trace" 2>/dev/null | wc -l)
echo "$prog: VM ran to the end in $wall s: tracer exit $(get tracer_rc) ($(get tracer_stop))," \
	"$(get workload_ios) I/Os ($(get workload_failures) failed) on $(get device) $(get device_majmin)," \
	"$nfiles trace file(s) in $outdir/trace, teardown_ok=$(get teardown_ok)" >&2
exit 0
