#!/bin/bash
# btrecord and btreplay. Without root: replay files byte-identical to the reference
# btrecord's, and the error paths. As root: record a known workload on a loop device with our
# blktrace, btrecord it, replay it onto a second loop device of the same size while tracing
# that one, and compare the two queued-I/O streams CPU by CPU; the recorded device must be left
# alone, a replay without -W must not write, and -W must refuse a mounted device.
. "$(dirname "$0")/../lib.sh"

REC="$TOP/btreplay/btrecord"
REP="$TOP/btreplay/btreplay"
BT="$TOP/blktrace"
REFREC=$(command -v btrecord || ls /usr/sbin/btrecord 2>/dev/null)
RCOMM='^btreplay$'
if [ -n "${VALGRIND:-}" ]; then
	RCOMM='^(btreplay|memcheck)'	# valgrind runs the tool under its own name
fi
w="$OUT/btreplay"
rm -rf "$w"
mkdir -p "$w"

# ---- 1. replay files byte-identical to the reference btrecord's ----
# identical "what" reference-args... : run both on the same traces, compare every file
identical() {
	local what=$1 indir=$2 d="$w/id/$3" f diffs=
	shift 3
	mkdir -p "$d/ours" "$d/ref"
	$VG "$REC" -d "$indir" -D "$d/ours" -v "$@" >/dev/null 2>"$d/ours.err"
	local rc=$?
	$REFREC -d "$indir" -D "$d/ref" -v "$@" >/dev/null 2>"$d/ref.err"
	for f in $(cd "$d/ref" && ls); do
		cmp -s "$d/ref/$f" "$d/ours/$f" || diffs="$diffs $f"
	done
	if [ $rc = 0 ] && [ -z "$diffs" ] && [ "$(ls "$d/ref")" = "$(ls "$d/ours")" ]; then
		pass "$what: replay files and -v .rec files byte-identical to the reference ($(cd "$d/ref" && ls | tr '\n' ' '))"
	else
		fail "$what: rc=$rc, differing:$diffs; ours: $(ls "$d/ours" | tr '\n' ' ') $(head -c 300 "$d/ours.err")"
	fi
	if diff <(sed "s|$d/ref/||" "$d/ref.err") <(sed "s|$d/ours/||" "$d/ours.err") >/dev/null; then
		pass "$what: -v statistics on stderr as the reference prints them"
	else
		fail "$what: -v output differs: $(diff <(sed "s|$d/ref/||" "$d/ref.err") <(sed "s|$d/ours/||" "$d/ours.err") | head -n 4 | tr '\n' ' ')"
	fi
}
src=$(unpack ext4-mixed)
if [ -z "$REFREC" ]; then
	skip "byte identity with the reference btrecord (not installed: apt-get install blktrace)"
else
	identical "ext4-mixed" "$src" default ext4-mixed
	identical "ext4-mixed -m 1000000 -M 3" "$src" small -m 1000000 -M 3 ext4-mixed
	identical "ext4-mixed -M 512 -m 60000000 -o run1" "$src" big -M 512 -m 60000000 -o run1 ext4-mixed
	if [ -x "$TOP/tests/gen/gentrace" ]; then
		"$TOP/tests/gen/gentrace" -n 20000 -c 4 --big-endian -o syn -D "$w/gen" >/dev/null 2>&1
		identical "synthetic big-endian trace, 4 CPUs, -F" "$w/gen" syn -F
	else
		skip "byte identity on a synthetic trace (tests/gen/gentrace not built)"
	fi
fi

