#!/bin/bash
# The fleet export (include/blk-export/export.h, issue 16) into a real ClickHouse server (Debian's
# 18.16, started by tests/clickhouse.sh on loopback with a throw-away directory), driven by
# tests/gen/exportgen, which exports synthetic rows through the library as btt --export will.
# The expected rows, batches and ids come from tests/gen/exportrows.py, which computes them
# independently; the rows cross a UTC midnight, so batches are cut at a partition boundary.
# - tsv:DIR: both files byte for byte; the DDL loads (plain and Distributed) as documented;
# - rows arrive exactly (the whole table dumped and compared, sums, a few values) through a
#   plain table and through a Distributed table over two shards (a batch on one shard);
# - no row twice: an export run again stores nothing more; a lost response and a lost request
#   (a proxy that drops one INSERT) are retried exactly once; the server killed -9 in the
#   middle of an export and restarted, and the exporter killed -9, then the export run again:
#   no row missing or doubled (count, uniqExact(batch_id), one row per key);
# - a malformed destination, a closed port, a missing table or database, a wrong column
#   type, a read-only user: one error line each, status 1.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/clickhouse.sh"

GEN="$TOP/tests/gen/exportgen"
ROWS="$TOP/tests/gen/exportrows.py"
if [ ! -x "$GEN" ]; then
	fail "export: $GEN not built"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	skip "ClickHouse export (python3 missing)"
	exit 0
fi
[ -n "${VALGRIND:-}" ] && GEN="$TOP/tests/vg.sh $GEN"
w="$OUT/t1300"
rm -rf "$w"
mkdir -p "$w"
START=1764633599999000000 # 1 ms before 2025-12-02 00:00 UTC

# expect NAME ARGS...: the oracle's files in $w/NAME.exp/ and its summary in $w/NAME.sum
expect() {
	local name=$1
	shift
	python3 "$ROWS" --start $START --summary "$@" "$w/$name.exp" >"$w/$name.sum"
}
sumval() { # NAME TABLE KEY
	sed -n "s/^$2 .*\b$3=\([0-9]*\).*/\1/p" "$w/$1.sum"
}
stat() { # FILE KEY: a count of exportgen --stats
	sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" "$1" | tail -n1
}
# one_error WHAT FILE PATTERN: exactly one "exportgen:" line, matching PATTERN (grep -E)
one_error() {
	local n
	n=$(grep -c '^exportgen: ' "$2")
	if [ "$n" = 1 ] && grep -qE "$3" "$2" && [ "$(wc -l <"$2")" -le 2 ]; then
		pass "$1: one error line: $(head -n1 "$2" | cut -c1-160)"
	else
		fail "$1: expected one error line matching '$3', got:"
		head -n 4 "$2" | sed 's/^/    /'
	fi
}

# ---- tsv:DIR ----
for v in "rows:--batch-rows 500" "bytes:--batch-bytes 20000"; do
	name=tsv-${v%%:*}
	args="--rows 3000 --waits 400 ${v#*:}"
	expect "$name" $args
	if $GEN --start $START $args "tsv:$w/$name" 2>"$w/$name.err"; then
		check_same "tsv:DIR ($name): io.tsv" "$w/$name.exp/io.tsv" "$w/$name/io.tsv"
		check_same "tsv:DIR ($name): iowait.tsv" "$w/$name.exp/iowait.tsv" "$w/$name/iowait.tsv"
		left=$(ls -A "$w/$name" | tr '\n' ' ')
		[ "$left" = "io.tsv iowait.tsv " ] && pass "tsv:DIR ($name): only the two files" ||
			fail "tsv:DIR ($name): files left: $left"
	else
		fail "tsv:DIR ($name): status $?: $(head -c 300 "$w/$name.err")"
	fi
done
nb=$(sumval tsv-rows io batches)
[ "$nb" -gt 6 ] && pass "tsv:DIR: midnight cuts batches ($nb for 3000 rows of 500)" ||
	fail "tsv:DIR: $nb batches: the rows did not cross a day"
