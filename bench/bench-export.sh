#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet export (include/blk/export.h) into a local ClickHouse server: rows per second and
# bytes per row, by gzip level, as tests/gen/exportgen sends them (one synchronous INSERT per
# batch, the server on the same machine, as tests/clickhouse.sh starts it); the same rows to
# tsv:DIR; what the server stores per row. Then, when ../shared/traces/large-perf is there,
# btt itself on its merged file: the text report's time, and btt --export (the same report and
# every I/O) into the server, into tsv:DIR and from a pipe (btt -i -): rows per second, bytes
# per I/O, the time against the report's, peak RSS (/usr/bin/time).
#
#   bench/bench-export.sh
#
# Environment: ROWS (default 1000000), RUNS (best of, default 3), LEVELS (default "0 1 6"),
# BATCH_ROWS (default: the library's 65536).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
GEN=$TOP/tests/gen/exportgen
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
LEVELS=${LEVELS:-0 1 6}
BATCH_ROWS=${BATCH_ROWS:-}
W=$TOP/bench/out/export
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$GEN" ] || die "'$GEN' not found; run 'make' first"
rm -rf "$W"
mkdir -p "$W"
. "$TOP/tests/clickhouse.sh"
ch_start || die "no ClickHouse server: $CH_SKIP"
ch_client -q "CREATE DATABASE b" || die "cannot create a database"
"$GEN" --schema | ch_client --database b --multiquery || die "the DDL does not load"
URL="clickhouse://127.0.0.1:$CH_HTTP/b"
stat() { sed -n "s/.*\b$2=\([0-9.]*\).*/\1/p" "$1"; }
batch=${BATCH_ROWS:+--batch-rows $BATCH_ROWS}

echo "export of $ROWS io rows, best of $RUNS, $(nproc) CPUs, server on the same machine"
printf '%-12s %12s %14s %14s %10s\n' dest rows/s "raw B/row" "sent B/row" seconds
for level in $LEVELS; do
	best=""
	for r in $(seq 1 "$RUNS"); do
		"$GEN" --rows "$ROWS" --host "bench-$level-$r" --gzip "$level" $batch --stats "$URL" \
			2>"$W/gz$level.$r.err" || die "export failed: $(cat "$W/gz$level.$r.err")"
		s=$(stat "$W/gz$level.$r.err" seconds)
		if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$s
			cp "$W/gz$level.$r.err" "$W/gz$level.best"
		fi
	done
	f=$W/gz$level.best
	awk -v n="$ROWS" -v s="$best" -v raw="$(stat "$f" bytes_raw)" -v sent="$(stat "$f" bytes_sent)" \
		-v l="$level" 'BEGIN { printf "%-12s %12.0f %14.1f %14.1f %10.3f\n",
			"gzip " l, n / s, raw / n, sent / n, s }'
done
best=""
for r in $(seq 1 "$RUNS"); do
	"$GEN" --rows "$ROWS" --stats "tsv:$W/tsv" 2>"$W/tsv.$r.err" || die "tsv export failed"
	s=$(stat "$W/tsv.$r.err" seconds)
	if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
		best=$s
	fi
done
awk -v n="$ROWS" -v s="$best" -v raw="$(stat "$W/tsv.1.err" bytes_raw)" \
	'BEGIN { printf "%-12s %12.0f %14.1f %14s %10.3f\n", "tsv:DIR", n / s, raw / n, "-", s }'
ch_client -q "OPTIMIZE TABLE b.io FINAL" >/dev/null 2>&1
ch_client -q "SELECT 'stored by the server: ' || toString(round(sum(data_compressed_bytes) / sum(rows), 1))
	|| ' B/row compressed, ' || toString(round(sum(data_uncompressed_bytes) / sum(rows), 1))
	|| ' B/row uncompressed (' || toString(sum(rows)) || ' rows)'
	FROM system.parts WHERE database = 'b' AND table = 'io' AND active"

