#!/bin/bash
# blktrace --origin in Debian's stock 6.1 kernel (qemu, tests/vm/): cgroup v2 with the io and
# memory controllers, a file system on the virtio disk. Two cgroups each run a buffered dd
# writer to a file of its own (/mnt/fs/a 16 MiB, /mnt/fs/b 24 MiB), then sync: the flusher
# writes the pages back, charged by the kernel to the cgroup that dirtied them (cgroup
# writeback). Where each file lies on the disk comes from filefrag (FIEMAP) in the guest,
# each written byte from blkparse's text of the trace. One boot, six runs:
# - ext4, --backend=relay --origin: the cgroups (at least 95% of each cgroup's written bytes
#   in W queue events blkparse's %G names with its path; the reference blkparse 1.2.0 reads
#   the files and prints our default text; btt's I/O by cgroup), and the files and dirtiers
#   from the side stream (NAME.origin.blktrace.N): at least 95% of each file's bytes, as
#   blkparse counts them in its extents, in W queue events whose %o is the dd that wrote it
#   and %f its path; btt's I/O by origin charges the dd with them (queued by others: the
#   flusher), its I/O by file names the file with them and the dd as its writer; the
#   tracefs instance is gone after the run and blk_cgroup is back off;
# - ext4, --backend=relay --origin -o -: the same from the stream (the side stream's notes
#   merged in time order with the block events), blkparse reading it as a pipe (%o only: the
#   file names come at the end of the stream);
# - ext4, --backend=tracefs --origin: the same, from the notes in the block streams (Debian
#   6.1's event names on the tracefs path);
# - XFS (iomap), both backends: the files and dirtiers, as above;
# - relay --origin killed with SIGKILL: the instance and blk_cgroup left; blktrace -k
#   removes the one and resets the other.
. "$(dirname "$0")/../lib.sh"

LABEL="--origin in a VM"
skip_under_valgrind "$LABEL" "the tracer runs natively in the VM; the plain and ASan runs run it"
for tool in mkfs.ext4 filefrag python3; do
	if ! command -v $tool >/dev/null; then
		skip "$LABEL ($tool missing: tests/deps.sh installs it)"
		exit 0
	fi
done
. "$TOP/tests/vm/batch.sh"
vm_ready "$LABEL" || exit 0
w="$OUT/vm-origin-relay"
rm -rf "$w"
mkdir -p "$w"
xfs=1
why_no_xfs=
if ! command -v mkfs.xfs >/dev/null; then
	xfs=0 why_no_xfs="mkfs.xfs missing: apt-get install xfsprogs"
elif ! grep -qE '(^|/)xfs\.ko' "$VM_MODDIR/modules.dep" 2>/dev/null; then
	xfs=0 why_no_xfs="the VM's kernel has no xfs module"
fi

# the file system on $DEV at /mnt/fs, the cgroups (v2: once per boot)
for fs in ext4 xfs; do
	{
		if [ $fs = ext4 ]; then
			echo 'mkfs.ext4 -q -F "$DEV" 2>>/out/workload.log || return 1'
		else
			echo 'mkfs.xfs -q -f "$DEV" 2>>/out/workload.log || return 1'
		fi
		cat <<PRE
mkdir -p /mnt/fs
mount -t $fs "\$DEV" /mnt/fs || return 1
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup || return 1
echo "+io +memory" >/sys/fs/cgroup/cgroup.subtree_control || return 1
mkdir -p /sys/fs/cgroup/a /sys/fs/cgroup/b
cat /sys/fs/cgroup/cgroup.subtree_control >>/out/workload.log
PRE
	} >"$w/pre-$fs.sh"
