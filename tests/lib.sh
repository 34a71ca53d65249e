# Shared helpers for the end-to-end tests (sourced). Each check prints one line:
# "PASS: what", "FAIL: what" or "SKIP: what (reason)"; the runner counts them.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# the read-only material beside the project (Perfetto schema, real traces); the ASan run works
# in a copy of the tree under tests/out/asan and points this at the original's
SHARED_DIR=${SHARED_DIR:-$TOP/../shared}
OUT=${TEST_OUT:-$TOP/tests/out}
mkdir -p "$OUT"
BLKPARSE="$TOP/blkparse"
# VG: the valgrind command line of the valgrind run (a word list: "$VG $TOOL ..." or
# read -ra ARRAY <<<"$VG"), each process's report in a file of its own; empty in the other
# runs. tests/vg.sh takes the same options (VG_OPTS).
# --read-inline-info=no: a report's stacks name no inlined frames, and each start costs 0.07
# of its 0.4 CPU s less (the valgrind run starts some 600)
VG=
if [ -n "${VALGRIND:-}" ]; then
	mkdir -p "$OUT/memcheck"
	export VG_LOG_DIR="$OUT/memcheck"
	export VG_OPTS="-q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --read-inline-info=no"
	VG="valgrind $VG_OPTS --log-file=$OUT/memcheck/vg.%p.log"
	BLKPARSE="$TOP/tests/vg.sh $BLKPARSE"
fi

# python3 is Debian's (/usr/bin/python3, for which tests/deps.sh installs python3-protobuf)
# when there is one, not the first on PATH: a version manager's shim there (pyenv's) costs a
# tenth of a CPU second each time it starts, and the suite starts python a thousand times
if [ -x /usr/bin/python3 ]; then
	python3() { /usr/bin/python3 "$@"; }
	export -f python3
fi

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }

# check "what" expected-file actual-file
check_same() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		diff "$2" "$3" | head -n 6 | sed 's/^/    /'
	fi
}

