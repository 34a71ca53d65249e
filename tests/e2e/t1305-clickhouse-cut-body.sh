#!/bin/bash
# What makes the export's INSERTs whole or nothing (doc/clickhouse.md, "A body cut short is
# refused"), checked against the real server (Debian's 18.16, tests/clickhouse.sh): the exporter
# sends each batch as one block of the Native format, uncompressed to a loopback server, and
# relies on 18.16 refusing such a body when the connection ends before its last byte, wherever
# the cut falls. A Native body of 3000 io rows (the server's own encoding of rows it holds) is
# sent with its full Content-Length but cut at every column boundary, inside each column and one
# byte short, the connection then closed: each answer is an error and the table gains no row;
# the whole body then stores all 3000.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/clickhouse.sh"

GEN="$TOP/tests/gen/exportgen"
if [ ! -x "$GEN" ]; then
	fail "cut body: $GEN not built"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	skip "cut body (python3 missing)"
	exit 0
fi
if ! ch_start; then
	skip "cut body: $CH_SKIP"
	exit 0
fi
w="$OUT/t1305"
rm -rf "$w"
mkdir -p "$w"
ch_client -q "CREATE DATABASE b" || fail "cut body: cannot create a database"
"$GEN" --schema | ch_client --database b --multiquery || fail "cut body: the DDL does not load"
# 3000 rows of every column (strings of several lengths), kept in a second table
ch_client -q "CREATE TABLE b.src AS b.io" || fail "cut body: cannot create the source table"
cols=$(ch_client -q "DESCRIBE TABLE b.io" | cut -f1,2)
sel=$(echo "$cols" | awk -F'\t' '{
	if ($2 == "String") v = "concat(\x27" $1 "-\x27, toString(number % 97))"
	else v = "to" $2 "(number * 7 + " NR ")"
	printf "%s%s", (NR > 1 ? ", " : ""), v }')
ch_client -q "INSERT INTO b.src SELECT $sel FROM system.numbers LIMIT 3000" ||
	fail "cut body: cannot make the rows"
ch_client -q "SELECT * FROM b.src FORMAT Native" >"$w/body.native"

out=$(python3 - "$CH_HTTP" "$w/body.native" <<'EOF'
import socket, sys

port, path = int(sys.argv[1]), sys.argv[2]
body = open(path, 'rb').read()

def varint(b, i):
    n = shift = 0
    while True:
        c = b[i]; i += 1
        n |= (c & 0x7f) << shift
        if not c & 0x80:
            return n, i
        shift += 7

# the block's boundaries: after its counts, each column's name and type, each column's values
ncols, i = varint(body, 0)
nrows, i = varint(body, i)
cuts = {1, i}
for _ in range(ncols):
    n, i = varint(body, i); i += n          # name
    n, i = varint(body, i); t = body[i:i + n].decode(); i += n
    cuts.add(i)
    start = i
    if t == 'String':
        for _ in range(nrows):
            n, i = varint(body, i); i += n
    else:
        i += nrows * {'UInt64': 8, 'UInt32': 4, 'Int32': 4}[t]
    cuts.add((start + i) // 2)
    cuts.add(i)
assert i == len(body), 'the block is not the whole body'
cuts.add(len(body) - 1)
cuts.discard(len(body))
q = '/?query=INSERT%20INTO%20b.io%20FORMAT%20Native'

def post(n):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(('POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\nConnection: close\r\n\r\n'
               % (q, len(body))).encode() + body[:n])
    s.shutdown(socket.SHUT_WR)
    r = b''
    while True:
        d = s.recv(65536)
        if not d:
            break
        r += d
    s.close()
    return r.split(b'\r\n', 1)[0].decode()

bad = [n for n in sorted(cuts) if post(n).split()[1] == '200']
print('cuts', len(cuts), 'accepted', ' '.join(map(str, bad)) or 'none')
print('whole', post(len(body)))
EOF
)
echo "$out" >"$w/cuts.log"
ncuts=$(echo "$out" | sed -n 's/^cuts \([0-9]*\) .*/\1/p')
acc=$(echo "$out" | sed -n 's/^cuts [0-9]* accepted \(.*\)/\1/p')
whole=$(echo "$out" | sed -n 's/^whole //p')
n=$(ch_client -q "SELECT count() FROM b.io")
[ "${ncuts:-0}" -gt 60 ] && [ "$acc" = none ] ||
	fail "cut body: a Native body cut short was accepted (cuts at bytes: $acc; $w/cuts.log)"
[ "${ncuts:-0}" -gt 60 ] && [ "$acc" = none ] &&
	pass "cut body: 18.16 refuses a Native INSERT body cut at each of $ncuts places (every column boundary, inside each column, one byte short)"
case $whole in
*" 200 "*) [ "$n" = 3000 ] &&
	pass "cut body: the whole body then stores its 3000 rows, and the cut ones stored none" ||
	fail "cut body: the table holds $n rows after the cut bodies and the whole one (want 3000)" ;;
*) fail "cut body: the whole body was refused: $whole ($w/cuts.log)" ;;
esac
a=$(ch_client -q "SELECT * FROM b.io FORMAT TSV" | sort | md5sum)
b=$(ch_client -q "SELECT * FROM b.src FORMAT TSV" | sort | md5sum)
[ "$a" = "$b" ] && pass "cut body: the rows stored are the rows sent" ||
	fail "cut body: the rows stored differ from the rows sent"
