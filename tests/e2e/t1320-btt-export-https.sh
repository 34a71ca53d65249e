#!/bin/bash
# btt --export over HTTPS with a password (issue 38): a ClickHouse 18.16 server started by
# the test (tests/clickhouse.sh, CH_TLS=1) serves HTTPS with a certificate from a throw-away
# CA, and has a user with a password.
# - clickhouses:// with --ca-file and --password-file (mode 600) lands every row: as many as
#   the plain export of the same trace; CLICKHOUSE_PASSWORD works the same;
# - a certificate from another CA (or the system's CAs only) is refused: one line, status 1;
#   so are a CA file of junk and one that does not exist; --insecure skips the check;
# - a wrong password, a password file readable by others, a password in the destination, a
#   password over plain HTTP to a host that is not loopback: one line each, status 1;
# - the password is in no process's command line while the export runs, and in no line of
#   the server's logs (at level trace, which logs every request's URI: a password in a URL
#   shows there, as a request made so afterwards proves).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/clickhouse.sh"

BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
w="$OUT/t1320"
rm -rf "$w"
mkdir -p "$w"
BIN="$(unpack ext4-mixed)/ext4-mixed.bin"
if ! command -v openssl >/dev/null; then
	skip "btt --export over HTTPS: openssl is not installed (tests/deps.sh installs it)"
	exit 0
fi
CH_TLS=1
CH_LOG_LEVEL=trace
if ! ch_start; then
	skip "btt --export over HTTPS: $CH_SKIP"
	exit 0
fi
q() { ch_client -q "$1" 2>&1; }
$BTT --clickhouse-schema >"$w/ddl.sql"
for db in plain tls1 tls2 tls3; do
	q "CREATE DATABASE $db" >/dev/null
	ch_client --database $db --multiquery <"$w/ddl.sql"
done
HTTP="clickhouse://127.0.0.1:$CH_HTTP"
HTTPS="clickhouses://pw@127.0.0.1:$CH_HTTPS"
CA="$CH_DIR/tls/ca.pem"
printf '%s\n' "$CH_PASSWORD" >"$w/pw"
chmod 600 "$w/pw"
unset CLICKHOUSE_PASSWORD

# one_line WHAT FILE PATTERN: status 1 was seen; one "btt:" line matching PATTERN, a hint at
# most (the classic report's note on the I/Os it leaves out aside), and no password in it
one_line() {
	local n
	sed -i '/^btt: note: /d' "$2"
	n=$(grep -c '^btt: ' "$2")
	if [ "$n" = 1 ] && grep -qE "$3" "$2" && [ "$(wc -l <"$2")" -le 2 ] &&
		! grep -qF "$CH_PASSWORD" "$2"; then
		pass "$1: status 1, one line: $(head -n1 "$2" | cut -c1-200)"
	else
		fail "$1: expected status 1 and one line matching '$3', got:"
		head -n 4 "$2" | sed 's/^/    /'
	fi
}
rows() { q "SELECT count() FROM $1.io"; }

# ---- every row, over HTTP and over HTTPS ----
$BTT -i "$BIN" --export="$HTTP/plain" --host=h >/dev/null 2>"$w/plain.err" ||
	fail "the plain export: $(head -n2 "$w/plain.err")"
want=$(rows plain)
[ "${want:-0}" -gt 0 ] 2>/dev/null && pass "the plain export: $want rows" || fail "the plain export: '$want' rows"

# the trace through a pipe that stays open, so that the export is running when ps looks
(
	cat "$BIN"
	sleep 3
) | $BTT -i - --export="$HTTPS/tls1" --host=h --ca-file="$CA" --password-file="$w/pw" \
	>/dev/null 2>"$w/tls1.err" &
pid=$!
sleep 1.5
ps -eo pid,args >"$w/ps.txt"
if pgrep -f -- "--export=$HTTPS/tls1" >/dev/null && ! grep -qF "$CH_PASSWORD" "$w/ps.txt"; then
	pass "the password is in no process's command line while the export runs"
else
	fail "ps while the export runs: $(pgrep -fa -- "--export=$HTTPS/tls1" | head -n1); password: $(grep -cF "$CH_PASSWORD" "$w/ps.txt") lines"
fi
wait $pid
st=$?
got=$(rows tls1)
[ $st = 0 ] && [ "$got" = "$want" ] &&
	pass "clickhouses:// with --ca-file and --password-file: every row ($got = the plain export's)" ||
	fail "clickhouses:// --ca-file --password-file: status $st, $got rows, want $want: $(head -n2 "$w/tls1.err")"

CLICKHOUSE_PASSWORD="$CH_PASSWORD" $BTT -i "$BIN" --export="$HTTPS/tls2" --host=h --ca-file="$CA" \
	>/dev/null 2>"$w/tls2.err"
st=$?
got=$(rows tls2)
[ $st = 0 ] && [ "$got" = "$want" ] &&
	pass "clickhouses:// with CLICKHOUSE_PASSWORD: every row ($got)" ||
	fail "CLICKHOUSE_PASSWORD: status $st, $got rows, want $want: $(head -n2 "$w/tls2.err")"

