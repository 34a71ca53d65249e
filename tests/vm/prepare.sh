#!/bin/bash
# tests/vm/prepare.sh — get everything needed to boot Debian's stock kernel under qemu (TCG)
# for the relay-path blktrace tests. Idempotent; caches under ${VM_CACHE:-/var/cache/blktrace-ng-vm}.
#
#   tests/vm/prepare.sh [-q | --env]
#
#   -q     print nothing but errors and skip reasons
#   --env  print only the shell assignments (VM_KVER, VM_VMLINUZ, VM_MODDIR, VM_BUSYBOX, VM_QEMU,
#          VM_KDIR: the kernel's headers for building modules, empty if they could not be had...)
#
# Installs what is missing of qemu-system-x86, busybox-static, cpio, xz-utils and kmod (as root,
# through tests/deps.sh, which installs the project's package list). Finds the kernel package that linux-image-amd64 depends on, downloads
# exactly that package, extracts it into $VM_CACHE/kernel/PKG/ and runs depmod there; its
# linux-headers (with the -common and linux-kbuild packages it depends on) into
# $VM_CACHE/headers/KVER/ unless the installed linux-headers-amd64 (tests/packages.txt) has them.
# Writes $VM_CACHE/env.sh (the same assignments as --env) and prints the paths.
#
# Exit 0: ready. Exit 77: cannot be made ready here (not root with things missing, package not
# available, no network to the archive...) — the reason is printed; callers report SKIP.
# Other non-zero: an unexpected failure.
set -u
quiet=0 mode=print
case ${1:-} in
-q) quiet=1 ;;
--env) quiet=1 mode=env ;;
"") ;;
*) echo "usage: $0 [-q|--env]" >&2; exit 2 ;;
esac

VM_CACHE=${VM_CACHE:-/var/cache/blktrace-ng-vm}
log() { [ $quiet = 1 ] || echo "prepare: $*"; }
skip() { echo "prepare: SKIP: $*" >&2; exit 77; }
die() { echo "prepare: ERROR: $*" >&2; exit 1; }

is_root=0
[ "$(id -u)" = 0 ] && is_root=1
export DEBIAN_FRONTEND=noninteractive

# ---- host tools -------------------------------------------------------------------------
# tool -> package
need_pkgs=()
have_static_busybox() {
	[ -x /bin/busybox ] || return 1
	# busybox-static's binary is static; the dynamic "busybox" package's is not
	! ldd /bin/busybox >/dev/null 2>&1
}
command -v qemu-system-x86_64 >/dev/null 2>&1 || need_pkgs+=(qemu-system-x86)
have_static_busybox || need_pkgs+=(busybox-static)
command -v cpio >/dev/null 2>&1 || need_pkgs+=(cpio)
command -v xz >/dev/null 2>&1 || need_pkgs+=(xz-utils)
{ command -v depmod >/dev/null 2>&1 || [ -x /sbin/depmod ] || [ -x /usr/sbin/depmod ]; } || need_pkgs+=(kmod)

apt_updated=0
apt_update() {
	[ $apt_updated = 1 ] && return 0
	apt_updated=1
	log "apt-get update"
	apt-get update -qq >/dev/null 2>&1
}

