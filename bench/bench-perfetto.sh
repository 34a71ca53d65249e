#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# btt --perfetto against btt alone on the same merged trace (issue 14): best-of-RUNS wall and
# CPU seconds of each, their ratio (target: at most 2x), the export's size against the merged
# binary trace (target: at most 1x), its bytes per trace record and per I/O, and the same for
# the gzip export.
#
#   bench/bench-perfetto.sh
#
# Trace: ../shared/traces/large-perf (merged once with our blkparse -d into bench/out/), or
# TRACE=merged.bin. Environment: RUNS (default 5), BTT (default btt/btt), BTT_ARGS (options
# for both runs, e.g. "-o out", the default: the report goes to files as in bench-btt.sh).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
BTT=${BTT:-$TOP/btt/btt}
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

# best TAG ARGS...: sets WALL and CPU of the fastest of $RUNS runs
best() {
	local tag=$1 bw='' bc='' i w u s
	shift
	for ((i = 0; i < RUNS; i++)); do
		# shellcheck disable=SC2086 # BTT_ARGS is a list of options
		(cd "$W" && "$TIME" -f '%e %U %S' -o "time.$tag" "$BTT" -i "$TRACE" $BTT_ARGS "$@" \
			>/dev/null 2>"err.$tag") || die "btt $* failed: $(head -n 3 "$W/err.$tag")"
		read -r w u s <"$W/time.$tag"
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then
			bw=$w
			bc=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		fi
	done
	WALL=$bw
	CPU=$bc
}

# interleaved, so that the load of the machine weighs on both alike
best alone
wa=$WALL ca=$CPU
best export --perfetto="$W/large-perf.pftrace"
we=$WALL ce=$CPU
best gzip --perfetto="$W/large-perf.pftrace.gz"
wg=$WALL cg=$CPU

tb=$(stat -L -c %s "$TRACE")
pb=$(stat -c %s "$W/large-perf.pftrace")
gb=$(stat -c %s "$W/large-perf.pftrace.gz")
# records of the trace (blkparse's count) and I/Os drawn (Q2C N of btt's report)
recs=$("$TOP/blkparse" -i "$TRACE" 2>/dev/null | sed -n 's/^Events (.*): \([0-9]*\) entries$/\1/p' | tail -n 1)
ios=$(awk '$1 ~ /^Q2C(dm)?$/ { n += $5 } END { print n + 0 }' "$W/out.avg" 2>/dev/null)
awk -v wa="$wa" -v ca="$ca" -v we="$we" -v ce="$ce" -v wg="$wg" -v cg="$cg" -v tb="$tb" \
	-v pb="$pb" -v gb="$gb" -v recs="${recs:-0}" -v ios="${ios:-0}" -v runs="$RUNS" -v trace="$TRACE" 'BEGIN {
	printf "trace %s: %d bytes, %d records, %d I/Os drawn; best of %d runs\n", trace, tb, recs, ios, runs
	printf "%-26s %8s %8s %8s %8s\n", "", "wall s", "CPU s", "x wall", "x CPU"
	printf "%-26s %8.2f %8.2f %8s %8s\n", "btt alone", wa, ca, "1.00", "1.00"
	printf "%-26s %8.2f %8.2f %8.2f %8.2f  (target: at most 2x)\n", "btt --perfetto", we, ce, we / wa, ce / ca
	printf "%-26s %8.2f %8.2f %8.2f %8.2f\n", "btt --perfetto=FILE.gz", wg, cg, wg / wa, cg / ca
	printf "export: %d bytes, %.3fx the merged trace (target: at most 1x), %.1f bytes per record, %.1f per I/O\n",
		pb, pb / tb, recs ? pb / recs : 0, ios ? pb / ios : 0
	printf "gzip:   %d bytes, %.3fx the merged trace, %.1f bytes per record\n", gb, gb / tb, recs ? gb / recs : 0
}'
