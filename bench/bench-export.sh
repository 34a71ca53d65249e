#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet export (include/blk-export/export.h) into a local ClickHouse server: rows per second and
# bytes per row, by gzip level, as tests/gen/exportgen sends them (one synchronous INSERT per
# batch, the server on the same machine, as tests/clickhouse.sh starts it); the same rows to
# tsv:DIR; what the server stores per row. Then, when ../shared/traces/large-perf is there,
# btt itself on its merged file: the text report's time, and btt --export (the same report and
# every I/O) into the server, into tsv:DIR and from a pipe (btt -i -), in interleaved rounds:
# medians of the wall time, btt's CPU, the server's CPU, rows per second, bytes per I/O, the
# time against the report's, peak RSS (/usr/bin/time).
#
#   bench/bench-export.sh
#
# Environment: ROWS (default 1000000), RUNS (best of, for exportgen; rounds, for btt; default 3),
# LEVELS (default "0 1 6"; "" skips exportgen), BATCH_ROWS (default: the library's 65536),
# BTT (default btt/btt), BTT_BASE (another btt, e.g. of an earlier commit, run interleaved with
# BTT on large-perf), TRACE_TARXZ (large-perf's archive) or TRACE_DIR (a directory holding its
# per-CPU files, used when the archive is absent).
#
# The goal of issue 38 is the "client" case: btt's text report followed by the engine's own
# client loading the same rows (clickhouse-client --query "INSERT INTO io FORMAT TSVWithNames"
# < io.tsv, io.tsv written by btt --export=tsv:DIR in the same round); the "goal" line gives the
# export's wall time over (report + client), the median of that ratio within each round, and
# btt's CPU per exported I/O beyond the report's.
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
GEN=$TOP/tests/gen/exportgen
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
LEVELS=${LEVELS-0 1 6}
BATCH_ROWS=${BATCH_ROWS:-}
BTT=${BTT:-$TOP/btt/btt}
BTT_BASE=${BTT_BASE:-}
W=$TOP/bench/out/export
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}
TRACE_DIR=${TRACE_DIR:-}

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

if [ -n "$LEVELS" ]; then
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
fi