# the same I/O read from version-8 records, or from gzip-compressed files, gives the same files
if [ -x "$TOP/tests/gen/gentrace" ]; then
	mkdir -p "$w/v/7" "$w/v/8" "$w/v/gz" "$w/v/in-gz"
	"$TOP/tests/gen/gentrace" -n 20000 -c 3 -o s -D "$w/v/in7" >/dev/null 2>&1
	"$TOP/tests/gen/gentrace" -n 20000 -c 3 --v2 -o s -D "$w/v/in8" >/dev/null 2>&1
	for c in 0 1 2; do gzip -c "$w/v/in7/s.blktrace.$c" >"$w/v/in-gz/s.blktrace.$c"; done
	$VG "$REC" -d "$w/v/in7" -D "$w/v/7" s 2>"$w/v/err"
	$VG "$REC" -d "$w/v/in8" -D "$w/v/8" s 2>>"$w/v/err"
	$VG "$REC" -d "$w/v/in-gz" -D "$w/v/gz" s 2>>"$w/v/err"
	if [ -s "$w/v/7/s.replay.0" ] && diff -r "$w/v/7" "$w/v/8" >/dev/null && diff -r "$w/v/7" "$w/v/gz" >/dev/null; then
		pass "version-8 records and gzip-compressed traces give the same replay files"
	else
		fail "v8/gzip input: $(ls "$w/v/7" "$w/v/8" "$w/v/gz" | tr '\n' ' ') $(head -c 300 "$w/v/err")"
	fi
fi

# ---- 2. error paths (no device needed) ----
$VG "$REC" -d "$src" -D "$w" sda >/dev/null 2>"$w/e1.err"
rc=$?
if [ $rc = 1 ] && grep -q "'$src/sda.blktrace.CPU'" "$w/e1.err" && grep -q '^hint: ' "$w/e1.err"; then
	pass "btrecord on a missing trace: exit 1, names the files looked for, with a hint"
else
	fail "btrecord missing trace: rc=$rc $(cat "$w/e1.err")"
fi
$VG "$REC" -d "$src" -D "$w" /dev/ext4-mixed >/dev/null 2>"$w/e1b.err"
if grep -q "hint: name the trace as blktrace wrote it: 'ext4-mixed'" "$w/e1b.err"; then
	pass "btrecord given a device path: the hint names the trace to use"
else
	fail "btrecord /dev/NAME: $(cat "$w/e1b.err")"
fi
$VG "$REC" -d "$src" -D "$w" -M 513 ext4-mixed >/dev/null 2>"$w/e2.err"
rc=$?
if [ $rc = 1 ] && grep -q "option '--max-pkts'" "$w/e2.err"; then
	pass "btrecord -M 513: exit 1 naming the option and its range"
else
	fail "btrecord -M 513: rc=$rc $(cat "$w/e2.err")"
fi
mkdir -p "$w/bad"
head -c 20000 "$src/ext4-mixed.blktrace.0" >"$w/bad/t.blktrace.0"
$VG "$REC" -d "$w/bad" -D "$w/bad" t >/dev/null 2>"$w/e3.err"
rc=$?
if [ $rc = 1 ] && grep -q "'$w/bad/t.blktrace.0'.*offset" "$w/e3.err" && [ "$(stat -c %s "$w/bad/t.replay.0")" -gt 32 ]; then
	pass "btrecord on a damaged trace: exit 1 naming file and offset, replay file of what was read"
else
	fail "btrecord damaged trace: rc=$rc $(cat "$w/e3.err")"
fi
cp "$w/bad/t.replay.0" "$w/bad/nodev.replay.0"
$VG "$REP" -d "$w/bad" nodev >/dev/null 2>"$w/e4.err"
rc=$?
printf 'not a replay file, not at all' >"$w/bad/x.replay.0"
$VG "$REP" -d "$w/bad" x >/dev/null 2>"$w/e5.err"
rc5=$?
if [ $rc = 1 ] && grep -q "cannot open '/dev/nodev'" "$w/e4.err" && grep -q "hint: map the recorded device" "$w/e4.err"; then
	pass "btreplay onto a device that does not exist: exit 1 naming it, hint to map it with -M"
else
	fail "btreplay missing device: rc=$rc $(cat "$w/e4.err")"