# ---- certificates ----
mkdir -p "$w/other"
ch_make_ca "$w/other" other
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --ca-file="$w/other/other.pem" \
	--password-file="$w/pw" >/dev/null 2>"$w/other.err"
[ $? = 1 ] && one_line "a certificate from another CA" "$w/other.err" \
	"certificate of '127.0.0.1:$CH_HTTPS' is not trusted" || fail "another CA: not status 1: $(head -n2 "$w/other.err")"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --password-file="$w/pw" >/dev/null 2>"$w/sys.err"
st=$?
if [ -n "${VALGRIND:-}" ] && grep -q "no answer (timed out)" "$w/sys.err"; then
	# (libcurl reads the system's CA bundle inside the 5 s connect timeout: under valgrind on a
	# busy machine that took longer once in four runs)
	skip "the system's CAs only (under valgrind reading the system's CA bundle outlasted the 5 s connect timeout; the plain and ASan runs check it)"
else
	[ $st = 1 ] && one_line "the system's CAs only" "$w/sys.err" "is not trusted" ||
		fail "the system's CAs: not status 1: $(head -n2 "$w/sys.err")"
fi
[ "$(rows tls3)" = 0 ] && pass "a refused certificate: no row stored" || fail "a refused certificate: $(rows tls3) rows"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --insecure --password-file="$w/pw" \
	>/dev/null 2>"$w/insecure.err"
st=$?
got=$(rows tls3)
[ $st = 0 ] && [ "$got" = "$want" ] && pass "--insecure: no certificate check, every row ($got)" ||
	fail "--insecure: status $st, $got rows: $(head -n2 "$w/insecure.err")"

echo "not a certificate" >"$w/other/junk.pem"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --ca-file="$w/other/junk.pem" \
	--password-file="$w/pw" >/dev/null 2>"$w/junk.err"
[ $? = 1 ] && one_line "--ca-file that holds no certificate" "$w/junk.err" \
	"cannot use CA file '$w/other/junk.pem'" || fail "a CA file of junk: not status 1: $(head -n2 "$w/junk.err")"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --ca-file="$w/nosuch.pem" >/dev/null 2>"$w/nosuch.err"
[ $? = 1 ] && one_line "--ca-file that does not exist" "$w/nosuch.err" \
	"option '--ca-file': cannot read '$w/nosuch.pem': No such file" || fail "no CA file: not status 1: $(head -n2 "$w/nosuch.err")"

# ---- passwords refused ----
printf 'not-the-password\n' >"$w/bad"
chmod 600 "$w/bad"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --ca-file="$CA" --password-file="$w/bad" \
	>/dev/null 2>"$w/badpw.err"
[ $? = 1 ] && one_line "a wrong password" "$w/badpw.err" "Code: 193|[Pp]assword" ||
	fail "a wrong password: not status 1: $(head -n2 "$w/badpw.err")"
chmod 644 "$w/pw"
$BTT -i "$BIN" --export="$HTTPS/tls3" --host=h --ca-file="$CA" --password-file="$w/pw" \
	>/dev/null 2>"$w/mode.err"
[ $? = 1 ] && one_line "--password-file of mode 644" "$w/mode.err" "'$w/pw' has mode 0644.*chmod 600" ||
	fail "mode 644: not status 1: $(head -n2 "$w/mode.err")"
chmod 600 "$w/pw"
$BTT -i "$BIN" --export="clickhouses://pw:$CH_PASSWORD@127.0.0.1:$CH_HTTPS/tls3" --host=h \
	>/dev/null 2>"$w/indest.err"
[ $? = 1 ] && one_line "a password in the destination" "$w/indest.err" \
	"a password in the destination is refused.*--password-file.*CLICKHOUSE_PASSWORD" ||
	fail "a password in the destination: not status 1: $(head -n2 "$w/indest.err")"
CLICKHOUSE_PASSWORD=x $BTT -i "$BIN" --export="clickhouse://pw@192.0.2.1:8123/tls3" --host=h \
	>/dev/null 2>"$w/clear.err"
[ $? = 1 ] && one_line "a password over plain HTTP to a host that is not loopback" "$w/clear.err" \
	"a password over plain HTTP to '192.0.2.1'.*clickhouses://" ||
	fail "a password in clear: not status 1: $(head -n2 "$w/clear.err")"

# ---- the server's logs ----
logs="$CH_DIR/log"
if [ "$(cat "$logs"/*.log | wc -l)" -gt 0 ] && ! grep -rqF "$CH_PASSWORD" "$logs"; then
	pass "the password is in no line of the server's logs ($(cat "$logs"/*.log | wc -l) lines at level trace)"
else
	fail "the server's logs: $(grep -rhF "$CH_PASSWORD" "$logs" | head -n1 | cut -c1-200)"
fi
# the check can see one: the old way, the password in the URL's query, shows in the log
if command -v curl >/dev/null; then
	curl -s --noproxy "*" --cacert "$CA" -d 'SELECT 1' \
		"https://127.0.0.1:$CH_HTTPS/?user=pw&password=$CH_PASSWORD" >/dev/null
	sleep 0.5
	grep -rqF "$CH_PASSWORD" "$logs" &&
		pass "(a password in a URL's query does show in the server's log: the check above can fail)" ||
		fail "a password in a URL's query is not in the server's log: the check above proves nothing"
fi
