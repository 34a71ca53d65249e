#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Time our ./blkparse against the reference /usr/bin/blkparse on the same trace.
#
#   bench/bench-blkparse.sh            (or: make bench)
#
# Trace: ../shared/traces/large-perf/large-perf.tar.xz when present (extracted under /tmp),
# else (or with GEN_EVENTS set) a synthetic trace from tests/gen/gentrace; TRACE_DIR and
# TRACE_NAME name per-CPU files already on disk (TRACE_DIR/TRACE_NAME.blktrace.N).
#
# Workloads (WORKLOADS picks some; all by default):
#   text     text output of the per-CPU files to /dev/null
#   bin      binary merge, -O -d OUT.bin; floor: `cat` of the per-CPU files into a new file
#   track    text with -t (stale times replayed on the allocator model)
#   pipe     text of the merged trace read from a pipe (`cat merged | blkparse -i -`)
#   pipebin  the same with -O -d OUT.bin; floor: `cat merged | cat > new file`
#   gz       text of gzip-compressed per-CPU files (the reference reads the plain ones:
#            it has no gzip input; the "Input file ... added" lines differ by ".gz" only)
#   gzbin    -O -d of the .gz files; floor: `zcat` of them into a new file
# RUNS runs of every tool, interleaved (ours, reference, floor, ours, ...); the table gives
# the median wall seconds, the CPU seconds (user + system) of the median run, the ratios
# ours/reference and ours/floor, the highest peak RSS, and SAME or DIFFERS for each output
# (ours against the reference's).
#
# Environment: OURS, REF (paths of the two tools), RUNS (default 5), TRACE_TARXZ,
# GEN_EVENTS, TRACE_DIR, TRACE_NAME, WORKLOADS.
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1

OURS=${OURS:-./blkparse}
OURS=$(readlink -f "$OURS")
REF=${REF:-/usr/bin/blkparse}
RUNS=${RUNS:-5}
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}
GEN=./tests/gen/gentrace
GEN_EVENTS=${GEN_EVENTS:-}
TRACE_DIR=${TRACE_DIR:-}
TRACE_NAME=${TRACE_NAME:-}
WORKLOADS=${WORKLOADS:-text bin track pipe pipebin gz gzbin}

die() {
	echo "bench: $*" >&2
	exit 1
}

[ -x "$OURS" ] || die "'$OURS' not found; run 'make' first"
if [ ! -x "$REF" ]; then
	echo "bench: reference '$REF' not installed; timing ours only" >&2
	REF=
fi

# GNU time gives the CPU time and the peak RSS.
TIME=/usr/bin/time
if [ ! -x "$TIME" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "bench: installing package 'time' for /usr/bin/time" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1; }
fi
[ -x "$TIME" ] || die "/usr/bin/time missing (apt-get install time): it measures CPU time and peak RSS"

TMP=$(mktemp -d /tmp/bench-blkparse.XXXXXX) || die "cannot create a temporary directory"
# shellcheck disable=SC2317 # called from the trap
cleanup() {
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the trace ----
if [ -n "$TRACE_DIR" ]; then
	DIR=$(readlink -f "$TRACE_DIR")
	NAME=$TRACE_NAME
	if [ -z "$NAME" ]; then
		for f in "$DIR"/*.blktrace.0; do
			f=${f##*/}
			NAME=${f%.blktrace.*}
			break
		done
	fi
	LABEL="$NAME in $DIR"
elif [ -z "$GEN_EVENTS" ] && [ -f "$TRACE_TARXZ" ]; then
	mkdir -p "$TMP/trace"
	echo "bench: extracting $TRACE_TARXZ" >&2
	tar -xJf "$TRACE_TARXZ" -C "$TMP/trace" || die "cannot extract '$TRACE_TARXZ'"
	manifest=$(dirname "$TRACE_TARXZ")/MANIFEST.md
	# "Trace input names: large-perf (blkparse/btt: `-i large-perf -D .`)"
	NAME=
	SUBDIR=.
	if [ -f "$manifest" ]; then
		# shellcheck disable=SC2016 # the backquotes are literal
		args=$(sed -n 's/.*`\(-i [^`]*\)`.*/\1/p' "$manifest" | head -n 1)
		NAME=$(sed -n 's/.*-i \([^ ]*\).*/\1/p' <<<"$args")
		d=$(sed -n 's/.*-D \([^ ]*\).*/\1/p' <<<"$args")
		[ -n "$d" ] && SUBDIR=$d
	fi
	if [ -z "$NAME" ]; then
		for f in "$TMP"/trace/*.blktrace.[0-9]*; do
			f=${f##*/}
			NAME=${f%.blktrace.*}
			break
		done
	fi
	DIR=$TMP/trace/$SUBDIR
	LABEL=$(basename "$TRACE_TARXZ" .tar.xz)