done
cat >"$w/work.sh" <<'WORK'
# each writer moves itself into its cgroup, then writes buffered; sync writes them back
sh -c 'echo $$ >/sys/fs/cgroup/a/cgroup.procs && echo $$ >/out/pid-a && exec dd if=/dev/zero of=/mnt/fs/a bs=65536 count=256' 2>>/out/workload.log
sh -c 'echo $$ >/sys/fs/cgroup/b/cgroup.procs && echo $$ >/out/pid-b && exec dd if=/dev/zero of=/mnt/fs/b bs=65536 count=384' 2>>/out/workload.log
sync
filefrag -e -b512 /mnt/fs/a >/out/extents-a 2>&1
filefrag -e -b512 /mnt/fs/b >/out/extents-b 2>&1
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-during 2>&1
ls /sys/kernel/tracing/instances >/out/instances-during 2>&1
WORK
cat >"$w/post.sh" <<'POST'
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-after 2>&1
ls /sys/kernel/tracing/instances >/out/instances-after 2>&1
umount /mnt/fs
POST
cat >"$w/work-kill.sh" <<'WORK'
dd if=/dev/zero of=/mnt/fs/k bs=65536 count=64 2>>/out/workload.log
sync
WORK
# the tracer was killed: what it left, then blktrace -k
cat >"$w/post-kill.sh" <<'POST'
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-left 2>&1
ls /sys/kernel/tracing/instances >/out/instances-left 2>&1
timeout 10 blktrace -k -d "$DEV" >/out/k.out 2>&1
echo "exit $?" >>/out/k.out
cat /sys/kernel/tracing/options/blk_cgroup >/out/blk_cgroup-after 2>&1
ls /sys/kernel/tracing/instances >/out/instances-after 2>&1
umount /mnt/fs
POST

b="$w/batch"
vm_batch_new "$b"
common=(--device virtio --kmod crc32c_generic --tool "$(command -v filefrag)" --post "$w/post.sh"
	--workload "$w/work.sh" --timeout 150)
ext4=(--kmod ext4 --tool "$(command -v mkfs.ext4)" --pre "$w/pre-ext4.sh")
runs="ext4-relay ext4-pipe ext4-tracefs"
vm_batch_add "$b" "$w/ext4-relay" "${common[@]}" "${ext4[@]}" -- --backend=relay --origin
vm_batch_add "$b" "$w/ext4-pipe" "${common[@]}" "${ext4[@]}" -- --backend=relay --origin -o -
vm_batch_add "$b" "$w/ext4-tracefs" "${common[@]}" "${ext4[@]}" -- --backend=tracefs --origin
if [ $xfs = 1 ]; then
	# 300 MB at least for mkfs.xfs (a sparse file on the host)
	x=(--kmod xfs --tool "$(command -v mkfs.xfs)" --pre "$w/pre-xfs.sh" --data-mb 512)
	vm_batch_add "$b" "$w/xfs-relay" "${common[@]}" "${x[@]}" -- --backend=relay --origin
	vm_batch_add "$b" "$w/xfs-tracefs" "${common[@]}" "${x[@]}" -- --backend=tracefs --origin
	runs="$runs xfs-relay xfs-tracefs"
fi
vm_batch_add "$b" "$w/kill" --device virtio --kmod crc32c_generic "${ext4[@]}" --post "$w/post-kill.sh" \
	--workload "$w/work-kill.sh" --stop-signal KILL --timeout 90 -- --backend=relay --origin
vm_batch_boot "$b" "$TOP/blktrace" >"$w/vm.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip "$LABEL ($(tail -n 1 "$w/vm.out"))"
	exit 0
elif [ $rc != 0 ]; then
	fail "$LABEL: the VM: $(tail -n 3 "$w/vm.out" | tr '\n' ' ')"
	exit 0
fi
[ $xfs = 1 ] || skip "--origin on XFS in the VM ($why_no_xfs)"

