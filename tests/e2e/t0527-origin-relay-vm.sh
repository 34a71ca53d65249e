#!/bin/bash
# blktrace --origin on the relay path (issue 39 section 1, both backends): Debian's stock 6.1
# in qemu (tests/vm/), cgroup v2 with the io and memory controllers, ext4 on the virtio disk.
# Two cgroups each run a buffered writer (16 and 24 MiB), then sync: the kernel charges the
# flusher's writeback to the cgroup that dirtied the pages (cgroup writeback), and the
# tracer carries each record's cgroup id in notes. Checked from the tracer's own files:
# - at least 95% of each cgroup's written bytes are in W queue events blkparse's %G names
#   with its path (/a, /b);
# - the records are untagged: the reference blkparse (1.2.0, which rejects tagged records)
#   reads the files and prints the same default text as ours;
# - blktrace's summary names the cgroups, and blk_cgroup is put back off after the run.
. "$(dirname "$0")/../lib.sh"

skip_under_valgrind "--origin on the relay path in a VM" "the tracer runs natively in the VM; the plain and ASan runs run it"
for tool in mkfs.ext4 python3; do
	if ! command -v $tool >/dev/null; then
		skip "--origin on the relay path in a VM ($tool missing: tests/deps.sh installs it)"
		exit 0
	fi
done
. "$TOP/tests/vm/batch.sh"
vm_ready "--origin on the relay path in a VM" || exit 0
w="$OUT/vm-origin-relay"
rm -rf "$w"
mkdir -p "$w"

cat >"$w/pre.sh" <<'PRE'
mkfs.ext4 -q -F "$DEV" 2>>/out/workload.log || return 1
mkdir -p /mnt/fs
mount -t ext4 "$DEV" /mnt/fs || return 1
mount -t cgroup2 none /sys/fs/cgroup || return 1
echo "+io +memory" >/sys/fs/cgroup/cgroup.subtree_control || return 1
mkdir -p /sys/fs/cgroup/a /sys/fs/cgroup/b
cat /sys/fs/cgroup/cgroup.subtree_control >>/out/workload.log
PRE
cat >"$w/work.sh" <<'WORK'
# each writer moves itself into its cgroup, then writes buffered; sync writes them back
sh -c 'echo $$ >/sys/fs/cgroup/a/cgroup.procs && exec dd if=/dev/zero of=/mnt/fs/a bs=65536 count=256' 2>>/out/workload.log
sh -c 'echo $$ >/sys/fs/cgroup/b/cgroup.procs && exec dd if=/dev/zero of=/mnt/fs/b bs=65536 count=384' 2>>/out/workload.log
sync
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-during 2>&1
WORK
cat >"$w/post.sh" <<'POST'
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-after 2>&1
umount /mnt/fs
POST

b="$w/batch"
vm_batch_new "$b"
vm_batch_add "$b" "$w/run" --device virtio --kmod crc32c_generic --kmod ext4 --tool "$(command -v mkfs.ext4)" \
	--pre "$w/pre.sh" --post "$w/post.sh" --workload "$w/work.sh" --timeout 150 \
	-- --backend=relay --origin
vm_batch_boot "$b" "$TOP/blktrace" >"$w/vm.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip "--origin on the relay path in a VM ($(tail -n 1 "$w/vm.out"))"
	exit 0
elif [ $rc != 0 ]; then
	fail "--origin on the relay path in a VM: the VM: $(tail -n 3 "$w/vm.out" | tr '\n' ' ')"
	exit 0
fi
d="$w/run"
if [ "$(cat "$d/blktrace.rc" 2>/dev/null)" != 0 ]; then
	fail "relay --origin: the tracer in the VM: status $(cat "$d/blktrace.rc" 2>/dev/null): $(head -c 300 "$d/blktrace.stderr" 2>/dev/null)"
	exit 0
fi
grep -q 'Cgroups: [1-9][0-9]* named from /sys/fs/cgroup' "$d/blktrace.stderr" "$d/blktrace.stdout" 2>/dev/null &&
	pass "relay --origin: the summary names the cgroups from the v2 hierarchy" ||
	fail "relay --origin: no 'Cgroups: N named from /sys/fs/cgroup' line: $(grep -h Cgroups "$d/blktrace.stderr" "$d/blktrace.stdout" | head -n 2)"