fi
if [ $rc5 = 1 ] && grep -q "'$w/bad/x.replay.0'" "$w/e5.err"; then
	pass "btreplay on a file that is not a replay file: exit 1 naming it ($(head -n1 "$w/e5.err"))"
else
	fail "btreplay bad file: rc=$rc5 $(cat "$w/e5.err")"
fi

# ---- 3. record, replay, compare (root) ----
if ! is_root; then
	skip "record and replay on loop devices (need root for loop devices and tracing)"
	skip "btreplay -W refuses a mounted device (need root)"
	exit 0
fi
T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
if [ -z "$T" ] || ! grep -qw blk "$T/available_tracers" 2>/dev/null; then
	skip "record and replay on loop devices (no tracefs with the blk tracer)"
	exit 0
fi
kernel_lock
loops=()
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
}
trap cleanup EXIT
newloop() { # variable image size [losetup options]: attach a loop device, remember it
	local l
	truncate -s "$3" "$2"
	l=$(loop_attach ${4:-} "$2" 2>/dev/null) || return 1
	loops+=("$l")
	printf -v "$1" '%s' "$l"
}
if ! newloop loop1 "$w/img1" 64M || ! newloop loop2 "$w/img2" 64M; then
	skip "record and replay on loop devices (losetup failed)"
	exit 0
fi
n1=$(basename "$loop1")
n2=$(basename "$loop2")
dd if=/dev/urandom of="$w/img2" bs=1M count=64 conv=notrunc status=none

# trace DEV into DIR for SECS while running the rest of the arguments
trace() { # dev dir secs command...
	local dev=$1 dir=$2 secs=$3 bt
	shift 3
	mkdir -p "$dir"
	# -w only as a bound: the trace ends (SIGINT) when the command has ended, however long
	# it took (under valgrind on a loaded machine it can take much longer than SECS)
	(cd "$dir" && exec "$BT" -d "$dev" -w $((secs * 10 + 60)) >summary.txt 2>err.txt) &
	bt=$!
	# wait until the kernel traces the device (slow to come on a loaded machine), then a little
	for i in $(seq 1 50); do
		[ "$(cat "/sys/block/$(basename "$dev")/trace/enable" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	sleep 0.5
	"$@"
	local rc=$?
	sleep 0.5
	kill -INT $bt 2>/dev/null
	wait $bt
	echo $? >"$dir/rc"
	return $rc
}
# whether the tracer of DIR ran cleanly (the tracefs blk tracer is one per machine: another
# tracer running at the same time makes ours fail, which is not what this test is about)
traced() { # dir [queued-I/O list that cannot be empty]
	[ "$(cat "$1/rc" 2>/dev/null)" = 0 ] && ! grep -v 'using the tracefs' "$1/err.txt" | grep -q . &&
		{ [ -z "${2:-}" ] || [ -s "$2" ]; }
}
tracer_trouble() { # dir
	local e
	e=$(grep -v 'using the tracefs' "$1/err.txt" | head -n 2 | tr '\n' ' ')
	echo "blktrace failed: ${e:-it recorded no I/O at all; was another tracer running?}"
}
# "cpu dir sector size" of every Q, per CPU in trace order; with a 3rd argument only the Q
# of commands whose name matches that pattern
qstream() { # dir name [comm-pattern]
	(cd "$1" && $BLKPARSE -i "$2" -f "%c %a %d %S %n %C\n" 2>/dev/null) |
		awk -v comm="${3:-}" '$2 == "Q" && (comm == "" || $NF ~ comm) {
			d = ($3 ~ /W/) ? "W" : ($3 ~ /R/) ? "R" : "N"
			print $1, d, $4, $5
		}' | sort -s -n -k1,1
}
# seconds between the last Q below sector $3 and the first Q at or above it (the I/O before
# and after the pause of the recorded workload)
gap() { # dir name sector [comm-pattern]
	(cd "$1" && $BLKPARSE -i "$2" -f "%a %T.%t %S %C\n" 2>/dev/null) |
		awk -v s="$3" -v comm="${4:-}" '$1 == "Q" && (comm == "" || $NF ~ comm) {
			if ($3 + 0 >= s + 0) { if (first == "" || $2 < first) first = $2 }
			else if (last == "" || $2 > last) last = $2
		}
		END { if (first != "" && last != "") printf "%.3f\n", first - last }'
}
record_workload() {
	loop=$loop1 workload "$w/expected.txt"
	sleep 1
	for s in 7001 7003 7005; do
		dd if="$loop1" of=/dev/null bs=4096 count=1 skip=$s iflag=direct status=none
	done
}
trace "$loop1" "$w/rec" 5 record_workload
if ! traced "$w/rec"; then
	skip "record and replay on loop devices ($(tracer_trouble "$w/rec"))"
	exit 0
