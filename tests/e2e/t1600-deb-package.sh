#!/bin/bash
# The Debian packages (debian/): dpkg-buildpackage -us -uc -b from a fresh git clone of HEAD
# (committed work only) builds blktrace-ng, blk-iowait-dkms and blktrace-ng-agent; lintian
# reports no error (its warnings listed); the tools' package declares that it replaces
# blktrace; its blkparse and btt, extracted with dpkg -x (not installed: the other tests
# compare against Debian's blktrace), print what the tree's build prints; the agent's units,
# with the drop-in its generator makes of agent.conf, pass systemd-analyze verify and its
# shipped agent.conf parses; dkms builds the extracted module source against the VM kernel's
# headers and the VM loads that blk_iowait.ko, its tracepoints appear and blktrace --iowait
# uses them. One round of the agent traces a loop device into tsv:DIR, one fails.
. "$(dirname "$0")/../lib.sh"

skip_under_valgrind "the Debian package" "it builds the source, not a tool under test; the plain run builds it"
skip_under_asan "the Debian package" "it builds the source, not a tool under test; the plain run builds it"
for t in git dpkg-buildpackage dh dh_dkms; do
	if ! command -v $t >/dev/null; then
		skip "the Debian package ($t is missing: apt-get install git dpkg-dev debhelper dh-dkms, tests/packages.txt)"
		exit 0
	fi
done
if ! git -C "$TOP" rev-parse --verify -q HEAD >/dev/null; then
	skip "the Debian package (the tree is not a git checkout: the package is built from a clone of HEAD)"
	exit 0
fi

