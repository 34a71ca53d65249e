#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Time our btt/btt against the reference /usr/bin/btt on the same merged trace.
#
#   bench/bench-btt.sh            (or: make bench)
#
# Traces: ../shared/traces/large-perf (merged with our blkparse -d) when present, a
# synthetic trace of GEN_EVENTS records (default 20000000) from tests/gen/gentrace, and
# QONLY_EVENTS queue events that never complete.
# For each: best-of-RUNS wall seconds, the CPU seconds (user + system) of that run, the
# highest peak RSS of all runs, the ratios reference/ours, and whether every file both
# tools wrote (.avg, .dat, .msg, histograms, *_fp.dat) is byte-identical.
#
# Environment: OURS, REF, BLKPARSE (paths), RUNS (default 3), TRACE_TARXZ, GEN_EVENTS
# (0 skips the synthetic trace), QONLY_EVENTS (default 1200000: a trace of queue events
# that never complete; 0 skips it), BTT_ARGS (extra options for both, e.g. "-s seek").
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
TOP=$PWD

OURS=${OURS:-$TOP/btt/btt}
REF=${REF:-/usr/bin/btt}
BLKPARSE=${BLKPARSE:-$TOP/blkparse}
RUNS=${RUNS:-3}
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}
GEN=$TOP/tests/gen/gentrace
GEN_EVENTS=${GEN_EVENTS:-20000000}
BTT_ARGS=${BTT_ARGS:-}
TIME=/usr/bin/time

die() {
	echo "bench: $*" >&2
	exit 1
}

[ -x "$OURS" ] || die "'$OURS' not found; run 'make' first"
[ -x "$BLKPARSE" ] || die "'$BLKPARSE' not found; run 'make' first"
if [ ! -x "$REF" ]; then
	echo "bench: reference '$REF' not installed (apt-get install blktrace); timing ours only" >&2
	REF=
fi
if [ ! -x "$TIME" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "bench: installing package 'time' for /usr/bin/time" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1
fi
[ -x "$TIME" ] || die "/usr/bin/time missing (apt-get install time): it measures CPU time and peak RSS"

TMP=$(mktemp -d /tmp/bench-btt.XXXXXX) || die "cannot create a temporary directory"
# shellcheck disable=SC2317 # called from the trap
cleanup() {
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one run in its own directory (btt writes *_fp.dat into the current one):
# sets WALL, CPU, RSS
run_one() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && "$TIME" -f '%e %U %S %M' -o ../time.txt "$@" -o out >/dev/null 2>stderr.txt) ||
		return 1
	read -r WALL u s RSS <"$dir/../time.txt"
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
}

# best TAG CMD...: best wall (and its CPU) and highest RSS of $RUNS runs
best() {
	local tag=$1 bw='' bc='' rss=0 i
	shift
	for ((i = 0; i < RUNS; i++)); do
		run_one "$TMP/run/$tag" "$@" || {
			echo "bench: '$*' failed:" >&2
			head -n 5 "$TMP/run/$tag/stderr.txt" >&2
			return 1
		}
		if [ -z "$bw" ] || awk -v a="$WALL" -v b="$bw" 'BEGIN { exit !(a < b) }'; then
			bw=$WALL
			bc=$CPU
		fi
		[ "$RSS" -gt "$rss" ] && rss=$RSS
	done
	printf -v "WALL_$tag" '%s' "$bw"
	printf -v "CPU_$tag" '%s' "$bc"
	printf -v "RSS_$tag" '%s' "$rss"
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1fx", a / b; else print "-" }'
}