fi
loop=$loop1
check_ios "recorded workload" "$w/expected.txt" <(cd "$w/rec" && $BLKPARSE -i "$n1" 2>/dev/null)
qstream "$w/rec" "$n1" >"$w/rec.q"

mkdir -p "$w/rep"
$VG "$REC" -d "$w/rec" -D "$w/rep" "$n1" >/dev/null 2>"$w/rec.err"
rc=$?
nq=$(wc -l <"$w/rec.q")
if [ $rc = 0 ] && [ -s "$w/rep/$n1.replay.0" ]; then
	pass "btrecord of the traced workload: $(ls "$w/rep" | tr '\n' ' ')($nq queued I/Os)"
else
	fail "btrecord: rc=$rc $(cat "$w/rec.err")"
fi
echo "$n1 $n2" >"$w/map"
sum1=$(md5sum <"$w/img1")
sum2=$(md5sum <"$w/img2")
marker=$((7001 * 8))
gap_rec=$(gap "$w/rec" "$n1" $marker)

# 3a. without -W (and twice as fast): no writes, the recorded device untouched
trace "$loop2" "$w/ro" 4 $VG "$REP" -d "$w/rep" -M "$w/map" -x 2 "$n1" >"$w/ro.out" 2>"$w/ro.err"
rc=$?
qstream "$w/ro" "$n2" "$RCOMM" >"$w/ro.q"
awk '$4 != 0 { print $1, "R", $3, $4 }' "$w/rec.q" >"$w/ro.expected"
if [ $rc != 0 ]; then
	fail "replay without -W: rc=$rc $(head -c 300 "$w/ro.err")"
elif ! traced "$w/ro" "$w/ro.q"; then
	skip "replay without -W: exit 0, but what it queued is unknown ($(tracer_trouble "$w/ro"))"
elif awk '{print $2}' "$w/ro.q" | grep -q W; then
	fail "replay without -W: writes queued on $n2: $(grep -c ' W ' "$w/ro.q")"
else
	pass "replay without -W: exit 0, no write queued on $n2 ($(wc -l <"$w/ro.q") reads)"
fi
if traced "$w/ro" "$w/ro.q"; then
	check_same "replay without -W: the recorded I/Os, writes issued as reads, same sectors, sizes and order per CPU" "$w/ro.expected" "$w/ro.q"
else
	skip "replay without -W: comparison of the I/O streams ($(tracer_trouble "$w/ro"))"
fi
if [ "$(md5sum <"$w/img2")" = "$sum2" ] && [ "$(md5sum <"$w/img1")" = "$sum1" ]; then
	pass "replay without -W: both images unchanged (checksums)"
else
	fail "replay without -W changed an image"
fi
if grep -q "recorded writes were issued as reads" "$w/ro.err"; then
	pass "replay without -W says that writes were issued as reads"
else
	fail "replay without -W: no note about writes: $(cat "$w/ro.err")"
fi
gap_ro=$(gap "$w/ro" "$n2" $marker "$RCOMM")
if ! traced "$w/ro" "$w/ro.q"; then
	skip "-x 2: timing ($(tracer_trouble "$w/ro"))"
