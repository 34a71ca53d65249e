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
if [ -n "${VALGRIND:-}" ]; then
	mkdir -p "$OUT/memcheck"
	export VG_LOG_DIR="$OUT/memcheck"
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
unpack() {
	local src="$TOP/tests/data/$1" dst="$OUT/data/$1" f
	if [ ! -f "$dst/.unpacked" ] || [ "$src" -nt "$dst/.unpacked" ]; then
		rm -rf "$dst"
		mkdir -p "$dst"
		for f in "$src"/*.xz; do
			xz -dc "$f" >"$dst/$(basename "${f%.xz}")"
		done
		touch "$dst/.unpacked"
	fi
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
kernel_lock() {
	exec 8>/tmp/blktrace-ng.kernel.lock
	flock 8
}
# vm_lock: the qemu VM of tests/vm (two TCG guests at once would starve each other).
vm_lock() {
	exec 7>/tmp/blktrace-ng.vm.lock
	flock 7
}
# loop_attach [losetup options] FILE: losetup -f --show, one at a time (two scripts asking
# for the first free device at once can be handed the same one). Prints the device.
loop_attach() {
	(
		flock 6
		losetup -f --show "$@"
	) 6>/tmp/blktrace-ng.losetup.lock
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
memo() {
	local dir="" stdin=/dev/null ins=() outs=() key d t fd rc f
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
	key=$(memo_key "$dir" "${#ins[@]}" "${ins[@]}" "${#outs[@]}" "${outs[@]}" "$@") || return 99
	d=$MEMO_DIR/$key
	exec {fd}>"$d.lock"
	flock "$fd"
	if [ -f "$d/rc" ]; then
		echo "hit $key $(memo_norm "$*" | head -c 200)" >>"$MEMO_DIR/log"
		[ -n "$dir" ] && tar -C "$dir" -xf "$d/dir.tar"
		for f in "${!outs[@]}"; do
			rm -f "${outs[$f]}"
			[ -f "$d/out.$f" ] && cp "$d/out.$f" "${outs[$f]}"
		done
		cat "$d/stdout"
		cat "$d/stderr" >&2
		rc=$(cat "$d/rc")
	else
		t=$(mktemp -d "$MEMO_DIR/.run.XXXXXX")
		if [ -n "$dir" ]; then
			(cd "$dir" && "$@" <"$stdin" >"$t/stdout" 2>"$t/stderr")
		else
			"$@" <"$stdin" >"$t/stdout" 2>"$t/stderr"
		fi
		rc=$?
		cat "$t/stdout"
		cat "$t/stderr" >&2
		[ -n "$dir" ] && tar -C "$dir" -cf "$t/dir.tar" .
		for f in "${!outs[@]}"; do
			[ -f "${outs[$f]}" ] && cp "${outs[$f]}" "$t/out.$f"
		done
		echo "$rc" >"$t/rc"
		if memo_names_run "$t"; then
			echo "nokeep $key $(memo_norm "$*" | head -c 200)" >>"$MEMO_DIR/log"
			rm -rf "$t"
		else
			echo "miss $key $(memo_norm "$*" | head -c 200)" >>"$MEMO_DIR/log"
			mv "$t" "$d"
		fi
	fi
	exec {fd}>&-
	return "$rc"
}
# the paths of this run, longest first, and what memo's keys say instead
memo_norm() {
	local s=$1 sh
	[ -n "${MEMO_SCRATCH:-}" ] && s=${s//"$MEMO_SCRATCH"/@SCRATCH}
	sh=$(realpath -m "$SHARED_DIR")
	s=${s//"$SHARED_DIR"/@SHARED}
	s=${s//"$sh"/@SHARED}
	s=${s//"$OUT"/@OUT}
	s=${s//"$TOP"/@TOP}
	printf '%s' "$s"
}
# does a kept result (its directory) name a path of this run?
memo_names_run() {
	local p
	for p in "$OUT" "$TOP" "$SHARED_DIR" "$(realpath -m "$SHARED_DIR")" ${MEMO_SCRATCH:+"$MEMO_SCRATCH"}; do
		[ -n "$p" ] && grep -rqaF -- "$p" "$1" && return 0
		# inside the tar of -C DIR too (not compressed: grep sees the names and bytes)
	done
	return 1
}
memo_hash() { # path: the bytes of a file, or of every file under a directory
	if [ -d "$1" ]; then
		(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha1sum)
	else
		sha1sum <"$1"
	fi
}
memo_key() { # dir nins ins... nouts outs... cmd args...
	local dir=$1 n i a v c f outs=()
	shift
	{
		echo "memo 1 TZ=${TZ-} LC_ALL=${LC_ALL-} LANG=${LANG-}"
		# -C DIR: what is in it before
		[ -n "$dir" ] && echo "dir $(memo_hash "$dir")"
		# tests/gen's modules, which the checkers and generators import
		cat "$TOP"/tests/gen/*.py | sha1sum
		n=$1
		shift
		for ((i = 0; i < n; i++)); do
			echo "in $(memo_hash "$1")"
			shift
		done
		n=$1
		shift
		for ((i = 0; i < n; i++)); do
			outs+=("$1")
			echo "out $(memo_norm "$1")"
			shift
		done
		c=$(command -v "$1") || c=$1
		echo "cmd $(memo_norm "$1") $([ -f "$c" ] && sha1sum <"$c")"
		shift
		for a in "$@"; do
			echo "arg $(memo_norm "$a")"
			case " ${outs[*]} " in *" $a "*) continue ;; esac
			v=$a
			[[ $a == *=* ]] && [ ! -e "$a" ] && v=${a#*=}
			if [ -e "$v" ]; then
				[ "$v" != / ] && echo "bytes $(memo_hash "$v")"
			elif [[ $v == */* ]] && compgen -G "$v.*" >/dev/null; then
				# a name whose files are NAME.something (blkparse -i NAME)
				for f in "$v".*; do echo "bytes+ $(memo_norm "$f") $(memo_hash "$f")"; done
			fi
		done
	} | sha1sum | cut -c1-40
}
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