w="$OUT/deb"
rm -rf "$w"
mkdir -p "$w"
# 1. the build, from a clone (the debs land beside it, in $w)
git clone -q "$TOP" "$w/src" 2>"$w/clone.log" || {
	fail "git clone of $TOP: $(head -n 3 "$w/clone.log" | tr '\n' ' ')"
	exit 0
}
head=$(git -C "$w/src" log -1 --format=%h)
t0=$SECONDS
if (cd "$w/src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$w/build.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b in a fresh clone of HEAD ($head): $(cd "$w" && ls -- *.deb | tr '\n' ' ')($((SECONDS - t0)) s)"
else
	fail "dpkg-buildpackage in a fresh clone of HEAD ($head): $(grep -E 'error|Error' "$w/build.log" | head -n 3 | tr '\n' ' ') ($w/build.log)"
	exit 0
fi
ver=$(cd "$w/src" && dpkg-parsechangelog -S Version)
suite=$(make -s -C "$TOP" version)
if [ "$ver" = "$suite" ]; then
	pass "debian/changelog's version $ver is the suite's (include/version.h)"
else
	fail "debian/changelog's version $ver is not the suite's $suite (include/version.h): add a changelog entry"
fi
arch=$(dpkg --print-architecture)
tools="$w/blktrace-ng_${ver}_$arch.deb"
dkmsdeb="$w/blk-iowait-dkms_${ver}_all.deb"
agent="$w/blktrace-ng-agent_${ver}_all.deb"
for f in "$tools" "$dkmsdeb" "$agent"; do
	[ -f "$f" ] || { fail "the build made no $(basename "$f")"; exit 0; }
done

# 2. lintian
if ! command -v lintian >/dev/null; then
	skip "lintian on the packages (lintian is missing: apt-get install lintian, tests/packages.txt)"
else
	lintian --info "$w/blktrace-ng_${ver}_$arch.changes" >"$w/lintian.txt" 2>&1
	errs=$(grep -c '^E: ' "$w/lintian.txt")
	warns=$(grep '^W: ' "$w/lintian.txt" | sed 's/^W: //' | tr '\n' ';')
	if [ "$errs" = 0 ]; then
		pass "lintian: no error; warnings: ${warns:-none}"
	else
		fail "lintian: $errs errors: $(grep '^E: ' "$w/lintian.txt" | head -n 5 | tr '\n' ';')"
	fi
fi

# 3. the tools' package: it replaces blktrace, and its programs print what the tree's do
f=$(dpkg-deb -f "$tools" Provides Conflicts Replaces | tr '\n' ' ')
if [ "$f" = "Provides: blktrace Conflicts: blktrace Replaces: blktrace " ]; then
	pass "blktrace-ng declares Provides, Conflicts and Replaces: blktrace"
else
	fail "blktrace-ng's control fields: $f"
fi
x="$w/x"
dpkg -x "$tools" "$x"
missing=""
for p in blktrace blkparse blkiomon btt iowatcher btrecord btreplay verify_blkparse blkrawverify btrace; do
	[ -x "$x/usr/bin/$p" ] || missing="$missing $p"
done
pages=$(find "$x/usr/share/man" -name '*.gz' | wc -l)
if [ -z "$missing" ] && [ "$pages" = "$(ls "$TOP"/doc/*.[148] | wc -l)" ]; then
	pass "blktrace-ng holds the 10 programs and the $pages man pages of doc/"
else
	fail "blktrace-ng: programs missing:${missing:- none}; $pages man pages"
fi
data=$(unpack ext4-mixed)
(cd "$data" && "$x/usr/bin/blkparse" -i ext4-mixed -D . -d "$w/pkg.bin" >"$w/pkg.blkparse.txt" 2>&1)
(cd "$data" && "$BLKPARSE" -i ext4-mixed -D . -d "$w/tree.bin" >"$w/tree.blkparse.txt" 2>&1)
(cd "$w" && "$x/usr/bin/btt" -i "$w/pkg.bin" -o pkg.btt >/dev/null 2>&1)
(cd "$w" && "$TOP/btt/btt" -i "$w/tree.bin" -o tree.btt >/dev/null 2>&1)
if cmp -s "$w/pkg.blkparse.txt" "$w/tree.blkparse.txt" && cmp -s "$w/pkg.bin" "$w/tree.bin" &&
	cmp -s "$w/pkg.btt.avg" "$w/tree.btt.avg" && [ -s "$w/tree.btt.avg" ] &&
	cmp -s "$data/ext4-mixed.blkparse.txt" "$w/pkg.blkparse.txt"; then
	pass "the extracted blkparse and btt (dpkg -x) on ext4-mixed: the tree's output ($(wc -l <"$w/pkg.blkparse.txt") lines, the reference's; btt's report $(wc -l <"$w/pkg.btt.avg") lines), the same binary dump"
else
	fail "the extracted tools differ from the tree's build on ext4-mixed: $(diff "$w/pkg.blkparse.txt" "$w/tree.blkparse.txt" | head -n 3 | tr '\n' ' ') $(diff "$w/pkg.btt.avg" "$w/tree.btt.avg" | head -n 3 | tr '\n' ' ')"
fi

# 4. the agent: its shipped configuration parses (only the destination missing), a set one is
# read as written; the generator's drop-in and the units pass systemd-analyze verify
a="$w/agent"
dpkg -x "$agent" "$a"
conf="$a/etc/blktrace-ng/agent.conf"
out=$("$a/usr/sbin/blktrace-ng-agent" --check "$conf" 2>&1)
rc=$?
if [ $rc = 2 ] && [ "$out" = "blktrace-ng-agent: $conf: DEST is not set: give the destination of the export (clickhouse://USER@HOST/DB, clickhouses://..., tsv:DIR)" ]; then
	pass "the shipped agent.conf parses; the agent refuses to run until DEST is set: $out"
else
	fail "blktrace-ng-agent --check of the shipped agent.conf: exit $rc: $out"
fi
sed -e 's#^DEST=.*#DEST=clickhouse://writer:s3cret@ch.example.net/blk#' -e 's#^DEVICES=.*#DEVICES=/dev/sda  /dev/nvme0n1#' \
	-e 's#^INTERVAL_MINUTES=.*#INTERVAL_MINUTES="7"#' -e 's#^HOST=.*#HOST=h1#' "$conf" >"$w/agent.conf"
out=$("$a/usr/sbin/blktrace-ng-agent" --check "$w/agent.conf" 2>&1 | tr '\n' ' ')
if [ "$out" = "DEST=clickhouse://writer:***@ch.example.net/blk PASSWORD_FILE= DEVICES=/dev/sda /dev/nvme0n1 TRACE_SECONDS=30 INTERVAL_MINUTES=7 HOST=h1 " ]; then
	pass "blktrace-ng-agent --check reads a configuration as written (no password shown): $out"
else
	fail "blktrace-ng-agent --check: $out"
fi
echo "TRACE_SECONDS=0" >>"$w/agent.conf"
out=$("$a/usr/sbin/blktrace-ng-agent" --check "$w/agent.conf" 2>&1)
rc=$?
[ $rc = 2 ] && [[ $out == *"TRACE_SECONDS '0' is not a number of seconds"* ]] &&
	pass "a bad value: one line naming the file and the key, exit 2: $out" ||
	fail "TRACE_SECONDS=0: exit $rc: $out"
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify of the agent's units (systemd-analyze is missing: apt-get install systemd)"
else
	# a root holding the host's units (their targets) and the package's
	r="$w/root"
	cp -a "$a" "$r"
	cp -an /lib/systemd/system/. "$r/lib/systemd/system/"
	mkdir -p "$r/etc/systemd/system"
	BLKTRACE_NG_AGENT_CONF="$w/agent.conf" "$a/lib/systemd/system-generators/blktrace-ng-agent-generator" "$r/etc/systemd/system"
	drop="$r/etc/systemd/system/blktrace-ng-agent.timer.d/interval.conf"
	if systemd-analyze verify --man=no --root="$r" blktrace-ng-agent.timer blktrace-ng-agent.service >"$w/verify.log" 2>&1 &&
		grep -qx "OnUnitActiveSec=7min" "$drop" && grep -qx "OnBootSec=5min" "$drop"; then
		pass "systemd-analyze verify accepts blktrace-ng-agent.service and .timer with the generator's drop-in (INTERVAL_MINUTES=7: OnUnitActiveSec=7min)"
	else
		fail "systemd-analyze verify of the agent's units: $(head -n 3 "$w/verify.log" | tr '\n' ' ') drop-in: $(tr '\n' ' ' <"$drop" 2>/dev/null)"
	fi
fi

# 5. one round of the agent (the extracted package's script and tools) on a loop device, to
# tsv:DIR: every row is the device's; a failing round exits 1 saying so in its last line, and
# neither round leaves a file in its temporary directory or its working directory
round() { # conf
	(cd "$w/cwd" && TMPDIR="$w/tmp" PATH="$x/usr/bin:$PATH" "$a/usr/sbin/blktrace-ng-agent" "$1")
}
if ! is_root; then
	skip "a round of the agent (needs root for a loop device and the block tracer)"
else
	kernel_lock
	truncate -s 16M "$w/disk.img"
	loop=$(loop_attach "$w/disk.img" 2>/dev/null)
fi
if is_root && [ -z "$loop" ]; then
	skip "a round of the agent (losetup failed: no loop device support)"
elif is_root; then
	trap 'losetup -d "$loop" 2>/dev/null' EXIT
	mkdir -p "$w/tmp" "$w/cwd"
	printf 'DEST=tsv:%s\nDEVICES=%s\nTRACE_SECONDS=2\nHOST=h1\n' "$w/tsv" "$loop" >"$w/round.conf"
	# writes all through the round (the tracer's start takes a while on a loaded host)
	(i=0; while [ ! -f "$w/stop" ] && [ $i -lt 200 ]; do
		dd if=/dev/zero of="$loop" bs=4k count=4 seek=$((i % 1000 * 4)) oflag=direct 2>/dev/null
		sleep 0.05; i=$((i + 1)); done) &
	round "$w/round.conf" >"$w/round.out" 2>&1
	rc=$?
	touch "$w/stop"
	wait
	rows=$(($(wc -l <"$w/tsv/io.tsv" 2>/dev/null || echo 1) - 1))
	others=$(awk -F'\t' -v d="$(basename "$loop")" 'NR > 1 && ($1 != "h1" || $2 != d)' "$w/tsv/io.tsv" 2>/dev/null | wc -l)
	left=$(find "$w/tmp" "$w/cwd" -mindepth 1 | wc -l)
	if [ $rc = 0 ] && [ "$rows" -gt 0 ] && [ "$others" = 0 ] && [ "$left" = 0 ] &&
		tail -n 1 "$w/round.out" | grep -q "^blktrace-ng-agent: round done: $loop traced for 2 s"; then
		pass "a round of the agent from the package: $loop traced 2 s, $rows I/Os in tsv:DIR/io.tsv, all of host h1 and $(basename "$loop"), no file left in TMPDIR or the working directory: $(tail -n 1 "$w/round.out")"
	else
		fail "a round of the agent: exit $rc, $rows rows, $others of another host or device, $left files left ($(find "$w/tmp" "$w/cwd" -mindepth 1 | head -n 3 | tr '\n' ' ')): $(tail -n 3 "$w/round.out" | tr '\n' ' ')"
	fi
	printf 'DEST=tsv:/proc/blktrace-ng-nowhere\nDEVICES=%s\nTRACE_SECONDS=1\n' "$loop" >"$w/fail.conf"
	round "$w/fail.conf" >"$w/fail.out" 2>&1
	rc=$?
	left=$(find "$w/tmp" "$w/cwd" -mindepth 1 | wc -l)
	if [ $rc = 1 ] && [ "$left" = 0 ] && grep -q "^btt: " "$w/fail.out" &&
		tail -n 1 "$w/fail.out" | grep -q "^blktrace-ng-agent: round failed (.*btt exit 1.*): nothing kept on this host"; then
		pass "a failing round (tsv:/proc/...): exit 1, btt's message then: $(tail -n 1 "$w/fail.out"); no file left"
	else
		fail "a failing round: exit $rc, $left files left: $(tail -n 3 "$w/fail.out" | tr '\n' ' ')"
	fi
	losetup -d "$loop" 2>/dev/null
	trap - EXIT
	kernel_unlock
fi

# 6. dkms build of the extracted module source against the VM kernel's headers, then the VM
# loads the result
if ! command -v dkms >/dev/null; then
	skip "dkms build of blk-iowait-dkms (dkms is missing: apt-get install dkms, tests/packages.txt)"
	exit 0
fi
. "$TOP/tests/vm/batch.sh"
vm_ready "dkms build of blk-iowait-dkms against the VM kernel, and insmod in the VM" || exit 0
if [ -z "${VM_KDIR:-}" ]; then
	skip "dkms build of blk-iowait-dkms (the VM kernel's linux-headers could not be had: see tests/vm/prepare.sh)"
	exit 0
fi
m="$w/dkms-src"
dpkg -x "$dkmsdeb" "$m"
src="$m/usr/src/blk_iowait-$ver"
if grep -qx 'AUTOINSTALL="yes"' "$src/dkms.conf" && grep -qx "PACKAGE_VERSION=\"$ver\"" "$src/dkms.conf"; then
	pass "blk-iowait-dkms: /usr/src/blk_iowait-$ver/dkms.conf with PACKAGE_VERSION=\"$ver\" and AUTOINSTALL=\"yes\""
else
	fail "blk-iowait-dkms's dkms.conf: $(grep -v '^#' "$src/dkms.conf" 2>/dev/null | tr '\n' ' ')"
fi
# dkms's own trees in the scratch directory, the signing key made there (not the host's
# /var/lib/dkms/mok.key): nothing of the host's dkms state changes
export mok_signing_key="$w/mok.key" mok_certificate="$w/mok.pub"
mkdir -p "$w/dkms"
dkms build -m blk_iowait -v "$ver" -k "$VM_KVER" --kernelsourcedir "$VM_KDIR" \
	--sourcetree "$m/usr/src" --dkmstree "$w/dkms" >"$w/dkms.log" 2>&1
rc=$?
ko="$w/dkms/blk_iowait/$ver/$VM_KVER/$(uname -m)/module/blk_iowait.ko"
mlog="$w/dkms/blk_iowait/$ver/$VM_KVER/$(uname -m)/log/make.log" # the kernel build's output
if [ $rc = 0 ] && [ -f "$ko" ] && grep -q 'CC \[M\].*blk_iowait.o' "$mlog" && ! grep -qE "warning|error" "$mlog" &&
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$VM_KVER" ]; then
	pass "dkms build -k $VM_KVER of /usr/src/blk_iowait-$ver (from the .deb): blk_iowait.ko for $VM_KVER, no warning"
else
	fail "dkms build: exit $rc: $(tail -n 5 "$w/dkms.log" | tr '\n' ' ') $(grep -E 'warning|error' "$mlog" 2>/dev/null | head -n 3 | tr '\n' ' ')"
	exit 0
fi
cat >"$w/vm-workload.sh" <<'WL'
ls /sys/kernel/tracing/events/blk_iowait >/out/events 2>&1
cat /sys/module/blk_iowait/version >/out/modversion 2>&1
io_read 4096 4096
WL
cat >"$w/vm-post.sh" <<'WL'
grep -c '^blk_iowait ' /proc/modules >/out/loaded
rmmod blk_iowait
echo "rmmod $?" >/out/rmmod
WL
B="$w/batch"
d="$w/vm"
vm_batch_new "$B"
vm_batch_add "$B" "$d" --device nullb --module "$ko" --workload "$w/vm-workload.sh" --post "$w/vm-post.sh" -- --iowait
vm_batch_boot "$B" "$TOP/blktrace" >"$B.log" 2>&1
brc=$?
if [ $brc != 0 ] || ! vm_run_ended "$d"; then
	fail "the VM run with the dkms-built module: run-trace exit $brc: $(vm_run_why "$d" "$B.log")"
	exit 0
fi
st=$(sed -n 's/^insmod_blk_iowait=//p' "$d/status" | tail -n 1)
if [ "$st" = ok ] && [ "$(cat "$d/loaded")" = 1 ] && grep -qx iowait "$d/events" && grep -qx iowait_end "$d/events" &&
	grep -q "the blk_iowait module's tracepoints" "$d/blktrace.stderr" && [ "$(cat "$d/rmmod")" = "rmmod 0" ]; then
	pass "the VM ($VM_KVER) loads the dkms-built blk_iowait.ko (version $(cat "$d/modversion")): tracepoints $(grep -v enable "$d/events" | grep -v filter | tr '\n' ' ')appear, blktrace --iowait uses them, rmmod exit 0"
else
	fail "the dkms-built module in the VM: insmod=$st loaded=$(cat "$d/loaded" 2>/dev/null) events: $(tr '\n' ' ' <"$d/events" 2>/dev/null) $(cat "$d/rmmod" 2>/dev/null) $(head -c 300 "$d/blktrace.stderr")"
fi