elif awk -v a="$gap_rec" -v b="$gap_ro" 'BEGIN { exit !(a > 0.8 && b > a / 2 * 0.8 && b < a / 2 * 1.2) }'; then
	pass "-x 2: a pause of $gap_rec s in the recording is replayed as $gap_ro s"
else
	fail "-x 2: pause of '$gap_rec' s replayed as '$gap_ro' s"
fi

# 3b. with -W: the same stream, writes included, onto the second device only
trace "$loop2" "$w/rw" 5 $VG "$REP" -d "$w/rep" -M "$w/map" -W -v "$n1" >"$w/rw.out" 2>"$w/rw.err"
rc=$?
kernel_unlock # the last trace of this script (the rest replays and checks, under valgrind for minutes)
qstream "$w/rw" "$n2" "$RCOMM" >"$w/rw.q"
if [ $rc = 0 ] && grep -q "'/dev/$n2'" "$w/rw.err"; then
	pass "replay -W -M map: exit 0, replayed onto /dev/$n2"
else
	fail "replay -W: rc=$rc $(head -c 400 "$w/rw.err")"
fi
if traced "$w/rw" "$w/rw.q"; then
	check_same "replay -W: queued I/Os on $n2 match the recording (sector, size, direction, order per CPU)" "$w/rec.q" "$w/rw.q"
else
	skip "replay -W: comparison of the I/O streams ($(tracer_trouble "$w/rw"))"
fi
if [ "$(md5sum <"$w/img1")" = "$sum1" ]; then
	pass "replay -W: the recorded device's image is unchanged (checksum)"
else
	fail "replay -W: the image of $n1 changed"
fi
if [ "$(md5sum <"$w/img2")" != "$sum2" ]; then
	pass "replay -W: the replay device was written"
else
	fail "replay -W: the image of $n2 did not change"
fi
gap_rw=$(gap "$w/rw" "$n2" $marker "$RCOMM")
if ! traced "$w/rw" "$w/rw.q"; then
	skip "timing of the replay ($(tracer_trouble "$w/rw"))"
elif awk -v a="$gap_rec" -v b="$gap_rw" 'BEGIN { exit !(a > 0.8 && b > a * 0.85 && b < a * 1.15) }'; then
	pass "recorded timing kept: a pause of $gap_rec s is replayed as $gap_rw s"
else
	fail "timing: pause of '$gap_rec' s replayed as '$gap_rw' s"
fi

# 3c. -N and -I 2: everything twice, as fast as possible
$VG "$REP" -d "$w/rep" -M "$w/map" -N -I 2 -v "$n1" >/dev/null 2>"$w/n.err"
rc=$?
# "btreplay: N I/Os, M MiB in T s (2 iterations)"
total=$(awk '/ I\/Os, / { print $2; exit }' "$w/n.err")
took=$(awk '/ I\/Os, / { print $(NF - 3); exit }' "$w/n.err")
if [ $rc = 0 ] && [ "$total" = $((2 * $(awk '$4 != 0' "$w/rec.q" | wc -l))) ] &&
	awk -v t="$took" -v g="$gap_rec" 'BEGIN { exit !(t != "" && t < g) }'; then
	pass "-N -I 2: all I/Os issued twice ($total) in $took s, without the recorded pauses"
else
	fail "-N -I 2: rc=$rc total=$total $(head -c 300 "$w/n.err")"
fi

# 3d. a device too small for the recorded I/O: refused before any I/O; SIGINT mid-replay
small=
if newloop small "$w/img-small" 16M; then
	echo "$n1 $(basename "$small")" >"$w/map-small"
	sums=$(md5sum <"$w/img-small")
	$VG "$REP" -d "$w/rep" -M "$w/map-small" -W "$n1" >/dev/null 2>"$w/s.err"
	rc=$?
	if [ $rc = 1 ] && grep -q "lies beyond the end of '$small'" "$w/s.err" && [ "$(md5sum <"$w/img-small")" = "$sums" ]; then
		pass "replay onto a smaller device: refused before any I/O: $(head -n1 "$w/s.err" | cut -c1-120)"
	else
		fail "replay onto a smaller device: rc=$rc $(cat "$w/s.err")"
	fi
