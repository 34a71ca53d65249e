#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# btt --perfetto against btt alone on the same merged trace (issue 14): wall and CPU seconds
# of each (median and best of RUNS rounds, interleaved: each round runs every command once,
# so that the load of the machine weighs on all alike), their ratio (target: at most 2x),
# the export's size against the merged binary trace (target: at most 1x), its bytes per
# trace record and per I/O, and the same for the gzip export. The load average is printed
# before and after.
#
#   bench/bench-perfetto.sh
#
# Trace: ../shared/traces/large-perf (merged once with our blkparse -d into bench/out/), or
# TRACE=merged.bin. Environment: RUNS (default 5), BTT (default btt/btt), BTT_ARGS (options
# for both runs, e.g. "-o out", the default: the report goes to files as in bench-btt.sh),
# BTT_BEFORE (another btt, e.g. an older build: its export and gzip export run in the same
# rounds, for a before/after comparison).
#
# Each export is written to a new file: the one of the round before is removed first,
# outside the timing. Rewriting a file of 180 MB costs ext4 0.028 s to truncate it and, at
# close, 0.057 s to flush the new one (auto_da_alloc: a file truncated and written again is
# allocated and written back at close; strace -T): 0.085 s, a quarter of btt's own run, which
# the filesystem charges for replacing the file, not the export for writing it (btt.1).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
BTT=${BTT:-$TOP/btt/btt}
BTT_BEFORE=${BTT_BEFORE:-}
RUNS=${RUNS:-5}
BTT_ARGS=${BTT_ARGS:--o out}
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}
W=$TOP/bench/out/perfetto
TIME=/usr/bin/time

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$BTT" ] || die "'$BTT' not found; run 'make' first"
[ -z "$BTT_BEFORE" ] || [ -x "$BTT_BEFORE" ] || die "'$BTT_BEFORE' not found"
[ -x "$TIME" ] || die "/usr/bin/time missing (apt-get install time)"
mkdir -p "$W"
TRACE=${TRACE:-}
if [ -z "$TRACE" ]; then
	TRACE=$W/large-perf.bin
	if [ ! -s "$TRACE" ]; then
		[ -f "$TRACE_TARXZ" ] || die "no trace: '$TRACE_TARXZ' is missing (or give TRACE=merged.bin)"
		echo "bench: merging $TRACE_TARXZ into $TRACE" >&2
		(cd "$W" && tar -xJf "$TOP/$TRACE_TARXZ" &&
			"$TOP/blkparse" -i large-perf -d large-perf.bin -O >/dev/null &&
			rm -f large-perf.blktrace.*) || die "cannot merge the trace"
	fi
fi

# one TAG BTT ARGS...: one run, its "wall cpu" line appended to $W/runs.TAG
one() {
	local tag=$1 btt=$2 w u s a
	shift 2
	for a in "$@"; do
		case $a in --perfetto=*) rm -f "${a#--perfetto=}" ;; esac
	done
	# shellcheck disable=SC2086 # BTT_ARGS is a list of options
	(cd "$W" && "$TIME" -f '%e %U %S' -o "time.$tag" "$btt" -i "$TRACE" $BTT_ARGS "$@" \
		>/dev/null 2>"err.$tag") || die "$btt $* failed: $(head -n 3 "$W/err.$tag")"
	read -r w u s <"$W/time.$tag"
	awk -v w="$w" -v u="$u" -v s="$s" 'BEGIN { printf "%s %.2f\n", w, u + s }' >>"$W/runs.$tag"
}

tags="alone export gzip"
[ -n "$BTT_BEFORE" ] && tags="$tags before-export before-gzip"
for t in $tags; do
	rm -f "$W/runs.$t"
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < RUNS; i++)); do
	one alone "$BTT"
	one export "$BTT" --perfetto="$W/large-perf.pftrace"
	one gzip "$BTT" --perfetto="$W/large-perf.pftrace.gz"
	if [ -n "$BTT_BEFORE" ]; then
		one before-export "$BTT_BEFORE" --perfetto="$W/before.pftrace"
		one before-gzip "$BTT_BEFORE" --perfetto="$W/before.pftrace.gz"
	fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# stats TAG: "median-wall median-cpu best-wall best-cpu" (best: the run of the least wall)
stats() {
	awk '{ w[NR] = $1; c[NR] = $2 }
	function med(a, n,   i, j, t) {
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		b = 1
		for (i = 2; i <= NR; i++)
			if (w[i] < w[b]) b = i
		bw = w[b]; bc = c[b]
		printf "%s %s %s %s\n", med(w, NR), med(c, NR), bw, bc
	}' "$W/runs.$1"
}

tb=$(stat -L -c %s "$TRACE")
pb=$(stat -c %s "$W/large-perf.pftrace")
gb=$(stat -c %s "$W/large-perf.pftrace.gz")
# records of the trace (blkparse's count) and I/Os drawn (Q2C N of btt's report)
recs=$("$TOP/blkparse" -i "$TRACE" 2>/dev/null | sed -n 's/^Events (.*): \([0-9]*\) entries$/\1/p' | tail -n 1)
ios=$(awk '$1 ~ /^Q2C(dm)?$/ { n += $5 } END { print n + 0 }' "$W/out.avg" 2>/dev/null)
printf 'trace %s: %d bytes, %d records, %d I/Os drawn; %d interleaved rounds\n' "$TRACE" "$tb" \
	"${recs:-0}" "${ios:-0}" "$RUNS"
printf 'load average: %s before, %s after (%d cores)\n' "$load0" "$load1" "$(nproc)"
printf '%-26s %8s %8s %8s %8s   %s\n' "median (best)" "wall s" "CPU s" "x wall" "x CPU" ""
read -r maw mac baw bac < <(stats alone)
for t in $tags; do
	read -r mw mc bw bc < <(stats "$t")
	case $t in
	alone) name="btt alone" ;;
	export) name="btt --perfetto" ;;
	gzip) name="btt --perfetto=FILE.gz" ;;
	before-export) name="before: --perfetto" ;;
	before-gzip) name="before: --perfetto=.gz" ;;
	esac
	awk -v n="$name" -v mw="$mw" -v mc="$mc" -v bw="$bw" -v bc="$bc" -v maw="$maw" \
		-v mac="$mac" -v baw="$baw" -v bac="$bac" -v t="$t" 'BEGIN {
		printf "%-26s %8.2f %8.2f %8.2f %8.2f%s\n", n, mw, mc, mw / maw, mc / mac,
			t == "export" ? "   (target: at most 2x)" : ""
		printf "%-26s %8.2f %8.2f %8.2f %8.2f\n", "  best", bw, bc, bw / baw, bc / bac
	}'
done
awk -v tb="$tb" -v pb="$pb" -v gb="$gb" -v recs="${recs:-0}" -v ios="${ios:-0}" 'BEGIN {
	printf "export: %d bytes, %.3fx the merged trace (target: at most 1x), %.1f bytes per record, %.1f per I/O\n",
		pb, pb / tb, recs ? pb / recs : 0, ios ? pb / ios : 0
	printf "gzip:   %d bytes, %.3fx the merged trace, %.1f bytes per record\n", gb, gb / tb, recs ? gb / recs : 0
}'
if [ -n "$BTT_BEFORE" ]; then
	if cmp -s "$W/before.pftrace" "$W/large-perf.pftrace"; then
		echo "before and after: the same export, byte for byte"
	else
		echo "before and after: the exports differ ($(stat -c %s "$W/before.pftrace") bytes before)"
	fi
fi