# bench_trace LABEL MERGED.bin EVENTS
bench_trace() {
	local label=$1 bin=$2 events=$3 same=n/a f
	# shellcheck disable=SC2086 # BTT_ARGS is a list of options
	best ours "$OURS" -i "$bin" $BTT_ARGS || die "our btt failed"
	if [ -n "$REF" ]; then
		# shellcheck disable=SC2086
		best ref "$REF" -i "$bin" $BTT_ARGS || die "the reference btt failed"
		same=SAME
		for f in "$TMP"/run/ref/*; do
			case $f in */stderr.txt) continue ;; esac
			cmp -s "$f" "$TMP/run/ours/${f##*/}" || {
				same="DIFFERENT (${f##*/})"
				break
			}
		done
		[ "$(ls "$TMP/run/ref" | wc -l)" = "$(ls "$TMP/run/ours" | wc -l)" ] ||
			same="DIFFERENT (file sets)"
	fi
	printf '\n%s: %s events\n' "$label" "$events"
	printf '%-10s %9s %9s %14s   %s\n' tool wall_s cpu_s peak_RSS_MiB output
	printf '%-10s %9s %9s %14.1f   %s\n' ours "$WALL_ours" "$CPU_ours" \
		"$(awk -v k="$RSS_ours" 'BEGIN { print k / 1024 }')" "$same"
	if [ -n "$REF" ]; then
		printf '%-10s %9s %9s %14.1f\n' reference "$WALL_ref" "$CPU_ref" \
			"$(awk -v k="$RSS_ref" 'BEGIN { print k / 1024 }')"
		printf '%-10s %9s %9s %14s   (reference / ours)\n' ratio \
			"$(ratio "$WALL_ref" "$WALL_ours")" "$(ratio "$CPU_ref" "$CPU_ours")" \
			"$(ratio "$RSS_ref" "$RSS_ours")"
	fi
}

# events in a merged file: its records, counted by our blkparse's summary
count_events() {
	"$BLKPARSE" -i "$1" 2>/dev/null | tail -n 20 |
		awk '/^Events \(.*\): [0-9]+ entries/ { n += $(NF - 1) } END { print n + 0 }'
}

if [ -f "$TRACE_TARXZ" ]; then
	echo "bench: extracting and merging $TRACE_TARXZ" >&2
	mkdir -p "$TMP/lp"
	tar -xJf "$TRACE_TARXZ" -C "$TMP/lp" || die "cannot extract '$TRACE_TARXZ'"
	f=$(ls "$TMP"/lp/*.blktrace.0 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "no per-CPU files in '$TRACE_TARXZ'"
	name=$(basename "$f" .blktrace.0)
	"$BLKPARSE" -i "$name" -D "$TMP/lp" -O -d "$TMP/lp.bin" >/dev/null 2>&1 || die "merge failed"
	rm -f "$TMP"/lp/*.blktrace.*
	bench_trace "$(basename "$TRACE_TARXZ" .tar.xz)" "$TMP/lp.bin" "$(count_events "$TMP/lp.bin")"
	rm -f "$TMP/lp.bin"
else
	echo "bench: '$TRACE_TARXZ' missing; synthetic trace only" >&2
fi

if [ "$GEN_EVENTS" -gt 0 ]; then
	[ -x "$GEN" ] || die "'$GEN' not built; run 'make'"
	echo "bench: generating $GEN_EVENTS synthetic events" >&2
	"$GEN" -n "$GEN_EVENTS" -c 2 -s 1 -o syn -D "$TMP/syn" || die "gentrace failed"
	"$BLKPARSE" -i syn -D "$TMP/syn" -O -d "$TMP/syn.bin" >/dev/null 2>&1 || die "merge failed"
	rm -rf "$TMP/syn"
	bench_trace "synthetic (gentrace -n $GEN_EVENTS -c 2)" "$TMP/syn.bin" "$GEN_EVENTS"
fi
if [ "${QONLY_EVENTS:-1200000}" -gt 0 ]; then
	# the case the issue names: queued requests that never complete stay in flight
	echo "bench: writing ${QONLY_EVENTS:-1200000} queue events that never complete" >&2
	PYTHONPATH="$TOP/tests/gen" python3 -B - "$TMP/qonly.bin" "${QONLY_EVENTS:-1200000}" <<'PY' || die "python3 failed"
import random, sys, blkrec as b
random.seed(3)
Q = b.act(b.TA_QUEUE, b.TC_QUEUE | b.TC_FS | b.TC_WRITE)
with open(sys.argv[1], 'wb') as out:
    n, buf = int(sys.argv[2]), []
    for i in range(n):
        buf.append(b.encode(7, '<', i + 1, 1000 * i, random.randrange(0, 1 << 30) * 8, 4096, Q, 100,
                            b.mkdev(8, 0), 0))
        if len(buf) == 10000:
            out.write(b''.join(buf))
            buf = []
    out.write(b''.join(buf))
PY
	bench_trace "queue events only (never completed)" "$TMP/qonly.bin" "${QONLY_EVENTS:-1200000}"
fi
exit 0