touch "$w/plainfile"
$GEN --rows 10 "tsv:$w/plainfile" 2>"$w/tsv-notdir.err"
[ $? = 1 ] || fail "tsv:DIR on a regular file: not status 1"
one_error "tsv:DIR on a regular file" "$w/tsv-notdir.err" "Not a directory"

# ---- the server ----
if ! ch_start; then
	skip "ClickHouse export into a server: $CH_SKIP"
	exit 0
fi
URL="clickhouse://127.0.0.1:$CH_HTTP"
q() { ch_client -q "$1" 2>&1; }
for db in blk shard1 shard2 dist empty wrong old; do q "CREATE DATABASE $db" >/dev/null; done

# ---- the DDL ----
$GEN --schema >"$w/ddl.sql"
if ch_client --database blk --multiquery <"$w/ddl.sql" 2>"$w/ddl.err" &&
	ch_client --database blk --multiquery <"$w/ddl.sql" 2>>"$w/ddl.err"; then
	pass "DDL loads with clickhouse-client --database blk --multiquery (twice)"
else
	fail "DDL does not load: $(head -c 300 "$w/ddl.err")"
fi
got=$(q "SELECT name, type FROM system.columns WHERE database = 'blk' AND table = 'io'
	AND name IN ('host', 'q2c_ns', 'd2c_ns', 'c_ns') ORDER BY name FORMAT TSV" | tr '\t\n' ': ')
[ "$got" = "c_ns:UInt64 d2c_ns:UInt64 host:String q2c_ns:UInt64 " ] &&
	pass "DDL: io.host String, c_ns, d2c_ns, q2c_ns UInt64" || fail "DDL: io columns: $got"
for t in "io:c_ns" "iowait:start_ns"; do
	got=$(q "SELECT engine, partition_key, sorting_key FROM system.tables
		WHERE database = 'blk' AND name = '${t%:*}' FORMAT TSV")
	want=$(printf 'MergeTree\tintDiv(%s, 86400000000000)\thost, device, %s' "${t#*:}" "${t#*:}")
	[ "$got" = "$want" ] && pass "DDL: ${t%:*}: MergeTree by UTC day of ${t#*:}, ordered by host, device, ${t#*:}" ||
		fail "DDL: ${t%:*}: '$got', want '$want'"
done
$GEN --schema --cluster blk_two_shards --shard-db "" >"$w/ddl-2s.sql"
$GEN --schema --cluster blk_two_shards --shard-db blk >"$w/ddl-dist.sql"
if ch_client --database shard1 --multiquery <"$w/ddl-2s.sql" 2>"$w/ddl2.err" &&
	ch_client --database shard2 --multiquery <"$w/ddl-2s.sql" 2>>"$w/ddl2.err" &&
	ch_client --database dist --multiquery <"$w/ddl-dist.sql" 2>>"$w/ddl2.err"; then
	got=$(q "SELECT database, name, engine_full FROM system.tables WHERE engine = 'Distributed'
		ORDER BY database, name FORMAT TSV" | tr '\t\n' '| ')
	want="dist|io_all|Distributed(blk_two_shards, \\'blk\\', io, batch_id) dist|iowait_all|Distributed(blk_two_shards, \\'blk\\', iowait, batch_id) shard1|io_all|Distributed(blk_two_shards, \\'\\', io, batch_id) shard1|iowait_all|Distributed(blk_two_shards, \\'\\', iowait, batch_id) shard2|io_all|Distributed(blk_two_shards, \\'\\', io, batch_id) shard2|iowait_all|Distributed(blk_two_shards, \\'\\', iowait, batch_id) "
	[ "$got" = "$want" ] && pass "DDL --cluster: Distributed io_all and iowait_all sharded by batch_id" ||
		fail "DDL --cluster: $got"
else
	fail "DDL --cluster does not load: $(head -c 300 "$w/ddl2.err")"
fi
$GEN --schema --cluster 'bad-name' --shard-db blk >/dev/null 2>"$w/ddl-bad.err"
[ $? = 1 ] && one_error "DDL with a bad cluster name" "$w/ddl-bad.err" "cluster name 'bad-name' is not an identifier" ||
	fail "DDL with a bad cluster name: not status 1"

# dump TABLE HOST: the host's rows, sorted
dump() {
	ch_client -q "SELECT * FROM $1 WHERE host = '$2' FORMAT TabSeparated" | LC_ALL=C sort
}
# check_rows WHAT NAME TABLE HOST: the table holds exactly the oracle's rows for HOST
check_rows() {
	local t
	for t in io iowait; do
		tail -n +2 "$w/$2.exp/$t.tsv" | LC_ALL=C sort >"$w/$2.$t.want"
		dump "$([ "$t" = iowait ] && echo "${3/.io/.iowait}" || echo "$3")" "$4" >"$w/$2.$t.got"
		check_same "$1: $t rows exactly as computed ($(wc -l <"$w/$2.$t.want"))" \
			"$w/$2.$t.want" "$w/$2.$t.got"
	done
}
# check_keys WHAT TABLE HOST NAME: count, batches and one row per sector
check_keys() {
	local got want
	got=$(q "SELECT count(), uniqExact(batch_id), uniqExact(sector) FROM $2 WHERE host = '$3' FORMAT TSV")
	dup=$(q "SELECT count() FROM (SELECT sector, count() AS n FROM $2 WHERE host = '$3'
		GROUP BY sector HAVING n != 1) FORMAT TSV")
	want=$(printf '%s\t%s\t%s' "$(sumval "$4" io rows)" "$(sumval "$4" io batches)" "$(sumval "$4" io rows)")
	if [ "$got" = "$want" ] && [ "$dup" = 0 ]; then
		pass "$1: count, uniqExact(batch_id), uniqExact(sector) = $(echo $got), no sector twice"
	else
		fail "$1: count, batches, sectors '$got' (want '$want'), sectors not once: $dup"
	fi
}

# ---- rows arrive exactly ----
A="--rows 20000 --waits 2000 --batch-rows 3000"
expect plain $A --host h-plain
if $GEN --start $START $A --host h-plain --stats "$URL/blk" 2>"$w/plain.err"; then
	check_rows "plain table" plain blk.io h-plain
	check_keys "plain table" blk.io h-plain plain
	got=$(q "SELECT sum(bytes), sum(q2c_ns), sum(d2c_ns) FROM blk.io WHERE host = 'h-plain' FORMAT TSV")
	want=$(printf '%s\t%s\t%s' "$(sumval plain io bytes)" "$(sumval plain io q2c_ns)" "$(sumval plain io d2c_ns)")
	[ "$got" = "$want" ] && pass "plain table: sum(bytes), sum(q2c_ns), sum(d2c_ns) = $(echo $got)" ||
		fail "plain table: sums '$got', want '$want'"
	got=$(q "SELECT comm, rwbs, q2g_ns, q2c_ns, d2c_ns, merged, remap_major, remap_minor, remap_sector, error
		FROM blk.io WHERE host = 'h-plain' AND sector IN (0, 8, 48) ORDER BY sector FORMAT TSV" | tr '\t\n' ', ')
	want="fio,R,0,21000,20000,1,8,1,2048,-5 kworker/0:1H,W,100,22038,21001,0,0,0,0,0 new\\nline,WS,100,27228,26006,0,0,0,0,0 "
	[ "$got" = "$want" ] && pass "plain table: the values of three rows" || fail "plain table: rows 0, 1, 6: '$got', want '$want'"
	got=$(q "SELECT uniqExact(intDiv(c_ns, 86400000000000)) FROM blk.io WHERE host = 'h-plain'")
	got="$got $(q "SELECT max(d) FROM (SELECT batch_id, uniqExact(intDiv(c_ns, 86400000000000))
		AS d FROM blk.io WHERE host = 'h-plain' GROUP BY batch_id)")"
	[ "$got" = "2 1" ] && pass "plain table: rows on two UTC days, each batch within one" ||
		fail "plain table: days, days per batch: '$got'"
	[ "$(stat "$w/plain.err" batches_io)" = "$(sumval plain io batches)" ] &&
		pass "plain table: exportgen sent $(sumval plain io batches) io batches, as computed" ||
		fail "plain table: $(cat "$w/plain.err")"
else
	fail "export into a plain table: status $?: $(head -c 300 "$w/plain.err")"
fi
expect gz0 $A --host h-gz0
if $GEN --start $START $A --host h-gz0 --gzip 0 --stats "$URL/blk" 2>"$w/gz0.err"; then
	check_rows "gzip level 0 (not compressed)" gz0 blk.io h-gz0
else
	fail "export with --gzip 0: status $?: $(head -c 300 "$w/gz0.err")"
fi

# ---- an export run again stores nothing more ----
if $GEN --start $START $A --host h-plain --stats "$URL/blk" 2>"$w/again.err"; then
	nb=$(($(sumval plain io batches) + $(sumval plain iowait batches)))
	[ "$(stat "$w/again.err" present)" = $nb ] && [ "$(stat "$w/again.err" bytes_sent)" = 0 ] &&
		pass "run again: all $nb batches found stored, none sent" ||
		fail "run again: $(cat "$w/again.err")"
	check_rows "run again" plain blk.io h-plain
else
	fail "export run again: status $?: $(head -c 300 "$w/again.err")"
fi
$GEN --start $START --rows 20000 --waits 2000 --batch-rows 2000 --host h-plain "$URL/blk" 2>"$w/limits.err"
[ $? = 1 ] || fail "run again with other batch limits: not status 1"
one_error "run again with other batch limits" "$w/limits.err" "exported before with other batch limits"
check_keys "run again with other batch limits: nothing stored" blk.io h-plain plain

# ---- a Distributed table over two shards ----
expect dist $A --host h-dist
if $GEN --start $START $A --host h-dist --stats "$URL/shard1?distributed=1" 2>"$w/dist.err"; then
	check_rows "Distributed" dist shard1.io_all h-dist
	check_keys "Distributed" shard1.io_all h-dist dist
	n1=$(q "SELECT count() FROM shard1.io WHERE host = 'h-dist'")
	n2=$(q "SELECT count() FROM shard2.io WHERE host = 'h-dist'")
	both=$(q "SELECT count() FROM shard1.io WHERE host = 'h-dist' AND batch_id IN
		(SELECT batch_id FROM shard2.io WHERE host = 'h-dist')")
	[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ "$both" = 0 ] &&
		pass "Distributed: rows on both shards ($n1 + $n2), each batch on one" ||
		fail "Distributed: shard1 $n1, shard2 $n2 rows, $both rows of batches on both"
else
	fail "export into a Distributed table: status $?: $(head -c 300 "$w/dist.err")"
fi

# ---- a lost response, a lost request ----
for m in response request; do
	python3 "$TOP/tests/gen/chproxy.py" --target "$CH_HTTP" --drop-$m 5 >"$w/proxy-$m.port" 2>"$w/proxy-$m.log" &
	ppid=$!
	for i in $(seq 50); do [ -s "$w/proxy-$m.port" ] && break; sleep 0.1; done
	expect lost-$m $A --host h-lost-$m
	if $GEN --start $START $A --host h-lost-$m --backoff 50 --stats \
		"clickhouse://127.0.0.1:$(cat "$w/proxy-$m.port")/blk" 2>"$w/lost-$m.err"; then
		want_present=$([ $m = response ] && echo 1 || echo 0)
		if grep -q "insert 5: .*dropped" "$w/proxy-$m.log" &&
			[ "$(stat "$w/lost-$m.err" present)" = "$want_present" ] &&
			[ "$(stat "$w/lost-$m.err" retries)" -ge 1 ]; then
			pass "lost $m: retried, batch $([ $m = response ] && echo found stored || echo sent again) ($(grep -o 'present=[0-9]* rows_present=[0-9]* retries=[0-9]* checks=[0-9]*' "$w/lost-$m.err"))"
		else
			fail "lost $m: $(cat "$w/lost-$m.err") / $(grep dropped "$w/proxy-$m.log")"
		fi
		check_rows "lost $m" lost-$m blk.io h-lost-$m
		check_keys "lost $m" blk.io h-lost-$m lost-$m
	else
		fail "export through a proxy that loses a $m: status $?: $(head -c 300 "$w/lost-$m.err")"
	fi
	kill $ppid 2>/dev/null
	wait $ppid 2>/dev/null
done

# ---- tsv:DIR loads into the same tables ----
if ch_client --database blk -q 'INSERT INTO io FORMAT TabSeparatedWithNames' <"$w/tsv-rows/io.tsv" &&
	ch_client --database blk -q 'INSERT INTO iowait FORMAT TabSeparatedWithNames' <"$w/tsv-rows/iowait.tsv"; then
	check_rows "tsv:DIR loaded with FORMAT TabSeparatedWithNames" tsv-rows blk.io host-a
else
	fail "tsv:DIR does not load with FORMAT TabSeparatedWithNames"
fi

# ---- doc/clickhouse.md: every sql block runs; btt's table from SQL as computed ----
DOC="$TOP/doc/clickhouse.md"
awk -v dir="$w" '/^```sql$/ { n++; f = dir "/doc-" n ".sql"; next }
	/^```/ { f = ""; next } f { print > f }' "$DOC"
nq=$(ls "$w"/doc-*.sql 2>/dev/null | wc -l)
[ "$nq" -ge 8 ] || fail "doc/clickhouse.md: only $nq sql blocks"
for f in "$w"/doc-*.sql; do
	if ch_client --database blk --multiquery <"$f" >"${f%.sql}.out" 2>"${f%.sql}.err" &&
		[ -s "${f%.sql}.out" ]; then
		pass "doc/clickhouse.md: query $(basename "$f" .sql) runs ($(wc -l <"${f%.sql}.out") rows)"
	else
		fail "doc/clickhouse.md: query $(basename "$f" .sql): $(head -c 300 "${f%.sql}.err")"
	fi
done
res=$(python3 - "$w/plain.exp/io.tsv" "$w/doc-1.out" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
col = {n: i for i, n in enumerate(rows[0])}
want = {}
stages = [("Q2G", "q2g_ns", ("q_ns", "g_ns")), ("G2I", "g2i_ns", ("g_ns", "i_ns")),
          ("I2D", "i2d_ns", ("i_ns", "d_ns")), ("D2C", "d2c_ns", ("d_ns",)),
          ("Q2C", "q2c_ns", ("q_ns",))]
for r in rows[1:]:
    for st, c, need in stages:
        if all(int(r[col[k]]) for k in need):
            want.setdefault((r[col["device"]], st), []).append(int(r[col[c]]))
bad, seen = [], 0
for l in open(sys.argv[2]):
    h, dev, st, mn, avg, mx, n = l.split("\t")
    if h != "h-plain":
        continue
    seen += 1
    v = want.get((dev, st), [])
    ok = (int(mn), int(mx), int(n)) == (min(v), max(v), len(v)) and \
        abs(float(avg) - sum(v) / len(v)) <= 1e-9 * sum(v) / len(v)
    if not ok:
        bad.append("%s %s: %s/%s/%s/%s vs %d/%.3f/%d/%d" % (dev, st, mn, avg, mx, n.strip(),
                   min(v), sum(v) / len(v), max(v), len(v)))
if seen != len(want):
    bad.append("%d lines for %d (device, stage)" % (seen, len(want)))
print("ok %d" % seen if not bad else "; ".join(bad[:3]))
PY
)
[ "${res%% *}" = ok ] && pass "doc/clickhouse.md: btt's latency table from SQL = MIN, AVG, MAX, N computed from the rows (${res#ok } device-stage lines)" ||
	fail "doc/clickhouse.md: btt's latency table: $res"
# the agent's configuration as the page shows it: the packaged agent (agent/) reads it as
# written (its units and a round: t1600)
awk '/^```conf$/ { f = 1; next } /^```/ { f = 0 } f' "$DOC" >"$w/agent.conf"
touch "$w/agent.password"
sed -i -e "s|^PASSWORD_FILE=.*|PASSWORD_FILE=$w/agent.password|" -e "s|^DEVICES=.*|DEVICES=/dev/test0|" "$w/agent.conf"
if out=$("$TOP/agent/blktrace-ng-agent" --check "$w/agent.conf" 2>&1) &&
	grep -qx "DEST=clickhouses://blk_writer@clickhouse.example.net:8443/blk?distributed=1" <<<"$out" &&
	grep -qx "TRACE_SECONDS=30" <<<"$out" && grep -qx "INTERVAL_MINUTES=15" <<<"$out"; then
	pass "doc/clickhouse.md: blktrace-ng-agent --check accepts the agent's configuration as shown: $(tr '\n' ' ' <<<"$out" | head -c 200)"
else
	fail "doc/clickhouse.md: the agent's configuration: $(tr '\n' ' ' <<<"$out" | head -c 300)"
fi

# ---- the server killed in the middle of an export ----
K="--rows 20000 --batch-rows 200"
expect kill $K --host h-kill
$GEN --start $START $K --host h-kill --rate 4000 --stats "$URL/blk" 2>"$w/kill.err" &
gpid=$!
for i in $(seq 300); do
	n=$(q "SELECT count() FROM blk.io WHERE host = 'h-kill'")
	[ "${n:-0}" -gt 2000 ] && break
	sleep 0.1
done
if kill -0 $gpid 2>/dev/null; then
	ch_kill9
	pass "server killed -9 after $n of 20000 rows, the export still running"
	sleep 1
	ch_restart || fail "server does not start again: $CH_SKIP"
	wait $gpid
	rc=$?
	if [ $rc = 0 ]; then
		pass "export resumed after the restart ($(grep -o 'present=[0-9]* rows_present=[0-9]* retries=[0-9]* checks=[0-9]*' "$w/kill.err"))"
	elif [ $rc = 1 ]; then
		one_error "export failed loudly when the server went away" "$w/kill.err" "."
	else
		fail "export with the server killed: status $rc: $(head -c 300 "$w/kill.err")"
	fi
	if $GEN --start $START $K --host h-kill --stats "$URL/blk" 2>"$w/kill2.err"; then
		pass "export run again after the crash ($(grep -o 'present=[0-9]* rows_present=[0-9]*' "$w/kill2.err"))"
	else
		fail "export run again after the crash: $(head -c 300 "$w/kill2.err")"
	fi
	check_keys "server killed" blk.io h-kill kill
	check_rows "server killed" kill blk.io h-kill
else
	wait $gpid
	fail "server killed: the export ended ($n rows) before the kill: $(cat "$w/kill.err")"
fi

# ---- the exporter killed in the middle of an export ----
expect killx $K --host h-killx
$GEN --start $START $K --host h-killx --rate 4000 "$URL/blk" 2>"$w/killx.err" &
gpid=$!
for i in $(seq 300); do
	n=$(q "SELECT count() FROM blk.io WHERE host = 'h-killx'")
	[ "${n:-0}" -gt 2000 ] && break
	sleep 0.1
done
if kill -9 $gpid 2>/dev/null; then
	wait $gpid 2>/dev/null
	if $GEN --start $START $K --host h-killx --stats "$URL/blk" 2>"$w/killx2.err"; then
		p=$(stat "$w/killx2.err" present)
		[ "$p" -ge 10 ] && pass "exporter killed -9 after $n rows, run again: $p batches found stored" ||
			fail "exporter killed, run again: $(cat "$w/killx2.err")"
	else
		fail "exporter killed, run again: $(head -c 300 "$w/killx2.err")"
	fi
	check_keys "exporter killed" blk.io h-killx killx
	check_rows "exporter killed" killx blk.io h-killx
else
	fail "exporter killed: it ended before the kill"
fi

# ---- errors: one clear line each ----
i=0
for d in "" "mysql://127.0.0.1/blk" "clickhouse://" "clickhouse://127.0.0.1:8123" \
	"clickhouse://127.0.0.1:99999/blk" "clickhouse://127.0.0.1:x1/blk" \
	"clickhouse://127.0.0.1:8123/bad-db" "clickhouse://127.0.0.1:8123/blk?sync=1" \
	"clickhouse://:8123/blk" "clickhouse://u:secret@[::1/blk" "tsv:"; do
	i=$((i + 1))
	$GEN --rows 10 "$d" 2>"$w/bad$i.err"
	rc=$?
	if [ $rc = 1 ] && ! grep -q secret "$w/bad$i.err"; then
		one_error "malformed destination '$d'" "$w/bad$i.err" "^exportgen: bad destination '"
	else
		fail "malformed destination '$d': status $rc: $(cat "$w/bad$i.err")"
	fi
done
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$GEN --rows 10 "clickhouse://127.0.0.1:$closed/blk" 2>"$w/closed.err"
[ $? = 1 ] || fail "closed port: not status 1"
one_error "unreachable server (closed port)" "$w/closed.err" "cannot connect to '127.0.0.1:$closed': Connection refused"
$GEN --rows 10 "$URL/empty" 2>"$w/notable.err"
[ $? = 1 ] || fail "missing table: not status 1"
one_error "missing table" "$w/notable.err" "HTTP 404: Code: 60, .*Table empty.io doesn't exist"
$GEN --rows 10 "$URL/nodb" 2>"$w/nodb.err"
[ $? = 1 ] || fail "missing database: not status 1"
one_error "missing database" "$w/nodb.err" "Code: 81, .*Database nodb doesn't exist"
sed 's/q2c_ns UInt64/q2c_ns UInt32/' "$w/ddl.sql" | ch_client --database wrong --multiquery
$GEN --rows 10 "$URL/wrong" 2>"$w/wrong.err"
[ $? = 1 ] || fail "wrong column type: not status 1"
one_error "wrong column type" "$w/wrong.err" "table 'wrong.io' at '127.0.0.1:$CH_HTTP' does not match the export: column 'q2c_ns' is UInt32, not UInt64"
# a table of the schema before cgroup..file_offset: the error names the remedy; the doc's
# ALTER TABLE (doc/clickhouse.md, "Schema changes") makes it take the export, whose batch
# ids are those of before (the new columns are not hashed into them)
grep -vE '^    (cgroup|origin_pid|origin_comm|file|file_offset) ' "$w/ddl.sql" |
	ch_client --database old --multiquery
$GEN --rows 10 "$URL/old" 2>"$w/old.err"
[ $? = 1 ] || fail "table of the old schema: not status 1"
one_error "table of the old schema" "$w/old.err" "table 'old.io' at '127.0.0.1:$CH_HTTP' does not match the export: it has no column 'cgroup' \\(String\\): a table of before that column was added \\(doc/clickhouse.md, \"Schema changes\": ALTER TABLE ... ADD COLUMN\\)"
awk '/^ALTER TABLE io$/ { p = 1 } p && /^```/ { exit } p' "$TOP/doc/clickhouse.md" >"$w/migrate.sql"
if grep -q 'ADD COLUMN file_offset UInt64' "$w/migrate.sql" &&
	ch_client --database old --multiquery <"$w/migrate.sql" 2>"$w/migrate.err" &&
	$GEN --rows 300 --waits 20 --host h-old "$URL/old" 2>"$w/old2.err"; then
	python3 "$ROWS" --rows 300 --waits 20 --host h-old "$w/old.exp"
	check_same "old schema, after the doc's ALTER TABLE: io rows exactly as computed" \
		<(tail -n +2 "$w/old.exp/io.tsv" | LC_ALL=C sort) \
		<(q "SELECT * FROM old.io WHERE host = 'h-old' FORMAT TSV" | LC_ALL=C sort)
else
	fail "old schema, after the doc's ALTER TABLE: $(head -c 300 "$w/migrate.err" "$w/old2.err" 2>/dev/null)"
fi
$GEN --rows 10 --host h-ro "clickhouse://ro@127.0.0.1:$CH_HTTP/blk" 2>"$w/ro.err"
[ $? = 1 ] || fail "read-only user: not status 1"
one_error "insert rejected (read-only user)" "$w/ro.err" "INSERT of batch 0 into 'blk.io' rejected by '127.0.0.1:$CH_HTTP': HTTP 500: Code: 164, .*readonly mode"
[ "$(q "SELECT count() FROM blk.io WHERE host = 'h-ro'")" = 0 ] &&
	pass "insert rejected: no row stored" || fail "insert rejected: rows stored"