else
	GEN_EVENTS=${GEN_EVENTS:-4000000}
	[ -x "$GEN" ] || die "'$GEN' not built; run 'make'"
	echo "bench: generating $GEN_EVENTS synthetic events" >&2
	mkdir -p "$TMP/trace"
	"$GEN" -n "$GEN_EVENTS" -c 2 -s 1 -o syn -D "$TMP/trace" || die "gentrace failed"
	NAME=syn
	DIR=$TMP/trace
	LABEL="synthetic (gentrace -n $GEN_EVENTS -c 2)"
fi
ls "$DIR/$NAME".blktrace.* >/dev/null 2>&1 || die "no '$NAME.blktrace.*' files in '$DIR'"
INPUTS=("$DIR/$NAME".blktrace.*)
BYTES=$(cat "${INPUTS[@]}" | wc -c)
OUT=$TMP/out
mkdir -p "$OUT"

wants() {
	[[ " $WORKLOADS " == *" $1 "* ]]
}

# The merged trace for the pipe cases (the reference's dump; ours without a reference).
MERGED=$TMP/merged.bin
if wants pipe || wants pipebin; then
	echo "bench: merging the trace for the pipe cases" >&2
	"${REF:-$OURS}" -i "$NAME" -D "$DIR" -O -d "$MERGED" >/dev/null 2>&1 ||
		die "cannot merge '$NAME' for the pipe cases"
fi
# gzip copies of the per-CPU files for the gzip cases
GZDIR=$TMP/gz
if wants gz || wants gzbin; then
	echo "bench: compressing the per-CPU files (gzip -6) for the gzip cases" >&2
	mkdir -p "$GZDIR"
	for f in "${INPUTS[@]}"; do
		gzip -c "$f" >"$GZDIR/${f##*/}.gz" || die "gzip failed"
	done
fi

# ---- measuring ----