# btt's text report of large-perf, for scale
if [ -f "$TRACE_TARXZ" ] && [ -x "$TOP/btt/btt" ]; then
	tar -xJf "$TRACE_TARXZ" -C "$W" || die "cannot unpack $TRACE_TARXZ"
	base=$(ls "$W"/*.blktrace.0 | head -n1)
	base=${base%.blktrace.0}
	"$TOP/blkparse" -i "$base" -d "$W/merged.bin" -O >/dev/null 2>&1 || die "blkparse -d failed"
	TIME=$(command -v /usr/bin/time || true)
	best=""
	for r in $(seq 1 "$RUNS"); do
		t0=$(date +%s.%N)
		(cd "$W" && ${TIME:+$TIME -f '%U %S' -o cpu.report.$r} "$TOP/btt/btt" -i merged.bin >btt.out 2>/dev/null) ||
			die "btt failed"
		s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
		if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$s
		fi
	done
	n=$(awk '$1 == "Q2C" { print $NF; exit }' "$W/btt.out")
	cpu=$(cat "$W"/cpu.report.* 2>/dev/null | awk '{ c = $1 + $2; if (!m || c < m) m = c } END { print m + 0 }')
	awk -v n="$n" -v s="$best" -v c="$cpu" 'BEGIN { printf "btt -i large-perf (text report): %d I/Os (Q2C N) in %.3f s: %.0f I/Os per second, btt CPU %.2f s (least)\n", n, s, n / s, c }'
	report=$best
	# btt --export: the same report, and every I/O into the server (a new host each run, so
	# that each run sends), into tsv:DIR, and from a pipe; wall time, peak memory
	for how in clickhouse tsv pipe; do
		best=""
		for r in $(seq 1 "$RUNS"); do
			case $how in
			clickhouse) cmd="$TOP/btt/btt -i merged.bin --export=$URL --host=bench-btt-$r" ;;
			tsv) cmd="$TOP/btt/btt -i merged.bin --export=tsv:btt-tsv --host=bench-btt" ;;
			pipe) cmd="$TOP/btt/btt -i - --export=$URL --host=bench-pipe-$r" ;;
			esac
			t0=$(date +%s.%N)
			if [ $how = pipe ]; then
				(cd "$W" && cat merged.bin | ${TIME:+$TIME -f '%M %U %S' -o rss.$how.$r} $cmd >btt-x.out 2>"x.$how.$r.err") ||
					die "btt --export failed: $(cat "$W/x.$how.$r.err")"
			else
				(cd "$W" && ${TIME:+$TIME -f '%M %U %S' -o rss.$how.$r} $cmd >btt-x.out 2>"x.$how.$r.err") ||
					die "btt --export failed: $(cat "$W/x.$how.$r.err")"
			fi
			s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
			if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
				best=$s
				cp "$W/x.$how.$r.err" "$W/x.$how.best"
				[ -n "$TIME" ] && cp "$W/rss.$how.$r" "$W/rss.$how.best"
			fi
		done
		rows=$(sed -n 's/.*exported \([0-9]*\) I\/Os.*/\1/p' "$W/x.$how.best")
		sent=$(sed -n 's/.* \([0-9]*\) bytes sent$/\1/p' "$W/x.$how.best")
		[ $how = tsv ] && sent=$(wc -c <"$W/btt-tsv/io.tsv")
		rss=$([ -n "$TIME" ] && tail -n1 "$W/rss.$how.best" || echo "? ? ?")
		awk -v h="$how" -v n="$rows" -v s="$best" -v b="$sent" -v r="$report" -v m="$rss" 'BEGIN {
			split(m, f, " ")
			printf "btt -i large-perf --export (%s): %d rows in %.3f s: %.0f rows/s, %.1f bytes per I/O %s, %.2fx the text report'"'"'s time, btt CPU %.2f s, peak RSS %s KiB\n",
				h, n, s, n / s, b / n, h == "tsv" ? "written" : "sent", s / r, f[2] + f[3], f[1] }'
	done
fi