# unpack tests/data/NAME into $OUT/data/NAME (once) and print that directory
# (one script at a time, under a lock of the trace's, into a new directory renamed into place:
# two scripts that unpacked the same trace at once removed each other's files, and one of them
# ran on a half-written trace)
unpack() {
	local src="$TOP/tests/data/$1" dst="$OUT/data/$1"
	mkdir -p "$OUT/data"
	(
		flock 9
		if [ ! -f "$dst/.unpacked" ] || [ "$src" -nt "$dst/.unpacked" ]; then
			tmp=$(mktemp -d "$OUT/data/.$1.XXXXXX") && chmod 755 "$tmp" || exit 1
			for f in "$src"/*.xz; do
				xz -dc "$f" >"$tmp/$(basename "${f%.xz}")"
			done
			touch "$tmp/.unpacked"
			rm -rf "$dst"
			mv "$tmp" "$dst"
		fi
	) 9>"$OUT/data/.$1.lock"
	echo "$dst"
}

is_root() { [ "$(id -u)" = 0 ]; }

# ---- blkparse -t: its stale times come from a model of one C library's allocator ----
# The model (compat/heapemu.c) replays glibc BLK_HEAPEMU_GLIBC's malloc (compat/heapemu.h
# says which); on another C library the reference's stale times are not what the model
# computes, so -t output is compared with the reference only on that one.
# TEST_GLIBC_VERSION=X.Y pretends this machine has glibc X.Y (to try the skip path);
# test-heapemu applies the same rule.
modelled_glibc() { sed -n 's/^#define BLK_HEAPEMU_GLIBC "\(.*\)"$/\1/p' "$TOP/compat/heapemu.h"; }
host_glibc() {
	if [ -n "${TEST_GLIBC_VERSION:-}" ]; then
		echo "$TEST_GLIBC_VERSION"
	else
		getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc //p'
	fi
}
have_modelled_glibc() { [ -n "$(modelled_glibc)" ] && [ "$(host_glibc)" = "$(modelled_glibc)" ]; }
# needs_modelled_glibc "what": true when -t output can be compared with the reference
# here, else prints the SKIP line for "what" and fails
needs_modelled_glibc() {
	have_modelled_glibc && return 0
	skip "$1 (the -t model replays glibc $(modelled_glibc)'s allocator; this machine has glibc $(host_glibc || true))"
	return 1
}

# ---- tracer tests: a known workload on $loop and the check that every I/O was seen ----
# workload: direct 4 KiB writes and reads at known offsets, a buffered write + fsync
workload() { # expected-file
	: >"$1"
	for i in $(seq 0 11); do
		s=$((i * 37 + 3))
		dd if=/dev/zero of="$loop" bs=4096 count=1 seek=$s oflag=direct status=none
		echo "W $((s * 8)) 8" >>"$1"
		s=$((i * 53 + 1))
		dd if="$loop" of=/dev/null bs=4096 count=1 skip=$s iflag=direct status=none
		echo "R $((s * 8)) 8" >>"$1"
	done
	dd if=/dev/urandom of="$loop" bs=4096 count=2 seek=5000 conv=fsync status=none
	echo "W 40000 16" >>"$1"
}

# every expected I/O must show as Q, D and C with its sector, size and direction
check_ios() { # what expected blkparse-output
	local missing
	missing=$(awk 'NR == FNR { want[$1 " " $2 " " $3] = 1; next }
		$6 ~ /^[QDC]$/ && $9 == "+" {
			d = ($7 ~ /W/) ? "W" : ($7 ~ /R/) ? "R" : "?"
			seen[d " " $8 " " $10 " " $6] = 1
		}
		END {
			for (k in want) {
				split(k, f, " ")
				for (a = 1; a <= 3; a++) {
					act = substr("QDC", a, 1)
					if (act == "Q" && f[1] == "W" && f[3] == 16) {
						# buffered: queued as two 4 KiB pages or one 8 KiB bio
						if (!seen["W 40000 8 Q"] && !seen["W 40000 16 Q"]) print k " " act
						continue
					}
					if (!((f[1] " " f[2] " " f[3] " " act) in seen)) print k " " act
				}
			}
		}' "$2" "$3")
	if [ -z "$missing" ]; then
		pass "$1: all $(wc -l <"$2") I/Os seen as Q, D and C with the right sector, size and direction"
	else
		fail "$1: missing: $(echo "$missing" | head -n 5 | tr '\n' ';')"
	fi
}


# wait until our tracer has started recording $loop through tracefs (at most 15 s)
wait_tracing() {
	local n=$(basename "$loop") t i
	t=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	for i in $(seq 1 150); do
		if [ -n "$t" ] && [ "$(cat /sys/block/$n/trace/enable 2>/dev/null)" = 1 ] &&
			[ "$(cat "$t/tracing_on" 2>/dev/null)" = 1 ] &&
			[ "$(cat "$t/current_tracer" 2>/dev/null)" = blk ]; then
			sleep 0.2
			return 0
		fi
		sleep 0.1
		[ -z "$t" ] && t=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	done
	return 1
}

# What blktrace --iowait creates and must remove on every exit path (kernel/iowait.c): its
# tracefs instances (instances/blktrace-iowait-PID), its kprobe events (blktrace_iowait_PID
# groups), and the top-level state it must not touch (the events it enables in its own
# instance, record-tgid). One line per item, for a before/after comparison.
iowait_state() { # tracefs-dir
	local e
	echo "instances=$(ls "$1/instances" 2>/dev/null | grep '^blktrace-iowait-' | tr '\n' ' ')"
	echo "kprobes=$(grep -c 'blktrace_iowait_' "$1/kprobe_events" 2>/dev/null)"
	for e in sched/sched_switch sched/sched_waking block/block_bio_queue block/block_rq_complete; do
		echo "$e=$(cat "$1/events/$e/enable" 2>/dev/null)"
	done
	echo "record-tgid=$(cat "$1/options/record-tgid" 2>/dev/null)"
}

# A never-used ring buffer reads "7 (expanded: 1408)": the kernel expands it for any
# tracer, to a size it then shows rounded to whole pages (1410 on 6.18), and it cannot be
# shrunk back. Expand it first, as any tracer would, so that "as found" can be compared.
expand_buffer() { # tracefs-dir
	local b
	b=$(cat "$1/buffer_size_kb")
	case $b in
	*expanded:*) echo "$b" | sed -E 's/.*expanded: ([0-9]+).*/\1/' >"$1/buffer_size_kb" ;;
	esac
}

# Tests run in parallel (tests/run-e2e.sh), and the plain, ASan and valgrind runs of make
# check at the same time. State the whole machine shares is taken under a lock, released
# when the script ends:
# kernel_lock: the tracefs blk tracer (one tracer at a time; a second one is refused).
# Each take and release is a line of $LOCK_LOG (tests/check.sh's; the script's end releases
# what it still holds): "EPOCH OUT SCRIPT LOCK take|drop".
lock_log() { # LOCK take|drop
	[ -n "${LOCK_LOG:-}" ] && echo "$(date +%s) $OUT $(basename "$0" .sh) $1 $2" >>"$LOCK_LOG"
	return 0
}
kernel_lock() {
	exec 8>/tmp/blktrace-ng.kernel.lock
	flock 8
	lock_log kernel take
}
# kernel_unlock: a script's last tracer has ended; what follows needs no tracer (the other
# runs' tracer tests wait for this one while it holds the lock)
kernel_unlock() {
	exec 8>&-
	lock_log kernel drop
}
# vm_lock: the qemu guest of tests/vm (tests/vm/batch.sh takes it for a boot only: the
# scripts' builds and checks run beside the other runs' guests). One guest at a time: two TCG
# guests at once, beside the other runs' scripts, took 1.5-2.5 times as long each (their
# timers late), and make check longer than with one.
vm_lock() {
	exec 7>/tmp/blktrace-ng.vm.lock
	flock 7
	lock_log vm take
}
vm_unlock() {
	exec 7>&-
	lock_log vm drop
}
# loop_attach [losetup options] FILE: losetup -f --show, one at a time (two scripts asking
# for the first free device at once can be handed the same one). Prints the device.
# A loop device keeps its queue's settings across detach and attach (seen on 6.18: a
# max_sectors_kb of 16 left by an earlier user split fio's 128 KiB I/Os, and t0530's depth
# check failed): the device's scheduler and request size are put back to the defaults
# (max_sectors_kb 0 resets it where the kernel allows that, else the hardware limit).
loop_attach() {
	local dev q
	dev=$(
		{
			flock 6
			losetup -f --show "$@"
		} 6>/tmp/blktrace-ng.losetup.lock
	) || return 1
	q=/sys/block/${dev##*/}/queue
	if [ -w "$q/max_sectors_kb" ]; then
		echo 0 >"$q/max_sectors_kb" 2>/dev/null ||
			cat "$q/max_hw_sectors_kb" >"$q/max_sectors_kb" 2>/dev/null
	fi
	grep -qw none "$q/scheduler" 2>/dev/null && echo none >"$q/scheduler" 2>/dev/null
	echo "$dev"
}

# The bundled traces (tests/data) a loop checks. Under valgrind, where a process takes 0.4 s
# to start and runs 20-50 times slower, only VG_TRACES: the real ext4 workload and the
# partition remaps (the other three hold the same kinds of records, in larger numbers);
# skip_vg_traces prints one SKIP line for each trace left out, so the count shows it.
VG_TRACES="ext4-mixed part-remap"
bundled_traces() {
	local t
	for t in "$TOP"/tests/data/*/; do
		t=$(basename "$t")
		if [ -z "${VALGRIND:-}" ] || [[ " $VG_TRACES " == *" $t "* ]]; then
			echo "$t"
		fi
	done
}
skip_vg_traces() { # what the loop checks
	local t
	[ -n "${VALGRIND:-}" ] || return 0
	for t in "$TOP"/tests/data/*/; do
		t=$(basename "$t")
		[[ " $VG_TRACES " == *" $t "* ]] ||
			skip "$1 on $t under valgrind (valgrind takes $VG_TRACES; the plain and ASan runs check every trace)"
	done
}
# A whole script left out of the valgrind run: SKIP with the reason and end it.
skip_under_valgrind() { # what why
	if [ -n "${VALGRIND:-}" ]; then
		skip "$1 under valgrind ($2)"
		exit 0
	fi
}
# free_port: a TCP port for a test's server: below the kernel's ephemeral range (a port in it
# may be any connection's local end: "Address already in use" when the server listens) and
# not bound by any socket now.
free_port() {
	local lo=20000 hi p hex i
	hi=$(awk '{ print $1 - 1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ -n "$hi" ] && [ "$hi" -gt $((lo + 1000)) ] || hi=32767
	for i in $(seq 100); do
		p=$((lo + RANDOM % (hi - lo)))
		hex=$(printf ':%04X' "$p")
		awk -v h="$hex" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null || break
	done
	echo "$p"
}
# The ASan+UBSan run of make check (tests/out/asan, ASAN_OPTIONS set by the Makefile): for a
# script that tests only the harness, whose run under ASan would add VM time and nothing else.
skip_under_asan() { # what why
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		skip "$1 under ASan ($2)"
		exit 0
	fi
}
# In a loop over generated inputs of one kind: under valgrind only the first VG_SAMPLE (2) are
# run; for the others this prints SKIP and returns 1.  vg_sample INDEX(1-based) WHAT || continue
VG_SAMPLE=2
vg_sample() {
	[ -z "${VALGRIND:-}" ] && return 0
	[ "$1" -le "$VG_SAMPLE" ] && return 0
	skip "$2 under valgrind (it takes the first $VG_SAMPLE inputs of this kind; the plain and ASan runs take all)"
	return 1
}

# The set-up of a tracer test: root, the kernel lock, a scratch loop device of SIZE backed by
# DIR/disk.img (detached when the script ends) and tracefs with the blk tracer. Sets w, loop,
# name and T, or prints SKIP (naming WHAT) and ends the script.
tracer_setup() { # what dir size
	if ! is_root; then
		skip "$1 (need root for loop devices and tracefs)"
		exit 0
	fi
	kernel_lock
	w=$2
	rm -rf "$w"
	mkdir -p "$w"
	truncate -s "$3" "$w/disk.img"
	loop=$(loop_attach "$w/disk.img" 2>/dev/null)
	if [ -z "$loop" ]; then
		skip "$1 (losetup failed: no loop device support)"
		exit 0
	fi
	trap 'losetup -d "$loop" 2>/dev/null' EXIT
	name=$(basename "$loop")
	T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	if [ -z "$T" ]; then
		mount -t tracefs none /sys/kernel/tracing 2>/dev/null && T=/sys/kernel/tracing
	fi
	if [ -z "$T" ] || ! grep -qw blk "$T/available_tracers" 2>/dev/null; then
		skip "$1 (no tracefs with the blk tracer)"
		exit 0
	fi
	expand_buffer "$T"
}

# tests/gen/perfetto-check.py compiles the schema with protoc once (0.25 s each time it runs)
# into this directory, shared by the three runs of make check (MEMO_DIR)
export PERFETTO_CHECK_CACHE=${PERFETTO_CHECK_CACHE:-${MEMO_DIR:-$OUT}/perfetto-pb2}
# perfetto_tools WHAT: what decoding a Perfetto export needs: the schema ($PROTO, from
# ../shared), protoc, and a python3 with google.protobuf ($PY: python3-protobuf installs
# for the system python, which may not be the first python3). Missing: one SKIP line
# naming WHAT and the remedy, and status 1.
perfetto_tools() {
	local what=$1 py
	PROTO="$SHARED_DIR/perfetto/perfetto_trace.proto"
	if [ ! -f "$PROTO" ]; then
		skip "$what (no schema $PROTO: the shared Perfetto material is missing)"
		return 1
	fi
	if ! command -v protoc >/dev/null; then
		skip "$what (protoc not installed: install protobuf-compiler, tests/deps.sh)"
		return 1
	fi
	PY=""
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c 'import google.protobuf' 2>/dev/null; then
			PY=$py
			break
		fi
	done
	if [ -z "$PY" ]; then
		skip "$what (no python3 with google.protobuf: install python3-protobuf, tests/deps.sh)"
		return 1
	fi
}

# ---- memo: what a deterministic helper printed, shared by the three runs of make check ----
# The plain, ASan and valgrind runs of make check hand the same bytes to the same helpers: the
# reference tools get the same inputs, the test generators the same seeds, and the checkers
# (tests/gen/*.py, protoc, rsvg-convert) outputs of ours that are byte for byte the same in
# every build. What such a command does depends only on its arguments and the bytes of the
# files they name, so
#   memo [-C DIR] [-i FILE]... [-o FILE]... [-s FILE] [--] CMD ARGS...
# runs it once and keeps its stdout, stderr, exit status and the files it writes (-o FILE,
# or with -C DIR, where it runs, all that DIR holds after) under $MEMO_DIR, keyed by the
# command, its arguments (paths under $OUT, $TOP and $SHARED_DIR as relative to them), the
# bytes of every argument that is a file or directory (also after NAME=; a NAME that is no
# file: the files NAME.*), of each -i FILE (read but not named; -s FILE is also its stdin,
# else /dev/null), of what DIR held before, tests/gen's sources, and TZ, LC_ALL and LANG.
# A second call with the same key replays the result, and one running waits for the other
# (a lock per key). Never for what is under test: our tools always run. A result that names a
# path of the run that made it is not kept (another run would see the wrong path).
# A script whose scratch directory has a name of its own in each run (mktemp) names it in
# MEMO_SCRATCH. MEMO_DIR unset (a script run by hand, run-e2e.sh alone): every call just runs.
# (Written to start few processes: a call costs a flock, a sha1sum per file and one for the
# key, and a cat of what is replayed; the suite makes about 1,800 calls.)
memo() {
	local dir="" stdin=/dev/null ins=() outs=() d t fd rc f i s
	while [ $# -gt 0 ]; do
		case $1 in
		-C) dir=$2; shift 2 ;;
		-i) ins+=("$2"); shift 2 ;;
		-o) outs+=("$2"); shift 2 ;;
		-s) stdin=$2; ins+=("$2"); shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	if [ -z "${MEMO_DIR:-}" ]; then
		if [ -n "$dir" ]; then (cd "$dir" && "$@" <"$stdin"); else "$@" <"$stdin"; fi
		return
	fi
	[ -n "${MEMO_GEN:-}" ] || memo_init
	memo_key "$dir" "${#ins[@]}" "${ins[@]}" "${#outs[@]}" "${outs[@]}" "$@" || return 99
	d=$MEMO_DIR/$MEMO_KEY
	memo_norm "$*"
	s=${MEMO_NORM:0:200}
	exec {fd}>"$d.lock"
	flock "$fd"
	if [ -f "$d/rc" ]; then
		echo "hit $MEMO_KEY $s" >>"$MEMO_DIR/log"
		[ -n "$dir" ] && tar -C "$dir" -xf "$d/dir.tar"
		for i in "${!outs[@]}"; do
			rm -f "${outs[$i]}"
			[ -f "$d/out.$i" ] && cp "$d/out.$i" "${outs[$i]}"
		done
		[ -s "$d/stdout" ] && cat "$d/stdout"
		[ -s "$d/stderr" ] && cat "$d/stderr" >&2
		read -r rc <"$d/rc"
	else
		t=$MEMO_DIR/.run.$BASHPID.$RANDOM
		rm -rf "$t"
		mkdir "$t"
		if [ -n "$dir" ]; then
			(cd "$dir" && "$@" <"$stdin" >"$t/stdout" 2>"$t/stderr")
		else
			"$@" <"$stdin" >"$t/stdout" 2>"$t/stderr"
		fi
		rc=$?
		[ -s "$t/stdout" ] && cat "$t/stdout"
		[ -s "$t/stderr" ] && cat "$t/stderr" >&2
		[ -n "$dir" ] && tar -C "$dir" -cf "$t/dir.tar" .
		for i in "${!outs[@]}"; do
			[ -f "${outs[$i]}" ] && cp "${outs[$i]}" "$t/out.$i"
		done
		echo "$rc" >"$t/rc"
		# a result that names a path of this run (inside the tar of -C DIR too: not
		# compressed, grep sees the names and bytes) is not kept
		if grep -rqaF -e "$OUT" -e "$TOP" -e "$SHARED_DIR" -e "$MEMO_SHARED_REAL" \
			${MEMO_SCRATCH:+-e "$MEMO_SCRATCH"} "$t"; then
			echo "nokeep $MEMO_KEY $s" >>"$MEMO_DIR/log"
			rm -rf "$t"
		else
			echo "miss $MEMO_KEY $s" >>"$MEMO_DIR/log"
			mv "$t" "$d"
		fi
	fi
	exec {fd}>&-
	return "$rc"
}
# memo_norm STRING: MEMO_NORM is STRING with the paths of this run (the longest first) as
# memo's keys say them
memo_norm() {
	local s=$1
	[ -n "${MEMO_SCRATCH:-}" ] && s=${s//"$MEMO_SCRATCH"/@SCRATCH}
	s=${s//"$SHARED_DIR"/@SHARED}
	s=${s//"$MEMO_SHARED_REAL"/@SHARED}
	s=${s//"$OUT"/@OUT}
	MEMO_NORM=${s//"$TOP"/@TOP}
}
# memo_key DIR NINS INS... NOUTS OUTS... CMD ARGS...: MEMO_KEY
memo_key() {
	local dir=$1 n i a v f text files=() outs=() dirs=()
	shift
	text="memo 2 TZ=${TZ-} LC_ALL=${LC_ALL-} LANG=${LANG-} gen=$MEMO_GEN"
	# -C DIR: what is in it before
	[ -n "$dir" ] && dirs+=("$dir")
	n=$1
	shift
	for ((i = 0; i < n; i++)); do
		files+=("$1")
		shift
	done
	n=$1
	shift
	for ((i = 0; i < n; i++)); do
		outs+=("$1")
		memo_norm "$1"
		text+=$'\n'"out $MEMO_NORM"
		shift
	done
	# the command: a path (a script of ours) by its bytes, a name (python3, protoc) as is
	memo_norm "$1"
	text+=$'\n'"cmd $MEMO_NORM"
	[[ $1 == */* ]] && [ -f "$1" ] && files+=("$1")
	shift
	for a in "$@"; do
		memo_norm "$a"
		text+=$'\n'"arg $MEMO_NORM"
		case " ${outs[*]} " in *" $a "*) continue ;; esac
		v=$a
		[[ $a == *=* ]] && [ ! -e "$a" ] && v=${a#*=}
		if [ -d "$v" ]; then
			[ "$v" != / ] && dirs+=("$v")
		elif [ -e "$v" ]; then
			files+=("$v")
		elif [[ $v == */* ]]; then
			# a name whose files are NAME.something (blkparse -i NAME)
			for f in "$v".*; do
				[ -e "$f" ] || continue
				memo_norm "$f"
				text+=$'\n'"file+ $MEMO_NORM"
				files+=("$f")
			done
		fi
	done
	MEMO_KEY=$(
		{
			printf '%s\n' "$text"
			# the bytes of each file, in order; of each directory, every file under it
			for f in "${files[@]}"; do sha1sum <"$f"; done
			for f in "${dirs[@]}"; do
				echo "dir"
				(cd "$f" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha1sum)
			done
		} | sha1sum
	) || return 1
	MEMO_KEY=${MEMO_KEY%% *}
}
# once per script (MEMO_DIR set when it starts) or at the first call
memo_init() {
	MEMO_SHARED_REAL=$(realpath -m "$SHARED_DIR")
	# tests/gen's modules, which the checkers and generators import
	MEMO_GEN=$(cat "$TOP"/tests/gen/*.py | sha1sum)
	MEMO_GEN=${MEMO_GEN%% *}
}
[ -n "${MEMO_DIR:-}" ] && memo_init

# tests/gen/iowait.py through memo, with what each subcommand writes: synth adds files to
# DIR, strip and inband write OUT (their second argument), merge OUT (its first); count,
# list, overlap and match only read.
iw() {
	local py=(python3 -B "$TOP/tests/gen/iowait.py")
	case $1 in
	synth) memo -C "$2" "${py[@]}" "$@" ;;
	strip | inband) memo -o "$3" "${py[@]}" "$@" ;;
	merge) memo -o "$2" "${py[@]}" "$@" ;;
	*) memo "${py[@]}" "$@" ;;
	esac
}