[ "$(cat "$d/blk_cgroup-during" 2>/dev/null)" = 1 ] && [ "$(cat "$d/blk_cgroup-after" 2>/dev/null)" = 0 ] &&
	pass "relay --origin: blk_cgroup on while tracing, put back off after" ||
	fail "relay --origin: blk_cgroup during '$(cat "$d/blk_cgroup-during" 2>/dev/null)', after '$(cat "$d/blk_cgroup-after" 2>/dev/null)'"

n=$(cd "$d/trace" && ls -- *.blktrace.0 | sed 's/\.blktrace\.0$//' | head -n 1)
(cd "$d/trace" && $BLKPARSE -i "$n" -f '%a %3d %G %n\n' >"$d/cg.txt" 2>"$d/cg.err") ||
	fail "relay --origin: blkparse -f %G: $(head -n 2 "$d/cg.err")"
# written bytes per cgroup path, from the W queue events
awk '$1 == "Q" && $2 ~ /W/ { s[$3] += $4 * 512 } END { for (k in s) print k, s[k] }' "$d/cg.txt" | sort >"$d/per-cg.txt"
for cg in a:16 b:24; do
	want=$((${cg#*:} * 1048576))
	got=$(awk -v p="/${cg%%:*}" '$1 == p { print $2 }' "$d/per-cg.txt")
	if [ -n "$got" ] && [ "$got" -ge $((want * 95 / 100)) ]; then
		pass "relay --origin: cgroup /${cg%%:*} charged $got of the $want bytes it wrote (>= 95%, cgroup writeback)"
	else
		fail "relay --origin: cgroup /${cg%%:*} charged ${got:-0} bytes, wrote $want: $(tr '\n' ' ' <"$d/per-cg.txt")"
	fi
done
# untagged records: the classic tool reads them, and our default text is its text
if [ -x /usr/bin/blkparse ]; then
	(cd "$d/trace" && /usr/bin/blkparse -i "$n" >"$d/ref.txt" 2>"$d/ref.err" && $BLKPARSE -i "$n" >"$d/ours.txt" 2>/dev/null)
	if grep -q ' Q ' "$d/ref.txt" && cmp -s "$d/ref.txt" "$d/ours.txt"; then
		pass "relay --origin: the reference blkparse 1.2.0 reads the files (records untagged), and prints our default text"
	else
		fail "relay --origin: the reference blkparse's text differs from ours or is empty: $(diff "$d/ref.txt" "$d/ours.txt" | head -n 4 | tr '\n' ' ')"
	fi
else
	skip "relay --origin: the reference blkparse (Debian's blktrace not installed)"
fi
# btt's I/O by cgroup on the merged trace: the same bytes per cgroup (its rows count bios
# that completed; blkparse's count above is of queued bytes)
if (cd "$d/trace" && $BLKPARSE -i "$n" -d "$d/merged.bin" -O >/dev/null 2>&1) &&
	"$TOP/btt/btt" -i "$d/merged.bin" >"$d/btt.txt" 2>"$d/btt.err"; then
	for cg in a:16 b:24; do
		want=$((${cg#*:} * 1048576))
		got=$(awk -v p="/${cg%%:*}" '/^=+ I\/O by cgroup/ { s = 1; next } /^=+ / { s = 0 }
			s && $1 == p { b += $6 } END { print b + 0 }' "$d/btt.txt")
		[ "$got" -ge $((want * 95 / 100)) ] &&
			pass "relay --origin: btt's I/O by cgroup: /${cg%%:*} $got bytes of $want (>= 95%)" ||
			fail "relay --origin: btt's I/O by cgroup: /${cg%%:*} $got bytes, wrote $want: $(grep -A6 'I/O by cgroup' "$d/btt.txt" | tr '\n' ' ')"
	done
else
	fail "relay --origin: blkparse -d / btt: $(head -n 2 "$d/btt.err" 2>/dev/null)"
fi