if [ ${#need_pkgs[@]} -gt 0 ]; then
	[ $is_root = 1 ] || skip "missing host packages (${need_pkgs[*]}) and not root: run as root or 'apt-get install ${need_pkgs[*]}'"
	# the one package list of the project (tests/packages.txt) has them
	log "installing the test packages (missing: ${need_pkgs[*]})"
	"$(dirname "${BASH_SOURCE[0]}")/../deps.sh" >/tmp/prepare-apt.$$.log 2>&1 || {
		tail -n 5 /tmp/prepare-apt.$$.log >&2
		rm -f /tmp/prepare-apt.$$.log
		skip "installing ${need_pkgs[*]} (tests/deps.sh) failed"
	}
	rm -f /tmp/prepare-apt.$$.log
fi
DEPMOD=$(command -v depmod || echo /sbin/depmod)
QEMU=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found after install"
have_static_busybox || skip "/bin/busybox is missing or not static (install busybox-static)"

# ---- cache directory ----------------------------------------------------------------------
# (a cache that is ready may be read-only, e.g. prepared by root and used by another user)
cache_writable() {
	mkdir -p "$VM_CACHE" 2>/dev/null && [ -w "$VM_CACHE" ] ||
		skip "cache directory $VM_CACHE is not writable (set VM_CACHE or run as root)"
}

# ---- the kernel ---------------------------------------------------------------------------
# (apt-cache takes a CPU second to load its cache, and each VM script calls this script three
# times while it holds the VM lock: the answer is kept in $VM_CACHE/kernel-pkg with the
# modification times of apt's lists, its cache and dpkg's status, and asked again when one of
# them changes)
kernel_pkg() {
	local stamp c=$VM_CACHE/kernel-pkg p
	stamp=$(stat -c %Y /var/lib/apt/lists /var/cache/apt/pkgcache.bin /var/lib/dpkg/status 2>/dev/null | tr '\n' ' ')
	if [ -f "$c" ] && [ "$(head -n 1 "$c")" = "stamp $stamp" ]; then
		sed -n 2p "$c"
		return
	fi
	p=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*-amd64\) *$/\1/p' | head -n 1)
	if [ -n "$p" ] && [ -w "$VM_CACHE" ]; then
		printf 'stamp %s\n%s\n' "$stamp" "$p" >"$c.$$" && mv "$c.$$" "$c"
	fi
	echo "$p"
}
pkg=$(kernel_pkg)
if [ -z "$pkg" ] && [ $is_root = 1 ]; then
	apt_update
	pkg=$(kernel_pkg)
fi
if [ -z "$pkg" ]; then
	# apt knows nothing (no lists, offline): fall back to the newest kernel already cached
	pkg=$(ls -d "$VM_CACHE"/kernel/linux-image-*-amd64 2>/dev/null | sort -V | tail -n 1)
	pkg=${pkg##*/}
	[ -n "$pkg" ] && [ -f "$VM_CACHE/kernel/$pkg/.ready" ] ||
		skip "apt-cache depends linux-image-amd64 names no kernel package and none is cached"
	log "apt does not name a kernel; using cached $pkg"
fi
case $pkg in
linux-image-6.1.0-*-amd64) ;;
*) log "note: kernel package is $pkg (expected linux-image-6.1.0-*-amd64)" ;;
esac
kver=${pkg#linux-image-}
kdir=$VM_CACHE/kernel/$pkg

if [ ! -f "$kdir/.ready" ]; then
	cache_writable
	tmp=$VM_CACHE/tmp.$$
	rm -rf "$tmp" "$kdir"
	mkdir -p "$tmp" "$VM_CACHE/kernel"
	log "downloading $pkg"
	if ! (cd "$tmp" && apt-get download -qq "$pkg" >dl.log 2>&1); then
		if [ $is_root = 1 ] && [ $apt_updated = 0 ]; then
			apt_update
			(cd "$tmp" && apt-get download -qq "$pkg" >dl.log 2>&1)
		fi
	fi
	deb=$(ls "$tmp"/"$pkg"_*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		tail -n 5 "$tmp/dl.log" >&2 2>/dev/null
		rm -rf "$tmp"
		skip "apt-get download $pkg failed"
	fi
	log "extracting $(basename "$deb")"
	dpkg-deb -x "$deb" "$tmp/root" || { rm -rf "$tmp"; die "dpkg-deb -x $deb failed"; }
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || { rm -rf "$tmp"; die "$deb has no boot/vmlinuz-$kver"; }
	# the .deb ships no modules.dep
	"$DEPMOD" -b "$tmp/root" "$kver" || { rm -rf "$tmp"; die "depmod -b $tmp/root $kver failed"; }
	dpkg-deb -f "$deb" Version >"$tmp/root/.pkg-version"
	mv "$tmp/root" "$kdir"
	rm -rf "$tmp" # the .deb is not kept
	touch "$kdir/.ready"
fi

VMLINUZ=$kdir/boot/vmlinuz-$kver
MODDIR=$kdir/lib/modules/$kver
[ -f "$VMLINUZ" ] && [ -f "$MODDIR/modules.dep" ] || die "cached kernel in $kdir is incomplete (remove it and re-run)"

# ---- the kernel's headers, to build kernel/iowait against it -------------------------------
# tests/packages.txt has linux-headers-amd64, which depends on the headers of the kernel
# linux-image-amd64 names: installed (tests/deps.sh), they are /usr/src/linux-headers-KVER.
# Otherwise (apt's lists moved on since, or not root to install them): linux-headers-KVER
# depends on linux-headers-KVER-common (the headers proper) and linux-kbuild-X.Y (fixdep,
# modpost): all three are downloaded and unpacked into one tree, where the relative links
# between them resolve. Best effort: without them only the module tests skip.
hdir=$VM_CACHE/headers/$kver
KDIR=
if [ ! -f "/usr/src/linux-headers-$kver/Makefile" ] && [ $is_root = 1 ] &&
	! dpkg-query -W -f='${Status}' linux-headers-amd64 2>/dev/null | grep -q 'ok installed'; then
	log "installing linux-headers-amd64 (tests/packages.txt)"
	"$(dirname "${BASH_SOURCE[0]}")/../deps.sh" >/tmp/prepare-apt.$$.log 2>&1 ||
		{ tail -n 3 /tmp/prepare-apt.$$.log >&2; log "note: tests/deps.sh failed; downloading the headers instead"; }
	rm -f /tmp/prepare-apt.$$.log
fi
if [ -f "/usr/src/linux-headers-$kver/Makefile" ]; then
	KDIR=/usr/src/linux-headers-$kver
elif [ ! -f "$hdir/.ready" ]; then
	hpkgs=$(apt-cache depends "linux-headers-$kver" 2>/dev/null |
		sed -n 's/^ *Depends: *\(linux-headers-[^ ]*-common\|linux-kbuild-[^ ]*\) *$/\1/p')
	if [ -n "$hpkgs" ] && { [ -w "$VM_CACHE" ] || mkdir -p "$VM_CACHE" 2>/dev/null; }; then
		tmp=$VM_CACHE/tmp-h.$$
		rm -rf "$tmp" "$hdir"
		mkdir -p "$tmp/root" "$VM_CACHE/headers"
		log "downloading linux-headers-$kver $(echo $hpkgs)"
		ok=1
		for p in "linux-headers-$kver" $hpkgs; do
			(cd "$tmp" && apt-get download -qq "$p" >>dl.log 2>&1) || { ok=0; break; }
		done
		for deb in "$tmp"/*.deb; do
			[ $ok = 1 ] && [ -f "$deb" ] || break
			dpkg-deb -x "$deb" "$tmp/root" || ok=0
		done
		if [ $ok = 1 ] && [ -f "$tmp/root/usr/src/linux-headers-$kver/Makefile" ]; then
			# its Makefile includes the -common one by absolute path: point it here
			sed -i "s|^include /usr/src/|include $hdir/usr/src/|" \
				"$tmp/root/usr/src/linux-headers-$kver/Makefile"
			mv "$tmp/root" "$hdir"
			touch "$hdir/.ready"
		else
			tail -n 3 "$tmp/dl.log" 2>/dev/null >&2
			log "note: the kernel headers could not be had; the module tests will skip"
		fi
		rm -rf "$tmp" # the .debs are not kept
	fi
fi
[ -z "$KDIR" ] && [ -f "$hdir/.ready" ] && KDIR=$hdir/usr/src/linux-headers-$kver

envtext=$(cat <<EOF
# written by tests/vm/prepare.sh
VM_KERNEL_PKG='$pkg'
VM_KERNEL_PKG_VERSION='$(cat "$kdir/.pkg-version" 2>/dev/null)'
VM_KVER='$kver'
VM_VMLINUZ='$VMLINUZ'
VM_MODDIR='$MODDIR'
VM_BUSYBOX='/bin/busybox'
VM_QEMU='$QEMU'
VM_KDIR='$KDIR'
EOF
)
# env.sh for other callers: best effort (a read-only ready cache is fine, see --env)
if [ "$(cat "$VM_CACHE/env.sh" 2>/dev/null)" != "$envtext" ] && [ -w "$VM_CACHE" ]; then
	printf '%s\n' "$envtext" >"$VM_CACHE/env.sh.$$" && mv "$VM_CACHE/env.sh.$$" "$VM_CACHE/env.sh"
fi
if [ $mode = env ]; then
	printf '%s\n' "$envtext"
	exit 0
fi

if [ $quiet = 0 ]; then
	echo "VM_CACHE=$VM_CACHE"
	echo "kernel package: $pkg $(cat "$kdir/.pkg-version" 2>/dev/null)"
	echo "vmlinuz: $VMLINUZ"
	echo "modules: $MODDIR"
	echo "busybox: /bin/busybox"
	echo "qemu: $QEMU ($("$QEMU" --version | head -n 1))"
	echo "kernel headers (KDIR): ${KDIR:-none}"
	echo "env: $VM_CACHE/env.sh"
fi
exit 0