# cgroups RUN: the relay run's cgroup checks (t0527 before the files and dirtiers)
cgroups() {
	local d=$w/$1 l=$1 cg want got
	grep -q 'Cgroups: [1-9][0-9]* named from /sys/fs/cgroup' "$d/blktrace.stdout" &&
		pass "$l: the summary names the cgroups from the v2 hierarchy" ||
		fail "$l: no 'Cgroups: N named from /sys/fs/cgroup' line: $(grep -h Cgroups "$d/blktrace.stdout" | head -n 2)"
	(cd "$d/trace" && $BLKPARSE -i trace -f '%a %3d %G %n\n' >"$d/cg.txt" 2>"$d/cg.err") ||
		fail "$l: blkparse -f %G: $(head -n 2 "$d/cg.err")"
	# written bytes per cgroup path, from the W queue events
	awk '$1 == "Q" && $2 ~ /W/ { s[$3] += $4 * 512 } END { for (k in s) print k, s[k] }' "$d/cg.txt" |
		sort >"$d/per-cg.txt"
	for cg in a:16 b:24; do
		want=$((${cg#*:} * 1048576))
		got=$(awk -v p="/${cg%%:*}" '$1 == p { print $2 }' "$d/per-cg.txt")
		if [ -n "$got" ] && [ "$got" -ge $((want * 95 / 100)) ]; then
			pass "$l: cgroup /${cg%%:*} charged $got of the $want bytes it wrote (>= 95%, cgroup writeback)"
		else
			fail "$l: cgroup /${cg%%:*} charged ${got:-0} bytes, wrote $want: $(tr '\n' ' ' <"$d/per-cg.txt")"
		fi
	done
	for cg in a:16 b:24; do
		want=$((${cg#*:} * 1048576))
		got=$(awk -v p="/${cg%%:*}" '/^=+ I\/O by cgroup/ { s = 1; next } /^=+ / { s = 0 }
			s && $1 == p { b += $6 } END { print b + 0 }' "$d/btt.txt")
		[ "$got" -ge $((want * 95 / 100)) ] &&
			pass "$l: btt's I/O by cgroup: /${cg%%:*} $got bytes of $want (>= 95%)" ||
			fail "$l: btt's I/O by cgroup: /${cg%%:*} $got bytes, wrote $want: $(grep -A6 'I/O by cgroup' "$d/btt.txt" | tr '\n' ' ')"
	done
}

# origin RUN: the files and dirtiers of a run; 1 if the run cannot be checked
origin() {
	local d=$w/$1 l=$1 f pid size inext ok row bytes others files in=trace sum=blktrace.stdout
	local named=1 what what2
	# -o -: the trace is the tracer's stdout, its summary on stderr; blkparse reads it as a
	# pipe, printing as it goes: the file names, at the end of the stream, come too late
	if [ "$l" = ext4-pipe ]; then
		in=$d/blktrace.stdout sum=blktrace.stderr named=0
		mkdir -p "$d/trace"
	fi
	if ! vm_run_ended "$d"; then
		fail "$l: $(vm_run_why "$d" "$w/vm.out")"
		return 1
	fi
	if [ "$(cat "$d/blktrace.rc" 2>/dev/null)" != 0 ]; then
		fail "$l: the tracer: status $(cat "$d/blktrace.rc" 2>/dev/null): $(head -c 300 "$d/blktrace.stderr" 2>/dev/null)"
		return 1
	fi
	if ! (cd "$d/trace" && $BLKPARSE -i "$in" -f '%a %d %S %n %o %f\n' >"$d/o.txt" 2>"$d/o.err" &&
		$BLKPARSE -i "$in" -d "$d/merged.bin" -O >/dev/null 2>"$d/m.err") ||
		! "$TOP/btt/btt" -i "$d/merged.bin" >"$d/btt.txt" 2>"$d/btt.err"; then
		fail "$l: blkparse or btt failed: $(head -c 300 "$d/o.err" "$d/m.err" "$d/btt.err")"
		return 1
	fi
	grep -q '^  Origin: [1-9][0-9]* dirty runs, [1-9][0-9]* file maps, [1-9][0-9]* files named' "$d/$sum" &&
		pass "$l: the summary: $(grep -h '^  Origin:' "$d/$sum" | sed 's/^ *//'); $(grep -o 'files and dirtiers from.*' "$d/blktrace.stderr" | head -c 200)" ||
		fail "$l: no Origin line with notes: $(tail -n 4 "$d/$sum" | tr '\n' ' ') $(head -c 300 "$d/blktrace.stderr")"
	# each file's extents on the disk (512-byte sectors, first and last), from FIEMAP
	for f in a b; do
		awk -v f=$f '$1 ~ /^[0-9]+:$/ { gsub(/\.\./, " "); gsub(/:/, " "); print f, $4, $5 }' "$d/extents-$f"
	done >"$d/extents"
	# of blkparse's W queue events, per file: the bytes in its extents, and of them those
	# charged (%o) to its dd and named (%f) by its path
	awk -v pa="$(cat "$d/pid-a")" -v pb="$(cat "$d/pid-b")" -v named=$named '
		FNR == NR { n++; f[n] = $1; a[n] = $2; b[n] = $3; next }
		$1 == "Q" && $2 ~ /W/ {
			s = $3; e = s + $4
			for (i = 1; i <= n; i++) {
				lo = s > a[i] ? s : a[i]; hi = e < b[i] + 1 ? e : b[i] + 1
				if (hi <= lo)
					continue
				by[f[i]] += (hi - lo) * 512
				pid = f[i] == "a" ? pa : pb
				if ($5 == pid && (!named || $6 == "/mnt/fs/" f[i]))
					ok[f[i]] += (hi - lo) * 512
			}
		}
		END { for (k in by) print k, by[k], ok[k] + 0 }' "$d/extents" "$d/o.txt" >"$d/per-file.txt"
	# btt: "PID COMMAND BYTES BYOTHERS" of I/O by origin's task rows, "PATH WRITTEN" and the
	# writers' line of I/O by file's top by bytes
	awk -F'|' '/^=+ I\/O by origin/ { s = 1; next } /^=+ / { s = 0 }
		s && NF == 3 { n = split($1, a, " "); if (a[n - 2] == "task") { split($2, b, " "); print a[n - 1], a[n], b[2], b[3] } }' \
		"$d/btt.txt" >"$d/origins.txt"
	awk -F'|' '/^Top files by bytes/ { s = 1; next } /^Top files by Q2C/ { s = 0 }
		s && NF == 3 && $1 !~ / FILE *$/ { n = split($1, a, " "); split($2, b, " "); p = a[n]; w = b[3]; getline; getline; print p, w, $0 }' \
		"$d/btt.txt" >"$d/files.txt"
	for spec in a:16 b:24; do
		f=${spec%%:*} size=$((${spec#*:} * 1048576))
		pid=$(cat "$d/pid-$f")
		read -r _ inext ok < <(awk -v f=$f '$1 == f' "$d/per-file.txt")
		if [ "${inext:-0}" -ge $((size * 99 / 100)) ] && [ "${ok:-0}" -ge $((size * 95 / 100)) ]; then
			[ $named = 1 ] && what="%o and %f charge" what2=" and name its path" || what="%o charges" what2=
			pass "$l: /mnt/fs/$f: blkparse's $what $ok of the $inext bytes written in its extents to dd[$pid]$what2 (>= 95% of $size)"
		else
			fail "$l: /mnt/fs/$f: ${ok:-0} of ${inext:-0} bytes written in its extents charged to dd[$pid] and named (file: $size bytes): $(grep -c . "$d/extents") extents, $(awk '$1 == "Q" && $2 ~ /W/' "$d/o.txt" | head -n 3 | tr '\n' ' ')"
		fi
		read -r _ _ bytes others < <(awk -v p=$pid '$1 == p' "$d/origins.txt")
		if [ "${bytes:-0}" -ge $((size * 95 / 100)) ] && [ "$bytes" -le $((size + 1048576)) ]; then
			pass "$l: btt's I/O by origin: dd[$pid] $bytes bytes ($others queued by others: the flusher), of the $size it wrote"
		else
			fail "$l: btt's I/O by origin: dd[$pid] ${bytes:-no} bytes, wrote $size: $(tr '\n' ' ' <"$d/origins.txt")"
		fi
		row=$(awk -v p=/mnt/fs/$f '$1 == p' "$d/files.txt")
		bytes=$(echo "$row" | awk '{ print $2 }')
		if [ "${bytes:-0}" -ge $((size * 95 / 100)) ] && echo "$row" | grep -q "writers: dd\[$pid\] "; then
			pass "$l: btt's I/O by file: /mnt/fs/$f by its path, $bytes bytes written, by dd[$pid]"
		else
			fail "$l: btt's I/O by file: /mnt/fs/$f: '${row:-not listed}' (wrote $size, dd[$pid]): $(cut -c1-60 "$d/files.txt" | tr '\n' ' ')"
		fi
	done
	return 0
}

for r in $runs; do
	d="$w/$r"
	origin "$r" || continue
	case $r in
	ext4-pipe)
		grep -q "^=== .*\.origin ===" "$d/blktrace.stderr" && ! ls "$d/trace"/*.blktrace.* >/dev/null 2>&1 &&
			pass "$r: the side stream's notes in the stream, its block in the summary on stderr" ||
			fail "$r: $(grep -h '^===' "$d/blktrace.stderr" | tr '\n' ' ') $(ls "$d/trace" | tr '\n' ' ')"
		;;
	*-relay)
		files=$(cd "$d/trace" && ls -- trace.origin.blktrace.* 2>/dev/null | tr '\n' ' ')
		[ -n "$files" ] && grep -q "^=== .*\.origin ===" "$d/blktrace.stdout" &&
			grep -q 'blktrace: --origin beside the relay files: the tracefs instance /sys/kernel/tracing/instances/blktrace-origin-' "$d/blktrace.stderr" &&
			pass "$r: the side stream in $files(its own block in the summary, its instance said)" ||
			fail "$r: no side stream: files '$files', $(grep -h '^===' "$d/blktrace.stdout" | tr '\n' ' ')"
		[ "$(cat "$d/blk_cgroup-during" 2>/dev/null)" = 1 ] && [ "$(cat "$d/blk_cgroup-after" 2>/dev/null)" = 0 ] &&
			grep -q '^blktrace-origin-' "$d/instances-during" && ! grep -q . "$d/instances-after" &&
			pass "$r: blk_cgroup on and the instance there while tracing, both put back after" ||
			fail "$r: blk_cgroup during '$(cat "$d/blk_cgroup-during" 2>/dev/null)', after '$(cat "$d/blk_cgroup-after" 2>/dev/null)'; instances during '$(cat "$d/instances-during" 2>/dev/null)', after '$(cat "$d/instances-after" 2>/dev/null)'"
		;;
	*-tracefs)
		! ls "$d/trace"/*.origin.* >/dev/null 2>&1 && grep -q 'ext4/ext4_es_lookup_extent_exit\|iomap/' "$d/blktrace.stderr" &&
			cmp -s "$d/tracefs-before.txt" "$d/tracefs-after.txt" &&
			pass "$r: the notes in the block streams, the tracefs settings as found after" ||
			fail "$r: side files or settings changed: $(ls "$d/trace" | tr '\n' ' ') $(diff "$d/tracefs-before.txt" "$d/tracefs-after.txt" | tr '\n' ' ')"
		;;
	esac
	case $r in ext4-relay | ext4-tracefs) cgroups "$r" ;; esac
done

# untagged records: the classic tool reads them (not the side files), and our default text is its text
d="$w/ext4-relay"
if [ ! -x /usr/bin/blkparse ]; then
	skip "relay --origin: the reference blkparse (Debian's blktrace not installed)"
elif [ -d "$d/trace" ]; then
	(cd "$d/trace" && /usr/bin/blkparse -i trace >"$d/ref.txt" 2>"$d/ref.err" && $BLKPARSE -i trace >"$d/ours.txt" 2>/dev/null)
	if grep -q ' Q ' "$d/ref.txt" && cmp -s "$d/ref.txt" "$d/ours.txt"; then
		pass "ext4-relay: the reference blkparse 1.2.0 reads the files (records untagged), and prints our default text"
	else
		fail "ext4-relay: the reference blkparse's text differs from ours or is empty: $(diff "$d/ref.txt" "$d/ours.txt" | head -n 4 | tr '\n' ' ')"
	fi
fi

# SIGKILL: the instance and blk_cgroup left; blktrace -k puts both back
d="$w/kill"
if ! vm_run_ended "$d"; then
	fail "relay --origin killed: $(vm_run_why "$d" "$w/vm.out")"
elif [ "$(sed -n 's/^tracer_stop=//p' "$d/status")" = sigkill ] &&
	grep -q '^blktrace-origin-' "$d/instances-left" && [ "$(cat "$d/blk_cgroup-left")" = 1 ] &&
	grep -q '^exit 0$' "$d/k.out" && grep -q "1 left-over tracefs instance(s) removed" "$d/k.out" &&
	grep -q "reset .*blk_cgroup" "$d/k.out" && ! grep -q . "$d/instances-after" &&
	[ "$(cat "$d/blk_cgroup-after")" = 0 ]; then
	pass "relay --origin killed with SIGKILL: its instance and blk_cgroup left; blktrace -k: $(grep -v '^exit' "$d/k.out" | tr '\n' ' ')"
else
	fail "relay --origin killed: left '$(cat "$d/instances-left" 2>/dev/null)' blk_cgroup $(cat "$d/blk_cgroup-left" 2>/dev/null); -k: $(tr '\n' ' ' <"$d/k.out" 2>/dev/null); after '$(cat "$d/instances-after" 2>/dev/null)' $(cat "$d/blk_cgroup-after" 2>/dev/null)"
fi