# btt on large-perf's merged file: the text report, and btt --export (the same report and every
# I/O) into the server, into tsv:DIR and from a pipe. The runs are interleaved (round r runs
# each case once, of each binary when BTT_BASE names a second btt to compare with) and each
# figure is the median over the rounds: wall time, btt's CPU (user + system), the server's CPU
# over the run (utime + stime of the clickhouse-server process), rows/s, bytes per I/O, peak
# RSS. The table is emptied after each export into the server, so that its merges do not land
# in the next run.
if { [ -f "$TRACE_TARXZ" ] || [ -d "$TRACE_DIR" ]; } && [ -x "$BTT" ]; then
	if [ -f "$TRACE_TARXZ" ]; then
		tar -xJf "$TRACE_TARXZ" -C "$W" || die "cannot unpack $TRACE_TARXZ"
	else
		cp "$TRACE_DIR"/*.blktrace.[0-9]* "$W"/ || die "no per-CPU files in '$TRACE_DIR'"
	fi
	base=$(ls "$W"/*.blktrace.0 | head -n1)
	base=${base%.blktrace.0}
	"$TOP/blkparse" -i "$base" -d "$W/merged.bin" -O >/dev/null 2>&1 || die "blkparse -d failed"
	TIME=$(command -v /usr/bin/time) || die "no /usr/bin/time"
	tck=$(getconf CLK_TCK)
	srv_cpu() { awk '{ print $14 + $15 }' "/proc/$CH_PID/stat" 2>/dev/null || echo 0; }
	printf '#!/bin/sh\nexec clickhouse-client --host 127.0.0.1 --port %s --database b --query "INSERT INTO io FORMAT TSVWithNames"\n' \
		"$CH_TCP" >"$W/client.sh" && chmod +x "$W/client.sh"
	bins="new"
	[ -n "$BTT_BASE" ] && bins="base new"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	: >"$W/runs"
	for r in $(seq 1 "$RUNS"); do
		for bin in $bins; do
			exe=$BTT
			[ $bin = base ] && exe=$BTT_BASE
			for how in report clickhouse tsv client pipe; do
				case $how in
				report) cmd="$exe -i merged.bin" ;;
				clickhouse) cmd="$exe -i merged.bin --export=$URL --host=bench-$bin-$r" ;;
				tsv) cmd="$exe -i merged.bin --export=tsv:btt-tsv --host=bench-btt" ;;
				client) cmd=$W/client.sh ;;
				pipe) cmd="$exe -i - --export=$URL --host=bench-pipe-$bin-$r" ;;
				esac
				in=/dev/null
				[ $how = pipe ] && in=merged.bin
				[ $how = client ] && in=btt-tsv/io.tsv
				s0=$(srv_cpu)
				t0=$(date +%s.%N)
				(cd "$W" && cat "$in" | $TIME -f '%M %U %S' -o rss $cmd >btt-x.out 2>x.err) ||
					die "$bin $how failed: $(cat "$W/x.err")"
				t1=$(date +%s.%N)
				s1=$(srv_cpu)
				rows=$(sed -n 's/.*exported \([0-9]*\) I\/Os.*/\1/p' "$W/x.err")
				sent=$(sed -n 's/.* \([0-9]*\) bytes sent$/\1/p' "$W/x.err")
				[ $how = report ] && rows=$(awk '$1 == "Q2C" { print $NF; exit }' "$W/btt-x.out") && sent=0
				[ $how = tsv ] && sent=$(wc -c <"$W/btt-tsv/io.tsv")
				[ $how = client ] && rows=$(($(wc -l <"$W/btt-tsv/io.tsv") - 1)) && sent=$(wc -c <"$W/btt-tsv/io.tsv")
				echo "$bin $how $r $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(tail -n1 "$W/rss") $(((s1 - s0))) ${rows:-0} ${sent:-0} $(cut -d' ' -f1 /proc/loadavg)" >>"$W/runs"
				case $how in clickhouse | client | pipe)
					ch_client -q "TRUNCATE TABLE b.io" >/dev/null 2>&1 ;;
				esac
			done
		done
	done
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS interleaved rounds (raw runs: $W/runs)"
	printf '%-5s %-10s %8s %8s %8s %10s %9s %10s %8s\n' btt case wall/s btt-cpu srv-cpu rows/s "B/I/O" "x report" "RSS/KiB"
	for bin in $bins; do
		rep=""
		for how in report clickhouse tsv client pipe; do
			awk -v b=$bin -v h=$how -v t="$tck" -v rep="$rep" '
			function med(a, n,   i, j, x) {
				for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			$1 == b && $2 == h { n++; w[n] = $4; c[n] = $6 + $7; s[n] = $8 / t; m[n] = $5; rows = $9; by = $10 }
			END {
				mw = med(w, n); printf "%-5s %-10s %8.3f %8.2f %8.2f %10.0f %9.1f %10s %8d\n", b, h, mw,
					med(c, n), med(s, n), rows / mw, rows ? by / rows : 0,
					rep == "" ? "-" : sprintf("%.2fx", mw / rep), med(m, n)
			}' "$W/runs"
			[ $how = report ] && rep=$(awk -v b=$bin '$1 == b && $2 == "report" { print $4 }' "$W/runs" | sort -n | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		done
	done
	# the goal: the export against the report plus the engine's client, within each round
	for bin in $bins; do
		awk -v b=$bin -v t="$tck" '
		$1 == b && $2 == "report" { rep[$3] = $4; rc[$3] = $6 + $7 }
		$1 == b && $2 == "client" { cli[$3] = $4; cs[$3] = $8 / t }
		$1 == b && $2 == "clickhouse" { ex[$3] = $4; ec[$3] = $6 + $7; es[$3] = $8 / t; rows = $9; if ($3 > m) m = $3 }
		function med(a, k,   i, j, x) {
			for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		END {
			for (r = 1; r <= m; r++) if ((r in rep) && (r in cli) && (r in ex)) {
				k++; q[k] = ex[r] / (rep[r] + cli[r]); x[k] = rows ? (ec[r] - rc[r]) / rows * 1e6 : 0
				s1[k] = es[r]; s2[k] = cs[r]; l = l sprintf(" %.2f", q[k])
			}
			if (k) printf "goal %-5s export / (report + clickhouse-client): %.2fx (rounds:%s); btt CPU beyond the report %.2f us per exported I/O; server CPU %.2f s (export) against %.2f s (client)\n",
				b, med(q, k), l, med(x, k), med(s1, k), med(s2, k)
		}' "$W/runs"
	done
	# the load drifts between rounds: the ratio within each round, its median
	[ -n "$BTT_BASE" ] && for how in report clickhouse tsv client pipe; do
		awk -v h=$how '
		$2 == h && $1 == "base" { b[$3] = $4; bc[$3] = $6 + $7 }
		$2 == h && $1 == "new" { n[$3] = $4; nc[$3] = $6 + $7; if ($3 > m) m = $3 }
		function med(a, k,   i, j, x) {
			for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		END {
			for (r = 1; r <= m; r++) if ((r in n) && (r in b)) { k++; w[k] = n[r] / b[r]; c[k] = bc[r] ? nc[r] / bc[r] : 0; l = l sprintf(" %.2f", n[r] / b[r]) }
			printf "new/base %-10s wall %.2f (rounds:%s), btt CPU %.2f: medians of the ratios within a round\n", h, med(w, k), l, med(c, k)
		}' "$W/runs"
	done
fi