# run_one WHO CMD...: run once with stdout to /dev/null after removing every dump file
# ($OUT/*.bin: each run's is checksummed right after it); set WALL (s), CPU (s) and RSS (KiB).
# A command starting with 'pipe:' reads $MERGED from a pipe. Each run starts after a sync (not
# timed): without it a run began while the kernel still wrote back the file of the run before
# (up to 936 MB on 20M events), which took a CPU from it, and which run came after which
# decided the ratio (ours after cat's fast dump: -O -d at 1.66-1.87x cat in full benches,
# 1.05x on its own). And with only the tool's own dump removed, each run found the others'
# dumps in the page cache (up to 2.8 GB on 20M events): the system time of every writer, cat's
# too, then varied 2-4x on this VM (cat's median 1.0 s where it was 0.4 s alone).
run_one() {
	local out=/dev/null t0 t1 u s
	rm -f "$OUT"/*.bin
	shift
	sync
	t0=$EPOCHREALTIME
	if [ "$1" = pipe: ]; then
		shift
		cat "$MERGED" | "$TIME" -f '%U %S %M' -o "$TMP/time.txt" "$@" >"$out" \
			2>"$TMP/stderr.txt" || return 1
	else
		"$TIME" -f '%U %S %M' -o "$TMP/time.txt" "$@" >"$out" 2>"$TMP/stderr.txt" ||
			return 1
	fi
	t1=$EPOCHREALTIME
	read -r u s RSS <"$TMP/time.txt"
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
}

# record TAG: add the last run's figures to TAG's lists
declare -A WALLS CPUS PEAK
record() {
	WALLS[$1]="${WALLS[$1]:-} $WALL:$CPU"
	[ "${PEAK[$1]:-0}" -lt "$RSS" ] && PEAK[$1]=$RSS
	return 0
}

# median TAG: sets MED (wall) and MEDCPU (the CPU seconds of that run)
median() {
	local sorted n
	sorted=$(tr ' ' '\n' <<<"${WALLS[$1]:-}" | sed '/^$/d' | sort -t: -k1,1g)
	n=$(wc -l <<<"$sorted")
	[ -n "$sorted" ] || {
		MED=
		MEDCPU=
		return
	}
	IFS=: read -r MED MEDCPU <<<"$(sed -n "$(((n + 1) / 2))p" <<<"$sorted")"
}

# dumpsum WHO W: the checksum of WHO's dump of workload W (bin, pipebin, gzbin), kept
declare -A SUMS
dumpsum() {
	case $2 in bin | pipebin | gzbin) ;; *) return 0 ;; esac
	SUMS[$1_$2]="${SUMS[$1_$2]:-} $(cksum <"$OUT/$1.bin" | tr ' ' :)"
}

# dumps_same W: SAME[W] from the dumps of every run: SAME when ours were all one and the
# reference's too, the same; SAME* when the reference's differed from run to run (seen on a
# pipe of 20M events, in some runs, not in others: a process note at another place; its
# pipe reads end wherever the writer was, ours are ordered the same whatever they are) and
# ours is one of them; else DIFFERS (OURS VARY: a bug)
dumps_same() {
	local o r
	o=$(tr ' ' '\n' <<<"${SUMS[ours_$1]}" | sed '/^$/d' | sort -u)
	r=$(tr ' ' '\n' <<<"${SUMS[ref_$1]}" | sed '/^$/d' | sort -u)
	if [ "$(wc -l <<<"$o")" != 1 ]; then
		SAME[$1]="OURS VARY"
	elif [ "$o" = "$r" ]; then
		SAME[$1]=SAME
	elif grep -qxF "$o" <<<"$r"; then
		SAME[$1]="SAME*"
		REF_VARIES=1
	else
		SAME[$1]=DIFFERS
	fi
}

# bench_wl W: RUNS interleaved runs of ours, the reference and the floor for workload W
bench_wl() {
	local w=$1 i
	local -a ours ref floor
	case $w in
	text)
		ours=("$OURS" -i "$NAME" -D "$DIR")
		ref=("$REF" -i "$NAME" -D "$DIR")
		floor=()
		;;
	bin)
		ours=("$OURS" -i "$NAME" -D "$DIR" -O -d "$OUT/ours.bin")
		ref=("$REF" -i "$NAME" -D "$DIR" -O -d "$OUT/ref.bin")
		floor=(sh -c 'cat "$@" >"'"$OUT"'/cat.bin"' sh "${INPUTS[@]}")
		;;
	track)
		ours=("$OURS" -i "$NAME" -D "$DIR" -t)
		ref=("$REF" -i "$NAME" -D "$DIR" -t)
		floor=()
		;;
	pipe)
		ours=(pipe: "$OURS" -i -)
		ref=(pipe: "$REF" -i -)
		floor=()
		;;
	pipebin)
		ours=(pipe: "$OURS" -i - -O -d "$OUT/ours.bin")
		ref=(pipe: "$REF" -i - -O -d "$OUT/ref.bin")
		floor=(pipe: sh -c 'cat >"'"$OUT"'/cat.bin"')
		;;
	gz)
		ours=("$OURS" -i "$NAME" -D "$GZDIR")
		ref=("$REF" -i "$NAME" -D "$DIR")
		floor=()
		;;
	gzbin)
		ours=("$OURS" -i "$NAME" -D "$GZDIR" -O -d "$OUT/ours.bin")
		ref=("$REF" -i "$NAME" -D "$DIR" -O -d "$OUT/ref.bin")
		floor=(sh -c 'zcat "$@" >"'"$OUT"'/cat.bin"' sh "$GZDIR"/*.gz)
		;;
	esac
	echo "bench: $w, $RUNS interleaved runs" >&2
	for ((i = 0; i < RUNS; i++)); do
		run_one ours "${ours[@]}" || {
			echo "bench: '${ours[*]}' failed:" >&2
			head -n 5 "$TMP/stderr.txt" >&2
			return 1
		}
		record "ours_$w"
		dumpsum ours "$w"
		if [ -n "$REF" ]; then
			run_one ref "${ref[@]}" || {
				echo "bench: '${ref[*]}' failed:" >&2
				head -n 5 "$TMP/stderr.txt" >&2
				return 1
			}
			record "ref_$w"
			dumpsum ref "$w"
		fi
		if [ ${#floor[@]} -gt 0 ]; then
			run_one cat "${floor[@]}" || return 1
			record "floor_$w"
		fi
	done
	# the outputs, compared
	SAME[$w]=n/a
	[ -n "$REF" ] || return 0
	case $w in
	bin | pipebin | gzbin)
		dumps_same "$w"
		return 0
		;;
	text | track)
		local opt=
		[ "$w" = track ] && opt=-t
		# shellcheck disable=SC2086 # $opt is one word or none
		cmp -s <("$OURS" -i "$NAME" -D "$DIR" $opt 2>/dev/null) \
			<("$REF" -i "$NAME" -D "$DIR" $opt 2>/dev/null)
		;;
	pipe)
		cmp -s <(cat "$MERGED" | "$OURS" -i - 2>/dev/null) \
			<(cat "$MERGED" | "$REF" -i - 2>/dev/null)
		;;
	gz)
		cmp -s <("$OURS" -i "$NAME" -D "$GZDIR" 2>/dev/null |
			sed "s|^Input file $GZDIR/\(.*\)\.gz added\$|Input file $DIR/\1 added|") \
			<("$REF" -i "$NAME" -D "$DIR" 2>/dev/null)
		;;
	esac
	if [ $? = 0 ]; then
		SAME[$w]=SAME
	else
		SAME[$w]=DIFFERS
	fi
}

declare -A SAME
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for w in $WORKLOADS; do
	bench_wl "$w" || die "workload '$w' failed"
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# events, from our summary
EVENTS=$("$OURS" -i "$NAME" -D "$DIR" 2>/dev/null |
	awk '/^Events \(.*\): [0-9]+ entries/ { n += $(NF - 1) } END { print n + 0 }')

# ---- the table ----
ratio() {
	if [ -z "$1" ] || [ -z "$2" ] || [ "$2" = 0 ] || [ "$2" = 0.000 ]; then
		echo "-"
		return
	fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'
}
mib() {
	if [ -z "$1" ] || [ "$1" = 0 ]; then
		echo "-"
		return
	fi
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

printf '\ntrace: %s, %s events, %.1f MiB of per-CPU files; %s runs each, interleaved\n' \
	"$LABEL" "$EVENTS" "$(awk -v b="$BYTES" 'BEGIN { print b / 1048576 }')" "$RUNS"
printf 'load average (1, 5, 15 min): %s at the start, %s at the end; %s CPUs\n' "$LOAD0" \
	"$LOAD1" "$(nproc)"
printf '%-9s %-6s %8s %6s %8s %8s %8s %8s %8s\n' workload tool wall_s cpu_s '/ref' '/floor' \
	RSS_MiB RSS/ref output
for w in $WORKLOADS; do
	median "ours_$w"
	ow=$MED oc=$MEDCPU
	median "ref_$w"
	rw=$MED rc=$MEDCPU
	median "floor_$w"
	fw=$MED fc=$MEDCPU
	printf '%-9s %-6s %8s %6s %8s %8s %8s %8s %8s\n' "$w" ours "$ow" "$oc" "$(ratio "$ow" "$rw")" \
		"$(ratio "$ow" "$fw")" "$(mib "${PEAK[ours_$w]:-}")" \
		"$(ratio "${PEAK[ours_$w]:-}" "${PEAK[ref_$w]:-}")" "${SAME[$w]}"
	[ -n "$REF" ] && printf '%-9s %-6s %8s %6s %8s %8s %8s\n' '' ref "$rw" "$rc" '' '' \
		"$(mib "${PEAK[ref_$w]:-}")"
	[ -n "$fw" ] && printf '%-9s %-6s %8s %6s %8s %8s %8s\n' '' floor "$fw" "$fc" '' '' \
		"$(mib "${PEAK[floor_$w]:-}")"
done
echo "floor: bin = cat of the per-CPU files into a new file; pipebin = cat of the pipe into a new file; gzbin = zcat of the .gz files into a new file"
[ -z "${REF_VARIES:-}" ] || echo "SAME*: the reference's own dumps differed from run to run; ours (the same in every run) is one of them"
[ -n "$REF" ] || echo "(reference blkparse not installed: no ratios, no output check)"
exit 0