fi
"$REP" -d "$w/rep" -M "$w/map" -v "$n1" >/dev/null 2>"$w/int.err" &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 1 ] && grep -q "interrupted: [0-9]* I/Os issued" "$w/int.err"; then
	pass "SIGINT during a replay: stops at once, exit 1: $(grep interrupted "$w/int.err")"
else
	fail "SIGINT during a replay: rc=$rc $(cat "$w/int.err")"
fi

# ---- 4. -W refuses a mounted device, and a device with a mounted partition ----
loop3=
newloop loop3 "$w/img3" 64M
mkdir -p "$w/mnt"
if [ -n "$loop3" ] && mkfs.ext4 -q -F "$loop3" >/dev/null 2>&1 && mount "$loop3" "$w/mnt"; then
	mnt="$w/mnt"
	echo "$n1 $(basename "$loop3")" >"$w/map3"
	$VG "$REP" -d "$w/rep" -M "$w/map3" -W "$n1" >/dev/null 2>"$w/m.err"
	rc=$?
	if [ $rc = 1 ] && grep -q "refusing to write to '$loop3': it is mounted on '$w/mnt'" "$w/m.err" &&
		grep -q "^hint: .*--force" "$w/m.err"; then
		pass "-W onto a mounted device: refused, exit 1: $(head -n1 "$w/m.err")"
	else
		fail "-W onto a mounted device: rc=$rc $(cat "$w/m.err")"
	fi
	$VG "$REP" -d "$w/rep" -M "$w/map3" -N "$n1" >/dev/null 2>"$w/m2.err"
	rc=$?
	if [ $rc = 0 ]; then
		pass "without -W a mounted device may be replayed onto (reads only)"
	else
		fail "read-only replay onto a mounted device: rc=$rc $(cat "$w/m2.err")"
	fi
	umount "$w/mnt"
	mnt=
else
	skip "-W onto a mounted device (cannot make or mount an ext4 on a loop device)"
fi
# a disk whose first partition is mounted: an MBR with one Linux partition from sector 2048,
# or, on kernels without MBR support, the same partition added with BLKPG (addpart)
truncate -s 64M "$w/img4"
printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\xf8\x01\x00' |
	dd of="$w/img4" bs=1 seek=446 conv=notrunc status=none
printf '\x55\xaa' | dd of="$w/img4" bs=1 seek=510 conv=notrunc status=none
loop4=
newloop loop4 "$w/img4" 64M -P
if [ -n "$loop4" ] && [ ! -b "${loop4}p1" ] && command -v addpart >/dev/null; then
	addpart "$loop4" 1 2048 129024 2>/dev/null
fi
if [ -n "$loop4" ] && [ -b "${loop4}p1" ] && mkfs.ext4 -q -F "${loop4}p1" >/dev/null 2>&1 &&
	mount "${loop4}p1" "$w/mnt"; then
	mnt="$w/mnt"
	echo "$n1 $(basename "$loop4")" >"$w/map4"
	$VG "$REP" -d "$w/rep" -M "$w/map4" -W "$n1" >/dev/null 2>"$w/p.err"
	rc=$?
	if [ $rc = 1 ] && grep -q "refusing to write to '$loop4': '${loop4}p1' on it is mounted on '$w/mnt'" "$w/p.err"; then
		pass "-W onto a disk with a mounted partition: refused, exit 1: $(head -n1 "$w/p.err")"
	else
		fail "-W onto a disk with a mounted partition: rc=$rc $(cat "$w/p.err")"
	fi
	umount "$w/mnt"
	mnt=
else
	skip "-W onto a disk with a mounted partition (no partitioned loop device or ext4)"
fi
