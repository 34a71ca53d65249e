#!/bin/bash
# btt --export (issues 16, 36): every bio of the trace exported row by row, checked against
# the bios worked out from the trace's records without btt (tests/gen/bioref.py), into a
# real ClickHouse 18.16 server (tests/clickhouse.sh).
# - tsv:DIR: every row of three bundled traces (split, merged and remapped bios among them)
#   against the records: device, sector, size, pid, the Q, first D and last C on one
#   wall-clock base, pieces, and the completions adding up to the device's C events; the
#   base is blkparse's %z; the same rows from a pipe, and again; -D; a trace without its
#   timestamp note is dated at the file's mtime, and btt says so;
# - the three traces as three hosts into a Distributed table over two shards: per host and
#   device, count() and min/avg/max of Q2C and D2C = every bio's from the records, and
#   quantilesExact of both = btt's --percentiles within the histogram's stated error;
# - the server killed -9 in the middle of an export read from a pipe and restarted: the
#   export resumes or fails loudly, and after a rerun no row is missing or doubled;
# - a malformed destination, an unreachable server, a missing table, a rejected insert:
#   one error line each (and a hint), status 1.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/clickhouse.sh"

BTT="$TOP/btt/btt"
CHK="$TOP/tests/gen/bttexport.py"
# every bio of a trace, worked out from its records without btt (issue 36)
bioref() { PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/bioref.py" "$@"; }
if ! command -v python3 >/dev/null; then
	skip "btt --export (python3 missing)"
	exit 0
fi
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
w="$OUT/t1310"
rm -rf "$w"
mkdir -p "$w"
TRACES="ext4-mixed multi-dev part-remap"
declare -A BIN HOST
for t in $TRACES nullb-randrw; do BIN[$t]="$(unpack $t)/$t.bin"; done
HOST[ext4-mixed]=h-ext4
HOST[multi-dev]=h-multi
HOST[part-remap]=h-part

# one_error WHAT FILE PATTERN: one "btt:" line matching PATTERN (grep -E), a hint at most
# (besides the classic report's note on the I/Os it leaves out, which goes first)
one_error() {
	local n
	sed -i '/^btt: note: /d' "$2"
	n=$(grep -c '^btt: ' "$2")
	if [ "$n" = 1 ] && grep -qE "$3" "$2" && [ "$(wc -l <"$2")" -le 2 ]; then
		pass "$1: one error line: $(head -n1 "$2" | cut -c1-160)"
	else
		fail "$1: expected one error line matching '$3', got:"
		head -n 4 "$2" | sed 's/^/    /'
	fi
}

# ---- tsv:DIR: the rows against btt's per-IO dump ----
for t in $TRACES; do
	if $BTT -i "${BIN[$t]}" -A --percentiles -p "$w/$t.pio" --export="tsv:$w/$t" \
		--host="${HOST[$t]}" >"$w/$t.rep" 2>"$w/$t.err"; then
		# per device and stage: N, min, avg, max of every bio from the records, then
		# btt --percentiles' values (its N must be the same)
		bioref stats "${BIN[$t]}" | LC_ALL=C sort >"$w/$t.stats"
		python3 "$CHK" pcts "$w/$t.rep" | LC_ALL=C sort >"$w/$t.pcts"
		awk 'NR == FNR { k = $1 " " $2; n[k] = $3; $1 = $2 = $3 = ""; p[k] = $0; next }
			{ k = $1 " " $2; print $0, (n[k] == $3 ? p[k] : "N-" n[k]) }' \
			"$w/$t.pcts" "$w/$t.stats" | tr -s ' ' >"$w/$t.want"
		! grep -q N- "$w/$t.want" && [ -s "$w/$t.want" ] &&
			pass "tsv: $t: btt --percentiles' N is every bio's, per device and stage" ||
			fail "tsv: $t: percentiles' N against the records': $(grep N- "$w/$t.want" | head -2)"
		res=$(bioref export "${BIN[$t]}" "$w/$t/io.tsv")
		[ "${res%% *}" = ok ] && pass "tsv: $t: one row per bio that completed, as the records give them ($(echo "$res" | cut -d' ' -f2) rows)" ||
			fail "tsv: $t: $res"
		echo "$res" | cut -d' ' -f3 >"$w/$t.base"
		grep -q "^btt: exported $(echo "$res" | cut -d' ' -f2) I/Os and 0 I/O waits of host '${HOST[$t]}' to 'tsv:$w/$t'" "$w/$t.err" &&
			[ "$(grep -vc '^btt: note: the report.s latencies leave out' "$w/$t.err")" = 1 ] &&
			pass "tsv: $t: one line of counts on stderr (and the report's note)" ||
			fail "tsv: $t: stderr: $(head -c 300 "$w/$t.err")"
	else
		fail "tsv: btt --export on $t: status $?: $(head -c 300 "$w/$t.err")"
	fi
done
xz -dc "$TOP/tests/data/ext4-mixed/ext4-mixed.per-io.txt.xz" >"$w/ref.pio"
check_same "tsv: ext4-mixed: with --export, btt -p still dumps what the reference btt does" "$w/ref.pio" "$w/ext4-mixed.pio"
# the base is the wall clock blkparse prints for the first queue of the trace
t=multi-dev
q=$(awk -F'\t' 'NR == 2 { print $8, $10 }' "$w/$t/io.tsv")
z=$($BLKPARSE -i "${BIN[$t]}" -f '%a %S %z\n' 2>/dev/null | awk -v s="${q% *}" '$1 == "Q" && $2 == s { print $3; exit }')
got=$(TZ=UTC date -d "@$((${q#* } / 1000000000))" +%H:%M:%S).$(printf '%09d' $((${q#* } % 1000000000)) | cut -c1-6)
[ -n "$z" ] && [ "$got" = "$z" ] && pass "tsv: the first row's q_ns is blkparse's %z of its Q ($z)" ||
	fail "tsv: first row q_ns $got, blkparse %z '$z'"
# from a pipe, and again: the same rows, the same ids
if cat "${BIN[$t]}" | $BTT -i - --export="tsv:$w/pipe" --host="${HOST[$t]}" >/dev/null 2>"$w/pipe.err"; then
	check_same "tsv: btt -i - from a pipe: the same rows and ids" "$w/$t/io.tsv" "$w/pipe/io.tsv"
else
	fail "tsv: btt -i - from a pipe: $(head -c 300 "$w/pipe.err")"
fi
$BTT -i "${BIN[$t]}" --export="tsv:$w/again" --host="${HOST[$t]}" >/dev/null 2>&1
check_same "tsv: exported again: the same rows and ids" "$w/$t/io.tsv" "$w/again/io.tsv"
$BTT -i "${BIN[$t]}" -D 252,1 --export="tsv:$w/dev" >/dev/null 2>&1
got=$(tail -n +2 "$w/dev/io.tsv" | cut -f2 | sort | uniq -c | tr -s ' ')
[ "$got" = " 7997 252,1" ] && pass "tsv: -D 252,1: the rows of that device only (7997)" ||
	fail "tsv: -D 252,1: $got"
printf 'nullb0 252,0\nnullb1 252,1\n' >"$w/devmap"
$BTT -i "${BIN[$t]}" -M "$w/devmap" --export="tsv:$w/names" >/dev/null 2>&1
got=$(tail -n +2 "$w/names/io.tsv" | cut -f2-4 | sort | uniq -c | tr -s ' \t' ' ' | tr '\n' ';')
[ "$got" = " 7085 nullb0 252 0; 7997 nullb1 252 1;" ] && pass "tsv: -M: the device column has the map's names" ||
	fail "tsv: -M: $got"
# the host label: the hostname, or the client's address in a directory of the network server
$BTT -i "${BIN[part-remap]}" --export="tsv:$w/hn" >/dev/null 2>&1
got=$(tail -n +2 "$w/hn/io.tsv" | cut -f1 | sort -u)
[ "$got" = "$(hostname)" ] && pass "tsv: without --host the rows' host is the hostname ($got)" ||
	fail "tsv: default host '$got', hostname '$(hostname)'"
nd="$w/net/10.0.0.7-2025-12-02-10:00:00"
mkdir -p "$nd" && cp "${BIN[part-remap]}" "$nd/"
(cd "$nd" && $BTT -i part-remap.bin --export="tsv:$w/hnet" >/dev/null 2>&1)
got=$(tail -n +2 "$w/hnet/io.tsv" | cut -f1 | sort -u)
[ "$got" = 10.0.0.7 ] && pass "tsv: a trace in the network server's ADDR-DATE directory: host ADDR ($got)" ||
	fail "tsv: host of a trace in $nd: '$got'"
# no timestamp note: dated at the file's modification time, and said
python3 -c '
import sys
sys.path.insert(0, sys.argv[3])
import blkrec
d = open(sys.argv[1], "rb").read()
out = b"".join(d[r.offset:r.offset + (48 if r.version == 7 else 64) + len(r.pdu)]
               for r in blkrec.records(d)
               if (r.action & 0xffffffff) != 0x04000001)
open(sys.argv[2], "wb").write(out)' "${BIN[ext4-mixed]}" "$w/nots.bin" "$TOP/tests/gen"
touch -d '2025-12-02 10:00:00.5 UTC' "$w/nots.bin"
$BTT -i "$w/nots.bin" -p "$w/nots.pio" --export="tsv:$w/nots" >/dev/null 2>"$w/nots.err"
res=$(bioref export "$w/nots.bin" "$w/nots/io.tsv")
if grep -q "^btt: warning: '$w/nots.bin' has no timestamp note (TN_TIMESTAMP): the export dates trace time 0 at 2025-12-02 10:00:00.500000000 UTC, the file's modification time" "$w/nots.err" &&
	[ "$res" = "ok 1129 1764669600500000000" ]; then
	pass "tsv: no timestamp note: said on stderr, rows dated at the file's mtime"
else
	fail "tsv: no timestamp note: '$res' / $(head -c 300 "$w/nots.err")"
fi

# I/O waits: one iowait row per wait note, as blkparse --iowait lists them (t0560's traces:
# tests/gen/iowait.py synth adds a wait for every second completed read)
IWTRACES="nullb-randrw multi-dev"
declare -A IWBIN IWSUM
for t in $IWTRACES; do
	d=$(unpack "$t") q="$w/iw-$t"
	mkdir -p "$q"
	names=$(cd "$d" && ls *.blktrace.0 | sed 's/\.blktrace\.0$//')
	k=0
	for n in $names; do
		cp "$d/$n".blktrace.* "$q/"
		k=$((k + $(python3 -B "$TOP/tests/gen/iowait.py" synth "$q" "$n" --every 2)))
	done
	args=$(for n in $names; do printf -- '-i %s ' "$n"; done)
	(cd "$q" && $BLKPARSE $args -d merged.bin -O >/dev/null 2>&1 && $BLKPARSE $args --iowait >bp.txt 2>/dev/null)
	IWBIN[$t]="$q/merged.bin"
	IWSUM[$t]=$(python3 "$CHK" iowsum "$q/bp.txt")
	if ! $BTT -i "$q/merged.bin" -p "$q/pio" --export="tsv:$q/x" --host="h-iw-$t" >/dev/null 2>"$q/err"; then
		fail "tsv: I/O waits: btt --export on $t: $(head -c 300 "$q/err")"
		continue
	fi
	res=$(bioref export "$q/merged.bin" "$q/x/io.tsv")
	[ "${res%% *}" = ok ] || fail "tsv: I/O waits: $t: the io rows: $res"
	if r=$(python3 "$CHK" iowait "$q/bp.txt" "${res##* }" "h-iw-$t" "$q/x/iowait.tsv") &&
		[ "${r#ok }" = "${IWSUM[$t]}" ] && [ "${IWSUM[$t]%% *}" = "$k" ] && [ "$k" -gt 0 ]; then
		pass "tsv: $t: one iowait row per wait of blkparse --iowait, every column ($r)"
	else
		fail "tsv: $t: iowait rows: $r (blkparse: ${IWSUM[$t]}, made $k)"
	fi
	grep -q "^btt: exported $(echo "$res" | cut -d' ' -f2) I/Os and $k I/O waits of host 'h-iw-$t'" "$q/err" &&
		pass "tsv: $t: the counts line names the $k I/O waits" || fail "tsv: $t: stderr: $(head -c 300 "$q/err")"
done
# the device column: io='s device, by btt's name
t=multi-dev q="$w/iw-$t"
got=$(tail -n +2 "$q/x/iowait.tsv" | cut -f2-4 | sort | uniq -c | tr -s ' \t' ' ' | tr '\n' ';')
want=$(grep -o ' io=[0-9,]*$' "$q/bp.txt" | sed 's/ io=//' | awk -F, '{ print $0, $1, $2 }' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ -n "$want" ] && [ "$got" = "$want" ] && pass "tsv: $t: the waits per device as blkparse's io= ($got)" ||
	fail "tsv: $t: per device: '$got', blkparse io=: '$want'"
$BTT -i "${IWBIN[$t]}" --export="tsv:$q/again" --host="h-iw-$t" >/dev/null 2>&1
check_same "tsv: $t: exported again: the same iowait rows and ids" "$q/x/iowait.tsv" "$q/again/iowait.tsv"

# bounded memory from a pipe: what the export adds to btt's peak RSS does not grow with the
# trace (synthetic traces of 200000 and 1000000 events, batches of 5000 rows)
if [ -n "${VALGRIND:-}" ] || [ ! -x /usr/bin/time ]; then
	skip "btt -i - --export: bounded memory (needs /usr/bin/time, not under valgrind)"
else
	declare -A ADD ROWS
	for n in 200000 1000000; do
		"$TOP/tests/gen/gentrace" -c 2 -n $n -s 3 -o g -D "$w/g$n" >/dev/null 2>&1
		$BLKPARSE -i "$w/g$n/g" -d "$w/g$n.bin" -O >/dev/null 2>&1
		cat "$w/g$n.bin" | /usr/bin/time -f %M -o "$w/rss-x$n" $BTT -i - --export="tsv:$w/gx$n" \
			--export-batch=5000 >/dev/null 2>"$w/gx$n.err"
		cat "$w/g$n.bin" | /usr/bin/time -f %M -o "$w/rss-r$n" $BTT -i - >/dev/null 2>&1
		ADD[$n]=$(($(tail -n1 "$w/rss-x$n") - $(tail -n1 "$w/rss-r$n")))
		ROWS[$n]=$(($(wc -l <"$w/gx$n/io.tsv") - 1))
		rm -rf "$w/g$n" "$w/g$n.bin" "$w/gx$n"
	done
	if [ "${ROWS[1000000]}" -ge $((4 * ${ROWS[200000]})) ] && [ "${ROWS[200000]}" -gt 20000 ] &&
		[ $((${ADD[1000000]} - ${ADD[200000]})) -lt 1024 ]; then
		pass "btt -i - --export: peak RSS +${ADD[200000]} KiB for ${ROWS[200000]} rows, +${ADD[1000000]} KiB for ${ROWS[1000000]}"
	else
		fail "btt -i - --export: memory grows: +${ADD[200000]} KiB for ${ROWS[200000]} rows, +${ADD[1000000]} KiB for ${ROWS[1000000]}"
	fi
fi

# ---- the schema ----
$BTT --clickhouse-schema >"$w/ddl.sql" 2>"$w/ddl.err" && [ -s "$w/ddl.sql" ] &&
	grep -q '^CREATE TABLE IF NOT EXISTS io$' "$w/ddl.sql" && ! grep -q Distributed "$w/ddl.sql" &&
	pass "--clickhouse-schema: the DDL of io and iowait" || fail "--clickhouse-schema: $(cat "$w/ddl.err")"
$BTT --clickhouse-schema --cluster=blk_two_shards >"$w/ddl-2s.sql"
$BTT --clickhouse-schema --cluster=fleet --export=clickhouse://db.example:8123/blk >"$w/ddl-fleet.sql"
grep -q "^ENGINE = Distributed(blk_two_shards, '', io, batch_id);" "$w/ddl-2s.sql" &&
	grep -q "^ENGINE = Distributed(fleet, 'blk', iowait, batch_id);" "$w/ddl-fleet.sql" &&
	pass "--clickhouse-schema --cluster: Distributed tables, over --export's database if given" ||
	fail "--clickhouse-schema --cluster: $(grep Distributed "$w/ddl-2s.sql" "$w/ddl-fleet.sql")"
$BTT --clickhouse-schema --cluster=bad-name >/dev/null 2>"$w/ddl-bad.err"
[ $? = 1 ] && one_error "--cluster with a bad name" "$w/ddl-bad.err" "cluster name 'bad-name' is not an identifier" ||
	fail "--cluster with a bad name: not status 1"

# ---- errors that need no server ----
i=0
for d in "" "mysql://127.0.0.1/blk" "clickhouse://127.0.0.1:99999/blk" "clickhouse://127.0.0.1:8123" "tsv:"; do
	i=$((i + 1))
	$BTT -i "${BIN[part-remap]}" --export="$d" >"$w/bad$i.out" 2>"$w/bad$i.err"
	rc=$?
	[ $rc = 1 ] && [ ! -s "$w/bad$i.out" ] && one_error "malformed destination '$d'" "$w/bad$i.err" "^btt: option '--export': bad destination '" ||
		fail "malformed destination '$d': status $rc: $(head -c 300 "$w/bad$i.err")"
done
touch "$w/plainfile"
$BTT -i "${BIN[part-remap]}" --export="tsv:$w/plainfile" >/dev/null 2>"$w/notdir.err"
[ $? = 1 ] && one_error "tsv:DIR on a regular file" "$w/notdir.err" "Not a directory" || fail "tsv:DIR on a file: not status 1"

# ---- the server ----
if ! ch_start; then
	skip "btt --export into ClickHouse: $CH_SKIP"
	exit 0
fi
URL="clickhouse://127.0.0.1:$CH_HTTP"
q() { ch_client -q "$1" 2>&1; }
for db in blk shard1 shard2 empty; do q "CREATE DATABASE $db" >/dev/null; done
if ch_client --database blk --multiquery <"$w/ddl.sql" 2>"$w/load.err" &&
	ch_client --database shard1 --multiquery <"$w/ddl-2s.sql" 2>>"$w/load.err" &&
	ch_client --database shard2 --multiquery <"$w/ddl-2s.sql" 2>>"$w/load.err"; then
	pass "the DDL of btt --clickhouse-schema [--cluster] loads"
else
	fail "the DDL does not load: $(head -c 300 "$w/load.err")"
fi
[ "$(q "SELECT quantileExact(0.5)(number), quantileExact(0.45)(number) FROM numbers(10)" | tr '\t' ' ')" = "5 4" ] &&
	pass "quantileExact takes index floor(level * N), as bttexport.py levels assumes" ||
	fail "quantileExact: $(q "SELECT quantileExact(0.5)(number) FROM numbers(10)")"

# ---- three traces, three hosts, a Distributed table over two shards ----
D="$URL/shard1?distributed=1"
for t in $TRACES; do
	$BTT -i "${BIN[$t]}" --export="$D" --host="${HOST[$t]}" >/dev/null 2>"$w/$t.ch.err" ||
		fail "export of $t into the Distributed table: $(head -c 300 "$w/$t.ch.err")"
done
for t in $TRACES; do
	h=${HOST[$t]}
	# per device: the count, min/avg/max of Q2C and D2C, in btt's units (ns)
	q "SELECT device, 'D2C', countIf(d_ns != 0), minIf(d2c_ns, d_ns != 0),
		round(avgIf(d2c_ns, d_ns != 0)), maxIf(d2c_ns, d_ns != 0)
		FROM shard1.io_all WHERE host = '$h' GROUP BY device
		UNION ALL SELECT device, 'Q2C', countIf(q_ns != 0), minIf(q2c_ns, q_ns != 0),
		round(avgIf(q2c_ns, q_ns != 0)), maxIf(q2c_ns, q_ns != 0)
		FROM shard1.io_all WHERE host = '$h' GROUP BY device FORMAT TSV" |
		tr '\t' ' ' | LC_ALL=C sort >"$w/$t.sql"
	cut -d' ' -f1-6 "$w/$t.want" | LC_ALL=C sort >"$w/$t.want6"
	check_same "Distributed: $h ($t): per device, count(), min/avg/max of Q2C and D2C = every bio's, from the records ($(wc -l <"$w/$t.want6") lines)" \
		"$w/$t.want6" "$w/$t.sql"
	bad=""
	while read -r dev st n mn avg mx p1 p2 p3 p4 p5 p6; do
		cond=$([ "$st" = D2C ] && echo "AND d_ns != 0" || echo "AND q_ns != 0")
		col=$([ "$st" = D2C ] && echo d2c_ns || echo q2c_ns)
		ex=$(q "SELECT quantilesExact($(python3 "$CHK" levels "$n"))($col) FROM shard1.io_all
			WHERE host = '$h' AND device = '$dev' $cond")
		res=$(python3 "$CHK" pct "$n" "$p1 $p2 $p3 $p4 $p5 $p6" "$ex")
		[ "$res" = ok ] || bad="$bad $dev $st: $res;"
	done <"$w/$t.want"
	[ -z "$bad" ] && pass "Distributed: $h: quantilesExact of Q2C and D2C = btt --percentiles within 1/64 (p50 .. max)" ||
		fail "Distributed: $h: percentiles:$bad"
done
n1=$(q "SELECT count() FROM shard1.io")
n2=$(q "SELECT count() FROM shard2.io")
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && pass "Distributed: rows on both shards ($n1 + $n2)" ||
	fail "Distributed: shard1 $n1, shard2 $n2 rows"
got=$(q "SELECT host, count(), uniqExact(export_id) FROM shard1.io_all GROUP BY host ORDER BY host FORMAT TSV" | tr '\t\n' ' ;')
[ "$got" = "h-ext4 1129 1;h-multi 15082 1;h-part 3089 1;" ] &&
	pass "Distributed: three hosts, one export each: $got" || fail "Distributed: hosts: $got"
got=$(q "SELECT countIf(remap_major = 254 AND remap_minor IN (17, 18)), countIf(merged = 1), countIf(g_ns = 0)
	FROM shard1.io_all WHERE host = 'h-part' FORMAT TSV" | tr '\t' ' ')
want=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ r += ($c["remap_major"] == 254); m += $c["merged"]; g += ($c["g_ns"] == 0) }
	END { print r, m, g }' "$w/part-remap/io.tsv")
[ "$got" = "$want" ] && [ "${got%% *}" -gt 0 ] && pass "Distributed: h-part: remap origins and merges as in the tsv rows ($got)" ||
	fail "Distributed: h-part: remapped, merged, no G: $got, want $want"

# ---- I/O waits: per host the count and total wait of blkparse --iowait; again: no row twice
# (batches of 1000 rows: several iowait batches, spread over both shards) ----
for t in $IWTRACES; do
	$BTT -i "${IWBIN[$t]}" --export="$D" --export-batch=1000 --host="h-iw-$t" >/dev/null 2>"$w/iw-$t.ch.err" ||
		fail "export of $t's waits into the Distributed table: $(head -c 300 "$w/iw-$t.ch.err")"
done
for t in $IWTRACES; do
	$BTT -i "${IWBIN[$t]}" --export="$D" --export-batch=1000 --host="h-iw-$t" >/dev/null 2>"$w/iw-$t.ch2.err" ||
		fail "second export of $t's waits: $(head -c 300 "$w/iw-$t.ch2.err")"
done
for t in $IWTRACES; do
	got=$(q "SELECT count(), sum(duration_ns) FROM shard1.iowait_all WHERE host = 'h-iw-$t' FORMAT TSV" | tr '\t' ' ')
	[ "$got" = "${IWSUM[$t]}" ] && pass "Distributed: h-iw-$t, exported twice: count() and sum(duration_ns) of iowait = blkparse --iowait's ($got)" ||
		fail "Distributed: h-iw-$t: iowait count, sum: '$got', blkparse: '${IWSUM[$t]}'"
	grep -q "^btt: exported [0-9]* I/Os and ${IWSUM[$t]%% *} I/O waits .* ([1-9][0-9]* found stored), 0 bytes sent" "$w/iw-$t.ch2.err" &&
		pass "Distributed: h-iw-$t again: every batch found stored, nothing sent" ||
		fail "Distributed: h-iw-$t again: $(cat "$w/iw-$t.ch2.err")"
done
n1=$(q "SELECT count() FROM shard1.iowait")
n2=$(q "SELECT count() FROM shard2.iowait")
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && pass "Distributed: iowait rows on both shards ($n1 + $n2)" ||
	fail "Distributed: iowait: shard1 $n1, shard2 $n2 rows"

# ---- the server killed in the middle of an export read from a pipe ----
t=nullb-randrw
N=$(bioref bios "${BIN[$t]}" | wc -l) # the rows: every bio of the trace
slow() { python3 -c '
import sys, time
f = open(sys.argv[1], "rb")
while True:
    b = f.read(32768)
    if not b:
        break
    sys.stdout.buffer.write(b)
    sys.stdout.flush()
    time.sleep(0.04)' "$1"; }
K="--export-batch=500 --host=h-kill"
slow "${BIN[$t]}" | $BTT -i - --export="$URL/blk" $K >/dev/null 2>"$w/kill.err" &
bpid=$!
for i in $(seq 300); do
	n=$(q "SELECT count() FROM blk.io WHERE host = 'h-kill'")
	[ "${n:-0}" -gt 3000 ] && break
	sleep 0.1
done
if kill -0 $bpid 2>/dev/null; then
	ch_kill9
	pass "server killed -9 after $n of $N rows, btt still exporting from the pipe"
	sleep 1
	ch_restart || fail "server does not start again: $CH_SKIP"
	wait $bpid
	rc=$?
	if [ $rc = 0 ]; then
		pass "the export resumed after the restart: $(cut -c1-200 "$w/kill.err")"
	elif [ $rc = 1 ]; then
		one_error "the export failed loudly when the server went away" "$w/kill.err" "."
	else
		fail "export with the server killed: status $rc: $(head -c 300 "$w/kill.err")"
	fi
	if $BTT -i "${BIN[$t]}" --export="$URL/blk" $K >/dev/null 2>"$w/kill2.err"; then
		pass "run again from the file: $(cut -c1-200 "$w/kill2.err")"
	else
		fail "run again after the crash: $(head -c 300 "$w/kill2.err")"
	fi
	got=$(q "SELECT count(), uniqExact(batch_id), uniqExact(sector, q_ns) FROM blk.io WHERE host = 'h-kill' FORMAT TSV" | tr '\t' ' ')
	nb=$(((N + 499) / 500))
	[ "$got" = "$N $nb $N" ] && pass "server killed: $N rows (btt's Q2C N) in $nb batches, none twice" ||
		fail "server killed: count, batches, distinct I/Os: $got (want $N $nb $N)"
	grep -q "^btt: exported $N I/Os .* $nb batches ($nb found stored), 0 bytes sent" "$w/kill2.err" &&
		pass "run again: all $nb batches found stored, nothing sent" || fail "run again: $(cat "$w/kill2.err")"
else
	wait $bpid
	fail "server killed: the export ended ($n rows) before the kill: $(cat "$w/kill.err")"
fi

# ---- errors: one clear line each ----
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$BTT -i "${BIN[part-remap]}" --export="clickhouse://127.0.0.1:$closed/blk" >/dev/null 2>"$w/closed.err"
[ $? = 1 ] && one_error "unreachable server (closed port)" "$w/closed.err" "^btt: cannot connect to '127.0.0.1:$closed': Connection refused" ||
	fail "closed port: not status 1"
# an export that fails at the end leaves every other output finished, as without --export
mkdir -p "$w/fin-a" "$w/fin-b"
(cd "$w/fin-a" && $BTT -i "${BIN[part-remap]}" -o out -l lat -q lat -Z -I iostat.txt >/dev/null 2>&1)
(cd "$w/fin-b" && $BTT -i "${BIN[part-remap]}" -o out -l lat -q lat -Z -I iostat.txt \
	--export="clickhouse://127.0.0.1:$closed/blk" >/dev/null 2>"$w/fin.err")
rc=$?
if [ $rc = 1 ] && [ -s "$w/fin-a/out.avg" ] && diff -r "$w/fin-a" "$w/fin-b" >/dev/null; then
	pass "export failing at the end: status 1, the report and the $(ls "$w/fin-a" | wc -l) files as without --export"
else
	fail "export failing at the end: status $rc, files differ: $(diff -rq "$w/fin-a" "$w/fin-b" | head -n 3)"
fi
$BTT -i "${BIN[part-remap]}" --export="$URL/empty" >/dev/null 2>"$w/notable.err"
[ $? = 1 ] && one_error "missing table" "$w/notable.err" "HTTP 404: Code: 60, .*Table empty.io doesn't exist" ||
	fail "missing table: not status 1"
grep -q "^hint: create the tables first: btt --clickhouse-schema | clickhouse-client --database empty --multiquery" "$w/notable.err" &&
	pass "missing table: the hint says how to make them" || fail "missing table: no hint: $(cat "$w/notable.err")"
$BTT -i "${BIN[part-remap]}" --export="clickhouse://ro@127.0.0.1:$CH_HTTP/blk" --host=h-ro >/dev/null 2>"$w/ro.err"
[ $? = 1 ] && one_error "insert rejected (read-only user)" "$w/ro.err" "^btt: INSERT of batch 0 into 'blk.io' rejected by '127.0.0.1:$CH_HTTP': HTTP 500: Code: 164, .*readonly mode" ||
	fail "read-only user: not status 1"
[ "$(q "SELECT count() FROM blk.io WHERE host = 'h-ro'")" = 0 ] &&
	pass "insert rejected: no row stored" || fail "insert rejected: rows stored"
